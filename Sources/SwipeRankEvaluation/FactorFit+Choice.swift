import Foundation
import SwipeRank
import SwipeRankNumerics

extension FactorFit {
    /// The fit settings `chooseOptions` tries by default: the confidence of a like, whether a
    /// dislike counts as a strong negative or as an item never shown, and the ridge. Small on
    /// purpose: each is a full fit, and the choice must stay cheap enough to run on every
    /// replay.
    public static let optionCandidates: [Options] = {
        var candidates: [Options] = []
        for dimension in [16, 32, 64] {
            for confidence in [3.0, 10, 30] {
                for regularization in [10.0, 30, 100] {
                    var o = Options()
                    o.dimension = dimension
                    o.confidence = confidence
                    o.dislikeConfidence = 0
                    o.regularization = regularization
                    candidates.append(o)
                }
            }
        }
        return candidates
    }()

    /// The weights γ `chooseOptions` tries, in units of the matcher's calibration scale (raw-score
    /// units per logit); 0 is "no collaborative term". Steps of 2: each γ costs one ranking per
    /// validation student, not a fit, and a grid in steps of 4 had missed γ = 2 on the peer-group
    /// family's log (`docs/evaluation.md`).
    public static let weightCandidates: [Double] = [0, 0.5, 1, 2, 4, 8, 16, 32, 64, 128, 256, 512]

    /// What `chooseOptions` found.
    public struct Choice: Sendable {
        /// The chosen settings.
        public let options: Options
        /// The chosen γ, in raw-score units.
        public let weight: Double
        /// The chosen γ, in units of the calibration scale (a row of `table`).
        public let scaleWeight: Double
        /// The chosen row's validation NDCG@k.
        public let ndcg: Double
        /// Every (settings, γ in scale units) pair's validation NDCG@k, best first.
        public let table: [(options: Options, weight: Double, ndcg: Double)]
        /// Students with a validation like.
        public let students: Int
        /// The best row with γ > 0 against γ = 0 (the prior alone) on the same validation
        /// students: the mean of the paired NDCG@k differences and its standard error; nil when
        /// the weights lack 0 or have nothing else.
        public let factorGain: (mean: Double, standardError: Double)?
    }

    /// Chooses the fit's settings and γ by a procedure that never sees a held-out swipe — the
    /// same one `PopulationFit.chooseExposureWeight` follows: each student's swipes split in time
    /// (the last `validationFraction` validate); a population prior (exposure weight `exposureWeight`)
    /// and every candidate's factors fitted on the first parts; each student learns their first
    /// part on top; every (settings, γ) ranks the items the student did not swipe there, scored
    /// by tie-aware NDCG@k on the validation likes. Pass training swipes only.
    ///
    /// The collaborative term is taken only if the best (settings, γ > 0) beats γ = 0 by more
    /// than one standard error of the paired differences (the "one standard error" rule of
    /// cross-validation, applied to the one decision that adds a model): with a small log the
    /// best of many rows wins by noise, and the prior alone is the simpler, never-worse answer.
    /// (On the families' 200-student logs the best γ > 0 led γ = 0 by 0.001–0.004 NDCG, under one
    /// standard error, and served a little worse at 40 swipes; on their 2,000-student logs it leads
    /// by 0.01–0.02, five standard errors or more, and serves better.)
    ///
    /// - Parameters:
    ///   - engine: The engine (without a population prior or factors).
    ///   - students: The students.
    ///   - interactions: Their training swipes.
    ///   - signals: Reactions and dwell times, for candidates that weigh answers by them
    ///     (`Options.reactionBoost`, `dwellBoost`); each fit reads those about its own swipes.
    ///   - exposureWeight: β of the prior the factors are added to.
    ///   - candidates: Fit settings to try (at least one).
    ///   - weights: γ values in units of the calibration scale (≥ 0, at least one).
    ///   - validationFraction: In (0, 1).
    ///   - k: The cut-off.
    /// - Returns: The choice: the best mean NDCG@k (on a tie, the earlier candidate and the
    ///   smaller γ), or γ = 0 with the first candidate's settings when the best γ > 0 does not
    ///   clear the rule above.
    /// - Throws: Errors of the fits.
    /// - Complexity: O(candidates × fit + students × candidates × (N f + weights × N log N)).
    public static func chooseOptions<M: Matcher>(engine: SwipeEngine<M>, students: [DatasetStudent<M.Profile>], interactions: [Interaction],
                                                signals: [EngagementSignal] = [], exposureWeight: Double, candidates: [Options] = optionCandidates,
                                                weights: [Double] = weightCandidates, validationFraction: Double = 0.3,
                                                k: Int = 10) throws -> Choice {
        precondition(!candidates.isEmpty && !weights.isEmpty && weights.allSatisfy { $0 >= 0 && $0.isFinite }, "candidates and weights")
        precondition(validationFraction > 0 && validationFraction < 1 && k > 0, "a validation fraction in (0, 1) and k > 0")
        precondition(engine.population == nil && engine.factors == nil, "choose with a plain engine")
        let catalog = engine.matcher.catalog
        let scale = engine.matcher.calibration.scale
        let (fitPart, fitByStudent, validation) = PopulationFit.timeSplit(interactions, validationFraction: validationFraction)
        let prior = try engine.withPopulation(PopulationFit.fit(engine: engine, students: students, interactions: fitPart,
                                                                exposureWeight: exposureWeight))
        let models = try candidates.map { try prior.withFactors(fit(catalog: catalog, interactions: fitPart, signals: signals, options: $0)) }
        let cases = try PopulationFit.validationCases(prior: prior, students: students, fitByStudent: fitByStudent, validation: validation)
        // Per (candidate, weight), each validation student's NDCG@k, for the paired rule below.
        var scores = [[[Double]]](repeating: [[Double]](repeating: [], count: weights.count), count: candidates.count)
        for v in cases {
            for (c, model) in models.enumerated() {
                let affinity = ReplayEvaluator<M>.affinities(engine: model, train: v.train)
                for (w, gamma) in weights.enumerated() {
                    let g = Float(gamma * scale)
                    scores[c][w].append(RankingMetrics.tieAware(scores: v.rows.map { v.scores[$0] + g * affinity[$0] }, relevant: v.relevant, k: k).ndcg)
                }
            }
        }
        let counted = cases.count
        let (ranked, chosen, gain) = select(scores: scores, weights: weights)
        let table = ranked.map { (options: candidates[$0.c], weight: weights[$0.w], ndcg: $0.ndcg) }
        return Choice(options: candidates[chosen.c], weight: weights[chosen.w] * scale, scaleWeight: weights[chosen.w], ndcg: chosen.ndcg, table: table,
                      students: counted, factorGain: gain)
    }

    /// The selection of `chooseOptions` on its validation scores: every (candidate, weight) row
    /// ranked by mean NDCG (stable: the earlier candidate and the smaller γ first on a tie), and
    /// the row chosen by the one-standard-error rule on γ = 0.
    ///
    /// - Parameters:
    ///   - scores: Per candidate, per weight, each validation student's NDCG (the same students,
    ///     in the same order, in every row).
    ///   - weights: The weights, in the order of each candidate's rows.
    /// - Returns: The ranked rows, the chosen row, and the best γ > 0 row's paired gain over γ = 0.
    static func select(scores: [[[Double]]], weights: [Double])
        -> (ranked: [(c: Int, w: Int, ndcg: Double)], chosen: (c: Int, w: Int, ndcg: Double), gain: (mean: Double, standardError: Double)?) {
        func mean(_ x: [Double]) -> Double { x.isEmpty ? 0 : x.reduce(0, +) / Double(x.count) }
        var rows: [(c: Int, w: Int, ndcg: Double)] = []
        for c in scores.indices {
            for w in weights.indices { rows.append((c, w, mean(scores[c][w]))) }
        }
        let ranked = rows.enumerated().sorted { $0.element.ndcg > $1.element.ndcg || ($0.element.ndcg == $1.element.ndcg && $0.offset < $1.offset) }
            .map(\.element)
        guard let zero = weights.firstIndex(of: 0), let best = ranked.first(where: { weights[$0.w] > 0 }) else { return (ranked, ranked[0], nil) }
        // Every γ = 0 row ranks by the prior alone, whatever the settings: the same scores.
        let d = zip(scores[best.c][best.w], scores[best.c][zero]).map { $0 - $1 }
        let n = Double(d.count), gain = mean(d)
        let variance = d.count < 2 ? Double.infinity : d.reduce(0) { $0 + ($1 - gain) * ($1 - gain) } / (n - 1)
        let standardError = (variance / n).squareRoot()
        return (ranked, gain > standardError ? best : rows[zero], (gain, standardError))
    }
}
