/// A member's vote on a group option.
public enum GroupVoteAction: String, Sendable, Hashable, Codable {
    /// Counts towards the quorum.
    case like
    /// Moves the member past the option without counting.
    case pass
}

/// Where a group session stands.
public enum GroupStatus: String, Sendable, Hashable, Codable {
    /// Members may join and vote.
    case open
    /// An option reached the quorum; nothing more counts.
    case matched
    /// The creator closed it.
    case closed
}

/// A member of a group session.
public struct GroupMember: Sendable, Hashable, Codable {
    /// The member's student id.
    public let id: String
    /// When they joined (the caller's clock, e.g. Unix milliseconds).
    public let joinedAt: Int64

    enum CodingKeys: String, CodingKey { case id, joinedAt = "joined_at" }
}

/// What a vote did; a replay of the same vote id returns the answer of its first time.
public struct GroupVoteOutcome: Sendable, Hashable, Codable {
    /// Whether the vote was recorded (false once the session matched).
    public let recorded: Bool
    /// Whether the session had a match after this vote.
    public let matchFound: Bool
    /// The matched option, if any.
    public let matchedOption: String?
    /// Whether this very vote made the match (true exactly once per session).
    public let madeMatch: Bool
    /// The voted option's likes right after this vote (so a replay answers the same).
    public let likes: Int

    /// Creates an outcome.
    ///
    /// - Parameters:
    ///   - recorded: Whether the vote was recorded.
    ///   - matchFound: Whether there is a match.
    ///   - matchedOption: The matched option.
    ///   - madeMatch: Whether this vote made it.
    ///   - likes: The option's likes after the vote.
    public init(recorded: Bool, matchFound: Bool, matchedOption: String?, madeMatch: Bool, likes: Int) {
        self.recorded = recorded
        self.matchFound = matchFound
        self.matchedOption = matchedOption
        self.madeMatch = madeMatch
        self.likes = likes
    }

    enum CodingKeys: String, CodingKey {
        case recorded, matchFound = "match_found", matchedOption = "matched_option", madeMatch = "made_match", likes
    }
}

/// One vote as recorded.
public struct GroupVote: Sendable, Hashable, Codable {
    /// The client's id for the vote (idempotency key, per member).
    public let id: String
    /// Who voted.
    public let member: String
    /// The option.
    public let option: String
    /// Like or pass.
    public let action: GroupVoteAction
    /// When (the caller's clock).
    public let at: Int64
    /// What the vote did.
    public let outcome: GroupVoteOutcome
}

/// Why a group operation was refused. Refused operations never change the session.
public struct GroupError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The reason.
    public struct Kind: Sendable, Hashable, CustomStringConvertible {
        private let name: String
        /// The quorum or member limit is out of range.
        public static let invalidSettings = Kind(name: "invalid settings")
        /// The student already is a member.
        public static let alreadyJoined = Kind(name: "already joined")
        /// The session is closed (or matched, for joins).
        public static let notOpen = Kind(name: "not open")
        /// The member limit is reached.
        public static let full = Kind(name: "full")
        /// The student is not a member.
        public static let notMember = Kind(name: "not a member")
        /// Only the creator may do this.
        public static let notCreator = Kind(name: "not the creator")
        /// The option is not in the group's deck (yet).
        public static let unknownOption = Kind(name: "unknown option")
        /// The vote id was used for another vote.
        public static let voteIDReused = Kind(name: "vote id reused")
        /// An id is empty or too long.
        public static let invalidID = Kind(name: "invalid id")
        /// A stored session does not hold together.
        public static let corrupt = Kind(name: "corrupt session")
        /// The name of the reason.
        public var description: String { name }
    }

    /// The reason.
    public let kind: Kind
    /// What happened, for a person.
    public let message: String

    init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    /// The message.
    public var description: String { message }
}

/// Friends deciding together: everyone votes on one shared deck of options, and the first
/// option liked by `quorum` members is the match — exactly once, whatever the order in
/// which votes arrive. A value type: the caller serializes operations on one session (the
/// service holds a lock per group and stores each new state with a version check).
///
/// The deck is append-only: positions never change once given out, so members and devices
/// page through it with a cursor, and later joiners extend it with their taste (the caller
/// ranks the next options with `GroupAggregation` and calls `extendDeck(with:)`).
///
/// Votes never teach the members' own models: a group choice is a compromise, and learning
/// from it would pull a member's deck towards their friends' taste.
public struct GroupSession: Sendable, Hashable {
    /// The session id.
    public let id: String
    /// The member who created it (the only one who may close it).
    public private(set) var creatorID: String
    /// Likes an option needs to match (2 or more).
    public let quorum: Int
    /// The most members.
    public let maxMembers: Int
    /// When it was created (the caller's clock).
    public let createdAt: Int64
    /// The members in joining order (the creator first).
    public private(set) var members: [GroupMember]
    /// Open, matched or closed.
    public private(set) var status: GroupStatus = .open
    /// The matched option, once there is one.
    public private(set) var matchedOption: String?
    /// When the match happened.
    public private(set) var matchedAt: Int64?
    /// When it was closed.
    public private(set) var closedAt: Int64?
    /// The options in deck order (position = index + 1).
    public private(set) var deck: [String] = []
    /// Every vote in arrival order.
    public private(set) var votes: [GroupVote] = []

    // Derived from the above (rebuilt on decoding).
    private var positionOfOption: [String: Int] = [:]
    private var voteByID: [String: Int] = [:]
    private var likers: [String: Set<String>] = [:]
    private var voted: [String: [String: GroupVoteAction]] = [:]

    /// The longest id (session, member, option, vote) accepted.
    public static var maxIDLength: Int { 256 }

    /// Creates an open session with its creator as the first member.
    ///
    /// - Parameters:
    ///   - id: The session id.
    ///   - creatorID: The creating student.
    ///   - quorum: Likes needed for a match, 2…`maxMembers`.
    ///   - maxMembers: The most members, 2…100.
    ///   - createdAt: Now, on the caller's clock.
    /// - Throws: `GroupError` (`invalidSettings`, `invalidID`).
    public init(id: String, creatorID: String, quorum: Int, maxMembers: Int = 12, createdAt: Int64) throws(GroupError) {
        try Self.checkID(id, "session id")
        try Self.checkID(creatorID, "creator id")
        guard (2...100).contains(maxMembers) else {
            throw GroupError(.invalidSettings, "the member limit must be in 2…100, got \(maxMembers)")
        }
        guard (2...maxMembers).contains(quorum) else {
            throw GroupError(.invalidSettings, "quorum_n must be in 2…\(maxMembers) (the member limit), got \(quorum)")
        }
        self.id = id
        self.creatorID = creatorID
        self.quorum = quorum
        self.maxMembers = maxMembers
        self.createdAt = createdAt
        members = [GroupMember(id: creatorID, joinedAt: createdAt)]
    }

    /// Whether `student` is a member.
    public func isMember(_ student: String) -> Bool { members.contains { $0.id == student } }

    /// How many members like `option`.
    public func likeCount(of option: String) -> Int { likers[option]?.count ?? 0 }

    /// The 1-based deck position of `option`, or nil if it is not in the deck.
    public func position(of option: String) -> Int? { positionOfOption[option].map { $0 + 1 } }

    /// The member's vote on `option`, if any.
    public func vote(of member: String, on option: String) -> GroupVoteAction? { voted[member]?[option] }

    /// Adds a member.
    ///
    /// - Parameters:
    ///   - student: The joining student.
    ///   - at: Now.
    /// - Throws: `GroupError`: `notOpen` (matched or closed), `alreadyJoined`, `full`, `invalidID`.
    public mutating func join(_ student: String, at: Int64) throws(GroupError) {
        try Self.checkID(student, "member id")
        guard status == .open else { throw GroupError(.notOpen, "the session is \(status.rawValue); nobody can join") }
        guard !isMember(student) else { throw GroupError(.alreadyJoined, "already a member of this session") }
        guard members.count < maxMembers else { throw GroupError(.full, "the session has its \(maxMembers) members") }
        members.append(GroupMember(id: student, joinedAt: at))
    }

    /// Records a vote. The first option whose likes reach the quorum becomes the match; after
    /// that, votes are answered with the match and not recorded. A member's like counts once
    /// per option however often it comes; a pass followed by a like counts the like (a change
    /// of mind), a like followed by a pass keeps the like (a match never goes away).
    ///
    /// - Parameters:
    ///   - voteID: The client's id, scoped to the member: the same id from the same member
    ///     with the same option and action returns its first answer and changes nothing.
    ///   - member: The voting member.
    ///   - option: An option in the deck.
    ///   - action: Like or pass.
    ///   - at: Now.
    /// - Returns: The outcome, and whether it is a replay.
    /// - Throws: `GroupError`: `notMember`, `unknownOption`, `voteIDReused` (same id, other
    ///   vote), `notOpen` (closed), `invalidID`. A replay is answered even when closed.
    /// - Complexity: O(1) amortized.
    public mutating func vote(id voteID: String, member: String, option: String, action: GroupVoteAction,
                              at: Int64) throws(GroupError) -> (outcome: GroupVoteOutcome, replayed: Bool) {
        try Self.checkID(voteID, "like_id")
        if let index = voteByID[Self.voteKey(member, voteID)] {
            let earlier = votes[index]
            guard earlier.option == option, earlier.action == action else {
                throw GroupError(.voteIDReused, "like_id \(voteID) was already used for another vote")
            }
            return (earlier.outcome, true)
        }
        guard isMember(member) else { throw GroupError(.notMember, "only members vote in this session") }
        guard positionOfOption[option] != nil else {
            throw GroupError(.unknownOption, "option \(option) is not in this session's deck")
        }
        switch status {
        case .closed:
            throw GroupError(.notOpen, "the session is closed")
        case .matched:
            let outcome = GroupVoteOutcome(recorded: false, matchFound: true, matchedOption: matchedOption, madeMatch: false,
                                           likes: likeCount(of: option))
            record(GroupVote(id: voteID, member: member, option: option, action: action, at: at, outcome: outcome))
            return (outcome, false)
        case .open:
            break
        }
        var madeMatch = false
        if action == .like {
            likers[option, default: []].insert(member)
            voted[member, default: [:]][option] = .like
            if likeCount(of: option) >= quorum {
                status = .matched
                matchedOption = option
                matchedAt = at
                madeMatch = true
            }
        } else if voted[member]?[option] == nil {
            voted[member, default: [:]][option] = .pass
        }
        let outcome = GroupVoteOutcome(recorded: true, matchFound: status == .matched, matchedOption: matchedOption,
                                       madeMatch: madeMatch, likes: likeCount(of: option))
        record(GroupVote(id: voteID, member: member, option: option, action: action, at: at, outcome: outcome))
        return (outcome, false)
    }

    /// Vote ids are the member's own: two members' devices may pick the same id.
    private static func voteKey(_ member: String, _ id: String) -> String { member + "\u{0}" + id }

    private mutating func record(_ vote: GroupVote) {
        voteByID[Self.voteKey(vote.member, vote.id)] = votes.count
        votes.append(vote)
    }

    /// Closes the session (the creator only). Closing a matched session keeps its match.
    ///
    /// - Parameters:
    ///   - member: Who asks.
    ///   - at: Now.
    /// - Returns: false if it was already closed (nothing changed).
    /// - Throws: `GroupError`: `notMember`, `notCreator`.
    @discardableResult
    public mutating func close(by member: String, at: Int64) throws(GroupError) -> Bool {
        guard isMember(member) else { throw GroupError(.notMember, "only members see this session") }
        guard member == creatorID else { throw GroupError(.notCreator, "only the creator closes the session") }
        guard status != .closed else { return false }
        status = .closed
        closedAt = at
        return true
    }

    /// Appends options to the deck.
    ///
    /// - Parameter options: Options not in the deck yet, distinct (the caller ranks what is
    ///   left; a repeat is a programmer error).
    public mutating func extendDeck(with options: [String]) {
        for option in options {
            precondition(positionOfOption[option] == nil, "option \(option) is already in the deck")
            positionOfOption[option] = deck.count
            deck.append(option)
        }
    }

    /// The next options for a member: deck positions after `after` (or from the start) that
    /// the member has not voted on.
    ///
    /// - Parameters:
    ///   - member: The member.
    ///   - after: A position already seen (0: from the start).
    ///   - count: At most this many.
    /// - Returns: (position, option) pairs in deck order; fewer than `count` when the deck
    ///   needs extending.
    /// - Complexity: O(positions scanned).
    public func nextOptions(for member: String, after: Int, count: Int) -> [(position: Int, option: String)] {
        var out: [(position: Int, option: String)] = []
        var index = max(0, after)
        let mine = voted[member] ?? [:]
        while index < deck.count && out.count < count {
            if mine[deck[index]] == nil { out.append((index + 1, deck[index])) }
            index += 1
        }
        return out
    }

    static func checkID(_ id: String, _ what: String) throws(GroupError) {
        guard !id.isEmpty, id.utf8.count <= maxIDLength else {
            throw GroupError(.invalidID, "\(what) must be 1…\(maxIDLength) bytes")
        }
    }
}

extension GroupSession: Codable {
    enum CodingKeys: String, CodingKey {
        case id, creatorID = "creator_id", quorum, maxMembers = "max_members", createdAt = "created_at", members, status
        case matchedOption = "matched_option", matchedAt = "matched_at", closedAt = "closed_at", deck, votes
    }

    /// Encodes the session (its stored form).
    ///
    /// - Parameter encoder: The encoder.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(id, forKey: .id)
        try c.encode(creatorID, forKey: .creatorID)
        try c.encode(quorum, forKey: .quorum)
        try c.encode(maxMembers, forKey: .maxMembers)
        try c.encode(createdAt, forKey: .createdAt)
        try c.encode(members, forKey: .members)
        try c.encode(status, forKey: .status)
        try c.encodeIfPresent(matchedOption, forKey: .matchedOption)
        try c.encodeIfPresent(matchedAt, forKey: .matchedAt)
        try c.encodeIfPresent(closedAt, forKey: .closedAt)
        try c.encode(deck, forKey: .deck)
        try c.encode(votes, forKey: .votes)
    }

    /// Decodes a stored session by replaying its votes, so the derived state is exactly what
    /// the operations produce; a session that does not replay to itself throws.
    ///
    /// - Parameter decoder: The decoder.
    /// - Throws: `DecodingError`, or `GroupError` (`corrupt`) when the stored state contradicts itself.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        let status = try c.decode(GroupStatus.self, forKey: .status)
        let session = try GroupSession.replay(
            id: c.decode(String.self, forKey: .id), creatorID: c.decode(String.self, forKey: .creatorID),
            quorum: c.decode(Int.self, forKey: .quorum), maxMembers: c.decode(Int.self, forKey: .maxMembers),
            createdAt: c.decode(Int64.self, forKey: .createdAt), members: c.decode([GroupMember].self, forKey: .members),
            deck: c.decode([String].self, forKey: .deck), votes: c.decode([GroupVote].self, forKey: .votes),
            closedAt: status == .closed ? c.decodeIfPresent(Int64.self, forKey: .closedAt) ?? 0 : nil)
        guard session.status == status, session.matchedOption == (try c.decodeIfPresent(String.self, forKey: .matchedOption)) else {
            throw GroupError(.corrupt, "the stored status does not follow from the votes")
        }
        self = session
    }

    /// Rebuilds a session from its parts by running the operations again, so derived state is
    /// exactly what the operations produce. Members join before any vote: a vote can only come
    /// from a member and joins stop at the match, so the outcomes are the same.
    static func replay(id: String, creatorID: String, quorum: Int, maxMembers: Int, createdAt: Int64, members: [GroupMember],
                       deck: [String], votes: [GroupVote], closedAt: Int64?) throws(GroupError) -> GroupSession {
        var session = try GroupSession(id: id, creatorID: creatorID, quorum: quorum, maxMembers: maxMembers, createdAt: createdAt)
        guard let creator = members.first, creator.id == creatorID else {
            throw GroupError(.corrupt, "the creator is not the first member")
        }
        session.members = [creator]
        for member in members.dropFirst() { try session.join(member.id, at: member.joinedAt) }
        guard Set(deck).count == deck.count else { throw GroupError(.corrupt, "the deck repeats an option") }
        session.extendDeck(with: deck)
        for vote in votes {
            let (outcome, replayed) = try session.vote(id: vote.id, member: vote.member, option: vote.option,
                                                       action: vote.action, at: vote.at)
            guard !replayed, outcome == vote.outcome else { throw GroupError(.corrupt, "vote \(vote.id) does not replay") }
        }
        if let closedAt {
            session.status = .closed
            session.closedAt = closedAt
        }
        return session
    }

    /// The same session with one member's id replaced everywhere — for erasing a student: their
    /// votes still count for the others, but nothing names them.
    ///
    /// - Parameters:
    ///   - member: The id to replace (a member).
    ///   - newID: An id no member has.
    /// - Returns: The renamed session.
    /// - Throws: `GroupError` (`notMember`, `alreadyJoined` when `newID` is taken, `invalidID`).
    public func renamingMember(_ member: String, to newID: String) throws(GroupError) -> GroupSession {
        guard isMember(member) else { throw GroupError(.notMember, "\(member) is not a member") }
        guard !isMember(newID) else { throw GroupError(.alreadyJoined, "\(newID) is already a member") }
        try Self.checkID(newID, "member id")
        func rename(_ id: String) -> String { id == member ? newID : id }
        return try Self.replay(
            id: id, creatorID: rename(creatorID), quorum: quorum, maxMembers: maxMembers, createdAt: createdAt,
            members: members.map { GroupMember(id: rename($0.id), joinedAt: $0.joinedAt) }, deck: deck,
            votes: votes.map { GroupVote(id: $0.id, member: rename($0.member), option: $0.option, action: $0.action, at: $0.at,
                                         outcome: $0.outcome) },
            closedAt: status == .closed ? closedAt ?? 0 : nil)
    }
}
