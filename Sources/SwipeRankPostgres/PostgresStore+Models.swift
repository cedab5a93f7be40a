import Foundation
import PostgresNIO
import SwipeRankStore

extension PostgresStore: ModelRegistry {
    /// See `ModelRegistry.latestModelVersion(kind:)`.
    ///
    /// - Parameter kind: The kind.
    public func latestModelVersion(kind: String) async throws(StoreError) -> Int {
        try StoredModel.check(kind, what: "kind")
        return try await call("reading the model version") {
            var last = 0
            for try await version in try await client.query("SELECT COALESCE(MAX(version), 0) FROM models WHERE kind = \(kind)",
                                                            logger: logger).decode(Int.self) { last = version }
            return last
        }
    }

    /// See `ModelRegistry.latestModel(kind:)`.
    ///
    /// - Parameter kind: The kind.
    public func latestModel(kind: String) async throws(StoreError) -> StoredModel? {
        try StoredModel.check(kind, what: "kind")
        return try await call("reading the model") {
            var found: StoredModel?
            for try await (version, data, created) in try await client.query("""
                SELECT version, data, created_at FROM models WHERE kind = \(kind) ORDER BY version DESC LIMIT 1
                """, logger: logger).decode((Int, Data, Int64).self) {
                found = StoredModel(kind: kind, version: version, data: data, createdAt: created)
            }
            return found
        }
    }

    /// See `ModelRegistry.putModel(kind:data:createdAt:)`: one transaction, writers of a kind
    /// serialized by a transaction-scoped advisory lock.
    ///
    /// - Parameters:
    ///   - kind: The kind.
    ///   - data: The bytes.
    ///   - createdAt: Unix milliseconds.
    public func putModel(kind: String, data: Data, createdAt: Int64) async throws(StoreError) -> Int {
        try StoredModel.check(kind, what: "kind")
        return try await call("storing the model") {
            try await client.withTransaction(logger: logger) { db -> Int in
                try await db.query("SELECT pg_advisory_xact_lock(hashtext('models:' || \(self.schema) || ':' || \(kind)))", logger: self.logger)
                var last = 0
                for try await version in try await db.query("SELECT COALESCE(MAX(version), 0) FROM models WHERE kind = \(kind)",
                                                            logger: self.logger).decode(Int.self) { last = version }
                try await db.query("""
                    INSERT INTO models (kind, version, data, created_at) VALUES (\(kind), \(last + 1), \(data), \(createdAt))
                    """, logger: self.logger)
                try await db.query("DELETE FROM models WHERE kind = \(kind) AND version <= \(last + 1 - StoredModel.kept)", logger: self.logger)
                return last + 1
            }
        }
    }

    /// See `ModelRegistry.withExclusiveJob(_:_:)`: a session-level advisory lock
    /// (`pg_try_advisory_lock` on a hash of the schema and the name) on one connection of the
    /// pool, held for as long as `body` runs and released after it (or by the server when the
    /// connection dies with its instance).
    ///
    /// - Parameters:
    ///   - name: The job.
    ///   - body: The work.
    public func withExclusiveJob<T: Sendable>(_ name: String, _ body: @Sendable () async throws -> T) async throws -> T? {
        try StoredModel.check(name, what: "job name")
        let key = "swiperank-job:" + schema + ":" + name
        let logger = self.logger
        let connection: (PostgresConnection) async throws -> T? = { connection in
            var locked = false
            for try await got in try await connection.query("SELECT pg_try_advisory_lock(hashtext(\(key)))", logger: logger)
                .decode(Bool.self) { locked = got }
            guard locked else { return nil }
            let result: Result<T, any Error>
            do { result = .success(try await body()) } catch { result = .failure(error) }
            _ = try? await connection.query("SELECT pg_advisory_unlock(hashtext(\(key)))", logger: logger)
            return try result.get()
        }
        do {
            return try await client.withConnection(connection)
        } catch let error as PSQLError {
            throw StoreError("claiming the job \(name) failed: \(error.serverInfo?[.message] ?? String(reflecting: error.code))")
        }
    }
}
