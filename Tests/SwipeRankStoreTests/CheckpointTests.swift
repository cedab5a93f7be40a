import Foundation
import GRDB
import Testing
@testable import SwipeRankStore

/// The SQLite store checkpoints from its own thread (`CheckpointPolicy`): under writes that keep
/// coming, the write-ahead log must still restart (stay bounded), every committed append must
/// be there, and the writer itself must never checkpoint on commit.
@Suite("SQLite checkpoints off the commit path")
struct CheckpointTests {
    /// How many times the write-ahead log at `path` has restarted: SQLite counts them in the
    /// log's header (the checkpoint sequence number, big-endian at byte 12). Nil without a log.
    static func walRestarts(_ path: String) -> UInt32? {
        guard let handle = FileHandle(forReadingAtPath: path + "-wal") else { return nil }
        defer { try? handle.close() }
        guard let header = try? handle.read(upToCount: 16), header.count == 16 else { return nil }
        return header[12..<16].reduce(0) { $0 << 8 | UInt32($1) }
    }

    @Test("continuous concurrent appends: the log restarts and stays bounded, nothing is lost")
    func boundedLog() async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("swiperank-ckpt-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("db.sqlite").path
        let policy = CheckpointPolicy(interval: .milliseconds(5), restartBytes: 256 << 10, forceRestartBytes: 1 << 20)
        let store = try SQLiteStore(path: path, checkpoints: policy)
        let payload = Data(repeating: UInt8(ascii: "x"), count: 1_500)   // a served deck's size
        let students = 8, appends = 150
        _ = try await store.append([StoredEvent(kind: .profile, payload: Data("p".utf8), createdAt: 0)], to: "warm-up",
                                   expectedVersion: 0, update: StudentUpdate(profile: Data("p".utf8)))
        let restartsBefore = Self.walRestarts(path) ?? 0
        let largestLog = try await withThrowingTaskGroup(of: Int.self) { group in
            for s in 0..<students {
                group.addTask {
                    _ = try await store.append([StoredEvent(kind: .profile, payload: Data("p".utf8), createdAt: 0)], to: "s\(s)",
                                               expectedVersion: 0, update: StudentUpdate(profile: Data("p".utf8)))
                    for i in 1...appends {
                        let outcome = try await store.append([StoredEvent(kind: .served, payload: payload, createdAt: Int64(i))],
                                                             to: "s\(s)", expectedVersion: i, update: StudentUpdate())
                        #expect(outcome == .appended(version: i + 1))
                    }
                    return 0
                }
            }
            // Watch the log's size while the writers run (bounded: until they are done).
            group.addTask {
                var largest = 0
                for _ in 0..<2_000 {
                    let size = (try? FileManager.default.attributesOfItem(atPath: path + "-wal")[.size] as? Int) ?? 0
                    largest = max(largest, size)
                    try await Task.sleep(for: .milliseconds(2))
                    if store.checkpointer.counts.withLock({ $0.restarts }) >= 3 { break }
                }
                return largest
            }
            return try await group.reduce(0, max)
        }
        // The log restarted: either the thread's restart pass ran, or the writers restarted it
        // themselves at a commit that found every frame copied (which is how it keeps up when the
        // thread is fast; the log header counts those). Which of the two, and when, depends on
        // scheduling (the thread runs at nice +10): once the writes stop, a pass restarts a log
        // still past the restart size, so this is awaited, bounded, not assumed by a deadline.
        // 1,200 appends of 1.5 KB cannot fit in a 1 MiB log without one.
        func restarted() -> Bool {
            store.checkpointer.counts.withLock { $0.restarts } > 0 || (Self.walRestarts(path) ?? 0) > restartsBefore
        }
        let deadline = ContinuousClock.now + .seconds(120)
        while !restarted(), ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(5)) }
        let counts = store.checkpointer.counts.withLock { $0 }
        #expect(counts.background > 0 && restarted(), "\(counts), header restarts \(Self.walRestarts(path).map(String.init) ?? "none") from \(restartsBefore)")
        #if os(Linux)
        // The copying ran on the checkpoint thread, behind requests (GRDB's call ran it there).
        #expect(store.checkpointer.lastPassNice.load(ordering: .relaxed) == 10)
        #endif
        // The log may pass the restart size by what arrives while the thread catches up, never
        // by much past the forced restart.
        #expect(largestLog < 4 << 20, "the log reached \(largestLog) bytes")
        for s in 0..<students {
            #expect(try await store.student("s\(s)")?.version == appends + 1)
            let events = try await store.events(of: "s\(s)", after: 0, kinds: [.served], limit: 1_000)
            #expect(events.count == appends && events.allSatisfy { $0.payload == payload })
        }
    }

    @Test("the writer never checkpoints on commit; a pass after the writes restarts the log")
    func noAutomaticCheckpoint() async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("swiperank-ckpt-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("db.sqlite").path
        // An interval far longer than the test: only the pass this test runs.
        let store = try SQLiteStore(path: path, checkpoints: CheckpointPolicy(interval: .seconds(3_600), restartBytes: 1 << 20))
        #expect(try await store.pool.write { try Int.fetchOne($0, sql: "PRAGMA wal_autocheckpoint") } == 0)
        _ = try await store.append([StoredEvent(kind: .profile, payload: Data("p".utf8), createdAt: 0)], to: "a",
                                   expectedVersion: 0, update: StudentUpdate(profile: Data("p".utf8)))
        for i in 1...600 {
            _ = try await store.append([StoredEvent(kind: .served, payload: Data(repeating: 7, count: 9_000), createdAt: Int64(i))],
                                       to: "a", expectedVersion: i, update: StudentUpdate())
        }
        // SQLite's own checkpoint would have restarted the log at 1,000 pages (4 MiB), keeping
        // the file near that size; without it the log holds every frame written.
        let size = try FileManager.default.attributesOfItem(atPath: path + "-wal")[.size] as? Int ?? 0
        #expect(size > 6 << 20, "log of \(size) bytes")
        #expect(store.checkpointer.counts.withLock { $0.restarts } == 0)
        store.checkpointer.checkpointOnce()
        #expect(store.checkpointer.counts.withLock { $0.restarts } == 1, "nothing writes now: the passes find a pause at once")
        _ = try await store.append([StoredEvent(kind: .served, payload: Data("after".utf8), createdAt: 601)], to: "a",
                                   expectedVersion: 601, update: StudentUpdate())
        #expect(try await store.student("a")?.version == 602)
        #expect(try await store.events(of: "a", after: 0, kinds: [.served], limit: 1_000).count == 601)
    }
}
