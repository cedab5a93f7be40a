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
}
