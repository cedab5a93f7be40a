/// The response the app consumes: cards, the learning state and the swipe count.
///
/// JSON keys are snake_case:
///
///     {"recommendations":[{"school":{"id":"…","name":"…","city":"…", …},
///       "match_score":0.75,"grade":"B","explanations":["…"],"is_probe":false,
///       "matched_majors":["Business Administration"],"distance":125.5}],
///      "learning_state":{"phase":"discovery","progress":0.0,"preference_weights":{…}},
///      "total_swipes":0}
public struct RecommendationResponse: Sendable, Hashable, Codable {
    /// The cards, in the order to show them.
    public var recommendations: [Recommendation]
    /// What the engine has learned so far.
    public var learningState: LearningState
    /// Swipes recorded for this student.
    public var totalSwipes: Int

    /// Creates a response.
    ///
    /// - Parameters:
    ///   - recommendations: The cards.
    ///   - learningState: The learning state.
    ///   - totalSwipes: The swipe count.
    public init(recommendations: [Recommendation], learningState: LearningState, totalSwipes: Int) {
        self.recommendations = recommendations
        self.learningState = learningState
        self.totalSwipes = totalSwipes
    }

    enum CodingKeys: String, CodingKey {
        case recommendations, learningState = "learning_state", totalSwipes = "total_swipes"
    }
}

/// One card.
public struct Recommendation: Sendable, Hashable, Codable {
    /// The item (a school in the college app), with its display attributes. Its JSON key is
    /// `"school"`, what the app already reads, for any catalog.
    public var item: ItemSummary
    /// The calibrated match score in [0, 1].
    public var matchScore: Double
    /// The letter grade of `matchScore` among the student's match scores over the catalog
    /// (`GradeScale`: A the top 10%, then 20/30/20%, F the bottom 20%).
    public var grade: Grade
    /// Up to three reasons, from the largest positive contributions to the score.
    public var explanations: [String]
    /// Whether this card is a probe that tests a preference boundary.
    public var isProbe: Bool
    /// The student's intended majors the school offers, by name.
    public var matchedMajors: [String]
    /// Great-circle distance from the student's home in miles; nil without a home or for an
    /// item without a location.
    public var distance: Double?

    /// The item: the name this property had when every catalog was schools.
    @available(*, deprecated, renamed: "item")
    public var school: ItemSummary {
        get { item }
        set { item = newValue }
    }

    /// Creates a card.
    ///
    /// - Parameters:
    ///   - item: The item.
    ///   - matchScore: The match score.
    ///   - grade: The grade.
    ///   - explanations: The reasons.
    ///   - isProbe: Whether it is a probe.
    ///   - matchedMajors: Matched majors.
    ///   - distance: Miles from home.
    public init(item: ItemSummary, matchScore: Double, grade: Grade, explanations: [String],
                isProbe: Bool, matchedMajors: [String], distance: Double?) {
        self.item = item
        self.matchScore = matchScore
        self.grade = grade
        self.explanations = explanations
        self.isProbe = isProbe
        self.matchedMajors = matchedMajors
        self.distance = distance
    }

    /// Creates a card (the initializer's name before `item`).
    ///
    /// - Parameters:
    ///   - school: The item.
    ///   - matchScore: The match score.
    ///   - grade: The grade.
    ///   - explanations: The reasons.
    ///   - isProbe: Whether it is a probe.
    ///   - matchedMajors: Matched majors.
    ///   - distance: Miles from home.
    @available(*, deprecated, renamed: "init(item:matchScore:grade:explanations:isProbe:matchedMajors:distance:)")
    public init(school: ItemSummary, matchScore: Double, grade: Grade, explanations: [String],
                isProbe: Bool, matchedMajors: [String], distance: Double?) {
        self.init(item: school, matchScore: matchScore, grade: grade, explanations: explanations, isProbe: isProbe,
                  matchedMajors: matchedMajors, distance: distance)
    }

    enum CodingKeys: String, CodingKey {
        case item = "school", matchScore = "match_score", grade, explanations, isProbe = "is_probe"
        case matchedMajors = "matched_majors", distance
    }
}

/// An item as the app shows it: id, name and display attributes (text or numbers; null where
/// the data has a gap).
public struct ItemSummary: Sendable, Hashable, Codable {
    /// An attribute value.
    public enum Value: Sendable, Hashable, Codable {
        /// Text.
        case text(String)
        /// A number.
        case number(Double)
        /// A missing value.
        case missing

        /// Decodes text, a number or null.
        ///
        /// - Parameter decoder: The decoder.
        public init(from decoder: any Decoder) throws {
            let c = try decoder.singleValueContainer()
            if c.decodeNil() { self = .missing }
            else if let n = try? c.decode(Double.self) { self = .number(n) }
            else { self = .text(try c.decode(String.self)) }
        }

        /// Encodes text, a number or null.
        ///
        /// - Parameter encoder: The encoder.
        public func encode(to encoder: any Encoder) throws {
            var c = encoder.singleValueContainer()
            switch self {
            case let .text(s): try c.encode(s)
            case let .number(n): try c.encode(n)
            case .missing: try c.encodeNil()
            }
        }
    }

    /// The item id.
    public var id: String
    /// The display name.
    public var name: String
    /// Display attributes by name.
    public var attributes: [String: Value]

    /// Creates a summary.
    ///
    /// - Parameters:
    ///   - id: The id.
    ///   - name: The name.
    ///   - attributes: Display attributes.
    public init(id: String, name: String, attributes: [String: Value]) {
        self.id = id
        self.name = name
        self.attributes = attributes
    }

    private struct Key: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    /// Decodes `{"id":…, "name":…, …attributes}`.
    ///
    /// - Parameter decoder: The decoder.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: Key.self)
        id = try c.decode(String.self, forKey: Key(stringValue: "id"))
        name = try c.decode(String.self, forKey: Key(stringValue: "name"))
        var attributes: [String: Value] = [:]
        for key in c.allKeys where key.stringValue != "id" && key.stringValue != "name" {
            attributes[key.stringValue] = try c.decode(Value.self, forKey: key)
        }
        self.attributes = attributes
    }

    /// Encodes id, name and the attributes flat in one object.
    ///
    /// - Parameter encoder: The encoder.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: Key.self)
        try c.encode(id, forKey: Key(stringValue: "id"))
        try c.encode(name, forKey: Key(stringValue: "name"))
        for (key, value) in attributes where key != "id" && key != "name" {
            try c.encode(value, forKey: Key(stringValue: key))
        }
    }
}

/// What the engine has learned about a student.
public struct LearningState: Sendable, Hashable, Codable {
    /// The learning phase.
    public var phase: LearningPhase
    /// Progress within the phase, 0…1.
    public var progress: Double
    /// Named weights a person understands (see `SchoolMatcher.namedWeights(_:)`).
    public var preferenceWeights: [String: Double]

    /// Creates a state.
    ///
    /// - Parameters:
    ///   - phase: The phase.
    ///   - progress: Progress within it.
    ///   - preferenceWeights: Named weights.
    public init(phase: LearningPhase, progress: Double, preferenceWeights: [String: Double]) {
        self.phase = phase
        self.progress = progress
        self.preferenceWeights = preferenceWeights
    }

    /// The state after `totalSwipes` swipes with these named weights.
    ///
    /// - Parameters:
    ///   - totalSwipes: Swipes so far.
    ///   - preferenceWeights: Named weights.
    public init(totalSwipes: Int, preferenceWeights: [String: Double]) {
        self.init(phase: LearningPhase(totalSwipes: totalSwipes),
                  progress: LearningPhase.progress(totalSwipes: totalSwipes),
                  preferenceWeights: preferenceWeights)
    }

    enum CodingKeys: String, CodingKey {
        case phase, progress, preferenceWeights = "preference_weights"
    }
}
