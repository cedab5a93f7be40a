import Foundation
import SwipeRankPostgres
@testable import SwipeRankStore
import Testing

/// `ModelRegistry` on every store: versions, retention, and the job claim that keeps a fleet
/// from fitting the same model twice at once.
@Suite struct ModelRegistryTests {
    typealias Kind = StoreConformanceTests.Kind

    /// A store of `kind` and a second handle on the same data (another SQLite connection pool
    /// on the file, another PostgreSQL pool on the schema — as a second instance would open it;
    /// the same object for memory).
    static func pair(_ kind: Kind) async throws -> (any ServiceStore, any ServiceStore, @Sendable () -> Void) {
        switch kind {
        case .memory:
            let store = MemoryStore()
            return (store, store, {})
        case .sqlite:
            let dir = FileManager.default.temporaryDirectory.appendingPathComponent("swiperank-models-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
            let path = dir.appendingPathComponent("db.sqlite").path
            return (try SQLiteStore(path: path), try SQLiteStore(path: path), { try? FileManager.default.removeItem(at: dir) })
        case .postgres:
            let schema = "t_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()
            let (a, stopA) = try await PostgresFixture.store(schema: schema)
            let (b, stopB) = try await PostgresFixture.store(schema: schema)
            return (a, b, { stopA(); stopB() })
        }
    }

    @Test("models: versions from 1 per kind, the newest read back byte for byte, only the newest three kept", arguments: Kind.available)
    func versions(kind: Kind) async throws {
        let (store, other, done) = try await Self.pair(kind)
        defer { done() }
        #expect(try await store.latestModelVersion(kind: "factors") == 0)
        #expect(try await store.latestModel(kind: "factors") == nil)
        var bytes = Data((0...255).map { UInt8($0) })  // every byte value, NUL included
        for v in 1...5 {
            bytes.append(UInt8(v))
            #expect(try await (v % 2 == 0 ? other : store).putModel(kind: "factors", data: bytes, createdAt: Int64(100 + v)) == v)
        }
        #expect(try await store.putModel(kind: "\u{1}restaurants\u{1}factors", data: Data("r".utf8), createdAt: 7) == 1)
        #expect(try await other.latestModelVersion(kind: "factors") == 5)
        let newest = try #require(try await other.latestModel(kind: "factors"))
        #expect(newest == StoredModel(kind: "factors", version: 5, data: bytes, createdAt: 105))
        #expect(try await store.latestModel(kind: "\u{1}restaurants\u{1}factors")?.data == Data("r".utf8))
        // Retention: versions 1 and 2 are gone (a rollback needs the previous one, not the history).
        if let memory = store as? MemoryStore {
            #expect(memory.modelTable.withLock { $0["factors"]!.map(\.version) } == [3, 4, 5])
        }
        if let sqlite = store as? SQLiteStore {
            let versions = try await sqlite.pool.read { db in try Int.fetchAll(db, sql: "SELECT version FROM models WHERE kind = 'factors' ORDER BY version") }
            #expect(versions == [3, 4, 5])
        }
        for bad in ["", String(repeating: "k", count: 201), "a\nb"] {
            await #expect(throws: StoreError.self) { try await store.putModel(kind: bad, data: Data(), createdAt: 1) }
            await #expect(throws: StoreError.self) { try await store.latestModelVersion(kind: bad) }
        }
    }

    @Test("jobs: one holder at a time across handles on the same data; released when the body ends or throws", arguments: Kind.available)
    func exclusiveJobs(kind: Kind) async throws {
        let (store, other, done) = try await Self.pair(kind)
        defer { done() }
        let outer = try await store.withExclusiveJob("refit:factors") { () async throws -> [Int?] in
            // While held: the other handle and this one are refused; another name is free.
            let fromOther = try await other.withExclusiveJob("refit:factors") { 1 }
            let fromSame = try await store.withExclusiveJob("refit:factors") { 2 }
            let otherName = try await other.withExclusiveJob("refit:prior") { 3 }
            return [fromOther, fromSame, otherName]
        }
        #expect(outer == [nil, nil, 3])
        // Released: the other handle gets it now.
        let after = try await other.withExclusiveJob("refit:factors") { 4 }
        #expect(after == 4)
        // A body that throws releases it too.
        struct Boom: Error {}
        await #expect(throws: Boom.self) { _ = try await store.withExclusiveJob("refit:factors") { () async throws -> Int in throw Boom() } }
        let again = try await other.withExclusiveJob("refit:factors") { 5 }
        #expect(again == 5)
        await #expect(throws: StoreError.self) { _ = try await store.withExclusiveJob("") { 6 } }
    }
}
