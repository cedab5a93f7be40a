import Testing
import SwipeRank
import SwipeRankColleges

@Suite("Open cards")
struct OpenCardsTests {
    @Test("a served card is open until it is swiped or judged (saved from its page); a restore keeps which are open")
    func playedCardsAreNotOpen() throws {
        let engine = SwipeEngine(matcher: Fixtures.matcher)
        var session = try engine.session(studentID: "o", profile: Fixtures.bostonStudent, seed: 3)
        let dealt = session.deck(count: 5).dealt.recommendations.map(\.item.id)
        #expect(dealt.count == 5)
        #expect(session.openCards(limit: 10).map(\.recommendation.item.id) == dealt)
        #expect(session.openCards(limit: 2).map(\.recommendation.item.id) == Array(dealt.prefix(2)))
        // Asking again deals nothing: the same five.
        #expect(session.deck(count: 5).ids == dealt)
        _ = try session.recordSwipe(Swipe(swipeID: "s0", cardID: dealt[0], action: .dislike, timestamp: 1))
        _ = try session.recordJudgement(Swipe(swipeID: "j1", cardID: dealt[1], action: .like, timestamp: 2), weight: 1)
        // A judgement on a card never served leaves the open ones as they are.
        let unserved = try #require(engine.matcher.catalog.ids.first { !dealt.contains($0) })
        _ = try session.recordJudgement(Swipe(swipeID: "j9", cardID: unserved, action: .dislike, timestamp: 3), weight: 1)
        let open = Array(dealt.suffix(3))
        #expect(session.openCards(limit: 10).map(\.recommendation.item.id) == open)
        let next = session.deck(count: 5)
        #expect(next.open.map(\.recommendation.item.id) == open && next.dealt.recommendations.count == 2)
        #expect(!next.ids.contains(unserved))
        let restored = try engine.restore(session.snapshot())
        #expect(restored.openCards(limit: 10).map(\.recommendation.item.id) == next.ids)
    }
}
