import Foundation
import SwipeRank
import SwipeRankStore

/// The screens an app has, each in one request: matches (liked and saved items with their
/// current match) and home (the deck, the learning state, counts, open groups).
extension StudentService {
    /// Saves are judgements whose id the service writes as `/save/<item id>`.
    static func isSave(_ judgementID: String) -> Bool { judgementID.hasPrefix("/save/") }

    /// The liked and saved items, newest first, `limit` from `offset`, each with the student's
    /// current match score, grade and explanations.
    func matches(_ studentID: String, limit: Int, offset: Int, fields: CardFields) async throws -> Data {
        try await withStudent(studentID) { live in
            let liked = live.session.likedItems(isSave: Self.isSave)
            let page = Array(liked.dropFirst(offset).prefix(limit))
            let cards = try cards(for: page.map(\.cardID), session: live.session)
            let list = CardList(cards.map { ($0, nil) }, fields: fields, compressed: false, summaries: summaryJSON, vocabulary: M.vocabulary)
            let next = offset + page.count < liked.count ? offset + page.count : nil
            let body = MatchesBody(matches: list, details: page.map { .init(likedAt: $0.timestamp, swiped: $0.swiped, saved: $0.saved) },
                                   count: liked.count, nextOffset: next)
            return ([], StudentUpdate(), try WireJSON.encode(body))
        }
    }
}

extension StudentService {
    /// The learning state, saved items and liked-or-saved items, for the home screen.
    func homeCounts(_ studentID: String) async throws -> (LearningStateResponse, saved: Int, liked: Int) {
        try await withStudent(studentID) { live in
            let liked = live.session.likedItems(isSave: Self.isSave)
            return ([], StudentUpdate(), (learningStateBody(live.session), liked.count { $0.saved }, liked.count))
        }
    }
}

/// `GET /student/matches`: the cards, and beside them (same order) when and how each was liked.
struct MatchesBody: Encodable {
    var matches: CardList
    var details: [Detail]
    /// All liked or saved items (every page).
    var count: Int
    /// The `offset` of the next page, or null on the last.
    var nextOffset: Int?

    struct Detail: Encodable {
        var likedAt: Int64
        var swiped: Bool
        var saved: Bool
        enum CodingKeys: String, CodingKey { case likedAt = "liked_at", swiped, saved }
    }

    enum CodingKeys: String, CodingKey { case matches, details, count, nextOffset = "next_offset" }

    func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(matches, forKey: .matches)
        try c.encode(details, forKey: .details)
        try c.encode(count, forKey: .count)
        try c.encode(nextOffset, forKey: .nextOffset)  // explicit null: the last page
    }
}

/// `GET /student/home`: what an app's first screen shows, in one request.
struct HomeBody: Encodable {
    /// The deck, as `GET /student/recommendations` answers it (retry-safe).
    var deck: JSONValue
    var learningState: LearningState
    var totalSwipes: Int
    var savedCount: Int
    var matchesCount: Int
    /// The student's open group sessions (as `GET /groups?status=open`).
    var openGroups: JSONValue

    enum CodingKeys: String, CodingKey {
        case deck, learningState = "learning_state", totalSwipes = "total_swipes", savedCount = "saved_count"
        case matchesCount = "matches_count", openGroups = "open_groups"
    }
}
