import Foundation
import Synchronization

/// Fitted models kept beside the log they were fitted on (`serve --refit-every`): every
/// instance sharing a database serves the newest one, and a restart starts from it. One
/// instance at a time fits, under `withExclusiveJob` (a PostgreSQL advisory lock held on one
/// connection, a file lock for SQLite), so a fleet does not fit the same model N times.
public protocol ModelRegistry: Sendable {
    /// The newest version of a kind of model (0 when none is stored): a cheap poll.
    ///
    /// - Parameter kind: What the model is (`"factors"`), 1…200 bytes.
    /// - Throws: `StoreError` when the store fails.
    func latestModelVersion(kind: String) async throws(StoreError) -> Int

    /// The newest model of a kind, or nil.
    ///
    /// - Parameter kind: What the model is.
    /// - Throws: `StoreError` when the store fails.
    func latestModel(kind: String) async throws(StoreError) -> StoredModel?

    /// Stores a model as its kind's next version; only the newest `StoredModel.kept` versions of
    /// a kind are kept.
    ///
    /// - Parameters:
    ///   - kind: What the model is.
    ///   - data: The model file's bytes.
    ///   - createdAt: Unix milliseconds.
    /// - Returns: The version it got (previous newest + 1, from 1).
    /// - Throws: `StoreError` when the store fails (nothing stored).
    func putModel(kind: String, data: Data, createdAt: Int64) async throws(StoreError) -> Int

    /// Runs `body` unless another holder — this process or another sharing the store — runs a
    /// job of the same name; the claim ends with `body`, or with the holder's process (a killed
    /// instance never leaves the job claimed).
    ///
    /// - Parameters:
    ///   - name: The job, 1…200 bytes.
    ///   - body: The work.
    /// - Returns: `body`'s result, or nil when the job is held elsewhere (`body` not run).
    /// - Throws: `StoreError` when the claim cannot be made; `body`'s error.
    func withExclusiveJob<T: Sendable>(_ name: String, _ body: @Sendable () async throws -> T) async throws -> T?
}

/// One stored model.
public struct StoredModel: Sendable, Hashable {
    /// Its kind.
    public var kind: String
    /// Its version, from 1.
    public var version: Int
    /// The file's bytes.
    public var data: Data
    /// When it was stored (Unix milliseconds).
    public var createdAt: Int64

    /// How many versions of a kind a store keeps (the newest; older ones are deleted on put):
    /// a rollback needs the previous one, not the history.
    public static let kept = 3

    /// Creates a record.
    ///
    /// - Parameters:
    ///   - kind: The kind.
    ///   - version: The version.
    ///   - data: The bytes.
    ///   - createdAt: Unix milliseconds.
    public init(kind: String, version: Int, data: Data, createdAt: Int64) {
        self.kind = kind
        self.version = version
        self.data = data
        self.createdAt = createdAt
    }

    /// Checks a kind or job name (1…200 bytes, no control character but the catalogs' key
    /// separator U+0001), so a bad one is a `StoreError` rather than a key another name could
    /// collide with: every store calls it first.
    ///
    /// - Parameters:
    ///   - name: The kind or job name.
    ///   - what: What it is, for the message.
    /// - Throws: `StoreError` naming it.
    public static func check(_ name: String, what: String) throws(StoreError) {
        guard (1...200).contains(name.utf8.count), !name.unicodeScalars.contains(where: { $0.value < 0x20 && $0.value != 1 }) else {
            throw StoreError("a model \(what) is 1…200 bytes without control characters, got \"\(name.prefix(40))\"")
        }
    }
}

/// The names of jobs running in this process (a `MemoryStore`'s whole claim, and the first
/// check of the others).
final class JobClaims: Sendable {
    private let held = Mutex<Set<String>>([])

    /// Claims `name`; false when it is already held.
    func claim(_ name: String) -> Bool { held.withLock { $0.insert(name).inserted } }

    func release(_ name: String) { _ = held.withLock { $0.remove(name) } }

    /// Runs `body` under the claim, or returns nil.
    func run<T: Sendable>(_ name: String, _ body: @Sendable () async throws -> T) async throws -> T? {
        guard claim(name) else { return nil }
        defer { release(name) }
        return try await body()
    }
}

extension MemoryStore: ModelRegistry {
    /// See `ModelRegistry.latestModelVersion(kind:)`.
    ///
    /// - Parameter kind: The kind.
    public func latestModelVersion(kind: String) async throws(StoreError) -> Int {
        try StoredModel.check(kind, what: "kind")
        return modelTable.withLock { $0[kind]?.last?.version ?? 0 }
    }

    /// See `ModelRegistry.latestModel(kind:)`.
    ///
    /// - Parameter kind: The kind.
    public func latestModel(kind: String) async throws(StoreError) -> StoredModel? {
        try StoredModel.check(kind, what: "kind")
        return modelTable.withLock { $0[kind]?.last }
    }

    /// See `ModelRegistry.putModel(kind:data:createdAt:)`.
    ///
    /// - Parameters:
    ///   - kind: The kind.
    ///   - data: The bytes.
    ///   - createdAt: Unix milliseconds.
    public func putModel(kind: String, data: Data, createdAt: Int64) async throws(StoreError) -> Int {
        try StoredModel.check(kind, what: "kind")
        return modelTable.withLock { table in
            let version = (table[kind]?.last?.version ?? 0) + 1
            table[kind, default: []].append(StoredModel(kind: kind, version: version, data: data, createdAt: createdAt))
            table[kind] = Array(table[kind]!.suffix(StoredModel.kept))
            return version
        }
    }

    /// See `ModelRegistry.withExclusiveJob(_:_:)`: a claim in this store's memory.
    ///
    /// - Parameters:
    ///   - name: The job.
    ///   - body: The work.
    public func withExclusiveJob<T: Sendable>(_ name: String, _ body: @Sendable () async throws -> T) async throws -> T? {
        try StoredModel.check(name, what: "job name")
        return try await jobClaims.run(name, body)
    }
}
