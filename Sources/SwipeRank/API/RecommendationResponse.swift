import SwipeRankNumerics

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

    /// The three fields in one immutable object, so a copy of the summary (every card holds
    /// one, copied from the catalog's) retains one reference instead of two strings and a
    /// dictionary. A deck's cards come from anywhere in the catalog, so each of those objects
    /// was a cache miss of its own, a few percent of a deck's time (the server writes a full
    /// card's item from bytes encoded once per catalog). A set replaces the object.
    private final class Fields: Sendable {
        let id: String
        let name: String
        let attributes: [String: Value]

        init(id: String, name: String, attributes: [String: Value]) {
            self.id = id
            self.name = name
            self.attributes = attributes
        }
    }

    private var fields: Fields

    /// Starts loading the shared fields' object into the caches (a card about to be built
    /// retains it), without retaining it.
    func prefetchFields() {
        prefetch(UnsafeRawPointer(Unmanaged.passUnretained(fields).toOpaque()), bytes: 64)
    }

    /// The item id.
    public var id: String {
        get { fields.id }
        set { fields = Fields(id: newValue, name: fields.name, attributes: fields.attributes) }
    }

    /// The display name.
    public var name: String {
        get { fields.name }
        set { fields = Fields(id: fields.id, name: newValue, attributes: fields.attributes) }
    }

    /// Display attributes by name.
    public var attributes: [String: Value] {
        get { fields.attributes }
        set { fields = Fields(id: fields.id, name: fields.name, attributes: newValue) }
    }

    /// Creates a summary.
    ///
    /// - Parameters:
    ///   - id: The id.
    ///   - name: The name.
    ///   - attributes: Display attributes.
    public init(id: String, name: String, attributes: [String: Value]) {
        fields = Fields(id: id, name: name, attributes: attributes)
    }

    /// Equal id, name and attributes.
    public static func == (a: ItemSummary, b: ItemSummary) -> Bool {
        a.fields === b.fields || (a.id == b.id && a.name == b.name && a.attributes == b.attributes)
    }

    /// Hashes the id, name and attributes (what `==` compares).
    ///
    /// - Parameter hasher: The hasher.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(id)
        hasher.combine(name)
        hasher.combine(attributes)
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
        let id = try c.decode(String.self, forKey: Key(stringValue: "id"))
        let name = try c.decode(String.self, forKey: Key(stringValue: "name"))
        var attributes: [String: Value] = [:]
        for key in c.allKeys where key.stringValue != "id" && key.stringValue != "name" {
            attributes[key.stringValue] = try c.decode(Value.self, forKey: key)
        }
        self.init(id: id, name: name, attributes: attributes)
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
    /// Named weights a person understands, as a list in the order JSON writes them (every deck
    /// and swipe answer carries a learning state: see `NamedWeightList`).
    public var weightList: NamedWeightList

    /// Named weights a person understands (see `SchoolMatcher.namedWeights(_:)`): `weightList`
    /// as a dictionary.
    public var preferenceWeights: [String: Double] {
        get { weightList.dictionary }
        set { weightList = NamedWeightList(newValue) }
    }

    /// Creates a state.
    ///
    /// - Parameters:
    ///   - phase: The phase.
    ///   - progress: Progress within it.
    ///   - preferenceWeights: Named weights.
    public init(phase: LearningPhase, progress: Double, preferenceWeights: [String: Double]) {
        self.init(phase: phase, progress: progress, weightList: NamedWeightList(preferenceWeights))
    }

    /// Creates a state from named weights already listed.
    ///
    /// - Parameters:
    ///   - phase: The phase.
    ///   - progress: Progress within it.
    ///   - weightList: Named weights.
    public init(phase: LearningPhase, progress: Double, weightList: NamedWeightList) {
        self.phase = phase
        self.progress = progress
        self.weightList = weightList
    }

    /// The state after `totalSwipes` swipes with these named weights.
    ///
    /// - Parameters:
    ///   - totalSwipes: Swipes so far.
    ///   - preferenceWeights: Named weights.
    public init(totalSwipes: Int, preferenceWeights: [String: Double]) {
        self.init(totalSwipes: totalSwipes, weightList: NamedWeightList(preferenceWeights))
    }

    /// The state after `totalSwipes` swipes with these named weights, already listed (what a
    /// matcher's `namedWeightList(_:)` gives).
    ///
    /// - Parameters:
    ///   - totalSwipes: Swipes so far.
    ///   - weightList: Named weights.
    public init(totalSwipes: Int, weightList: NamedWeightList) {
        self.init(phase: LearningPhase(totalSwipes: totalSwipes),
                  progress: LearningPhase.progress(totalSwipes: totalSwipes),
                  weightList: weightList)
    }

    enum CodingKeys: String, CodingKey {
        case phase, progress, preferenceWeights = "preference_weights"
    }

    /// Decodes the state (the weights as an object of name → value).
    ///
    /// - Parameter decoder: The decoder.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        self.init(phase: try c.decode(LearningPhase.self, forKey: .phase), progress: try c.decode(Double.self, forKey: .progress),
                  preferenceWeights: try c.decode([String: Double].self, forKey: .preferenceWeights))
    }

    /// Encodes the state (the weights as an object of name → value).
    ///
    /// - Parameter encoder: The encoder.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(phase, forKey: .phase)
        try c.encode(progress, forKey: .progress)
        try c.encode(preferenceWeights, forKey: .preferenceWeights)
    }
}

/// Named weights as a list: each name once, sorted as JSON's sorted keys sort them, with its
/// value. A matcher sorts its names once (`init(order:values:)`), so the learning state in every
/// deck and swipe answer is built and written without a dictionary: ten names hashed into one
/// and looked up again to write them were most of a learning state's cost.
public struct NamedWeightList: Sendable, Hashable {
    /// The names and their JSON keys, shared by every list of one matcher.
    package let order: NamedWeightKeys
    /// One value per name, in the order of `names`.
    public let values: [Double]

    /// The names, in the order JSON writes them (byte order of their UTF-8).
    public var names: [String] { order.names }

    /// The list of a dictionary's entries.
    ///
    /// - Parameter named: Name → value.
    /// - Complexity: O(n log n) for n names.
    public init(_ named: [String: Double]) {
        order = NamedWeightKeys(named.keys)
        values = order.names.map { named[$0]! }
    }

    /// A list in an order built once.
    ///
    /// - Parameters:
    ///   - order: The names.
    ///   - values: One value per name, in that order.
    package init(order: NamedWeightKeys, values: [Double]) {
        precondition(values.count == order.names.count, "NamedWeightList: \(values.count) values for \(order.names.count) names")
        self.order = order
        self.values = values
    }

    /// Name → value.
    public var dictionary: [String: Double] { Dictionary(uniqueKeysWithValues: zip(order.names, values)) }

    /// Equal when the names and values are (the order is fixed by the names, so two lists of
    /// the same entries are equal, as their dictionaries are).
    public static func == (a: NamedWeightList, b: NamedWeightList) -> Bool { a.values == b.values && a.order.names == b.order.names }

    /// Hashes the names and values.
    ///
    /// - Parameter hasher: The hasher.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(order.names)
        hasher.combine(values)
    }
}
