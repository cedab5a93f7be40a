import Foundation
import Logging
import SwipeRankPostgres
import SwipeRankStore
import Testing

/// PostgreSQL stores for tests: each one in a schema of its own in the server that
/// `SWIPERANK_POSTGRES_URL` names, its pool running until the test is done.
enum PostgresFixture {
    static var url: String? {
        ProcessInfo.processInfo.environment["SWIPERANK_POSTGRES_URL"].flatMap { $0.isEmpty ? nil : $0 }
    }

    /// A migrated, empty store and the closure that stops its pool.
    static func store(schema: String = "t_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased(),
                      maxConnections: Int = 8) async throws -> (PostgresStore, @Sendable () -> Void) {
        let url = try #require(url, "SWIPERANK_POSTGRES_URL is not set")
        var logger = Logger(label: "test.postgres")
        logger.logLevel = .error
        let store = try PostgresStore(url: url, schema: schema, maxConnections: maxConnections, logger: logger)
        let running = Task { try await store.run() }
        do {
            try await store.migrate()
        } catch {
            running.cancel()
            throw error
        }
        return (store, { running.cancel() })
    }
}
