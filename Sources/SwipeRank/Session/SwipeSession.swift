import Foundation
import SwipeRankNumerics

/// One card as served to the student.
public struct ServedCard: Sendable, Hashable, Codable {
    /// The card's 1-based position in the student's sequence.
    public let position: Int
    /// The catalog row.
    public let row: Int
    /// The item id.
    public let cardID: String
    /// The band it was served from (nil for students without a home).
    public let band: GeoBand?
    /// Whether it was a probe.
    public let isProbe: Bool
    /// The probability with which it was chosen: the probe draw's probability, 1 for a
    /// deterministic (top-of-band) card.
    public let propensity: Double
    /// The match score predicted when served.
    public let predictedMatch: Double
    /// The swipe on it, once recorded.
    public internal(set) var action: SwipeAction?

    enum CodingKeys: String, CodingKey {
        case position, row, cardID = "card_id", band, isProbe = "is_probe", propensity
        case predictedMatch = "predicted_match", action
    }
}

// The public entry points carry `@_specialize` for the two matchers this package ships: a
// generic session called from another module otherwise runs unspecialized, copying the matcher
// through value witnesses and reading fields through metadata (18% more instructions per
// batch of cards here).

/// A student's learning session: the cards served, the swipes, the preference model and the
/// unseen cards in one pool per geographic band.
///
/// A value type: each student's session is owned by whoever serves that student (one task, an
/// actor, a database row via `snapshot()`), while the `SwipeEngine` it points to is shared.
///
/// - Cards: `recommendations(count:)` serves the next batch: slots planned 50/30/20 across
///   bands (`GeographicMixer`), every 4th position a probe (`ProbeScheduler`), other slots the
///   top of their band's pool. A band that runs out is backfilled from the next one (nearby →
///   slightly beyond → discovery → nearby). Without a home location there is one pool and no
///   mixing. Served cards go into the pools' history and are never served again.
/// - Learning: `recordSwipe(_:)` updates the model; the pools are re-scored in bulk at the
///   next batch (one `sgemv` and an O(n) heapify per pool).
/// - Idempotency: a swipe id seen before changes nothing (`.duplicate`). A swipe for an
///   unknown card, a card never served, or a card already swiped is rejected with a
///   `SwipeError` and changes nothing.
/// - Offline replay: `sync(_:)` applies swipes sorted by (timestamp, swipe id), so any arrival
///   order gives exactly the state of recording them one by one in that order. Order matters
///   to learning (each Laplace step starts from the current posterior, and the stable phase
///   decays older evidence), so that sorted order is the rule. A swipe that arrives after
///   newer ones were applied is applied then, not re-inserted into the past.
public struct SwipeSession<M: Matcher>: Sendable {
    /// The shared engine.
    public let engine: SwipeEngine<M>
    /// The student's id.
    public let studentID: String
    /// The resolved student.
    public let student: M.Student
    /// The preference model.
    public private(set) var model: PreferenceModel
    /// Every card served, in order.
    public internal(set) var served: [ServedCard] = []
    /// Swipes recorded so far.
    public internal(set) var totalSwipes = 0

    var pools: [CardPool<Int, Float>]
    var bandOfRow: [GeoBand?]
    var servedIndexByRow: [Int: Int] = [:]
    var swipes: [String: Swipe] = [:]
    var bandServed = [0, 0, 0]
    /// Region code per row and whether each region has been shown (the snapshot stores the
    /// shown names): the discovery bonus is looked up per row at every re-score, so no strings
    /// there.
    var regionOfRow: [Int] = []
    var regionShown: [Bool] = []
    var regionNames: [String] = []
    var lastFeedbackSwipe: Int?
    var pendingFeedback: [Int: [FeedbackOption]] = [:]
    var rng: SplitMix64
    var modelVersion: Int64 = 0
    var poolsVersion: Int64 = 0
    var workspace = ScoringWorkspace()
    var selector = TopKSelector()

    init(engine: SwipeEngine<M>, studentID: String, profile: M.Profile, seed: UInt64) throws(DataError) {
        let student = try engine.matcher.student(profile)
        let coldStart = engine.matcher.coldStartWeights(for: student)
        self.init(engine: engine, studentID: studentID, student: student,
                  model: PreferenceModel(priorMean: coldStart.combined, priorPrecision: engine.configuration.priorPrecision,
                                         calibration: engine.matcher.calibration),
                  rng: SplitMix64(seed: seed))
        var scores: [Float] = []
        engine.matcher.catalog.scores(weights: coldStart, terms: student.terms, into: &scores)
        for (row, band) in bandOfRow.enumerated() {
            // Scores come from finite features and weights, so insertion cannot fail.
            try! pools[poolIndex(band)].insert(row, score: poolScore(row: row, raw: scores[row]), timestamp: 0)
        }
    }

    init(engine: SwipeEngine<M>, studentID: String, student: M.Student, model: PreferenceModel, rng: SplitMix64) {
        self.engine = engine
        self.studentID = studentID
        self.student = student
        self.model = model
        self.rng = rng
        let catalog = engine.matcher.catalog
        let n = catalog.count
        if let attribute = engine.matcher.regionAttribute, let a = catalog.textAttribute(named: attribute) {
            let regions = catalog.textValues[a]
            regionNames = Array(Set(regions)).sorted()
            let code = Dictionary(uniqueKeysWithValues: regionNames.enumerated().map { ($1, $0) })
            regionOfRow = regions.map { code[$0]! }
            regionShown = [Bool](repeating: false, count: regionNames.count)
        }
        if let preferred = student.preferredDistanceMiles, engine.configuration.geographicMixing {
            let bands = (0..<n).map {
                GeoBand.band(distance: student.distances[$0], preferred: preferred, expansion: engine.configuration.expansion)
            }
            bandOfRow = bands
            pools = GeoBand.allCases.map { band in CardPool(capacity: bands.filter { $0 == band }.count) }
        } else {
            bandOfRow = [GeoBand?](repeating: nil, count: n)
            pools = [CardPool(capacity: n)]
        }
    }

    func poolIndex(_ band: GeoBand?) -> Int { band.map { GeoBand.allCases.firstIndex(of: $0)! } ?? 0 }


    mutating func markShown(row: Int) {
        if !regionOfRow.isEmpty { regionShown[regionOfRow[row]] = true }
    }

    /// The pool's ordering score: the raw score, plus a novelty bonus for discovery cards from
    /// regions not shown yet (only when the matcher names a region attribute).
    func poolScore(row: Int, raw: Float) -> Float {
        guard bandOfRow[row] == .discovery, !regionOfRow.isEmpty, !regionShown[regionOfRow[row]] else { return raw }
        return raw + engine.configuration.discoveryNoveltyBonus
    }

    /// The current weights (the posterior mean).
    public var weights: PreferenceWeights { model.weights(featureCount: engine.matcher.catalog.dimension) }

    /// The learning state: phase, progress and named weights.
    public var learningState: LearningState {
        LearningState(totalSwipes: totalSwipes, preferenceWeights: engine.matcher.namedWeights(weights))
    }

    /// The phase now.
    public var phase: LearningPhase { LearningPhase(totalSwipes: totalSwipes) }

    /// The combined vector `[features, relative terms]` of a catalog row for this student: what
    /// the model's weights multiply.
    ///
    /// - Parameter row: A catalog row.
    /// - Returns: D = d + k values.
    @_specialize(where M == SchoolMatcher)
    @_specialize(where M == ItemMatcher)
    public func combinedVector(row: Int) -> [Double] { engine.combinedVector(row: row, student: student) }

    /// Cards served per band (nearby, slightly beyond, discovery).
    public var servedPerBand: [Int] { bandServed }

    // MARK: Serving

    /// Serves the next `count` cards.
    ///
    /// - Parameter count: Cards wanted, ≥ 0; fewer come back when the catalog runs out.
    /// - Returns: The cards with the learning state and swipe count.
    /// - Complexity: O(N × D) to re-score after new swipes, O(count × log N) to serve, plus
    ///   O(N log w + w·D²) per probe (w candidates).
    @_specialize(where M == SchoolMatcher)
    @_specialize(where M == ItemMatcher)
    public mutating func recommendations(count: Int) -> RecommendationResponse {
        precondition(count >= 0, "recommendations(count:) needs count ≥ 0")
        rescoreIfNeeded()
        let weights = self.weights
        let catalog = engine.matcher.catalog
        let plan: [GeoBand?] = pools.count == 1
            ? [GeoBand?](repeating: nil, count: count) : engine.mixer.plan(count: count, served: bandServed)
        var cards: [Recommendation] = []
        for planned in plan {
            let position = served.count + 1
            // Backfill: the planned band, else the next ones in cyclic order.
            let start = poolIndex(planned)
            guard let p = (0..<pools.count).map({ (start + $0) % pools.count }).first(where: { !pools[$0].isEmpty }) else { break }
            let band: GeoBand? = planned == nil ? nil : GeoBand.allCases[p]
            var row: Int, propensity = 1.0
            let isProbe = engine.probes.isProbe(position: position)
            if isProbe {
                (row, propensity) = drawProbe(pool: p)
                pools[p].promote(row)
            } else {
                row = pools[p].removeMax().id
            }
            let raw = workspace.scores[row]
            let card = engine.matcher.card(row: row, raw: raw, student: student, weights: weights, isProbe: isProbe)
            served.append(ServedCard(position: position, row: row, cardID: catalog.ids[row], band: band, isProbe: isProbe,
                                     propensity: propensity, predictedMatch: card.matchScore, action: nil))
            servedIndexByRow[row] = served.count - 1
            if band != nil { bandServed[p] += 1 }
            markShown(row: row)
            cards.append(card)
        }
        return RecommendationResponse(recommendations: cards, learningState: learningState, totalSwipes: totalSwipes)
    }

    /// Re-scores every unseen card after the model changed: one sgemv over the catalog, then an
    /// O(n) bulk update per pool stamped with the model version.
    mutating func rescoreIfNeeded() {
        if workspace.scores.isEmpty || poolsVersion != modelVersion {
            engine.matcher.catalog.scores(weights: weights, terms: student.terms, into: &workspace.scores)
        }
        guard poolsVersion != modelVersion else { return }
        var scores = workspace.scores
        for row in scores.indices { scores[row] = poolScore(row: row, raw: scores[row]) }
        let version = modelVersion
        for p in pools.indices {
            // Move the pool out so the bulk update mutates it in place (no copy of its buffers).
            var pool = pools[p]
            pools[p] = CardPool()
            try! pool.rescoreAll(timestamp: version) { row in scores[row] }
            pools[p] = pool
        }
        poolsVersion = version
    }

    /// Picks the probe of pool `p`: the `window` unseen cards closest to the decision boundary
    /// (match 0.5), one drawn ∝ exp(variance / T).
    mutating func drawProbe(pool p: Int) -> (row: Int, propensity: Double) {
        let (window, temperature) = engine.probes.exploration(for: phase)
        let boundary = Float(engine.matcher.calibration.offset)
        let rows = pools[p].unseenIDs
        var closeness = [Float](repeating: 0, count: rows.count)
        workspace.scores.withUnsafeBufferPointer { scores in
            for (i, row) in rows.enumerated() { closeness[i] = -abs(scores[row] - boundary) }
        }
        var picked: [Int] = []
        selector.select(k: window, from: closeness, into: &picked)
        let candidates = picked.map { rows[$0] }
        // A plain loop: a closure here copied the student (all its arrays) once per candidate.
        var vectors: [[Double]] = []
        vectors.reserveCapacity(candidates.count)
        for row in candidates { vectors.append(engine.combinedVector(row: row, student: student)) }
        let variances = model.variances(along: vectors)
        let (index, propensity) = ProbeScheduler.draw(uncertainties: variances, temperature: temperature, using: &rng)
        return (candidates[index], propensity)
    }

    // MARK: Swipes

    /// Records a swipe and learns from it.
    ///
    /// - Parameter swipe: The swipe.
    /// - Returns: Recorded or duplicate, the learning state, and maybe a feedback prompt (after
    ///   a probe, or after a pattern break; never twice within the phase's cooldown).
    /// - Throws: `SwipeError` `.unknownCard`, `.notServed`, `.alreadySwiped` or `.numerical`;
    ///   the session is unchanged.
    /// - Complexity: O(D²) before the stable phase, O(D³) in it (D = d + k). Re-scoring the
    ///   unseen cards is left to the next `recommendations(count:)`.
    @_specialize(where M == SchoolMatcher)
    @_specialize(where M == ItemMatcher)
    public mutating func recordSwipe(_ swipe: Swipe) throws(SwipeError) -> SwipeResult {
        if swipes[swipe.swipeID] != nil {
            return SwipeResult(outcome: .duplicate, learningState: learningState, totalSwipes: totalSwipes, feedback: nil)
        }
        guard let row = engine.matcher.catalog.row(of: swipe.cardID) else {
            throw SwipeError(.unknownCard, "swipe \(swipe.swipeID): no card \"\(swipe.cardID)\" in the catalog")
        }
        guard let index = servedIndexByRow[row] else {
            throw SwipeError(.notServed, "swipe \(swipe.swipeID): card \"\(swipe.cardID)\" was never served to student \(studentID)")
        }
        guard served[index].action == nil else {
            throw SwipeError(.alreadySwiped, "swipe \(swipe.swipeID): card \"\(swipe.cardID)\" was already swiped")
        }
        let z = engine.combinedVector(row: row, student: student)
        let predicted = model.likeProbability(z)
        let phaseAfter = LearningPhase(totalSwipes: totalSwipes + 1)
        do {
            try model.observe(z, liked: swipe.action == .like,
                              forgetting: phaseAfter == .stable ? engine.configuration.stableForgetting : 1)
        } catch {
            throw SwipeError(.numerical, "swipe \(swipe.swipeID): \(error.description)")
        }
        swipes[swipe.swipeID] = swipe
        served[index].action = swipe.action
        totalSwipes += 1
        modelVersion += 1
        let prompt = feedbackPrompt(row: row, card: served[index], action: swipe.action, predicted: predicted)
        if let prompt {
            lastFeedbackSwipe = totalSwipes
            pendingFeedback[row] = prompt.options
        }
        return SwipeResult(outcome: .recorded, learningState: learningState, totalSwipes: totalSwipes, feedback: prompt)
    }

    func feedbackPrompt(row: Int, card: ServedCard, action: SwipeAction, predicted: Double) -> FeedbackPrompt? {
        let confidence = engine.configuration.patternBreakConfidence
        let patternBreak = (action == .dislike && predicted >= confidence) || (action == .like && predicted <= 1 - confidence)
        guard card.isProbe || patternBreak else { return nil }
        let cooldown = engine.configuration.feedbackCooldown[phase] ?? 0
        if let last = lastFeedbackSwipe, totalSwipes - last < cooldown { return nil }
        let options = engine.matcher.feedbackOptions(row: row, action: action, student: student)
        guard !options.isEmpty else { return nil }
        return FeedbackPrompt(cardID: card.cardID, reason: card.isProbe ? .probe : .patternBreak, options: options)
    }

    /// Applies the student's answer to a feedback prompt.
    ///
    /// - Parameters:
    ///   - cardID: The card the prompt was about.
    ///   - options: The chosen options (a subset of those offered; may be empty to dismiss).
    /// - Throws: `SwipeError` `.invalidFeedback` when no prompt is open for the card or an
    ///   option was not offered; nothing changes.
    /// - Complexity: O(D²).
    @_specialize(where M == SchoolMatcher)
    @_specialize(where M == ItemMatcher)
    public mutating func submitFeedback(cardID: String, options: [FeedbackOption]) throws(SwipeError) {
        guard let row = engine.matcher.catalog.row(of: cardID), let offered = pendingFeedback[row] else {
            throw SwipeError(.invalidFeedback, "no feedback question is open for card \"\(cardID)\"")
        }
        if let wrong = options.first(where: { !offered.contains($0) }) {
            throw SwipeError(.invalidFeedback, "\"\(wrong.rawValue)\" was not offered for card \"\(cardID)\"")
        }
        pendingFeedback[row] = nil
        guard !options.isEmpty else { return }
        var delta = [Double](repeating: 0, count: model.dimension)
        for option in options {
            for (i, v) in engine.adjustment(for: option, row: row).enumerated() { delta[i] += v }
        }
        model.shiftPrior(by: delta)
        modelVersion += 1
    }

    /// Applies a batch of swipes recorded offline, in (timestamp, swipe id) order.
    ///
    /// - Parameter swipes: The swipes, in any order.
    /// - Returns: One result per swipe, in the order given: the swipe's result, or the error
    ///   that rejected it.
    @_specialize(where M == SchoolMatcher)
    @_specialize(where M == ItemMatcher)
    public mutating func sync(_ swipes: [Swipe]) -> [Result<SwipeResult, SwipeError>] {
        let order = swipes.indices.sorted {
            (swipes[$0].timestamp, swipes[$0].swipeID) < (swipes[$1].timestamp, swipes[$1].swipeID)
        }
        var results = [Result<SwipeResult, SwipeError>?](repeating: nil, count: swipes.count)
        for i in order {
            do { results[i] = .success(try recordSwipe(swipes[i])) } catch { results[i] = .failure(error) }
        }
        return results.map { $0! }
    }
}
