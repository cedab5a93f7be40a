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

    /// See `StudentStore.studentVersion(_:)`: one indexed row, no profile or snapshot, read by a
    /// query shared with every other student's check asked while the last one was in flight
    /// (`GroupCommit`): a deck request's check is most of what it costs PostgreSQL. A check
    /// never joins a query already sent, so it sees every write finished before it was asked.
    ///
    /// - Parameter studentID: The student.
    public func studentVersion(_ studentID: String) async throws(StoreError) -> Int? {
        try await versions.submit(studentID).get()
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
    /// who exists, no profile or snapshot change — joins the next batch (`GroupCommit`): one
    /// statement, one round trip and one commit for every such append that arrived while the
    /// last batch was out, where a transaction took five round trips for each.
    private func appendOne(_ e: StoredEvent, to studentID: String, expectedVersion: Int) async throws(StoreError) -> AppendOutcome {
        try await appends.submit(OneAppend(event: e, studentID: studentID, expectedVersion: expectedVersion)).get()
    }

    /// Runs a batch of one-event appends: the students' first appends in one statement, a
    /// student's second (rare: two instances, or a retry) in a second statement after it, and
    /// so on, so each append still sees the ones submitted before it.
    static func appendBatch(_ batch: [OneAppend], _ client: PostgresClient, _ logger: Logger) async
        -> [Result<AppendOutcome, StoreError>] {
        var outcomes = [Result<AppendOutcome, StoreError>?](repeating: nil, count: batch.count)
        var remaining = Array(batch.indices)
        while !remaining.isEmpty {
            var students = Set<String>()
            var layer: [Int] = [], later: [Int] = []
            for i in remaining {
                if students.insert(batch[i].studentID).inserted { layer.append(i) } else { later.append(i) }
            }
            do {
                let written = try await appendStatement(layer.map { batch[$0] }, client, logger)
                for i in layer {
                    outcomes[i] = .success(written.contains(batch[i].studentID) ? .appended(version: batch[i].expectedVersion + 1) : .conflict)
                }
            } catch where layer.count > 1 {
                // One bad append (a value PostgreSQL refuses) must not fail the others: each
                // alone, so only its own caller gets the error. Nothing was written: the
                // statement is atomic.
                for i in layer {
                    do {
                        let written = try await appendStatement([batch[i]], client, logger)
                        outcomes[i] = .success(written.isEmpty ? .conflict : .appended(version: batch[i].expectedVersion + 1))
                    } catch {
                        outcomes[i] = .failure(wrap("appending for a student", error))
                    }
                }
            } catch {
                let failure = wrap("appending for a student", error)
                for i in layer { outcomes[i] = .failure(failure) }
            }
            remaining = later
        }
        return outcomes.map { $0! }
    }

    /// One statement for appends of distinct students, atomic as a whole: it locks the
    /// students' rows in one order (`ORDER BY … FOR UPDATE`, so two instances' batches cannot
    /// deadlock; a writer elsewhere waits, then sees the new version), inserts each event only
    /// at its expected version and where no event holds its client id (`ON CONFLICT DO
    /// NOTHING`: that append alone is a conflict), and moves the version of exactly those
    /// students. Returns the students appended to.
    private static func appendStatement(_ items: [OneAppend], _ client: PostgresClient, _ logger: Logger) async throws -> Set<String> {
        // postgres-nio binds no array with NULL elements: a flag per nullable column instead.
        let ids = items.map(\.studentID)
        let expected = items.map(\.expectedVersion)
        let kinds = items.map(\.event.kind.rawValue)
        let clientIDs = items.map { $0.event.clientID ?? "" }, hasClientID = items.map { $0.event.clientID != nil }
        let digests = items.map { $0.event.requestDigest ?? "" }, hasDigest = items.map { $0.event.requestDigest != nil }
        let payloads = items.map { ByteBuffer(bytes: $0.event.payload) }
        let responses = items.map { ByteBuffer(bytes: $0.event.response ?? Data()) }, hasResponse = items.map { $0.event.response != nil }
        let created = items.map(\.event.createdAt)
        let rows = try await client.query("""
            WITH input AS (
                SELECT * FROM unnest(\(ids)::text[], \(expected)::int8[], \(kinds)::text[], \(clientIDs)::text[], \(hasClientID)::bool[],
                                     \(digests)::text[], \(hasDigest)::bool[], \(payloads)::bytea[], \(responses)::bytea[],
                                     \(hasResponse)::bool[], \(created)::int8[])
                    AS i(student_id, expected, kind, client_id, has_client_id, request_digest, has_digest, payload, response,
                         has_response, created_at)
            ), current AS MATERIALIZED (
                SELECT student_id, version FROM students WHERE student_id = ANY(\(ids)) ORDER BY student_id FOR UPDATE
            ), appended AS (
                INSERT INTO events (student_id, seq, kind, client_id, request_digest, payload, response, created_at)
                SELECT i.student_id, i.expected + 1, i.kind, CASE WHEN i.has_client_id THEN i.client_id END,
                       CASE WHEN i.has_digest THEN i.request_digest END, i.payload, CASE WHEN i.has_response THEN i.response END,
                       i.created_at
                FROM input i JOIN current c ON c.student_id = i.student_id AND c.version = i.expected
                ON CONFLICT DO NOTHING
                RETURNING student_id, seq, created_at
            )
            UPDATE students s SET version = a.seq, updated_at = a.created_at FROM appended a
            WHERE s.student_id = a.student_id
            RETURNING s.student_id
            """, logger: logger)
        var written = Set<String>()
        for try await id in rows.decode(String.self) { written.insert(id) }
        return written
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
