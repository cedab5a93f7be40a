import Foundation
import SwipeRank

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
        explanations(row: row, student: student, weights: weights, limit: 3)
    }

    /// The best `limit` reasons for a school, best first, by the rule of
    /// `explanations(row:student:weights:)`: a deck draws on the ones after the third when its
    /// first three repeat across the deck (`Matcher.varyExplanations`).
    ///
    /// - Parameters:
    ///   - row: The school.
    ///   - student: The student.
    ///   - weights: The weights that scored it.
    ///   - limit: The most sentences.
    /// - Returns: At most `limit` sentences.
    /// - Complexity: O(limit × (d + k)).
    public func explanations(row: Int, student: MatchStudent, weights: PreferenceWeights, limit: Int) -> [String] {
        keyedExplanations(row: row, student: student, weights: weights, limit: limit).texts
    }

    /// `explanations(row:student:weights:limit:)` with each sentence's variety key
    /// (`ExplanationVariety.Key` of it), read where the sentence was written rather than
    /// computed from its text.
    ///
    /// - Returns: The sentences and their keys, one per sentence.
    func keyedExplanations(row: Int, student: MatchStudent, weights: PreferenceWeights, limit: Int) -> (texts: [String], keys: [ExplanationVariety.Key]) {
        let plan = explanationPlan
        let groupCount = plan.names.count
        precondition(schools.catalog.groups.count + student.terms.names.count == groupCount,
                     "explanations: a student resolved under another term basis")
        var values = schools.catalog.groupContributions(row: row, weights: weights, terms: student.terms)
        // The expanded basis's extra terms explain as the term they reshape.
        for (extra, base) in plan.merged {
            values[base] += values[extra]
            values[extra] = -.infinity
        }
        // The reasons picked best first one at a time (a few picks earn three sentences): the
        // order of sorting them all, without sorting them all. The best remaining group at or
        // above the threshold (NaN never is) has the higher value, then the name first in byte
        // order: as one key per group, the value's bits (a positive Float orders as its bits)
        // above the name's rank reversed, 0 below the threshold. A pick is then a maximum
        // without branches; comparing values, then names, branched on every group.
        var result: [String] = [], resultKeys: [ExplanationVariety.Key] = []
        result.reserveCapacity(limit)
        resultKeys.reserveCapacity(limit)
        withUnsafeTemporaryAllocation(of: UInt64.self, capacity: groupCount) { keys in
            for g in 0..<groupCount {
                let value = values[g]
                let key = UInt64(value.bitPattern) << 32 | UInt64(UInt32.max - UInt32(truncatingIfNeeded: plan.nameRank[g]))
                keys[g] = value >= SchoolMatcher.explanationThreshold ? key : 0
            }
            while result.count < limit {
                var best = 0, bestKey: UInt64 = 0
                for g in 0..<groupCount {
                    let key = keys[g], better = key > bestKey
                    bestKey = better ? key : bestKey
                    best = better ? g : best
                }
                guard bestKey > 0 else { break }
                keys[best] = 0
                guard let kind = plan.kinds[best] else { continue }
                if let sentence = explanation(kind, row: row, student: student, weights: weights) {
                    result.append(sentence.text)
                    resultKeys.append(sentence.key)
                }
            }
        }
        return (result, resultKeys)
    }

    private func number(_ attribute: Int?, _ row: Int) -> Double? {
        guard let attribute else { return nil }
        return schools.catalog.numericValues[attribute][row]
    }

    private func explanation(_ kind: ExplanationPlan.Kind, row: Int, student: MatchStudent, weights: PreferenceWeights) -> KeyedText? {
        let profile = student.profile
        let plan = explanationPlan
        let school = plan.sentences.rows
        switch kind {
        case .majorFit:
            // The student's majors that the school offers, in the student's order; the first
            // strong one is named, else the first offered.
            var first = -1, offered = 0
            let matches = student.majorMatches
            for m in student.majors.indices where matches.offers(major: m, row: row) {
                if matches.isStrong(major: m, row: row) { return student.majorSentences[m].strong }
                if first < 0 { first = m }
                offered += 1
            }
            guard first >= 0 else { return nil }
            return offered > 1 ? KeyedText("Offers \(student.majors[first].label) and \(offered - 1) more of your majors",
                                           key: student.majorSentences[first].moreKey)
                : student.majorSentences[first].offers
        case .budget:
            guard let budget = profile.annualBudget,
                  let cost = schools.estimatedCost(row: row, homeState: profile.homeState) else { return nil }
            let sentences = schools.states[row] == profile.homeState ? school[row].budgetInState : school[row].budgetOutOfState
            return cost <= budget ? sentences.within : sentences.close
        case .distance:
            guard row < student.distances.count else { return nil }
            let d = Double(student.distances[row])
            let close = d <= profile.maxDistanceMiles
            let text = close ? SentenceText.compose("Close to home (", whole: d, " mi)")
                : SentenceText.compose("Just beyond your range (", whole: d, " mi)")
            return KeyedText(text, templateKey: close ? plan.closeKey : plan.beyondKey, numbers: d)
        case .academicFit:
            guard let sat = profile.sat, let s = number(plan.satAverage, row) else { return nil }
            return KeyedText(SentenceText.compose("Strong academic fit (average SAT ", whole: s, ", yours ", whole: sat, ")"),
                             templateKey: plan.academicFitKey, numbers: s, sat)
        case .selectivity:
            return school[row].selectivity
        case .academics:
            return school[row].academics
        case .size:
            guard let band = school[row].sizeBand else { return nil }
            return band == profile.sizePreference ? school[row].sizePerfect : school[row].sizeOther
        case .outcomes:
            return school[row].outcomes
        case .earnings:
            return school[row].earnings
        case .cost:
            return school[row].netPrice
        case .control:
            return school[row].control
        case .setting:
            let sentence = school[row].setting
            return sentence.text.isEmpty ? nil : sentence
        case .region:
            return school[row].region
        case .programs:
            // The family whose share contributes most (ties to the first column, as `max(by:)`).
            let features = schools.catalog.featureRows
            var best = -1
            var bestValue: Float = 0
            for (i, column) in plan.programColumns.enumerated() {
                let value = weights.features[column] * features[row, column]
                if best < 0 || bestValue < value { (best, bestValue) = (i, value) }
            }
            guard best >= 0, bestValue > 0 else { return nil }
            return plan.programSentence(family: best, share: Double(features[row, plan.programColumns[best]]))
        }
    }
}

/// Sentences of the school explanations that depend on the school alone (or on whether the
/// student lives in its state), written once per catalog with the same formatting a card used
/// to run for every explanation: a deck explains about thirty reasons, and building each
/// sentence anew was a sixth of a deck's instructions.
///
/// Kept by school, each school's sentences side by side and written school by school: a card
/// reads several of one school's, and the cards come from anywhere in the catalog. With one
/// array per kind, each read was a cache miss on the array and another on the string, in
/// places far apart (`perf`: the loads and retains of these strings were a tenth of a deck's
/// time).
struct SchoolSentences: Sendable {
    /// One school's sentences.
    struct Row: Sendable {
        /// "Selective: admits 5%", nil without an admission rate.
        let selectivity: KeyedText?
        /// "Academically strong (average SAT 1500)".
        let academics: KeyedText?
        /// The school's size band, and its sentence when the student prefers that size or not.
        let sizeBand: StudentProfile.SizePreference?
        let sizePerfect: KeyedText?
        let sizeOther: KeyedText?
        /// "High graduation rate (97%)".
        let outcomes: KeyedText?
        /// "Strong graduate earnings ($90,000 median)".
        let earnings: KeyedText?
        /// "Low net price ($12,000/yr)".
        let netPrice: KeyedText?
        /// "Public university", "Private nonprofit college", or nil.
        let control: KeyedText?
        /// "City setting (large)", or empty without a locale.
        let setting: KeyedText
        /// "In the New England region".
        let region: KeyedText
        /// "Within your budget ($X/yr)" and "Close to your budget ($X/yr)" at the in-state cost…
        let budgetInState: (within: KeyedText?, close: KeyedText?)
        /// …and at the out-of-state cost.
        let budgetOutOfState: (within: KeyedText?, close: KeyedText?)
    }

    /// One per school, in catalog order.
    let rows: [Row]
}

/// A sentence with its variety key (`ExplanationVariety.Key` of it), computed when the sentence
/// was written: a deck keys its reasons without reading their text again.
struct KeyedText: Sendable {
    let text: String
    let key: ExplanationVariety.Key

    /// A sentence keyed from its text.
    init(_ text: String) {
        self.text = text
        key = ExplanationVariety.Key(text)
    }

    /// A sentence whose key is known (the same as keying its text).
    init(_ text: String, key: ExplanationVariety.Key) {
        self.text = text
        self.key = key
    }

    /// A sentence written from a template with whole numbers: the template's key when every
    /// number prints as digits alone (the key blanks each run of digits, so all such numbers key
    /// alike), else keyed from the text (a negative, NaN or huge number prints otherwise).
    init(_ text: String, templateKey: ExplanationVariety.Key, numbers: Double...) {
        self.text = text
        let digitsOnly = numbers.allSatisfy { SentenceText.wholeNumber($0).map { $0 >= 0 } ?? false }
        key = digitsOnly ? templateKey : ExplanationVariety.Key(text)
    }
}

/// Writes sentences that mix literal text with whole numbers into one string reserved at its
/// final size (one allocation, where interpolation grows its buffer several times).
enum SentenceText {
    /// `prefix` + `x` as a whole number + `suffix`.
    static func compose(_ prefix: String, whole x: Double, _ suffix: String) -> String {
        let number = wholeText(x)
        var text = ""
        text.reserveCapacity(prefix.utf8.count + number.utf8.count + suffix.utf8.count)
        text += prefix
        text += number
        text += suffix
        return text
    }

    /// `prefix` + `x` + `middle` + `y` + `suffix`, the numbers whole.
    static func compose(_ prefix: String, whole x: Double, _ middle: String, whole y: Double, _ suffix: String) -> String {
        let first = wholeText(x), second = wholeText(y)
        var text = ""
        text.reserveCapacity(prefix.utf8.count + first.utf8.count + middle.utf8.count + second.utf8.count + suffix.utf8.count)
        text += prefix
        text += first
        text += middle
        text += second
        text += suffix
        return text
    }

    /// A value as a whole number; one too large for `Int` (a catalog may hold any finite
    /// number) in scientific notation instead of trapping.
    static func wholeText(_ x: Double) -> String {
        wholeNumber(x).map { String($0) } ?? String(format: "%.3g", x)
    }

    /// `x` rounded, when it is small enough to print as an integer.
    @inline(__always)
    static func wholeNumber(_ x: Double) -> Int? { abs(x) < 1e15 ? Int(x.rounded()) : nil }
}

/// How explanations print numbers (used when a catalog's sentences are written).
enum SchoolFormat {
    static func percent(_ x: Double) -> String { "\(SentenceText.wholeText(x * 100))%" }
    static func dollars(_ x: Double) -> String { "$" + grouped(x) }
    /// A whole number with thousands separators ("12,345").
    static func grouped(_ x: Double) -> String {
        guard let n = SentenceText.wholeNumber(x) else { return String(format: "%.3g", x) }
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
    /// Per entry of `names`, its place in byte order of the names (ties between equal values
    /// go to the name first in that order).
    let nameRank: [Int]
    /// Per entry of `names`, its sentence kind (nil: never explained).
    let kinds: [Kind?]
    /// (extra term, term it explains as), as indices into `names`.
    let merged: [(Int, Int)]
    let satAverage: Int?
    /// The sentences that depend on the school alone.
    let sentences: SchoolSentences
    /// The `programs` columns and the display name of each one's CIP family.
    let programColumns: [Int]
    let programNames: [String]
    /// Per program family, "Big … department (p% of graduates)" for p = 0…100.
    let programSentences: [[String]]
    /// Per program family, the variety key its sentences share (the numbers blanked).
    let programKeys: [ExplanationVariety.Key]
    /// The keys of the distance and academic fit sentences, whose only varying part is whole
    /// numbers (`KeyedText.init(_:templateKey:numbers:)`).
    let closeKey = ExplanationVariety.Key("Close to home (0 mi)")
    let beyondKey = ExplanationVariety.Key("Just beyond your range (0 mi)")
    let academicFitKey = ExplanationVariety.Key("Strong academic fit (average SAT 0, yours 0)")

    init(schools: SchoolCatalog, termNames: [String]) {
        let catalog = schools.catalog
        let names = catalog.groups + termNames
        self.names = names
        var nameRank = [Int](repeating: 0, count: names.count)
        for (rank, index) in names.indices.sorted(by: { (names[$0], $0) < (names[$1], $1) }).enumerated() { nameRank[index] = rank }
        self.nameRank = nameRank
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
        programColumns = catalog.columns.indices.filter { catalog.columns[$0].group == "programs" }
        programNames = programColumns.map { column in
            let family = String(catalog.columns[column].name.dropFirst("programs_".count))
            return SchoolMatcher.familyNames[family] ?? "CIP \(family)"
        }
        programSentences = programNames.map { name in
            (0...100).map { "Big \(name) department (\($0)% of graduates)" }
        }
        programKeys = programSentences.map { ExplanationVariety.Key($0[0]) }
        sentences = SchoolSentences(schools: schools)
    }

    /// "Big … department (p% of graduates)" for a family's share of graduates.
    func programSentence(family: Int, share: Double) -> KeyedText {
        if let p = SentenceText.wholeNumber(share * 100), (0...100).contains(p) {
            return KeyedText(programSentences[family][p], key: programKeys[family])
        }
        return KeyedText("Big \(programNames[family]) department (\(SchoolFormat.percent(share)) of graduates)")
    }
}

extension SchoolSentences {
    init(schools: SchoolCatalog) {
        let catalog = schools.catalog
        let n = catalog.count
        func numbers(_ name: String) -> [Double?] {
            catalog.numericAttribute(named: name).map { Array(catalog.numericValues[$0]) } ?? [Double?](repeating: nil, count: n)
        }
        func texts(_ name: String) -> [String] {
            catalog.textAttribute(named: name).map { Array(catalog.textValues[$0]) } ?? [String](repeating: "", count: n)
        }
        func budget(_ cost: Double?) -> (within: String?, close: String?) {
            guard let cost else { return (nil, nil) }
            let dollars = SchoolFormat.dollars(cost)
            return ("Within your budget (\(dollars)/yr)", "Close to your budget (\(dollars)/yr)")
        }
        let (admission, sat, enrollment) = (numbers("admission_rate"), numbers("sat_avg"), numbers("undergrad_enrollment"))
        let (completion, earnings, netPrice) = (numbers("completion_rate"), numbers("median_earnings"), numbers("net_price"))
        let (control, locale, region) = (texts("control"), texts("locale"), texts("region"))
        // One string per distinct sentence, shared by every school that shows it ("In the
        // Southeast region", "Selective: admits 45%"): a card retains each sentence it shows,
        // and a sentence many schools share stays in the cache from card to card, where one
        // string per school was a cache miss on each card.
        // Keyed once per distinct sentence as well.
        var interned: [String: KeyedText] = [:]
        func shared(_ sentence: String?) -> KeyedText? {
            guard let sentence else { return nil }
            if let known = interned[sentence] { return known }
            let keyed = KeyedText(sentence)
            interned[sentence] = keyed
            return keyed
        }
        func shared(_ budget: (within: String?, close: String?)) -> (within: KeyedText?, close: KeyedText?) {
            (shared(budget.within), shared(budget.close))
        }
        // School by school, so each school's own strings are allocated next to each other.
        rows = (0..<n).map { row in
            let size = enrollment[row]
            return Row(
                selectivity: shared(admission[row].map { "Selective: admits \(SchoolFormat.percent($0))" }),
                academics: shared(sat[row].map { "Academically strong (average SAT \(SentenceText.wholeText($0)))" }),
                sizeBand: size.map { $0 < 5000 ? .small : $0 < 15000 ? .medium : .large },
                sizePerfect: shared(size.map { "Perfect size match (\(SchoolFormat.grouped($0)) undergrads)" }),
                sizeOther: shared(size.map { n in
                    let count = SchoolFormat.grouped(n)
                    if n < 5000 { return "Small school (\(count) undergrads)" }
                    return n < 15000 ? "Mid-sized school (\(count) undergrads)" : "Large school (\(count) undergrads)"
                }),
                outcomes: shared(completion[row].map { "High graduation rate (\(SchoolFormat.percent($0)))" }),
                earnings: shared(earnings[row].map { "Strong graduate earnings (\(SchoolFormat.dollars($0)) median)" }),
                netPrice: shared(netPrice[row].map { "Low net price (\(SchoolFormat.dollars($0))/yr)" }),
                control: shared({
                    switch control[row] {
                    case "public": "Public university"
                    case "private_nonprofit": "Private nonprofit college"
                    default: nil
                    }
                }()),
                setting: shared({
                    guard !locale[row].isEmpty else { return "" }
                    let parts = locale[row].split(separator: "_")
                    return "\(parts[0].capitalized) setting (\(parts.dropFirst().joined(separator: " ")))"
                }())!,
                region: shared("In the \(region[row].split(separator: "_").map(\.capitalized).joined(separator: " ")) region")!,
                budgetInState: shared(budget(schools.estimatedCost(row: row, homeState: schools.states[row]))),
                // No home state matches a school's state when the state is unknown.
                budgetOutOfState: shared(budget(schools.estimatedCost(row: row, homeState: schools.states[row] + "\u{0}"))))
        }
    }
}
