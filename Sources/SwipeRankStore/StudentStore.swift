import Foundation

/// Where the service keeps each student: the current profile, an append-only log of events
/// (profile changes, served decks, swipes, feedback answers, saves) and now and then a session
/// snapshot that shortens the replay.
///
/// The log is the truth. A live session is rebuilt by restoring the latest snapshot and
/// replaying the events after it through the engine, which is deterministic; an in-memory
/// session is only a cache of that. Every append names the version it read
/// (`expectedVersion`): two writers that read the same version cannot both append, which is
/// what keeps several server instances on one database from losing an update.
///
/// Implementations: `SQLiteStore` (embedded, one instance) and `MemoryStore` (tests). Every
/// implementation must pass the same conformance suite.
public protocol StudentStore: Sendable {
    /// The student's record, or nil if the student has none (never created, or erased).
    ///
    /// - Parameter studentID: The student.
    /// - Throws: `StoreError` if the store cannot be read.
    func student(_ studentID: String) async throws(StoreError) -> StudentRecord?

    /// The student's version alone (`StudentRecord.version`), or nil without a record: what a
    /// cached session is checked against with several instances, once per read — without the
    /// profile and the snapshot (tens of KB) that `student(_:)` reads. The default reads the
    /// record.
    ///
    /// - Parameter studentID: The student.
    /// - Throws: `StoreError` if the store cannot be read.
    func studentVersion(_ studentID: String) async throws(StoreError) -> Int?

    /// The student's events with `seq > after`, ascending, at most `limit`, optionally only of
    /// some kinds.
    ///
    /// - Parameters:
    ///   - studentID: The student.
    ///   - after: Exclusive lower bound on `seq` (0: from the start).
    ///   - kinds: The kinds wanted; nil for all.
    ///   - limit: The most events returned (≥ 1).
    /// - Throws: `StoreError` if the store cannot be read.
    func events(of studentID: String, after: Int, kinds: Set<EventKind>?, limit: Int) async throws(StoreError) -> [StoredEvent]

    /// The event a client id already produced, if any (the idempotency lookup).
    ///
    /// - Parameters:
    ///   - studentID: The student.
    ///   - kind: The event kind (client ids are unique per student and kind).
    ///   - clientID: The client's id (a swipe id, a save id).
    /// - Throws: `StoreError` if the store cannot be read.
    func event(of studentID: String, kind: EventKind, clientID: String) async throws(StoreError) -> StoredEvent?

    /// Appends events atomically, if the student is still at `expectedVersion`.
    ///
    /// The events get `seq` = expectedVersion + 1, + 2, … (their own `seq` is ignored). With
    /// `expectedVersion` 0 the student is created (and must not exist). In the same
    /// transaction the student's profile (when `update.profile` is set, from the event that
    /// carries it) and snapshot (when `update.snapshot` is set) are replaced.
    ///
    /// - Parameters:
    ///   - events: One or more events.
    ///   - studentID: The student.
    ///   - expectedVersion: The version the caller read.
    ///   - update: Profile and snapshot changes that go with the events.
    /// - Returns: The new version, or `.conflict` when another writer got there first (the
    ///   version moved, or a client id is already taken); nothing is written then.
    /// - Throws: `StoreError` if the store cannot be written; nothing is written then.
    func append(_ events: [StoredEvent], to studentID: String, expectedVersion: Int,
                update: StudentUpdate) async throws(StoreError) -> AppendOutcome

    /// Stores `data` as the student's snapshot at `version`, outside any append: a snapshot
    /// only shortens rebuilds (the log is the truth), so a service may write it after answering.
    ///
    /// It is stored only if the student is the same one the caller read (`createdAt`: not
    /// erased and created again), the log reaches `version`, the profile was set at or before
    /// `version`, and no snapshot later than `version` is stored; otherwise nothing changes.
    /// One at the same version is replaced: two engines on the same catalog and model write the
    /// same bytes for it, and a student migrated to a new catalog or model needs the new one.
    ///
    /// - Parameters:
    ///   - data: The snapshot.
    ///   - studentID: The student.
    ///   - version: The version the snapshot was taken at.
    ///   - createdAt: The student's `createdAt` as read.
    /// - Returns: Whether it was stored.
    /// - Throws: `StoreError` if the store cannot be written.
    func saveSnapshot(_ data: Data, for studentID: String, version: Int, createdAt: Int64) async throws(StoreError) -> Bool

    /// Erases the student: the record and every event.
    ///
    /// - Parameter studentID: The student.
    /// - Returns: Whether there was anything to erase.
    /// - Throws: `StoreError` if the store cannot be written.
    func deleteStudent(_ studentID: String) async throws(StoreError) -> Bool

    /// Student ids in byte order, after `after` (nil: from the first): for exports that walk
    /// every student.
    ///
    /// - Parameters:
    ///   - after: Exclusive lower bound.
    ///   - limit: At most this many.
    /// - Throws: `StoreError` when the store fails.
    func studentIDs(after: String?, limit: Int) async throws(StoreError) -> [String]

    /// Checks that the store answers (readiness).
    ///
    /// - Throws: `StoreError` when it does not.
    func ping() async throws(StoreError)
}

/// A student's row: the current profile and where the log stands.
public struct StudentRecord: Sendable, Hashable {
    /// The student's id (the token's subject).
    public var studentID: String
    /// The current profile, as JSON.
    public var profile: Data
    /// The seq of the last event (the student's version).
    public var version: Int
    /// The seq of the event that set the current profile.
    public var profileVersion: Int
    /// The latest session snapshot (JSON), if one was stored.
    public var snapshot: Data?
    /// The version the snapshot was taken at (0 without one).
    public var snapshotVersion: Int
    /// When the student was created (Unix milliseconds).
    public var createdAt: Int64
    /// When the student last changed (Unix milliseconds).
    public var updatedAt: Int64

    /// Creates a record.
    ///
    /// - Parameters:
    ///   - studentID: The student.
    ///   - profile: Profile JSON.
    ///   - version: Last event seq.
    ///   - profileVersion: The seq of the profile's event.
    ///   - snapshot: Snapshot JSON, if any.
    ///   - snapshotVersion: Its version.
    ///   - createdAt: Creation time (Unix ms).
    ///   - updatedAt: Last change (Unix ms).
    public init(studentID: String, profile: Data, version: Int, profileVersion: Int, snapshot: Data?,
                snapshotVersion: Int, createdAt: Int64, updatedAt: Int64) {
        self.studentID = studentID
        self.profile = profile
        self.version = version
        self.profileVersion = profileVersion
        self.snapshot = snapshot
        self.snapshotVersion = snapshotVersion
        self.createdAt = createdAt
        self.updatedAt = updatedAt
    }
}

/// What an event records.
public struct EventKind: RawRepresentable, Sendable, Hashable, Codable, CustomStringConvertible {
    /// The stored name.
    public let rawValue: String

    /// Wraps a stored name (unknown names are kept, so a newer writer's events still load).
    ///
    /// - Parameter rawValue: The name.
    public init(rawValue: String) { self.rawValue = rawValue }

    /// The profile was set or replaced (payload: the profile JSON).
    public static let profile = EventKind(rawValue: "profile")
    /// A deck was served (payload: the count asked and the card ids served, in order).
    public static let served = EventKind(rawValue: "served")
    /// A swipe (payload: the swipe).
    public static let swipe = EventKind(rawValue: "swipe")
    /// An answer to a feedback prompt (payload: card id and options).
    public static let feedback = EventKind(rawValue: "feedback")
    /// A saved card, a strong like (payload: the save).
    public static let save = EventKind(rawValue: "save")

    /// The stored name.
    public var description: String { rawValue }
}

/// One entry of a student's log.
public struct StoredEvent: Sendable, Hashable {
    /// Position in the student's log, from 1 (assigned by `append`).
    public var seq: Int
    /// What happened.
    public var kind: EventKind
    /// The client's id for the write (swipe id, save id), unique per student and kind.
    public var clientID: String?
    /// A digest of the request that produced it: a retry with the same client id must carry
    /// the same request.
    public var requestDigest: String?
    /// What replaying the event needs (JSON).
    public var payload: Data
    /// The response the client got (JSON), returned again to a retry.
    public var response: Data?
    /// When it was stored (Unix milliseconds).
    public var createdAt: Int64

    /// Creates an event.
    ///
    /// - Parameters:
    ///   - seq: Position (ignored by `append`, which assigns it).
    ///   - kind: What happened.
    ///   - clientID: The client's id, if the write had one.
    ///   - requestDigest: Digest of the request.
    ///   - payload: Replay data.
    ///   - response: The response sent.
    ///   - createdAt: Unix milliseconds.
    public init(seq: Int = 0, kind: EventKind, clientID: String? = nil, requestDigest: String? = nil, payload: Data,
                response: Data? = nil, createdAt: Int64) {
        self.seq = seq
        self.kind = kind
        self.clientID = clientID
        self.requestDigest = requestDigest
        self.payload = payload
        self.response = response
        self.createdAt = createdAt
    }
}

/// Changes to the student's row that go with appended events.
public struct StudentUpdate: Sendable, Hashable {
    /// The new profile JSON (the appended event carrying it becomes `profileVersion`: the
    /// first event of kind `.profile` in the batch).
    public var profile: Data?
    /// A snapshot taken after the appended events (its version is the new version).
    public var snapshot: Data?

    /// Creates an update.
    ///
    /// - Parameters:
    ///   - profile: New profile JSON, or nil.
    ///   - snapshot: Snapshot after the events, or nil.
    public init(profile: Data? = nil, snapshot: Data? = nil) {
        self.profile = profile
        self.snapshot = snapshot
    }
}

/// The result of `StudentStore.append`.
public enum AppendOutcome: Sendable, Hashable {
    /// Written; the student's new version.
    case appended(version: Int)
    /// Another writer moved the student first (or took a client id); nothing written.
    case conflict
}

/// A failure of the store itself (not of the data asked for).
public struct StoreError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What went wrong, for logs (never sent to clients: it may name files or SQL).
    public let message: String

    /// Creates an error.
    ///
    /// - Parameter message: For logs.
    public init(_ message: String) { self.message = message }

    /// The message.
    public var description: String { message }
}

extension StudentStore {
    /// See `StudentStore.studentVersion(_:)`: the record's version.
    ///
    /// - Parameter studentID: The student.
    public func studentVersion(_ studentID: String) async throws(StoreError) -> Int? {
        try await student(studentID)?.version
    }
}
