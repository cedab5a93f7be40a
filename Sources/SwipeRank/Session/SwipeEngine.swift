/// Settings of the learning engine. Every default is documented where it acts.
public struct EngineConfiguration: Sendable, Hashable, Codable {
    /// Slightly-beyond band: preferred < distance ≤ expansion × preferred.
    public var expansion: Double = 1.5
    /// Band shares: nearby, slightly beyond, discovery.
    public var bandShares: [Double] = [0.5, 0.3, 0.2]
    /// Every how many cards a probe is served (`Int.max`: no probes, an evaluation baseline).
    public var probeInterval: Int = 4
    /// Whether cards are mixed 50/30/20 across geographic bands (off: one pool, an evaluation
    /// baseline; the distance term still scores).
    public var geographicMixing = true
    /// Prior precision τ of each weight (3: a prior standard deviation of 0.58 around the cold start;
    /// tuned on simulated students, see the learning test).
    public var priorPrecision: Double = 3
    /// Forgetting factor λ applied before each swipe in the stable phase.
    public var stableForgetting: Double = 0.97
    /// Feedback is never asked twice within this many swipes, per phase (discovery,
    /// refinement, stable): often while learning, rarely once settled.
    public var feedbackCooldown: [LearningPhase: Int] = [.discovery: 3, .refinement: 5, .stable: 8]
    /// A dislike of a card predicted at or above this match (or a like at or below 1 − it) is a
    /// pattern break that triggers feedback.
    public var patternBreakConfidence: Double = 0.75
    /// Multiplies every feedback adjustment.
    public var feedbackStrength: Double = 1
    /// Raw-score bonus for discovery cards from a region the student has not been shown.
    public var discoveryNoveltyBonus: Float = 0.75

    /// The defaults.
    public init() {}
}

/// The shared, immutable part of the engine: the catalog, the matcher and the configuration.
///
/// `Sendable` and never mutated, so one engine serves every student from any number of
/// concurrent tasks; each student's mutable state is a `SwipeSession` value. Generic over the
/// `Matcher`: colleges (`SchoolMatcher`) or any catalog (`ItemMatcher`).
///
///     let engine = SwipeEngine(matcher: SchoolMatcher(schools: schools))
///     var session = try engine.session(studentID: "s1", profile: profile, seed: 7)
///     let batch = session.recommendations(count: 10)
///     let result = try session.recordSwipe(Swipe(swipeID: "w1", cardID: batch.recommendations[0].school.id,
///                                                action: .like, timestamp: 1))
public struct SwipeEngine<M: Matcher>: Sendable {
    /// Scores and cards.
    public let matcher: M
    /// Settings.
    public let configuration: EngineConfiguration
    let mixer: GeographicMixer
    let probes: ProbeScheduler

    /// Creates an engine.
    ///
    /// - Parameters:
    ///   - matcher: The matcher over the catalog.
    ///   - configuration: Settings.
    public init(matcher: M, configuration: EngineConfiguration = EngineConfiguration()) {
        self.matcher = matcher
        self.configuration = configuration
        self.mixer = GeographicMixer(shares: configuration.bandShares)
        self.probes = ProbeScheduler(interval: configuration.probeInterval)
    }

    /// The same engine with a changed configuration (an evaluation ablation, a tuned variant).
    ///
    /// - Parameter change: Edits the configuration.
    /// - Returns: An engine over the same matcher.
    public func reconfigured(_ change: (inout EngineConfiguration) -> Void) -> SwipeEngine {
        var configuration = self.configuration
        change(&configuration)
        return SwipeEngine(matcher: matcher, configuration: configuration)
    }

    /// Starts a session for a student.
    ///
    /// - Parameters:
    ///   - studentID: The student's id (kept in snapshots).
    ///   - profile: The profile.
    ///   - seed: Seeds the probe draws.
    /// - Returns: A session with the cold-start model and every item unseen.
    /// - Throws: `DataError` for an invalid profile.
    /// - Complexity: O(N × d).
    @_specialize(where M == SchoolMatcher)
    @_specialize(where M == ItemMatcher)
    public func session(studentID: String, profile: M.Profile, seed: UInt64) throws(DataError) -> SwipeSession<M> {
        try SwipeSession(engine: self, studentID: studentID, profile: profile, seed: seed)
    }

    /// The number of model weights, D = d + k.
    public var modelDimension: Int { matcher.catalog.dimension + matcher.termNames.count }

    /// The combined vector `[features, terms]` of an item for a student, in Double: what the
    /// preference model's weights multiply.
    ///
    /// - Parameters:
    ///   - row: A catalog row.
    ///   - student: The resolved student.
    /// - Returns: D = d + k values.
    /// - Complexity: O(D).
    @_specialize(where M == SchoolMatcher)
    @_specialize(where M == ItemMatcher)
    public func combinedVector(row: Int, student: M.Student) -> [Double] {
        let catalog = matcher.catalog
        var z = [Double](repeating: 0, count: catalog.dimension + student.terms.names.count)
        catalog.features.withUnsafeBufferPointer { x in
            for j in 0..<catalog.dimension { z[j] = Double(x[row * catalog.dimension + j]) }
        }
        for k in 0..<student.terms.names.count { z[catalog.dimension + k] = Double(student.terms[term: k, item: row]) }
        return z
    }
}
