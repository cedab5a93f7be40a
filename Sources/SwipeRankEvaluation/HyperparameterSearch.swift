import Foundation
import SwipeRank
import SwipeRankNumerics

/// The documented procedure that chooses the learner's hyperparameters (`swiperank tune`):
/// prior precision τ, stable-phase forgetting λ and the per-student bias.
///
/// 1. **Tuning students** are simulated students who are *not* the evaluation's (random
///    profiles from another seed), under the student model the engine should serve well (the
///    hidden-taste model outside the engine's class, by default).
/// 2. Every candidate serves them through the full engine (bands, probes); its **objective** is
///    each student's mean served NDCG@10 over the checkpoints after 10, 20, … swipes (the area
///    under the served curve once learning has started), averaged over students.
/// 3. Candidates are compared with the current configuration **paired over the same students**
///    (same answers, common random numbers), with a bootstrap 95% interval; a candidate is worth
///    adopting only when that interval lies above 0.
/// 4. The replay of a held-out log (`ReplayEvaluator`) is reported beside it for each
///    candidate, as a check that the choice does not trade real swipes for simulated ones.
public struct HyperparameterSearch<M: Matcher>: Sendable {
    /// One point of the grid.
    public struct Candidate: Sendable, Hashable, CustomStringConvertible {
        /// τ.
        public var priorPrecision: Double
        /// λ.
        public var stableForgetting: Double
        /// Whether each student learns a bias.
        public var studentBias: Bool

        /// Creates a candidate.
        ///
        /// - Parameters:
        ///   - priorPrecision: τ in (0, 10⁶].
        ///   - stableForgetting: λ in (0, 1].
        ///   - studentBias: The bias switch.
        public init(priorPrecision: Double, stableForgetting: Double, studentBias: Bool) {
            self.priorPrecision = priorPrecision
            self.stableForgetting = stableForgetting
            self.studentBias = studentBias
        }

        /// The candidate of a configuration.
        ///
        /// - Parameter configuration: The configuration.
        public init(_ configuration: EngineConfiguration) {
            self.init(priorPrecision: configuration.priorPrecision, stableForgetting: configuration.stableForgetting,
                      studentBias: configuration.studentBias)
        }

        /// `configuration` with this candidate's values.
        ///
        /// - Parameter configuration: The base.
        /// - Returns: The changed configuration.
        public func applied(to configuration: EngineConfiguration) -> EngineConfiguration {
            var c = configuration
            c.priorPrecision = priorPrecision
            c.stableForgetting = stableForgetting
            c.studentBias = studentBias
            return c
        }

        /// "τ=3 λ=0.97 bias=off".
        public var description: String {
            "τ=\(priorPrecision) λ=\(stableForgetting) bias=\(studentBias ? "on" : "off")"
        }
    }

    /// One candidate's result.
    public struct Outcome: Sendable {
        /// The candidate.
        public let candidate: Candidate
        /// Per tuning student: mean served NDCG@10 over the checkpoints after the first.
        public let perStudent: [Double]
        /// The mean of `perStudent`.
        public var objective: Double { perStudent.reduce(0, +) / Double(max(1, perStudent.count)) }
        /// This candidate minus the baseline, paired over students: mean and 95% bootstrap interval.
        public var difference: (mean: Double, lower: Double, upper: Double) = (0, 0, 0)
        /// The replay's AUC and NDCG@10 of the engine's learner (NaN without a log).
        public var replayAUC = Double.nan, replayNDCG = Double.nan
    }

    /// The engine whose configuration is varied.
    public let engine: SwipeEngine<M>
    /// The student model (nil: hidden weights in the engine's class).
    public var taste: SimulationEvaluator<M>.TasteModel?

    /// Creates a search.
    ///
    /// - Parameters:
    ///   - engine: The engine (its configuration is the baseline).
    ///   - taste: The tuning students' taste model.
    public init(engine: SwipeEngine<M>, taste: SimulationEvaluator<M>.TasteModel?) {
        self.engine = engine
        self.taste = taste
    }

    /// The grid: every combination, the baseline's own values included.
    ///
    /// - Parameters:
    ///   - priorPrecisions: τ values.
    ///   - forgettings: λ values.
    ///   - biases: Bias switches.
    /// - Returns: The candidates, in order.
    public static func grid(priorPrecisions: [Double], forgettings: [Double], biases: [Bool]) -> [Candidate] {
        priorPrecisions.flatMap { t in forgettings.flatMap { l in biases.map { Candidate(priorPrecision: t, stableForgetting: l, studentBias: $0) } } }
    }

    /// Runs the procedure.
    ///
    /// - Parameters:
    ///   - candidates: The grid (the baseline is added when missing).
    ///   - students: The tuning students.
    ///   - swipes: Swipes per student (≥ 10).
    ///   - replay: The held-out replay's students and log, or nil.
    ///   - seed: The seed (answers, probes, bootstrap).
    /// - Returns: One outcome per candidate, best objective first.
    /// - Throws: Errors of the engine on inconsistent input; `DataError` from the replay.
    /// - Complexity: O(candidates × students × swipes × (N × D + D²)).
    public func run(candidates: [Candidate], students: [DatasetStudent<M.Profile>], swipes: Int,
                    replay: (students: [DatasetStudent<M.Profile>], log: [Interaction])?, seed: UInt64) throws -> [Outcome] {
        precondition(swipes >= 10, "the objective needs at least 10 swipes")
        let baseline = Candidate(engine.configuration)
        let all = candidates.contains(baseline) ? candidates : [baseline] + candidates
        var outcomes: [Outcome] = []
        for candidate in all {
            let tuned = engine.reconfigured { $0 = candidate.applied(to: $0) }
            var evaluator = SimulationEvaluator(engine: tuned, popularity: nil, opinionGroups: nil)
            evaluator.taste = taste
            // The same seed for every candidate: the same students, answers and probe draws.
            let result = try evaluator.run(students: students, swipes: swipes, policies: [.engine], seed: seed)[0]
            let later = result.servedNDCG.dropFirst()
            let perStudent = students.indices.map { s in later.reduce(0) { $0 + $1[s] } / Double(later.count) }
            var outcome = Outcome(candidate: candidate, perStudent: perStudent)
            if let replay, !replay.log.isEmpty {
                let engineReplay = try ReplayEvaluator(engine: tuned).run(students: replay.students, interactions: replay.log, seed: seed)[0]
                outcome.replayAUC = engineReplay.mean("auc")
                outcome.replayNDCG = engineReplay.mean("ndcg@10")
            }
            outcomes.append(outcome)
        }
        let base = outcomes.first { $0.candidate == baseline }!.perStudent
        var rng = SplitMix64(seed: seed)
        for i in outcomes.indices {
            let differences = zip(outcomes[i].perStudent, base).map { $0 - $1 }
            let ci = Bootstrap.meanInterval(differences, using: &rng)
            outcomes[i].difference = (differences.reduce(0, +) / Double(differences.count), ci.lower, ci.upper)
        }
        // Best first; ties keep the grid's order.
        return outcomes.enumerated().sorted { ($0.element.objective, -$0.offset) > ($1.element.objective, -$1.offset) }.map(\.element)
    }
}
