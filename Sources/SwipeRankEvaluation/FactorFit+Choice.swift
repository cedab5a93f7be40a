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
    /// units per logit); 0 is "no collaborative term".
    public static let weightCandidates: [Double] = [0, 1, 4, 16, 64, 128, 256, 512]

    /// What `chooseOptions` found.
    public struct Choice: Sendable {
        /// The chosen settings.
        public let options: Options
        /// The chosen γ, in raw-score units.
        public let weight: Double
        /// Every (settings, γ in scale units) pair's validation NDCG@k, best first.
        public let table: [(options: Options, weight: Double, ndcg: Double)]
        /// Students with a validation like.
        public let students: Int
    }

    /// Chooses the fit's settings and γ by a procedure that never sees a held-out swipe — the
    /// same one `PopulationFit.chooseExposureWeight` follows: each student's swipes split in time
    /// (the last `validationFraction` validate); a population prior (exposure weight `exposureWeight`)
    /// and every candidate's factors fitted on the first parts; each student learns their first
    /// part on top; every (settings, γ) ranks the items the student did not swipe there, scored
    /// by tie-aware NDCG@k on the validation likes. Pass training swipes only.
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
    /// - Returns: The choice (the best mean NDCG@k; on a tie, the earlier candidate and the smaller γ).
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
        var sums = [[Double]](repeating: [Double](repeating: 0, count: weights.count), count: candidates.count)
        for v in cases {
            for (c, model) in models.enumerated() {
                let affinity = ReplayEvaluator<M>.affinities(engine: model, train: v.train)
                for (w, gamma) in weights.enumerated() {
                    let g = Float(gamma * scale)
                    sums[c][w] += RankingMetrics.tieAware(scores: v.rows.map { v.scores[$0] + g * affinity[$0] }, relevant: v.relevant, k: k).ndcg
                }
            }
        }
        let counted = cases.count
        var table: [(options: Options, weight: Double, ndcg: Double)] = []
        for c in candidates.indices {
            for w in weights.indices { table.append((candidates[c], weights[w], counted == 0 ? 0 : sums[c][w] / Double(counted))) }
        }
        // Stable: on equal NDCG the earlier candidate and the smaller γ stay first.
        let ranked = table.enumerated().sorted { $0.element.ndcg > $1.element.ndcg || ($0.element.ndcg == $1.element.ndcg && $0.offset < $1.offset) }
            .map(\.element)
        return Choice(options: ranked[0].options, weight: ranked[0].weight * scale, table: ranked, students: counted)
    }
}
