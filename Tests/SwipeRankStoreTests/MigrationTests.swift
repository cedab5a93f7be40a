import Foundation
import GRDB
@testable import SwipeRankStore
import Testing

@Suite struct MigrationTests {
    @Test("a database of the first schema (snapshot in the student row) opens with its snapshot, events and versions")
    func fromV1() async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("swiperank-migrate-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("db.sqlite").path
        do {
            // The file as the first release left it.
            let queue = try DatabaseQueue(path: path)
            try SQLiteStore.migrator.migrate(queue, upTo: "v1: students and their event log")
            try await queue.write { db in
                try db.execute(sql: """
                    INSERT INTO students (student_id, profile, version, profile_version, snapshot, snapshot_version, created_at, updated_at)
                    VALUES ('a', 'P', 3, 1, 'SNAP', 2, 10, 30), ('b', 'Q', 1, 1, NULL, 0, 5, 5);
                    INSERT INTO events (student_id, seq, kind, client_id, request_digest, payload, response, created_at)
                    VALUES ('a', 1, 'profile', NULL, NULL, 'P', NULL, 10), ('a', 2, 'served', NULL, NULL, 'D', NULL, 20),
                           ('a', 3, 'swipe', 's1', 'd1', 'S', 'R', 30), ('b', 1, 'profile', NULL, NULL, 'Q', NULL, 5);
                    """)
            }
        }
        let store = try SQLiteStore(path: path)
        let a = try #require(try await store.student("a"))
        #expect(a.snapshot == Data("SNAP".utf8) && a.snapshotVersion == 2 && a.version == 3 && a.profileVersion == 1)
        let b = try #require(try await store.student("b"))
        #expect(b.snapshot == nil && b.snapshotVersion == 0)
        #expect(try await store.event(of: "a", kind: .swipe, clientID: "s1")?.response == Data("R".utf8))
        // The migrated file takes appends and snapshots as a new one does.
        #expect(try await store.append([StoredEvent(kind: .served, payload: Data("D2".utf8), createdAt: 40)], to: "a",
                                       expectedVersion: 3, update: StudentUpdate(snapshot: Data("SNAP2".utf8))) == .appended(version: 4))
        let again = try #require(try await store.student("a"))
        #expect(again.snapshot == Data("SNAP2".utf8) && again.snapshotVersion == 4)
        #expect(try await store.deleteStudent("a"))
        #expect(try await store.student("a") == nil)
    }

    @Test("a database of schema v4 (the log keyed by student and seq, versions stored) keeps every event, version and time")
    func fromV4() async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("swiperank-migrate-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("db.sqlite").path
        var expected: [String: [(seq: Int, kind: String, client: String?, payload: String, created: Int64)]] = [:]
        for (s, student) in ["a", "b", "c"].enumerated() {
            for seq in 1...[3, 1, 40][s] {
                let kind = seq == 1 ? "profile" : seq % 3 == 0 ? "swipe" : "served"
                // A served deck's size, so rows overflowed the old layout.
                expected[student, default: []].append((seq, kind, kind == "swipe" ? "w\(seq)" : nil,
                                                       kind == "served" ? String(repeating: "d", count: 1_300) : "x\(seq)", Int64(10 + seq)))
            }
        }
        do {
            let queue = try DatabaseQueue(path: path)
            try SQLiteStore.migrator.migrate(queue, upTo: "v4: app events")
            try await queue.write { [expected] db in
                for (student, events) in expected {
                    try db.execute(sql: "INSERT INTO students (student_id, profile, version, profile_version, created_at, updated_at) VALUES (?, 'P', ?, 1, 10, ?)",
                                   arguments: [student, events.count, 10 + events.count])
                    for e in events {
                        try db.execute(sql: """
                            INSERT INTO events (student_id, seq, kind, client_id, request_digest, payload, response, created_at)
                            VALUES (?, ?, ?, ?, NULL, ?, NULL, ?)
                            """, arguments: [student, e.seq, e.kind, e.client, Data(e.payload.utf8), e.created])
                    }
                }
            }
        }
        let store = try SQLiteStore(path: path)
        for (student, events) in expected {
            let record = try #require(try await store.student(student))
            #expect(record.version == events.count && record.updatedAt == events.last!.created && record.createdAt == 10)
            let stored = try await store.events(of: student, after: 0, kinds: nil, limit: 1_000)
            #expect(stored.map(\.seq) == events.map(\.seq) && stored.map(\.kind.rawValue) == events.map(\.kind))
            #expect(stored.map { String(decoding: $0.payload, as: UTF8.self) } == events.map(\.payload))
            #expect(stored.map(\.clientID) == events.map(\.client) && stored.map(\.createdAt) == events.map(\.created))
        }
        #expect(try await store.event(of: "c", kind: .swipe, clientID: "w39")?.seq == 39)
        // Versions come from the log now: appends check and move them as before.
        #expect(try await store.append([StoredEvent(kind: .served, payload: Data("n".utf8), createdAt: 99)], to: "c",
                                       expectedVersion: 39, update: StudentUpdate()) == .conflict)
        #expect(try await store.append([StoredEvent(kind: .served, payload: Data("n".utf8), createdAt: 99)], to: "c",
                                       expectedVersion: 40, update: StudentUpdate()) == .appended(version: 41))
        let c = try #require(try await store.student("c"))
        #expect(c.version == 41 && c.updatedAt == 99)
        #expect(try await store.append([StoredEvent(kind: .swipe, clientID: "w3", payload: Data("again".utf8), createdAt: 100)], to: "c",
                                       expectedVersion: 41, update: StudentUpdate()) == .conflict, "a client id already taken")
        #expect(try await store.deleteStudent("a"))
        #expect(try await store.student("a") == nil)
        #expect(try await store.events(of: "a", after: 0, kinds: nil, limit: 10).isEmpty)
    }
}
