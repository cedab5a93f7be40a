import Foundation
import SwipeRankColleges
import Testing
import SwipeRank
import SwipeRankEvaluation
import SwipeRankNumerics

/// The student families outside the engine's model class, and the per-family evaluation.
@Suite("Student families")
struct TasteFamilyTests {
    static func students(_ count: Int, seed: UInt64, prefix: String) -> [DatasetStudent<StudentProfile>] {
        var rng = SplitMix64(seed: seed)
        return (0..<count).map { DatasetStudent(id: "\(prefix)\($0)", profile: SchoolSimulation.randomProfile(schools: EvaluationFixtures.schools, using: &rng)) }
    }

    @Test("a family's world is its seed's: the same seed and draws give the same taste, another world another", arguments: TasteFamily.allCases)
    func worlds(family: TasteFamily) throws {
        let student = Self.students(1, seed: 3, prefix: "w")[0]
        let schools = EvaluationFixtures.schools
        func taste(world: UInt64) throws -> [Double] {
            var generator = SplitMix64(seed: 9)
            return try family.tasteModel(schools: schools, worldSeed: world)(student, &generator)
        }
        let a = try taste(world: 1), b = try taste(world: 1), c = try taste(world: 2)
        #expect(a == b && a.count == schools.catalog.count)
        // The noisy and drifting families have no world of their own (lapses per answer; a second draw).
        #expect((a != c) == ![.noisy, .drifting].contains(family))
        #expect((family.driftModel(schools: schools, worldSeed: 1) != nil) == (family == .drifting))
        // A lapse rate bounds every probability away from 0 and 1; about a quarter of schools liked.
        let lapse = family == .noisy ? 0.3 : 0.08
        #expect(a.allSatisfy { $0 >= lapse / 2 && $0 <= 1 - lapse / 2 })
        let mean = a.reduce(0, +) / Double(a.count)
        #expect(mean > 0.2 && mean < 0.45, "\(mean)")
    }

    @Test("peer groups: students of one world share taste that no feature shows")
    func peersShareTaste() throws {
        let schools = EvaluationFixtures.schools
        let model = TasteFamily.peerGroups.tasteModel(schools: schools, worldSeed: 5)
        let noisyModel = TasteFamily.noisy.tasteModel(schools: schools, worldSeed: 5)
        let students = Self.students(40, seed: 4, prefix: "p")
        var generator = SplitMix64(seed: 6)
        let peer = try students.map { try model($0, &generator) }
        var other = SplitMix64(seed: 6)
        let alone = try students.map { try noisyModel($0, &other) }
        // The best correlation of a student's taste with another's: high for some peer (same group),
        // lower without shared groups.
        func correlation(_ x: [Double], _ y: [Double]) -> Double {
            let mx = x.reduce(0, +) / Double(x.count), my = y.reduce(0, +) / Double(y.count)
            let sxy = zip(x, y).reduce(0) { $0 + ($1.0 - mx) * ($1.1 - my) }
            let sx = x.reduce(0) { $0 + ($1 - mx) * ($1 - mx) }, sy = y.reduce(0) { $0 + ($1 - my) * ($1 - my) }
            return sxy / (sx * sy).squareRoot()
        }
        func bestPeer(_ tastes: [[Double]]) -> Double {
            tastes.indices.map { i in tastes.indices.filter { $0 != i }.map { correlation(tastes[i], tastes[$0]) }.max()! }.reduce(0, +) / Double(tastes.count)
        }
        #expect(bestPeer(peer) > bestPeer(alone) + 0.2, "\(bestPeer(peer)) vs \(bestPeer(alone))")
    }

    @Test("a drift changes the truth at its swipe: answers and measurements follow the new taste")
    func drift() throws {
        var evaluator = SimulationEvaluator(engine: EvaluationFixtures.engine)
        let n = EvaluationFixtures.engine.matcher.catalog.count
        evaluator.taste = { _, _ in [Double](repeating: 1, count: n) }
        evaluator.drift = (after: 10, taste: { _, _ in [Double](repeating: 0, count: n) })
        let results = try evaluator.run(students: Self.students(4, seed: 8, prefix: "d"), swipes: 20, policies: [.engine, .naiveSGD], seed: 2)
        for r in results {
            #expect(r.likeRate[1].allSatisfy { $0 == 1 } && r.likeRate[2].allSatisfy { $0 == 0 }, "\(r.policy): \(r.likeRate)")
        }
    }

    @Test("a family's evaluation: every policy on the same students, the prior and factors from other students, deterministic")
    func evaluation() throws {
        var options = FactorFit.Options()
        options.dimension = 4
        options.iterations = 4
        func run() throws -> FamilyEvaluation.Outcome {
            try FamilyEvaluation.run(family: .peerGroups, engine: EvaluationFixtures.engine, students: Self.students(6, seed: 1, prefix: "e"),
                                     population: Self.students(30, seed: 2, prefix: "q"), swipes: 10, seed: 3, factorCandidates: [options])
        }
        let outcome = try run()
        #expect(outcome.results.map(\.policy) == FamilyEvaluation.policies)
        #expect(outcome.populationSwipes == 300)
        #expect(outcome.results.allSatisfy { $0.servedNDCG.allSatisfy { $0.count == 6 } })
        #expect(outcome.choice.table.count == FactorFit.weightCandidates.count)
        let again = try run()
        #expect(again.results.map(\.servedNDCG) == outcome.results.map(\.servedNDCG))
    }

    @Test("a family's signal evaluation: three fits of one log, the choice offered both settings; kept plain, its cards are the swipes-only arm's")
    func signals() throws {
        var options = FactorFit.Options()
        options.dimension = 4
        options.iterations = 4
        let students = Self.students(4, seed: 1, prefix: "e"), population = Self.students(30, seed: 2, prefix: "q")
        let outcome = try FamilyEvaluation.runSignals(family: .herd, model: .noise, engine: EvaluationFixtures.engine, students: students,
                                                      population: population, swipes: 10, seed: 3, factorCandidates: [options])
        #expect(outcome.arms.map(\.name) == ["swipes only", "signals", "signals if chosen"])
        // A dwell per swipe, and some reactions.
        #expect(outcome.signalCount > 300 && outcome.signalCount < 600)
        #expect(outcome.arms.allSatisfy { $0.result.servedNDCG.allSatisfy { $0.count == 4 } && $0.result.policy == .engineCollaborative })
        let weights = FactorFit.weightCandidates.count
        #expect(outcome.arms.map { $0.choice.table.count } == [weights, weights, 2 * weights])
        #expect(outcome.arms[0].choice.options.reactionBoost == 0 && outcome.arms[1].choice.options.reactionBoost == 1)
        // Where the choice keeps the plain settings, its arm is the swipes-only arm, card for card.
        let chosen = outcome.arms[2]
        if chosen.choice.options.reactionBoost == 0 {
            #expect(chosen.result.servedNDCG == outcome.arms[0].result.servedNDCG)
        }
        // The same swipes-only arm as the family's own evaluation.
        let family = try FamilyEvaluation.run(family: .herd, engine: EvaluationFixtures.engine, students: students, population: population,
                                              swipes: 10, seed: 3, factorCandidates: [options])
        #expect(family.populationSwipes == 300)
        #expect(family.choice.weight == outcome.arms[0].choice.weight)
        // The prior alone, plain then weighed: the plain one is the family's own prior arm.
        #expect(outcome.priorArms.map(\.name) == ["prior, swipes only", "prior, signals", "prior, if chosen"])
        // The choice weighs the plain prior against the arms' own boosts, on the population's students.
        #expect(outcome.priorChoice.candidates.map(\.boosts)
                == [.none, .init(reaction: FamilyEvaluation.signalBoosts.reaction, dwell: FamilyEvaluation.signalBoosts.dwell)])
        #expect(outcome.priorChoice.students > 0 && outcome.priorChoice.students <= population.count)
        #expect(outcome.priorArms.allSatisfy { $0.result.policy == .enginePopulationPrior && $0.result.servedNDCG.allSatisfy { $0.count == 4 } })
        let familyPrior = try #require(family.results.first { $0.policy == .enginePopulationPrior })
        #expect(outcome.priorArms[0].result.servedNDCG == familyPrior.servedNDCG)
    }
}
