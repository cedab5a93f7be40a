/// An answer a student can give about a card.
///
/// Each option moves the prior mean of the preference model by a documented adjustment
/// (times `EngineConfiguration.feedbackStrength`, default 1); the posterior follows in
/// proportion to how much the prior still counts (fully at first, less as swipes accumulate):
///
/// | option | adjustment |
/// |---|---|
/// | Too expensive | `budget` term +0.5, `net_price` −0.4 |
/// | Too far from home | `distance` term +0.5 |
/// | Too big | `enrollment` −0.4, `size=large` −0.4 |
/// | Too small | `enrollment` +0.4, `size=small` −0.4 |
/// | Not selective enough | `selectivity` +0.4, `sat_avg` +0.2 |
/// | Too selective | `selectivity` −0.4, `academic_fit` term +0.3 |
/// | Doesn't offer my major | `major_fit` term +0.5 |
/// | Not the setting I want | the card's `locale=` column −0.5 |
/// | Great value | `budget` term +0.25, `net_price` −0.2 |
/// | Good distance from home | `distance` term +0.25 |
/// | Right size | the card's `size=` column +0.3 |
/// | Strong in my major | `major_fit` term +0.25 |
/// | Academically strong | `selectivity` +0.25 |
public enum FeedbackOption: String, Sendable, Hashable, Codable, CaseIterable {
    /// The school costs too much.
    case tooExpensive = "Too expensive"
    /// The school is too far.
    case tooFar = "Too far from home"
    /// Too many students.
    case tooBig = "Too big"
    /// Too few students.
    case tooSmall = "Too small"
    /// Admits too many.
    case notSelectiveEnough = "Not selective enough"
    /// Admits too few.
    case tooSelective = "Too selective"
    /// Lacks the student's majors.
    case noMajor = "Doesn't offer my major"
    /// Wrong campus setting.
    case wrongSetting = "Not the setting I want"
    /// Affordable.
    case greatValue = "Great value"
    /// Close enough.
    case rightDistance = "Good distance from home"
    /// Size fits.
    case rightSize = "Right size"
    /// Good at the student's major.
    case strongMajor = "Strong in my major"
    /// Selective.
    case academicallyStrong = "Academically strong"
}

extension FeedbackOption {
    /// A stable snake_case code for the option (`too_expensive`): what apps send and localize
    /// by. The raw value (the English label) stays what stored sessions hold.
    public var code: String {
        switch self {
        case .tooExpensive: "too_expensive"
        case .tooFar: "too_far"
        case .tooBig: "too_big"
        case .tooSmall: "too_small"
        case .notSelectiveEnough: "not_selective_enough"
        case .tooSelective: "too_selective"
        case .noMajor: "no_major"
        case .wrongSetting: "wrong_setting"
        case .greatValue: "great_value"
        case .rightDistance: "right_distance"
        case .rightSize: "right_size"
        case .strongMajor: "strong_major"
        case .academicallyStrong: "academically_strong"
        }
    }

    /// The English label shown when an app has no translation (the raw value).
    public var label: String { rawValue }

    /// The option with this code, or with this label (older clients send labels).
    ///
    /// - Parameter text: A code or a label.
    public init?(codeOrLabel text: String) {
        guard let option = FeedbackOption.allCases.first(where: { $0.code == text }) ?? FeedbackOption(rawValue: text) else {
            return nil
        }
        self = option
    }
}

/// A feedback question after a swipe.
public struct FeedbackPrompt: Sendable, Hashable, Codable {
    /// Why the engine asks.
    public enum Reason: String, Sendable, Hashable, Codable {
        /// The card was a probe: the answer sharpens the boundary it tested.
        case probe
        /// The swipe contradicted a confident prediction.
        case patternBreak = "pattern_break"
    }

    /// The card asked about.
    public var cardID: String
    /// Why.
    public var reason: Reason
    /// At most five options, most salient first.
    public var options: [FeedbackOption]

    enum CodingKeys: String, CodingKey { case cardID = "card_id", reason, options }
}

extension SchoolMatcher {
    /// The options worth offering for a school: the features that stand out for this student,
    /// most salient first, at most five. Dislikes get reasons to avoid, likes reasons to seek.
    ///
    /// - Parameters:
    ///   - row: The swiped school.
    ///   - action: The swipe.
    ///   - student: The student.
    /// - Returns: At most five options.
    public func feedbackOptions(row: Int, action: SwipeAction, student: MatchStudent) -> [FeedbackOption] {
        let profile = student.profile
        func number(_ name: String) -> Double? {
            schools.catalog.numericValues[schools.catalog.numericAttribute(named: name)!][row]
        }
        let cost = schools.estimatedCost(row: row, homeState: profile.homeState)
        let distance = row < student.distances.count ? Double(student.distances[row]) : nil
        let enrollment = number("undergrad_enrollment"), admission = number("admission_rate")
        let matched = !student.matchedMajors(row: row, schools: schools).isEmpty
        var options: [FeedbackOption] = []
        switch action {
        case .dislike:
            if let cost, cost > (profile.annualBudget.map { 0.8 * $0 } ?? 25_000) { options.append(.tooExpensive) }
            if let distance, distance > 0.75 * profile.maxDistanceMiles { options.append(.tooFar) }
            if let enrollment, enrollment > 15_000 { options.append(.tooBig) }
            if let enrollment, enrollment < 3_000 { options.append(.tooSmall) }
            if !student.majors.isEmpty && !matched { options.append(.noMajor) }
            if let admission, admission > 0.75 { options.append(.notSelectiveEnough) }
            if let admission, admission < 0.25 { options.append(.tooSelective) }
            if !schools.catalog.textValues[schools.catalog.textAttribute(named: "locale")!][row].isEmpty {
                options.append(.wrongSetting)
            }
        case .like:
            if let cost, let budget = profile.annualBudget, cost <= budget { options.append(.greatValue) }
            if matched { options.append(.strongMajor) }
            if let distance, distance <= profile.maxDistanceMiles { options.append(.rightDistance) }
            if enrollment != nil { options.append(.rightSize) }
            if let admission, admission < 0.5 { options.append(.academicallyStrong) }
        }
        return Array(options.prefix(5))
    }

    /// The prior shift an answer applies for a school, over the combined vector
    /// `[features, terms]` (the table on `FeedbackOption`).
    ///
    /// - Parameters:
    ///   - option: The answer.
    ///   - row: The school's catalog row (some answers depend on its locale or size).
    /// - Returns: D = d + k values (k terms of `termBasis`).
    public func feedbackAdjustment(for option: FeedbackOption, row: Int) -> [Double] {
        let catalog = schools.catalog
        let termNames = self.termNames
        var delta = [Double](repeating: 0, count: catalog.dimension + termNames.count)
        func feature(_ name: String, _ value: Double) {
            if let j = columnIndex[name] { delta[j] += value }
        }
        func term(_ name: String, _ value: Double) {
            delta[catalog.dimension + termNames.firstIndex(of: name)!] += value
        }
        func cardCategory(_ prefix: String) -> String? {
            catalog.columns.indices.first { catalog.columns[$0].name.hasPrefix(prefix) && catalog.features[row, $0] == 1 }
                .map { catalog.columns[$0].name }
        }
        switch option {
        case .tooExpensive: term("budget", 0.5); feature("net_price", -0.4)
        case .tooFar: term("distance", 0.5)
        case .tooBig: feature("enrollment", -0.4); feature("size=large", -0.4)
        case .tooSmall: feature("enrollment", 0.4); feature("size=small", -0.4)
        case .notSelectiveEnough: feature("selectivity", 0.4); feature("sat_avg", 0.2)
        case .tooSelective: feature("selectivity", -0.4); term("academic_fit", 0.3)
        case .noMajor: term("major_fit", 0.5)
        case .wrongSetting: if let column = cardCategory("locale=") { feature(column, -0.5) }
        case .greatValue: term("budget", 0.25); feature("net_price", -0.2)
        case .rightDistance: term("distance", 0.25)
        case .rightSize: if let column = cardCategory("size=") { feature(column, 0.3) }
        case .strongMajor: term("major_fit", 0.25)
        case .academicallyStrong: feature("selectivity", 0.25)
        }
        return delta
    }
}

extension SwipeEngine {
    /// The prior shift an answer applies for a card, over the combined vector
    /// `[features, terms]`: the matcher's adjustment times `EngineConfiguration.feedbackStrength`.
    ///
    /// - Parameters:
    ///   - option: The answer.
    ///   - row: The card's catalog row.
    /// - Returns: D = d + k values.
    public func adjustment(for option: FeedbackOption, row: Int) -> [Double] {
        matcher.feedbackAdjustment(for: option, row: row).map { $0 * configuration.feedbackStrength }
    }
}
