import Foundation
import SwipeRankStore
import Testing

/// The app-event half of the store contract, and student listing, on every store.
@Suite struct AppEventStoreConformanceTests {
    typealias Kind = StoreConformanceTests.Kind

    static func event(_ id: String, at: Int64 = 10) -> AppEvent {
        AppEvent(eventID: id, type: "custom", payload: #"{"name":"\#(id)"}"#, occurredAt: at - 1, receivedAt: at)
    }

    @Test("appends are idempotent by event id, read back in order after a cursor, purged by age, erased with the student",
          arguments: Kind.available)
    func appEvents(kind: Kind) async throws {
        let (store, done) = try await StoreConformanceTests.make(kind)
        defer { done() }
        #expect(try await store.appendAppEvents([Self.event("a", at: 10), Self.event("b", at: 20), Self.event("a", at: 30)], for: "s") == 2)
        #expect(try await store.appendAppEvents([Self.event("b"), Self.event("c", at: 40)], for: "s") == 1)
        #expect(try await store.appendAppEvents([Self.event("a", at: 50)], for: "t") == 1)
        let all = try await store.appEvents(of: "s", after: 0, limit: 10)
        #expect(all.map(\.eventID) == ["a", "b", "c"])
        #expect(all.map(\.seq) == all.map(\.seq).sorted() && Set(all.map(\.seq)).count == 3)
        #expect(all[0].payload == #"{"name":"a"}"# && all[0].receivedAt == 10 && all[0].occurredAt == 9 && all[0].type == "custom")
        #expect(try await store.appEvents(of: "s", after: all[0].seq, limit: 1).map(\.eventID) == ["b"])
        #expect(try await store.appEvents(of: "s", after: all[2].seq, limit: 10).isEmpty)
        #expect(try await store.purgeAppEvents(receivedBefore: 25) == 2)
        #expect(try await store.appEvents(of: "s", after: 0, limit: 10).map(\.eventID) == ["c"])
        // An id whose event was purged is new again.
        #expect(try await store.appendAppEvents([Self.event("a", at: 60)], for: "s") == 1)
        #expect(try await store.appEvents(of: "s", after: 0, limit: 10).map(\.eventID) == ["c", "a"])
        // Erasing a student without a profile still removes their events.
        #expect(try await store.deleteStudent("t"))
        #expect(try await store.appEvents(of: "t", after: 0, limit: 10).isEmpty)
    }

    @Test("student ids page in byte order", arguments: Kind.available)
    func studentIDs(kind: Kind) async throws {
        let (store, done) = try await StoreConformanceTests.make(kind)
        defer { done() }
        let ids = ["b", "a", "B", "a2", "é", "z"]
        for id in ids {
            _ = try await store.append([StoreConformanceTests.event(.profile, "p")], to: id, expectedVersion: 0,
                                       update: StudentUpdate(profile: Data("p".utf8)))
        }
        var seen: [String] = []
        var after: String?
        while true {
            let page = try await store.studentIDs(after: after, limit: 4)
            guard let last = page.last else { break }
            seen += page
            after = last
        }
        #expect(seen == ids.sorted { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) })
    }
}
