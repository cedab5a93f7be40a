import Foundation
import SwipeRank
import SwipeRankColleges
import SwipeRankNumerics
import Testing

/// `recordJudgement`: evidence about cards outside the deck (saved schools, swipes carried over
/// to a new profile).
@Suite struct JudgementTests {
    static let engine = SwipeEngine(matcher: Fixtures.matcher)

    @Test("a judged card is never served afterwards, and the unseen count drops by one")
    func judgedNotServed() throws {
        var session = try Self.engine.session(studentID: "j", profile: Fixtures.bostonStudent, seed: 3)
        // The card the cold start would serve first: judging it must push it out of the deck.
        var probe = session
        let first = probe.recommendations(count: 1).recommendations[0].item.id
        let before = session.unseenCount
        let result = try session.recordJudgement(Swipe(swipeID: "/save/\(first)", cardID: first, action: .like, timestamp: 1), weight: 2)
        #expect(result.outcome == .recorded)
        #expect(result.totalSwipes == 1)
        #expect(session.unseenCount == before - 1)
        let served = session.recommendations(count: 200).recommendations.map(\.item.id)
        #expect(!served.contains(first))
        // And swiping it is refused: it was never served.
        #expect(throws: SwipeError.self) { try session.recordSwipe(Swipe(swipeID: "s", cardID: first, action: .like, timestamp: 2)) }
    }

    @Test("weight w moves the model like the weighted Laplace update (reference: observe with weight)")
    func weighted() throws {
        var session = try Self.engine.session(studentID: "j", profile: Fixtures.bostonStudent, seed: 3)
        let id = Fixtures.matcher.catalog.ids[17]
        var reference = session.model
        try reference.observe(session.combinedVector(row: 17), liked: true, weight: 2.5)
        _ = try session.recordJudgement(Swipe(swipeID: "x", cardID: id, action: .like, timestamp: 1), weight: 2.5)
        #expect(session.model == reference)
        // A stronger like moves the probability of that card further up than a plain one.
        var plain = try Self.engine.session(studentID: "j", profile: Fixtures.bostonStudent, seed: 3)
        _ = try plain.recordJudgement(Swipe(swipeID: "x", cardID: id, action: .like, timestamp: 1), weight: 1)
        let z = session.combinedVector(row: 17)
        #expect(session.model.likeProbability(z) > plain.model.likeProbability(z))
    }

    @Test("bad judgements are rejected and change nothing", arguments: [0.0, -1, .nan, .infinity, 10.5])
    func rejected(weight: Double) throws {
        var session = try Self.engine.session(studentID: "j", profile: Fixtures.bostonStudent, seed: 3)
        let before = session.snapshot()
        #expect(throws: SwipeError.self) {
            try session.recordJudgement(Swipe(swipeID: "x", cardID: Fixtures.matcher.catalog.ids[0], action: .like, timestamp: 1), weight: weight)
        }
        #expect(throws: SwipeError.self) {
            try session.recordJudgement(Swipe(swipeID: "x", cardID: "no-such-school", action: .like, timestamp: 1), weight: 1)
        }
        #expect(session.snapshot() == before)
    }

    @Test("a duplicate judgement id is reported, not applied twice")
    func duplicate() throws {
        var session = try Self.engine.session(studentID: "j", profile: Fixtures.bostonStudent, seed: 3)
        let id = Fixtures.matcher.catalog.ids[5]
        _ = try session.recordJudgement(Swipe(swipeID: "x", cardID: id, action: .dislike, timestamp: 1), weight: 1)
        let model = session.model
        #expect(try session.recordJudgement(Swipe(swipeID: "x", cardID: id, action: .dislike, timestamp: 1), weight: 1).outcome == .duplicate)
        #expect(session.model == model)
    }

    @Test("snapshots carry judgements: restore gives the same state and the same next cards", arguments: 0..<4)
    func snapshotRoundTrip(seed: UInt64) throws {
        var rng = SplitMix64(seed: seed)
        var session = try Self.engine.session(studentID: "j\(seed)", profile: Fixtures.bostonStudent, seed: seed)
        for step in 0..<30 {
            if step % 3 == 0 {
                let row = Int(rng.next() % UInt64(Fixtures.matcher.catalog.count))
                _ = try session.recordJudgement(Swipe(swipeID: "/save/\(step)", cardID: Fixtures.matcher.catalog.ids[row],
                                                     action: rng.next() % 2 == 0 ? .like : .dislike, timestamp: Int64(step)),
                                               weight: 1 + Double(rng.next() % 3))
            } else {
                let card = session.recommendations(count: 1).recommendations[0]
                _ = try session.recordSwipe(Swipe(swipeID: "s\(step)", cardID: card.item.id,
                                                  action: rng.next() % 2 == 0 ? .like : .dislike, timestamp: Int64(step)))
            }
        }
        let json = try session.snapshot().jsonData()
        var restored = try Self.engine.restore(SessionSnapshot<StudentProfile>.decode(json: json, source: "test"))
        #expect(restored.model == session.model)
        #expect(restored.unseenCount == session.unseenCount)
        #expect(restored.recommendations(count: 12) == session.recommendations(count: 12))
    }
}
