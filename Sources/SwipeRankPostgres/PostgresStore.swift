import Foundation
import Logging
import PostgresNIO
import ServiceLifecycle
import SwipeRankStore

// The class, its pool, migrations and error mapping. The protocols it serves are one file each:
// PostgresStore+Students (the student log), +Groups (groups and webhook deliveries), +Events
// (app events, the catalog log, notifications between instances), +Models (the model registry).

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
    /// Version checks coalesced: one query for every student asked while the last was in flight.
    let versions: GroupCommit<String, Result<Int?, StoreError>>
    /// One-event appends batched: one statement and one commit for all that arrived together.
    let appends: GroupCommit<OneAppend, Result<AppendOutcome, StoreError>>
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
        let client = PostgresClient(configuration: configuration, backgroundLogger: logger)
        self.client = client
        self.logger = logger
        self.versions = GroupCommit(maxBatch: 256) { ids in
            func versions(_ distinct: [String]) async throws -> [String: Int] {
                var found: [String: Int] = [:]
                let rows = try await client.query("SELECT student_id, version FROM students WHERE student_id = ANY(\(distinct))",
                                                  logger: logger)
                for try await (id, version) in rows.decode((String, Int).self) { found[id] = version }
                return found
            }
            let distinct = Array(Set(ids))
            if let found = try? await versions(distinct) { return ids.map { .success(found[$0]) } }
            // One id PostgreSQL refuses must not fail the others' checks: each alone.
            var each: [String: Result<Int?, StoreError>] = [:]
            for id in distinct {
                do {
                    each[id] = .success(try await versions([id])[id])
                } catch {
                    each[id] = .failure(Self.wrap("reading a student's version", error))
                }
            }
            return ids.map { each[$0]! }
        }
        self.appends = GroupCommit(maxBatch: 256) { batch in await Self.appendBatch(batch, client, logger) }
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
    static func cause(_ error: any Error) -> any Error {
        guard let transaction = error as? PostgresTransactionError else { return error }
        return transaction.closureError ?? transaction.commitError ?? transaction.beginError ?? error
    }

    static func wrap(_ what: String, _ error: any Error) -> StoreError {
        let error = cause(error)
        if let error = error as? StoreError { return error }
        if let error = error as? PSQLError {
            return StoreError("\(what) failed: \(error.serverInfo?[.message] ?? String(reflecting: error.code))")
        }
        return StoreError("\(what) failed: \(error)")
    }

    struct ConflictSignal: Error {}

    /// A one-event append waiting for the next batch (`appendBatch`).
    struct OneAppend: Sendable {
        let event: StoredEvent
        let studentID: String
        let expectedVersion: Int
    }

    static func isUniqueViolation(_ error: any Error) -> Bool {
        (cause(error) as? PSQLError)?.serverInfo?[.sqlState] == "23505"
    }
}
