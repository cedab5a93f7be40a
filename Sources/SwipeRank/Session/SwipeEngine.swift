import Foundation
import SwipeRankNumerics

/// Where probes come from.
public enum ProbeCandidates: String, Sendable, Hashable, Codable, CaseIterable {
    /// The `window` unseen cards whose predicted match is closest to 0.5: a test of the
    /// decision boundary, wherever the cards stand in the ranking.
    case boundary
    /// The `window` best unseen cards of the band after the deck's own picks: plausibly good
    /// cards, of which the most uncertain is most likely drawn — exploration where a wrong
    /// belief would change what is served, at a small cost to the deck.
    case plausiblyGood = "plausibly_good"
}

/// The order of a deck's cards.
public enum DeckOrder: String, Sendable, Hashable, Codable, CaseIterable {
    /// The cards the band plan and the probes chose, the non-probes best first by the ranking
    /// score; probes keep their scheduled positions. The same cards as `bandPlan`, so the same
    /// 50/30/20 mix and probe schedule, but a student sees what the model thinks best first
    /// (a forced beyond or discovery card no longer sits at position 2 or 3).
    case bestFirst = "best_first"
    /// The band plan's interleaving (nearby, beyond, discovery, nearby, …): the order before
    /// `bestFirst`, kept as an evaluation baseline.
    case bandPlan = "band_plan"
}

/// Settings of the learning engine. Every default is documented where it acts.
///
/// Decoding from JSON fills absent fields with the defaults, rejects unknown keys (a typo must
/// not silently fall back to a default) and validates every value (`validate()`), so a
/// configuration file can never put the engine into a state that traps.
public struct EngineConfiguration: Sendable, Hashable, Codable {
    /// Slightly-beyond band: preferred < distance ≤ expansion × preferred (1…100).
    public var expansion: Double = 1.5
    /// Band shares: nearby, slightly beyond, discovery (three non-negative numbers summing to 1).
    public var bandShares: [Double] = [0.5, 0.3, 0.2]
    /// Every how many cards a probe is served, ≥ 1 (`Int.max`: no probes, an evaluation baseline).
    public var probeInterval: Int = 4
    /// Which unseen cards of the slot's band a probe is drawn from (the draw itself is always
    /// ∝ exp(posterior variance / T), its probability the card's propensity).
    public var probeCandidates: ProbeCandidates = .plausiblyGood
    /// Whether cards are mixed 50/30/20 across geographic bands (off: one pool, an evaluation
    /// baseline; the distance term still scores).
    public var geographicMixing = true
    /// Prior precision τ of each weight, in (0, 10⁶] (3: a prior standard deviation of 0.58
    /// around the cold start; tuned on simulated students, see the learning test).
    public var priorPrecision: Double = 3
    /// Forgetting factor λ in (0, 1] applied before each swipe in the stable phase.
    public var stableForgetting: Double = 0.97
    /// Feedback is never asked twice within this many swipes, per phase (discovery,
    /// refinement, stable): often while learning, rarely once settled. Each 0…10⁶.
    public var feedbackCooldown: [LearningPhase: Int] = [.discovery: 3, .refinement: 5, .stable: 8]
    /// A dislike of a card predicted at or above this match (or a like at or below 1 − it) is a
    /// pattern break that triggers feedback; in [0.5, 1].
    public var patternBreakConfidence: Double = 0.75
    /// Multiplies every feedback adjustment; in [0, 100].
    public var feedbackStrength: Double = 1
    /// Raw-score bonus for discovery cards from a region the student has not been shown; |x| ≤ 100.
    public var discoveryNoveltyBonus: Float = 0.75
    /// Whether each student's model also learns a bias — an intercept, how much this student
    /// likes cards in general (prior N(0, 1/τ)) — so a student who dislikes most cards lowers
    /// it instead of dragging every positive weight down. It moves the predicted like
    /// probability (learning, feedback prompts), never the ranking, and the match score shown
    /// stays the cards' own (without the bias). Off by default: a stored session learned
    /// without it does not restore under it (the configuration digest differs).
    public var studentBias = false
    /// The order of a deck's cards (`DeckOrder.bestFirst`: the chosen cards best first, probes
    /// at their positions).
    public var deckOrder: DeckOrder = .bestFirst
    /// Whether a probe's draw also weighs each candidate's value: p ∝ exp(variance / T +
    /// score / calibration scale), the second term the log-odds of a like — information times
    /// value rather than information alone. Off by default: on the simulated families it moved
    /// the first deck up a little and the 40th either way, within the intervals
    /// (docs/evaluation.md); an A/B arm (`serve --experiment`) can try it on real students.
    public var probeValue = false

    /// The defaults.
    public init() {}

    private enum CodingKeys: String, CodingKey, CaseIterable {
        case expansion, bandShares, probeInterval, geographicMixing, priorPrecision, stableForgetting
        case feedbackCooldown, patternBreakConfidence, feedbackStrength, discoveryNoveltyBonus, probeCandidates, studentBias
        case deckOrder, probeValue
    }

    /// Decodes a configuration: absent fields keep their defaults, unknown keys are rejected,
    /// every value is validated.
    ///
    /// - Parameter decoder: The decoder.
    /// - Throws: `DecodingError` for a wrong type or an unknown key; `DataError` naming the
    ///   field for a value out of range.
    public init(from decoder: any Decoder) throws {
        try decoder.rejectUnknownKeys(CodingKeys.self)
        let c = try decoder.container(keyedBy: CodingKeys.self)
        var config = EngineConfiguration()
        if let v = try c.decodeIfPresent(Double.self, forKey: .expansion) { config.expansion = v }
        if let v = try c.decodeIfPresent([Double].self, forKey: .bandShares) { config.bandShares = v }
        if let v = try c.decodeIfPresent(Int.self, forKey: .probeInterval) { config.probeInterval = v }
        if let v = try c.decodeIfPresent(Bool.self, forKey: .geographicMixing) { config.geographicMixing = v }
        if let v = try c.decodeIfPresent(Double.self, forKey: .priorPrecision) { config.priorPrecision = v }
        if let v = try c.decodeIfPresent(Double.self, forKey: .stableForgetting) { config.stableForgetting = v }
        if let v = try c.decodeIfPresent([String: Int].self, forKey: .feedbackCooldown) {
            var cooldown: [LearningPhase: Int] = [:]
            for (key, value) in v {
                guard let phase = LearningPhase(rawValue: key) else {
                    throw DataError(.invalidValue, source: "configuration", field: "feedbackCooldown.\(key)",
                                    detail: "feedbackCooldown.\(key): not a phase (discovery, refinement, stable)")
                }
                cooldown[phase] = value
            }
            config.feedbackCooldown = cooldown
        }
        if let v = try c.decodeIfPresent(Double.self, forKey: .patternBreakConfidence) { config.patternBreakConfidence = v }
        if let v = try c.decodeIfPresent(Double.self, forKey: .feedbackStrength) { config.feedbackStrength = v }
        if let v = try c.decodeIfPresent(Float.self, forKey: .discoveryNoveltyBonus) { config.discoveryNoveltyBonus = v }
        if let v = try c.decodeIfPresent(String.self, forKey: .probeCandidates) {
            guard let candidates = ProbeCandidates(rawValue: v) else {
                throw DataError(.invalidValue, source: "configuration", field: "probeCandidates",
                                detail: "probeCandidates: \"\(DataError.truncated(v))\" is not one of \(ProbeCandidates.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            config.probeCandidates = candidates
        }
        if let v = try c.decodeIfPresent(Bool.self, forKey: .studentBias) { config.studentBias = v }
        if let v = try c.decodeIfPresent(String.self, forKey: .deckOrder) {
            guard let order = DeckOrder(rawValue: v) else {
                throw DataError(.invalidValue, source: "configuration", field: "deckOrder",
                                detail: "deckOrder: \"\(DataError.truncated(v))\" is not one of \(DeckOrder.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            config.deckOrder = order
        }
        if let v = try c.decodeIfPresent(Bool.self, forKey: .probeValue) { config.probeValue = v }
        try config.validate()
        self = config
    }

    /// Encodes every field (the cooldowns by phase name; `studentBias` only when on).
    ///
    /// - Parameter encoder: The encoder.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(expansion, forKey: .expansion)
        try c.encode(bandShares, forKey: .bandShares)
        try c.encode(probeInterval, forKey: .probeInterval)
        try c.encode(geographicMixing, forKey: .geographicMixing)
        try c.encode(priorPrecision, forKey: .priorPrecision)
        try c.encode(stableForgetting, forKey: .stableForgetting)
        try c.encode(Dictionary(uniqueKeysWithValues: feedbackCooldown.map { ($0.key.rawValue, $0.value) }), forKey: .feedbackCooldown)
        try c.encode(patternBreakConfidence, forKey: .patternBreakConfidence)
        try c.encode(feedbackStrength, forKey: .feedbackStrength)
        try c.encode(discoveryNoveltyBonus, forKey: .discoveryNoveltyBonus)
        try c.encode(probeCandidates.rawValue, forKey: .probeCandidates)
        // Only when on: the default configuration keeps the encoding (and modelVersion) it had.
        if studentBias { try c.encode(studentBias, forKey: .studentBias) }
        // Always: decks came out in the band plan's order before this field existed, so a
        // session stored then must not restore as if it had been served best first.
        try c.encode(deckOrder.rawValue, forKey: .deckOrder)
        if probeValue { try c.encode(probeValue, forKey: .probeValue) }
    }

    /// Checks every value's range.
    ///
    /// - Throws: `DataError` `.outOfRange` naming the field.
    public func validate() throws(DataError) {
        func check(_ ok: Bool, _ field: String, _ detail: String) throws(DataError) {
            if !ok { throw DataError(.outOfRange, source: "configuration", field: field, detail: "\(field): \(detail)") }
        }
        try check(expansion.isFinite && (1...100).contains(expansion), "expansion", "must be in 1...100, got \(expansion)")
        try check(bandShares.count == 3 && bandShares.allSatisfy { $0.isFinite && $0 >= 0 } && abs(bandShares.reduce(0, +) - 1) < 1e-9,
                  "bandShares", "must be three non-negative shares summing to 1, got \(bandShares)")
        try check(probeInterval >= 1, "probeInterval", "must be at least 1, got \(probeInterval)")
        try check(priorPrecision.isFinite && priorPrecision > 0 && priorPrecision <= 1e6, "priorPrecision",
                  "must be in (0, 1e6], got \(priorPrecision)")
        try check(stableForgetting.isFinite && stableForgetting > 0 && stableForgetting <= 1, "stableForgetting",
                  "must be in (0, 1], got \(stableForgetting)")
        for (phase, value) in feedbackCooldown.sorted(by: { $0.key.rawValue < $1.key.rawValue }) {
            try check((0...1_000_000).contains(value), "feedbackCooldown.\(phase.rawValue)", "must be in 0...1000000, got \(value)")
        }
        try check(patternBreakConfidence.isFinite && (0.5...1).contains(patternBreakConfidence), "patternBreakConfidence",
                  "must be in 0.5...1, got \(patternBreakConfidence)")
        try check(feedbackStrength.isFinite && (0...100).contains(feedbackStrength), "feedbackStrength",
                  "must be in 0...100, got \(feedbackStrength)")
        try check(discoveryNoveltyBonus.isFinite && abs(discoveryNoveltyBonus) <= 100, "discoveryNoveltyBonus",
                  "must be finite with |x| ≤ 100, got \(discoveryNoveltyBonus)")
    }

    /// Parses and validates a configuration from JSON.
    ///
    /// - Parameters:
    ///   - json: The JSON bytes.
    ///   - source: The name shown in errors.
    /// - Returns: The configuration.
    /// - Throws: `DataError` with line:column for malformed JSON, the field for a wrong type,
    ///   an unknown key or a value out of range.
    public static func decode(json: Data, source: String) throws(DataError) -> EngineConfiguration {
        try JSONInput.decode(EngineConfiguration.self, from: json, source: source)
    }

    /// A digest of every setting that changes what a session learns or serves, for snapshots:
    /// a session restored under another configuration would not continue identically.
    // The snapshot digest covers what a replay of the swipes depends on; the probe candidates
    // only choose future cards (served cards are checked card by card), so a session keeps
    // restoring when they change. `SwipeEngine.modelVersion` covers everything.
    var digest: String {
        var hasher = FNV1a64()
        hasher.combine("\(expansion)|\(bandShares)|\(probeInterval)|\(geographicMixing)|\(priorPrecision)|\(stableForgetting)|")
        for phase in LearningPhase.allCases { hasher.combine("\(phase.rawValue)=\(feedbackCooldown[phase] ?? 0)|") }
        hasher.combine("\(patternBreakConfidence)|\(feedbackStrength)|\(discoveryNoveltyBonus)")
        // Only when on, so the default's digest (and every stored snapshot) is unchanged.
        if studentBias { hasher.combine("|studentBias") }
        return hasher.hexDigest
    }
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
///     let result = try session.recordSwipe(Swipe(swipeID: "w1", cardID: batch.recommendations[0].item.id,
///                                                action: .like, timestamp: 1))
public struct SwipeEngine<M: Matcher>: Sendable {
    /// Scores and cards.
    public let matcher: M
    /// Settings.
    public let configuration: EngineConfiguration
    let mixer: GeographicMixer
    let probes: ProbeScheduler
    /// The region of every item, shared by all sessions (per-catalog data is never copied
    /// into a session).
    let regions: RegionCodes
    /// `Catalog.fingerprint`, computed once: snapshots carry it.
    public let catalogFingerprint: String
    /// What the population taught (`withPopulation(_:)`), or nil: the hand-written cold start.
    public let population: PopulationPrior?
    /// The population's item effects as Float raw-score offsets, one per row (nil: none).
    let itemOffsets: [Float]?
    /// What the ranking adds per row: the item effects plus the exposure effects (nil: none).
    let rankingOffsets: [Float]?
    /// The population's exposure effects as Float offsets (nil: none): in the ranking only.
    let exposureOffsets: [Float]?
    /// The collaborative model (`withFactors(_:)`), or nil: students learn from features alone.
    public let factors: CollaborativeFactors?
    /// Resolved students by profile (`resolvedStudent(_:)`), bounded in bytes and shared by the
    /// engines derived from this one (same matcher, so the same students). A session keeps its
    /// profile, not the resolved student's per-item arrays, so it holds O(swipes), not O(N).
    let students: LRUCache<ProfileKey<M.Profile>, CachedStudent<M.Student>>
    /// The candidate index of a large catalog (`candidateIndexThreshold`), shared with the
    /// engines derived from this one; nil below the threshold: decks scan every item.
    let candidateIndex: CandidateIndex?
    /// `rankingOffsets` in the index's block order, with each block's largest (nil: no
    /// offsets or no index).
    let indexOffsets: BlockColumn?

    /// Bumped when the learning or serving code changes what a session does with the same
    /// catalog, configuration and swipes (part of `modelVersion`).
    public static var algorithmVersion: Int { 1 }

    /// Which model served a card, for impression logs: a digest of `algorithmVersion`, the
    /// catalog fingerprint and the configuration. Two engines with the same model version
    /// serve the same cards for the same history; an offline replay compares logs by it.
    public var modelVersion: String {
        var hasher = FNV1a64()
        hasher.combine(UInt64(Self.algorithmVersion))
        hasher.combine(catalogFingerprint)
        // The configuration's canonical JSON (sorted keys), not a reflection dump.
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        hasher.combine(String(decoding: (try? encoder.encode(configuration)) ?? Data(), as: UTF8.self))
        if let population { hasher.combine("|population=" + population.digest) }
        if let tag = matcher.modelTag { hasher.combine("|" + tag) }
        if let factors { hasher.combine("|factors=" + factors.digest) }
        return "m\(Self.algorithmVersion)-" + hasher.hexDigest
    }

    /// Creates an engine.
    ///
    /// - Parameters:
    ///   - matcher: The matcher over the catalog.
    ///   - configuration: Settings; must pass `EngineConfiguration.validate()` (a programmer
    ///     error otherwise: configurations read from data are validated when decoded).
    ///   - studentCacheBytes: The most bytes of resolved students (their per-item terms and
    ///     distances) kept for reuse across requests (`SwipeEngine.defaultStudentCacheBytes`
    ///     unless told); a student evicted is resolved again from the profile when next served.
    ///   - candidateIndexThreshold: From this many items on, the engine builds a
    ///     `CandidateIndex` (O(N log² N) once, a copy of the feature matrix in memory) and
    ///     decks that qualify (`SwipeSession.usesCandidateIndex`) retrieve their candidates
    ///     through it instead of scoring every item: the same decks, faster on large
    ///     catalogs. `SwipeEngine.defaultCandidateIndexThreshold` unless told; `Int.max`
    ///     keeps the full scan.
    /// - Complexity: O(N × d) (the catalog fingerprint).
    public init(matcher: M, configuration: EngineConfiguration = EngineConfiguration(),
                studentCacheBytes: Int = SwipeEngine.defaultStudentCacheBytes,
                candidateIndexThreshold: Int = SwipeEngine.defaultCandidateIndexThreshold) {
        do { try configuration.validate() } catch { preconditionFailure("Invalid EngineConfiguration: \(error.detail)") }
        precondition(studentCacheBytes >= 1, "studentCacheBytes must be at least 1")
        let index = matcher.catalog.count >= candidateIndexThreshold
            ? CandidateIndex(catalog: matcher.catalog, regions: RegionCodes(catalog: matcher.catalog, attribute: matcher.regionAttribute))
            : nil
        self.init(matcher: matcher, configuration: configuration, fingerprint: matcher.catalog.fingerprint, population: nil, factors: nil,
                  students: LRUCache(capacity: studentCacheBytes), candidateIndex: index)
    }

    /// 50,000 items: below it a deck's full scan takes well under a millisecond and the
    /// index would only cost memory (Benchmarks/Scale measures both paths).
    public static var defaultCandidateIndexThreshold: Int { 50_000 }

    /// Whether this engine has a candidate index (its catalog reached the threshold it was
    /// created with): for metrics and tests.
    public var hasCandidateIndex: Bool { candidateIndex != nil }

    /// 256 MiB: on the 2,294-school catalog (~27 KiB per student) about 9,700 students stay
    /// resolved; on a million items (the index path: the rows near home, ~60 KiB each in
    /// Benchmarks/Scale) about 4,000 — the students swiping right now.
    public static var defaultStudentCacheBytes: Int { 256 << 20 }

    private init(matcher: M, configuration: EngineConfiguration, fingerprint: String, population: PopulationPrior?,
                 factors: CollaborativeFactors?, students: LRUCache<ProfileKey<M.Profile>, CachedStudent<M.Student>>,
                 candidateIndex: CandidateIndex?) {
        self.students = students
        self.candidateIndex = candidateIndex
        self.factors = factors
        self.matcher = matcher
        self.configuration = configuration
        self.mixer = GeographicMixer(shares: configuration.bandShares)
        self.probes = ProbeScheduler(interval: configuration.probeInterval)
        self.regions = RegionCodes(catalog: matcher.catalog, attribute: matcher.regionAttribute)
        self.catalogFingerprint = fingerprint
        self.population = population
        self.itemOffsets = population.map { $0.itemEffects.map(Float.init) }
        self.exposureOffsets = population?.exposureEffects.map { $0.map(Float.init) }
        if let itemOffsets, let exposureOffsets {
            self.rankingOffsets = zip(itemOffsets, exposureOffsets).map { $0 + $1 }
        } else {
            self.rankingOffsets = itemOffsets
        }
        if let candidateIndex, let rankingOffsets {
            indexOffsets = candidateIndex.blocks.column(rankingOffsets)
        } else {
            indexOffsets = nil
        }
    }

    /// The same engine starting every student from what a population taught: the cold start
    /// shifted by `prior.weightShift`, and each item's raw score moved by its effect (and, in
    /// the ranking, by its exposure effect when the prior has one).
    ///
    /// - Parameter prior: A prior fitted on this catalog.
    /// - Returns: The engine.
    /// - Throws: `DataError` naming the field when the prior was fitted on another catalog
    ///   (fingerprint) or another model layout (feature count, term names, item count).
    /// - Complexity: O(N).
    public func withPopulation(_ prior: PopulationPrior) throws(DataError) -> SwipeEngine {
        func invalid(_ field: String, _ detail: String) -> DataError {
            DataError(.invalidValue, source: "population prior", field: field, detail: "\(field): \(detail)")
        }
        guard prior.catalogFingerprint == catalogFingerprint else {
            throw invalid("catalog_fingerprint", "fitted on another catalog (\(prior.catalogFingerprint.prefix(32))), this one is \(catalogFingerprint)")
        }
        guard prior.featureCount == matcher.catalog.dimension, prior.termNames == matcher.termNames else {
            throw invalid("feature_count", "fitted for \(prior.featureCount) features and terms \(prior.termNames), this engine has \(matcher.catalog.dimension) and \(matcher.termNames)")
        }
        guard prior.itemEffects.count == matcher.catalog.count else {
            throw invalid("item_effects", "has \(prior.itemEffects.count) effects, the catalog \(matcher.catalog.count) items")
        }
        // Decoding already ties the exposure effects' count to the item effects'; a prior built
        // in code is checked here.
        if let exposure = prior.exposureEffects, exposure.count != matcher.catalog.count {
            throw invalid("exposure_effects", "has \(exposure.count) effects, the catalog \(matcher.catalog.count) items")
        }
        return SwipeEngine(matcher: matcher, configuration: configuration, fingerprint: catalogFingerprint, population: prior, factors: factors, students: students, candidateIndex: candidateIndex)
    }

    /// The same engine with a collaborative model: every student also learns, swipe by swipe,
    /// where they stand among the population's item factors (`FactorPosterior`), and the
    /// ranking adds `γ × affinity` to each item's raw score. A student with no swipes ranks as
    /// before (their affinity is 0 everywhere), so the cold start is unchanged.
    ///
    /// - Parameter file: A factor model (`swiperank fit-factors`, or an external trainer's).
    /// - Returns: The engine.
    /// - Throws: `DataError` when the file does not fit this catalog (`CollaborativeFactors`).
    /// - Complexity: O(N × f²).
    public func withFactors(_ file: FactorModelFile) throws(DataError) -> SwipeEngine {
        let resolved = try CollaborativeFactors(file: file, catalog: matcher.catalog)
        return SwipeEngine(matcher: matcher, configuration: configuration, fingerprint: catalogFingerprint, population: population, factors: resolved, students: students, candidateIndex: candidateIndex)
    }

    /// The same engine without a collaborative model (an experiment's arm without it).
    public func withoutFactors() -> SwipeEngine {
        SwipeEngine(matcher: matcher, configuration: configuration, fingerprint: catalogFingerprint, population: population, factors: nil, students: students, candidateIndex: candidateIndex)
    }

    /// The same engine without a population prior: every student starts from the cold start.
    public func withoutPopulation() -> SwipeEngine {
        SwipeEngine(matcher: matcher, configuration: configuration, fingerprint: catalogFingerprint, population: nil, factors: factors, students: students, candidateIndex: candidateIndex)
    }

    /// A new student's collaborative posterior (nil without factors).
    public func coldStartFactors() -> FactorPosterior? { factors.map { FactorPosterior(dimension: $0.dimension) } }

    /// Learns a swipe into a student's collaborative posterior (nothing without factors).
    ///
    /// - Parameters:
    ///   - posterior: The posterior, updated.
    ///   - row: The swiped row.
    ///   - liked: The answer.
    /// - Complexity: O(f²).
    public func observeFactors(_ posterior: inout FactorPosterior?, row: Int, liked: Bool) {
        guard let factors, posterior != nil else { return }
        // The whitened factors are finite by construction, so the update cannot throw.
        try? posterior!.observe(factors.vector(row: row), liked: liked, confidence: factors.file.confidence,
                                dislikeConfidence: factors.file.dislikeConfidence)
    }

    /// What a snapshot must have been taken under to restore here: the configuration's digest,
    /// combined with the population prior's and the matcher's `modelTag` when there are any.
    /// A stored snapshot whose `configurationDigest` (or `catalogFingerprint`) differs needs
    /// `migrate(_:)`, not `restore(_:)`.
    public var learningDigest: String {
        // Unchanged for the default matcher without a prior, so stored snapshots stay valid.
        guard population != nil || matcher.modelTag != nil || factors != nil else { return configuration.digest }
        var hasher = FNV1a64()
        hasher.combine(configuration.digest + "|" + (population?.digest ?? ""))
        if let tag = matcher.modelTag { hasher.combine("|" + tag) }
        if let factors { hasher.combine("|factors=" + factors.digest) }
        return hasher.hexDigest
    }

    /// The population's effect of an item on its raw score (0 without a population prior): what
    /// `PreferenceModel.observe(_:liked:forgetting:weight:itemOffset:)` is told for that card.
    ///
    /// - Parameter row: A catalog row.
    /// - Returns: The effect, in raw-score units.
    /// - Complexity: O(1).
    @inline(__always)
    public func itemOffset(row: Int) -> Double { itemOffsets.map { Double($0[row]) } ?? 0 }

    /// The raw score a card's match score is computed from, given the item's ranking score from
    /// `rawScores(weights:student:into:)`: that score without the item's exposure effect (the
    /// same score when the prior has none). A match score says whether the student will like
    /// the card; how often people chose the item only orders the deck.
    ///
    /// - Parameters:
    ///   - raw: The item's ranking score.
    ///   - row: Its catalog row.
    /// - Returns: The score to calibrate.
    /// - Complexity: O(1).
    @inline(__always)
    public func matchRaw(_ raw: Float, row: Int) -> Float { exposureOffsets.map { raw - $0[row] } ?? raw }

    /// Every item's raw score for a student's weights: `Catalog.scores(weights:terms:into:)`
    /// plus the population's item effects and exposure effects, if any — what the engine ranks.
    ///
    /// - Parameters:
    ///   - weights: The student's weights.
    ///   - student: The resolved student.
    ///   - scores: Resized to N and overwritten.
    /// - Complexity: O(N × (d + k)).
    public func rawScores(weights: PreferenceWeights, student: M.Student, into scores: inout [Float]) {
        matcher.catalog.scores(weights: weights, terms: student.terms, into: &scores)
        if let rankingOffsets { for i in scores.indices { scores[i] += rankingOffsets[i] } }
    }

    /// One item's raw score as `rawScores(weights:student:into:)` computes it, bit for bit:
    /// the features in column order, then each term, then the ranking offset.
    ///
    /// - Parameters:
    ///   - row: A catalog row.
    ///   - weights: The student's weights.
    ///   - student: The resolved student.
    /// - Returns: The row's raw score.
    /// - Complexity: O(d + k).
    func rawScore(row: Int, weights: PreferenceWeights, student: M.Student) -> Float {
        let terms = student.terms
        return rawScore(row: row, weights: weights, termCount: terms.names.count) { terms.units(term: $0, item: row) }
    }

    /// `rawScore(row:weights:student:)` with the stored term values given: the candidate index
    /// derives a near row's one distance term from the distance it has just computed.
    @inline(__always)
    func rawScore(row: Int, weights: PreferenceWeights, termCount: Int, units: (Int) -> Int16) -> Float {
        rawScore(featureSum: matcher.catalog.featureRows.dot(row: row, weights.features), row: row, weights: weights,
                 termCount: termCount, units: units)
    }

    /// The raw scores of the grade scale's sampled rows (`CandidateIndex.gradeSampleRows`) as
    /// `rawScore(row:weights:student:)` computes each, bit for bit: the feature sums from the
    /// index's contiguous copy, the terms from the student's values at those rows
    /// (`CachedStudent.gradeSampleUnits`, cached with every student of an engine with an index).
    ///
    /// - Complexity: O(m × (d + k)) for m sampled rows.
    func gradeSampleRawScores(index: CandidateIndex, weights: PreferenceWeights, units: [Int16]) -> [Float] {
        let termCount = weights.terms.count
        precondition(units.count == index.gradeSampleRows.count * termCount, "gradeSampleRawScores: \(units.count) term values")
        var sums = index.gradeSampleSums(weights.features)
        for (i, row) in index.gradeSampleRows.enumerated() {
            sums[i] = rawScore(featureSum: sums[i], row: Int(row), weights: weights, termCount: termCount) { units[i &* termCount &+ $0] }
        }
        return sums
    }

    /// `rawScore(row:weights:termCount:units:)` from the row's feature sum
    /// (`FeatureRows.dot(row:_:)`, or its value from `FeatureRows.dots`): the terms, then the
    /// ranking offset, added to it.
    @inline(__always)
    func rawScore(featureSum: Float, row: Int, weights: PreferenceWeights, termCount: Int, units: (Int) -> Int16) -> Float {
        var s = featureSum
        for k in 0..<termCount where weights.terms[k] != 0 {
            // `RelativeTerms.addWeighted`'s operations: scale × the stored unit count, added.
            let scale: Float = weights.terms[k] / RelativeTerms.unit
            s += scale * Float(units(k))
        }
        if let rankingOffsets { s += rankingOffsets[row] }
        return s
    }

    /// The same engine with a changed configuration (an evaluation ablation, a tuned variant).
    ///
    /// - Parameter change: Edits the configuration.
    /// - Returns: An engine over the same matcher.
    public func reconfigured(_ change: (inout EngineConfiguration) -> Void) -> SwipeEngine {
        var configuration = self.configuration
        change(&configuration)
        do { try configuration.validate() } catch { preconditionFailure("Invalid EngineConfiguration: \(error.detail)") }
        return SwipeEngine(matcher: matcher, configuration: configuration, fingerprint: catalogFingerprint, population: population, factors: factors,
                           students: students, candidateIndex: candidateIndex)
    }

    /// Starts a session for a student.
    ///
    /// - Parameters:
    ///   - studentID: The student's id (kept in snapshots).
    ///   - profile: The profile.
    ///   - seed: Seeds the probe draws.
    /// - Returns: A session with the cold-start model and every item unseen.
    /// - Throws: `DataError` for an invalid profile or a student id longer than
    ///   `SwipeSession.maxIDLength` bytes.
    /// - Complexity: `resolvedStudent(_:)`'s, plus O(D²) for the model.
    @_specialize(where M == ItemMatcher)
    public func session(studentID: String, profile: M.Profile, seed: UInt64) throws(DataError) -> SwipeSession<M> {
        try SwipeSession(engine: self, studentID: studentID, profile: profile, seed: seed)
    }

    /// A profile resolved against the matcher (`Matcher.student(_:)`), from the engine's
    /// student cache when it was resolved recently: the per-item terms and distances a deck
    /// needs are computed once per active student, not once per request, and are not part of
    /// any session's state.
    ///
    /// - Parameter profile: The profile.
    /// - Returns: The resolved student.
    /// - Throws: `DataError` for an invalid profile (never cached).
    /// - Complexity: O(1) for a cached student; else, with a candidate index,
    ///   `Matcher.student(_:computingOnAccess:)` (O(1) for `ItemMatcher`) and the items near
    ///   home, without one `Matcher.student(_:)`'s O(N).
    public func resolvedStudent(_ profile: M.Profile) throws(DataError) -> M.Student {
        try resolvedStudent(ProfileKey(profile))
    }

    /// The bytes of resolved students the engine's cache holds now (at most the
    /// `studentCacheBytes` it was created with, except that the newest student always stays):
    /// the per-student memory that is not in any session, for metrics and benchmarks.
    public var cachedStudentBytes: Int { students.totalCost }

    func resolvedStudent(_ key: ProfileKey<M.Profile>) throws(DataError) -> M.Student {
        try resolved(key).student
    }

    /// The resolved student with what its indexed decks reuse (`CachedStudent`).
    ///
    /// - Complexity: O(1) for a cached student; else `Matcher.student(_:computingOnAccess:)`
    ///   (O(1) on the index path, O(N) otherwise) plus, with a candidate index and a home,
    ///   the items near home.
    func resolved(_ key: ProfileKey<M.Profile>) throws(DataError) -> CachedStudent<M.Student> {
        if let cached = students.get(key) { return cached }
        // Resolved outside the cache's lock: other students' requests go on meanwhile. Two
        // requests resolving the same profile at once compute the same value.
        // Computed on access where decks go through the index: they read few items.
        let student = try matcher.student(key.profile, computingOnAccess: candidateIndex != nil)
        var near: NearRows?
        if let candidateIndex, let shape = matcher.distanceTermShape(of: student), let home = shape.home {
            let far = CandidateIndex.farMiles(preferred: shape.preferredMiles, expansion: configuration.expansion)
            near = candidateIndex.nearRows(of: home, distances: student.distances, far: far)
        }
        // The terms at the grade scale's sampled rows: every indexed deck reads them, and on
        // this path each read computes its value.
        let gradeUnits = candidateIndex.map { index in
            let terms = student.terms, k = terms.names.count, rows = index.gradeSampleRows
            var units = [Int16](filling: 0, count: rows.count * k)
            for (i, row) in rows.enumerated() { for t in 0..<k { units[i * k + t] = terms.units(term: t, item: Int(row)) } }
            return units
        }
        var bands: (indices: [Int8], expansion: Double)?
        if candidateIndex == nil, configuration.geographicMixing, let preferred = student.preferredDistanceMiles {
            bands = (GeoBand.bandIndices(distances: student.distances.allValues, preferred: preferred, expansion: configuration.expansion),
                     configuration.expansion)
        }
        let cached = CachedStudent(student: student, near: near, gradeSampleUnits: gradeUnits, bands: bands)
        let bytes = student.byteCount + (near?.byteCount ?? 0) + (gradeUnits?.count ?? 0) * MemoryLayout<Int16>.stride + (bands?.indices.count ?? 0)
        students.put(key, cached, cost: bytes)
        return cached
    }

    /// A resolved student as the engine's student cache keeps it.
    struct CachedStudent<Student: Sendable>: Sendable {
        let student: Student
        /// The rows an indexed deck scores one by one, when the engine has a candidate index
        /// and the student a home: listed once per resolved student, not once per deck.
        let near: NearRows?
        /// With a candidate index: the student's terms at the grade scale's sampled rows,
        /// `CandidateIndex.gradeSampleRows` × terms, row-major.
        let gradeSampleUnits: [Int16]?
        /// Without a candidate index, for a student with a preferred distance under geographic
        /// mixing: every row's band index (`GeoBand.bandIndices`), which each deck's pools start
        /// from, and the expansion it was derived with (an engine reconfigured with another
        /// expansion shares this cache, and derives its own). Deriving it per deck was about a
        /// hundredth of a deck; a byte per row beside the student's distances.
        let bands: (indices: [Int8], expansion: Double)?
    }

    /// The prior of a new session: the cold-start weights (shifted by the population prior's
    /// weight shift, if any) with the configured precision.
    ///
    /// - Parameter student: The resolved student.
    /// - Returns: The model before any swipe.
    public func coldStartModel(for student: M.Student) -> PreferenceModel {
        // The bias, when learned, starts at 0: the cold start's calibration is the population's.
        var mean = matcher.coldStartWeights(for: student).combined
        if let population { for i in mean.indices { mean[i] += Float(population.weightShift[i]) } }
        return PreferenceModel(priorMean: mean + (configuration.studentBias ? [0] : []),
                               priorPrecision: configuration.priorPrecision, calibration: matcher.calibration)
    }

    /// The number of model weights, D = d + k, plus 1 with `EngineConfiguration.studentBias`.
    public var modelDimension: Int { matcher.catalog.dimension + matcher.termNames.count + (configuration.studentBias ? 1 : 0) }

    /// What the preference model sees of an item: `combinedVector(row:student:)`, followed by a
    /// constant 1 (the bias's input) with `EngineConfiguration.studentBias`.
    ///
    /// - Parameters:
    ///   - row: A catalog row.
    ///   - student: The resolved student.
    /// - Returns: `modelDimension` values.
    /// - Complexity: O(D).
    public func learningVector(row: Int, student: M.Student) -> [Double] {
        var z = combinedVector(row: row, student: student)
        if configuration.studentBias { z.append(1) }
        return z
    }

    /// The combined vector `[features, terms]` of an item for a student, in Double: what the
    /// preference model's weights multiply.
    ///
    /// - Parameters:
    ///   - row: A catalog row.
    ///   - student: The resolved student.
    /// - Returns: D = d + k values.
    /// - Complexity: O(D).
    @_specialize(where M == ItemMatcher)
    public func combinedVector(row: Int, student: M.Student) -> [Double] {
        let catalog = matcher.catalog
        precondition(row >= 0 && row < catalog.count, "combinedVector: row \(row) is not in the catalog")
        let terms = student.terms  // once: a generic getter, unspecialized outside this module
        var z = [Double](filling: 0, count: catalog.dimension + terms.names.count)
        let features = catalog.featureRows
        for j in 0..<catalog.dimension { z[j] = Double(features[row, j]) }
        for k in 0..<terms.names.count { z[catalog.dimension + k] = Double(terms[term: k, item: row]) }
        return z
    }

    /// The learning vectors of `rows` one after another (`modelDimension` values each): what a
    /// deck's probe candidates need, written into one buffer.
    ///
    /// - Complexity: O(rows.count × D).
    func learningVectors(rows: [Int], student: M.Student) -> [Double] {
        let catalog = matcher.catalog
        // The student's terms and the bias flag read once: through a generic getter and a
        // generic struct's field, both unspecialized when the matcher lives in another module.
        let terms = student.terms, studentBias = configuration.studentBias
        let d = catalog.dimension, k = terms.names.count, dimension = modelDimension
        var vectors = catalog.featureRows.rowsAsDouble(rows, stride: dimension)
        for (i, row) in rows.enumerated() {
            let base = i * dimension + d
            terms.write(item: row, into: &vectors, at: base)
            if studentBias { vectors[base + k] = 1 }
        }
        return vectors
    }
}

/// The region of each catalog row as a small integer code, for the discovery novelty bonus.
struct RegionCodes: Sendable {
    /// Region names, sorted.
    let names: [String]
    /// Per row, its region's index in `names`; empty when the matcher names no region attribute.
    let codeOfRow: [Int32]

    init(catalog: Catalog, attribute: String?) {
        guard let attribute, let a = catalog.textAttribute(named: attribute) else {
            names = []
            codeOfRow = []
            return
        }
        let values = catalog.textValues[a]
        let names = Array(Set(values)).sorted()
        let code = Dictionary(uniqueKeysWithValues: names.enumerated().map { ($1, Int32($0)) })
        self.names = names
        codeOfRow = values.map { code[$0] ?? 0 }
    }

    func code(row: Int) -> Int? { codeOfRow.isEmpty ? nil : Int(codeOfRow[row]) }
}
