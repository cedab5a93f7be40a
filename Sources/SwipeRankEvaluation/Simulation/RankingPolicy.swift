import SwipeRank
import SwipeRankColleges
import SwipeRankNumerics

/// Something that decides which cards a student sees: the engine, or a baseline.
///
/// The simulation asks a policy for cards, tells it the student's answers, and compares its
/// ranking of the unseen cards with the student's hidden ground truth.
public protocol RankingPolicy {
    /// A short name for tables.
    var name: String { get }
    /// The next `count` catalog rows to show, never repeating a row.
    mutating func serve(count: Int) throws -> [Int]
    /// The student's answer to a served row.
    mutating func observe(row: Int, liked: Bool) throws
    /// The policy's current best `limit` unseen rows, best first.
    func ranking(limit: Int) -> [Int]
    /// The policy's current score of every catalog row, seen rows included (higher is better):
    /// how it would rank cards it has not served, for the generalization metric.
    var scores: [Float] { get }
    /// The learned weights over `[features, terms]`, for policies that learn.
    var learnedWeights: [Double]? { get }
}

/// Which policy to evaluate.
public enum PolicyKind: String, Sendable, Hashable, CaseIterable, Codable {
    /// The full engine: learning, probes, geographic mixing.
    case engine
    /// The engine with probes switched off.
    case engineNoProbes = "engine_no_probes"
    /// The engine with probes drawn near the decision boundary (match 0.5) instead of among
    /// plausibly good cards (`ProbeCandidates.boundary`, the engine's rule before).
    case engineBoundaryProbes = "engine_boundary_probes"
    /// The engine without geographic mixing (one pool).
    case engineNoGeoMix = "engine_no_geo_mix"
    /// The engine serving its decks in the band plan's interleaved order (`DeckOrder.bandPlan`,
    /// the order before best-first decks): the same cards, another order.
    case engineBandOrder = "engine_band_order"
    /// The cold-start profile ranking, never updated.
    case profileOnly = "profile_only"
    /// Items by a popularity score (colleges: undergraduate enrollment), the same for everyone.
    case popularity
    /// A uniformly random order.
    case random
    /// A naive online learner for reference: logistic regression on the engine's vectors
    /// `[features, terms]`, started at the cold-start weights and moved by one stochastic
    /// gradient step per swipe, serving its current best unseen cards greedily (no bands, no
    /// probes).
    case naiveSGD = "naive_sgd"
    /// The same naive learner plugged into the engine's serving policy: the engine's session
    /// serves (the 50/30/20 bands, a probe at every 4th card drawn by the engine's posterior
    /// variances) but with the naive learner's weights as its mean after every swipe — so the
    /// learner's quality and the serving policy's cost can be told apart.
    case naiveSGDEngineServing = "naive_sgd_engine_serving"
    /// The engine with a bias per student (`EngineConfiguration.studentBias`): an intercept
    /// learned beside the weights.
    case engineStudentBias = "engine_student_bias"
    /// The engine starting from what a population taught (`SimulationEvaluator.population`: a
    /// `PopulationPrior` fitted on other students' swipes — the shifted cold start and the item
    /// effects).
    case enginePopulationPrior = "engine_population_prior"
    /// The engine with more student-relative terms (`SimulationEvaluator.expandedTermsEngine`;
    /// for colleges `SchoolTermBasis.expanded`: `budget_over` and `distance_near` beside the
    /// standard four), so what the extra shapes buy is measured on the same students.
    case engineExpandedTerms = "engine_expanded_terms"
    /// The engine's serving policy without learning: the same session (bands, probes drawn by
    /// posterior variance, which still shrinks with every swipe) whose mean is put back to the
    /// cold start after every swipe — the reference that shows what learning adds to the decks
    /// the engine serves.
    case engineNoLearning = "engine_no_learning"
    /// An oracle, not a learner: the best linear fit of the student's true like probabilities
    /// in the engine's own vector space (`LinearOracle`), fitted on every item before the first
    /// card and served greedily. The ceiling of any linear scorer, the engine's included.
    case linearOracle = "linear_oracle"
    /// The engine starting from the population prior and learning from everyone: the same
    /// students' population also fitted a collaborative model (`SimulationEvaluator.collaborativeEngine`:
    /// `FactorFit` on their log), and each swipe places the student among its item factors.
    case engineCollaborative = "engine_collaborative"
    /// A bound on serving, not a learner: each student's true taste served under the engine's
    /// own constraint — the 50/30/20 band quotas planned as the engine plans them
    /// (`GeographicMixer`, the same backfill) — its best unseen card in every slot (a probe slot
    /// is a slot like any other), the deck then served best first. Its served NDCG@10 is the most
    /// any policy bound by the band mix can serve; the unconstrained bound is 1 by the metric's
    /// definition.
    case constrainedOracle = "constrained_oracle"
}

/// The engine (or an ablation of it) as a policy.
struct EnginePolicy<M: Matcher>: RankingPolicy {
    let name: String
    var session: SwipeSession<M>
    var swipeCount = 0

    init(name: String, engine: SwipeEngine<M>, student: DatasetStudent<M.Profile>, seed: UInt64) throws {
        self.name = name
        session = try engine.session(studentID: student.id, profile: student.profile, seed: seed)
    }

    mutating func serve(count: Int) throws -> [Int] {
        let before = session.served.count
        _ = session.recommendations(count: count)
        return session.served[before...].map(\.row)
    }

    mutating func observe(row: Int, liked: Bool) throws {
        swipeCount += 1
        let id = session.engine.matcher.catalog.ids[row]
        let result = try session.recordSwipe(Swipe(swipeID: "e\(swipeCount)", cardID: id, action: liked ? .like : .dislike,
                                                   timestamp: Int64(swipeCount)))
        // Prompts go unanswered here: the comparison is about swipes alone.
        if let prompt = result.feedback { try session.submitFeedback(cardID: prompt.cardID, options: []) }
    }

    func ranking(limit: Int) -> [Int] { StaticPolicy.top(scores, excluding: Set(session.served.map(\.row)), limit: limit) }

    var scores: [Float] {
        var scores: [Float] = []
        session.rankingScores(into: &scores)
        return scores
    }

    /// The weights over `[features, terms]` (a learned bias, if any, left out).
    var learnedWeights: [Double]? { Array(session.model.mean.prefix(session.engine.matcher.catalog.dimension + session.student.terms.names.count)) }
}

/// `PolicyKind.engineNoLearning`: the engine's session serves, and its mean goes back to the
/// cold start (the prior mean) after every swipe.
struct EngineWithoutLearningPolicy<M: Matcher>: RankingPolicy {
    let name: String
    var serving: EnginePolicy<M>

    init(name: String, engine: SwipeEngine<M>, student: DatasetStudent<M.Profile>, seed: UInt64) throws {
        self.name = name
        serving = try EnginePolicy(name: name, engine: engine, student: student, seed: seed)
    }

    mutating func serve(count: Int) throws -> [Int] { try serving.serve(count: count) }

    mutating func observe(row: Int, liked: Bool) throws {
        try serving.observe(row: row, liked: liked)
        // Feedback prompts go unanswered in the simulation, so the prior mean is the cold start.
        serving.session.replacePosteriorMean(serving.session.model.priorMean)
    }

    func ranking(limit: Int) -> [Int] { serving.ranking(limit: limit) }

    var scores: [Float] { serving.scores }

    var learnedWeights: [Double]? { nil }
}

/// `PolicyKind.naiveSGDEngineServing`: the engine's session serves, the naive learner learns;
/// after each swipe the session's mean is replaced by the learner's weights (the session's own
/// precision still updates, so probes are still drawn by posterior variance).
struct NaiveLearnerEngineServingPolicy<M: Matcher>: RankingPolicy {
    let name: String
    var serving: EnginePolicy<M>
    var learner: NaiveSGDPolicy<M>

    init(name: String, engine: SwipeEngine<M>, student: DatasetStudent<M.Profile>, resolved: M.Student, seed: UInt64) throws {
        self.name = name
        serving = try EnginePolicy(name: name, engine: engine, student: student, seed: seed)
        learner = NaiveSGDPolicy(name: name, engine: engine, student: resolved)
        // Both start at the cold start; set it anyway so the two can never drift apart.
        serving.session.replacePosteriorMean(servingMean)
    }

    /// The learner's weights, with the session's own bias (if it learns one) after them.
    var servingMean: [Double] {
        learner.weights + serving.session.model.mean.dropFirst(learner.weights.count)
    }

    mutating func serve(count: Int) throws -> [Int] { try serving.serve(count: count) }

    mutating func observe(row: Int, liked: Bool) throws {
        try serving.observe(row: row, liked: liked)
        try learner.observe(row: row, liked: liked)
        serving.session.replacePosteriorMean(servingMean)
    }

    func ranking(limit: Int) -> [Int] { serving.ranking(limit: limit) }

    var scores: [Float] { serving.scores }

    var learnedWeights: [Double]? { learner.weights }
}

/// The constrained oracle: the true like probabilities served through the engine's band plan.
struct ConstrainedOraclePolicy<M: Matcher>: RankingPolicy {
    let name: String
    let gains: [Double]
    /// Each row's band index, or nil for a student without a home or an engine without mixing.
    let pools: [Int]?
    let mixer: GeographicMixer
    var seen = Set<Int>()
    var bandServed = [0, 0, 0]

    init(name: String, engine: SwipeEngine<M>, student: M.Student, gains: [Double]) {
        self.name = name
        self.gains = gains
        mixer = GeographicMixer(shares: engine.configuration.bandShares)
        if let preferred = student.preferredDistanceMiles, engine.configuration.geographicMixing {
            pools = student.distances.map { distance in
                GeoBand.allCases.firstIndex(of: GeoBand.band(distance: distance, preferred: preferred, expansion: engine.configuration.expansion))!
            }
        } else {
            pools = nil
        }
    }

    /// The best unseen row of a pool (ties to the lower row), or nil when the pool is empty.
    func best(pool: Int?) -> Int? {
        var best: Int?
        for row in gains.indices where !seen.contains(row) && (pool == nil || pools?[row] == pool) {
            if best == nil || gains[row] > gains[best!] { best = row }
        }
        return best
    }

    mutating func serve(count: Int) throws -> [Int] {
        var batch: [Int] = []
        guard pools != nil else {
            for _ in 0..<count { guard let row = best(pool: nil) else { break }; seen.insert(row); batch.append(row) }
            return batch
        }
        for planned in mixer.plan(count: count, served: bandServed) {
            // Backfill as the engine does: the planned band, else the next ones in cyclic order.
            let start = GeoBand.allCases.firstIndex(of: planned)!
            var pick: (row: Int, pool: Int)?
            for k in 0..<3 where pick == nil { if let row = best(pool: (start + k) % 3) { pick = (row, (start + k) % 3) } }
            guard let pick else { break }
            seen.insert(pick.row)
            bandServed[pick.pool] += 1
            batch.append(pick.row)
        }
        // Best first, as the engine orders its decks (ties: the plan's order).
        return batch.enumerated().sorted { (gains[$0.element], -$0.offset) > (gains[$1.element], -$1.offset) }.map(\.element)
    }

    mutating func observe(row: Int, liked: Bool) throws {}

    func ranking(limit: Int) -> [Int] { StaticPolicy.top(scores, excluding: seen, limit: limit) }

    var scores: [Float] { gains.map(Float.init) }

    var learnedWeights: [Double]? { nil }
}

/// A policy with fixed scores: serves the best unseen rows in order and never learns.
struct StaticPolicy: RankingPolicy {
    let name: String
    let scores: [Float]
    var seen = Set<Int>()

    mutating func serve(count: Int) throws -> [Int] {
        let rows = StaticPolicy.top(scores, excluding: seen, limit: count)
        seen.formUnion(rows)
        return rows
    }

    mutating func observe(row: Int, liked: Bool) throws {}

    func ranking(limit: Int) -> [Int] { StaticPolicy.top(scores, excluding: seen, limit: limit) }

    var learnedWeights: [Double]? { nil }

    /// The best `limit` rows not in `excluding` (ties to the lower row).
    static func top(_ scores: [Float], excluding: Set<Int>, limit: Int) -> [Int] {
        var masked = scores
        for row in excluding { masked[row] = -.infinity }
        return masked.topIndices(limit)
    }
}

/// `PolicyKind.naiveSGD`: what a team would write first instead of the engine. The like
/// probability is the matcher's calibrated logistic of the raw score (the engine's link), and
/// each swipe moves the weights by `rate × (y − p) × z / scale` — the log-likelihood's
/// gradient, no prior, no uncertainty, no exploration.
struct NaiveSGDPolicy<M: Matcher>: RankingPolicy {
    let name: String
    let engine: SwipeEngine<M>
    let student: M.Student
    /// `[features, terms]` weights, from the cold start.
    var weights: [Double]
    let rate: Double
    var seen = Set<Int>()

    init(name: String, engine: SwipeEngine<M>, student: M.Student, rate: Double = 0.05) {
        self.name = name
        self.engine = engine
        self.student = student
        let cold = engine.matcher.coldStartWeights(for: student)
        weights = cold.features.map(Double.init) + cold.terms.map(Double.init)
        self.rate = rate
    }

    var scores: [Float] {
        let d = engine.matcher.catalog.dimension
        var out: [Float] = []
        engine.matcher.catalog.scores(weights: PreferenceWeights(features: weights[..<d].map(Float.init),
                                                                 terms: weights[d...].map(Float.init)),
                                      terms: student.terms, into: &out)
        return out
    }

    mutating func serve(count: Int) throws -> [Int] {
        let rows = StaticPolicy.top(scores, excluding: seen, limit: count)
        seen.formUnion(rows)
        return rows
    }

    mutating func observe(row: Int, liked: Bool) throws {
        let z = engine.combinedVector(row: row, student: student)
        let calibration = engine.matcher.calibration
        let raw = zip(weights, z).reduce(0) { $0 + $1.0 * $1.1 }
        let p = calibration.matchScore(raw: raw)
        let step = rate * ((liked ? 1 : 0) - p) / calibration.scale
        for j in weights.indices { weights[j] += step * z[j] }
    }

    func ranking(limit: Int) -> [Int] { StaticPolicy.top(scores, excluding: seen, limit: limit) }

    var learnedWeights: [Double]? { weights }
}
