import Foundation
@testable import SwipeRankColleges
import Testing
@testable import SwipeRank
import SwipeRankNumerics

/// `SchoolTermBasis.expanded`: two more student-relative terms (`budget_over`, `distance_near`).
@Suite("Term basis")
struct TermBasisTests {
    static let standard = SwipeEngine(matcher: Fixtures.matcher)
    static let expanded = SwipeEngine(matcher: SchoolMatcher(schools: Fixtures.schools, termBasis: .expanded))

    /// Profiles with and without a home, a budget and a home state.
    static func profiles(seed: UInt64) -> [StudentProfile] {
        var rng = SplitMix64(seed: seed)
        return (0..<6).map { i in
            var p = Fixtures.bostonStudent
            p.home = i % 3 == 2 ? nil : try! GeoPoint(latitude: Double.random(in: 26...48, using: &rng),
                                                     longitude: Double.random(in: -122 ... -70, using: &rng))
            p.maxDistanceMiles = Double.random(in: 50...1500, using: &rng)
            p.annualBudget = i % 4 == 3 ? nil : Double.random(in: 8_000...60_000, using: &rng)
            p.homeState = i % 2 == 0 ? "CA" : nil
            return p
        }
    }

    @Test("the extra terms follow their documented formulas; the standard four are unchanged", arguments: 0..<3)
    func formulas(seed: UInt64) throws {
        let schools = Fixtures.schools
        for profile in Self.profiles(seed: seed) {
            let plain = try Self.standard.matcher.student(profile)
            let student = try Self.expanded.matcher.student(profile)
            #expect(student.terms.names == ["distance", "budget", "academic_fit", "major_fit", "budget_over", "distance_near"])
            for i in 0..<schools.catalog.count {
                for k in 0..<4 { #expect(student.terms[term: k, item: i] == plain.terms[term: k, item: i]) }
                // References in Double from the table on MatchStudent; stored as 16-bit fixed point.
                var over = 0.0
                if let budget = profile.annualBudget, let cost = schools.estimatedCost(row: i, homeState: profile.homeState) {
                    over = min(1, max(0, (cost / budget - 1) / 0.2))
                }
                var near = 0.0
                // The great-circle miles the catalog computed (tested on their own elsewhere).
                if profile.home != nil, !student.distances[i].isNaN {
                    near = exp(-Double(student.distances[i]) / profile.maxDistanceMiles)
                }
                #expect(abs(Double(student.terms[term: 4, item: i]) - over) < 1e-4, "budget_over at row \(i)")
                #expect(abs(Double(student.terms[term: 5, item: i]) - near) < 1e-4, "distance_near at row \(i)")
            }
        }
    }

    @Test("cold start: the extra weights are 0, so the ranking is the standard basis's, card for card")
    func coldStart() throws {
        #expect(Self.expanded.modelDimension == Self.standard.modelDimension + 2)
        let a = try Self.standard.session(studentID: "s", profile: Fixtures.bostonStudent, seed: 7)
        let b = try Self.expanded.session(studentID: "s", profile: Fixtures.bostonStudent, seed: 7)
        #expect(b.weights.terms.count == 6 && b.weights.terms[4] == 0 && b.weights.terms[5] == 0)
        #expect(Array(b.weights.terms[..<4]) == a.weights.terms && b.weights.features == a.weights.features)
        // The posterior ranking (no probes: their draw weighs the posterior variance, which the
        // extra terms' prior adds to, so probes may differ).
        let rankA = a.ranking(count: 30), rankB = b.ranking(count: 30)
        #expect(rankA.map(\.item.id) == rankB.map(\.item.id))
        #expect(rankA.map(\.matchScore) == rankB.map(\.matchScore))
        #expect(rankA.map(\.explanations) == rankB.map(\.explanations))
    }

    @Test("a budget cliff teaches budget_over a negative weight", arguments: 0..<3)
    func learnsCliff(seed: UInt64) throws {
        let engine = Self.expanded
        var profile = Fixtures.bostonStudent
        profile.annualBudget = 25_000
        profile.homeState = nil
        var session = try engine.session(studentID: "c", profile: profile, seed: seed)
        var rng = SplitMix64(seed: 100 + seed)
        for position in 1...40 {
            if session.served.count < position { _ = session.recommendations(count: 10) }
            let card = session.served[position - 1]
            // Likes a school only within the real budget, whatever else it is (a cliff), 10% lapses.
            let cost = engine.matcher.schools.estimatedCost(row: card.row, homeState: nil) ?? .infinity
            var liked = cost <= 25_000
            if Double.random(in: 0..<1, using: &rng) < 0.1 { liked.toggle() }
            let result = try session.recordSwipe(Swipe(swipeID: "s\(position)", cardID: card.cardID, action: liked ? .like : .dislike,
                                                       timestamp: Int64(position)))
            if let prompt = result.feedback { try session.submitFeedback(cardID: prompt.cardID, options: []) }
        }
        #expect(session.weights.terms[4] < 0, "budget_over learned \(session.weights.terms[4])")
        // Feedback shifts act on the expanded vector.
        #expect(engine.matcher.feedbackAdjustment(for: .tooExpensive, row: 0).count == engine.modelDimension)
    }

    @Test("the extra terms explain as the terms they reshape: distance_near as distance, budget_over as budget")
    func explanations() throws {
        let matcher = Self.expanded.matcher
        var profile = Fixtures.bostonStudent
        profile.homeState = nil
        let student = try matcher.student(profile)
        let d = matcher.catalog.dimension
        let features = [Float](repeating: 0, count: d)
        // Only distance_near weighs: a school within the preferred distance is "close to home"
        // (e^(−d/p) ≥ 0.37, so its contribution clears the 0.05 threshold), a school far away says nothing.
        let near = PreferenceWeights(features: features, terms: [0, 0, 0, 0, 0, 2])
        let rows = Array(0..<matcher.catalog.count)
        let close = try #require(rows.first { !student.distances[$0].isNaN && Double(student.distances[$0]) <= profile.maxDistanceMiles / 2 })
        let sentences = matcher.explanations(row: close, student: student, weights: near)
        #expect(sentences.count == 1 && sentences[0].hasPrefix("Close to home ("), "\(sentences)")
        let far = try #require(rows.first { !student.distances[$0].isNaN && Double(student.distances[$0]) > 6 * profile.maxDistanceMiles })
        #expect(matcher.explanations(row: far, student: student, weights: near).isEmpty)
        // Only budget_over weighs (a positive weight, so over-budget schools gain): the sentence is the budget's.
        let over = PreferenceWeights(features: features, terms: [0, 0, 0, 0, 2, 0])
        let budget = try #require(profile.annualBudget)
        let pricey = try #require(rows.first { (matcher.schools.estimatedCost(row: $0, homeState: nil) ?? 0) > 1.3 * budget })
        let said = matcher.explanations(row: pricey, student: student, weights: over)
        #expect(said.count == 1 && said[0].hasPrefix("Close to your budget ("), "\(said)")
    }

    @Test("the basis is part of the model: versions differ, snapshots restore only under their own basis")
    func snapshots() throws {
        #expect(Fixtures.matcher.modelTag == nil)
        #expect(Self.expanded.matcher.modelTag == "terms=expanded")
        #expect(Self.expanded.modelVersion != Self.standard.modelVersion)
        var session = try Self.expanded.session(studentID: "x", profile: Fixtures.bostonStudent, seed: 3)
        for card in session.recommendations(count: 6).recommendations {
            _ = try session.recordSwipe(Swipe(swipeID: card.item.id, cardID: card.item.id, action: .like, timestamp: 1))
        }
        let restored = try Self.expanded.restore(session.snapshot())
        #expect(restored.model.digest == session.model.digest)
        #expect(throws: DataError.self) { _ = try Self.standard.restore(session.snapshot()) }
        var plain = try Self.standard.session(studentID: "y", profile: Fixtures.bostonStudent, seed: 3)
        _ = plain.recommendations(count: 2)
        #expect(throws: DataError.self) { _ = try Self.expanded.restore(plain.snapshot()) }
    }
}
