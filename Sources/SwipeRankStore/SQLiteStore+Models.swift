import Foundation
import GRDB
#if canImport(Glibc)
import Glibc
#endif

extension SQLiteStore: ModelRegistry {
    /// See `ModelRegistry.latestModelVersion(kind:)`.
    ///
    /// - Parameter kind: The kind.
    public func latestModelVersion(kind: String) async throws(StoreError) -> Int {
        try StoredModel.check(kind, what: "kind")
        do {
            return try await pool.read { db in
                try Int.fetchOne(db, sql: "SELECT COALESCE(MAX(version), 0) FROM models WHERE kind = ?", arguments: [kind]) ?? 0
            }
        } catch {
            throw StoreError("reading the model version failed: \(error)")
        }
    }

    /// See `ModelRegistry.latestModel(kind:)`.
    ///
    /// - Parameter kind: The kind.
    public func latestModel(kind: String) async throws(StoreError) -> StoredModel? {
        try StoredModel.check(kind, what: "kind")
        do {
            return try await pool.read { db in
                try Row.fetchOne(db, sql: "SELECT version, data, created_at FROM models WHERE kind = ? ORDER BY version DESC LIMIT 1",
                                 arguments: [kind]).map { row in
                    StoredModel(kind: kind, version: row["version"], data: row["data"], createdAt: row["created_at"])
                }
            }
        } catch {
            throw StoreError("reading the model failed: \(error)")
        }
    }

    /// See `ModelRegistry.putModel(kind:data:createdAt:)`: one transaction.
    ///
    /// - Parameters:
    ///   - kind: The kind.
    ///   - data: The bytes.
    ///   - createdAt: Unix milliseconds.
    public func putModel(kind: String, data: Data, createdAt: Int64) async throws(StoreError) -> Int {
        try StoredModel.check(kind, what: "kind")
        do {
            return try await pool.write { db in
                let version = (try Int.fetchOne(db, sql: "SELECT COALESCE(MAX(version), 0) FROM models WHERE kind = ?", arguments: [kind]) ?? 0) + 1
                try db.execute(sql: "INSERT INTO models (kind, version, data, created_at) VALUES (?, ?, ?, ?)",
                               arguments: [kind, version, data, createdAt])
                try db.execute(sql: "DELETE FROM models WHERE kind = ? AND version <= ?", arguments: [kind, version - StoredModel.kept])
                return version
            }
        } catch {
            throw StoreError("storing the model failed: \(error)")
        }
    }

    /// See `ModelRegistry.withExclusiveJob(_:_:)`: an exclusive `flock` on a file beside the
    /// database (`<database>.job-<hash of the name>`), so other processes on the same file are
    /// excluded too; the kernel drops it with the process.
    ///
    /// - Parameters:
    ///   - name: The job.
    ///   - body: The work.
    public func withExclusiveJob<T: Sendable>(_ name: String, _ body: @Sendable () async throws -> T) async throws -> T? {
        try StoredModel.check(name, what: "job name")
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325  // FNV-1a: a stable file name for any job name
        for byte in name.utf8 { hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01b3 }
        let lockPath = path + ".job-" + String(hash, radix: 16)
        let outcome: T?? = try await jobClaims.run(name) { () async throws -> T? in
            let fd = open(lockPath, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
            guard fd >= 0 else { throw StoreError("cannot open the job lock \(lockPath): \(String(cString: strerror(errno)))") }
            defer { close(fd) }  // closing releases the lock
            guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
                if errno == EWOULDBLOCK { return nil }
                throw StoreError("cannot lock \(lockPath): \(String(cString: strerror(errno)))")
            }
            return try await body()
        }
        return outcome ?? nil  // nil: another holder in this process
    }
}
