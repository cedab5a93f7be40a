import Foundation
import SwipeRankNumerics

/// One card as served to the student.
public struct ServedCard: Sendable, Hashable, Codable {
    /// The card's 1-based position in the student's sequence (set within the module only
    /// when a deck is put in order: the positions stay with the slots).
    public internal(set) var position: Int
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

// The public entry points carry `@_specialize` for `ItemMatcher`, the matcher this module ships.
// A matcher from another module (`SchoolMatcher` in SwipeRankColleges) runs this code
// unspecialized: per-item loops therefore read arrays and locals, never a generic property per
// row, and the school deck costs 3% more instructions than when it was specialized here
// (Benchmarks/results/profile.txt).

/// A student's learning session: the cards served, the swipes and the preference model.
///
/// A value type: each student's session is owned by whoever serves that student (one task, an
/// actor, a database row via `snapshot()`), while the `SwipeEngine` it points to is shared.
///
/// - Cards: `recommendations(count:)` serves the next batch: slots planned 50/30/20 across
///   bands (`GeographicMixer`), every 4th position a probe (`ProbeScheduler`), other slots the
///   best unseen card of their band. A band that runs out is backfilled from the next one
///   (nearby → slightly beyond → discovery → nearby). Without a home location there is one
///   band and no mixing. Served cards are never served again.
/// - The unseen cards of a band are a max-priority pool by score (ties to the lower catalog
///   row): each batch scores the catalog once with the current weights and selects each band's
///   best in O(N) (`TopKSelector`), the same order a re-scored `CardPool` would give, without
///   keeping N heap entries per student in memory (the `SessionBenchmarks` suite measures
///   what a live session holds).
/// - Learning: `recordSwipe(_:)` updates the model in O(D²) (O(D³) in the stable phase).
/// - Idempotency: a swipe id seen before changes nothing (`.duplicate`). A swipe for an
///   unknown card, a card never served, or a card already swiped is rejected with a
///   `SwipeError` and changes nothing.
/// - Offline replay: `sync(_:)` applies swipes sorted by (timestamp, swipe id), so any arrival
///   order gives exactly the state of recording them one by one in that order. Order matters
///   to learning (each Laplace step starts from the current posterior, and the stable phase
///   decays older evidence), so that sorted order is the rule. A swipe that arrives after
///   newer ones were applied is applied then, not re-inserted into the past.
/// - State: O(swipes + D²) per student, whatever the catalog's size: the session keeps its
///   profile, the served cards, swipes and the model. The resolved student's per-item arrays
///   (terms, distances) live in the engine's bounded student cache
///   (`SwipeEngine.resolvedStudent(_:)`), and a deck derives each band's unseen cards from
///   them and the served and judged rows. The snapshot is the served cards and the ordered log
///   of swipes and feedback answers, which a restore replays (see `SessionSnapshot`).
public struct SwipeSession<M: Matcher>: Sendable {
    /// The shared engine.
    public let engine: SwipeEngine<M>
    /// The student's id.
    public let studentID: String
    /// The profile, with its hash: the key of the resolved student in the engine's cache.
    let profileKey: ProfileKey<M.Profile>
    /// The preferred maximum distance when the student has a home (bands are drawn around it).
    let preferredDistanceMiles: Double?
    /// The preference model.
    public internal(set) var model: PreferenceModel
    /// Where the student stands among the population's item factors (`SwipeEngine.withFactors(_:)`;
    /// nil without factors): learned from the same swipes, rebuilt by a restore's replay.
    public internal(set) var collaborative: FactorPosterior?
    /// Every card served, in order.
    public internal(set) var served: [ServedCard] = []
    /// Swipes recorded so far.
    public internal(set) var totalSwipes = 0

    var servedIndexByRow: [Int: Int] = [:]
    /// Rows judged outside the deck (`recordJudgement`) and never served: they are not served
    /// later either.
    var judgedRows: Set<Int> = []
    /// Served rows judged outside a swipe (saved from a detail page): played, so not open
    /// (`openCards(limit:)`), though their served card has no action.
    var judgedServedRows: Set<Int> = []
    var swipes: [String: Swipe] = [:]
    /// The catalog rows of the liked swipes (served or judged), kept as they are recorded: the
    /// collaborative reason reads them every deck, and walking `swipes` for them hashed every
    /// card id each time.
    var likedRows: Set<Int> = []
    var bandServed = [0, 0, 0]
    /// Whether each of the engine's regions has been shown (discovery novelty bonus).
    var regionShown: [Bool]
    var lastFeedbackSwipe: Int?
    var pendingFeedback: [Int: [FeedbackOption]] = [:]
    var rng: SplitMix64
    /// The model-changing events since `checkpoint` (or since the cold start), in order: what a
    /// snapshot stores and a restore replays.
    var events: [SessionEvent] = []
    /// The state a session restored from a version-1 snapshot started from (nil otherwise).
    var checkpoint: SessionCheckpoint?

    init(engine: SwipeEngine<M>, studentID: String, profile: M.Profile, seed: UInt64) throws(DataError) {
        guard studentID.utf8.count <= SwipeSession.maxIDLength else {
            throw DataError(.outOfRange, source: "session", field: "student_id",
                            detail: "student_id: at most \(SwipeSession.maxIDLength) bytes, got \(studentID.utf8.count)")
        }
        let student = try engine.resolvedStudent(profile)
        self.init(engine: engine, studentID: studentID, student: student, model: engine.coldStartModel(for: student),
                  rng: SplitMix64(seed: seed))
    }

    init(engine: SwipeEngine<M>, studentID: String, student: M.Student, model: PreferenceModel, rng: SplitMix64) {
        self.engine = engine
        self.studentID = studentID
        self.profileKey = ProfileKey(student.profile)
        self.preferredDistanceMiles = student.preferredDistanceMiles
        self.model = model
        self.collaborative = engine.coldStartFactors()
        self.rng = rng
        regionShown = [Bool](repeating: false, count: engine.regions.names.count)
    }

    /// The resolved student: the profile's terms and distances over every item, from the
    /// engine's student cache (resolved again from the profile after an eviction), so that
    /// the session itself holds none of them.
    public var student: M.Student {
        do { return try engine.resolvedStudent(profileKey) } catch {
            // The same profile against the same matcher resolved when the session started.
            preconditionFailure("a profile that resolved when the session started no longer resolves: \(error.detail)")
        }
    }

    /// The profile the session was started with.
    public var profile: M.Profile { profileKey.profile }

    /// Whether cards are mixed across geographic bands (the student has a home and mixing is on).
    var isBanded: Bool { preferredDistanceMiles != nil && engine.configuration.geographicMixing }

    /// The pool (band index 0…2, or 0 when not banded) of a catalog row.
    func poolIndex(row: Int) -> Int { poolIndex(row: row, distances: isBanded ? student.distances : .none) }

    /// `poolIndex(row:)` with the student's distances at hand (empty when not banded).
    func poolIndex(row: Int, distances: StudentDistances) -> Int {
        guard preferredDistanceMiles != nil, engine.configuration.geographicMixing else { return 0 }
        return poolIndex(distance: distances[row])
    }

    /// `poolIndex(row:)` of a row at `distance` miles (read once by the caller: on a large
    /// catalog each read computes it).
    func poolIndex(distance: Float) -> Int {
        guard let preferred = preferredDistanceMiles, engine.configuration.geographicMixing else { return 0 }
        return GeoBand.band(distance: distance, preferred: preferred, expansion: engine.configuration.expansion).index
    }

    /// Whether a row may still be served: neither served nor judged outside the deck.
    func isUnseen(row: Int) -> Bool { servedIndexByRow[row] == nil && !judgedRows.contains(row) }

    /// The current weights (the posterior mean).
    public var weights: PreferenceWeights {
        model.weights(featureCount: engine.matcher.catalog.dimension, termCount: engine.matcher.termNames.count)
    }

    /// Every item's ranking score for this student: the engine's raw scores
    /// (`SwipeEngine.rawScores(weights:student:into:)`) plus γ × the collaborative affinity when
    /// the engine has factors — what a deck is chosen by.
    ///
    /// - Parameter scores: Resized to N and overwritten.
    /// - Complexity: O(N × (D + f)).
    public func rankingScores(into scores: inout [Float]) {
        engine.rawScores(weights: weights, student: student, into: &scores)
        if let factors = engine.factors, let collaborative { factors.addScores(of: collaborative, to: &scores) }
    }

    /// The collaborative term of every item's ranking score (γ × affinity), or nil when there is
    /// none yet (no factors, or no swipe): a ranking term, like exposure, that the match score
    /// shown leaves out.
    var collaborativeTerms: [Float]? {
        guard let factors = engine.factors, let collaborative else { return nil }
        return factors.terms(of: collaborative)
    }

    /// The learned bias (`EngineConfiguration.studentBias`): how much this student likes cards
    /// in general, in raw-score units; nil when the engine learns none.
    public var bias: Double? { engine.configuration.studentBias ? model.mean.last : nil }

    /// The learning state: phase, progress and named weights.
    public var learningState: LearningState { learningState(weights: weights) }

    /// The learning state with `weights` as the current weights (a deck has them at hand).
    func learningState(weights: PreferenceWeights) -> LearningState {
        LearningState(totalSwipes: totalSwipes, weightList: engine.matcher.namedWeightList(weights))
    }

    /// The phase now.
    public var phase: LearningPhase { LearningPhase(totalSwipes: totalSwipes) }

    /// The combined vector `[features, relative terms]` of a catalog row for this student: what
    /// the model's weights multiply.
    ///
    /// - Parameter row: A catalog row.
    /// - Returns: D = d + k values.
    @_specialize(where M == ItemMatcher)
    public func combinedVector(row: Int) -> [Double] { engine.combinedVector(row: row, student: student) }

    /// Cards served per band (nearby, slightly beyond, discovery).
    public var servedPerBand: [Int] { bandServed }

    // MARK: Serving

    /// Serves the next `count` cards.
    ///
    /// - Parameter count: Cards wanted; clamped to 0…(unseen cards), so fewer come back when
    ///   the catalog runs out.
    /// - Returns: The cards with the learning state and swipe count.
    /// - Complexity: O(N × D) to score the catalog, O(N + count × log N) to select, plus
    ///   O(N + w·D²) per probe (w candidates).
    @_specialize(where M == ItemMatcher)
    public mutating func recommendations(count: Int) -> RecommendationResponse {
        guard max(0, min(count, unseenCount)) > 0 else {
            return RecommendationResponse(recommendations: [], learningState: learningState, totalSwipes: totalSwipes)
        }
        let dealt = deal(count: count, scores: deckScores(), detail: .explained)
        return RecommendationResponse(recommendations: dealt.cards, learningState: dealt.learningState, totalSwipes: totalSwipes)
    }

    /// The scores one deck is built from: a single pass over the catalog, shared by the open
    /// cards a deck repeats (`openCards`) and the cards it deals.
    struct DeckScores {
        let weights: PreferenceWeights
        /// The resolved student the scores are for (the deck reads it from here: a second
        /// lookup in the engine's student cache took its lock again).
        let student: M.Student
        /// The rows near home the index path scores one by one, from the student cache.
        var near: NearRows? = nil
        /// The student's terms at the grade scale's sampled rows, from the student cache (the
        /// index path).
        var gradeSampleUnits: [Int16]? = nil
        /// Every row's band index and the expansion it was derived with, from the student cache
        /// (`SwipeEngine.CachedStudent.bands`).
        var bands: (indices: [Int8], expansion: Double)? = nil
        /// Every row's raw score (the full scan); empty when `indexed`.
        let raw: [Float]
        let terms: [Float]?
        let reasons: CollaborativeReasons?
        /// Whether the deck retrieves its candidates through the engine's candidate index
        /// (`usesCandidateIndex(student:)`): nothing is scored up front, and each row a deck
        /// touches is scored on its own (`rawScore(row:engine:student:)`), bit for bit as the scan.
        var indexed = false

        /// The raw score of one row: the scan's, or computed now on the index path.
        func rawScore(row: Int, engine: SwipeEngine<M>, student: M.Student) -> Float {
            indexed ? engine.rawScore(row: row, weights: weights, student: student) : raw[row]
        }

        /// The deck's grade scale (`GradeScale`): the sampled rows' match scores read from these
        /// scores (computed one by one on the index path, bit for bit the scan's), so both paths
        /// grade alike and the scan path scores nothing twice.
        func gradeScale(engine: SwipeEngine<M>) -> GradeScale {
            // The scan path reads its arrays, with no generic call per sampled row: the service
            // runs the engine unspecialized, and such a call looked up type metadata 1,024 times
            // a deck — a seventh of the server's CPU under load.
            guard indexed else { return engine.matcher.gradeScale(raw: raw, matchOffsets: engine.exposureOffsets) }
            let calibration = engine.matcher.calibration
            guard let index = engine.candidateIndex, let gradeSampleUnits else {
                preconditionFailure("an indexed deck without the engine's candidate index or the student's cached terms")
            }
            let raws = engine.gradeSampleRawScores(index: index, weights: weights, units: gradeSampleUnits)
            return GradeScale(sample: zip(index.gradeSampleRows, raws).map { row, raw in Double(engine.matchRaw(raw, row: Int(row))) }) {
                calibration.cardMatchScore(raw: $0)
            }
        }
    }

    /// Whether this student's decks retrieve candidates through the engine's `CandidateIndex`
    /// (the same decks as the full scan, without scoring every item): the engine has one, probes
    /// come from the best cards (`ProbeCandidates.plausiblyGood`; boundary probes need every
    /// unseen card's score), the matcher's terms are the distance term alone
    /// (`Matcher.distanceTermShape(of:)`), and no collaborative term ranks the cards yet (it is
    /// a per-student score over every item, and its reasons compare with the mean raw score).
    func usesCandidateIndex(student: M.Student) -> Bool {
        guard engine.candidateIndex != nil, engine.configuration.probeCandidates == .plausiblyGood,
              student.terms.names.count == 1, engine.matcher.distanceTermShape(of: student) != nil else { return false }
        if let factors = engine.factors, let collaborative, collaborative.hasEvidence, factors.file.weight > 0 { return false }
        return true
    }

    /// Puts the deck just dealt (`served[first...]`, and `cards` or `briefs`, whichever the deck
    /// built) best first: the non-probe cards sorted by their ranking score (ties: the band
    /// plan's order) into the non-probe positions; probes, and every position, stay where the
    /// schedule put them.
    mutating func orderBestFirst(from first: Int, cards: inout [Recommendation], briefs: inout [BriefCard],
                                 candidates: inout [[String]?], candidateKeys: inout CandidateKeys, keys: [Float]) {
        // The log read once, through its buffer (a copy would be copied again on the writes
        // below): in this generic code each read of the session's field in the closure looked
        // up the session's type metadata.
        let slots = served.withUnsafeBufferPointer { log in (0..<keys.count).filter { !log[first + $0].isProbe } }
        // Higher key first, ties to the earlier slot (the tuple comparison this spells out
        // looked up type metadata on every call in this generic code).
        let sorted = slots.sorted { keys[$0] > keys[$1] || (keys[$0] == keys[$1] && $0 < $1) }
        guard sorted != slots else { return }
        // Slot j takes the card dealt at source[j], moved there (`Array.permute`), not copied.
        var source = Array(keys.indices)
        for (slot, from) in zip(slots, sorted) { source[slot] = from }
        let positions = served[first..<(first + keys.count)].map(\.position)
        served.permute(from: first, source: source)
        for slot in keys.indices where source[slot] != slot {  // a card in its place stays
            served[first + slot].position = positions[slot]  // positions stay with the slots
            servedIndexByRow[served[first + slot].row] = first + slot
        }
        // A deck builds either cards (with their candidates) or brief cards, not both.
        if !cards.isEmpty { cards.permute(source: source) }
        if !candidates.isEmpty { candidates.permute(source: source) }
        candidateKeys.permute(source: source)
        if !briefs.isEmpty {
            briefs.permute(source: source)
            for slot in keys.indices { briefs[slot].position = positions[slot] }
        }
    }

    /// Scores the catalog under the current model (nothing yet on the index path).
    func deckScores() -> DeckScores {
        let weights = self.weights
        let cached: SwipeEngine<M>.CachedStudent<M.Student>
        do { cached = try engine.resolved(profileKey) } catch {
            preconditionFailure("a profile that resolved when the session started no longer resolves: \(error.detail)")
        }
        let student = cached.student
        if usesCandidateIndex(student: student) {
            return DeckScores(weights: weights, student: student, near: cached.near, gradeSampleUnits: cached.gradeSampleUnits,
                              raw: [], terms: nil, reasons: nil, indexed: true)
        }
        var raw: [Float] = []
        engine.rawScores(weights: weights, student: student, into: &raw)
        let terms = collaborativeTerms
        return DeckScores(weights: weights, student: student, bands: cached.bands, raw: raw, terms: terms,
                          reasons: CollaborativeReasons(session: self, terms: terms, raw: raw))
    }

    /// How much of each card a deck builds: what the client's card shape shows.
    enum CardDetail {
        /// Whole cards with their explanations.
        case explained
        /// Whole cards, no explanation ranked (`deck(count:explained:)` with false).
        case unexplained
        /// Score, grade and probe flag only (`briefDeck(count:)`).
        case brief
    }

    /// The cards one deal built: `cards`, or `briefs` for `CardDetail.brief`.
    struct DealtCards {
        var cards: [Recommendation] = []
        var briefs: [BriefCard] = []
        var learningState: LearningState
    }

    /// Deals `count` new cards on scores already computed for this state, built to `detail`.
    /// Every detail deals the same cards, scores, grades and probes and leaves the same state
    /// (served log, bands, regions): only what is built for the client differs. `grades` is the
    /// scores' grade scale when the caller has it (a deck's open cards used it), else built here.
    @_specialize(where M == ItemMatcher)
    mutating func deal(count: Int, scores: DeckScores, detail: CardDetail, grades known: GradeScale? = nil) -> DealtCards {
        let catalog = engine.matcher.catalog
        let wanted = max(0, min(count, unseenCount))
        guard wanted > 0 else {
            // The scores' weights are the model's: not solved for again (a re-read of open cards).
            return DealtCards(learningState: learningState(weights: scores.weights))
        }
        let (weights, raw, terms, reasons) = (scores.weights, scores.raw, scores.terms, scores.reasons)
        let student = scores.student  // the cache lookup of `deckScores()`, for the whole deck
        // The deck is chosen by the ranking score (with the collaborative term); each card's
        // match score, and the probe boundary, by the raw score alone.
        var ranking = raw
        if let terms { for i in ranking.indices { ranking[i] += terms[i] } }
        var batch = scores.indexed ? BatchPools(indexed: self, student: student, near: scores.near, weights: weights, count: wanted)
            : BatchPools(session: self, student: student, bands: scores.bands, raw: ranking, count: wanted)
        // Mapped, not converted: `[GeoBand]` as `[GeoBand?]` went through the runtime's array cast.
        let plan: [GeoBand?] = isBanded ? engine.mixer.plan(count: wanted, served: bandServed).map { Optional($0) }
            : [GeoBand?](filling: nil, count: wanted)
        var cards: [Recommendation] = [], briefs: [BriefCard] = []
        if detail == .brief { briefs.reserveCapacity(wanted) } else { cards.reserveCapacity(wanted) }
        // Each card's candidate reasons, written with it, for the explanation variety.
        var candidates: [[String]?] = []
        var candidateKeys = CandidateKeys()
        if detail != .brief { candidates.reserveCapacity(wanted) }
        if detail == .explained { candidateKeys.reserve(wanted) }
        // The posterior is fixed within a deck: the factor is laid out once for all its probes,
        // and a card in the windows of two probes of one band has one variance, computed once.
        var variances = DeckVariances()
        let grades = known ?? scores.gradeScale(engine: engine)
        let first = served.count
        // One copy of the engine for the loop (each read of the generic field looks up type
        // metadata when this runs unspecialized), and a local function rather than a closure
        // value: a closure's context held a second copy of it.
        let engine = self.engine, frozenRanking = ranking, regions = engine.regions
        // A row's ranking score (the probes' value; the deck's best-first order).
        func rankScore(_ row: Int) -> Float {
            scores.indexed ? scores.rawScore(row: row, engine: engine, student: student) : frozenRanking[row]
        }
        // Each card's ranking score, for the deck's order (`DeckOrder.bestFirst`).
        var keys: [Float] = []
        keys.reserveCapacity(wanted)
        // Each card's row and raw score, for the collaborative reasons (solved together below).
        var placed: [(row: Int, raw: Float)] = []
        if detail == .explained { placed.reserveCapacity(wanted) }
        if detail != .brief { prefetchLikelyCards(batch: batch, plan: plan, student: student, engine: engine) }
        for planned in plan {
            let position = nextPosition
            // Backfill: the planned band, else the next ones in cyclic order.
            let start = planned?.index ?? 0
            let pools = isBanded ? 3 : 1
            var next: Int?
            for k in 0..<pools where next == nil && batch.remaining[(start + k) % pools] > 0 { next = (start + k) % pools }
            guard let p = next else { break }
            let band: GeoBand? = planned == nil ? nil : GeoBand.byIndex[p]
            var row: Int, propensity = 1.0
            let isProbe = engine.probes.isProbe(position: position)
            if isProbe {
                (row, propensity) = drawProbe(pool: p, batch: batch, raw: raw, student: student, variances: &variances, score: rankScore)
            } else {
                row = batch.nextBest(pool: p)
            }
            batch.take(row: row, pool: p)
            let rowRaw = scores.rawScore(row: row, engine: engine, student: student)
            let match = engine.matchRaw(rowRaw, row: row)
            let matchScore: Double
            if detail == .brief {
                // Only the score, grade and probe flag are shown: no card is built.
                matchScore = engine.matcher.cardMatchScore(row: row, raw: match, student: student, weights: weights)
                briefs.append(BriefCard(row: row, position: position, matchScore: matchScore,
                                        grade: grades.grade(matchScore: matchScore), isProbe: isProbe))
            } else {
                var card: Recommendation
                if detail == .explained {
                    let cardCandidates: [String]?, keys: [ExplanationVariety.Key]?
                    (card, cardCandidates, keys) = engine.matcher.cardWithKeyedCandidates(row: row, raw: match, student: student,
                                                                                          weights: weights, isProbe: isProbe)
                    candidates.append(cardCandidates)
                    candidateKeys.append(keys)
                } else {
                    // No reasons ranked: the deck's shape shows none (`deck(count:explained:)`).
                    card = engine.matcher.unexplainedCard(row: row, raw: match, student: student, weights: weights, isProbe: isProbe)
                    candidates.append(nil)
                }
                card.grade(by: grades)
                matchScore = card.matchScore
                cards.append(consume card)  // moved in: a copy retained each of its strings and arrays
            }
            if detail == .explained { placed.append((row, rowRaw)) }
            served.append(ServedCard(position: position, row: row, cardID: catalog.ids[row], band: band, isProbe: isProbe,
                                     propensity: propensity, predictedMatch: matchScore, action: nil))
            servedIndexByRow[row] = served.count - 1
            if band != nil { bandServed[p] += 1 }
            // Inline rather than `markShown(row:)` and `rankScore(_:)`: in this generic code each
            // call looked up the engine's type metadata again, per card.
            if let code = regions.code(row: row) { regionShown[code] = true }
            keys.append(scores.indexed ? scores.rawScore(row: row, engine: engine, student: student) : frozenRanking[row])
        }
        if detail == .explained, let reasons {
            for (i, reason) in reasons.reasons(for: placed, session: self).enumerated() {
                if let reason {
                    cards[i].explanations.insert(reason, at: 0)
                    candidateKeys.insertFirst(reason, card: i)
                }
            }
        }
        if engine.configuration.deckOrder == .bestFirst {
            orderBestFirst(from: first, cards: &cards, briefs: &briefs, candidates: &candidates, candidateKeys: &candidateKeys, keys: keys)
        }
        if detail == .explained {
            engine.matcher.varyExplanations(&cards, candidates: candidates, keys: candidateKeys, student: student, weights: weights)
        }
        // The deck's weights are the current ones (nothing learned while dealing): named from
        // them rather than read from the model again.
        return DealtCards(cards: cards, briefs: briefs, learningState: learningState(weights: weights))
    }

    /// The position of the next card served: one past the last served card's. A migrated
    /// session (`SessionMigration`) keeps its cards' original positions, with gaps where an item
    /// left the catalog, so the probe schedule goes on where the student was.
    var nextPosition: Int { (served.last?.position ?? 0) + 1 }

    /// Cards that may still be served: neither served nor judged outside the deck.
    public var unseenCount: Int { engine.matcher.catalog.count - served.count - judgedRows.count }

    mutating func markShown(row: Int) {
        if let code = engine.regions.code(row: row) { regionShown[code] = true }
    }

    /// Starts loading the cards this deck will most likely serve (each pool's best, one more than
    /// its planned slots) into the caches: their feature rows, term values, summaries and the
    /// matcher's own per-item arrays. Each card otherwise waited on its own cache misses in turn;
    /// started together, they overlap. Changes no result. (The probes' candidates, the next ones
    /// of a pool, were prefetched too in a trial: what the probes' vectors gained, the longer
    /// lists cost; `Benchmarks/results/deck-perf.txt`.)
    private func prefetchLikelyCards(batch: BatchPools<M>, plan: [GeoBand?], student: M.Student, engine: SwipeEngine<M>) {
        let pools = batch.best.count
        guard pools > 0 else { return }
        var slots = [Int](filling: 0, count: pools)
        for planned in plan { slots[min(pools - 1, planned?.index ?? 0)] += 1 }
        var cards: [Int] = []
        cards.reserveCapacity(plan.count + pools)
        for (p, rows) in batch.best.enumerated() { cards.append(contentsOf: rows.prefix(slots[p] + 1)) }
        let catalog = engine.matcher.catalog
        catalog.featureRows.prefetch(rows: cards)
        student.terms.prefetch(items: cards)
        catalog.prefetchSummaries(rows: cards)
        engine.matcher.prefetchCards(rows: cards, student: student)
    }

    /// Picks the probe of pool `p`: the `window` candidates (`EngineConfiguration.probeCandidates`:
    /// the unseen cards closest to the decision boundary, match 0.5, or the best unseen cards
    /// by the pool's score), one drawn ∝ exp(variance / T). `variances` holds the variances
    /// this deck has computed (by row), and gets the new ones.
    mutating func drawProbe(pool p: Int, batch: BatchPools<M>, raw: [Float], student: M.Student,
                            variances known: inout DeckVariances, score: (Int) -> Float) -> (row: Int, propensity: Double) {
        let (window, temperature) = engine.probes.exploration(for: phase)
        let candidates: [Int]
        switch engine.configuration.probeCandidates {
        case .boundary:
            let rows = batch.unseen(pool: p)
            var closeness = [Float](filling: 0, count: rows.count)
            let boundary = Float(engine.matcher.calibration.offset)
            // The boundary of the match score, so without the exposure effects.
            for (i, row) in rows.enumerated() { closeness[i] = -abs(engine.matchRaw(raw[row], row: row) - boundary) }
            var picked: [Int] = []
            var selector = TopKSelector()
            selector.select(k: window, from: closeness, into: &picked)
            candidates = picked.map { rows[$0] }
        case .plausiblyGood:
            // The pool's own order (the discovery novelty bonus included), as the batch ranked it.
            candidates = batch.bestUntaken(pool: p, count: window)
        }
        // A plain loop: a closure here copied the student (all its arrays) once per candidate.
        // Each variance is computed exactly as in one call for all candidates (the kernel does
        // every vector's operations in the same order), so skipping known ones changes no bit.
        if known.forms == nil { known.forms = model.varianceForms }
        let missing = candidates.filter { known.byRow[$0] == nil }
        if !missing.isEmpty {
            let vectors = engine.learningVectors(rows: missing, student: student)
            for (row, variance) in zip(missing, known.forms!.evaluate(flat: vectors, count: missing.count)) {
                known.byRow[row] = variance
            }
        }
        let variances = candidates.map { known.byRow[$0]! }
        guard engine.configuration.probeValue else {
            let (index, propensity) = ProbeScheduler.draw(uncertainties: variances, temperature: temperature, using: &rng)
            return (candidates[index], propensity)
        }
        // Value beside information: each candidate's ranking score in logits of the match
        // calibration (log-odds of a like, up to a constant), so of two equally uncertain cards
        // the one more likely liked is drawn more often.
        let scale = Float(engine.matcher.calibration.scale)
        let logits = zip(candidates, variances).map { row, variance in variance / temperature + Double(score(row) / scale) }
        let (index, propensity) = ProbeScheduler.draw(uncertainties: logits, temperature: 1, using: &rng)
        return (candidates[index], propensity)
    }

    /// Serves from now on with `mean` as the posterior mean (the precision, and so the probes'
    /// variances, stay the session's own). For the evaluation only: it separates a learner's
    /// quality from the serving policy's cost by plugging another learner into this policy.
    ///
    /// - Parameter mean: `engine.modelDimension` finite values (the bias last, if learned).
    package mutating func replacePosteriorMean(_ mean: [Double]) { model.replaceMean(with: mean) }

    // MARK: Swipes

    /// Records a swipe and learns from it.
    ///
    /// - Parameter swipe: The swipe.
    /// - Returns: Recorded or duplicate, the learning state, and maybe a feedback prompt (after
    ///   a probe, or after a pattern break; never twice within the phase's cooldown).
    /// - Throws: `SwipeError` `.unknownCard`, `.notServed`, `.alreadySwiped`, `.invalidSwipe`
    ///   (an id longer than `SwipeSession.maxIDLength` bytes) or `.numerical`; the session is
    ///   unchanged.
    /// - Complexity: O(D²) before the stable phase, O(D³) in it (D = d + k).
    @_specialize(where M == ItemMatcher)
    public mutating func recordSwipe(_ swipe: Swipe) throws(SwipeError) -> SwipeResult {
        guard swipe.swipeID.utf8.count <= SwipeSession.maxIDLength, swipe.cardID.utf8.count <= SwipeSession.maxIDLength else {
            throw SwipeError(.invalidSwipe, "swipe ids and card ids are at most \(SwipeSession.maxIDLength) bytes")
        }
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
        let student = self.student
        let z = engine.learningVector(row: row, student: student)
        let itemOffset = engine.itemOffset(row: row)
        let predicted = model.likeProbability(z, itemOffset: itemOffset)
        let phaseAfter = LearningPhase(totalSwipes: totalSwipes + 1)
        do {
            try model.observe(z, liked: swipe.action == .like,
                              forgetting: phaseAfter == .stable ? engine.configuration.stableForgetting : 1, itemOffset: itemOffset)
        } catch {
            throw SwipeError(.numerical, "swipe \(swipe.swipeID): \(error.description)")
        }
        engine.observeFactors(&collaborative, row: row, liked: swipe.action == .like)
        swipes[swipe.swipeID] = swipe
        if swipe.action == .like { likedRows.insert(row) }
        served[index].action = swipe.action
        totalSwipes += 1
        events.append(.swipe(swipe))
        let prompt = feedbackPrompt(row: row, card: served[index], action: swipe.action, predicted: predicted, student: student)
        if let prompt {
            lastFeedbackSwipe = totalSwipes
            pendingFeedback[row] = prompt.options
        }
        return SwipeResult(outcome: .recorded, learningState: learningState, totalSwipes: totalSwipes, feedback: prompt)
    }

    /// Records a swipe on a card the student reached outside the deck (search, a detail page, a
    /// shared link) as an **organic** swipe: learned from like any swipe (a judgement of weight
    /// 1), never served afterwards, no feedback prompt, and no propensity — it was not drawn by
    /// the serving policy, so off-policy estimates (IPS) leave it out. A card that was served
    /// is swiped as usual (`recordSwipe(_:)`).
    ///
    /// - Parameter swipe: The swipe.
    /// - Returns: The result, and whether the swipe was organic.
    /// - Throws: `SwipeError` as `recordSwipe(_:)`, and `.alreadySwiped` when the card was
    ///   already judged outside the deck (swiped or saved).
    /// - Complexity: O(D²) before the stable phase, O(D³) in it.
    public mutating func recordOrganicSwipe(_ swipe: Swipe) throws(SwipeError) -> (result: SwipeResult, organic: Bool) {
        guard swipe.swipeID.utf8.count <= SwipeSession.maxIDLength, swipe.cardID.utf8.count <= SwipeSession.maxIDLength else {
            throw SwipeError(.invalidSwipe, "swipe ids and card ids are at most \(SwipeSession.maxIDLength) bytes")
        }
        guard swipes[swipe.swipeID] == nil, let row = engine.matcher.catalog.row(of: swipe.cardID),
              servedIndexByRow[row] == nil else {
            return (try recordSwipe(swipe), false)
        }
        guard !judgedRows.contains(row) else {
            throw SwipeError(.alreadySwiped, "swipe \(swipe.swipeID): card \"\(swipe.cardID)\" was already swiped or saved")
        }
        return (try recordJudgement(swipe, weight: 1), true)
    }

    /// Records a judgement on a card outside the deck — a school saved from its detail page
    /// (a strong like), or a swipe carried over from an earlier profile — and learns from it.
    ///
    /// The card need not have been served; if it was not, it is never served afterwards. No
    /// feedback prompt follows, and served cards keep their own swipe state.
    ///
    /// - Parameters:
    ///   - swipe: The judgement (its id shares the namespace of swipe ids).
    ///   - weight: How many swipes it counts as, in (0, `maxJudgementWeight`].
    /// - Returns: Recorded or duplicate, with the learning state.
    /// - Throws: `SwipeError` `.invalidSwipe` (an id too long, a weight out of range),
    ///   `.unknownCard` or `.numerical`; the session is unchanged.
    /// - Complexity: O(D²) before the stable phase, O(D³) in it.
    @_specialize(where M == ItemMatcher)
    public mutating func recordJudgement(_ swipe: Swipe, weight: Double) throws(SwipeError) -> SwipeResult {
        guard swipe.swipeID.utf8.count <= SwipeSession.maxIDLength, swipe.cardID.utf8.count <= SwipeSession.maxIDLength else {
            throw SwipeError(.invalidSwipe, "swipe ids and card ids are at most \(SwipeSession.maxIDLength) bytes")
        }
        guard weight > 0, weight <= SwipeSession.maxJudgementWeight else {
            throw SwipeError(.invalidSwipe, "judgement \(swipe.swipeID): weight \(weight) is outside (0, \(SwipeSession.maxJudgementWeight)]")
        }
        if swipes[swipe.swipeID] != nil {
            return SwipeResult(outcome: .duplicate, learningState: learningState, totalSwipes: totalSwipes, feedback: nil)
        }
        guard let row = engine.matcher.catalog.row(of: swipe.cardID) else {
            throw SwipeError(.unknownCard, "judgement \(swipe.swipeID): no card \"\(swipe.cardID)\" in the catalog")
        }
        let z = engine.learningVector(row: row, student: student)
        let phaseAfter = LearningPhase(totalSwipes: totalSwipes + 1)
        do {
            try model.observe(z, liked: swipe.action == .like,
                              forgetting: phaseAfter == .stable ? engine.configuration.stableForgetting : 1, weight: weight,
                              itemOffset: engine.itemOffset(row: row))
        } catch {
            throw SwipeError(.numerical, "judgement \(swipe.swipeID): \(error.description)")
        }
        engine.observeFactors(&collaborative, row: row, liked: swipe.action == .like)
        swipes[swipe.swipeID] = swipe
        if swipe.action == .like { likedRows.insert(row) }
        if servedIndexByRow[row] == nil {
            judgedRows.insert(row)
        } else {
            judgedServedRows.insert(row)
        }
        totalSwipes += 1
        events.append(.judged(swipe, weight: weight))
        return SwipeResult(outcome: .recorded, learningState: learningState, totalSwipes: totalSwipes, feedback: nil)
    }

    /// Whether a swipe or judgement with this id was recorded (a replayed id is `.duplicate`).
    ///
    /// - Parameter swipeID: The id.
    /// - Complexity: O(1).
    public func hasRecorded(swipeID: String) -> Bool { swipes[swipeID] != nil }

    /// The largest weight `recordJudgement(_:weight:)` accepts: one judgement must not outweigh
    /// a whole phase of swipes.
    public static var maxJudgementWeight: Double { 10 }

    /// The longest student, swipe or card id accepted, in UTF-8 bytes: ids are stored per swipe
    /// and echoed in errors, so an unbounded id would cost unbounded memory.
    public static var maxIDLength: Int { 256 }

    func feedbackPrompt(row: Int, card: ServedCard, action: SwipeAction, predicted: Double, student: M.Student) -> FeedbackPrompt? {
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
    ///   - options: The chosen options (a subset of those offered; may be empty to dismiss). An
    ///     option listed twice counts once.
    /// - Throws: `SwipeError` `.invalidFeedback` when no prompt is open for the card or an
    ///   option was not offered; nothing changes.
    /// - Complexity: O(D²).
    @_specialize(where M == ItemMatcher)
    public mutating func submitFeedback(cardID: String, options: [FeedbackOption]) throws(SwipeError) {
        guard let row = engine.matcher.catalog.row(of: cardID), let offered = pendingFeedback[row] else {
            throw SwipeError(.invalidFeedback, "no feedback question is open for card \"\(cardID.prefix(SwipeSession.maxIDLength))\"")
        }
        if let wrong = options.first(where: { !offered.contains($0) }) {
            throw SwipeError(.invalidFeedback, "\"\(wrong.rawValue)\" was not offered for card \"\(cardID)\"")
        }
        // Each answer once: a client that repeats an option (a double tap, a retried request)
        // must not apply its shift several times.
        var chosen: [FeedbackOption] = []
        for option in options where !chosen.contains(option) { chosen.append(option) }
        pendingFeedback[row] = nil
        events.append(.feedback(cardID: cardID, options: chosen))
        guard !chosen.isEmpty else { return }
        var delta = [Double](repeating: 0, count: model.dimension)
        for option in chosen {
            for (i, v) in engine.adjustment(for: option, row: row).enumerated() { delta[i] += v }
        }
        model.shiftPrior(by: delta)
    }

    /// Applies a batch of swipes recorded offline, in (timestamp, swipe id) order.
    ///
    /// - Parameter swipes: The swipes, in any order.
    /// - Returns: One result per swipe, in the order given: the swipe's result, or the error
    ///   that rejected it.
    @_specialize(where M == ItemMatcher)
    public mutating func sync(_ swipes: [Swipe]) -> [Result<SwipeResult, SwipeError>] {
        applyInOrder(swipes) { session, swipe throws(SwipeError) in try session.recordSwipe(swipe) }
    }

    /// Applies `apply` to each swipe in (timestamp, swipe id) order — the library's order rule
    /// for swipes that arrive together — and answers in the order given.
    mutating func applyInOrder(_ swipes: [Swipe], _ apply: (inout SwipeSession, Swipe) throws(SwipeError) -> SwipeResult)
        -> [Result<SwipeResult, SwipeError>] {
        let order = swipes.indices.sorted {
            (swipes[$0].timestamp, swipes[$0].swipeID) < (swipes[$1].timestamp, swipes[$1].swipeID)
        }
        var results = [Result<SwipeResult, SwipeError>?](repeating: nil, count: swipes.count)
        for i in order {
            do { results[i] = .success(try apply(&self, swipes[i])) } catch { results[i] = .failure(error) }
        }
        return results.map { $0! }
    }
}

/// The posterior variances one deck has computed, by row, and the model's factor laid out for
/// computing more (built by the first probe that needs it).
struct DeckVariances {
    var forms: InverseQuadraticForms?
    /// The variances computed so far, by catalog row (a deck's probes look at a few dozen rows:
    /// a small table, not an array of N).
    var byRow = SmallTable<Double>()
}

/// One batch's view of the unseen cards: per pool, the best rows by pool score (ties to the
/// lower row), selected once per batch, and what the batch has taken so far. The pool score is
/// the raw score, plus `discoveryNoveltyBonus` for discovery cards from regions not shown yet
/// (when the matcher names a region attribute).
struct BatchPools<M: Matcher> {
    /// Per pool, candidate rows best first (enough for every slot of the batch).
    var best: [[Int]]
    var cursor: [Int]
    /// Per pool, unseen cards left.
    var remaining: [Int]
    /// Per row, its pool; -1 for served or judged rows and rows taken by this batch. Empty on
    /// the index path (`init(indexed:student:weights:count:)`), which keeps `taken` instead.
    var poolOfRow: [Int8]
    /// The rows this batch has taken, on the index path.
    var taken: [Int] = []

    /// Whether this batch has taken the row (or, on the scan path, it was served or judged).
    func isTaken(_ row: Int) -> Bool { poolOfRow.isEmpty ? taken.contains(row) : poolOfRow[row] < 0 }

    /// - Complexity: O(N) to derive the pools (from the student's distances, and the session's
    ///   served and judged rows), O(N) to select.
    init(session: SwipeSession<M>, student: M.Student, bands: (indices: [Int8], expansion: Double)?, raw: [Float], count: Int) {
        let pools = session.isBanded ? 3 : 1
        // Not kept per session (the session stays O(swipes)): the engine's student cache keeps
        // the bands (`bands`), else they are derived here.
        var poolOfRow: [Int8]
        if pools == 3, let bands, bands.expansion == session.engine.configuration.expansion, bands.indices.count == raw.count {
            poolOfRow = bands.indices
        } else if pools == 3, let preferred = session.preferredDistanceMiles {
            let expansion = session.engine.configuration.expansion
            poolOfRow = GeoBand.bandIndices(distances: student.distances.allValues, preferred: preferred, expansion: expansion)
        } else {
            poolOfRow = [Int8](filling: 0, count: raw.count)
        }
        for row in session.servedIndexByRow.keys { poolOfRow[row] = -1 }
        for row in session.judgedRows { poolOfRow[row] = -1 }
        // Enough of each pool's best for every slot of the batch. A slot takes the best untaken
        // card of its pool, and a plausibly good probe draws from the `window` best untaken ones;
        // the batch has taken at most count − 1 cards before any slot, so count + window rows
        // always hold both. Boundary probes draw from the whole pool, not from these lists, which
        // then serve the plain slots only: twice the batch, as before.
        let keep: Int
        switch session.engine.configuration.probeCandidates {
        case .plausiblyGood: keep = count + session.engine.probes.exploration(for: session.phase).window
        case .boundary: keep = 2 * count
        }
        // Each pool ranks by its score: the raw score, plus the novelty bonus for discovery
        // cards from regions not shown yet.
        var poolScores = raw
        // Locals, not the session's fields, in the per-row loop: a caller outside this module
        // runs this code unspecialized, where each read of a generic struct's field goes
        // through its type metadata.
        let codeOfRow = session.engine.regions.codeOfRow, regionShown = session.regionShown
        if pools == 3, !codeOfRow.isEmpty, regionShown.contains(false) {
            let bonus = session.engine.configuration.discoveryNoveltyBonus
            let novelty = Int8(GeoBand.discovery.index)
            for row in poolScores.indices where poolOfRow[row] == novelty && !regionShown[Int(codeOfRow[row])] {
                poolScores[row] = raw[row] + bonus
            }
        }
        var selector = GroupedTopKSelector()
        var best: [[Int]] = []
        var remaining: [Int] = []
        selector.select(k: keep, from: poolScores, groups: poolOfRow, groupCount: pools, into: &best, counts: &remaining)
        self.best = best
        self.cursor = [Int](filling: 0, count: pools)
        self.remaining = remaining
        self.poolOfRow = poolOfRow
    }

    /// The best card of pool `p` not yet taken (the pool must have one left).
    mutating func nextBest(pool p: Int) -> Int {
        while isTaken(best[p][cursor[p]]) { cursor[p] += 1 }
        return best[p][cursor[p]]
    }

    mutating func take(row: Int, pool p: Int) {
        if poolOfRow.isEmpty { taken.append(row) } else { poolOfRow[row] = -1 }
        remaining[p] -= 1
    }

    /// The best `count` cards of pool `p` not taken by this batch, best first: the same as
    /// selecting them from all its unseen cards by `poolScore`, since `best` holds more than
    /// this batch can take plus the largest window.
    func bestUntaken(pool p: Int, count: Int) -> [Int] {
        var result: [Int] = []
        result.reserveCapacity(count)
        for row in best[p] where !isTaken(row) {
            guard result.count < count else { break }
            result.append(row)
        }
        return result
    }

    /// The unseen rows of pool `p` not taken by this batch, ascending.
    func unseen(pool p: Int) -> [Int] {
        precondition(!poolOfRow.isEmpty, "boundary probes need the full scan's pools")
        var rows: [Int] = []
        rows.reserveCapacity(remaining[p])
        let code = Int8(p)
        for row in poolOfRow.indices where poolOfRow[row] == code { rows.append(row) }
        return rows
    }
}

extension GeoBand {
    /// The band's index in `allCases` (nearby 0, slightly beyond 1, discovery 2).
    var index: Int {
        switch self {
        case .nearby: 0
        case .slightlyBeyond: 1
        case .discovery: 2
        }
    }
}
