import ArgumentParser
import Foundation
import Logging
import SwipeRankPostgres
import SwipeRankStore

/// Opens the store a `--store` value names and runs `body` with it: `sqlite` (the file at
/// `sqlitePath`) or a `postgres://` URL, whose connection pool runs — migrated — for exactly as
/// long as `body` (started first, since migrations need it; cancelled once `body` returns).
///
/// - Parameters:
///   - name: `sqlite` or a PostgreSQL URL.
///   - sqlitePath: The SQLite file.
///   - durability: SQLite's commit durability.
///   - mustExist: Refuse to create a missing SQLite file (readers such as `export`).
///   - logger: The pool's log.
///   - body: Gets the store and whether several processes may share it.
func withStore(_ name: String, sqlitePath: String, durability: SQLiteStore.Durability = .normal, mustExist: Bool = false,
               logger: Logger, _ body: @escaping (any ServiceStore, _ shared: Bool) async throws -> Void) async throws {
    if name.hasPrefix("postgres://") || name.hasPrefix("postgresql://") {
        let postgres: PostgresStore
        do { postgres = try PostgresStore(url: name, logger: logger) } catch { throw CLIError(error.description) }
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await postgres.run() }
            do { try await postgres.migrate() } catch { throw CLIError("\(error)") }
            try await body(postgres, true)
            group.cancelAll()
        }
    } else if name == "sqlite" {
        if mustExist && !FileManager.default.fileExists(atPath: sqlitePath) { throw CLIError("no SQLite store at \(sqlitePath)") }
        let sqlite: SQLiteStore
        do { sqlite = try SQLiteStore(path: sqlitePath, durability: durability) } catch { throw CLIError(error.description) }
        try await body(sqlite, false)
    } else {
        throw ValidationError("--store must be sqlite or a postgres:// URL")
    }
}
