import Crypto
import Foundation
import Logging
import SwipeRank
import SwipeRankStore
import Synchronization

/// Limits and policies of the student service.
public struct ServiceOptions: Sendable {
    /// Live sessions kept in memory (O(swipes) each: ~19 KB after 40 swipes on any catalog size,
    /// the resolved students' per-item arrays being in the engine's own bounded cache), plus
    /// the last deck re-read's bytes, at most 16 KiB (`memoizeDeckRereads`).
    public var cacheCapacity = 2_000
    /// The fewest events between two stored snapshots (fewer served decks to replay on a
    /// cache miss). See `snapshotSpacing` for long histories.
    public var snapshotInterval = 32
    /// A snapshot holds the whole history (every served card and every swipe), so its cost
    /// grows with it: the next one is due only once the history has grown by this fraction
    /// since the last (and `snapshotInterval` events have passed). Snapshot work is then at
    /// most `1 / snapshotSpacing` entries per history entry however long the history, and a
    /// rebuild replays at most that fraction of the history after restoring. 0: every
    /// `snapshotInterval` events.
    public var snapshotSpacing = 0.125
    /// Snapshots being written at most at once, after the requests that made them due have been
    /// answered; a snapshot due while this many are under way waits for a later event.
    public var backgroundSnapshots = 4
    /// How many swipes a saved school counts as (a strong like).
    public var saveWeight = 2.0
    /// Default and largest `count` of `/student/recommendations`.
    public var defaultCount = 10
    /// The largest `count` of `/student/recommendations`.
    public var maxCount = 50
    /// Default `count` of `/student/recommendations/preload`.
    public var defaultPreloadCount = 30
    /// The largest `count` of `/student/recommendations/preload`.
    public var maxPreloadCount = 200
    /// The most swipes in one `POST /student/sync`.
    public var maxSyncSwipes = 500
    /// The most events one `GET /student/sync` returns.
    public var maxSyncEvents = 500
    /// The most app events in one `POST /events`.
    public var maxEventsPerBatch = 500
    /// App events older than this many days are deleted (checked hourly); 0 keeps them.
    public var eventRetentionDays = 0
    /// Walk every stored student at start-up and migrate those stored under another catalog or
    /// model (`MigrationSweepService`); off, each is migrated on its first request.
    public var migrationSweep = true
    /// Check a cached session's version against the store before its answer counts — after a
    /// read ran (or a write was rejected); a write is checked by its append, which expects the
    /// cached version — and rebuild a stale one: needed when several instances share one
    /// database, useless (one extra read per read) with one instance.
    public var verifyCachedVersion = false
    /// Keep each live session's last deck re-read (every card open, nothing dealt) and answer
    /// the same request with the same bytes until the student's state changes, instead of
    /// re-scoring the catalog: the answer is a function of that state, so this only saves
    /// work. Off re-computes every read (tests compare the two).
    public var memoizeDeckRereads = true
    /// Whether an append should store a snapshot: once `snapshotInterval` events (plus the
    /// student's `stagger`) have passed since the last one and the history has grown by
    /// `snapshotSpacing × historySize`.
    ///
    /// - Parameters:
    ///   - eventsSince: Events since the stored snapshot, this append's included.
    ///   - historySize: What a snapshot would hold now: served cards plus swipes.
    ///   - historyAtLast: The same count when the stored snapshot was taken (0: none).
    ///   - stagger: Extra events for this student (`snapshotStagger(for:)`; 0 for none).
    public func snapshotDue(eventsSince: Int, historySize: Int, historyAtLast: Int, stagger: Int = 0) -> Bool {
        eventsSince >= snapshotInterval + stagger && Double(historySize - historyAtLast) >= snapshotSpacing * Double(historySize)
    }

    /// A student's extra events between snapshots, 0 ..< max(1, snapshotInterval / 2), fixed by
    /// the student's id: students who start together (a class, a campaign, a load test) would
    /// otherwise all reach their snapshot at the same event and write them in one burst (1,000
    /// snapshots of ~50 KB within 0.4 s in a load run, every request of that moment waiting).
    ///
    /// - Parameter studentID: The student.
    /// - Returns: The stagger, the same for the same id in every process.
    public func snapshotStagger(for studentID: String) -> Int {
        var hasher = FNV1a64()
        hasher.combine(studentID)
        return Int(hasher.state % UInt64(max(1, snapshotInterval / 2)))
    }

    /// Milliseconds since 1970: what events are stamped with and rate limits refill by (tests
    /// pass a fixed clock).
    public var clock: @Sendable () -> Int64 = { Int64((Date().timeIntervalSince1970 * 1000).rounded()) }

    /// The defaults.
    public init() {}
}

/// A cached live session, changed in place under the student's lock (`KeyedLock`): a request
/// finds it with one cache lookup and leaves it there. Taking the session out of the cache and
/// putting it back cost two hash-map updates and a second lock on every request.
final class LiveBox<M: Matcher>: @unchecked Sendable {  // `live` is only touched under the student's lock
    /// The session and its stored record.
    var live: LiveStudent<M>

    init(_ live: LiveStudent<M>) { self.live = live }
}

/// A student's live session and where the store stood when it was built or last written.
struct LiveStudent<M: Matcher>: Sendable {
    var session: SwipeSession<M>
    var record: StudentRecord
    /// Served cards plus swipes when the stored snapshot was taken (the snapshot policy's
    /// measure of history; 0 without a snapshot).
    var snapshotHistory: Int

    /// The last deck re-read's answer (`DeckMemo`), or nil.
    var deckMemo: DeckMemo?

    /// What a snapshot of the session holds: served cards plus swipes.
    var history: Int { session.served.count + session.totalSwipes }

    /// What a deck request's answer is a function of, besides this service's engine and
    /// catalog (fixed for the service's life: a new model or catalog is a new service with an
    /// empty cache): the request's parameters and where the student stands.
    func deckKey(count: Int, fields: CardFields, compressed: Bool, preload: Bool) -> DeckMemo.Key {
        DeckMemo.Key(count: count, fields: fields, compressed: compressed, preload: preload, version: record.version,
                     served: session.served.count, swipes: session.totalSwipes)
    }
}

/// The body of a student's last deck re-read (every card open, nothing dealt) and what it was
/// computed from. Asked again with the same parameters before anything changes — a
/// pull-to-refresh, a retried request, the home screen, another device — the same bytes are
/// returned without re-scoring the catalog and re-encoding the cards: the answer is a pure
/// function of the key (`ServiceOptions.memoizeDeckRereads`).
struct DeckMemo: Sendable {
    /// The request's parameters and the student's state. `version` moves with every stored
    /// event (swipes, saves, feedback, profile changes); a rebuilt or migrated session starts
    /// without a memo; `served` and `swipes` guard any in-memory change besides.
    struct Key: Hashable, Sendable {
        var count: Int
        var fields: CardFields
        var compressed: Bool
        var preload: Bool
        var version: Int
        var served: Int
        var swipes: Int
    }

    /// Bodies larger than this are not kept (a 200-card full preload), so the memo adds at
    /// most this much to a cached session: 16 KiB × the default 2,000 sessions = 32 MiB.
    static let maxBytes = 16 * 1024

    /// What the body was computed from.
    var key: Key
    /// The encoded response.
    var body: Data
}

/// The logic behind every `/student` route: loads a student's session (from the cache, else
/// rebuilt from the store), applies one operation to it under the student's lock and appends
/// the events it produced; a session whose operation or append failed leaves the cache, so the
/// cache only holds what the store holds. Knows nothing of HTTP beyond `APIError`.
final class StudentService<M: ServableMatcher>: Sendable {
    let engine: SwipeEngine<M>
    /// `engine.modelVersion`, computed once (every served deck's impressions carry it).
    let modelVersion: String
    /// The catalog's summaries as JSON, for full cards.
    let summaryJSON: SummaryJSON
    /// The catalog's ids and names as JSON, for minimal cards.
    let itemLabels: ItemLabelsJSON
    let store: any StudentStore
    let options: ServiceOptions
    let cache: LRUCache<String, LiveBox<M>>
    /// Per-student locks, shared with the services of earlier catalog versions still finishing
    /// their requests.
    let locks: KeyedLock
    let logger: Logger
    /// Writes due snapshots in the background.
    let snapshots: SnapshotWriter<M>
    /// Students carried over to this catalog or model, and those that could not be.
    let migrations: MigrationLedger
    /// The catalog change log's sequence `engine` includes (0: the catalog file as loaded).
    let catalogSequence: Int
    /// The catalog change log, for clients' catalog deltas (nil: no item API).
    let catalogLog: (any CatalogLog)?
    /// An A/B test's arms over `engine`, or nil (everyone on `engine`).
    let arms: ArmEngines<M>?
    /// Deck requests answered from a `DeckMemo` (tests check the memo is used).
    let deckMemoHits = Atomic<Int>(0)

    init(engine: SwipeEngine<M>, store: any StudentStore, options: ServiceOptions, logger: Logger,
         locks: KeyedLock = KeyedLock(), migrations: MigrationLedger = MigrationLedger(), catalogSequence: Int = 0,
         catalogLog: (any CatalogLog)? = nil, arms: ArmEngines<M>? = nil) {
        self.locks = locks
        self.arms = arms
        self.catalogLog = catalogLog
        self.catalogSequence = catalogSequence
        self.migrations = migrations
        self.engine = engine
        self.modelVersion = engine.modelVersion
        self.summaryJSON = SummaryJSON(catalog: engine.matcher.catalog)
        self.itemLabels = ItemLabelsJSON(catalog: engine.matcher.catalog)
        self.store = store
        self.options = options
        self.cache = LRUCache(capacity: options.cacheCapacity)
        self.logger = logger
        self.snapshots = SnapshotWriter(store: store, limit: options.backgroundSnapshots, logger: logger)
    }

    /// The engine a student is served and learns with: their arm's, or `engine`.
    func engine(for studentID: String) -> SwipeEngine<M> { arms?.arm(of: studentID).engine ?? engine }

    /// The model version and arm logged with a student's decks.
    func servedModel(for studentID: String) -> (version: String, arm: String?) {
        guard let arm = arms?.arm(of: studentID) else { return (modelVersion, nil) }
        return (arm.modelVersion, arm.name)
    }

    // MARK: Loading

    /// Runs `body` on the student's live session under the student's lock. `body` returns the
    /// events to append (none for reads) and the response. The session is changed where it
    /// sits in the cache; every way out but success (and a rejection that changed nothing)
    /// drops it from the cache, so what stays cached is what the store holds. A conflict
    /// (another writer moved the student) rebuilds and retries. It runs on the caller's executor,
    /// like `KeyedLock.withLock` (a task switch saved at each call and return under `--executor nio`).
    nonisolated(nonsending) func withStudent<T: Sendable>(
        _ studentID: String,
        _ body: nonisolated(nonsending) (inout LiveStudent<M>) async throws -> (events: [StoredEvent], update: StudentUpdate, result: T)
    ) async throws -> T {
        try await locks.withLock(studentID) {
            for _ in 0..<3 {
                let (box, current) = try await load(studentID)
                let attempt: Attempt<T>
                do {
                    attempt = try await run(body, on: box, studentID: studentID, current: current)
                } catch {
                    // A store error, or the body's own: nothing says the session matches the store.
                    cache.remove(studentID)
                    throw error
                }
                switch attempt {
                case let .done(result): return result
                case let .rejected(error): throw error
                case .retry: cache.remove(studentID)
                }
            }
            throw APIError.conflict("the student changed concurrently; retry the request")
        }
    }

    /// How one try of `withStudent` ended.
    private enum Attempt<T> {
        /// Answered; the session stays cached.
        case done(T)
        /// The engine refused the request and left the session as it was (it stays cached).
        case rejected(APIError)
        /// The cached session was stale, or another writer came first: rebuild and run again.
        case retry
    }

    /// One try of `withStudent`'s body on a cached session, and the append of what it produced.
    private nonisolated(nonsending) func run<T: Sendable>(
        _ body: nonisolated(nonsending) (inout LiveStudent<M>) async throws -> (events: [StoredEvent], update: StudentUpdate, result: T),
        on box: LiveBox<M>, studentID: String, current: Bool
    ) async throws -> Attempt<T> {
        let outcome: (events: [StoredEvent], update: StudentUpdate, result: T)
        do {
            outcome = try await body(&box.live)
        } catch let error as APIError {
            // A session that may be stale is checked before its answer counts: the
            // rejection may be stale too. Rebuilt, the request runs again.
            if !current, try await isStale(box.live) { return .retry }
            return .rejected(error)
        }
        guard !outcome.events.isEmpty else {
            if !current, try await isStale(box.live) { return .retry }
            return .done(outcome.result)
        }
        // A write needs no check before it: the append expects the cached version, and a
        // stale session conflicts below (one round trip per swipe instead of two).
        precondition(outcome.update.profile == nil, "profile changes go through setProfile, which rebuilds the session")
        precondition(outcome.update.snapshot == nil, "snapshots are written by `snapshots`, after the append")
        switch try await store.append(outcome.events, to: studentID, expectedVersion: box.live.record.version, update: outcome.update) {
        case let .appended(version):
            box.live.record.version = version
            box.live.record.updatedAt = outcome.events[outcome.events.count - 1].createdAt
            // A due snapshot is written after this request is answered (its encoding and
            // pages were the slowest part of the requests that carried one). Counted as
            // taken now: if its write is lost, the next rebuild only replays more events.
            let history = box.live.history
            if options.snapshotDue(eventsSince: version - box.live.record.snapshotVersion, historySize: history,
                                   historyAtLast: box.live.snapshotHistory, stagger: options.snapshotStagger(for: studentID)),
               snapshots.submit(box.live.session, studentID: studentID, version: version, createdAt: box.live.record.createdAt) {
                box.live.record.snapshotVersion = version
                box.live.snapshotHistory = history
            }
            return .done(outcome.result)
        case .conflict:
            // Someone else wrote first (another instance, or a client id raced): the
            // cached session is stale. Rebuild from the store and run again.
            logger.debug("append conflict; rebuilding", metadata: ["student": "\(studentID)"])
            return .retry
        }
    }

    /// Creates or replaces the profile (a new learning session that keeps every past swipe and
    /// save as evidence), under the student's lock.
    func setProfile(_ studentID: String, profileJSON: Data, profile: M.Profile) async throws -> (record: StudentRecord, created: Bool) {
        try await locks.withLock(studentID) {
            for _ in 0..<3 {
                let existing = try await storeCall { try await self.store.student(studentID) }
                let version = existing?.version ?? 0
                var migration: SessionMigration<M>
                do {
                    migration = SessionMigration(session: try engine(for: studentID).session(studentID: studentID, profile: profile,
                                                                             seed: seed(studentID, version + 1)))
                } catch let error as DataError {
                    throw APIError.validation(error)
                }
                if version > 0 {
                    // Past evidence on items that have left the catalog is counted, not learned.
                    for event in try await allEvents(studentID, after: 0, through: version, kinds: [.swipe, .save]) {
                        try carryOver(event, into: &migration)
                    }
                }
                let session = migration.session
                let now = options.clock()
                let event = StoredEvent(kind: .profile, payload: profileJSON, createdAt: now)
                let snapshot = try? session.snapshot().jsonData()
                switch try await storeCall({
                    try await self.store.append([event], to: studentID, expectedVersion: version,
                                                update: StudentUpdate(profile: profileJSON, snapshot: snapshot))
                }) {
                case let .appended(newVersion):
                    let record = StudentRecord(studentID: studentID, profile: profileJSON, version: newVersion,
                                               profileVersion: newVersion, snapshot: snapshot,
                                               snapshotVersion: snapshot == nil ? existing?.snapshotVersion ?? 0 : newVersion,
                                               createdAt: existing?.createdAt ?? now, updatedAt: now)
                    cache.put(studentID, LiveBox(LiveStudent(session: session, record: record,
                                                     snapshotHistory: snapshot == nil ? 0 : session.served.count + session.totalSwipes)))
                    return (record, existing == nil)
                case .conflict:
                    cache.remove(studentID)
                    continue
                }
            }
            throw APIError.conflict("the student changed concurrently; retry the request")
        }
    }

    /// Erases everything about the student.
    func erase(_ studentID: String) async throws -> Bool {
        try await locks.withLock(studentID) {
            cache.remove(studentID)
            return try await storeCall { try await self.store.deleteStudent(studentID) }
        }
    }

    /// The student's record, or 404.
    func record(_ studentID: String) async throws -> StudentRecord {
        guard let record = try await storeCall({ try await self.store.student(studentID) }) else { throw Self.noProfile }
        return record
    }

    static var noProfile: APIError {
        APIError.notFound("this student has no profile yet: PUT /student/profile first", details: ["resource": .string("profile")])
    }

    private nonisolated(nonsending) func load(_ studentID: String) async throws -> (box: LiveBox<M>, current: Bool) {
        // With several instances a cached session may be behind the store: it is not checked
        // here but after the request ran (`isStale`), or by the append's expected version.
        if let box = cache.get(studentID) { return (box, !options.verifyCachedVersion) }
        let box = LiveBox(try await rebuild(try await record(studentID)))
        cache.put(studentID, box)
        return (box, true)
    }

    /// Whether another instance moved the student past a cached session (one read).
    private func isStale(_ live: LiveStudent<M>) async throws -> Bool {
        let stored = try await storeCall { try await self.store.studentVersion(live.record.studentID) }
        return stored != live.record.version
    }

    /// Rebuilds the session: the snapshot (or the profile, with past swipes and saves carried
    /// over), then every later event through the engine, checking that each served deck comes
    /// out card for card as it was served. When the history does not fit this engine — a
    /// snapshot of another catalog, population model or configuration, a deck that replays
    /// differently — the student is migrated from the log instead (`migrate(_:reason:)`).
    func rebuild(_ record: StudentRecord) async throws -> LiveStudent<M> {
        try await rebuildReporting(record).live
    }

    /// `rebuild(_:)`, saying whether the student had to be migrated.
    func rebuildReporting(_ record: StudentRecord) async throws -> (live: LiveStudent<M>, migrated: Bool) {
        do {
            return (try await replayRebuild(record), false)
        } catch let mismatch as RebuildMismatch {
            return (try await migrate(record, reason: mismatch.reason), true)
        }
    }

    /// The exact rebuild; `RebuildMismatch` when the stored history does not replay here.
    private func replayRebuild(_ record: StudentRecord) async throws -> LiveStudent<M> {
        let id = record.studentID
        var session: SwipeSession<M>
        let from: Int
        var snapshotHistory = 0
        do {
            if let data = record.snapshot, record.snapshotVersion >= record.profileVersion {
                let snapshot = try SessionSnapshot<M.Profile>.decode(json: data, source: "stored snapshot")
                session = try engine(for: id).restore(snapshot)
                from = record.snapshotVersion
                snapshotHistory = session.served.count + session.totalSwipes
            } else {
                let profile = try M.decodeProfile(json: record.profile, source: "stored profile")
                session = try engine(for: id).session(studentID: id, profile: profile, seed: seed(id, record.profileVersion))
                for event in try await allEvents(id, after: 0, through: record.profileVersion - 1, kinds: [.swipe, .save]) {
                    try carryOver(event, into: &session)
                }
                from = record.profileVersion
            }
        } catch let error as APIError {
            throw error  // the store failed: not a question of fit
        } catch let error as DataError {
            throw RebuildMismatch(reason: error.description)
        } catch {
            throw RebuildMismatch(reason: "\(error)")
        }
        for event in try await allEvents(id, after: from, through: record.version, kinds: nil) {
            do {
                try replay(event, into: &session)
            } catch {
                throw RebuildMismatch(reason: "event \(event.seq) (\(event.kind)): \(error)")
            }
        }
        return LiveStudent(session: session, record: record, snapshotHistory: snapshotHistory)
    }

    func allEvents(_ studentID: String, after: Int, through: Int, kinds: Set<EventKind>?) async throws -> [StoredEvent] {
        var out: [StoredEvent] = []
        var cursor = after
        while cursor < through {
            let page = try await storeCall { try await self.store.events(of: studentID, after: cursor, kinds: kinds, limit: 1_000) }
            for e in page where e.seq <= through { out.append(e) }
            guard page.count == 1_000, let last = page.last else { break }
            cursor = last.seq
        }
        return out
    }

    /// A past swipe or save, judged again under a new profile.
    private func carryOver(_ event: StoredEvent, into session: inout SwipeSession<M>) throws {
        switch event.kind {
        case .swipe:
            let swipe = try JSONDecoder().decode(SwipeRequest.self, from: event.payload).swipe
            _ = try session.recordJudgement(swipe, weight: 1)
        case .save:
            let save = try JSONDecoder().decode(SavePayload.self, from: event.payload)
            _ = try session.recordJudgement(save.judgement, weight: options.saveWeight)
        default:
            break
        }
    }

    private func replay(_ event: StoredEvent, into session: inout SwipeSession<M>) throws {
        switch event.kind {
        case .served:
            let deck = try JSONDecoder().decode(ServedPayload.self, from: event.payload)
            let response = session.recommendations(count: deck.count)
            let ids = response.recommendations.map(\.item.id)
            guard ids == deck.cards.map(\.cardID) else {
                throw StoreError("deck \(event.seq) replays as \(ids.prefix(3)), stored \(deck.cards.prefix(3).map(\.cardID))")
            }
        case .swipe:
            let swipe = try JSONDecoder().decode(SwipeRequest.self, from: event.payload).swipe
            // As it was recorded: on its served card, or organic (the same state decides the same way).
            guard try session.recordOrganicSwipe(swipe).result.outcome == .recorded else {
                throw StoreError("swipe \(event.seq) is a duplicate")
            }
        case .feedback:
            let answer = try JSONDecoder().decode(FeedbackPayload.self, from: event.payload)
            try session.submitFeedback(cardID: answer.itemID, options: answer.options)
        case .save:
            let save = try JSONDecoder().decode(SavePayload.self, from: event.payload)
            guard try session.recordJudgement(save.judgement, weight: options.saveWeight).outcome == .recorded else {
                throw StoreError("save \(event.seq) is a duplicate")
            }
        default:
            throw StoreError("event \(event.seq) has kind \(event.kind), which this version cannot replay")
        }
    }

    /// The seed of a profile's session: fixed by the student and the version that set it, so a
    /// rebuild draws the same probes.
    func seed(_ studentID: String, _ version: Int) -> UInt64 {
        let digest = SHA256.hash(data: Data("\(studentID)\u{0}\(version)".utf8))
        return digest.prefix(8).reduce(0) { ($0 << 8) | UInt64($1) }
    }

    /// Store failures become a 500 (logged); nothing about them reaches the client.
    func storeCall<T>(_ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch let error as StoreError {
            logger.error("store failure", metadata: ["error": "\(error.message)"])
            throw APIError.server
        }
    }
}

/// Writes snapshots after the requests that made them due, at most `limit` at once: each is
/// encoded from a copy of the session as it was then (a value: later requests do not change it)
/// and stored with `StudentStore.saveSnapshot`, which keeps only a snapshot of the same student,
/// of a version its log reaches, newer than the stored one.
final class SnapshotWriter<M: ServableMatcher>: Sendable {
    private let store: any StudentStore
    private let limit: Int
    private let logger: Logger
    private let inFlight = Mutex(0)

    init(store: any StudentStore, limit: Int, logger: Logger) {
        self.store = store
        self.limit = limit
        self.logger = logger
    }

    /// Starts writing `session`'s snapshot, taken at `version`, unless `limit` are under way.
    ///
    /// - Returns: Whether the write started.
    func submit(_ session: SwipeSession<M>, studentID: String, version: Int, createdAt: Int64) -> Bool {
        guard inFlight.withLock({ n -> Bool in
            guard n < limit else { return false }
            n += 1
            return true
        }) else { return false }
        let (store, logger) = (self.store, self.logger)
        Task.detached(priority: .utility) { [self] in
            defer { inFlight.withLock { $0 -= 1 } }
            do {
                _ = try await store.saveSnapshot(session.snapshot().jsonData(), for: studentID, version: version, createdAt: createdAt)
            } catch {
                // Not fatal: the log has every event; a rebuild replays more of them.
                logger.warning("a snapshot was not stored", metadata: ["student": "\(studentID)", "error": "\(error)"])
            }
        }
        return true
    }

    /// Waits (at most `timeout`) until no write is under way: for tests and shutdown.
    func drain(timeout: Duration = .seconds(30)) async {
        let deadline = ContinuousClock.now + timeout
        while inFlight.withLock({ $0 }) > 0, ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(1))
        }
    }
}

/// The payload of a `served` event: what was asked and what came out, card by card (the
/// impression log: position, band, probe, propensity, predicted match).
struct ServedPayload: Codable, Sendable {
    struct Card: Codable, Sendable {
        var cardID: String
        var position: Int
        var band: String?
        var isProbe: Bool
        var propensity: Double
        var predictedMatch: Double

        enum CodingKeys: String, CodingKey {
            case cardID = "card_id", position, band, isProbe = "is_probe", propensity, predictedMatch = "predicted_match"
        }
    }

    var count: Int
    var preload: Bool
    var cards: [Card]
    /// `SwipeEngine.modelVersion` of the engine that served the deck (absent in older logs).
    var modelVersion: String?
    /// The experiment arm that served it (absent without an experiment).
    var arm: String?

    enum CodingKeys: String, CodingKey { case count, preload, cards, modelVersion = "model_version", arm }
}

/// The payload of a `feedback` event.
struct FeedbackPayload: Codable, Sendable {
    var itemID: String
    var options: [FeedbackOption]

    enum CodingKeys: String, CodingKey { case itemID = "school_id", options }
}

/// The payload of a `save` event.
struct SavePayload: Codable, Sendable {
    var itemID: String
    var timestamp: Int64

    enum CodingKeys: String, CodingKey { case itemID = "school_id", timestamp }

    /// The engine's view: a like on the card, with an id no client id can take.
    var judgement: Swipe { Swipe(swipeID: "/save/\(itemID)", cardID: itemID, action: .like, timestamp: timestamp) }
}
