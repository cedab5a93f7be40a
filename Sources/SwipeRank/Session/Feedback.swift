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
