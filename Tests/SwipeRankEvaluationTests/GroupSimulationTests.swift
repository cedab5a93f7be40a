import Foundation
import SwipeRank
import SwipeRankNumerics
@testable import SwipeRankEvaluation
import Testing

@Suite struct GroupSimulationTests {
    @Test("hidden tastes: about a quarter liked, about 15% contradict their profile, the same for the same seed")
    func hiddenTaste() {
        let schools = EvaluationFixtures.schools
        var rng = SplitMix64(seed: 77)
        var contradicting = 0, likeRate = 0.0
        let n = 200
        for _ in 0..<n {
            let profile = SchoolSimulation.randomProfile(schools: schools, using: &rng)
            var copy = rng
            let student = HiddenTasteStudent(profile: profile, schools: schools, using: &rng)
            let again = HiddenTasteStudent(profile: profile, schools: schools, using: &copy)
            #expect(student.utility == again.utility && student.threshold == again.threshold)
            let above = student.utility.filter { $0 > student.threshold }.count
            #expect(abs(Double(above) / Double(schools.catalog.count) - 0.25) < 0.01)
            if student.contradicts { contradicting += 1 }
            likeRate += (0..<schools.catalog.count).reduce(0) { $0 + student.likeProbability(row: $1) } / Double(schools.catalog.count)
        }
        #expect((0.08...0.22).contains(Double(contradicting) / Double(n)))
        #expect((0.15...0.4).contains(likeRate / Double(n)))
    }

    @Test("the learned group deck matches sooner than one shared shuffle, for happier members; runs are reproducible")
    func learnedBeatsShuffle() throws {
        var simulation = GroupSimulation(engine: EvaluationFixtures.engine)
        simulation.soloSwipes = 5
        simulation.populationSize = 20
        let decks: [GroupSimulation.Deck] = [.learned(.standard), .sharedShuffle, .popularity]
        let outcomes = try simulation.run(groups: 30, decks: decks, seed: 3)
        #expect(outcomes.map(\.count) == [30, 30, 30])
        for results in outcomes {
            for o in results {
                #expect((2...6).contains(o.size))
                if let mean = o.meanUtility, let least = o.leastUtility {
                    #expect((0...1).contains(mean) && least <= mean + 1e-12 && o.swipes! >= GroupSimulation.quorum(members: o.size))
                }
            }
        }
        let summaries = GroupSimulation.summarize(outcomes, decks: decks, seed: 3)
        #expect(summaries[0].medianSwipes.value < summaries[1].medianSwipes.value)
        #expect(summaries[0].meanUtility.value > summaries[1].meanUtility.value)
        #expect(try simulation.run(groups: 30, decks: decks, seed: 3) == outcomes)
        #expect(GroupSimulation.quorum(members: 2) == 2 && GroupSimulation.quorum(members: 3) == 2)
        #expect(GroupSimulation.quorum(members: 4) == 3 && GroupSimulation.quorum(members: 6) == 4)
    }

    @Test("bootstrap median and its interval")
    func median() {
        #expect(Bootstrap.median([3, 1, 2]) == 2 && Bootstrap.median([4, 1, 2, 3]) == 2.5)
        #expect(Bootstrap.median([1, .infinity, .infinity]) == .infinity)
        var rng = SplitMix64(seed: 1)
        let ci = Bootstrap.interval(Array(repeating: 5.0, count: 20), statistic: Bootstrap.median, using: &rng)
        #expect(ci.lower == 5 && ci.upper == 5)
        let values = (0..<200).map(Double.init)
        let wide = Bootstrap.interval(values, statistic: Bootstrap.median, using: &rng)
        #expect(wide.lower < 99.5 && wide.upper > 99.5 && wide.lower > 70 && wide.upper < 130)
    }
}
