import Foundation
import SwipeRank
import SwipeRankColleges
import SwipeRankNumerics

/// Runs simulated students through the engine and the baselines and measures how well each
/// policy recommends against the students' hidden preferences.
///
/// Each student gets a hidden taste once — hidden weights in the engine's own model class
/// (`SimulatedStudent`, deviation 2), or a `taste` model outside it (`HiddenTasteStudent`) —
/// and every policy then serves the same student with the same stream of random answers
/// (common random numbers, so differences between policies are not noise in the answers). At
/// each checkpoint (after 0, 10, 20, … swipes):
///
/// - **served NDCG@10** (`servedNDCG`): the next deck exactly as the policy serves it, in its
///   order, against the 10 best unseen cards — what the student gets;
/// - **NDCG@10**: the policy's own top 10 unseen cards, graded, the gain of a card its hidden
///   like probability (σ((zᵀw* − 2)/1.5) for `SimulatedStudent`); the ideal is the 10 best
///   unseen cards.
/// - **precision@10**: the share of the top 10 among the student's R truly best unseen cards
///   (like the NDCG ideal: a policy is not penalized for having served good cards already), R =
///   `relevantCount(catalogSize:)` (50 for the college catalog; a tenth of a small catalog).
/// - **like rate**: likes among the swipes since the previous checkpoint.
/// - **cosine**: cosine(learned weights, hidden weights), for learning policies.
///
/// After the last swipe, **generalization**: NDCG@10 of each policy's final scores over the
/// items that no policy of the run served to the student (the deck measured after the last
/// checkpoint counts as served), so what a policy learned is judged on cards none of them
/// showed; `linearOracle` gives its ceiling for linear scorers.
///
/// Over all students of a policy: **coverage** (distinct cards served / catalog size),
/// **intra-list diversity** (mean pairwise Euclidean distance of the feature rows within each
/// batch of 10), **novelty** (mean −log₂ of a served item's share of the total popularity; for
/// colleges a school's share of all undergraduates), and **geo-mix error** (for students with
/// a home: the largest gap between a band's share of the cards served and its 50/30/20 target).
///
/// Generic over the matcher: any catalog is evaluated the same way (`ItemMatcher`).
public struct SimulationEvaluator<M: Matcher>: Sendable {
    /// The engine (and its catalog).
    public let engine: SwipeEngine<M>
    /// Per-item popularity (positive): the popularity baseline's order and novelty's base;
    /// nil when the catalog has none (then the popularity policy cannot run and novelty is NaN).
    public let popularity: [Double]?
    /// Feature groups a simulated student may hold strong opinions on; nil: every group.
    public let opinionGroups: Set<String>?
    /// The students' taste: nil for `SimulatedStudent` (hidden weights in the engine's own
    /// model class), else a model outside it that gives each item's like probability for a
    /// student (`SimulationEvaluator.hiddenTaste` for colleges: `HiddenTasteStudent`).
    public var taste: TasteModel?
    /// The prior the `enginePopulationPrior` policy starts from: fitted on students other than
    /// the evaluated ones (`simulateLog` then `PopulationFit.fit`, or a file), nil when that
    /// policy is not run.
    public var population: PopulationPrior?
    /// The engine of `.engineExpandedTerms`: the same catalog and configuration with a matcher
    /// that computes more terms (colleges: `SchoolTermBasis.expanded`); nil leaves it out.
    public var expandedTermsEngine: SwipeEngine<M>?
    /// The engine of `.engineCollaborative`: the population prior and a collaborative model
    /// (`SwipeEngine.withFactors(_:)`), both fitted on students other than the evaluated ones;
    /// nil leaves it out.
    public var collaborativeEngine: SwipeEngine<M>?
    /// A change of taste: after `after` swipes each student's truth becomes a second draw of
    /// `taste` (answers and every later measurement follow it; generalization is judged on it).
    /// The oracles are built before the first swipe and know only the first taste. Nil: tastes
    /// are fixed.
    public var drift: (after: Int, taste: TasteModel)?

    /// A student model outside the engine's model class: the like probability of every item
    /// (by catalog row) for a student, drawn with the generator.
    public typealias TasteModel = @Sendable (DatasetStudent<M.Profile>, inout SplitMix64) throws -> [Double]

    /// The results type.
    public typealias PolicyResult = SimulationPolicyResult

    /// Creates an evaluator.
    ///
    /// - Parameters:
    ///   - engine: The engine under test.
    ///   - popularity: One positive value per item, or nil.
    ///   - opinionGroups: Groups eligible for a simulated student's strong opinions; nil: all.
    public init(engine: SwipeEngine<M>, popularity: [Double]?, opinionGroups: Set<String>?) {
        precondition(popularity.map { $0.count == engine.matcher.catalog.count && $0.allSatisfy { $0 > 0 && $0.isFinite } } ?? true,
                     "popularity needs one positive finite value per item")
        self.engine = engine
        self.popularity = popularity
        self.opinionGroups = opinionGroups
    }
}

extension SimulationEvaluator where M == SchoolMatcher {
    /// `HiddenTasteStudent` as a taste model: cliffs, saturation, a must-have major and a
    /// private taste per school, 15% contradicting their profile.
    ///
    /// - Parameter schools: The catalog the engine serves.
    /// - Returns: The model.
    public static func hiddenTaste(schools: SchoolCatalog) -> TasteModel {
        { student, generator in
            let taste = HiddenTasteStudent(profile: student.profile, schools: schools, using: &generator)
            return (0..<taste.utility.count).map(taste.likeProbability(row:))
        }
    }

    /// An evaluator for colleges: popularity is undergraduate enrollment, opinions are
    /// `SchoolSimulation.opinionGroups`.
    ///
    /// - Parameter engine: The engine under test.
    public init(engine: SwipeEngine<SchoolMatcher>) {
        self.init(engine: engine, popularity: SchoolSimulation.popularity(engine.matcher.schools),
                  opinionGroups: SchoolSimulation.opinionGroups)
    }
}

/// One policy's results of a simulation.
public struct SimulationPolicyResult: Sendable {
    /// The policy.
    public let policy: PolicyKind
    /// Swipe counts at which metrics were taken.
    public let checkpoints: [Int]
    /// NDCG@10 of the policy's ranking of the unseen cards (its posterior top 10 for the
    /// engine) per checkpoint, per student.
    public var ndcg: [[Double]]
    /// NDCG@10 of the cards actually served next — the batch as the policy serves it, probes
    /// and bands included — against the best 10 unseen cards, per checkpoint, per student:
    /// what the student gets.
    public var servedNDCG: [[Double]] = []
    /// Generalization, per student: NDCG@10 of the policy's final scores (after the last
    /// swipe) over the items that no policy of the run served to that student, against the 10
    /// best of them — how well what was learned carries over to cards nobody has shown.
    public var generalization: [Double] = []
    /// Precision@10 per checkpoint, per student.
    public var precision: [[Double]]
    /// Like rate of the swipes before each checkpoint (index 0 is empty), per student.
    public var likeRate: [[Double]]
    /// cosine(learned, hidden) per checkpoint, per student (empty for non-learning policies).
    public var cosine: [[Double]]
    /// Distinct cards served over all students / catalog size.
    public var coverage: Double
    /// Mean pairwise feature distance within batches.
    public var diversity: Double
    /// Mean −log₂(enrollment share) of served cards.
    public var novelty: Double
    /// Mean over students with a home of the largest band-share gap from 50/30/20.
    public var geoMixError: Double

    /// The mean of a per-checkpoint metric.
    ///
    /// - Parameter values: Per checkpoint, per student.
    /// - Returns: One mean per checkpoint (NaN where empty).
    public static func means(_ values: [[Double]]) -> [Double] {
        values.map { $0.isEmpty ? .nan : $0.reduce(0, +) / Double($0.count) }
    }
}

extension SimulationEvaluator {
    /// Runs the simulation.
    ///
    /// - Parameters:
    ///   - students: The students (their profiles; hidden weights are drawn from `seed`).
    ///   - swipes: Swipes per student.
    ///   - policies: The policies to compare.
    ///   - seed: The seed.
    ///   - progress: Called after each student with (done, total).
    /// - Returns: One result per policy, in the order given.
    /// - Throws: Errors of the engine on inconsistent input (profiles are validated first).
    /// - Precondition: `.popularity` is only asked for with a `popularity`, and
    ///   `.enginePopulationPrior` with a `population`, `.engineExpandedTerms` with an
    ///   `expandedTermsEngine`, `.engineCollaborative` with a `collaborativeEngine`.
    public func run(students: [DatasetStudent<M.Profile>], swipes: Int, policies: [PolicyKind], seed: UInt64,
                    progress: ((Int, Int) -> Void)? = nil) throws -> [PolicyResult] {
        precondition(swipes >= 0, "swipes must not be negative")
        precondition(popularity != nil || !policies.contains(.popularity), "the popularity policy needs a popularity")
        precondition(population != nil || !policies.contains(.enginePopulationPrior), "engine_population_prior needs a population")
        precondition(expandedTermsEngine != nil || !policies.contains(.engineExpandedTerms), "engine_expanded_terms needs its engine")
        precondition(collaborativeEngine != nil || !policies.contains(.engineCollaborative), "engine_collaborative needs its engine")
        let populationEngine = try population.map { prior throws(DataError) in try engine.withPopulation(prior) }
        let catalog = engine.matcher.catalog
        let checkpoints = Array(stride(from: 0, through: swipes, by: 10)) + (swipes % 10 == 0 ? [] : [swipes])
        var results = policies.map { policy in
            PolicyResult(policy: policy, checkpoints: checkpoints, ndcg: checkpoints.map { _ in [] },
                         precision: checkpoints.map { _ in [] }, likeRate: checkpoints.map { _ in [] },
                         cosine: checkpoints.map { _ in [] }, coverage: 0, diversity: 0, novelty: 0, geoMixError: 0)
        }
        var served = policies.map { _ in Set<Int>() }
        var diversity = policies.map { _ in (sum: 0.0, count: 0) }
        var novelty = policies.map { _ in (sum: 0.0, count: 0) }
        var geo = policies.map { _ in (sum: 0.0, count: 0) }
        let totalPopularity = popularity?.reduce(0, +) ?? 0
        let popularityScores = popularity?.map { Float($0) } ?? []
        var rng = SplitMix64(seed: seed)
        for r in results.indices { results[r].servedNDCG = checkpoints.map { _ in [] } }
        for (index, student) in students.enumerated() {
            // The truth: every card's like probability, from hidden weights in the engine's
            // model class or from a taste model outside it.
            let resolved = try engine.matcher.student(student.profile)
            let (gains, hiddenWeights) = try truth(for: student, resolved: resolved, using: &rng)
            let drifted: [Double]? = try drift.map { drift in
                let later = try drift.taste(student, &rng)
                precondition(later.count == catalog.count, "a taste model gives one probability per item")
                return later
            }
            let answerSeed = rng.next(), policySeed = rng.next()
            let relevantCount = Self.relevantCount(catalogSize: catalog.count)
            // For generalization: every row any policy served this student, and each policy's
            // final scores.
            var servedByAny = Set<Int>()
            var finalScores: [[Float]] = []
            for (p, kind) in policies.enumerated() {
                var policy = try makePolicy(kind, student: student, resolved: resolved, popularity: popularityScores,
                                            gains: gains, seed: policySeed, populationEngine: populationEngine)
                var answers = SplitMix64(seed: answerSeed)
                // The truth now: the first taste, then the drifted one (`drift`).
                var current = gains
                var seen = Set<Int>(), likes = 0, sinceCheckpoint = 0
                var bands = [0, 0, 0]
                func measure(_ c: Int) {
                    let top = policy.ranking(limit: 10)
                    var masked = current
                    for row in seen { masked[row] = -1 }
                    let unseenTruth = masked.map(Float.init)
                    let idealRows = unseenTruth.topIndices(10)
                    let relevant = Set(unseenTruth.topIndices(relevantCount))
                    results[p].ndcg[c].append(Self.ndcg(ranking: top, ideal: idealRows, gains: current))
                    results[p].precision[c].append(RankingMetrics.precision(ranking: top, relevant: relevant, k: 10))
                    if c > 0 { results[p].likeRate[c].append(sinceCheckpoint > 0 ? Double(likes) / Double(sinceCheckpoint) : 0) }
                    if let learned = policy.learnedWeights, let hiddenWeights, learned.count >= hiddenWeights.count {
                        // A policy with more terms (engine_expanded_terms) is compared on the main
                        // engine's coordinates: its extra terms come after them.
                        results[p].cosine[c].append(VectorMath.cosine(Array(learned.prefix(hiddenWeights.count)), hiddenWeights))
                    }
                    likes = 0
                    sinceCheckpoint = 0
                }
                // NDCG of a served batch in the order served, against the best unseen cards.
                func servedQuality(_ batch: [Int]) -> Double {
                    var masked = current
                    for row in seen { masked[row] = -1 }
                    return Self.ndcg(ranking: batch, ideal: masked.map(Float.init).topIndices(batch.count), gains: current)
                }
                measure(0)
                var done = 0
                while done < swipes {
                    let batch = try policy.serve(count: min(10, swipes - done))
                    if batch.isEmpty { break }
                    if let c = checkpoints.firstIndex(of: done), batch.count == 10 || done + batch.count == swipes {
                        results[p].servedNDCG[c].append(servedQuality(batch))
                    }
                    diversity[p].sum += Self.meanPairwiseDistance(batch, catalog.features)
                    diversity[p].count += 1
                    for row in batch {
                        // The same logistic choice as SimulatedStudent.swipe, from the precomputed truth.
                        let liked = Double.random(in: 0..<1, using: &answers) < current[row]
                        try policy.observe(row: row, liked: liked)
                        seen.insert(row)
                        served[p].insert(row)
                        if let popularity {
                            novelty[p].sum += -log2(popularity[row] / totalPopularity)
                            novelty[p].count += 1
                        }
                        if let preferred = resolved.preferredDistanceMiles {
                            let band = GeoBand.band(distance: resolved.distances[row], preferred: preferred,
                                                    expansion: engine.configuration.expansion)
                            bands[GeoBand.allCases.firstIndex(of: band)!] += 1
                        }
                        if liked { likes += 1 }
                        sinceCheckpoint += 1
                        done += 1
                        if let drift, let drifted, done == drift.after { current = drifted }
                        if let c = checkpoints.firstIndex(of: done), c > 0 { measure(c) }
                    }
                }
                // The deck the student would get next, after the last checkpoint (served only to be
                // measured).
                if done == swipes, let c = checkpoints.firstIndex(of: done) {
                    let next = try policy.serve(count: 10)
                    if !next.isEmpty { results[p].servedNDCG[c].append(servedQuality(next)) }
                    servedByAny.formUnion(next)
                }
                servedByAny.formUnion(seen)
                finalScores.append(policy.scores)
                if resolved.preferredDistanceMiles != nil && done > 0 {
                    let shares = engine.configuration.bandShares
                    geo[p].sum += (0..<3).map { abs(Double(bands[$0]) / Double(done) - shares[$0]) }.max()!
                    geo[p].count += 1
                }
            }
            let unserved = (0..<catalog.count).filter { !servedByAny.contains($0) }
            for p in policies.indices {
                results[p].generalization.append(Self.ndcg(scores: unserved.map { finalScores[p][$0] },
                                                           gains: unserved.map { (drifted ?? gains)[$0] }, k: 10))
            }
            progress?(index + 1, students.count)
        }
        for p in policies.indices {
            results[p].coverage = Double(served[p].count) / Double(catalog.count)
            results[p].diversity = diversity[p].count > 0 ? diversity[p].sum / Double(diversity[p].count) : 0
            results[p].novelty = novelty[p].count > 0 ? novelty[p].sum / Double(novelty[p].count) : .nan
            results[p].geoMixError = geo[p].count > 0 ? geo[p].sum / Double(geo[p].count) : 0
        }
        return results
    }

    /// How many of a student's truly best unseen cards count as relevant for precision@10: a tenth of
    /// the catalog, at least 10 and at most 50 (so a 2,294-school catalog uses 50, an 80-item one 10).
    ///
    /// - Parameter catalogSize: N.
    /// - Returns: R.
    public static func relevantCount(catalogSize: Int) -> Int { min(50, max(10, catalogSize / 10)) }

    /// A student's truth: every item's like probability — from the `taste` model, or from
    /// hidden weights in the engine's class (`SimulatedStudent`, deviation 2), which are returned
    /// too.
    ///
    /// - Parameters:
    ///   - student: The student.
    ///   - resolved: The student resolved by the matcher.
    ///   - rng: Draws the taste.
    /// - Returns: One probability per item, and the hidden weights (nil for a taste model).
    /// - Throws: Errors of the taste model or of the profile.
    func truth(for student: DatasetStudent<M.Profile>, resolved: M.Student,
               using rng: inout SplitMix64) throws -> (gains: [Double], hiddenWeights: [Double]?) {
        let catalog = engine.matcher.catalog
        if let taste {
            let gains = try taste(student, &rng)
            precondition(gains.count == catalog.count, "a taste model gives one probability per item")
            return (gains, nil)
        }
        let simulated = try SimulatedStudent(profile: student.profile, engine: engine, deviation: 2.0,
                                             opinionGroups: opinionGroups, using: &rng)
        let d = catalog.dimension
        let hidden = PreferenceWeights(features: simulated.hiddenWeights[..<d].map(Float.init),
                                       terms: simulated.hiddenWeights[d...].map(Float.init))
        var truth: [Float] = []
        catalog.scores(weights: hidden, terms: resolved.terms, into: &truth)
        return (truth.map { engine.matcher.calibration.matchScore(raw: Double($0)) }, simulated.hiddenWeights)
    }

    /// NDCG@k of the top k by `scores` (ties to the lower index) against the k best `gains`.
    ///
    /// - Parameters:
    ///   - scores: One score per item.
    ///   - gains: One gain per item, ≥ 0.
    ///   - k: The cut-off.
    /// - Returns: DCG / ideal DCG, 0 when the ideal is 0.
    /// - Complexity: O(n log k).
    static func ndcg(scores: [Float], gains: [Double], k: Int) -> Double {
        ndcg(ranking: scores.topIndices(k), ideal: gains.map(Float.init).topIndices(k), gains: gains)
    }

    /// DCG of `ranking` over DCG of `ideal` (both rows, best first), each row's gain from
    /// `gains`; 0 when the ideal's is 0.
    static func ndcg(ranking: [Int], ideal: [Int], gains: [Double]) -> Double {
        func dcg(_ rows: [Int]) -> Double { rows.enumerated().reduce(0.0) { $0 + gains[$1.element] / log2(Double($1.offset + 2)) } }
        let best = dcg(ideal)
        return best > 0 ? dcg(ranking) / best : 0
    }

    /// The linear oracle's scores for a student: `zᵀw` of the best logistic fit of `gains` over
    /// every item's vector.
    func oracleScores(resolved: M.Student, gains: [Double]) throws -> [Float] {
        let catalog = engine.matcher.catalog
        var vectors: [Double] = []
        for row in 0..<catalog.count { vectors += engine.combinedVector(row: row, student: resolved) }
        let fit = try LinearOracle.fit(vectors: vectors, count: catalog.count, targets: gains.map { min(1, max(0, $0)) })
        let d = fit.weights.count
        return (0..<catalog.count).map { i in
            var s = 0.0
            for j in 0..<d { s += vectors[i * d + j] * fit.weights[j] }
            return Float(s)
        }
    }

    func makePolicy(_ kind: PolicyKind, student: DatasetStudent<M.Profile>, resolved: M.Student, popularity: [Float],
                    gains: [Double], seed: UInt64, populationEngine: SwipeEngine<M>?) throws -> any RankingPolicy {
        switch kind {
        case .enginePopulationPrior:
            return try EnginePolicy(name: kind.rawValue, engine: populationEngine!, student: student, seed: seed)
        case .engineExpandedTerms:
            return try EnginePolicy(name: kind.rawValue, engine: expandedTermsEngine!, student: student, seed: seed)
        case .engineCollaborative:
            return try EnginePolicy(name: kind.rawValue, engine: collaborativeEngine!, student: student, seed: seed)
        case .engine:
            return try EnginePolicy(name: kind.rawValue, engine: engine, student: student, seed: seed)
        case .engineNoProbes:
            return try EnginePolicy(name: kind.rawValue, engine: engine.reconfigured { $0.probeInterval = Int.max }, student: student, seed: seed)
        case .engineBoundaryProbes:
            return try EnginePolicy(name: kind.rawValue, engine: engine.reconfigured { $0.probeCandidates = .boundary },
                                    student: student, seed: seed)
        case .engineStudentBias:
            return try EnginePolicy(name: kind.rawValue, engine: engine.reconfigured { $0.studentBias = true }, student: student, seed: seed)
        case .engineBandOrder:
            return try EnginePolicy(name: kind.rawValue, engine: engine.reconfigured { $0.deckOrder = .bandPlan }, student: student, seed: seed)
        case .engineNoGeoMix:
            return try EnginePolicy(name: kind.rawValue, engine: engine.reconfigured { $0.geographicMixing = false }, student: student, seed: seed)
        case .profileOnly:
            var scores: [Float] = []
            engine.matcher.catalog.scores(weights: engine.matcher.coldStartWeights(for: resolved), terms: resolved.terms,
                                                  into: &scores)
            return StaticPolicy(name: kind.rawValue, scores: scores)
        case .popularity:
            return StaticPolicy(name: kind.rawValue, scores: popularity)
        case .naiveSGD:
            return NaiveSGDPolicy(name: kind.rawValue, engine: engine, student: resolved)
        case .engineNoLearning:
            return try EngineWithoutLearningPolicy(name: kind.rawValue, engine: engine, student: student, seed: seed)
        case .naiveSGDEngineServing:
            return try NaiveLearnerEngineServingPolicy(name: kind.rawValue, engine: engine, student: student,
                                                       resolved: resolved, seed: seed)
        case .constrainedOracle:
            return ConstrainedOraclePolicy(name: kind.rawValue, engine: engine, student: resolved, gains: gains)
        case .linearOracle:
            return StaticPolicy(name: kind.rawValue, scores: try oracleScores(resolved: resolved, gains: gains))
        case .random:
            var rng = SplitMix64(seed: seed)
            return StaticPolicy(name: kind.rawValue, scores: (0..<engine.matcher.catalog.count).map { _ in Float.random(in: 0..<1, using: &rng) })
        }
    }

    static func meanPairwiseDistance(_ rows: [Int], _ x: Matrix) -> Double {
        guard rows.count > 1 else { return 0 }
        var sum = 0.0, pairs = 0
        for a in 0..<rows.count {
            for b in (a + 1)..<rows.count {
                var d2: Float = 0
                for j in 0..<x.columns { let t = x[rows[a], j] - x[rows[b], j]; d2 += t * t }
                sum += Double(d2.squareRoot())
                pairs += 1
            }
        }
        return sum / Double(pairs)
    }
}
