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
        let catalog = schools.catalog
        var values = catalog.groupContributions(row: row, weights: weights, terms: student.terms)
        let names = catalog.groups + student.terms.names
        // The expanded basis's extra terms explain as the term they reshape.
        if termBasis == .expanded {
            for (extra, base) in [("budget_over", "budget"), ("distance_near", "distance")] {
                guard let e = names.firstIndex(of: extra), let b = names.firstIndex(of: base) else { continue }
                values[b] += values[e]
                values[e] = -.infinity
            }
        }
        let ranked = values.indices.filter { values[$0] >= SchoolMatcher.explanationThreshold }
            .sorted { values[$0] > values[$1] || (values[$0] == values[$1] && names[$0] < names[$1]) }
        var result: [String] = []
        for group in ranked.lazy.map({ names[$0] }) where result.count < 3 {
            if let sentence = explanation(group: group, row: row, student: student, weights: weights) {
                result.append(sentence)
            }
        }
        return result
    }

    private func number(_ name: String, _ row: Int) -> Double? {
        let catalog = schools.catalog
        return catalog.numericValues[catalog.numericAttribute(named: name)!][row]
    }

    private func text(_ name: String, _ row: Int) -> String {
        let catalog = schools.catalog
        return catalog.textValues[catalog.textAttribute(named: name)!][row]
    }

    private func explanation(group: String, row: Int, student: MatchStudent, weights: PreferenceWeights) -> String? {
        let profile = student.profile
        switch group {
        case "major_fit":
            let offered = student.majors.filter { $0.cipCodes.contains { schools.majors.programs[row].contains($0) } }
            guard let first = offered.first else { return nil }
            let strongCodes = schools.majors.strongPrograms[row]
            let strong = offered.first { major in major.cipCodes.contains { strongCodes.contains($0) } }
            if let strong { return "Strong \(strong.label) program" }
            return offered.count > 1 ? "Offers \(first.label) and \(offered.count - 1) more of your majors" : "Offers \(first.label)"
        case "budget":
            guard let budget = profile.annualBudget,
                  let cost = schools.estimatedCost(row: row, homeState: profile.homeState) else { return nil }
            return cost <= budget ? "Within your budget (\(dollars(cost))/yr)" : "Close to your budget (\(dollars(cost))/yr)"
        case "distance":
            guard row < student.distances.count else { return nil }
            let d = Double(student.distances[row])
            return d <= profile.maxDistanceMiles ? "Close to home (\(whole(d)) mi)"
                : "Just beyond your range (\(whole(d)) mi)"
        case "academic_fit":
            guard let sat = profile.sat, let s = number("sat_avg", row) else { return nil }
            return "Strong academic fit (average SAT \(whole(s)), yours \(whole(sat)))"
        case "selectivity":
            guard let rate = number("admission_rate", row) else { return nil }
            return "Selective: admits \(percent(rate))"
        case "academics":
            guard let s = number("sat_avg", row) else { return nil }
            return "Academically strong (average SAT \(whole(s)))"
        case "size":
            guard let n = number("undergrad_enrollment", row) else { return nil }
            let band = n < 5000 ? StudentProfile.SizePreference.small : n < 15000 ? .medium : .large
            if band == profile.sizePreference { return "Perfect size match (\(grouped(n)) undergrads)" }
            switch band {
            case .small: return "Small school (\(grouped(n)) undergrads)"
            case .medium: return "Mid-sized school (\(grouped(n)) undergrads)"
            default: return "Large school (\(grouped(n)) undergrads)"
            }
        case "outcomes":
            guard let rate = number("completion_rate", row) else { return nil }
            return "High graduation rate (\(percent(rate)))"
        case "earnings":
            guard let e = number("median_earnings", row) else { return nil }
            return "Strong graduate earnings (\(dollars(e)) median)"
        case "cost":
            guard let p = number("net_price", row) else { return nil }
            return "Low net price (\(dollars(p))/yr)"
        case "control":
            switch text("control", row) {
            case "public": return "Public university"
            case "private_nonprofit": return "Private nonprofit college"
            default: return nil
            }
        case "setting":
            let locale = text("locale", row)
            guard !locale.isEmpty else { return nil }
            let parts = locale.split(separator: "_")
            return "\(parts[0].capitalized) setting (\(parts.dropFirst().joined(separator: " ")))"
        case "region":
            return "In the \(text("region", row).split(separator: "_").map(\.capitalized).joined(separator: " ")) region"
        case "programs":
            // The family whose share contributes most.
            let catalog = schools.catalog
            let perColumn = catalog.columnContributions(row: row, weights: weights)
            guard let best = catalog.columns.indices.filter({ catalog.columns[$0].group == "programs" })
                .max(by: { perColumn[$0] < perColumn[$1] }), perColumn[best] > 0 else { return nil }
            let family = String(catalog.columns[best].name.dropFirst("programs_".count))
            let share = Double(catalog.features[row, best])
            return "Big \(SchoolMatcher.familyNames[family] ?? "CIP \(family)") department (\(percent(share)) of graduates)"
        default:
            return nil
        }
    }

    private func percent(_ x: Double) -> String { "\(whole(x * 100))%" }
    private func dollars(_ x: Double) -> String { "$" + grouped(x) }
    /// A value as a whole number; one too large for `Int` (a catalog may hold any finite
    /// number) in scientific notation instead of trapping.
    private func whole(_ x: Double) -> String {
        abs(x) < 1e15 ? String(Int(x.rounded())) : String(format: "%.3g", x)
    }
    private func grouped(_ x: Double) -> String {
        guard abs(x) < 1e15 else { return String(format: "%.3g", x) }
        let n = Int(x.rounded())
        let digits = String(abs(n))
        let count = digits.utf8.count
        var out = ""
        for (i, ch) in digits.enumerated() {
            if i > 0 && (count - i) % 3 == 0 { out.append(",") }
            out.append(ch)
        }
        return (n < 0 ? "-" : "") + out
    }
}
