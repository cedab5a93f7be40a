import Foundation
import SwipeRank
import SwipeRankNumerics

/// Evaluates policies on logged interactions: each student's swipes in time order, split in
/// time (the first `trainFraction` to learn from, the rest held out).
///
/// Policies: **engine** (the engine's learner, `PreferenceModel`, fed the training swipes),
/// **profile_only** (the cold start), **popularity** (likes per school over all students'
/// training swipes) and **random**; for an engine without a population prior of its own also
/// **population_prior** (a `PopulationPrior` fitted on every student's training swipes, never a
/// held-out one: the shifted cold start plus the item effects, no learning) and
/// **engine_population_prior** (that prior, then the student's training swipes learned on top)
/// — whether learning keeps what a strong prior knows (with `exposureWeight`, that prior also
/// ranks by how often people chose each item: `PopulationFit`; a swipe AUC is then computed
/// without the exposure effects, as a card's match score is); for an engine without either, also
/// **engine_student_bias** and **engine_population_prior_bias** (the same two learners with an
/// intercept per student, `EngineConfiguration.studentBias`, the prior fitted under it). Each
/// ranks every school the student has not swiped in training (a full ranking, no sampled
/// negatives) and is scored on the held-out likes: precision@k, recall@k, NDCG@k, MAP@k, MRR and
/// AUC (held-out likes against every other unswiped school). In a log where people chose what
/// to rate, those reward predicting *what* a student rates as much as whether they like it;
/// **swipe_auc** asks only the second — held-out likes against held-out dislikes, the question
/// a deck asks of every card it shows.
///
/// **Replay / IPS**: where the log has propensities, the like rate a policy would get is
/// estimated from the held-out swipes by the replay method (Li et al., WSDM 2011) in its
/// self-normalized inverse-propensity form: at each logged swipe the policy picks its top
/// school among those not yet swiped; over the swipes where that pick is the logged card,
/// `Σ like/p ÷ Σ 1/p`. The estimate is only as good as the log's overlap with the policy: a
/// log written by the engine (as `swiperank generate` does) is deterministic except at probes,
/// so it favors policies that pick like the engine — the number of matching swipes is reported
/// with the estimate for that reason.
public struct ReplayEvaluator<M: Matcher>: Sendable {
    /// The engine whose learner and catalog are used.
    public let engine: SwipeEngine<M>
    /// The exposure weight of the population prior the replay fits (0 by default: right for a
    /// log the engine served; `.chosen` for a log of swipes people chose, such as ratings).
    public var exposureWeight: PopulationFit.ExposureWeight = .fixed(0)
    /// Whether the replay also fits a collaborative model on the training swipes
    /// (`FactorFit`, settings and γ chosen by `FactorFit.chooseOptions`) and adds the policies
    /// **collaborative_affinity** (its affinity alone: implicit ALS learned online) and
    /// **engine_collaborative** (the prior engine's learned scores plus γ × affinity).
    public var collaborative = false
    /// The fit settings the collaborative model's choice tries.
    public var factorCandidates: [FactorFit.Options] = FactorFit.optionCandidates

    /// The results type.
    public typealias PolicyResult = ReplayPolicyResult

    /// Creates an evaluator.
    ///
    /// - Parameter engine: The engine.
    public init(engine: SwipeEngine<M>) { self.engine = engine }
}

/// The results of one policy in a replay.
public struct ReplayPolicyResult: Sendable {
    /// The policy name.
    public let policy: String
    /// Per-student metric values, by metric name (`precision@k`, `recall@k`, `ndcg@k`,
    /// `map@k`, `mrr`, `auc`, `swipe_auc`).
    public var metrics: [String: [Double]]
    /// Per metric, the student id of each value in `metrics` (in the same order): for pairing
    /// with another tool's per-student results (`scripts/anchors`).
    public var students: [String: [String]] = [:]
    /// The IPS estimate of the like rate, if any logged swipe matched.
    public var ipsLikeRate: Double?
    /// Logged held-out swipes where the policy's pick matched the logged card.
    public var ipsMatches: Int
    /// Students for whom the policy's scores of the candidates were all equal (its metrics are
    /// then chance by construction: ties count in expectation).
    public var constantScores = 0

    /// Adds one student's value of a metric.
    mutating func append(_ metric: String, _ value: Double, student: String) {
        metrics[metric, default: []].append(value)
        students[metric, default: []].append(student)
    }

    /// The mean of a metric over students.
    ///
    /// - Parameter name: The metric.
    /// - Returns: The mean, or NaN without values.
    public func mean(_ name: String) -> Double {
        guard let values = metrics[name], !values.isEmpty else { return .nan }
        return values.reduce(0, +) / Double(values.count)
    }
}

/// What a replay found: every policy's results, and how the exposure weight was chosen.
public struct ReplayOutcome: Sendable {
    /// The policies' results, in `ReplayEvaluator.run`'s order.
    public var results: [ReplayPolicyResult]
    /// The exposure weight the population prior used (0 without one).
    public var exposureWeight: Double
    /// The procedure's table, when the weight was chosen (`PopulationFit.ExposureWeight.chosen`).
    public var exposureChoice: PopulationFit.ExposureWeightChoice?
    /// The collaborative model's chosen settings, when `ReplayEvaluator.collaborative` is on.
    public var factorChoice: FactorFit.Choice?
}

extension ReplayEvaluator {
    /// A student's scores under an engine before learning (its cold start) and after the
    /// training swipes, learned as the replay learns them (in the given order, each card told
    /// its population item effect; a swipe the model cannot take is skipped).
    ///
    /// - Parameters:
    ///   - engine: The engine.
    ///   - resolved: The student, resolved by the engine's matcher (once for every engine
    ///     compared: resolving costs O(N)).
    ///   - train: The training swipes, in time order.
    /// - Returns: Raw ranking scores, one per item, before and after.
    /// - Complexity: O(swipes × D² + N × D).
    static func learnedScores(engine: SwipeEngine<M>, student resolved: M.Student, train: [Interaction]) -> (cold: [Float], learned: [Float]) {
        let catalog = engine.matcher.catalog
        var model = engine.coldStartModel(for: resolved)
        let k = resolved.terms.names.count
        var cold: [Float] = [], learned: [Float] = []
        engine.rawScores(weights: model.weights(featureCount: catalog.dimension, termCount: k), student: resolved, into: &cold)
        for x in train {
            guard let row = catalog.row(of: x.itemID) else { continue }
            try? model.observe(engine.learningVector(row: row, student: resolved), liked: x.action == .like,
                               itemOffset: engine.itemOffset(row: row))
        }
        engine.rawScores(weights: model.weights(featureCount: catalog.dimension, termCount: k), student: resolved, into: &learned)
        return (cold, learned)
    }

    /// A student's affinities under an engine's collaborative model after the training swipes,
    /// learned as a session learns them (`FactorPosterior`; all 0 without factors or swipes).
    ///
    /// - Parameters:
    ///   - engine: An engine with factors.
    ///   - train: The training swipes, in time order.
    /// - Returns: One affinity per item.
    /// - Complexity: O(swipes × f² + N × f).
    static func affinities(engine: SwipeEngine<M>, train: [Interaction]) -> [Float] {
        guard let factors = engine.factors else { return [Float](repeating: 0, count: engine.matcher.catalog.count) }
        var posterior = engine.coldStartFactors()
        for x in train {
            guard let row = engine.matcher.catalog.row(of: x.itemID) else { continue }
            engine.observeFactors(&posterior, row: row, liked: x.action == .like)
        }
        return factors.affinities(of: posterior!)
    }

    /// Runs the replay (`replay(students:interactions:k:trainFraction:seed:)`'s results).
    ///
    /// - Parameters:
    ///   - students: The students.
    ///   - interactions: Their logged swipes.
    ///   - k: The cut-off.
    ///   - trainFraction: The share of each student's swipes used for learning.
    ///   - seed: Seeds the random policy.
    /// - Returns: The policies' results.
    /// - Throws: As `replay`.
    public func run(students: [DatasetStudent<M.Profile>], interactions: [Interaction], k: Int = 10,
                    trainFraction: Double = 0.7, seed: UInt64) throws -> [PolicyResult] {
        try replay(students: students, interactions: interactions, k: k, trainFraction: trainFraction, seed: seed).results
    }

    /// Runs the replay.
    ///
    /// - Parameters:
    ///   - students: The students.
    ///   - interactions: Their logged swipes (any order; sorted by time per student here).
    ///   - k: The cut-off.
    ///   - trainFraction: The share of each student's swipes used for learning.
    ///   - seed: Seeds the random policy.
    /// - Returns: Results for engine, profile_only, popularity, random (then population_prior and
    ///   engine_population_prior when the engine has no population prior, and
    ///   engine_student_bias and engine_population_prior_bias when it has neither a prior nor a
    ///   bias), with the exposure weight used and, when chosen, the procedure's table.
    /// - Throws: `DataError` for an interaction naming an unknown student or school.
    /// - Complexity: O(swipes × D² × policies + students × policies × N log N), plus
    ///   `PopulationFit.chooseExposureWeight` when the weight is chosen.
    public func replay(students: [DatasetStudent<M.Profile>], interactions: [Interaction], k: Int = 10,
                       trainFraction: Double = 0.7, seed: UInt64) throws -> ReplayOutcome {
        precondition(k > 0 && trainFraction > 0 && trainFraction < 1, "k > 0 and a train fraction in (0, 1)")
        let catalog = engine.matcher.catalog
        let byID = Dictionary(uniqueKeysWithValues: students.map { ($0.id, $0) })
        var logs: [String: [Interaction]] = [:]
        for x in interactions {
            guard byID[x.studentID] != nil else {
                throw DataError(.unknownReference, source: "interactions", detail: "unknown student \"\(x.studentID)\"")
            }
            guard catalog.row(of: x.itemID) != nil else {
                throw DataError(.unknownReference, source: "interactions", detail: "unknown item \"\(x.itemID)\"")
            }
            logs[x.studentID, default: []].append(x)
        }
        // Split each student's log in time.
        var splits: [(DatasetStudent<M.Profile>, train: [Interaction], test: [Interaction])] = []
        for student in students {
            let log = (logs[student.id] ?? []).sorted { ($0.timestamp, $0.itemID) < ($1.timestamp, $1.itemID) }
            let cut = Int((Double(log.count) * trainFraction).rounded(.down))
            splits.append((student, Array(log[..<cut]), Array(log[cut...])))
        }
        var likeCounts = [Float](repeating: 0, count: catalog.count)
        for (_, train, _) in splits { for x in train where x.action == .like { likeCounts[catalog.row(of: x.itemID)!] += 1 } }

        // A population prior from everyone's training swipes (never a held-out one): the
        // strong prior whose ranking learning must not spoil. Its exposure weight, if chosen,
        // is chosen on the training swipes too.
        let training = splits.flatMap(\.train)
        var choice: PopulationFit.ExposureWeightChoice?
        var beta = 0.0
        if engine.population == nil {
            switch exposureWeight {
            case .fixed(let value): beta = value
            case .chosen:
                choice = try PopulationFit.chooseExposureWeight(engine: engine, students: students, interactions: training, k: k)
                beta = choice!.weight
            }
        }
        let populationEngine = engine.population != nil ? nil
            : try engine.withPopulation(PopulationFit.fit(engine: engine, students: students, interactions: training, exposureWeight: beta))
        // The same learner with an intercept per student (`EngineConfiguration.studentBias`):
        // a student who dislikes most of what they rate moves the intercept, not every weight.
        let biasEngine = engine.configuration.studentBias || engine.population != nil ? nil
            : engine.reconfigured { $0.studentBias = true }
        let biasPopulationEngine = try biasEngine.map {
            try $0.withPopulation(PopulationFit.fit(engine: $0, students: students, interactions: training, exposureWeight: beta))
        }
        // The collaborative model, fitted on the training swipes with settings chosen on them.
        var factorChoice: FactorFit.Choice?
        var factorEngine: SwipeEngine<M>?
        if collaborative {
            let plain = engine.population == nil ? engine : nil
            if let plain {
                factorChoice = try FactorFit.chooseOptions(engine: plain, students: students, interactions: training, exposureWeight: beta,
                                                          candidates: factorCandidates, k: k)
            }
            let options = factorChoice?.options ?? FactorFit.Options()
            let gamma = factorChoice?.weight ?? engine.matcher.calibration.scale
            factorEngine = try (populationEngine ?? engine).withFactors(FactorFit.fit(catalog: catalog, interactions: training, options: options, weight: gamma))
        }
        let names = ["engine", "profile_only", "popularity", "random"]
            + (populationEngine == nil ? [] : ["population_prior", "engine_population_prior"])
            + (biasEngine == nil ? [] : ["engine_student_bias", "engine_population_prior_bias"])
            + (factorEngine == nil ? [] : ["collaborative_affinity", "engine_collaborative"])
        var results = names.map { PolicyResult(policy: $0, metrics: [:], ipsLikeRate: nil, ipsMatches: 0) }
        var ips = names.map { _ in (likes: 0.0, weight: 0.0) }
        var rng = SplitMix64(seed: seed)
        for (student, train, test) in splits {
            let resolved = try engine.matcher.student(student.profile)
            let trainRows = Set(train.map { catalog.row(of: $0.itemID)! })
            func coldAndLearned(_ engine: SwipeEngine<M>) -> (cold: [Float], learned: [Float]) {
                Self.learnedScores(engine: engine, student: resolved, train: train)
            }
            let randomScores = (0..<catalog.count).map { _ in Float.random(in: 0..<1, using: &rng) }
            let plain = coldAndLearned(engine)
            let testLikes = Set(test.filter { $0.action == .like }.map { catalog.row(of: $0.itemID)! })
            var policyScores = [plain.learned, plain.cold, likeCounts, randomScores]
            // Per policy, whether its scores hold exposure effects to take off for a swipe AUC.
            var exposed = [false, false, false, false]
            // Per policy, other scores its swipe AUC is computed from (a ranking-only term left out).
            var matchBase: [Int: [Float]] = [:]
            if let populationEngine {
                // The prior alone (the shifted cold start plus the item effects), then learning
                // from the student's own training swipes on top of it.
                let population = coldAndLearned(populationEngine)
                policyScores += [population.cold, population.learned]
                exposed += [true, true]
            }
            if let biasEngine, let biasPopulationEngine {
                policyScores += [coldAndLearned(biasEngine).learned, coldAndLearned(biasPopulationEngine).learned]
                exposed += [false, true]
            }
            if let factorEngine {
                let affinity = Self.affinities(engine: factorEngine, train: train)
                let base = coldAndLearned(factorEngine).learned
                let gamma = Float(factorEngine.factors!.file.weight)
                policyScores += [affinity, zip(base, affinity).map { $0 + gamma * $1 }]
                // The affinity orders the deck, as exposure does; the match score (and so the
                // swipe AUC) is the prior engine's own.
                exposed += [false, populationEngine != nil]
                matchBase[policyScores.count - 1] = base
            }
            // The held-out swipes themselves, for the question a deck asks of each card shown: will
            // this student like it? (The last answer counts where an item was swiped twice.)
            var heldOut: [Int: Bool] = [:]
            for x in test { heldOut[catalog.row(of: x.itemID)!] = x.action == .like }
            let swipedRows = heldOut.keys.sorted()
            for (p, scores) in policyScores.enumerated() {
                var masked = scores
                for row in trainRows { masked[row] = -.infinity }
                let ranking = masked.topIndices(catalog.count - trainRows.count)
                if !testLikes.isEmpty {
                    // Precision, recall, NDCG and AUC in expectation over tied scores; MAP and MRR
                    // on the ranking with ties to the lower row.
                    let candidates = (0..<catalog.count).filter { !trainRows.contains($0) }
                    let candidateScores = candidates.map { scores[$0] }
                    let tied = RankingMetrics.tieAware(scores: candidateScores, relevant: candidates.map(testLikes.contains), k: k)
                    if RankingMetrics.isConstant(candidateScores) { results[p].constantScores += 1 }
                    results[p].append("precision@\(k)", tied.precision, student: student.id)
                    results[p].append("recall@\(k)", tied.recall, student: student.id)
                    results[p].append("ndcg@\(k)", tied.ndcg, student: student.id)
                    results[p].append("map@\(k)", RankingMetrics.averagePrecision(ranking: ranking, relevant: testLikes, k: k), student: student.id)
                    results[p].append("mrr", RankingMetrics.reciprocalRank(ranking: ranking, relevant: testLikes), student: student.id)
                    if let auc = tied.auc { results[p].append("auc", auc, student: student.id) }
                }
                // Will the student like the card shown: the match score's question, so without
                // the exposure effects (which only order the deck).
                // Both prior engines hold the same exposure effects (same log, same β).
                let matchEngine = exposed[p] ? populationEngine : nil
                let matchSource = matchBase[p] ?? scores
                let matchScores = swipedRows.map { matchEngine?.matchRaw(matchSource[$0], row: $0) ?? matchSource[$0] }
                if let auc = RankingMetrics.tieAware(scores: matchScores, relevant: swipedRows.map { heldOut[$0]! }, k: 1).auc {
                    results[p].append("swipe_auc", auc, student: student.id)
                }
                // IPS over the held-out swipes: the policy's pick among schools not yet swiped.
                var swiped = trainRows
                for x in test {
                    let row = catalog.row(of: x.itemID)!
                    if let propensity = x.propensity {
                        var best = -1, bestScore = -Float.infinity
                        for (i, s) in scores.enumerated() where !swiped.contains(i) && s > bestScore { best = i; bestScore = s }
                        if best == row {
                            results[p].ipsMatches += 1
                            ips[p].likes += (x.action == .like ? 1 : 0) / propensity
                            ips[p].weight += 1 / propensity
                        }
                    }
                    swiped.insert(row)
                }
            }
        }
        for p in names.indices where results[p].ipsMatches > 0 {
            results[p].ipsLikeRate = ips[p].likes / ips[p].weight
        }
        return ReplayOutcome(results: results, exposureWeight: populationEngine?.population?.exposureWeight ?? 0, exposureChoice: choice,
                             factorChoice: factorChoice)
    }
}
