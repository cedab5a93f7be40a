import Foundation
import SwipeRank
import SwipeRankColleges
import SwipeRankServer
import Testing

/// The service over an engine that starts from a population prior (`swiperank serve --population-prior`).
@Suite("Service with a population prior")
struct PopulationRouteTests {
    @Test("decks and match scores include the population's item effects")
    func itemEffects() async throws {
        let base = Fixtures.engine
        let catalog = base.matcher.catalog
        let profile = try StudentProfile.decode(json: Data(Fixtures.profile.utf8), source: "profile")
        let student = try base.matcher.student(profile)
        // A nearby school the cold start ranks low, given a large effect by the population.
        var distances: [Float] = []
        catalog.distancesMiles(from: profile.home!, into: &distances)
        var cold: [Float] = []
        base.rawScores(weights: base.matcher.coldStartWeights(for: student), student: student, into: &cold)
        let nearby = (0..<catalog.count).filter { distances[$0] < 100 }
        let target = nearby.min { cold[$0] < cold[$1] }!
        var effects = [Double](repeating: 0, count: catalog.count)
        effects[target] = 50
        let prior = PopulationPrior(catalogFingerprint: base.catalogFingerprint, featureCount: catalog.dimension,
                                    termNames: base.matcher.termNames, weightShift: [Double](repeating: 0, count: base.modelDimension),
                                    itemEffects: effects, students: 1, swipes: 1, itemPrecision: 5)
        let engine = try base.withPopulation(prior)
        let id = catalog.ids[target]
        try await Harness(engine: engine).run { c in
            try await c.createStudent("pop")
            let deck = try await c.deck("pop")
            #expect(deck.contains(id), "the school the population loves is in the first deck")
            let detail = try await c.call(.get, "/student/schools/\(id)?fields=minimal", student: "pop")
            #expect(detail.status == .ok)
            #expect((detail.json["match_score"] as? Double ?? 0) > 0.99)
        }
        try await Harness().run { c in
            try await c.createStudent("plain")
            #expect(!(try await c.deck("plain")).contains(id))
            let detail = try await c.call(.get, "/student/schools/\(id)?fields=minimal", student: "plain")
            #expect((detail.json["match_score"] as? Double ?? 1) < 0.9)
        }
    }
}
