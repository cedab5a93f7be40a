import Foundation
import SwipeRankColleges
import Testing
import SwipeRank
import SwipeRankEvaluation
import SwipeRankNumerics

@Suite("Simulation evaluation")
struct SimulationEvaluatorTests {
    static let students: [DatasetStudent] = {
        var rng = SplitMix64(seed: 77)
        return (0..<30).map { DatasetStudent(id: "t\($0)", profile: SchoolSimulation.randomProfile(schools: EvaluationFixtures.schools, using: &rng)) }
    }()

    /// An evaluator with a population prior fitted on 20 other simulated students.
    static func evaluator() throws -> SimulationEvaluator<SchoolMatcher> {
        var evaluator = SimulationEvaluator(engine: EvaluationFixtures.engine)
        var rng = SplitMix64(seed: 78)
        let others = (0..<20).map { DatasetStudent(id: "o\($0)", profile: SchoolSimulation.randomProfile(schools: EvaluationFixtures.schools, using: &rng)) }
        evaluator.population = try PopulationFit.fit(engine: EvaluationFixtures.engine, students: others,
                                                     interactions: evaluator.simulateLog(students: others, swipes: 30, seed: 6))
        evaluator.expandedTermsEngine = EvaluationFixtures.expandedEngine
        return evaluator
    }

    @Test("engine_expanded_terms is the engine served by expandedTermsEngine: with the main engine there, the same results")
    func expandedTermsPolicy() throws {
        var evaluator = SimulationEvaluator(engine: EvaluationFixtures.engine)
        evaluator.expandedTermsEngine = EvaluationFixtures.engine
        let students = Array(Self.students.prefix(6))
        let same = try evaluator.run(students: students, swipes: 20, policies: [.engine, .engineExpandedTerms], seed: 4)
        #expect(same[0].servedNDCG == same[1].servedNDCG && same[0].ndcg == same[1].ndcg && same[0].likeRate == same[1].likeRate)
        // With the expanded basis: the same cold-start ranking (the extra weights start at 0),
        // then other decks as the extra terms learn.
        evaluator.expandedTermsEngine = EvaluationFixtures.expandedEngine
        let other = try evaluator.run(students: students, swipes: 20, policies: [.engine, .engineExpandedTerms], seed: 4)
        #expect(other[0].ndcg[0] == other[1].ndcg[0], "the cold-start ranking is the standard basis's")
        #expect(other[0].servedNDCG != other[1].servedNDCG)
    }

    @Test("the engine beats the baselines on NDCG@10 and P@10, keeps the band mix, and runs deterministically")
    func engineBeatsBaselines() throws {
        let evaluator = try Self.evaluator()
        let results = try evaluator.run(students: Self.students, swipes: 30, policies: PolicyKind.allCases.filter { $0 != .engineCollaborative }, seed: 3)
        let byPolicy = Dictionary(uniqueKeysWithValues: results.map { ($0.policy, $0) })
        func final(_ p: PolicyKind, _ metric: KeyPath<SimulationPolicyResult, [[Double]]>) -> Double {
            SimulationPolicyResult.means(byPolicy[p]![keyPath: metric]).last!
        }
        #expect(results[0].checkpoints == [0, 10, 20, 30])
        #expect(results.allSatisfy { $0.ndcg.allSatisfy { $0.count == 30 } })
        // Before any swipe the engine ranks like its cold start.
        #expect(abs(SimulationPolicyResult.means(byPolicy[.engine]!.ndcg)[0]
                    - SimulationPolicyResult.means(byPolicy[.profileOnly]!.ndcg)[0]) < 1e-9)
        #expect(final(.engine, \.ndcg) > final(.profileOnly, \.ndcg) + 0.05)
        #expect(final(.profileOnly, \.ndcg) > final(.random, \.ndcg))
        #expect(final(.engine, \.precision) > final(.popularity, \.precision))
        #expect(byPolicy[.engine]!.geoMixError < 0.05)
        #expect(byPolicy[.engineNoGeoMix]!.geoMixError > byPolicy[.engine]!.geoMixError)
        #expect(byPolicy[.random]!.coverage > byPolicy[.popularity]!.coverage)
        #expect(byPolicy[.engine]!.cosine.last!.count == 30 && byPolicy[.random]!.cosine.last!.isEmpty)
        // Students in the engine's model class: the linear oracle knows their taste exactly.
        #expect(final(.linearOracle, \.ndcg) > 0.999)
        #expect(results.allSatisfy { $0.generalization.count == 30 })
        func general(_ p: PolicyKind) -> Double { byPolicy[p]!.generalization.reduce(0, +) / 30 }
        #expect(general(.linearOracle) > general(.engine) && general(.engine) > general(.profileOnly))
        // Deterministic given the seed.
        let again = try evaluator.run(students: Array(Self.students.prefix(5)), swipes: 10, policies: [.engine, .random], seed: 3)
        let twice = try evaluator.run(students: Array(Self.students.prefix(5)), swipes: 10, policies: [.engine, .random], seed: 3)
        #expect(again.map(\.ndcg) == twice.map(\.ndcg) && again.map(\.coverage) == twice.map(\.coverage))
    }

    @Test("served NDCG@10 scores the deck as served: equal to the ranking's for policies that serve their ranking, lower for the engine at the start")
    func servedDecks() throws {
        let evaluator = try Self.evaluator()
        let students = Array(Self.students.prefix(12))
        let results = try evaluator.run(students: students, swipes: 20, policies: PolicyKind.allCases.filter { $0 != .engineCollaborative }, seed: 5)
        for r in results {
            #expect(r.servedNDCG.count == r.checkpoints.count)
            #expect(r.servedNDCG.allSatisfy { $0.count == students.count }, "\(r.policy)")
            // Static and greedy policies serve exactly their own top 10 of the unseen cards.
            if [.profileOnly, .popularity, .random, .naiveSGD, .linearOracle].contains(r.policy) {
                #expect(r.servedNDCG == r.ndcg, "\(r.policy)")
            }
            #expect(r.servedNDCG.joined().allSatisfy { (0...1.000001).contains($0) })
        }
        // The engine's first deck holds a probe and the band mix: below its own ranking.
        let engine = results.first { $0.policy == .engine }!
        #expect(SimulationPolicyResult.means(engine.servedNDCG)[0] < SimulationPolicyResult.means(engine.ndcg)[0])
    }

    @Test("the constrained oracle serves the true taste under the engine's band plan: the bound of any banded deck")
    func constrainedOracle() throws {
        let evaluator = try Self.evaluator()
        let students = Array(Self.students.prefix(12))
        let results = try evaluator.run(students: students, swipes: 20, policies: [.constrainedOracle, .engine, .engineNoGeoMix, .linearOracle], seed: 6)
        let byPolicy = Dictionary(uniqueKeysWithValues: results.map { ($0.policy, $0) })
        let oracle = byPolicy[.constrainedOracle]!
        // Its bands are the engine's plan, card for card in share.
        #expect(oracle.geoMixError <= byPolicy[.engine]!.geoMixError + 1e-9)
        // It knows the taste: its own ranking is ideal, its decks are the best any banded deck can be.
        #expect(oracle.ndcg.joined().allSatisfy { $0 > 0.999999 })
        for c in oracle.checkpoints.indices {
            for (s, value) in oracle.servedNDCG[c].enumerated() {
                #expect(value >= byPolicy[.engine]!.servedNDCG[c][s] - 1e-9, "student \(s) at n=\(oracle.checkpoints[c])")
            }
        }
        // The band mix costs it something: below the unconstrained bound (1, the linear oracle here).
        #expect(SimulationPolicyResult.means(oracle.servedNDCG).last! < SimulationPolicyResult.means(byPolicy[.linearOracle]!.servedNDCG).last! - 0.01)
        // Without a home there are no bands: it is the greedy oracle.
        var homeless = students[0]
        homeless.profile.home = nil
        let free = try evaluator.run(students: [homeless], swipes: 20, policies: [.constrainedOracle], seed: 6)
        #expect(free[0].servedNDCG.joined().allSatisfy { $0 > 0.999999 })
    }

    @Test("a taste model outside the engine's class drives the answers and the truth; cosine is left out")
    func tasteModel() throws {
        var evaluator = SimulationEvaluator(engine: EvaluationFixtures.engine)
        let students = Array(Self.students.prefix(6))
        let n = EvaluationFixtures.engine.matcher.catalog.count
        // Nobody likes anything: every like rate is 0.
        evaluator.taste = { _, _ in [Double](repeating: 0, count: n) }
        let never = try evaluator.run(students: students, swipes: 20, policies: [.engine, .naiveSGD], seed: 2)
        #expect(never.allSatisfy { $0.likeRate.dropFirst().joined().allSatisfy { $0 == 0 } })
        #expect(never.allSatisfy { $0.cosine.joined().isEmpty })
        // Everything is liked: every like rate is 1.
        evaluator.taste = { _, _ in [Double](repeating: 1, count: n) }
        let always = try evaluator.run(students: students, swipes: 20, policies: [.engine], seed: 2)
        #expect(always[0].likeRate.dropFirst().joined().allSatisfy { $0 == 1 })
        // The truth is the model's: only even rows are liked, so a policy ranking exactly those first is ideal.
        evaluator.taste = { _, _ in (0..<n).map { $0 % 2 == 0 ? 0.9 : 0.05 } }
        let parity = try evaluator.run(students: students, swipes: 10, policies: [.profileOnly], seed: 2)
        // Reference at n = 0: the cold-start top 10 scored by parity against ten liked rows.
        let catalog = EvaluationFixtures.engine.matcher.catalog
        let ideal = (0..<10).reduce(0.0) { $0 + 0.9 / log2(Double($1 + 2)) }
        for (s, student) in students.enumerated() {
            let top = try EvaluationFixtures.engine.matcher.recommend(profile: student.profile, count: 10).recommendations
            let dcg = top.enumerated().reduce(0.0) { $0 + (catalog.row(of: $1.element.item.id)! % 2 == 0 ? 0.9 : 0.05) / log2(Double($1.offset + 2)) }
            #expect(abs(parity[0].ndcg[0][s] - dcg / ideal) < 1e-9, "student \(s)")
            #expect(parity[0].servedNDCG[0][s] == parity[0].ndcg[0][s])
        }
        // HiddenTasteStudent: deterministic, and learning still helps the engine's own ranking.
        evaluator.taste = SimulationEvaluator<SchoolMatcher>.hiddenTaste(schools: EvaluationFixtures.schools)
        let hidden = try evaluator.run(students: students, swipes: 20, policies: [.engine, .profileOnly], seed: 4)
        let again = try evaluator.run(students: students, swipes: 20, policies: [.engine, .profileOnly], seed: 4)
        #expect(hidden.map(\.servedNDCG) == again.map(\.servedNDCG) && hidden.map(\.ndcg) == again.map(\.ndcg))
        #expect(hidden[0].cosine.joined().isEmpty)
    }

    @Test("bootstrap intervals bracket the mean and are reproducible")
    func bootstrap() {
        var rng = SplitMix64(seed: 1)
        let values = (0..<200).map { _ in Double.random(in: 0...1, using: &rng) }
        let mean = values.reduce(0, +) / 200
        var a = SplitMix64(seed: 9), b = SplitMix64(seed: 9)
        let ci = Bootstrap.meanInterval(values, using: &a)
        #expect(ci.lower < mean && mean < ci.upper && ci.upper - ci.lower < 0.2)
        #expect(Bootstrap.meanInterval(values, using: &b) == ci)
    }
}
