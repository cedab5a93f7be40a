import Foundation
import Logging
import PostgresNIO
import ServiceLifecycle
import SwipeRankStore

/// The store for several `swiperank serve` instances: students, their event logs and group
/// sessions in PostgreSQL, with the same contract as `SQLiteStore` (the conformance suite runs
/// against both).
///
/// Writes are serialized per student across instances by the version check: an append locks
/// the student's row (`SELECT … FOR UPDATE`), compares its version with the one the writer
/// read and writes the events in the same transaction, so a stale instance gets `.conflict`
/// and rebuilds (see `ServiceOptions.verifyCachedVersion`). Every query binds its values
/// (`PostgresQuery` interpolation); no value is ever spliced into SQL text.
///
/// The connection pool is a service-lifecycle `Service`: run the store (`run()`, or add it to
/// a `ServiceGroup`) for as long as it is used.
public final class PostgresStore: Sendable, Service {
    let client: PostgresClient
    let logger: Logger
    /// The schema the tables live in.
    public let schema: String

    /// Connects to the database a `postgres://user:password@host:port/database` URL names.
    ///
    /// - Parameters:
    ///   - url: The URL; `?sslmode=require` asks for TLS (default: none, for loopback and
    ///     private networks).
    ///   - schema: The schema for the tables (created if missing): separate stores in one
    ///     database, e.g. per test. Letters, digits and `_` only. nil: the URL's `?schema=`,
    ///     else `public`.
    ///   - maxConnections: The pool's size.
    ///   - logger: Background log of the pool.
    /// - Throws: `StoreError` for a URL or schema it cannot use (nothing is connected yet).
    public init(url: String, schema: String? = nil, maxConnections: Int = 20,
                logger: Logger = Logger(label: "swiperank.postgres")) throws(StoreError) {
        guard let components = URLComponents(string: url), ["postgres", "postgresql"].contains(components.scheme ?? ""),
              let host = components.host, !host.isEmpty else {
            throw StoreError("the store URL must look like postgres://user:password@host:5432/database, got \(Self.redacted(url))")
        }
        let schema = schema ?? components.queryItems?.first { $0.name == "schema" }?.value ?? "public"
        guard !schema.isEmpty, schema.count <= 63,
              schema.unicodeScalars.allSatisfy({ CharacterSet.alphanumerics.contains($0) && $0.isASCII || $0 == "_" }) else {
            throw StoreError("a schema name is 1…63 of A–Z a–z 0–9 _, got \(schema)")
        }
        let sslmode = components.queryItems?.first { $0.name == "sslmode" }?.value ?? "disable"
        let tls: PostgresClient.Configuration.TLS
        switch sslmode {
        case "disable": tls = .disable
        case "require": tls = .require(.makeClientConfiguration())
        default: throw StoreError("sslmode must be disable or require, got \(sslmode)")
        }
        var configuration = PostgresClient.Configuration(
            host: host, port: components.port ?? 5432, username: components.user ?? "postgres",
            password: components.password, database: components.path.isEmpty ? nil : String(components.path.dropFirst()), tls: tls)
        configuration.options.maximumConnections = maxConnections
        configuration.options.additionalStartupParameters = [("search_path", schema)]
        self.client = PostgresClient(configuration: configuration, backgroundLogger: logger)
        self.logger = logger
        self.schema = schema
    }

    private static func redacted(_ url: String) -> String {
        guard var c = URLComponents(string: url), c.password != nil else { return url }
        c.password = "***"
        return c.string ?? "(unreadable URL)"
    }

    /// Runs the connection pool until cancelled (the `Service` requirement).
    public func run() async throws {
        await client.run()
    }

    // MARK: Migrations

    /// Creates the schema and tables, or brings an older layout up to date. Safe to call from
    /// several instances at once (an advisory lock serializes them). Call once after `run()`
    /// started.
    ///
    /// - Throws: `StoreError` when the database cannot be reached or migrated.
    public func migrate() async throws(StoreError) {
        try await call("migrating the PostgreSQL store") {
            try await self.client.withTransaction(logger: self.logger) { db in
                try await db.query("SELECT pg_advisory_xact_lock(hashtext(\(self.schema)))", logger: self.logger)
                try await db.query(PostgresQuery(unsafeSQL: "CREATE SCHEMA IF NOT EXISTS \"\(self.schema)\""), logger: self.logger)
                try await db.query("""
                    CREATE TABLE IF NOT EXISTS swiperank_migrations (name TEXT PRIMARY KEY, applied_at TIMESTAMPTZ NOT NULL DEFAULT now())
                    """, logger: self.logger)
                var applied = Set<String>()
                for try await name in try await db.query("SELECT name FROM swiperank_migrations", logger: self.logger).decode(String.self) {
                    applied.insert(name)
                }
                for (name, statements) in Self.migrations where !applied.contains(name) {
                    for statement in statements { try await db.query(PostgresQuery(unsafeSQL: statement), logger: self.logger) }
                    try await db.query("INSERT INTO swiperank_migrations (name) VALUES (\(name))", logger: self.logger)
                }
            }
        }
    }

    /// The layout, in order; each runs once, in one transaction (constant SQL, no values).
    static let migrations: [(String, [String])] = [
        ("v1: students, event log, snapshots", [
            """
            CREATE TABLE students (
                student_id TEXT PRIMARY KEY,
                profile BYTEA NOT NULL,
                version BIGINT NOT NULL,
                profile_version BIGINT NOT NULL,
                created_at BIGINT NOT NULL,
                updated_at BIGINT NOT NULL)
            """,
            """
            CREATE TABLE events (
                student_id TEXT NOT NULL REFERENCES students(student_id) ON DELETE CASCADE,
                seq BIGINT NOT NULL,
                kind TEXT NOT NULL,
                client_id TEXT,
                request_digest TEXT,
                payload BYTEA NOT NULL,
                response BYTEA,
                created_at BIGINT NOT NULL,
                PRIMARY KEY (student_id, seq))
            """,
            "CREATE UNIQUE INDEX events_by_client_id ON events (student_id, kind, client_id) WHERE client_id IS NOT NULL",
            """
            CREATE TABLE snapshots (
                student_id TEXT PRIMARY KEY REFERENCES students(student_id) ON DELETE CASCADE,
                version BIGINT NOT NULL,
                data BYTEA NOT NULL)
            """,
        ]),
        ("v2: group sessions", [
            """
            CREATE TABLE groups (
                group_id TEXT PRIMARY KEY,
                invite_code TEXT NOT NULL UNIQUE,
                creator_id TEXT NOT NULL,
                status TEXT NOT NULL,
                state BYTEA NOT NULL,
                version BIGINT NOT NULL,
                created_at BIGINT NOT NULL,
                updated_at BIGINT NOT NULL)
            """,
            """
            CREATE TABLE group_members (
                group_id TEXT NOT NULL REFERENCES groups(group_id) ON DELETE CASCADE,
                student_id TEXT NOT NULL,
                PRIMARY KEY (group_id, student_id))
            """,
            "CREATE INDEX group_members_by_student ON group_members (student_id)",
        ]),
        ("v3: app events", [
            """
            CREATE TABLE app_events (
                student_id TEXT NOT NULL,
                seq BIGINT NOT NULL,
                event_id TEXT NOT NULL,
                type TEXT NOT NULL,
                payload TEXT NOT NULL,
                occurred_at BIGINT NOT NULL,
                received_at BIGINT NOT NULL,
                PRIMARY KEY (student_id, seq),
                UNIQUE (student_id, event_id))
            """,
            "CREATE INDEX app_events_by_time ON app_events (received_at)",
        ]),
        ("v4: the catalog's change log (item API)", [
            """
            CREATE TABLE catalog_changes (
                seq BIGINT PRIMARY KEY,
                item_id TEXT NOT NULL,
                fields TEXT NOT NULL,
                created_at BIGINT NOT NULL)
            """,
        ]),
        ("v5: the webhook outbox", [
            """
            CREATE TABLE webhook_deliveries (
                id TEXT PRIMARY KEY,
                event TEXT NOT NULL,
                payload BYTEA NOT NULL,
                status TEXT NOT NULL,
                attempts BIGINT NOT NULL,
                next_attempt_at BIGINT NOT NULL,
                last_status BIGINT,
                last_error TEXT,
                created_at BIGINT NOT NULL,
                delivered_at BIGINT)
            """,
            "CREATE INDEX webhook_due ON webhook_deliveries (status, next_attempt_at)",
            "CREATE INDEX webhook_by_time ON webhook_deliveries (created_at)",
        ]),
        ("v6: fitted models", [
            """
            CREATE TABLE models (
                kind TEXT NOT NULL,
                version BIGINT NOT NULL,
                data BYTEA NOT NULL,
                created_at BIGINT NOT NULL,
                PRIMARY KEY (kind, version))
            """,
        ]),
    ]

    /// Runs `body`, turning any failure into a `StoreError` that says what failed (the
    /// server logs it; clients see only a 500).
    func call<T>(_ what: String, _ body: () async throws -> T) async throws(StoreError) -> T {
        do {
            return try await body()
        } catch {
            throw Self.wrap(what, error)
        }
    }

    /// What went wrong inside a transaction (postgres-nio wraps it).
    private static func cause(_ error: any Error) -> any Error {
        guard let transaction = error as? PostgresTransactionError else { return error }
        return transaction.closureError ?? transaction.commitError ?? transaction.beginError ?? error
    }

    private static func wrap(_ what: String, _ error: any Error) -> StoreError {
        let error = cause(error)
        if let error = error as? StoreError { return error }
        if let error = error as? PSQLError {
            return StoreError("\(what) failed: \(error.serverInfo?[.message] ?? String(reflecting: error.code))")
        }
        return StoreError("\(what) failed: \(error)")
    }

    struct ConflictSignal: Error {}

    private static func isUniqueViolation(_ error: any Error) -> Bool {
        (cause(error) as? PSQLError)?.serverInfo?[.sqlState] == "23505"
    }
}

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

    /// See `StudentStore.saveSnapshot(_:for:version:createdAt:)`: a short transaction holding
    /// the student's row lock, as an append does (so neither sees the other half done).
    ///
    /// - Parameters:
    ///   - data: The snapshot.
    ///   - studentID: The student.
    ///   - version: Its version.
    ///   - createdAt: The student's creation time as read.
    public func saveSnapshot(_ data: Data, for studentID: String, version: Int, createdAt: Int64) async throws(StoreError) -> Bool {
        try await call("saving a snapshot") {
            try await client.withTransaction(logger: logger) { db in
                var same = 0
                for try await _ in try await db.query("""
                    SELECT 1 FROM students WHERE student_id = \(studentID) AND created_at = \(createdAt)
                      AND profile_version <= \(version) AND version >= \(version) FOR UPDATE
                    """, logger: self.logger).decode(Int.self) { same += 1 }
                guard same == 1 else { return false }
                var stored = 0
                for try await _ in try await db.query("""
                    INSERT INTO snapshots (student_id, version, data) VALUES (\(studentID), \(version), \(data))
                    ON CONFLICT (student_id) DO UPDATE SET version = excluded.version, data = excluded.data
                    WHERE snapshots.version <= excluded.version
                    RETURNING 1
                    """, logger: self.logger).decode(Int.self) { stored += 1 }
                return stored > 0
            }
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

extension PostgresStore: GroupStore {
    /// See `GroupStore.createGroup(_:)`.
    ///
    /// - Parameter group: The group.
    public func createGroup(_ group: GroupRecord) async throws(StoreError) -> Bool {
        do {
            return try await client.withTransaction(logger: logger) { db in
                    try await db.query("""
                        INSERT INTO groups (group_id, invite_code, creator_id, status, state, version, created_at, updated_at)
                        VALUES (\(group.groupID), \(group.inviteCode), \(group.creatorID), \(group.status), \(group.state), 1,
                                \(group.createdAt), \(group.updatedAt))
                        """, logger: self.logger)
                    try await Self.setMembers(group, db, self.logger)
                    return true
            }
        } catch where Self.isUniqueViolation(error) {
            return false  // the id or the invite code is taken
        } catch {
            throw Self.wrap("creating a group", error)
        }
    }

    /// See `GroupStore.group(_:)`.
    ///
    /// - Parameter groupID: The id.
    public func group(_ groupID: String) async throws(StoreError) -> GroupRecord? {
        try await call("reading a group") {
            try await groups(try await client.query("SELECT \(unescaped: Self.groupColumns) FROM groups g WHERE g.group_id = \(groupID)",
                                                    logger: logger)).first
        }
    }

    /// See `GroupStore.group(inviteCode:)`.
    ///
    /// - Parameter inviteCode: The code.
    public func group(inviteCode: String) async throws(StoreError) -> GroupRecord? {
        try await call("reading a group") {
            try await groups(try await client.query("SELECT \(unescaped: Self.groupColumns) FROM groups g WHERE g.invite_code = \(inviteCode)",
                                                    logger: logger)).first
        }
    }

    /// See `GroupStore.updateGroup(_:expectedVersion:)`.
    ///
    /// - Parameters:
    ///   - group: The new record.
    ///   - expectedVersion: The version read.
    public func updateGroup(_ group: GroupRecord, expectedVersion: Int) async throws(StoreError) -> AppendOutcome {
        try await updateGroup(group, expectedVersion: expectedVersion, enqueuing: [])
    }
}

extension PostgresStore: WebhookOutbox {
    /// See `WebhookOutbox.updateGroup(_:expectedVersion:enqueuing:)`.
    ///
    /// - Parameters:
    ///   - group: The new state.
    ///   - expectedVersion: The version read.
    ///   - deliveries: Stored in the same transaction.
    public func updateGroup(_ group: GroupRecord, expectedVersion: Int, enqueuing deliveries: [WebhookDelivery]) async throws(StoreError)
        -> AppendOutcome {
        try await call("updating a group") {
            try await client.withTransaction(logger: logger) { db in
                var updated = 0
                for try await _ in try await db.query("""
                    UPDATE groups SET status = \(group.status), state = \(group.state), version = version + 1,
                        updated_at = \(group.updatedAt)
                    WHERE group_id = \(group.groupID) AND version = \(expectedVersion) RETURNING 1
                    """, logger: self.logger).decode(Int.self) { updated += 1 }
                guard updated == 1 else { return AppendOutcome.conflict }
                try await Self.setMembers(group, db, self.logger)
                for d in deliveries {
                    try await db.query("""
                        INSERT INTO webhook_deliveries
                            (id, event, payload, status, attempts, next_attempt_at, last_status, last_error, created_at, delivered_at)
                        VALUES (\(d.id), \(d.event), \(d.payload), \(d.status.rawValue), \(d.attempts), \(d.nextAttemptAt),
                                \(d.lastStatus), \(d.lastError), \(d.createdAt), \(d.deliveredAt))
                        ON CONFLICT (id) DO NOTHING
                        """, logger: self.logger)
                }
                return .appended(version: expectedVersion + 1)
            }
        }
    }

    /// See `WebhookOutbox.claimWebhookDeliveries(now:leaseUntil:limit:)`: rows locked by another
    /// instance's claim are skipped, not waited for.
    ///
    /// - Parameters:
    ///   - now: The time.
    ///   - leaseUntil: The lease's end.
    ///   - limit: At most this many.
    public func claimWebhookDeliveries(now: Int64, leaseUntil: Int64, limit: Int) async throws(StoreError) -> [WebhookDelivery] {
        try await call("claiming webhook deliveries") {
            try await deliveries(try await client.query("""
                UPDATE webhook_deliveries SET next_attempt_at = \(leaseUntil)
                WHERE id IN (SELECT id FROM webhook_deliveries WHERE status = 'pending' AND next_attempt_at <= \(now)
                             ORDER BY next_attempt_at, id LIMIT \(max(0, limit)) FOR UPDATE SKIP LOCKED)
                RETURNING \(unescaped: Self.deliveryColumns)
                """, logger: logger)).sorted { ($0.createdAt, $0.id) < ($1.createdAt, $1.id) }
        }
    }

    /// See `WebhookOutbox.recordWebhookAttempt(_:)`.
    ///
    /// - Parameter d: The delivery as it now is.
    public func recordWebhookAttempt(_ d: WebhookDelivery) async throws(StoreError) {
        try await call("recording a webhook attempt") {
            try await client.query("""
                UPDATE webhook_deliveries SET status = \(d.status.rawValue), attempts = \(d.attempts), next_attempt_at = \(d.nextAttemptAt),
                    last_status = \(d.lastStatus), last_error = \(d.lastError), delivered_at = \(d.deliveredAt)
                WHERE id = \(d.id)
                """, logger: logger)
        }
    }

    /// See `WebhookOutbox.webhookDeliveries(status:limit:)`.
    ///
    /// - Parameters:
    ///   - status: A filter.
    ///   - limit: At most this many.
    public func webhookDeliveries(status: WebhookDelivery.Status?, limit: Int) async throws(StoreError) -> [WebhookDelivery] {
        try await call("listing webhook deliveries") {
            try await deliveries(try await client.query("""
                SELECT \(unescaped: Self.deliveryColumns) FROM webhook_deliveries
                WHERE \(status == nil) OR status = \(status?.rawValue ?? "")
                ORDER BY created_at DESC, id DESC LIMIT \(max(0, limit))
                """, logger: logger))
        }
    }

    static let deliveryColumns = "id, event, payload, status, attempts, next_attempt_at, last_status, last_error, created_at, delivered_at"

    private func deliveries(_ rows: PostgresRowSequence) async throws -> [WebhookDelivery] {
        var out: [WebhookDelivery] = []
        for try await (id, event, payload, status, attempts, next, lastStatus, lastError, created, delivered)
            in rows.decode((String, String, Data, String, Int, Int64, Int?, String?, Int64, Int64?).self) {
            out.append(WebhookDelivery(id: id, event: event, payload: payload, status: WebhookDelivery.Status(rawValue: status) ?? .failed,
                                       attempts: attempts, nextAttemptAt: next, lastStatus: lastStatus, lastError: lastError,
                                       createdAt: created, deliveredAt: delivered))
        }
        return out
    }

    /// See `GroupStore.groups(ofMember:status:limit:)`.
    ///
    /// - Parameters:
    ///   - studentID: The member.
    ///   - status: A status filter.
    ///   - limit: At most this many.
    public func groups(ofMember studentID: String, status: String?, limit: Int) async throws(StoreError) -> [GroupRecord] {
        try await call("listing groups") {
            try await groups(try await client.query("""
                SELECT \(unescaped: Self.groupColumns) FROM groups g
                WHERE g.group_id IN (SELECT group_id FROM group_members WHERE student_id = \(studentID))
                  AND (\(status == nil) OR g.status = \(status ?? ""))
                ORDER BY g.created_at DESC, g.group_id DESC LIMIT \(max(0, limit))
                """, logger: logger))
        }
    }

    private static let groupColumns = """
        g.group_id, g.invite_code, g.creator_id, g.status, g.state, g.version, g.created_at, g.updated_at,
        ARRAY(SELECT m.student_id FROM group_members m WHERE m.group_id = g.group_id ORDER BY m.student_id COLLATE "C")
        """

    private func groups(_ rows: PostgresRowSequence) async throws -> [GroupRecord] {
        var out: [GroupRecord] = []
        for try await (id, code, creator, status, state, version, created, updated, members)
            in rows.decode((String, String, String, String, Data, Int, Int64, Int64, [String]).self) {
            out.append(GroupRecord(groupID: id, inviteCode: code, creatorID: creator, status: status, members: members, state: state,
                                   version: version, createdAt: created, updatedAt: updated))
        }
        return out
    }

    private static func setMembers(_ group: GroupRecord, _ db: PostgresConnection, _ logger: Logger) async throws {
        try await db.query("DELETE FROM group_members WHERE group_id = \(group.groupID)", logger: logger)
        try await db.query("""
            INSERT INTO group_members (group_id, student_id) SELECT \(group.groupID), unnest(\(group.members)) ON CONFLICT DO NOTHING
            """, logger: logger)
    }
}


extension PostgresStore: AppEventLog {
    /// See `AppEventLog.appendAppEvents(_:for:)`: one statement for the whole batch, under a
    /// per-student advisory lock so positions only grow in commit order (a reader's cursor
    /// never skips an event committed later with a smaller position).
    ///
    /// - Parameters:
    ///   - events: The events.
    ///   - studentID: The student.
    public func appendAppEvents(_ events: [AppEvent], for studentID: String) async throws(StoreError) -> Int {
        guard !events.isEmpty else { return 0 }
        return try await call("appending app events") {
            try await client.withTransaction(logger: logger) { db in
                try await db.query("SELECT pg_advisory_xact_lock(hashtext('app_events:' || \(studentID)))", logger: self.logger)
                var base = 0
                for try await last in try await db.query(
                    "SELECT COALESCE(MAX(seq), 0) FROM app_events WHERE student_id = \(studentID)", logger: self.logger).decode(Int.self) {
                    base = last
                }
                var added = 0
                for try await _ in try await db.query("""
                    INSERT INTO app_events (student_id, seq, event_id, type, payload, occurred_at, received_at)
                    SELECT \(studentID), \(base) + e.ord, e.id, e.type, e.payload, e.occurred, e.received
                    FROM unnest(\(events.map(\.eventID)), \(events.map(\.type)), \(events.map(\.payload)),
                                \(events.map(\.occurredAt)), \(events.map(\.receivedAt)))
                         WITH ORDINALITY AS e(id, type, payload, occurred, received, ord)
                    ON CONFLICT (student_id, event_id) DO NOTHING RETURNING 1
                    """, logger: self.logger).decode(Int.self) { added += 1 }
                return added
            }
        }
    }

    /// See `AppEventLog.appEvents(of:after:limit:)`.
    ///
    /// - Parameters:
    ///   - studentID: The student.
    ///   - after: The cursor.
    ///   - limit: At most this many.
    public func appEvents(of studentID: String, after: Int, limit: Int) async throws(StoreError) -> [AppEvent] {
        try await call("reading app events") {
            var out: [AppEvent] = []
            for try await (seq, id, type, payload, occurred, received) in try await client.query("""
                SELECT seq, event_id, type, payload, occurred_at, received_at FROM app_events
                WHERE student_id = \(studentID) AND seq > \(after) ORDER BY seq LIMIT \(max(0, limit))
                """, logger: logger).decode((Int, String, String, String, Int64, Int64).self) {
                out.append(AppEvent(seq: seq, eventID: id, type: type, payload: payload, occurredAt: occurred, receivedAt: received))
            }
            return out
        }
    }

    /// See `AppEventLog.purgeAppEvents(receivedBefore:)`.
    ///
    /// - Parameter time: The cut-off.
    public func purgeAppEvents(receivedBefore time: Int64) async throws(StoreError) -> Int {
        try await call("purging app events") {
            var removed = 0
            for try await _ in try await client.query("DELETE FROM app_events WHERE received_at < \(time) RETURNING 1",
                                                      logger: logger).decode(Int.self) { removed += 1 }
            return removed
        }
    }
}

extension PostgresStore: CatalogLog {
    /// See `CatalogLog.catalogSequence()`.
    public func catalogSequence() async throws(StoreError) -> Int {
        try await call("reading the catalog sequence") {
            var last = 0
            for try await seq in try await client.query("SELECT COALESCE(MAX(seq), 0) FROM catalog_changes", logger: logger)
                .decode(Int.self) { last = seq }
            return last
        }
    }

    /// See `CatalogLog.catalogChanges(after:limit:)`.
    ///
    /// - Parameters:
    ///   - after: Exclusive lower bound.
    ///   - limit: At most this many.
    public func catalogChanges(after: Int, limit: Int) async throws(StoreError) -> [CatalogChange] {
        let rows = try await call("reading catalog changes") {
            var out: [(Int, String, String, Int64)] = []
            for try await row in try await client.query("""
                SELECT seq, item_id, fields, created_at FROM catalog_changes WHERE seq > \(after) ORDER BY seq LIMIT \(max(1, limit))
                """, logger: logger).decode((Int, String, String, Int64).self) { out.append(row) }
            return out
        }
        var out: [CatalogChange] = []
        out.reserveCapacity(rows.count)
        for (seq, id, fields, createdAt) in rows {
            // A deletion is stored as the JSON literal null.
            out.append(CatalogChange(seq: seq, itemID: id, fields: fields == "null" ? nil : try CatalogChange.fields(from: Data(fields.utf8)),
                                     createdAt: createdAt))
        }
        return out
    }

    /// See `CatalogLog.appendCatalogChanges(_:expectedSequence:)`: one statement for the whole
    /// batch, under an advisory lock that serializes writers of the catalog.
    ///
    /// - Parameters:
    ///   - changes: The changes.
    ///   - expectedSequence: The sequence the caller read.
    public func appendCatalogChanges(_ changes: [CatalogChange], expectedSequence: Int) async throws(StoreError) -> Int? {
        let ids = changes.map(\.itemID)
        let fields = changes.map { $0.fieldsJSON.map { String(decoding: $0, as: UTF8.self) } ?? "null" }
        let times = changes.map(\.createdAt)
        return try await call("appending catalog changes") {
            try await client.withTransaction(logger: logger) { db -> Int? in
                try await db.query("SELECT pg_advisory_xact_lock(hashtext('catalog_changes:' || \(self.schema)))", logger: self.logger)
                var last = 0
                for try await seq in try await db.query("SELECT COALESCE(MAX(seq), 0) FROM catalog_changes", logger: self.logger)
                    .decode(Int.self) { last = seq }
                guard last == expectedSequence else { return nil }
                try await db.query("""
                    INSERT INTO catalog_changes (seq, item_id, fields, created_at)
                    SELECT \(last) + c.ord, c.id, c.fields, c.created
                    FROM unnest(\(ids), \(fields), \(times)) WITH ORDINALITY AS c(id, fields, created, ord)
                    """, logger: self.logger)
                return last + changes.count
            }
        }
    }
}

extension PostgresStore: StoreNotifications {
    /// The channel: one per schema, so stores in separate schemas do not hear each other.
    private var channel: String { "swiperank_" + schema.lowercased() }

    /// See `StoreNotifications.notify(_:)`: `pg_notify`, delivered to listeners when the
    /// sending transaction commits.
    ///
    /// - Parameter message: The message.
    public func notify(_ message: String) async throws(StoreError) {
        _ = try await call("notifying") { try await client.query("SELECT pg_notify(\(channel), \(message))", logger: logger) }
    }

    /// See `StoreNotifications.listen(_:)`: `LISTEN` on a connection of the pool held for as
    /// long as it listens.
    ///
    /// - Parameter onMessage: Called per message.
    public func listen(_ onMessage: @escaping @Sendable (String) -> Void) async throws {
        try await client.withConnection { connection in
            try await connection.listen(on: channel) { notifications in
                for try await notification in notifications { onMessage(notification.payload) }
            }
        }
    }
}
