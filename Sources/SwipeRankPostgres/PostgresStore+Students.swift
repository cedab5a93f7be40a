import Foundation
import Logging
import PostgresNIO
import SwipeRankStore

// The student log: records, events, appends under the expected version, snapshots.
extension PostgresStore: StudentStore {
    /// See `StudentStore.student(_:)`.
    ///
    /// - Parameter studentID: The student.
    public func student(_ studentID: String) async throws(StoreError) -> StudentRecord? {
        try await call("reading a student") {
            let rows = try await client.query("""
                SELECT s.student_id, s.profile, s.version, s.profile_version, s.created_at, s.updated_at, n.data, n.version
                FROM students s LEFT JOIN snapshots n ON n.student_id = s.student_id WHERE s.student_id = \(studentID)
                """, logger: logger)
            for try await (id, profile, version, profileVersion, created, updated, snapshot, snapshotVersion)
                in rows.decode((String, Data, Int, Int, Int64, Int64, Data?, Int?).self) {
                return StudentRecord(studentID: id, profile: profile, version: version, profileVersion: profileVersion,
                                     snapshot: snapshot, snapshotVersion: snapshotVersion ?? 0, createdAt: created, updatedAt: updated)
            }
            return nil
        }
    }

    /// See `StudentStore.studentVersion(_:)`: one indexed row, no profile or snapshot.
    ///
    /// - Parameter studentID: The student.
    public func studentVersion(_ studentID: String) async throws(StoreError) -> Int? {
        try await call("reading a student's version") {
            let rows = try await client.query("SELECT version FROM students WHERE student_id = \(studentID)", logger: logger)
            for try await version in rows.decode(Int.self) { return version }
            return nil
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
        if let kinds, kinds.isEmpty { return [] }
        return try await call("reading events") {
            let all = kinds == nil
            let names = (kinds ?? []).map(\.rawValue).sorted()
            let rows = try await client.query("""
                SELECT seq, kind, client_id, request_digest, payload, response, created_at FROM events
                WHERE student_id = \(studentID) AND seq > \(after) AND (\(all) OR kind = ANY(\(names)))
                ORDER BY seq LIMIT \(max(1, limit))
                """, logger: logger)
            return try await Self.events(rows)
        }
    }

    /// See `StudentStore.event(of:kind:clientID:)`.
    ///
    /// - Parameters:
    ///   - studentID: The student.
    ///   - kind: The kind.
    ///   - clientID: The client id.
    public func event(of studentID: String, kind: EventKind, clientID: String) async throws(StoreError) -> StoredEvent? {
        try await call("reading an event") {
            let rows = try await client.query("""
                SELECT seq, kind, client_id, request_digest, payload, response, created_at FROM events
                WHERE student_id = \(studentID) AND kind = \(kind.rawValue) AND client_id = \(clientID)
                """, logger: logger)
            return try await Self.events(rows).first
        }
    }

    private static func events(_ rows: PostgresRowSequence) async throws -> [StoredEvent] {
        var out: [StoredEvent] = []
        for try await (seq, kind, clientID, digest, payload, response, created)
            in rows.decode((Int, String, String?, String?, Data, Data?, Int64).self) {
            out.append(StoredEvent(seq: seq, kind: EventKind(rawValue: kind), clientID: clientID, requestDigest: digest,
                                   payload: payload, response: response, createdAt: created))
        }
        return out
    }

    /// See `StudentStore.append(_:to:expectedVersion:update:)`: one transaction holding the
    /// student's row lock, so concurrent writers — on any instance — are serialized.
    ///
    /// - Parameters:
    ///   - events: The events.
    ///   - studentID: The student.
    ///   - expectedVersion: The version read.
    ///   - update: Profile and snapshot changes.
    public func append(_ events: [StoredEvent], to studentID: String, expectedVersion: Int,
                       update: StudentUpdate) async throws(StoreError) -> AppendOutcome {
        precondition(!events.isEmpty, "append needs at least one event")
        if events.count == 1, expectedVersion > 0, update.profile == nil, update.snapshot == nil {
            return try await appendOne(events[0], to: studentID, expectedVersion: expectedVersion)
        }
        do {
            return try await client.withTransaction(logger: logger) { db in
                try await Self.apply(events, studentID, expectedVersion, update, db, self.logger)
            }
        } catch where Self.cause(error) is ConflictSignal {
            return .conflict  // rolled back: nothing written
        } catch {
            throw Self.wrap("appending for a student", error)
        }
    }

    /// The append almost every request makes — one event (a served deck, a swipe) for a student
    /// who exists, no profile or snapshot change — as one statement: one round trip where the
    /// transaction takes five (BEGIN, the row lock, the insert, the version, COMMIT). A single
    /// statement is atomic by itself: its `FOR UPDATE` takes the student's row lock (a writer
    /// on another instance waits, then sees the new version and inserts nothing), the event is
    /// inserted only at the expected version, and the version moves only if it was.
    private func appendOne(_ e: StoredEvent, to studentID: String, expectedVersion: Int) async throws(StoreError) -> AppendOutcome {
        let next = expectedVersion + 1
        do {
            let rows = try await client.query("""
                WITH current AS (
                    SELECT version FROM students WHERE student_id = \(studentID) FOR UPDATE
                ), appended AS (
                    INSERT INTO events (student_id, seq, kind, client_id, request_digest, payload, response, created_at)
                    SELECT \(studentID), \(next), \(e.kind.rawValue), \(e.clientID), \(e.requestDigest), \(e.payload), \(e.response),
                           \(e.createdAt)
                    FROM current WHERE version = \(expectedVersion)
                    RETURNING seq
                )
                UPDATE students SET version = \(next), updated_at = \(e.createdAt)
                WHERE student_id = \(studentID) AND EXISTS (SELECT 1 FROM appended)
                RETURNING version
                """, logger: logger)
            var written = false
            for try await _ in rows.decode(Int.self) { written = true }
            return written ? .appended(version: next) : .conflict
        } catch where Self.isUniqueViolation(error) {
            return .conflict  // a client id already taken: the statement wrote nothing
        } catch {
            throw Self.wrap("appending for a student", error)
        }
    }

    private static func apply(_ events: [StoredEvent], _ studentID: String, _ expectedVersion: Int, _ update: StudentUpdate,
                              _ db: PostgresConnection, _ logger: Logger) async throws -> AppendOutcome {
        var current: Int?
        for try await version in try await db.query("SELECT version FROM students WHERE student_id = \(studentID) FOR UPDATE",
                                                    logger: logger).decode(Int.self) {
            current = version
        }
        let now = events[events.count - 1].createdAt
        if let current {
            guard current == expectedVersion else { throw ConflictSignal() }
        } else {
            guard expectedVersion == 0, let profile = update.profile else { throw ConflictSignal() }
            // Two first appends racing: the second finds the key taken and conflicts.
            var inserted = 0
            for try await _ in try await db.query("""
                INSERT INTO students (student_id, profile, version, profile_version, created_at, updated_at)
                VALUES (\(studentID), \(profile), 0, 0, \(events[0].createdAt), \(now))
                ON CONFLICT (student_id) DO NOTHING RETURNING 1
                """, logger: logger).decode(Int.self) { inserted += 1 }
            guard inserted == 1 else { throw ConflictSignal() }
        }
        var version = expectedVersion
        var profileVersion: Int?
        for e in events {
            version += 1
            if e.kind == .profile && profileVersion == nil { profileVersion = version }
            do {
                try await db.query("""
                    INSERT INTO events (student_id, seq, kind, client_id, request_digest, payload, response, created_at)
                    VALUES (\(studentID), \(version), \(e.kind.rawValue), \(e.clientID), \(e.requestDigest), \(e.payload),
                            \(e.response), \(e.createdAt))
                    """, logger: logger)
            } catch where isUniqueViolation(error) {
                throw ConflictSignal()  // a client id already taken: the transaction rolls back
            }
        }
        try await db.query("UPDATE students SET version = \(version), updated_at = \(now) WHERE student_id = \(studentID)",
                           logger: logger)
        if let profile = update.profile {
            try await db.query("""
                UPDATE students SET profile = \(profile), profile_version = \(profileVersion ?? version) WHERE student_id = \(studentID)
                """, logger: logger)
        }
        if let snapshot = update.snapshot {
            try await db.query("""
                INSERT INTO snapshots (student_id, version, data) VALUES (\(studentID), \(version), \(snapshot))
                ON CONFLICT (student_id) DO UPDATE SET version = excluded.version, data = excluded.data
                """, logger: logger)
        }
        return .appended(version: version)
    }

    /// See `StudentStore.saveSnapshot(_:for:version:createdAt:)`: one statement holding the
    /// student's row lock, as an append does (so neither sees the other half done) — one round
    /// trip where a transaction took four, and a snapshot is written every few swipes.
    ///
    /// - Parameters:
    ///   - data: The snapshot.
    ///   - studentID: The student.
    ///   - version: Its version.
    ///   - createdAt: The student's creation time as read.
    public func saveSnapshot(_ data: Data, for studentID: String, version: Int, createdAt: Int64) async throws(StoreError) -> Bool {
        try await call("saving a snapshot") {
            var stored = 0
            for try await _ in try await client.query("""
                WITH same AS (
                    SELECT 1 FROM students WHERE student_id = \(studentID) AND created_at = \(createdAt)
                      AND profile_version <= \(version) AND version >= \(version) FOR UPDATE
                )
                INSERT INTO snapshots (student_id, version, data) SELECT \(studentID), \(version), \(data) FROM same
                ON CONFLICT (student_id) DO UPDATE SET version = excluded.version, data = excluded.data
                WHERE snapshots.version <= excluded.version
                RETURNING 1
                """, logger: logger).decode(Int.self) { stored += 1 }
            return stored > 0
        }
    }

    /// See `StudentStore.deleteStudent(_:)`.
    ///
    /// - Parameter studentID: The student.
    public func deleteStudent(_ studentID: String) async throws(StoreError) -> Bool {
        try await call("erasing a student") {
            try await client.withTransaction(logger: logger) { db in
                var deleted = 0
                for try await _ in try await db.query("DELETE FROM app_events WHERE student_id = \(studentID) RETURNING 1",
                                                      logger: self.logger).decode(Int.self) { deleted += 1 }
                for try await _ in try await db.query("DELETE FROM students WHERE student_id = \(studentID) RETURNING 1",
                                                      logger: self.logger).decode(Int.self) { deleted += 1 }
                return deleted > 0  // events and snapshots go with the student (ON DELETE CASCADE)
            }
        }
    }

    /// See `StudentStore.studentIDs(after:limit:)`.
    ///
    /// - Parameters:
    ///   - after: Exclusive lower bound (byte order).
    ///   - limit: At most this many.
    public func studentIDs(after: String?, limit: Int) async throws(StoreError) -> [String] {
        try await call("listing students") {
            var ids: [String] = []
            for try await id in try await client.query("""
                SELECT student_id FROM students WHERE \(after == nil) OR student_id COLLATE "C" > \(after ?? "")
                ORDER BY student_id COLLATE "C" LIMIT \(max(0, limit))
                """, logger: logger).decode(String.self) { ids.append(id) }
            return ids
        }
    }

    /// Runs a trivial query.
    public func ping() async throws(StoreError) {
        _ = try await call("pinging PostgreSQL") { try await client.query("SELECT 1", logger: logger) }
    }
}
