import Foundation
import Logging
import SwipeRank
import SwipeRankStore

/// Limits of group sessions.
public struct GroupOptions: Sendable {
    /// The most members a session may allow (a request may ask for fewer).
    public var maxMembers = 12
    /// Whether a match is announced to the app's backend (a `group.matched` webhook delivery
    /// stored with the match; `ServerConfiguration.webhook` sends it).
    public var announceMatches = false
    /// Options added to the deck at a time (ranked with the members of that moment; small, so
    /// later joiners shape the deck soon).
    public var deckChunk = 10
    /// The most options one `GET /groups/:id/options` returns.
    public var maxOptionsPerPage = 50
    /// Joins per student per minute (guessing invite codes is then slow; see `InviteCode`).
    public var joinsPerMinute = 10
    /// Seconds between keep-alive comments on an event stream.
    public var keepAliveSeconds = 15.0
    /// The most groups `GET /groups` lists.
    public var maxListed = 50
    /// How the deck is ordered unless the creator asks otherwise.
    public var aggregation = GroupAggregation.standard
    /// Ids and invite codes: cryptographic randomness (tests pass a seeded source).
    public var random: @Sendable () -> UInt64 = { UInt64.random(in: .min ... .max) }

    /// The defaults.
    public init() {}
}

/// A `RandomNumberGenerator` over a closure (the service's randomness source).
struct ClosureGenerator: RandomNumberGenerator {
    let source: @Sendable () -> UInt64
    mutating func next() -> UInt64 { source() }
}

/// The logic behind `/groups`: every operation reads the group from the store, applies the
/// engine's `GroupSession` under the group's lock, and writes it back with a version check
/// (a conflict — another instance wrote first — re-reads and retries). Events are published
/// only after the write succeeded, so a match is announced exactly once.
final class GroupService<M: ServableMatcher>: Sendable {
    let engine: SwipeEngine<M>
    let store: any ServiceStore
    let students: StudentService<M>
    let hub: GroupEventHub
    let locks = KeyedLock()
    let options: GroupOptions
    let joinBuckets: TokenBuckets
    let logger: Logger
    /// Other instances' events, when the store is shared (PostgreSQL).
    let relay: GroupRelay?

    /// A group service with its own event hub (and relay, on a shared store).
    convenience init(engine: SwipeEngine<M>, store: any ServiceStore, students: StudentService<M>, options: GroupOptions, logger: Logger) {
        let hub = GroupEventHub()
        self.init(engine: engine, store: store, students: students, options: options, logger: logger, hub: hub,
                  relay: groupRelay(store: store, hub: hub, options: options, logger: logger),
                  joinBuckets: TokenBuckets(capacity: options.joinsPerMinute, period: 60, now: TokenBuckets.seconds(students.options.clock)))
    }

    /// A group service over a hub, relay and join limits that outlive it: the service is rebuilt
    /// when the catalog changes, while subscribers stay connected and limits keep counting.
    init(engine: SwipeEngine<M>, store: any ServiceStore, students: StudentService<M>, options: GroupOptions, logger: Logger,
         hub: GroupEventHub, relay: GroupRelay?, joinBuckets: TokenBuckets) {
        self.engine = engine
        self.store = store
        self.students = students
        self.options = options
        self.joinBuckets = joinBuckets
        self.logger = logger
        self.hub = hub
        self.relay = relay
    }



    private var now: Int64 { students.options.clock() }

    private func randomID(_ prefix: String) -> String {
        var generator = ClosureGenerator(source: options.random)
        return prefix + String(generator.next(), radix: 36) + String(generator.next(), radix: 36)
    }

    // MARK: Operations

    /// Creates a session with the caller as its first member (the filter is checked now; the
    /// deck grows when options are asked for).
    func create(_ student: String, _ request: CreateGroupRequest) async throws -> (body: Data, id: String) {
        let filter = request.filter ?? [:]
        _ = try candidates(filter)  // a filter nothing passes is a 400 now, not an empty deck later
        let limit = request.maxMembers ?? options.maxMembers
        guard (2...options.maxMembers).contains(limit) else {
            throw APIError.validation("max_members must be in 2…\(options.maxMembers), got \(limit)", field: "max_members")
        }
        guard (2...limit).contains(request.quorumN) else {
            throw APIError.validation("quorum_n must be in 2…\(limit) (max_members), got \(request.quorumN)", field: "quorum_n")
        }
        let aggregation = request.strategy.map { GroupAggregation(strategy: $0, miseryThreshold: options.aggregation.miseryThreshold) }
            ?? options.aggregation
        let created = now
        for _ in 0..<8 {
            var generator = ClosureGenerator(source: options.random)
            let code = InviteCode.generate(using: &generator)
            let id = randomID("g")
            let session: GroupSession
            do throws(GroupError) {
                session = try GroupSession(id: id, creatorID: student, quorum: request.quorumN, maxMembers: limit, createdAt: created)
            } catch {
                throw Self.apiError(error)
            }
            // The deck is ranked when a member first asks for options, so friends who join
            // before that shape it from the first card.
            let stored = StoredGroup(session: session, inviteCode: code, filter: filter, aggregation: aggregation, exhausted: false)
            let record = GroupRecord(groupID: id, inviteCode: code, creatorID: student, status: session.status.rawValue,
                                     members: session.members.map(\.id), state: try WireJSON.encode(stored), version: 1,
                                     createdAt: created, updatedAt: created)
            if try await students.storeCall({ try await self.store.createGroup(record) }) {
                return (try WireJSON.encode(statusBody(stored, version: 1)), id)
            }
            // An id or code collision (about 1 in 10¹¹ per open group): draw again.
        }
        throw APIError.server
    }

    /// Joins by invite code.
    func join(_ student: String, code typed: String) async throws -> Data {
        if case let .failure(retry) = joinBuckets.take(student) { throw APIError.rateLimited(retry, limit: options.joinsPerMinute, what: "joins") }
        guard let code = InviteCode.canonical(typed),
              let record = try await students.storeCall({ try await self.store.group(inviteCode: code) }) else {
            throw APIError.notFound("no group session has this invite code", details: ["resource": .string("group")])
        }
        return try await withGroup(record.groupID, member: nil) { stored in
            do throws(GroupError) {
                try stored.session.join(student, at: self.now)
            } catch {
                throw Self.apiError(error)
            }
            let joined = stored
            return (true, { version in
                let data: [String: JSONValue] = ["student_id": .string(student), "participants": .number(Double(joined.session.members.count))]
                return [GroupEvent(name: "joined", data: try WireJSON.encode(data), version: version)]
            }, { version in try WireJSON.encode(self.statusBody(joined, version: version)) })
        }
    }

    /// The caller's sessions (open ones by default).
    func list(_ student: String, status: GroupStatus?) async throws -> Data {
        let records = try await students.storeCall {
            try await self.store.groups(ofMember: student, status: status?.rawValue, limit: self.options.maxListed)
        }
        let bodies = try records.map { record in try statusBody(decode(record), version: record.version) }
        return try WireJSON.encode(GroupListBody(sessions: bodies))
    }

    /// The status with participants.
    func status(_ student: String, group: String) async throws -> Data {
        let (stored, version) = try await read(group, member: student)
        return try WireJSON.encode(statusBody(stored, version: version))
    }

    /// The member's next options, extending the deck with the current members' taste when it
    /// runs short.
    func nextOptions(_ student: String, group: String, after: Int?, count: Int) async throws -> Data {
        let (stored, _) = try await read(group, member: student)
        var page = stored.session.nextOptions(for: student, after: after ?? 0, count: count)
        var current = stored
        if page.count < count && !stored.exhausted && stored.session.status == .open {
            current = try await withGroup(group, member: student) { stored in
                let before = stored.session.deck.count
                try await self.extendDeck(&stored, candidates: self.candidates(stored.filter), atLeast: max(count, self.options.deckChunk))
                let extended = stored
                return (extended.session.deck.count != before || extended.exhausted, { _ in [] }, { _ in extended })
            }
            page = current.session.nextOptions(for: student, after: after ?? 0, count: count)
        }
        let catalog = engine.matcher.catalog
        let options = page.compactMap { entry -> GroupOptionBody? in
            // An option the catalog no longer has (a newer catalog) is skipped, not an error.
            guard let row = catalog.row(of: entry.option) else { return nil }
            return GroupOptionBody(position: entry.position, optionID: entry.option, option: engine.matcher.catalog.summary(row: row),
                                   likes: current.session.likeCount(of: entry.option))
        }
        let cursor = page.last?.position ?? max(after ?? 0, 0)
        let exhausted = current.exhausted && current.session.nextOptions(for: student, after: cursor, count: 1).isEmpty
        return try WireJSON.encode(GroupOptionsBody(sessionID: group, status: current.session.status, options: options,
                                                    cursor: cursor, exhausted: exhausted))
    }

    /// A like or pass.
    func vote(_ student: String, group: String, _ request: GroupLikeRequest) async throws -> (body: Data, replayed: Bool) {
        try ClientID.validate(request.likeID, field: "like_id")
        return try await withGroup(group, member: student) { stored in
            let result: (outcome: GroupVoteOutcome, replayed: Bool)
            do throws(GroupError) {
                result = try stored.session.vote(id: request.likeID, member: student, option: request.optionID,
                                                 action: request.action, at: self.now)
            } catch {
                throw Self.apiError(error)
            }
            let outcome = result.outcome
            let body = GroupLikeBody(success: outcome.recorded, matchFound: outcome.matchFound,
                                     matchedOptionID: outcome.matchedOption, likes: outcome.likes)
            let changed = !result.replayed
            return (changed, { version in
                guard outcome.madeMatch, let option = outcome.matchedOption else { return [] }
                // The option itself too: an app shows the match screen from the event alone.
                let summary = self.engine.matcher.catalog.row(of: option).map { self.engine.matcher.catalog.summary(row: $0) }
                return [GroupEvent(name: "matched", data: try WireJSON.encode(MatchedEvent(matchedOptionID: option, matchedOption: summary)),
                                   version: version)]
            }, { _ in (try WireJSON.encode(body), result.replayed) })
        }
    }

    /// Closes (the creator only).
    func close(_ student: String, group: String) async throws -> Data {
        try await withGroup(group, member: student) { stored in
            let changed: Bool
            do throws(GroupError) {
                changed = try stored.session.close(by: student, at: self.now)
            } catch {
                throw Self.apiError(error)
            }
            let closed = stored
            return (changed, { version in
                changed ? [GroupEvent(name: "closed", data: Data("{}".utf8), version: version)] : []
            }, { version in try WireJSON.encode(self.statusBody(closed, version: version)) })
        }
    }

    /// Erasure: the student's id is replaced by an anonymous one in every session they are in
    /// (their votes keep counting for the others; nothing names them).
    func forget(_ student: String) async throws {
        let records = try await students.storeCall { try await self.store.groups(ofMember: student, status: nil, limit: Int(Int32.max)) }
        for record in records {
            let anonymous = randomID("erased-")
            _ = try await withGroup(record.groupID, member: nil) { stored in
                guard stored.session.isMember(student) else { return (false, { _ in [] }, { _ in () }) }
                do throws(GroupError) {
                    stored.session = try stored.session.renamingMember(student, to: anonymous)
                } catch {
                    throw Self.apiError(error)
                }
                return (true, { _ in [] }, { _ in () })
            }
        }
    }

    /// The status stream: the current status first, then joined/matched/closed as they happen;
    /// it ends after matched or closed.
    func events(_ student: String, group: String) async throws -> (first: GroupEvent, stream: AsyncStream<GroupEvent>, cancel: @Sendable () -> Void) {
        let subscription = hub.subscribe(group)
        let cancel: @Sendable () -> Void = { [hub] in hub.unsubscribe(group, id: subscription.id) }
        do {
            let (stored, version) = try await read(group, member: student)
            let first = GroupEvent(name: "status", data: try WireJSON.encode(statusBody(stored, version: version)), version: version)
            let continuation = subscription.continuation
            let seconds = options.keepAliveSeconds
            let keepAlive = Task {
                while !Task.isCancelled {
                    try await Task.sleep(for: .seconds(seconds))
                    continuation.yield(GroupEvent(name: "keepalive", data: Data(), version: version))
                }
            }
            continuation.onTermination = { _ in keepAlive.cancel() }
            if stored.session.status != .open { continuation.finish() }
            return (first, subscription.stream, cancel)
        } catch {
            cancel()
            throw error
        }
    }

    // MARK: Internals

    /// Reads a group and checks membership (403 for non-members, 404 for no such group).
    private func read(_ group: String, member: String) async throws -> (StoredGroup, Int) {
        guard let record = try await students.storeCall({ try await self.store.group(group) }) else { throw Self.noGroup }
        let stored = try decode(record)
        guard stored.session.isMember(member) else { throw Self.notMember }
        return (stored, record.version)
    }

    /// The HTTP answer to an engine refusal.
    static func apiError(_ error: GroupError) -> APIError {
        switch error.kind {
        case .alreadyJoined: APIError.conflict(error.message, details: ["reason": .string("already_joined")])
        case .notOpen: APIError.conflict(error.message, details: ["reason": .string("closed")])
        case .full: APIError.conflict(error.message, details: ["reason": .string("full")])
        case .voteIDReused: APIError.conflict(error.message, details: ["field": .string("like_id")])
        case .notMember: notMember
        case .notCreator: APIError(.forbidden, code: "ACCESS_DENIED", message: error.message)
        // Like a swipe on a card never served (409): the session exists; the option is not dealt yet.
        case .unknownOption: APIError.conflict(error.message, details: ["reason": .string("not_in_deck"), "field": .string("option_id")])
        case .invalidSettings: APIError.validation(error.message, field: "quorum_n")
        case .invalidID: APIError.validation(error.message)
        default: APIError.server
        }
    }

    static var noGroup: APIError { APIError.notFound("no such group session", details: ["resource": .string("group")]) }
    static var notMember: APIError {
        APIError(.forbidden, code: "ACCESS_DENIED", message: "you are not a member of this group session")
    }

    private func decode(_ record: GroupRecord) throws -> StoredGroup {
        do {
            return try JSONDecoder().decode(StoredGroup.self, from: record.state)
        } catch {
            logger.error("a stored group does not decode", metadata: ["group": "\(record.groupID)", "error": "\(error)"])
            throw APIError.server
        }
    }

    /// Runs `body` on the stored group under its lock; when it reports a change, writes the
    /// new state with a version check, then publishes its events. `member` (when given) must
    /// be a member.
    private func withGroup<T: Sendable>(
        _ group: String, member: String?,
        _ body: (inout StoredGroup) async throws -> (changed: Bool, events: (Int) throws -> [GroupEvent], result: (Int) throws -> T)
    ) async throws -> T {
        try await locks.withLock(group) {
            for _ in 0..<5 {
                guard let record = try await students.storeCall({ try await self.store.group(group) }) else { throw Self.noGroup }
                var stored = try decode(record)
                if let member, !stored.session.isMember(member) { throw Self.notMember }
                let outcome = try await body(&stored)
                guard outcome.changed else { return try outcome.result(record.version) }
                var updated = record
                updated.state = try WireJSON.encode(stored)
                updated.status = stored.session.status.rawValue
                updated.members = stored.session.members.map(\.id)
                updated.creatorID = stored.session.creatorID
                updated.updatedAt = now
                // A match is announced by a delivery written in the same transaction: stored
                // means announced (at least once), whatever fails afterwards.
                var deliveries: [WebhookDelivery] = []
                if options.announceMatches, record.status != GroupStatus.matched.rawValue, updated.status == GroupStatus.matched.rawValue {
                    deliveries.append(try matchDelivery(stored, version: record.version + 1))
                }
                switch try await students.storeCall({
                    try await self.store.updateGroup(updated, expectedVersion: record.version, enqueuing: deliveries)
                }) {
                case let .appended(version):
                    for event in try outcome.events(version) {
                        hub.publish(group, event)
                        if let relay { await relay.send(group, event) }
                    }
                    return try outcome.result(version)
                case .conflict:
                    logger.debug("group write conflict; retrying", metadata: ["group": "\(group)"])
                }
            }
            throw APIError.conflict("the group changed concurrently; retry the request")
        }
    }

    /// Rows of the catalog that pass `filter` (text attribute → accepted values).
    func candidates(_ filter: [String: [String]]) throws(APIError) -> [Int] {
        let catalog = engine.matcher.catalog
        guard filter.count <= 8 else { throw APIError.validation("filter has at most 8 attributes", field: "filter") }
        var allowed: [(attribute: Int, values: Set<String>)] = []
        for (name, values) in filter.sorted(by: { $0.key < $1.key }) {
            guard let attribute = catalog.textAttribute(named: name) else {
                throw APIError.validation("filter.\(name.prefix(64)) is not an attribute of the catalog (has: \(catalog.textAttributeNames.joined(separator: ", ")))",
                                          field: "filter.\(name.prefix(64))")
            }
            guard (1...200).contains(values.count) else {
                throw APIError.validation("filter.\(name) needs 1…200 values", field: "filter.\(name)")
            }
            allowed.append((attribute, Set(values)))
        }
        let rows = (0..<catalog.count).filter { row in allowed.allSatisfy { $0.values.contains(catalog.textValues[$0.attribute][row]) } }
        guard !rows.isEmpty else { throw APIError.validation("no option of the catalog passes this filter", field: "filter") }
        return rows
    }

    /// Appends at least `atLeast` options (or all that are left), ranked for the current
    /// members: each member's session scores (cold start for a member without swipes; a
    /// member without a profile has no say), combined by the group's aggregation.
    private func extendDeck(_ stored: inout StoredGroup, candidates: [Int], atLeast: Int) async throws {
        let catalog = engine.matcher.catalog
        let inDeck = Set(stored.session.deck)
        let remaining = candidates.filter { !inDeck.contains(catalog.ids[$0]) }
        guard !remaining.isEmpty else {
            stored.exhausted = true
            return
        }
        var memberScores: [[Double]] = []
        for member in stored.session.members {
            if let scores = try await students.rawScores(member.id) { memberScores.append(scores) }
        }
        var order = stored.aggregation.rank(candidates: remaining, memberScores: memberScores, count: atLeast)
        if memberScores.isEmpty {
            // Nobody has a model: a random order, the same for everyone (what group apps do).
            var generator = ClosureGenerator(source: options.random)
            order = Array(remaining.shuffled(using: &generator).prefix(atLeast))
        }
        stored.session.extendDeck(with: order.map { catalog.ids[$0] })
        stored.exhausted = order.count == remaining.count
    }

    /// The `group.matched` notification: the group as `GET /groups/{id}` shows it after the match.
    private func matchDelivery(_ stored: StoredGroup, version: Int) throws -> WebhookDelivery {
        let id = "group.matched:\(stored.session.id)"
        let body = WebhookBody(id: id, event: "group.matched", createdAt: now, group: statusBody(stored, version: version))
        return WebhookDelivery(id: id, event: "group.matched", payload: try WireJSON.encode(body), nextAttemptAt: now, createdAt: now)
    }

    private func statusBody(_ stored: StoredGroup, version: Int) -> GroupStatusBody {
        let session = stored.session
        let likes = Dictionary(grouping: session.votes.filter { $0.action == .like && $0.outcome.recorded }, by: \.member)
        let matched = session.matchedOption.flatMap { engine.matcher.catalog.row(of: $0) }.map { engine.matcher.catalog.summary(row: $0) }
        return GroupStatusBody(
            sessionID: session.id, inviteCode: InviteCode.display(stored.inviteCode), status: session.status,
            quorumN: session.quorum, maxMembers: session.maxMembers, creatorID: session.creatorID, createdAt: session.createdAt,
            strategy: stored.aggregation.strategy, filter: stored.filter,
            participants: session.members.map { GroupParticipant(studentID: $0.id, joinedAt: $0.joinedAt, likes: likes[$0.id]?.count ?? 0) },
            matchedOptionID: session.matchedOption, matchedOption: matched, deckSize: session.deck.count,
            votes: session.votes.count, version: version)
    }
}

/// The relay of other instances' group events, when the store is shared (PostgreSQL).
func groupRelay(store: any ServiceStore, hub: GroupEventHub, options: GroupOptions, logger: Logger) -> GroupRelay? {
    var generator = ClosureGenerator(source: options.random)
    return (store as? any StoreNotifications).map {
        GroupRelay(bus: $0, hub: hub, origin: String(generator.next(), radix: 36), logger: logger)
    }
}

/// The `matched` event of a group's stream.
struct MatchedEvent: Encodable {
    var matchedOptionID: String
    var matchedOption: ItemSummary?
    enum CodingKeys: String, CodingKey { case matchedOptionID = "matched_option_id", matchedOption = "matched_option" }
}

/// A webhook's JSON body.
struct WebhookBody: Encodable {
    /// The delivery id (also in `X-SwipeRank-Delivery`): receivers deduplicate by it.
    var id: String
    var event: String
    var createdAt: Int64
    var group: GroupStatusBody
    enum CodingKeys: String, CodingKey { case id, event, createdAt = "created_at", group }
}
