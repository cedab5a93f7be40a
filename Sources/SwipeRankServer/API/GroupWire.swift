import Foundation
import SwipeRank

/// `POST /groups`.
struct CreateGroupRequest: Decodable, Sendable {
    /// Text attribute → accepted values (all must hold); nil: the whole catalog.
    var filter: [String: [String]]?
    var quorumN: Int
    var maxMembers: Int?
    var strategy: GroupStrategy?

    enum CodingKeys: String, CodingKey, CaseIterable {
        case filter, quorumN = "quorum_n", maxMembers = "max_members", strategy
    }

    init(from decoder: any Decoder) throws {
        try decoder.rejectUnknownKeys(CodingKeys.self)
        let c = try decoder.container(keyedBy: CodingKeys.self)
        filter = try c.decodeIfPresent([String: [String]].self, forKey: .filter)
        quorumN = try c.decode(Int.self, forKey: .quorumN)
        maxMembers = try c.decodeIfPresent(Int.self, forKey: .maxMembers)
        strategy = try c.decodeIfPresent(GroupStrategy.self, forKey: .strategy)
    }
}

/// `POST /groups/join`.
struct JoinGroupRequest: Decodable, Sendable {
    var inviteCode: String

    enum CodingKeys: String, CodingKey, CaseIterable { case inviteCode = "invite_code" }

    init(from decoder: any Decoder) throws {
        try decoder.rejectUnknownKeys(CodingKeys.self)
        inviteCode = try decoder.container(keyedBy: CodingKeys.self).decode(String.self, forKey: .inviteCode)
    }
}

/// `POST /groups/:id/likes`.
struct GroupLikeRequest: Decodable, Sendable {
    var likeID: String
    var optionID: String
    var action: GroupVoteAction

    enum CodingKeys: String, CodingKey, CaseIterable { case likeID = "like_id", optionID = "option_id", action }

    init(from decoder: any Decoder) throws {
        try decoder.rejectUnknownKeys(CodingKeys.self)
        let c = try decoder.container(keyedBy: CodingKeys.self)
        likeID = try c.decode(String.self, forKey: .likeID)
        optionID = try c.decode(String.self, forKey: .optionID)
        action = try c.decodeIfPresent(GroupVoteAction.self, forKey: .action) ?? .like
    }
}

/// What the store holds for a group: the engine's session plus how its deck is made.
struct StoredGroup: Codable, Sendable {
    var session: GroupSession
    var inviteCode: String
    var filter: [String: [String]]
    var aggregation: GroupAggregation
    /// Whether every candidate is in the deck.
    var exhausted: Bool

    enum CodingKeys: String, CodingKey {
        case session, inviteCode = "invite_code", filter, aggregation, exhausted
    }
}

/// A participant in `GroupStatusBody`.
struct GroupParticipant: Encodable, Sendable {
    var studentID: String
    var joinedAt: Int64
    var likes: Int

    enum CodingKeys: String, CodingKey { case studentID = "student_id", joinedAt = "joined_at", likes }
}

/// `GET /groups/:id` (and the answer to create, join and close).
struct GroupStatusBody: Encodable, Sendable {
    var sessionID: String
    var inviteCode: String
    var status: GroupStatus
    var quorumN: Int
    var maxMembers: Int
    var creatorID: String
    var createdAt: Int64
    var strategy: GroupStrategy
    var filter: [String: [String]]
    var participants: [GroupParticipant]
    var matchedOptionID: String?
    var matchedOption: ItemSummary?
    var deckSize: Int
    var votes: Int
    var version: Int

    enum CodingKeys: String, CodingKey {
        case sessionID = "session_id", inviteCode = "invite_code", status, quorumN = "quorum_n", maxMembers = "max_members"
        case creatorID = "creator_id", createdAt = "created_at", strategy, filter, participants
        case matchedOptionID = "matched_option_id", matchedOption = "matched_option", deckSize = "deck_size", votes, version
    }

    func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(sessionID, forKey: .sessionID)
        try c.encode(inviteCode, forKey: .inviteCode)
        try c.encode(status, forKey: .status)
        try c.encode(quorumN, forKey: .quorumN)
        try c.encode(maxMembers, forKey: .maxMembers)
        try c.encode(creatorID, forKey: .creatorID)
        try c.encode(createdAt, forKey: .createdAt)
        try c.encode(strategy, forKey: .strategy)
        try c.encode(filter, forKey: .filter)
        try c.encode(participants, forKey: .participants)
        try c.encode(matchedOptionID, forKey: .matchedOptionID)  // null until a match
        try c.encode(matchedOption, forKey: .matchedOption)
        try c.encode(deckSize, forKey: .deckSize)
        try c.encode(votes, forKey: .votes)
        try c.encode(version, forKey: .version)
    }
}

/// `GET /groups`.
struct GroupListBody: Encodable, Sendable {
    var sessions: [GroupStatusBody]
}

/// One option of `GET /groups/:id/options`.
struct GroupOptionBody: Encodable, Sendable {
    var position: Int
    var optionID: String
    var option: ItemSummary
    var likes: Int

    enum CodingKeys: String, CodingKey { case position, optionID = "option_id", option, likes }
}

/// `GET /groups/:id/options`.
struct GroupOptionsBody: Encodable, Sendable {
    var sessionID: String
    var status: GroupStatus
    var options: [GroupOptionBody]
    /// Pass as `after` for the next page.
    var cursor: Int
    /// Whether the deck has no options left for this member.
    var exhausted: Bool

    enum CodingKeys: String, CodingKey { case sessionID = "session_id", status, options, cursor, exhausted }
}

/// `POST /groups/:id/likes`.
struct GroupLikeBody: Encodable, Sendable {
    var success: Bool
    var matchFound: Bool
    var matchedOptionID: String?
    var likes: Int

    enum CodingKeys: String, CodingKey { case success, matchFound = "match_found", matchedOptionID = "matched_option_id", likes }

    func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(success, forKey: .success)
        try c.encode(matchFound, forKey: .matchFound)
        try c.encode(matchedOptionID, forKey: .matchedOptionID)
        try c.encode(likes, forKey: .likes)
    }
}
