import Foundation
import OpenAPIRuntime
import OpenAPIURLSession

/// The service's schemas under short names (the generated ones live in `Components.Schemas`).
public typealias Deck = Components.Schemas.Deck
/// One card of a deck, in the shape the request asked for (full, minimal, compressed).
public typealias Card = Components.Schemas.Card
/// A student's profile as sent to `PUT /student/profile`.
public typealias Profile = Components.Schemas.Profile
/// The stored profile with its student id, times and version.
public typealias ProfileResponse = Components.Schemas.ProfileResponse
/// The answer to one swipe: the learning state after it and any feedback question.
public typealias SwipeResponse = Components.Schemas.SwipeResponse
/// Like or dislike.
public typealias SwipeAction = Components.Schemas.SwipeAction
/// The learning state and the swipe counts.
public typealias LearningStateResponse = Components.Schemas.LearningStateResponse
/// The saved items, newest first.
public typealias SavedList = Components.Schemas.SavedList
/// The answer to a save (`school_id` or `item_id` by catalog).
public typealias SaveResponse = Components.Schemas.SaveResponse
/// One result of `POST /student/sync`.
public typealias SyncResult = Components.Schemas.SyncResult
/// The answer to `POST /student/sync`.
public typealias SyncResponse = Components.Schemas.SyncResponse
/// A feedback option's stable code.
public typealias FeedbackCode = Components.Schemas.FeedbackCode
/// A guest token (`POST /auth/guest`).
public typealias GuestToken = Components.Schemas.GuestToken
/// A page of the liked and saved items (`GET /student/matches`).
public typealias MatchList = Components.Schemas.MatchList
/// The home screen (`GET /student/home`).
public typealias Home = Components.Schemas.Home

/// A typed client of the SwipeRank service (`swiperank serve`).
///
/// A thin layer over the generated `Client` (which stays reachable as `api` for every other
/// route): it adds the bearer token to each request, retries 429/503 answers per `RetryPolicy`,
/// turns every error answer into `SwipeRankAPIError`, and unwraps the documented success of each
/// call, so apps write `try await client.deck()` instead of switching on response enums.
public struct SwipeRankClient: Sendable {
    /// The generated client, with this client's token, retry and error handling. Called directly,
    /// it reports an error answer as `ClientError` whose `underlyingError` is `SwipeRankAPIError`.
    public let api: Client
    /// Makes the ids of swipes this client creates: a retry or a resent queue reuses them, which
    /// is what makes swipes idempotent. Injectable so tests are deterministic.
    public let newSwipeID: @Sendable () -> String
    /// Device time in Unix milliseconds for swipes without an explicit timestamp. Injectable.
    public let now: @Sendable () -> Int64

    /// - Parameters:
    ///   - serverURL: The service's base URL (`http://127.0.0.1:8080`).
    ///   - token: The current bearer token, asked before every attempt (so a refresh applies to
    ///     retries); nil sends none.
    ///   - retry: How 429 and 503 answers are retried.
    ///   - transport: How requests travel (URLSession by default; tests may wrap it).
    ///   - newSwipeID: Swipe ids (default: random UUIDs).
    ///   - now: The device clock in Unix milliseconds.
    public init(serverURL: URL,
                token: @escaping @Sendable () async throws -> String? = { nil },
                retry: RetryPolicy = RetryPolicy(),
                transport: any ClientTransport = URLSessionTransport(),
                newSwipeID: @escaping @Sendable () -> String = { UUID().uuidString },
                now: @escaping @Sendable () -> Int64 = { Int64(Date().timeIntervalSince1970 * 1_000) }) {
        // Outermost first: errors are read after the retries, and every attempt asks for the token.
        api = Client(serverURL: serverURL, transport: transport,
                     middlewares: [ErrorEnvelopeMiddleware(), RetryMiddleware(policy: retry), BearerMiddleware(token: token)])
        self.newSwipeID = newSwipeID
        self.now = now
    }

    /// Runs a generated call, rethrowing the service's error answer as `SwipeRankAPIError`
    /// itself (the generated client wraps whatever a middleware throws in `ClientError`).
    private func unwrap<T>(_ call: () async throws -> T) async throws -> T {
        do {
            return try await call()
        } catch let error as ClientError {
            if let answer = error.underlyingError as? SwipeRankAPIError { throw answer }
            throw error
        }
    }

    // MARK: Auth

    /// `POST /auth/guest`: a token for a fresh guest student (when the service issues them).
    public func guestToken() async throws -> GuestToken {
        switch try await unwrap({ try await api.postAuthGuest() }) {
        case let .created(answer): return try answer.body.json
        case let .undocumented(status, _): throw SwipeRankClientError.unexpectedStatus(status)
        default: throw SwipeRankClientError.unexpectedStatus(0)
        }
    }

    // MARK: Profile

    /// `PUT /student/profile`: creates or replaces the profile.
    public func setProfile(_ profile: Profile) async throws -> ProfileResponse {
        switch try await unwrap({ try await api.putStudentProfile(body: .json(profile)) }) {
        case let .ok(answer): return try answer.body.json
        case let .created(answer): return try answer.body.json
        case let .undocumented(status, _): throw SwipeRankClientError.unexpectedStatus(status)
        default: throw SwipeRankClientError.unexpectedStatus(0)
        }
    }

    /// `GET /student/profile`.
    public func profile() async throws -> ProfileResponse {
        switch try await unwrap({ try await api.getStudentProfile() }) {
        case let .ok(answer): return try answer.body.json
        case let .undocumented(status, _): throw SwipeRankClientError.unexpectedStatus(status)
        default: throw SwipeRankClientError.unexpectedStatus(0)
        }
    }

    // MARK: Deck and swipes

    /// `GET /student/recommendations`: the next cards. Cards dealt before and not swiped come
    /// back first (`repeated`), so retrying this call after a lost answer loses no cards.
    ///
    /// - Parameters:
    ///   - count: Cards wanted (1…50; the service's default when nil).
    ///   - fields: `.full` or `.minimal` cards.
    ///   - compressed: Short-key cards.
    public func deck(count: Int? = nil, fields: Components.Parameters.Fields? = nil, compressed: Bool? = nil) async throws -> Deck {
        switch try await unwrap({ try await api.getStudentRecommendations(query: .init(count: count, fields: fields, compressed: compressed)) }) {
        case let .ok(answer): return try answer.body.json
        case let .undocumented(status, _): throw SwipeRankClientError.unexpectedStatus(status)
        default: throw SwipeRankClientError.unexpectedStatus(0)
        }
    }

    /// A swipe ready to send or queue, with a fresh id and the device time unless given.
    public func makeSwipe(itemID: String, action: SwipeAction, timestamp: Int64? = nil, swipeID: String? = nil) -> Components.Schemas.ItemSwipe {
        .init(swipe_id: swipeID ?? newSwipeID(), item_id: itemID, action: action, timestamp: timestamp ?? now())
    }

    /// `POST /student/swipe`: records a swipe now. Sending the same swipe (same id) again is
    /// answered with the first answer, not recorded twice.
    public func swipe(_ swipe: Components.Schemas.ItemSwipe) async throws -> SwipeResponse {
        switch try await unwrap({ try await api.postStudentSwipe(body: .json(.ItemSwipe(swipe))) }) {
        case let .created(answer): return try answer.body.json
        case let .ok(answer): return try answer.body.json
        case let .undocumented(status, _): throw SwipeRankClientError.unexpectedStatus(status)
        default: throw SwipeRankClientError.unexpectedStatus(0)
        }
    }

    /// `POST /student/swipe` for a card: `makeSwipe` then `swipe`.
    public func swipe(itemID: String, action: SwipeAction, timestamp: Int64? = nil) async throws -> SwipeResponse {
        try await swipe(makeSwipe(itemID: itemID, action: action, timestamp: timestamp))
    }

    /// `POST /student/sync`: sends swipes recorded offline (at most 500); one result per swipe,
    /// in order. A swipe already recorded comes back `replayed`.
    public func sync(_ swipes: [Components.Schemas.ItemSwipe]) async throws -> SyncResponse {
        switch try await unwrap({ try await api.postStudentSync(body: .json(.init(swipes: swipes.map { .ItemSwipe($0) }))) }) {
        case let .ok(answer): return try answer.body.json
        case let .undocumented(status, _): throw SwipeRankClientError.unexpectedStatus(status)
        default: throw SwipeRankClientError.unexpectedStatus(0)
        }
    }

    // MARK: Feedback, state, saves

    /// `POST /student/feedback`: answers the feedback question open on a card.
    public func feedback(itemID: String, options: [FeedbackCode]) async throws -> LearningStateResponse {
        let answers = options.compactMap { Components.Schemas.FeedbackAnswer(rawValue: $0.rawValue) }
        switch try await unwrap({ try await api.postStudentFeedback(body: .json(.ItemFeedbackRequest(.init(item_id: itemID, options: answers)))) }) {
        case let .ok(answer): return try answer.body.json
        case let .undocumented(status, _): throw SwipeRankClientError.unexpectedStatus(status)
        default: throw SwipeRankClientError.unexpectedStatus(0)
        }
    }

    /// `GET /student/learning-state`.
    public func learningState() async throws -> LearningStateResponse {
        switch try await unwrap({ try await api.getStudentLearningState() }) {
        case let .ok(answer): return try answer.body.json
        case let .undocumented(status, _): throw SwipeRankClientError.unexpectedStatus(status)
        default: throw SwipeRankClientError.unexpectedStatus(0)
        }
    }

    /// `POST /student/items/{id}/save`: saves an item (a strong like; once per item).
    public func save(itemID: String, timestamp: Int64? = nil) async throws -> SaveResponse {
        switch try await unwrap({ try await api.postStudentItemsByIdSave(path: .init(id: itemID), body: .json(.init(timestamp: timestamp ?? now()))) }) {
        case let .created(answer): return try answer.body.json
        case let .ok(answer): return try answer.body.json
        case let .undocumented(status, _): throw SwipeRankClientError.unexpectedStatus(status)
        default: throw SwipeRankClientError.unexpectedStatus(0)
        }
    }

    /// `GET /student/saved`: saved items, newest first.
    public func saved(fields: Components.Parameters.Fields? = nil) async throws -> SavedList {
        switch try await unwrap({ try await api.getStudentSaved(query: .init(fields: fields)) }) {
        case let .ok(answer): return try answer.body.json
        case let .undocumented(status, _): throw SwipeRankClientError.unexpectedStatus(status)
        default: throw SwipeRankClientError.unexpectedStatus(0)
        }
    }
}

extension SwipeRankClient {
    // MARK: Screens

    /// `GET /student/matches`: liked and saved items, newest first, with their current match.
    ///
    /// - Parameters:
    ///   - limit: Items per page (1…100; 20 when nil).
    ///   - offset: Where the page starts (the previous page's `next_offset`).
    ///   - fields: `.full` or `.minimal` cards.
    public func matches(limit: Int? = nil, offset: Int? = nil, fields: Components.Parameters.Fields? = nil) async throws -> MatchList {
        switch try await unwrap({ try await api.getStudentMatches(query: .init(fields: fields, limit: limit, offset: offset)) }) {
        case let .ok(answer): return try answer.body.json
        case let .undocumented(status, _): throw SwipeRankClientError.unexpectedStatus(status)
        default: throw SwipeRankClientError.unexpectedStatus(0)
        }
    }

    /// `GET /student/home`: the deck (retry-safe), the learning state, counts and open groups.
    ///
    /// - Parameters:
    ///   - count: Deck size (1…50; the service's default when nil).
    ///   - fields: `.full` or `.minimal` cards.
    public func home(count: Int? = nil, fields: Components.Parameters.Fields? = nil) async throws -> Home {
        switch try await unwrap({ try await api.getStudentHome(query: .init(fields: fields, count: count)) }) {
        case let .ok(answer): return try answer.body.json
        case let .undocumented(status, _): throw SwipeRankClientError.unexpectedStatus(status)
        default: throw SwipeRankClientError.unexpectedStatus(0)
        }
    }
}

extension Card {
    /// The card's item id, whatever its shape.
    public var itemID: String {
        switch self {
        case let .SchoolCard(card): card.school.id
        case let .ItemCard(card): card.item.id
        case let .MinimalSchoolCard(card): card.school_id
        case let .MinimalItemCard(card): card.item_id
        case let .CompressedCard(card): card.i
        }
    }
}
