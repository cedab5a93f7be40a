import Foundation
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

    @Test("the engine beats the baselines on NDCG@10 and P@10, keeps the band mix, and runs deterministically")
    func engineBeatsBaselines() throws {
        let evaluator = SimulationEvaluator(engine: EvaluationFixtures.engine)
        let results = try evaluator.run(students: Self.students, swipes: 30, policies: PolicyKind.allCases, seed: 3)
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
        // Deterministic given the seed.
        let again = try evaluator.run(students: Array(Self.students.prefix(5)), swipes: 10, policies: [.engine, .random], seed: 3)
        let twice = try evaluator.run(students: Array(Self.students.prefix(5)), swipes: 10, policies: [.engine, .random], seed: 3)
        #expect(again.map(\.ndcg) == twice.map(\.ndcg) && again.map(\.coverage) == twice.map(\.coverage))
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
