import Foundation

extension SchoolMatcher {
    /// The smallest contribution to the raw score that earns an explanation.
    static let explanationThreshold: Float = 0.05

    /// Display names of the featured CIP families.
    static let familyNames = [
        "52": "Business", "51": "Health Professions", "45": "Social Sciences", "42": "Psychology",
        "26": "Biology", "14": "Engineering", "11": "Computer Science", "50": "Visual and Performing Arts",
        "13": "Education", "09": "Communication", "43": "Security and Law Enforcement",
        "30": "Interdisciplinary Studies",
    ]

    /// Up to three reasons for a school, from its largest positive contributions.
    ///
    /// Groups are ranked by their contribution to the raw score (ties by name); a group earns
    /// a sentence only when its contribution is at least 0.05 and the fact behind it holds
    /// (the cost is really within the budget, the school really is within the preferred
    /// distance, the value is not an imputed gap). So a reason is never shown for a school
    /// that contradicts it.
    ///
    /// - Parameters:
    ///   - row: The school.
    ///   - student: The student.
    ///   - weights: The weights that scored it.
    /// - Returns: At most three sentences.
    /// - Complexity: O(d + k).
    public func explanations(row: Int, student: MatchStudent, weights: PreferenceWeights) -> [String] {
        let plan = explanationPlan
        var values = schools.catalog.groupContributions(row: row, weights: weights, terms: student.terms)
        precondition(values.count == plan.names.count, "explanations: a student resolved under another term basis")
        // The expanded basis's extra terms explain as the term they reshape.
        for (extra, base) in plan.merged {
            values[base] += values[extra]
            values[extra] = -.infinity
        }
        let names = plan.names
        let ranked = values.indices.filter { values[$0] >= SchoolMatcher.explanationThreshold }
            .sorted { values[$0] > values[$1] || (values[$0] == values[$1] && names[$0] < names[$1]) }
        var result: [String] = []
        for group in ranked where result.count < 3 {
            guard let kind = plan.kinds[group] else { continue }
            if let sentence = explanation(kind, row: row, student: student, weights: weights) {
                result.append(sentence)
            }
        }
        return result
    }

    private func number(_ attribute: Int?, _ row: Int) -> Double? {
        guard let attribute else { return nil }
        return schools.catalog.numericValues[attribute][row]
    }

    private func text(_ attribute: Int?, _ row: Int) -> String {
        guard let attribute else { return "" }
        return schools.catalog.textValues[attribute][row]
    }

    private func explanation(_ kind: ExplanationPlan.Kind, row: Int, student: MatchStudent, weights: PreferenceWeights) -> String? {
        let profile = student.profile
        let plan = explanationPlan
        switch kind {
        case .majorFit:
            let offered = student.majors.filter { $0.cipCodes.contains { schools.majors.programs[row].contains($0) } }
            guard let first = offered.first else { return nil }
            let strongCodes = schools.majors.strongPrograms[row]
            let strong = offered.first { major in major.cipCodes.contains { strongCodes.contains($0) } }
            if let strong { return "Strong \(strong.label) program" }
            return offered.count > 1 ? "Offers \(first.label) and \(offered.count - 1) more of your majors" : "Offers \(first.label)"
        case .budget:
            guard let budget = profile.annualBudget,
                  let cost = schools.estimatedCost(row: row, homeState: profile.homeState) else { return nil }
            return cost <= budget ? "Within your budget (\(dollars(cost))/yr)" : "Close to your budget (\(dollars(cost))/yr)"
        case .distance:
            guard row < student.distances.count else { return nil }
            let d = Double(student.distances[row])
            return d <= profile.maxDistanceMiles ? "Close to home (\(whole(d)) mi)"
                : "Just beyond your range (\(whole(d)) mi)"
        case .academicFit:
            guard let sat = profile.sat, let s = number(plan.satAverage, row) else { return nil }
            return "Strong academic fit (average SAT \(whole(s)), yours \(whole(sat)))"
        case .selectivity:
            guard let rate = number(plan.admissionRate, row) else { return nil }
            return "Selective: admits \(percent(rate))"
        case .academics:
            guard let s = number(plan.satAverage, row) else { return nil }
            return "Academically strong (average SAT \(whole(s)))"
        case .size:
            guard let n = number(plan.enrollment, row) else { return nil }
            let band = n < 5000 ? StudentProfile.SizePreference.small : n < 15000 ? .medium : .large
            if band == profile.sizePreference { return "Perfect size match (\(grouped(n)) undergrads)" }
            switch band {
            case .small: return "Small school (\(grouped(n)) undergrads)"
            case .medium: return "Mid-sized school (\(grouped(n)) undergrads)"
            default: return "Large school (\(grouped(n)) undergrads)"
            }
        case .outcomes:
            guard let rate = number(plan.completionRate, row) else { return nil }
            return "High graduation rate (\(percent(rate)))"
        case .earnings:
            guard let e = number(plan.medianEarnings, row) else { return nil }
            return "Strong graduate earnings (\(dollars(e)) median)"
        case .cost:
            guard let p = number(plan.netPrice, row) else { return nil }
            return "Low net price (\(dollars(p))/yr)"
        case .control:
            switch text(plan.control, row) {
            case "public": return "Public university"
            case "private_nonprofit": return "Private nonprofit college"
            default: return nil
            }
        case .setting:
            // The sentence depends on the school alone: written once per catalog.
            let sentence = plan.settingSentences[row]
            return sentence.isEmpty ? nil : sentence
        case .region:
            return plan.regionSentences[row]
        case .programs:
            // The family whose share contributes most (ties to the first column, as `max(by:)`).
            let features = schools.catalog.features
            var best = -1
            var bestValue: Float = 0
            for (i, column) in plan.programColumns.enumerated() {
                let value = weights.features[column] * features[row, column]
                if best < 0 || bestValue < value { (best, bestValue) = (i, value) }
            }
            guard best >= 0, bestValue > 0 else { return nil }
            let share = Double(features[row, plan.programColumns[best]])
            return "Big \(plan.programNames[best]) department (\(percent(share)) of graduates)"
        }
    }

    private func percent(_ x: Double) -> String { "\(whole(x * 100))%" }
    private func dollars(_ x: Double) -> String { "$" + grouped(x) }
    /// A value as a whole number; one too large for `Int` (a catalog may hold any finite
    /// number) in scientific notation instead of trapping.
    private func whole(_ x: Double) -> String {
        abs(x) < 1e15 ? String(Int(x.rounded())) : String(format: "%.3g", x)
    }
    /// A whole number with thousands separators ("12,345"); written byte by byte, since this runs
    /// for most cards of every deck.
    private func grouped(_ x: Double) -> String {
        guard abs(x) < 1e15 else { return String(format: "%.3g", x) }
        let n = Int(x.rounded())
        var magnitude = n.magnitude
        var reversed: [UInt8] = []
        reversed.reserveCapacity(24)
        var digits = 0
        repeat {
            if digits > 0 && digits % 3 == 0 { reversed.append(UInt8(ascii: ",")) }
            reversed.append(UInt8(ascii: "0") + UInt8(magnitude % 10))
            magnitude /= 10
            digits += 1
        } while magnitude > 0
        if n < 0 { reversed.append(UInt8(ascii: "-")) }
        reversed.reverse()
        return String(decoding: reversed, as: UTF8.self)
    }
}

/// What `SchoolMatcher.explanations` needs, resolved once per matcher: which sentence each group
/// or term earns, the attributes behind them, and the sentences that depend on the school alone.
struct ExplanationPlan: Sendable {
    enum Kind: Sendable {
        case majorFit, budget, distance, academicFit, selectivity, academics, size, outcomes, earnings, cost
        case control, setting, region, programs
    }

    /// The catalog's groups, then the term names.
    let names: [String]
    /// Per entry of `names`, its sentence kind (nil: never explained).
    let kinds: [Kind?]
    /// (extra term, term it explains as), as indices into `names`.
    let merged: [(Int, Int)]
    let satAverage: Int?, admissionRate: Int?, enrollment: Int?, completionRate: Int?, medianEarnings: Int?, netPrice: Int?
    let control: Int?
    /// Per school: "City setting (large)", or empty without a locale.
    let settingSentences: [String]
    /// Per school: "In the New England region".
    let regionSentences: [String]
    /// The `programs` columns and the display name of each one's CIP family.
    let programColumns: [Int]
    let programNames: [String]

    init(catalog: Catalog, termNames: [String]) {
        let names = catalog.groups + termNames
        self.names = names
        let byName: [String: Kind] = [
            "major_fit": .majorFit, "budget": .budget, "distance": .distance, "academic_fit": .academicFit,
            "selectivity": .selectivity, "academics": .academics, "size": .size, "outcomes": .outcomes,
            "earnings": .earnings, "cost": .cost, "control": .control, "setting": .setting, "region": .region,
            "programs": .programs,
        ]
        kinds = names.map { byName[$0] }
        merged = [("budget_over", "budget"), ("distance_near", "distance")].compactMap { extra, base in
            guard let e = names.firstIndex(of: extra), let b = names.firstIndex(of: base) else { return nil }
            return (e, b)
        }
        satAverage = catalog.numericAttribute(named: "sat_avg")
        admissionRate = catalog.numericAttribute(named: "admission_rate")
        enrollment = catalog.numericAttribute(named: "undergrad_enrollment")
        completionRate = catalog.numericAttribute(named: "completion_rate")
        medianEarnings = catalog.numericAttribute(named: "median_earnings")
        netPrice = catalog.numericAttribute(named: "net_price")
        control = catalog.textAttribute(named: "control")
        let locales = catalog.textAttribute(named: "locale").map { catalog.textValues[$0] } ?? Array(repeating: "", count: catalog.count)
        settingSentences = locales.map { locale in
            guard !locale.isEmpty else { return "" }
            let parts = locale.split(separator: "_")
            return "\(parts[0].capitalized) setting (\(parts.dropFirst().joined(separator: " ")))"
        }
        let regions = catalog.textAttribute(named: "region").map { catalog.textValues[$0] } ?? Array(repeating: "", count: catalog.count)
        regionSentences = regions.map { "In the \($0.split(separator: "_").map(\.capitalized).joined(separator: " ")) region" }
        programColumns = catalog.columns.indices.filter { catalog.columns[$0].group == "programs" }
        programNames = programColumns.map { column in
            let family = String(catalog.columns[column].name.dropFirst("programs_".count))
            return SchoolMatcher.familyNames[family] ?? "CIP \(family)"
        }
    }
}
