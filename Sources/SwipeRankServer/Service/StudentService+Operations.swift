import Foundation
import SwipeRank
import SwipeRankStore

/// What a write returns: the response body, and whether it replays an earlier identical write.
struct WriteResult: Sendable {
    var body: Data
    var replayed: Bool
}

extension StudentService {
    // MARK: Decks

    /// Serves the next `count` cards and logs them (the impression log) before answering.
    nonisolated(nonsending) func recommendations(_ studentID: String, count: Int, fields: CardFields, compressed: Bool, preload: Bool) async throws -> Data {
        try await withStudent(studentID) { live in
            // The key only with the memo on: reading the session's counts through its generic
            // getters was a few tenths of a percent of a re-scored deck.
            let key = options.memoizeDeckRereads ? live.deckKey(count: count, fields: fields, compressed: compressed, preload: preload) : nil
            if let key, let memo = live.deckMemo, memo.key == key {
                deckMemoHits.add(1, ordering: .relaxed)
                return ([], StudentUpdate(), memo.body)
            }
            // The cards dealt before and not played come first (a retry returns the same
            // deck); only the rest are dealt now, and only those are logged as served.
            // Minimal and compressed cards show no explanations: none is ranked for them, and
            // minimal cards are dealt brief (score, grade and probe flag, no whole card built).
            let list: CardList, openCount: Int, dealtCount: Int, learningState: LearningState, totalSwipes: Int
            if fields == .minimal && !compressed {
                let deck = live.session.briefDeck(count: count)
                list = .brief(BriefCardList(cards: deck.cards, catalog: live.session.engine.matcher.catalog,
                                            labels: itemLabels, vocabulary: M.vocabulary))
                (openCount, dealtCount) = (deck.open.count, deck.dealt.count)
                (learningState, totalSwipes) = (deck.learningState, deck.totalSwipes)
            } else {
                let deck = live.session.deck(count: count, explained: fields == .full && !compressed)
                let dealt = live.session.served.suffix(deck.dealt.recommendations.count)
                let cards = deck.open.map { ($0.recommendation, Optional($0.position)) }
                    + zip(deck.dealt.recommendations, dealt).map { ($0, Optional($1.position)) }
                list = CardList(cards, fields: fields, compressed: compressed, summaries: summaryJSON, vocabulary: M.vocabulary)
                (openCount, dealtCount) = (deck.open.count, deck.dealt.recommendations.count)
                (learningState, totalSwipes) = (deck.dealt.learningState, deck.dealt.totalSwipes)
            }
            let fresh = count - openCount
            let served = live.session.served.suffix(dealtCount)
            var events: [StoredEvent] = []
            var deckID: String?
            if dealtCount > 0 {
                let payload = ServedPayload(count: fresh, preload: preload, cards: served.map {
                    .init(cardID: $0.cardID, position: $0.position, band: $0.band?.rawValue, isProbe: $0.isProbe,
                          propensity: $0.propensity, predictedMatch: $0.predictedMatch)
                }, modelVersion: servedModel(for: studentID).version, arm: servedModel(for: studentID).arm)
                events.append(StoredEvent(kind: .served, payload: try WireJSON.encode(payload), createdAt: options.clock()))
                deckID = "deck-\(live.record.version + 1)"
            }
            let body = DeckResponse(deckID: deckID, recommendations: list, learningState: learningState, totalSwipes: totalSwipes,
                                    preload: preload, repeated: openCount, exhausted: live.session.unseenCount == 0)
            let encoded = try WireJSON.encode(body)
            // Only a re-read is kept: a deal stores events, which moves the key anyway.
            if let key, events.isEmpty, encoded.count <= DeckMemo.maxBytes {
                live.deckMemo = DeckMemo(key: key, body: encoded)
            }
            return (events, StudentUpdate(), encoded)
        }
    }

    // MARK: Swipes

    /// Records one swipe, idempotently: the same id and body returns the stored answer, the
    /// same id with another body is a 409.
    func swipe(_ studentID: String, _ request: SwipeRequest) async throws -> WriteResult {
        try ClientID.validate(request.swipeID, field: "swipe_id")
        let digest = request.digest
        return try await withStudent(studentID) { live in
            // Every stored swipe was replayed into the session, so an id it has not recorded has
            // no stored answer to look up (a stale cached session conflicts on append and runs
            // this again rebuilt).
            if live.session.hasRecorded(swipeID: request.swipeID),
               let replayed = try await priorWrite(studentID, kind: .swipe, clientID: request.swipeID, digest: digest) {
                return ([], StudentUpdate(), WriteResult(body: Self.currentSwipeShape(replayed), replayed: true))
            }
            let result: SwipeResult, organic: Bool
            do {
                // A card reached outside the deck (search, a detail page) is an organic swipe.
                (result, organic) = try live.session.recordOrganicSwipe(request.swipe)
            } catch let error as SwipeError {
                throw Self.apiError(error, field: "school_id")
            }
            let body = try WireJSON.encode(SwipeResponse(swipeID: request.swipeID, outcome: result.outcome.rawValue,
                                                         learningState: result.learningState,
                                                         totalSwipes: result.totalSwipes, feedback: result.feedback, organic: organic))
            let event = StoredEvent(kind: .swipe, clientID: request.swipeID, requestDigest: digest,
                                    payload: try WireJSON.encode(request), response: body, createdAt: options.clock())
            return ([event], StudentUpdate(), WriteResult(body: body, replayed: false))
        }
    }


    /// Applies an offline queue: the library's order rule (timestamp, then swipe id), each
    /// swipe idempotent on its own; all that were recorded are appended in one transaction.
    /// Applies an offline queue; the answer, and how many swipes were new (for the metrics).
    func sync(_ studentID: String, _ request: SyncRequest) async throws -> (body: Data, recorded: Int) {
        guard request.swipes.count <= options.maxSyncSwipes else {
            throw APIError.validation("at most \(options.maxSyncSwipes) swipes per sync, got \(request.swipes.count)", field: "swipes")
        }
        for (i, swipe) in request.swipes.enumerated() { try ClientID.validate(swipe.swipeID, field: "swipes[\(i)].swipe_id") }
        return try await withStudent(studentID) { live in
            let order = request.swipes.indices.sorted {
                (request.swipes[$0].timestamp, request.swipes[$0].swipeID) < (request.swipes[$1].timestamp, request.swipes[$1].swipeID)
            }
            var items = [SyncItem?](repeating: nil, count: request.swipes.count)
            var events: [StoredEvent] = []
            var inBatch: [String: String] = [:]
            let now = options.clock()
            for i in order {
                let swipe = request.swipes[i]
                let digest = swipe.digest
                do {
                    if let earlier = inBatch[swipe.swipeID] {
                        guard earlier == digest else {
                            throw APIError.conflict("swipe_id \(swipe.swipeID) appears twice in this sync with different bodies",
                                                    details: ["field": .string("swipes[\(i)].swipe_id")])
                        }
                        let body = events.last { $0.clientID == swipe.swipeID }?.response ?? Data("null".utf8)
                        items[i] = SyncItem(swipeID: swipe.swipeID, status: 200, result: try JSONDecoder().decode(JSONValue.self, from: body), replayed: true)
                        continue
                    }
                    if let replayed = try await priorWrite(studentID, kind: .swipe, clientID: swipe.swipeID, digest: digest) {
                        items[i] = SyncItem(swipeID: swipe.swipeID, status: 200,
                                            result: try JSONDecoder().decode(JSONValue.self, from: Self.currentSwipeShape(replayed)), replayed: true)
                        continue
                    }
                    let result: SwipeResult, organic: Bool
                    do {
                        (result, organic) = try live.session.recordOrganicSwipe(swipe.swipe)
                    } catch let error as SwipeError {
                        throw Self.apiError(error, field: "swipes[\(i)].school_id")
                    }
                    let response = SwipeResponse(swipeID: swipe.swipeID, outcome: result.outcome.rawValue,
                                                 learningState: result.learningState, totalSwipes: result.totalSwipes,
                                                 feedback: result.feedback, organic: organic)
                    let body = try WireJSON.encode(response)
                    events.append(StoredEvent(kind: .swipe, clientID: swipe.swipeID, requestDigest: digest,
                                              payload: try WireJSON.encode(swipe), response: body, createdAt: now))
                    inBatch[swipe.swipeID] = digest
                    items[i] = SyncItem(swipeID: swipe.swipeID, status: 200, result: try JSONDecoder().decode(JSONValue.self, from: body), replayed: false)
                } catch let error as APIError {
                    items[i] = SyncItem(swipeID: swipe.swipeID, status: Int(error.status.code),
                                        error: .init(code: error.code, message: error.message, details: error.details))
                }
            }
            let body = SyncBody(results: items.map { $0! }, learningState: live.session.learningState,
                            totalSwipes: live.session.totalSwipes, cursor: live.record.version + events.count)
            return (events, StudentUpdate(), (try WireJSON.encode(body), events.count))
        }
    }

    /// A stored swipe answer in today's shape: an answer stored by an earlier version (feedback
    /// options as English labels, no `organic`) is rewritten — options as `{code, label}`,
    /// `organic: false` (organic swipes did not exist then) — so a replay honours the contract.
    static func currentSwipeShape(_ stored: Data) -> Data {
        guard case var .object(body) = try? JSONDecoder().decode(JSONValue.self, from: stored), body["organic"] == nil else { return stored }
        body["organic"] = .bool(false)
        if case var .object(prompt)? = body["feedback"], case let .array(options)? = prompt["options"] {
            prompt["options"] = .array(options.map { option in
                guard case let .string(text) = option, let known = FeedbackOption(codeOrLabel: text) else { return option }
                return .object(["code": .string(known.code), "label": .string(known.label)])
            })
            body["feedback"] = .object(prompt)
        }
        return (try? WireJSON.encode(JSONValue.object(body))) ?? stored
    }

    /// The stored answer to an earlier write with this client id, or a 409 when that write had
    /// another body; nil when there was none.
    func priorWrite(_ studentID: String, kind: EventKind, clientID: String, digest: String) async throws -> Data? {
        guard let prior = try await storeCall({ try await self.store.event(of: studentID, kind: kind, clientID: clientID) }) else {
            return nil
        }
        guard prior.requestDigest == digest else {
            throw APIError.conflict("\(kind.rawValue) id \(clientID) was already used with a different body",
                                    details: ["field": .string(kind == .swipe ? "swipe_id" : "id")])
        }
        return prior.response ?? Data("{}".utf8)
    }

    static func apiError(_ error: SwipeError, field: String) -> APIError {
        switch error.kind {
        case .unknownCard:
            return APIError.notFound(error.message, details: ["field": .string(field), "resource": .string("school")])
        case .notServed:
            return APIError.conflict(error.message, details: ["field": .string(field), "reason": .string("not_served")])
        case .alreadySwiped:
            return APIError.conflict(error.message, details: ["field": .string(field), "reason": .string("already_swiped")])
        case .invalidFeedback:
            return APIError.conflict(error.message, details: ["field": .string(field), "reason": .string("no_open_question")])
        case .invalidSwipe:
            return APIError.validation(error.message, field: field)
        default:
            return APIError(.unprocessableContent, code: "UNPROCESSABLE", message: error.message, details: ["field": .string(field)])
        }
    }

    // MARK: Feedback and saves

    /// Answers the open feedback question about a school.
    func feedback(_ studentID: String, _ request: FeedbackRequest) async throws -> Data {
        try await withStudent(studentID) { live in
            do {
                try live.session.submitFeedback(cardID: request.itemID, options: request.options)
            } catch let error as SwipeError {
                if error.kind == SwipeError.Kind.invalidFeedback, live.session.engine.matcher.catalog.row(of: request.itemID) != nil,
                   error.message.contains("was not offered") {
                    throw APIError.validation(error.message, field: "options")
                }
                throw Self.apiError(error, field: "school_id")
            }
            let payload = FeedbackPayload(itemID: request.itemID, options: request.options)
            let event = StoredEvent(kind: .feedback, payload: try WireJSON.encode(payload), createdAt: options.clock())
            return ([event], StudentUpdate(), try WireJSON.encode(learningStateBody(live.session)))
        }
    }

    /// Saves a school: a strong like the model learns from (once per school: saving again
    /// returns the first answer).
    func save(_ studentID: String, itemID: String, timestamp: Int64?) async throws -> WriteResult {
        try await withStudent(studentID) { live in
            if let prior = try await storeCall({ try await self.store.event(of: studentID, kind: .save, clientID: itemID) }) {
                return ([], StudentUpdate(), WriteResult(body: prior.response ?? Data("{}".utf8), replayed: true))
            }
            let payload = SavePayload(itemID: itemID, timestamp: timestamp ?? options.clock())
            let result: SwipeResult
            do {
                result = try live.session.recordJudgement(payload.judgement, weight: options.saveWeight)
            } catch let error as SwipeError {
                throw Self.apiError(error, field: "id")
            }
            let body = try WireJSON.encode(SaveBody(itemID: itemID, saved: true, learningState: result.learningState,
                                                totalSwipes: result.totalSwipes, vocabulary: M.vocabulary))
            let event = StoredEvent(kind: .save, clientID: itemID, requestDigest: itemID, payload: try WireJSON.encode(payload),
                                    response: body, createdAt: options.clock())
            return ([event], StudentUpdate(), WriteResult(body: body, replayed: false))
        }
    }

    /// The saved schools, newest first, with this student's current match.
    func saved(_ studentID: String, fields: CardFields) async throws -> Data {
        try await withStudent(studentID) { live in
            let saves = try await allEvents(studentID, after: 0, through: live.record.version, kinds: [.save])
            let cards = try cards(for: saves.reversed().map { try JSONDecoder().decode(SavePayload.self, from: $0.payload).itemID },
                                  session: live.session)
            return ([], StudentUpdate(), try WireJSON.encode(SavedBody(saved: CardList(cards.map { ($0, nil) }, fields: fields, compressed: false, summaries: summaryJSON, vocabulary: M.vocabulary),
                                                                  count: cards.count)))
        }
    }

    /// One school with this student's match score.
    func school(_ studentID: String, itemID: String, fields: CardFields) async throws -> Data {
        try await withStudent(studentID) { live in
            guard let card = try cards(for: [itemID], session: live.session).first else {
                throw APIError.notFound("no \(M.vocabulary.item) \"\(itemID.prefix(64))\"", details: ["resource": .string(M.vocabulary.item)])
            }
            return ([], StudentUpdate(), try WireJSON.encode(CardList([(card, nil)], fields: fields, compressed: false, summaries: summaryJSON, vocabulary: M.vocabulary).single))
        }
    }

    func cards(for ids: [String], session: SwipeSession<M>) throws -> [Recommendation] {
        let engine = session.engine  // the student's arm's
        let catalog = engine.matcher.catalog
        let rows = ids.compactMap { catalog.row(of: $0) }
        guard !rows.isEmpty else { return [] }
        let weights = session.weights, student = session.student
        var raw: [Float] = []
        engine.rawScores(weights: weights, student: student, into: &raw)
        let grades = engine.gradeScale(weights: weights, student: student)
        return rows.map {
            var card = engine.matcher.card(row: $0, raw: engine.matchRaw(raw[$0], row: $0), student: student, weights: weights,
                                           isProbe: false)
            card.grade(by: grades)
            return card
        }
    }

    // MARK: State

    func learningStateBody(_ session: SwipeSession<M>) -> LearningStateResponse {
        LearningStateResponse(learningState: session.learningState, totalSwipes: session.totalSwipes,
                              servedCards: session.served.count, unseenCards: session.unseenCount)
    }

    /// The student's ranking scores of every item under their current model (the cold start
    /// before any swipe; with the collaborative term when the engine has factors), or nil when
    /// the student has no profile.
    func rawScores(_ studentID: String) async throws -> [Double]? {
        do {
            return try await withStudent(studentID) { live in
                var scores: [Float] = []
                live.session.rankingScores(into: &scores)
                return ([], StudentUpdate(), scores.map(Double.init))
            }
        } catch let error as APIError where error.status == .notFound {
            return nil  // loading found no profile (the only 404 a load gives); no second read to ask first
        }
    }

    /// The learning state.
    func learningState(_ studentID: String) async throws -> Data {
        try await withStudent(studentID) { live in ([], StudentUpdate(), try WireJSON.encode(learningStateBody(live.session))) }
    }


    /// What changed after `since`: the events (at most `maxSyncEvents`), the cursor to ask
    /// from next, and the learning state now; with `catalogSince`, also the items operators
    /// changed after that catalog sequence (`CatalogDelta`).
    func changes(_ studentID: String, since: Int, catalogSince: Int? = nil, fields: CardFields = .full) async throws -> Data {
        try await withStudent(studentID) { live in
            let page = try await storeCall {
                try await self.store.events(of: studentID, after: since, kinds: nil, limit: self.options.maxSyncEvents)
            }
            let cursor = page.last?.seq ?? max(since, 0)
            var body = ChangesBody(events: page.map(EventView.init), cursor: min(cursor, live.record.version),
                            hasMore: cursor < live.record.version, learningState: live.session.learningState,
                            totalSwipes: live.session.totalSwipes)
            if let catalogSince { body.catalog = try await catalogDelta(after: catalogSince, session: live.session, fields: fields) }
            return ([], StudentUpdate(), try WireJSON.encode(body))
        }
    }

    /// The items changed after catalog sequence `after`, up to the sequence this instance
    /// serves (never past it: a client must not skip a change it has not been served): the
    /// current card of each item still in the catalog (with this student's match), and the ids
    /// of those deleted. At most `maxSyncEvents` changes are read per answer (`has_more`).
    func catalogDelta(after: Int, session: SwipeSession<M>, fields: CardFields) async throws -> CatalogDelta {
        guard let log = catalogLog, after < catalogSequence else {
            // Nothing newer here (a cursor from an instance further on stays as it is).
            return CatalogDelta(cursor: after, hasMore: false,
                                updated: CardList([], fields: fields, compressed: false, vocabulary: M.vocabulary), deleted: [])
        }
        let page = try await storeCall { try await log.catalogChanges(after: after, limit: self.options.maxSyncEvents) }
            .filter { $0.seq <= catalogSequence }
        var last: [String: Int] = [:]
        for (i, change) in page.enumerated() { last[change.itemID] = i }
        let ids = last.sorted { $0.value < $1.value }.map(\.key)
        let catalog = engine.matcher.catalog
        let present = ids.filter { catalog.row(of: $0) != nil }
        let cards = try cards(for: present, session: session)
        let cursor = page.last?.seq ?? catalogSequence
        return CatalogDelta(cursor: cursor, hasMore: cursor < catalogSequence,
                            updated: CardList(cards.map { ($0, nil) }, fields: fields, compressed: false, summaries: summaryJSON, vocabulary: M.vocabulary),
                            deleted: ids.filter { catalog.row(of: $0) == nil })
    }

    /// Everything stored about the student.
    func export(_ studentID: String) async throws -> Data {
        try await withStudent(studentID) { live in
            let events = try await allEvents(studentID, after: 0, through: live.record.version, kinds: nil)
            let body = ExportBody(studentID: studentID, profile: (try? JSONDecoder().decode(JSONValue.self, from: live.record.profile)) ?? .null,
                            createdAt: live.record.createdAt, updatedAt: live.record.updatedAt, version: live.record.version,
                            learningState: live.session.learningState, totalSwipes: live.session.totalSwipes,
                            events: events.map(EventView.init))
            return ([], StudentUpdate(), try WireJSON.encode(body))
        }
    }
}

extension CardList {
    /// The one card of a single-card list.
    var single: AnyEncodableCard {
        switch self {
        case let .full(c): AnyEncodableCard(c[0])
        case let .minimal(c): AnyEncodableCard(c[0])
        case let .compressed(c): AnyEncodableCard(c[0])
        case let .brief(list): AnyEncodableCard(list.minimalCards[0])
        }
    }
}

/// One card of any shape.
struct AnyEncodableCard: Encodable {
    let card: any Encodable
    init(_ card: any Encodable) { self.card = card }
    func encode(to encoder: any Encoder) throws { try card.encode(to: encoder) }
}

/// A response body.
struct SyncBody: Encodable {
    var results: [SyncItem]
    var learningState: LearningState
    var totalSwipes: Int
    var cursor: Int
    enum CodingKeys: String, CodingKey { case results, learningState = "learning_state", totalSwipes = "total_swipes", cursor }
}

/// A response body.
struct SaveBody: Encodable {
    var itemID: String
    var saved: Bool
    var learningState: LearningState
    var totalSwipes: Int
    /// The id's wire name.
    var vocabulary: ItemVocabulary = .school

    func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: AnyKey.self)
        try c.encode(itemID, forKey: AnyKey(vocabulary.itemID))
        try c.encode(saved, forKey: AnyKey("saved"))
        try c.encode(learningState, forKey: AnyKey("learning_state"))
        try c.encode(totalSwipes, forKey: AnyKey("total_swipes"))
    }
}

/// A response body.
struct SavedBody: Encodable {
    var saved: CardList
    var count: Int
}

/// A response body.
struct ChangesBody: Encodable {
    var events: [EventView]
    var cursor: Int
    var hasMore: Bool
    var learningState: LearningState
    var totalSwipes: Int
    /// With `catalog_since`: the items changed since.
    var catalog: CatalogDelta?
    enum CodingKeys: String, CodingKey {
        case events, cursor, hasMore = "has_more", learningState = "learning_state", totalSwipes = "total_swipes", catalog
    }
}

/// The items operators changed since a client's catalog cursor.
struct CatalogDelta: Encodable {
    /// The catalog sequence to ask from next (`catalog_since`).
    var cursor: Int
    var hasMore: Bool
    /// The current cards of the items added or changed.
    var updated: CardList
    /// Items deleted: never served again; drop them from any cache.
    var deleted: [String]
    enum CodingKeys: String, CodingKey { case cursor, hasMore = "has_more", updated = "updated_items", deleted = "deleted_items" }
}

/// A response body.
struct ExportBody: Encodable {
    var studentID: String
    var profile: JSONValue
    var createdAt: Int64
    var updatedAt: Int64
    var version: Int
    var learningState: LearningState
    var totalSwipes: Int
    var events: [EventView]
    enum CodingKeys: String, CodingKey {
        case studentID = "student_id", profile, createdAt = "created_at", updatedAt = "updated_at", version,
             learningState = "learning_state", totalSwipes = "total_swipes", events
    }
}

/// One result of `POST /student/sync`.
struct SyncItem: Encodable, Sendable {
    var swipeID: String
    var status: Int
    var result: JSONValue?
    var error: ErrorEnvelope.Body?
    /// On success: whether this swipe id was recorded before (a resent queue), as
    /// `Idempotent-Replayed` says for a single swipe.
    var replayed: Bool?

    enum CodingKeys: String, CodingKey { case swipeID = "swipe_id", status, result, error, replayed }
}

/// One log entry as clients see it.
struct EventView: Encodable, Sendable {
    var seq: Int
    var kind: String
    var createdAt: Int64
    var data: JSONValue

    enum CodingKeys: String, CodingKey { case seq, kind, createdAt = "created_at", data }

    init(_ event: StoredEvent) {
        seq = event.seq
        kind = event.kind.rawValue
        createdAt = event.createdAt
        data = (try? JSONDecoder().decode(JSONValue.self, from: event.payload)) ?? .null
    }
}
