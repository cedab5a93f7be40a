import Foundation
import SwipeRank
import SwipeRankNumerics

/// Fits a `PopulationPrior` from an interaction log (`swiperank fit-prior`).
///
/// 1. Each student's swipes, in time order, teach a fresh model from their own cold start,
///    exactly as a session learns them (the engine's learner, forgetting in the stable phase).
/// 2. **Weight shift** (empirical Bayes): the average over students of (posterior mean − cold
///    start) over `[features, terms]`. Each student's shift is already shrunk toward the cold
///    start, so the average is a conservative estimate of how the population differs from it.
/// 3. **Item effects**: with each student's final model, the residual `y − p` of every swipe
///    and its curvature `p(1 − p)`; per item, one Newton step from 0 of a logit intercept with
///    prior precision `itemPrecision / 4` (that many swipes at p = ½), `b = Σ(y − p) / (Σ p(1 − p)
///    + itemPrecision / 4)`, in raw-score units `b × scale`. An item swiped a few times gets
///    an effect near 0; one the population likes more than its features predict gets a
///    positive one.
public enum PopulationFit {
    /// Fits the prior.
    ///
    /// - Parameters:
    ///   - engine: The engine whose learner and cold start are used (without a population prior
    ///     of its own).
    ///   - students: The students of the log (their profiles give the cold start and terms).
    ///   - interactions: Their swipes, in any order.
    ///   - itemPrecision: The item effects' shrinkage, in swipes (> 0).
    ///   - exposureWeight: β ≥ 0, the weight of the exposure effects (0: none, for logs the
    ///     engine served).
    ///   - strengths: How strongly each answer was meant (`AnswerStrengths`, from the app's
    ///     reactions and dwell times): each swipe teaches its student's model with that weight,
    ///     and counts with it in its item's effect (nil: every answer 1).
    /// - Returns: The prior.
    /// - Throws: `DataError` for an interaction naming an unknown student or item, a profile
    ///   the matcher rejects, or a non-finite model state.
    /// - Complexity: O(swipes × D²) for the models, O(swipes × D) for the residuals.
    public static func fit<M: Matcher>(engine: SwipeEngine<M>, students: [DatasetStudent<M.Profile>], interactions: [Interaction],
                                       itemPrecision: Double = 5, exposureWeight: Double = 0,
                                       strengths: AnswerStrengths? = nil) throws -> PopulationPrior {
        precondition(engine.population == nil, "fit a population prior with an engine that has none")
        precondition(itemPrecision > 0 && itemPrecision.isFinite, "itemPrecision must be positive")
        precondition(exposureWeight >= 0 && exposureWeight.isFinite, "exposureWeight must be finite and not negative")
        let catalog = engine.matcher.catalog
        let byID = Dictionary(students.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        var logs: [String: [(row: Int, x: Interaction)]] = [:]
        for x in interactions {
            guard byID[x.studentID] != nil else {
                throw DataError(.unknownReference, source: "interactions", detail: "unknown student \"\(x.studentID)\"")
            }
            guard let row = catalog.row(of: x.itemID) else {
                throw DataError(.unknownReference, source: "interactions", detail: "unknown item \"\(x.itemID)\"")
            }
            logs[x.studentID, default: []].append((row, x))
        }
        let d = catalog.dimension, k = engine.matcher.termNames.count
        var shift = [Double](repeating: 0, count: d + k)
        var residual = [Double](repeating: 0, count: catalog.count), curvature = [Double](repeating: 0, count: catalog.count)
        var fitted = 0, swipes = 0
        var swipedBy = [Int](repeating: 0, count: catalog.count)  // students who swiped each item
        let scale = engine.matcher.calibration.scale
        // Students in a fixed order (the log's first appearance does not matter).
        for id in logs.keys.sorted() {
            let log = logs[id]!.sorted { ($0.x.timestamp, $0.x.itemID) < ($1.x.timestamp, $1.x.itemID) }
            let student = try engine.matcher.student(byID[id]!.profile)
            var model = engine.coldStartModel(for: student)
            var vectors: [[Double]] = []
            for (n, entry) in log.enumerated() {
                let z = engine.learningVector(row: entry.row, student: student)
                let stable = LearningPhase(totalSwipes: n + 1) == .stable
                do {
                    try model.observe(z, liked: entry.x.action == .like, forgetting: stable ? engine.configuration.stableForgetting : 1,
                                      weight: strengths?.factor(studentID: id, itemID: entry.x.itemID) ?? 1)
                } catch {
                    throw DataError(.invalidValue, source: "interactions", detail: "student \"\(id)\": \(error.description)")
                }
                vectors.append(z)
            }
            for i in 0..<(d + k) { shift[i] += model.mean[i] - model.priorMean[i] }
            for (entry, z) in zip(log, vectors) {
                let p = model.likeProbability(z)
                // Weighted like the model's update (× 1 exactly without signals).
                let w = strengths?.factor(studentID: id, itemID: entry.x.itemID) ?? 1
                residual[entry.row] += w * ((entry.x.action == .like ? 1 : 0) - p)
                curvature[entry.row] += w * (p * (1 - p))
            }
            for row in Set(log.map(\.row)) { swipedBy[row] += 1 }
            fitted += 1
            swipes += log.count
        }
        if fitted > 0 { for i in shift.indices { shift[i] /= Double(fitted) } }
        let effects = (0..<catalog.count).map { scale * residual[$0] / (curvature[$0] + itemPrecision / 4) }
        var exposure: [Double]?
        if exposureWeight > 0 && catalog.count > 0 {
            let logShare = swipedBy.map { log((Double($0) + 0.5) / (Double(fitted) + 1)) }
            let mean = logShare.reduce(0, +) / Double(logShare.count)
            exposure = logShare.map { exposureWeight * scale * ($0 - mean) }
        }
        return PopulationPrior(catalogFingerprint: engine.catalogFingerprint, featureCount: d, termNames: engine.matcher.termNames,
                               weightShift: shift, itemEffects: effects, students: fitted, swipes: swipes, itemPrecision: itemPrecision,
                               exposureWeight: exposure == nil ? 0 : exposureWeight, exposureEffects: exposure)
    }

    /// How a fit on a log weighs exposure.
    public enum ExposureWeight: Sendable, Hashable {
        /// This β (0: no exposure term).
        case fixed(Double)
        /// β chosen by `chooseExposureWeight` on the swipes fitted on.
        case chosen
    }

    /// The exposure weights `chooseExposureWeight` tries by default.
    public static let exposureWeightCandidates: [Double] = [0, 0.5, 1, 1.5, 2, 3, 4]

    /// What `chooseExposureWeight` found.
    public struct ExposureWeightChoice: Sendable, Hashable {
        /// The chosen β: the candidate with the best validation NDCG@k (the smallest on a tie).
        public let weight: Double
        /// Every candidate with its mean validation NDCG@k, in the order tried.
        public let candidates: [Candidate]
        /// Students with a validation like (those the means are over).
        public let students: Int

        /// One candidate's result.
        public struct Candidate: Sendable, Hashable {
            /// β.
            public let weight: Double
            /// Mean NDCG@k over the validation students.
            public let ndcg: Double
        }
    }

    /// One validation student of a choice procedure: what the prior engine ranks after the
    /// student's fit part, over the items they did not swipe there.
    struct ValidationCase {
        /// The student's fit-part swipes, in time order.
        let train: [Interaction]
        /// Raw scores after learning `train` on the prior engine, one per item.
        let scores: [Float]
        /// The candidate rows (not swiped in `train`), ascending.
        let rows: [Int]
        /// Per candidate row, whether it is a validation like.
        let relevant: [Bool]
    }

    /// The validation students (those with a validation like), in id order, learned on `prior`
    /// exactly as `ReplayEvaluator` learns: what both choice procedures score candidates on.
    static func validationCases<M: Matcher>(prior: SwipeEngine<M>, students: [DatasetStudent<M.Profile>], fitByStudent: [String: [Interaction]],
                                            validation: [String: [Interaction]]) throws -> [ValidationCase] {
        let catalog = prior.matcher.catalog
        var cases: [ValidationCase] = []
        for student in students.sorted(by: { $0.id < $1.id }) {
            let likes = Set((validation[student.id] ?? []).filter { $0.action == .like }.compactMap { catalog.row(of: $0.itemID) })
            guard !likes.isEmpty else { continue }
            let train = fitByStudent[student.id] ?? []
            let resolved = try prior.matcher.student(student.profile)
            let scores = ReplayEvaluator.learnedScores(engine: prior, student: resolved, train: train).learned
            let trained = Set(train.compactMap { catalog.row(of: $0.itemID) })
            let rows = (0..<catalog.count).filter { !trained.contains($0) }
            cases.append(ValidationCase(train: train, scores: scores, rows: rows, relevant: rows.map(likes.contains)))
        }
        return cases
    }

    /// Each student's swipes split in time, as the choice procedures validate: sorted by
    /// (timestamp, item id), the first `1 − validationFraction` (rounded down) to fit, the rest to
    /// validate; students in id order, so the parts do not depend on the log's order.
    ///
    /// - Returns: The fit parts together and by student, and the validation parts by student.
    static func timeSplit(_ interactions: [Interaction], validationFraction: Double)
        -> (fit: [Interaction], fitByStudent: [String: [Interaction]], validation: [String: [Interaction]]) {
        var byStudent: [String: [Interaction]] = [:]
        for x in interactions { byStudent[x.studentID, default: []].append(x) }
        var fit: [Interaction] = [], fitByStudent: [String: [Interaction]] = [:], validation: [String: [Interaction]] = [:]
        for id in byStudent.keys.sorted() {
            let sorted = byStudent[id]!.sorted { ($0.timestamp, $0.itemID) < ($1.timestamp, $1.itemID) }
            let cut = Int((Double(sorted.count) * (1 - validationFraction)).rounded(.down))
            fit += sorted[..<cut]
            fitByStudent[id] = Array(sorted[..<cut])
            validation[id] = Array(sorted[cut...])
        }
        return (fit, fitByStudent, validation)
    }

    /// Chooses the exposure weight β by a documented procedure that never sees a held-out swipe:
    /// each student's log is split in time (the last `validationFraction` to validate, the rest
    /// to fit); a prior is fitted on the fit parts; each student learns their own fit part on
    /// top of it, exactly as `ReplayEvaluator` learns; and every candidate ranks the items the
    /// student did not swipe in the fit part, scored by tie-aware NDCG@k on the validation
    /// likes — the full-catalog question a log of chosen swipes asks. Pass only training swipes:
    /// the procedure must not see what the prior is later evaluated on.
    ///
    /// - Parameters:
    ///   - engine: The engine (without a population prior).
    ///   - students: The students of the log.
    ///   - interactions: Their swipes (training swipes only).
    ///   - candidates: β values ≥ 0 to try (at least one).
    ///   - validationFraction: The share of each student's swipes validated on, in (0, 1).
    ///   - k: The cut-off (> 0).
    ///   - itemPrecision: The item effects' shrinkage, as in `fit`.
    /// - Returns: The choice and every candidate's score.
    /// - Throws: Errors of `fit`.
    /// - Complexity: O(swipes × D² + students × candidates × N log N).
    public static func chooseExposureWeight<M: Matcher>(engine: SwipeEngine<M>, students: [DatasetStudent<M.Profile>],
                                                        interactions: [Interaction], candidates: [Double] = exposureWeightCandidates,
                                                        validationFraction: Double = 0.3, k: Int = 10,
                                                        itemPrecision: Double = 5) throws -> ExposureWeightChoice {
        precondition(!candidates.isEmpty && candidates.allSatisfy { $0 >= 0 && $0.isFinite }, "candidates must be finite and not negative")
        precondition(validationFraction > 0 && validationFraction < 1 && k > 0, "a validation fraction in (0, 1) and k > 0")
        let (fitPart, fitByStudent, validation) = timeSplit(interactions, validationFraction: validationFraction)
        // Exposure effects are linear in β: fit once at β = 1 and scale.
        let unit = try fit(engine: engine, students: students, interactions: fitPart, itemPrecision: itemPrecision, exposureWeight: 1)
        let base = PopulationPrior(catalogFingerprint: unit.catalogFingerprint, featureCount: unit.featureCount, termNames: unit.termNames,
                                   weightShift: unit.weightShift, itemEffects: unit.itemEffects, students: unit.students,
                                   swipes: unit.swipes, itemPrecision: unit.itemPrecision)
        let prior = try engine.withPopulation(base)
        let exposure = (unit.exposureEffects ?? []).map(Float.init)
        let cases = try validationCases(prior: prior, students: students, fitByStudent: fitByStudent, validation: validation)
        var sums = [Double](repeating: 0, count: candidates.count)
        for v in cases {
            for (c, beta) in candidates.enumerated() {
                let b = Float(beta)
                sums[c] += RankingMetrics.tieAware(scores: v.rows.map { v.scores[$0] + b * exposure[$0] }, relevant: v.relevant, k: k).ndcg
            }
        }
        let counted = cases.count
        let means = sums.map { counted == 0 ? 0 : $0 / Double(counted) }
        var best = 0
        for c in means.indices where means[c] > means[best] || (means[c] == means[best] && candidates[c] < candidates[best]) { best = c }
        return ExposureWeightChoice(weight: candidates[best], candidates: zip(candidates, means).map { .init(weight: $0, ndcg: $1) },
                                    students: counted)
    }
}

extension SimulationEvaluator {
    /// Simulates a population's log: each student served by the engine (`engine` as given) and
    /// answering from the same student model as `run` (the `taste`, or hidden weights in the
    /// engine's class), `swipes` swipes each — the log a population prior is fitted on, from
    /// students other than the ones evaluated.
    ///
    /// - Parameters:
    ///   - students: The population.
    ///   - swipes: Swipes per student.
    ///   - seed: The seed.
    /// - Returns: The swipes, timestamps 1, 2, … per student.
    /// - Throws: Errors of the engine on inconsistent input.
    public func simulateLog(students: [DatasetStudent<M.Profile>], swipes: Int, seed: UInt64) throws -> [Interaction] {
        try simulateLog(students: students, swipes: swipes, seed: seed, signals: nil).log
    }

    /// `simulateLog(students:swipes:seed:)` with the app's other events: every swipe comes with
    /// a focus event (its dwell time) and sometimes a reaction, drawn by `signals` from their
    /// own generator — so the swipes are exactly those of the log without signals.
    ///
    /// - Parameters:
    ///   - students: The population.
    ///   - swipes: Swipes per student.
    ///   - seed: The seed.
    ///   - model: How dwell and reactions relate to the student's taste (nil: no signals).
    /// - Returns: The swipes, and the signals about them.
    /// - Throws: Errors of the engine on inconsistent input.
    public func simulateLog(students: [DatasetStudent<M.Profile>], swipes: Int, seed: UInt64,
                            signals model: SignalModel?) throws -> (log: [Interaction], signals: [EngagementSignal]) {
        let catalog = engine.matcher.catalog
        var rng = SplitMix64(seed: seed)
        var draws = SplitMix64(seed: seed ^ 0x5349_474e_414c_5321)
        var log: [Interaction] = []
        var signals: [EngagementSignal] = []
        for student in students {
            let resolved = try engine.matcher.student(student.profile)
            let gains = try truth(for: student, resolved: resolved, using: &rng).gains
            var policy = try EnginePolicy(name: "population", engine: engine, student: student, seed: rng.next())
            var answers = SplitMix64(seed: rng.next())
            var done = 0
            while done < swipes {
                let batch = try policy.serve(count: min(10, swipes - done))
                if batch.isEmpty { break }
                for row in batch {
                    let liked = Double.random(in: 0..<1, using: &answers) < gains[row]
                    try policy.observe(row: row, liked: liked)
                    done += 1
                    log.append(Interaction(studentID: student.id, itemID: catalog.ids[row], action: liked ? .like : .dislike,
                                           timestamp: Int64(done)))
                    if let model {
                        signals += model.draw(gain: gains[row], studentID: student.id, itemID: catalog.ids[row], using: &draws)
                    }
                }
            }
        }
        return (log, signals)
    }
}

/// How a simulated student's dwell times and reactions relate to their taste: the app's other
/// events, for measuring what a fit gains from them (`swiperank evaluate --families --signals`).
///
/// Every swipe comes with a dwell time, `ln(ms) = ln 2500 + 0.9 (2v − 1) + 0.5 ε` (ε standard
/// normal), and a reaction with probability `0.3 (2v − 1)²` — strong feelings either way. What
/// `v` is makes the model: these are assumptions about apps nobody here has logs of, so the
/// evaluation runs both and reports both.
public enum SignalModel: String, Sendable, Hashable, CaseIterable {
    /// `v` is the student's probability of liking the card: a long look goes with a card they
    /// like, a reaction with a card they love or hate.
    case informative
    /// `v` is uniform, independent of the taste: the same amounts of dwell and reactions, saying
    /// nothing — what a fit that uses signals must not be hurt by.
    case noise

    /// The signals of one swipe.
    ///
    /// - Parameters:
    ///   - gain: The student's probability of liking the card.
    ///   - studentID: The student.
    ///   - itemID: The card.
    ///   - generator: The signals' generator.
    /// - Returns: A dwell signal, and maybe a reaction.
    public func draw(gain: Double, studentID: String, itemID: String, using generator: inout SplitMix64) -> [EngagementSignal] {
        let uniform = Double.random(in: 0..<1, using: &generator)
        let v = self == .informative ? gain : uniform
        let ms = (2_500 * Foundation.exp(0.9 * (2 * v - 1) + 0.5 * generator.nextGaussian())).rounded()
        var out = [EngagementSignal(studentID: studentID, itemID: itemID, kind: .dwell(milliseconds: ms))]
        if Double.random(in: 0..<1, using: &generator) < 0.3 * (2 * v - 1) * (2 * v - 1) {
            out.append(EngagementSignal(studentID: studentID, itemID: itemID, kind: .reaction(v > 0.5 ? "CTFO" : "TFU")))
        }
        return out
    }
}

extension PopulationFit {

    /// A setting of how the app's signals weigh answers (`AnswerStrengths`): 0 and 0 is the
    /// plain fit.
    public struct SignalBoosts: Sendable, Hashable {
        /// An answer the app reacted to counts × (1 + this).
        public var reaction: Double
        /// A dwell time moves an answer's weight × exp(±this · z).
        public var dwell: Double

        /// Creates a setting (both ≥ 0).
        public init(reaction: Double, dwell: Double) {
            self.reaction = reaction
            self.dwell = dwell
        }

        /// No weighing: every answer 1.
        public static let none = SignalBoosts(reaction: 0, dwell: 0)
    }

    /// What `chooseSignalBoosts` found.
    public struct SignalBoostChoice: Sendable, Hashable {
        /// The chosen setting: the best validation NDCG@k; on a tie the one tried first (the
        /// plain fit comes first).
        public let boosts: SignalBoosts
        /// Every candidate with its mean validation NDCG@k, in the order tried.
        public let candidates: [Candidate]
        /// Students with a validation like (those the means are over).
        public let students: Int

        /// One candidate's result.
        public struct Candidate: Sendable, Hashable {
            /// The setting.
            public let boosts: SignalBoosts
            /// Mean NDCG@k over the validation students.
            public let ndcg: Double
        }
    }

    /// Chooses whether (and how much) the app's signals weigh the prior's answers, by the
    /// procedure of `chooseExposureWeight`: each student's log split in time, a prior fitted on
    /// the fit parts per candidate (its answers weighed by the signals about them), each student
    /// learning their own fit part on top of it, and every candidate scored by tie-aware NDCG@k
    /// of the validation likes over the items not swiped in the fit part. The plain fit is always
    /// a candidate and wins ties, so signals are taken only when the log itself says they help.
    ///
    /// - Parameters:
    ///   - engine: The engine (without a population prior).
    ///   - students: The students of the log.
    ///   - interactions: Their swipes (training swipes only).
    ///   - signals: The app's dwell times and reactions, any order.
    ///   - candidates: Settings to try beside the plain fit (each boost ≥ 0).
    ///   - validationFraction: The share of each student's swipes validated on, in (0, 1).
    ///   - k: The cut-off (> 0).
    ///   - itemPrecision: As in `fit`.
    ///   - exposureWeight: As in `fit` (the same for every candidate).
    /// - Returns: The choice and every candidate's score.
    /// - Throws: Errors of `fit`.
    /// - Complexity: O(candidates × (swipes × D² + students × N log N)).
    public static func chooseSignalBoosts<M: Matcher>(engine: SwipeEngine<M>, students: [DatasetStudent<M.Profile>],
                                                      interactions: [Interaction], signals: [EngagementSignal],
                                                      candidates: [SignalBoosts] = [SignalBoosts(reaction: 1, dwell: 0.5)],
                                                      validationFraction: Double = 0.3, k: Int = 10, itemPrecision: Double = 5,
                                                      exposureWeight: Double = 0) throws -> SignalBoostChoice {
        precondition(candidates.allSatisfy { $0.reaction >= 0 && $0.dwell >= 0 && $0.reaction.isFinite && $0.dwell.isFinite },
                     "boosts must be finite and not negative")
        precondition(validationFraction > 0 && validationFraction < 1 && k > 0, "a validation fraction in (0, 1) and k > 0")
        let (fitPart, fitByStudent, validation) = timeSplit(interactions, validationFraction: validationFraction)
        var tried: [SignalBoosts] = [.none]
        for c in candidates where !tried.contains(c) { tried.append(c) }
        var results: [SignalBoostChoice.Candidate] = []
        var counted = 0
        for boosts in tried {
            let strengths = boosts == .none ? nil
                : AnswerStrengths(signals: signals, interactions: fitPart, reactionBoost: boosts.reaction, dwellBoost: boosts.dwell)
            let prior = try fit(engine: engine, students: students, interactions: fitPart, itemPrecision: itemPrecision,
                                exposureWeight: exposureWeight, strengths: strengths)
            let cases = try validationCases(prior: try engine.withPopulation(prior), students: students, fitByStudent: fitByStudent,
                                            validation: validation)
            // The learned raw scores already rank as a deck does: with the item and exposure effects.
            var sum = 0.0
            for v in cases {
                sum += RankingMetrics.tieAware(scores: v.rows.map { v.scores[$0] }, relevant: v.relevant, k: k).ndcg
            }
            counted = cases.count
            results.append(.init(boosts: boosts, ndcg: counted == 0 ? 0 : sum / Double(counted)))
        }
        var best = 0
        for c in results.indices where results[c].ndcg > results[best].ndcg { best = c }
        return SignalBoostChoice(boosts: results[best].boosts, candidates: results, students: counted)
    }

    /// The prior with its answers weighed by the app's events: by `boosts`, or, with `choose`,
    /// by what `chooseSignalBoosts` picks on the log's own time split between the plain fit and
    /// `boosts` (reactions × 2 and dwell 0.5 when `boosts` is `.none`: its default candidate) —
    /// so a log whose events do not help ranking is fitted plain. What `fit-prior
    /// --choose-signals` and `serve --refit-prior on --refit-choose-signals on` run.
    ///
    /// - Parameters:
    ///   - engine: The engine (without a population prior).
    ///   - students: The students of the log.
    ///   - interactions: Their swipes.
    ///   - signals: The app's dwell times and reactions (for the choice).
    ///   - boosts: The setting, or the candidate with `choose`.
    ///   - choose: Whether the log chooses between the plain fit and `boosts`.
    ///   - itemPrecision: As in `fit`.
    ///   - exposureWeight: As in `fit`.
    ///   - strengths: The answer weights of a setting other than `.none`, as the caller pairs
    ///     its signals with its answers.
    /// - Returns: The prior, the setting it was fitted with, and the choice when one was made.
    /// - Throws: Errors of `fit`.
    public static func fitWeighingSignals<M: Matcher>(engine: SwipeEngine<M>, students: [DatasetStudent<M.Profile>],
                                                      interactions: [Interaction], signals: [EngagementSignal],
                                                      boosts: SignalBoosts, choose: Bool, itemPrecision: Double = 5,
                                                      exposureWeight: Double = 0, strengths: (SignalBoosts) -> AnswerStrengths) throws
        -> (prior: PopulationPrior, boosts: SignalBoosts, choice: SignalBoostChoice?) {
        var used = boosts
        var choice: SignalBoostChoice?
        if choose {
            let offered = boosts == .none ? SignalBoosts(reaction: 1, dwell: 0.5) : boosts
            let made = try chooseSignalBoosts(engine: engine, students: students, interactions: interactions, signals: signals,
                                              candidates: [offered], itemPrecision: itemPrecision, exposureWeight: exposureWeight)
            (used, choice) = (made.boosts, made)
        }
        let prior = try fit(engine: engine, students: students, interactions: interactions, itemPrecision: itemPrecision,
                            exposureWeight: exposureWeight, strengths: used == .none ? nil : strengths(used))
        return (prior, used, choice)
    }
}
