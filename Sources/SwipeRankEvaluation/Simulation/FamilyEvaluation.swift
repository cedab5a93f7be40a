import Foundation
import SwipeRank
import SwipeRankColleges
import SwipeRankNumerics

/// The simulation on student families the engine was not designed for (`TasteFamily`), with
/// the population-level learners fitted on each family's own population: for every family, a
/// log of other students (served by the engine, as a deployment's log would be) teaches a
/// population prior and a collaborative model (`FactorFit`, its settings and γ chosen on a time
/// split of that log), and the evaluated students are then served by every policy
/// (`swiperank evaluate --families`).
public enum FamilyEvaluation {
    /// The policies compared on each family: the engine with and without what the population
    /// taught, the serving without learning, the naive learner, and the references.
    public static let policies: [PolicyKind] = [
        .engineCollaborative, .enginePopulationPrior, .engine, .engineBandOrder, .engineNoLearning, .naiveSGD, .naiveSGDEngineServing,
        .profileOnly, .popularity, .linearOracle, .constrainedOracle,
    ]

    /// The fit settings tried per family (fewer than the replay's: a population log of a few
    /// thousand swipes does not support 64 factors).
    public static let factorCandidates: [FactorFit.Options] = [8, 16, 32].flatMap { dimension in
        [3.0, 10].map { regularization in
            var o = FactorFit.Options()
            o.dimension = dimension
            o.regularization = regularization
            o.dislikeConfidence = o.confidence
            return o
        }
    }

    /// One family's outcome.
    public struct Outcome: Sendable {
        /// The family.
        public let family: TasteFamily
        /// The policies' results, in `policies`' order.
        public let results: [SimulationPolicyResult]
        /// How the collaborative model was chosen on the population's log.
        public let choice: FactorFit.Choice
        /// Swipes in the population's log.
        public let populationSwipes: Int
    }

    /// Runs one family.
    ///
    /// - Parameters:
    ///   - family: The family.
    ///   - engine: The engine (without a population prior or factors).
    ///   - students: The students evaluated.
    ///   - population: Other students of the same world, whose log the prior and factors learn from.
    ///   - swipes: Swipes per student (evaluated and population alike).
    ///   - seed: Seeds the world, the students' draws and the answers.
    ///   - factorCandidates: The fit settings tried.
    /// - Returns: The outcome.
    /// - Throws: Errors of the engine, the fits or the taste model.
    public static func run(family: TasteFamily, engine: SwipeEngine<SchoolMatcher>, students: [DatasetStudent<StudentProfile>],
                           population: [DatasetStudent<StudentProfile>], swipes: Int, seed: UInt64,
                           factorCandidates: [FactorFit.Options] = factorCandidates) throws -> Outcome {
        precondition(engine.population == nil && engine.factors == nil, "a plain engine: the family's population fits its own")
        var evaluator = SimulationEvaluator(engine: engine)
        evaluator.taste = family.tasteModel(schools: engine.matcher.schools, worldSeed: seed ^ 0x574f_524c_44)
        // The population's log is of their first taste; the evaluated students drift halfway.
        let log = try evaluator.simulateLog(students: population, swipes: swipes, seed: seed &+ 1)
        if let later = family.driftModel(schools: engine.matcher.schools, worldSeed: seed ^ 0x574f_524c_44) {
            evaluator.drift = (after: swipes / 2, taste: later)
        }
        let prior = try PopulationFit.fit(engine: engine, students: population, interactions: log)
        let choice = try FactorFit.chooseOptions(engine: engine, students: population, interactions: log, exposureWeight: 0,
                                                 candidates: factorCandidates)
        var options = choice.options
        options.seed = seed
        let factors = try FactorFit.fit(catalog: engine.matcher.catalog, interactions: log, options: options, weight: choice.weight)
        evaluator.population = prior
        evaluator.collaborativeEngine = try engine.withPopulation(prior).withFactors(factors)
        let results = try evaluator.run(students: students, swipes: swipes, policies: policies, seed: seed)
        return Outcome(family: family, results: results, choice: choice, populationSwipes: log.count)
    }

    /// The boosts the signal arms try (`Options.reactionBoost`, `dwellBoost`): one setting, not
    /// a search — the question is whether signals help at all.
    public static let signalBoosts = (reaction: 1.0, dwell: 0.5)

    /// What the app's other events add to one family's collaborative model.
    public struct SignalOutcome: Sendable {
        /// One way of fitting the population's factors, and what the engine served with them.
        public struct Arm: Sendable {
            /// `swipes only`, `signals`, `signals if chosen`.
            public let name: String
            /// The fit's choice on the population's log.
            public let choice: FactorFit.Choice
            /// The collaborative engine's result on the evaluated students.
            public let result: SimulationPolicyResult
        }

        /// The family.
        public let family: TasteFamily
        /// How the simulated signals relate to the taste.
        public let model: SignalModel
        /// The arms: swipes only first.
        public let arms: [Arm]
        /// Signals in the population's log.
        public let signalCount: Int
        /// The population prior alone (`engine_population_prior`, no factors) fitted on the
        /// swipes, then with every answer weighed by the signals about it (`signalBoosts`):
        /// what the signals do to the prior, apart from the factors.
        public let priorArms: [(name: String, result: SimulationPolicyResult)]
        /// The prior's own choice between plain and weighed (`PopulationFit.chooseSignalBoosts`
        /// on the population's log): the third prior arm serves what it chose.
        public let priorChoice: PopulationFit.SignalBoostChoice
    }

    /// Runs one family three ways: the population's factors fitted on the swipes alone; with
    /// every answer weighed by the signals about it (`signalBoosts`); and with the signal
    /// settings offered to the choice beside the plain ones, so the time split decides. Then
    /// the prior alone, fitted on the swipes, weighed by the signals, and as its own time-split
    /// choice between the two picks (`priorArms`, `priorChoice`). The
    /// population's swipes, the prior and the evaluated students' answers are the same in all
    /// three; the engine with prior and factors (`engine_collaborative`) serves.
    ///
    /// - Parameters:
    ///   - family: The family.
    ///   - model: How dwell and reactions relate to the taste.
    ///   - engine: The engine (without a population prior or factors).
    ///   - students: The students evaluated.
    ///   - population: The students whose log is fitted.
    ///   - swipes: Swipes per student.
    ///   - seed: Seeds everything, as `run`.
    ///   - factorCandidates: The plain fit settings.
    /// - Returns: The outcome.
    /// - Throws: Errors of the engine, the fits or the taste model.
    public static func runSignals(family: TasteFamily, model: SignalModel, engine: SwipeEngine<SchoolMatcher>,
                                  students: [DatasetStudent<StudentProfile>], population: [DatasetStudent<StudentProfile>],
                                  swipes: Int, seed: UInt64, factorCandidates: [FactorFit.Options] = factorCandidates) throws -> SignalOutcome {
        precondition(engine.population == nil && engine.factors == nil, "a plain engine: the family's population fits its own")
        var evaluator = SimulationEvaluator(engine: engine)
        evaluator.taste = family.tasteModel(schools: engine.matcher.schools, worldSeed: seed ^ 0x574f_524c_44)
        let (log, signals) = try evaluator.simulateLog(students: population, swipes: swipes, seed: seed &+ 1, signals: model)
        if let later = family.driftModel(schools: engine.matcher.schools, worldSeed: seed ^ 0x574f_524c_44) {
            evaluator.drift = (after: swipes / 2, taste: later)
        }
        let prior = try PopulationFit.fit(engine: engine, students: population, interactions: log)
        evaluator.population = prior
        let boosted = factorCandidates.map { o -> FactorFit.Options in
            var o = o
            (o.reactionBoost, o.dwellBoost) = signalBoosts
            return o
        }
        var arms: [SignalOutcome.Arm] = []
        for (name, candidates) in [("swipes only", factorCandidates), ("signals", boosted), ("signals if chosen", factorCandidates + boosted)] {
            let choice = try FactorFit.chooseOptions(engine: engine, students: population, interactions: log, signals: signals,
                                                     exposureWeight: 0, candidates: candidates)
            var options = choice.options
            options.seed = seed
            let factors = try FactorFit.fit(catalog: engine.matcher.catalog, interactions: log, signals: signals, options: options,
                                            weight: choice.weight)
            evaluator.collaborativeEngine = try engine.withPopulation(prior).withFactors(factors)
            let result = try evaluator.run(students: students, swipes: swipes, policies: [.engineCollaborative], seed: seed)[0]
            arms.append(.init(name: name, choice: choice, result: result))
        }
        let strengths = AnswerStrengths(signals: signals, interactions: log, reactionBoost: signalBoosts.reaction, dwellBoost: signalBoosts.dwell)
        let weighed = try PopulationFit.fit(engine: engine, students: population, interactions: log, strengths: strengths)
        var priorArms: [(name: String, result: SimulationPolicyResult)] = []
        for (name, fitted) in [("prior, swipes only", prior), ("prior, signals", weighed)] {
            var alone = evaluator
            alone.population = fitted
            priorArms.append((name, try alone.run(students: students, swipes: swipes, policies: [.enginePopulationPrior], seed: seed)[0]))
        }
        // The chosen prior is one of the two just served (same log, same fit): its arm is theirs.
        let priorChoice = try PopulationFit.chooseSignalBoosts(engine: engine, students: population, interactions: log, signals: signals,
                                                               candidates: [.init(reaction: signalBoosts.reaction, dwell: signalBoosts.dwell)])
        priorArms.append(("prior, if chosen", priorArms[priorChoice.boosts == .none ? 0 : 1].result))
        return SignalOutcome(family: family, model: model, arms: arms, signalCount: signals.count, priorArms: priorArms,
                             priorChoice: priorChoice)
    }
}
