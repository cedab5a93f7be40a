import Foundation
import GRDB
import Synchronization

/// The embedded store: one SQLite file in WAL mode (readers never wait for the writer).
///
/// Durability (`Durability`): with `.normal` (the default) a committed transaction is in the
/// write-ahead log before the call returns, so it survives the process being killed (kill -9,
/// a crash); a power loss or kernel crash may lose the last transactions since the log was
/// last synced, but never corrupts the file. `.full` syncs the log on every commit and also
/// survives power loss, at the cost of one fsync per write. Checkpoints (copying the log into
/// the database file) run on a thread of their own, not inside commits (`CheckpointPolicy`).
public final class SQLiteStore: StudentStore {
    /// How hard a commit waits for the disk.
    public enum Durability: String, Sendable, CaseIterable {
        /// `PRAGMA synchronous = NORMAL`: survives a killed process, not a power loss.
        case normal
        /// `PRAGMA synchronous = FULL`: survives a power loss.
        case full
    }

    let pool: DatabasePool
    private let batcher: GroupCommit<PendingAppend, Result<AppendOutcome, StoreError>>
    let checkpointer: WALCheckpointer
    /// Jobs this process runs (`withExclusiveJob`).
    let jobClaims = JobClaims()
    /// The database file.
    public let path: String

    /// Opens (creating and migrating if needed) the database at `path`.
    ///
    /// - Parameters:
    ///   - path: The SQLite file.
    ///   - durability: Commit durability.
    ///   - checkpoints: When the write-ahead log is copied into the database file.
    /// - Throws: `StoreError` if the file cannot be opened or migrated (another program's
    ///   file, a newer schema, no permission).
    public init(path: String, durability: Durability = .normal, checkpoints: CheckpointPolicy = CheckpointPolicy()) throws(StoreError) {
        self.path = path
        var configuration = Configuration()
        configuration.foreignKeysEnabled = true
        configuration.busyMode = .timeout(5)
        configuration.prepareDatabase { db in
            // The checkpointer thread does this work, off the commit path.
            try db.execute(sql: "PRAGMA wal_autocheckpoint = 0")
        }
        do {
            pool = try DatabasePool(path: path, configuration: configuration)
            // Only the writer commits, so only its setting matters; and it is set here, after
            // the pool exists, because a pool sets `synchronous = NORMAL` on its writer after
            // `prepareDatabase` has run (GRDB's WAL set-up), which silently undid FULL.
            try pool.writeWithoutTransaction { db in
                try db.execute(sql: "PRAGMA synchronous = \(durability == .full ? "FULL" : "NORMAL")")
            }
            try Self.migrator.migrate(pool)
            checkpointer = try WALCheckpointer(pool: pool, path: path, policy: checkpoints)
        } catch {
            throw StoreError("cannot open the SQLite store at \(path): \(error)")
        }
        let pool = self.pool
        batcher = GroupCommit(maxBatch: 256) { batch in await Self.commit(batch, pool: pool) }
    }

    deinit {
        checkpointer.stop()
    }

    /// The writer connection's `PRAGMA synchronous` (1 NORMAL, 2 FULL): what commits do.
    var writerSynchronous: Int {
        get throws { try pool.writeWithoutTransaction { db in try Int.fetchOne(db, sql: "PRAGMA synchronous") ?? -1 } }
    }

    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1: students and their event log") { db in
            try db.execute(sql: """
                CREATE TABLE students (
                    student_id TEXT PRIMARY KEY NOT NULL,
                    profile BLOB NOT NULL,
                    version INTEGER NOT NULL,
                    profile_version INTEGER NOT NULL,
                    snapshot BLOB,
                    snapshot_version INTEGER NOT NULL DEFAULT 0,
                    created_at INTEGER NOT NULL,
                    updated_at INTEGER NOT NULL
                );
                CREATE TABLE events (
                    student_id TEXT NOT NULL REFERENCES students(student_id) ON DELETE CASCADE,
                    seq INTEGER NOT NULL,
                    kind TEXT NOT NULL,
                    client_id TEXT,
                    request_digest TEXT,
                    payload BLOB NOT NULL,
                    response BLOB,
                    created_at INTEGER NOT NULL,
                    PRIMARY KEY (student_id, seq)
                ) WITHOUT ROWID;
                CREATE UNIQUE INDEX events_by_client_id ON events(student_id, kind, client_id) WHERE client_id IS NOT NULL;
                """)
        }
        // SQLite rewrites a whole row on UPDATE, overflow pages included: with the snapshot in
        // the student's row every append (which bumps the version) copied the snapshot again.
        migrator.registerMigration("v2: snapshots in their own table") { db in
            try db.execute(sql: """
                CREATE TABLE snapshots (
                    student_id TEXT PRIMARY KEY NOT NULL REFERENCES students(student_id) ON DELETE CASCADE,
                    version INTEGER NOT NULL,
                    data BLOB NOT NULL
                );
                INSERT INTO snapshots (student_id, version, data)
                    SELECT student_id, snapshot_version, snapshot FROM students WHERE snapshot IS NOT NULL;
                ALTER TABLE students DROP COLUMN snapshot;
                ALTER TABLE students DROP COLUMN snapshot_version;
                """)
        }
        migrator.registerMigration("v3: group sessions") { db in
            try db.execute(sql: """
                CREATE TABLE groups (
                    group_id TEXT PRIMARY KEY NOT NULL,
                    invite_code TEXT NOT NULL UNIQUE,
                    creator_id TEXT NOT NULL,
                    status TEXT NOT NULL,
                    state BLOB NOT NULL,
                    version INTEGER NOT NULL,
                    created_at INTEGER NOT NULL,
                    updated_at INTEGER NOT NULL
                );
                CREATE TABLE group_members (
                    group_id TEXT NOT NULL REFERENCES groups(group_id) ON DELETE CASCADE,
                    student_id TEXT NOT NULL,
                    PRIMARY KEY (group_id, student_id)
                ) WITHOUT ROWID;
                CREATE INDEX group_members_by_student ON group_members(student_id);
                """)
        }
        migrator.registerMigration("v4: app events") { db in
            try db.execute(sql: """
                CREATE TABLE app_events (
                    student_id TEXT NOT NULL,
                    seq INTEGER NOT NULL,
                    event_id TEXT NOT NULL,
                    type TEXT NOT NULL,
                    payload TEXT NOT NULL,
                    occurred_at INTEGER NOT NULL,
                    received_at INTEGER NOT NULL,
                    PRIMARY KEY (student_id, seq)
                ) WITHOUT ROWID;
                CREATE UNIQUE INDEX app_events_by_id ON app_events(student_id, event_id);
                CREATE INDEX app_events_by_time ON app_events(received_at);
                """)
        }
        // Appends wrote ~5 pages (20 KiB of log) each: a served deck's ~1.2 KB row overflowed
        // the WITHOUT ROWID leaf (rows past ~1 KB spill a page), filled a leaf every ~3 rows (a
        // split every few appends), and the student's row was rewritten for its version. Now
        // the log is a rowid table, so appends go to its last page and rows up to ~4 KB stay
        // inline, found by a small (student, seq) index; and the version and the time of the
        // last change are read from the log (its last event) instead of stored beside it.
        migrator.registerMigration("v5: the event log appended at the end; versions read from it") { db in
            try db.execute(sql: """
                CREATE TABLE events_log (
                    id INTEGER PRIMARY KEY,
                    student_id TEXT NOT NULL REFERENCES students(student_id) ON DELETE CASCADE,
                    seq INTEGER NOT NULL,
                    kind TEXT NOT NULL,
                    client_id TEXT,
                    request_digest TEXT,
                    payload BLOB NOT NULL,
                    response BLOB,
                    created_at INTEGER NOT NULL
                );
                INSERT INTO events_log (student_id, seq, kind, client_id, request_digest, payload, response, created_at)
                    SELECT student_id, seq, kind, client_id, request_digest, payload, response, created_at
                    FROM events ORDER BY student_id, seq;
                DROP TABLE events;
                ALTER TABLE events_log RENAME TO events;
                CREATE UNIQUE INDEX events_by_seq ON events(student_id, seq);
                CREATE UNIQUE INDEX events_by_client_id ON events(student_id, kind, client_id) WHERE client_id IS NOT NULL;
                ALTER TABLE students DROP COLUMN version;
                ALTER TABLE students DROP COLUMN updated_at;
                """)
        }
        migrator.registerMigration("v6: the catalog's change log (item API)") { db in
            try db.execute(sql: """
                CREATE TABLE catalog_changes (
                    seq INTEGER PRIMARY KEY,
                    item_id TEXT NOT NULL,
                    fields BLOB,
                    created_at INTEGER NOT NULL
                )
                """)
        }
        migrator.registerMigration("v7: the webhook outbox") { db in
            try db.execute(sql: """
                CREATE TABLE webhook_deliveries (
                    id TEXT PRIMARY KEY,
                    event TEXT NOT NULL,
                    payload BLOB NOT NULL,
                    status TEXT NOT NULL,
                    attempts INTEGER NOT NULL,
                    next_attempt_at INTEGER NOT NULL,
                    last_status INTEGER,
                    last_error TEXT,
                    created_at INTEGER NOT NULL,
                    delivered_at INTEGER
                );
                CREATE INDEX webhook_due ON webhook_deliveries(status, next_attempt_at);
                CREATE INDEX webhook_by_time ON webhook_deliveries(created_at);
                """)
        }
        migrator.registerMigration("v8: fitted models") { db in
            try db.execute(sql: """
                CREATE TABLE models (
                    kind TEXT NOT NULL,
                    version INTEGER NOT NULL,
                    data BLOB NOT NULL,
                    created_at INTEGER NOT NULL,
                    PRIMARY KEY (kind, version)
                )
                """)
        }
        return migrator
    }

    /// See `StudentStore.student(_:)`.
    ///
    /// - Parameter studentID: The student.
    public func student(_ studentID: String) async throws(StoreError) -> StudentRecord? {
        try await read { db in
            // The version and the time of the last change are the log's last event's.
            guard let row = try Row.fetchOne(db.cachedStatement(sql: """
                SELECT s.student_id, s.profile, e.seq AS version, s.profile_version, s.created_at, e.created_at AS updated_at,
                       n.data AS snapshot, n.version AS snapshot_version
                FROM students s
                LEFT JOIN events e ON e.student_id = s.student_id
                    AND e.seq = (SELECT MAX(seq) FROM events WHERE student_id = s.student_id)
                LEFT JOIN snapshots n ON n.student_id = s.student_id
                WHERE s.student_id = ?
                """), arguments: [studentID]) else {
                return nil
            }
            let createdAt: Int64 = row["created_at"]
            return StudentRecord(studentID: row["student_id"], profile: row["profile"], version: row["version"] ?? 0,
                                 profileVersion: row["profile_version"], snapshot: row["snapshot"],
                                 snapshotVersion: row["snapshot_version"] ?? 0, createdAt: createdAt,
                                 updatedAt: row["updated_at"] ?? createdAt)
        }
    }

    /// See `StudentStore.studentVersion(_:)`: the log's last event's sequence number.
    ///
    /// - Parameter studentID: The student.
    public func studentVersion(_ studentID: String) async throws(StoreError) -> Int? {
        try await read { db in
            guard let row = try Row.fetchOne(db.cachedStatement(sql: """
                SELECT (SELECT MAX(seq) FROM events WHERE student_id = s.student_id) AS version
                FROM students s WHERE s.student_id = ?
                """), arguments: [studentID]) else {
                return nil
            }
            let version: Int? = row["version"]
            return version ?? 0
        }
    }

    /// See `StudentStore.events(of:after:kinds:limit:)`.
    ///
    /// - Parameters:
    ///   - studentID: The student.
    ///   - after: Exclusive lower bound.
    ///   - kinds: Kinds wanted, nil for all.
    ///   - limit: At most this many.
    public func events(of studentID: String, after: Int, kinds: Set<EventKind>?, limit: Int) async throws(StoreError) -> [StoredEvent] {
        try await read { db in
            var sql = "SELECT * FROM events WHERE student_id = ? AND seq > ?"
            var arguments: StatementArguments = [studentID, after]
            if let kinds {
                guard !kinds.isEmpty else { return [] }
                sql += " AND kind IN (\(kinds.map { _ in "?" }.joined(separator: ",")))"
                for kind in kinds.sorted(by: { $0.rawValue < $1.rawValue }) { _ = arguments.append(contentsOf: [kind.rawValue]) }
            }
            sql += " ORDER BY seq LIMIT ?"
            _ = arguments.append(contentsOf: [max(1, limit)])
            return try Row.fetchAll(db, sql: sql, arguments: arguments).map(Self.event(row:))
        }
    }

    /// See `StudentStore.event(of:kind:clientID:)`.
    ///
    /// - Parameters:
    ///   - studentID: The student.
    ///   - kind: The kind.
    ///   - clientID: The client id.
    public func event(of studentID: String, kind: EventKind, clientID: String) async throws(StoreError) -> StoredEvent? {
        try await read { db in
            try Row.fetchOne(db.cachedStatement(sql: "SELECT * FROM events WHERE student_id = ? AND kind = ? AND client_id = ?"),
                             arguments: [studentID, kind.rawValue, clientID]).map(Self.event(row:))
        }
    }

    /// See `StudentStore.append(_:to:expectedVersion:update:)`.
    ///
    /// Group commit: an append that arrives while a transaction is running waits, and the next
    /// transaction takes every waiting append (each in its own savepoint, so a conflict or a
    /// failure rolls back only its own append). Concurrent appends then share one commit — one
    /// pass over the write-ahead log, one fsync with `.full` — instead of queueing for one each.
    ///
    /// - Parameters:
    ///   - events: The events.
    ///   - studentID: The student.
    ///   - expectedVersion: The version read.
    ///   - update: Profile and snapshot changes.
    public func append(_ events: [StoredEvent], to studentID: String, expectedVersion: Int,
                       update: StudentUpdate) async throws(StoreError) -> AppendOutcome {
        precondition(!events.isEmpty, "append needs at least one event")
        let result = await batcher.submit(PendingAppend(events: events, studentID: studentID,
                                                        expectedVersion: expectedVersion, update: update))
        return try result.get()
    }

    /// Runs one batch of appends in one transaction.
    private static func commit(_ batch: [PendingAppend], pool: DatabasePool) async -> [Result<AppendOutcome, StoreError>] {
        do {
            return try await pool.write { db in
                try batch.map { append in
                    var outcome: Result<AppendOutcome, StoreError> = .success(.conflict)
                    try db.inSavepoint {
                        do {
                            outcome = .success(try apply(append, db))
                            return .commit
                        } catch is ConflictSignal {
                            outcome = .success(.conflict)
                        } catch {
                            outcome = .failure(StoreError("append for a student failed: \(error)"))
                        }
                        return .rollback
                    }
                    return outcome
                }
            }
        } catch {
            // The transaction itself failed (BEGIN or COMMIT): nothing of the batch is written.
            return Array(repeating: .failure(StoreError("append for a student failed: \(error)")), count: batch.count)
        }
    }

    /// One append, inside its savepoint. A stale version or a taken client id throws
    /// `ConflictSignal` (the savepoint is rolled back).
    private static func apply(_ append: PendingAppend, _ db: Database) throws -> AppendOutcome {
        let (events, studentID, expectedVersion, update) = (append.events, append.studentID, append.expectedVersion, append.update)
        // The version is the log's last seq (0 for a student without events).
        let current = try Row.fetchOne(db.cachedStatement(sql: """
            SELECT (SELECT MAX(seq) FROM events WHERE student_id = s.student_id) AS version FROM students s WHERE s.student_id = ?
            """), arguments: [studentID]).map { ($0["version"] as Int?) ?? 0 }
        switch current {
        case nil:
            guard expectedVersion == 0, let profile = update.profile else { throw ConflictSignal() }
            try db.cachedStatement(sql: """
                INSERT INTO students (student_id, profile, profile_version, created_at) VALUES (?, ?, 0, ?)
                """).execute(arguments: [studentID, profile, events[0].createdAt])
        case let version?:
            guard version == expectedVersion else { throw ConflictSignal() }
        }
        var version = expectedVersion
        var profileVersion: Int?
        let insert = try db.cachedStatement(sql: """
            INSERT INTO events (student_id, seq, kind, client_id, request_digest, payload, response, created_at)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?)
            """)
        for e in events {
            version += 1
            if e.kind == .profile && profileVersion == nil { profileVersion = version }
            do {
                try insert.execute(arguments: [studentID, version, e.kind.rawValue, e.clientID, e.requestDigest, e.payload,
                                               e.response, e.createdAt])
            } catch let error as DatabaseError where error.resultCode == .SQLITE_CONSTRAINT {
                // A client id already taken: roll the whole append back.
                throw ConflictSignal()
            }
        }
        if let profile = update.profile {
            try db.cachedStatement(sql: "UPDATE students SET profile = ?, profile_version = ? WHERE student_id = ?")
                .execute(arguments: [profile, profileVersion ?? version, studentID])
        }
        if let snapshot = update.snapshot {
            try db.cachedStatement(sql: """
                INSERT INTO snapshots (student_id, version, data) VALUES (?, ?, ?)
                ON CONFLICT (student_id) DO UPDATE SET version = excluded.version, data = excluded.data
                """).execute(arguments: [studentID, version, snapshot])
        }
        return .appended(version: version)
    }

    private struct ConflictSignal: Error {}

    /// See `StudentStore.saveSnapshot(_:for:version:createdAt:)`: its own short transaction, not
    /// part of a group commit (appends never wait for a snapshot's pages).
    ///
    /// - Parameters:
    ///   - data: The snapshot.
    ///   - studentID: The student.
    ///   - version: Its version.
    ///   - createdAt: The student's creation time as read.
    public func saveSnapshot(_ data: Data, for studentID: String, version: Int, createdAt: Int64) async throws(StoreError) -> Bool {
        do {
            return try await pool.write { db in
                try db.execute(sql: """
                    INSERT INTO snapshots (student_id, version, data)
                    SELECT s.student_id, ?, ? FROM students s
                    WHERE s.student_id = ? AND s.created_at = ? AND s.profile_version <= ?
                      AND (SELECT MAX(seq) FROM events WHERE student_id = s.student_id) >= ?
                    ON CONFLICT (student_id) DO UPDATE SET version = excluded.version, data = excluded.data
                    WHERE snapshots.version <= excluded.version
                    """, arguments: [version, data, studentID, createdAt, version, version])
                return db.changesCount > 0
            }
        } catch {
            throw StoreError("saving a snapshot failed: \(error)")
        }
    }

    /// See `StudentStore.deleteStudent(_:)`.
    ///
    /// - Parameter studentID: The student.
    public func deleteStudent(_ studentID: String) async throws(StoreError) -> Bool {
        do {
            return try await pool.write { db in
                try db.execute(sql: "DELETE FROM app_events WHERE student_id = ?", arguments: [studentID])
                let hadEvents = db.changesCount > 0
                try db.execute(sql: "DELETE FROM events WHERE student_id = ?", arguments: [studentID])
                try db.execute(sql: "DELETE FROM snapshots WHERE student_id = ?", arguments: [studentID])
                try db.execute(sql: "DELETE FROM students WHERE student_id = ?", arguments: [studentID])
                return db.changesCount > 0 || hadEvents
            }
        } catch {
            throw StoreError("erasing a student failed: \(error)")
        }
    }

    /// See `StudentStore.studentIDs(after:limit:)`.
    ///
    /// - Parameters:
    ///   - after: Exclusive lower bound.
    ///   - limit: At most this many.
    public func studentIDs(after: String?, limit: Int) async throws(StoreError) -> [String] {
        try await read { db in
            try String.fetchAll(db, sql: "SELECT student_id FROM students WHERE ? IS NULL OR student_id > ? ORDER BY student_id LIMIT ?",
                                arguments: [after, after, max(0, limit)])
        }
    }

    /// Runs a trivial query.
    public func ping() async throws(StoreError) {
        _ = try await read { db in try Int.fetchOne(db, sql: "SELECT 1") }
    }

    private func read<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws(StoreError) -> T {
        do {
            return try await pool.read(body)
        } catch {
            throw StoreError("SQLite read failed: \(error)")
        }
    }

    private static func event(row: Row) -> StoredEvent {
        StoredEvent(seq: row["seq"], kind: EventKind(rawValue: row["kind"]), clientID: row["client_id"],
                    requestDigest: row["request_digest"], payload: row["payload"], response: row["response"],
                    createdAt: row["created_at"])
    }
}

/// An append waiting for the next group commit.
struct PendingAppend: Sendable {
    var events: [StoredEvent]
    var studentID: String
    var expectedVersion: Int
    var update: StudentUpdate
}

extension SQLiteStore: GroupStore {
    /// See `GroupStore.createGroup(_:)`.
    ///
    /// - Parameter group: The group.
    public func createGroup(_ group: GroupRecord) async throws(StoreError) -> Bool {
        do {
            return try await pool.write { db in
                let taken = try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM groups WHERE group_id = ? OR invite_code = ?)",
                                              arguments: [group.groupID, group.inviteCode]) ?? false
                guard !taken else { return false }
                try db.execute(sql: """
                    INSERT INTO groups (group_id, invite_code, creator_id, status, state, version, created_at, updated_at)
                    VALUES (?, ?, ?, ?, ?, 1, ?, ?)
                    """, arguments: [group.groupID, group.inviteCode, group.creatorID, group.status, group.state,
                                    group.createdAt, group.updatedAt])
                try Self.setMembers(group, db)
                return true
            }
        } catch {
            throw StoreError("creating a group failed: \(error)")
        }
    }

    /// See `GroupStore.group(_:)`.
    ///
    /// - Parameter groupID: The id.
    public func group(_ groupID: String) async throws(StoreError) -> GroupRecord? {
        try await read { db in try Self.groups(db, where: "g.group_id = ?", [groupID], limit: 1).first }
    }

    /// See `GroupStore.group(inviteCode:)`.
    ///
    /// - Parameter inviteCode: The code.
    public func group(inviteCode: String) async throws(StoreError) -> GroupRecord? {
        try await read { db in try Self.groups(db, where: "g.invite_code = ?", [inviteCode], limit: 1).first }
    }

    /// See `GroupStore.updateGroup(_:expectedVersion:)`.
    ///
    /// - Parameters:
    ///   - group: The new record.
    ///   - expectedVersion: The version read.
    public func updateGroup(_ group: GroupRecord, expectedVersion: Int) async throws(StoreError) -> AppendOutcome {
        try await updateGroup(group, expectedVersion: expectedVersion, enqueuing: [])
    }

    /// See `GroupStore.groups(ofMember:status:limit:)`.
    ///
    /// - Parameters:
    ///   - studentID: The member.
    ///   - status: A status filter.
    ///   - limit: At most this many.
    public func groups(ofMember studentID: String, status: String?, limit: Int) async throws(StoreError) -> [GroupRecord] {
        try await read { db in
            var condition = "g.group_id IN (SELECT group_id FROM group_members WHERE student_id = ?)"
            var arguments: [any DatabaseValueConvertible] = [studentID]
            if let status {
                condition += " AND g.status = ?"
                arguments.append(status)
            }
            return try Self.groups(db, where: condition, arguments, limit: limit)
        }
    }

    private static func setMembers(_ group: GroupRecord, _ db: Database) throws {
        try db.execute(sql: "DELETE FROM group_members WHERE group_id = ?", arguments: [group.groupID])
        let insert = try db.cachedStatement(sql: "INSERT OR IGNORE INTO group_members (group_id, student_id) VALUES (?, ?)")
        for member in group.members { try insert.execute(arguments: [group.groupID, member]) }
    }

    private static func groups(_ db: Database, where condition: String, _ arguments: [any DatabaseValueConvertible],
                               limit: Int) throws -> [GroupRecord] {
        let rows = try Row.fetchAll(db, sql: """
            SELECT g.* FROM groups g WHERE \(condition) ORDER BY g.created_at DESC, g.group_id DESC LIMIT ?
            """, arguments: StatementArguments(arguments + [max(0, limit)]))
        return try rows.map { row in
            let id: String = row["group_id"]
            let members = try String.fetchAll(db, sql: "SELECT student_id FROM group_members WHERE group_id = ? ORDER BY student_id",
                                              arguments: [id])
            return GroupRecord(groupID: id, inviteCode: row["invite_code"], creatorID: row["creator_id"], status: row["status"],
                               members: members, state: row["state"], version: row["version"], createdAt: row["created_at"],
                               updatedAt: row["updated_at"])
        }
    }
}


extension SQLiteStore: AppEventLog {
    /// See `AppEventLog.appendAppEvents(_:for:)`: one transaction; SQLite's single writer
    /// makes `max(seq) + 1` safe.
    ///
    /// - Parameters:
    ///   - events: The events.
    ///   - studentID: The student.
    public func appendAppEvents(_ events: [AppEvent], for studentID: String) async throws(StoreError) -> Int {
        do {
            return try await pool.write { db in
                var seq = try Int.fetchOne(db, sql: "SELECT COALESCE(MAX(seq), 0) FROM app_events WHERE student_id = ?",
                                           arguments: [studentID]) ?? 0
                let insert = try db.cachedStatement(sql: """
                    INSERT OR IGNORE INTO app_events (student_id, seq, event_id, type, payload, occurred_at, received_at)
                    VALUES (?, ?, ?, ?, ?, ?, ?)
                    """)
                var added = 0
                for e in events {
                    try insert.execute(arguments: [studentID, seq + 1, e.eventID, e.type, e.payload, e.occurredAt, e.receivedAt])
                    if db.changesCount > 0 {
                        seq += 1
                        added += 1
                    }
                }
                return added
            }
        } catch {
            throw StoreError("appending app events failed: \(error)")
        }
    }

    /// See `AppEventLog.appEvents(of:after:limit:)`.
    ///
    /// - Parameters:
    ///   - studentID: The student.
    ///   - after: The cursor.
    ///   - limit: At most this many.
    public func appEvents(of studentID: String, after: Int, limit: Int) async throws(StoreError) -> [AppEvent] {
        try await read { db in
            try Row.fetchAll(db, sql: """
                SELECT seq, event_id, type, payload, occurred_at, received_at FROM app_events
                WHERE student_id = ? AND seq > ? ORDER BY seq LIMIT ?
                """, arguments: [studentID, after, max(0, limit)]).map { row in
                AppEvent(seq: row["seq"], eventID: row["event_id"], type: row["type"], payload: row["payload"],
                         occurredAt: row["occurred_at"], receivedAt: row["received_at"])
            }
        }
    }

    /// See `AppEventLog.purgeAppEvents(receivedBefore:)`.
    ///
    /// - Parameter time: The cut-off.
    public func purgeAppEvents(receivedBefore time: Int64) async throws(StoreError) -> Int {
        do {
            return try await pool.write { db in
                try db.execute(sql: "DELETE FROM app_events WHERE received_at < ?", arguments: [time])
                return db.changesCount
            }
        } catch {
            throw StoreError("purging app events failed: \(error)")
        }
    }
}

extension SQLiteStore: CatalogLog {
    /// See `CatalogLog.catalogSequence()`.
    public func catalogSequence() async throws(StoreError) -> Int {
        try await read { db in try Int.fetchOne(db, sql: "SELECT COALESCE(MAX(seq), 0) FROM catalog_changes") ?? 0 }
    }

    /// See `CatalogLog.catalogChanges(after:limit:)`.
    ///
    /// - Parameters:
    ///   - after: Exclusive lower bound.
    ///   - limit: At most this many.
    public func catalogChanges(after: Int, limit: Int) async throws(StoreError) -> [CatalogChange] {
        let rows = try await read { db in
            try Row.fetchAll(db, sql: "SELECT seq, item_id, fields, created_at FROM catalog_changes WHERE seq > ? ORDER BY seq LIMIT ?",
                             arguments: [after, max(1, limit)]).map { row -> (Int, String, Data?, Int64) in
                (row["seq"], row["item_id"], row["fields"], row["created_at"])
            }
        }
        var out: [CatalogChange] = []
        out.reserveCapacity(rows.count)
        for (seq, id, fields, createdAt) in rows {
            out.append(CatalogChange(seq: seq, itemID: id, fields: try CatalogChange.fields(from: fields), createdAt: createdAt))
        }
        return out
    }

    /// See `CatalogLog.appendCatalogChanges(_:expectedSequence:)`: one transaction.
    ///
    /// - Parameters:
    ///   - changes: The changes.
    ///   - expectedSequence: The sequence the caller read.
    public func appendCatalogChanges(_ changes: [CatalogChange], expectedSequence: Int) async throws(StoreError) -> Int? {
        let encoded = changes.map { ($0.itemID, $0.fieldsJSON, $0.createdAt) }
        do {
            return try await pool.write { db -> Int? in
                let last = try Int.fetchOne(db, sql: "SELECT COALESCE(MAX(seq), 0) FROM catalog_changes") ?? 0
                guard last == expectedSequence else { return nil }
                let insert = try db.cachedStatement(sql: "INSERT INTO catalog_changes (seq, item_id, fields, created_at) VALUES (?, ?, ?, ?)")
                for (i, (id, fields, createdAt)) in encoded.enumerated() {
                    try insert.execute(arguments: [last + i + 1, id, fields, createdAt])
                }
                return last + encoded.count
            }
        } catch {
            throw StoreError("appending catalog changes failed: \(error)")
        }
    }
}

extension SQLiteStore: WebhookOutbox {
    /// See `WebhookOutbox.updateGroup(_:expectedVersion:enqueuing:)`.
    ///
    /// - Parameters:
    ///   - group: The new state.
    ///   - expectedVersion: The version read.
    ///   - deliveries: Stored in the same transaction.
    public func updateGroup(_ group: GroupRecord, expectedVersion: Int, enqueuing deliveries: [WebhookDelivery]) async throws(StoreError)
        -> AppendOutcome {
        do {
            return try await pool.write { db in
                try db.execute(sql: """
                    UPDATE groups SET status = ?, state = ?, version = version + 1, updated_at = ?
                    WHERE group_id = ? AND version = ?
                    """, arguments: [group.status, group.state, group.updatedAt, group.groupID, expectedVersion])
                guard db.changesCount == 1 else { return .conflict }
                try Self.setMembers(group, db)
                for d in deliveries {
                    try db.execute(sql: """
                        INSERT OR IGNORE INTO webhook_deliveries
                            (id, event, payload, status, attempts, next_attempt_at, last_status, last_error, created_at, delivered_at)
                        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                        """, arguments: [d.id, d.event, d.payload, d.status.rawValue, d.attempts, d.nextAttemptAt, d.lastStatus,
                                         d.lastError, d.createdAt, d.deliveredAt])
                }
                return .appended(version: expectedVersion + 1)
            }
        } catch {
            throw StoreError("updating a group failed: \(error)")
        }
    }

    /// See `WebhookOutbox.claimWebhookDeliveries(now:leaseUntil:limit:)`.
    ///
    /// - Parameters:
    ///   - now: The time.
    ///   - leaseUntil: The lease's end.
    ///   - limit: At most this many.
    public func claimWebhookDeliveries(now: Int64, leaseUntil: Int64, limit: Int) async throws(StoreError) -> [WebhookDelivery] {
        do {
            return try await pool.write { db in
                let due = try Row.fetchAll(db, sql: """
                    SELECT \(Self.deliveryColumns) FROM webhook_deliveries
                    WHERE status = 'pending' AND next_attempt_at <= ? ORDER BY next_attempt_at, id LIMIT ?
                    """, arguments: [now, max(0, limit)]).map(Self.delivery)
                for d in due {
                    try db.execute(sql: "UPDATE webhook_deliveries SET next_attempt_at = ? WHERE id = ?", arguments: [leaseUntil, d.id])
                }
                return due.map { var leased = $0; leased.nextAttemptAt = leaseUntil; return leased }
            }
        } catch {
            throw StoreError("claiming webhook deliveries failed: \(error)")
        }
    }

    /// See `WebhookOutbox.recordWebhookAttempt(_:)`.
    ///
    /// - Parameter d: The delivery as it now is.
    public func recordWebhookAttempt(_ d: WebhookDelivery) async throws(StoreError) {
        do {
            try await pool.write { db in
                try db.execute(sql: """
                    UPDATE webhook_deliveries SET status = ?, attempts = ?, next_attempt_at = ?, last_status = ?, last_error = ?,
                        delivered_at = ?
                    WHERE id = ?
                    """, arguments: [d.status.rawValue, d.attempts, d.nextAttemptAt, d.lastStatus, d.lastError, d.deliveredAt, d.id])
            }
        } catch {
            throw StoreError("recording a webhook attempt failed: \(error)")
        }
    }

    /// See `WebhookOutbox.webhookDeliveries(status:limit:)`.
    ///
    /// - Parameters:
    ///   - status: A filter.
    ///   - limit: At most this many.
    public func webhookDeliveries(status: WebhookDelivery.Status?, limit: Int) async throws(StoreError) -> [WebhookDelivery] {
        try await read { db in
            try Row.fetchAll(db, sql: """
                SELECT \(Self.deliveryColumns) FROM webhook_deliveries
                WHERE ? IS NULL OR status = ? ORDER BY created_at DESC, id DESC LIMIT ?
                """, arguments: [status?.rawValue, status?.rawValue, max(0, limit)]).map(Self.delivery)
        }
    }

    static let deliveryColumns = "id, event, payload, status, attempts, next_attempt_at, last_status, last_error, created_at, delivered_at"

    static func delivery(_ row: Row) -> WebhookDelivery {
        WebhookDelivery(id: row["id"], event: row["event"], payload: row["payload"],
                        status: WebhookDelivery.Status(rawValue: row["status"]) ?? .failed, attempts: row["attempts"],
                        nextAttemptAt: row["next_attempt_at"], lastStatus: row["last_status"], lastError: row["last_error"],
                        createdAt: row["created_at"], deliveredAt: row["delivered_at"])
    }
}
