import Foundation
import SwipeRankStore
import Testing

/// The group half of the store contract, on every store.
@Suite struct GroupStoreConformanceTests {
    typealias Kind = StoreConformanceTests.Kind

    static func record(_ id: String, code: String, members: [String], status: String = "open", at: Int64 = 10) -> GroupRecord {
        GroupRecord(groupID: id, inviteCode: code, creatorID: members[0], status: status, members: members,
                    state: Data("state-\(id)".utf8), version: 0, createdAt: at, updatedAt: at)
    }

    @Test("create once per id and invite code; read by id, code and member", arguments: Kind.available)
    func createAndRead(kind: Kind) async throws {
        let (store, done) = try await StoreConformanceTests.make(kind)
        defer { done() }
        #expect(try await store.createGroup(Self.record("g1", code: "AAAA2222", members: ["b", "a"], at: 10)))
        #expect(try await store.createGroup(Self.record("g1", code: "BBBB3333", members: ["c"])) == false)
        #expect(try await store.createGroup(Self.record("g2", code: "AAAA2222", members: ["c"])) == false)
        #expect(try await store.createGroup(Self.record("g3", code: "CCCC4444", members: ["a"], at: 20)))
        let g1 = try #require(try await store.group("g1"))
        #expect(g1.version == 1 && g1.members == ["a", "b"] && g1.creatorID == "b" && g1.state == Data("state-g1".utf8))
        #expect(g1.createdAt == 10 && g1.inviteCode == "AAAA2222")
        #expect(try await store.group(inviteCode: "CCCC4444")?.groupID == "g3")
        #expect(try await store.group(inviteCode: "ZZZZ9999") == nil)
        #expect(try await store.group("nope") == nil)
        // Newest first; the status filter; the limit.
        #expect(try await store.groups(ofMember: "a", status: nil, limit: 10).map(\.groupID) == ["g3", "g1"])
        #expect(try await store.groups(ofMember: "a", status: nil, limit: 1).map(\.groupID) == ["g3"])
        #expect(try await store.groups(ofMember: "b", status: "closed", limit: 10).isEmpty)
        #expect(try await store.groups(ofMember: "c", status: nil, limit: 10).isEmpty)
    }

    @Test("updates are compare-and-set on the version and replace members and status", arguments: Kind.available)
    func compareAndSet(kind: Kind) async throws {
        let (store, done) = try await StoreConformanceTests.make(kind)
        defer { done() }
        #expect(try await store.createGroup(Self.record("g", code: "DDDD5555", members: ["a"])))
        var next = try #require(try await store.group("g"))
        next.members = ["a", "c", "b"]
        next.state = Data("v2".utf8)
        next.status = "matched"
        next.updatedAt = 99
        #expect(try await store.updateGroup(next, expectedVersion: 1) == .appended(version: 2))
        // The same stale writer again: nothing written.
        next.state = Data("stale".utf8)
        #expect(try await store.updateGroup(next, expectedVersion: 1) == .conflict)
        #expect(try await store.updateGroup(Self.record("missing", code: "EEEE6666", members: ["a"]), expectedVersion: 1) == .conflict)
        let stored = try #require(try await store.group("g"))
        #expect(stored.version == 2 && stored.state == Data("v2".utf8) && stored.status == "matched" && stored.updatedAt == 99)
        #expect(stored.members == ["a", "b", "c"] && stored.createdAt == 10 && stored.inviteCode == "DDDD5555")
        #expect(try await store.groups(ofMember: "c", status: "matched", limit: 5).map(\.groupID) == ["g"])
        #expect(try await store.groups(ofMember: "c", status: "open", limit: 5).isEmpty)
        next.members = ["a"]
        #expect(try await store.updateGroup(next, expectedVersion: 2) == .appended(version: 3))
        #expect(try await store.groups(ofMember: "c", status: nil, limit: 5).isEmpty)
    }

    @Test("racing writers at one version: exactly one wins", arguments: Kind.available)
    func racingWriters(kind: Kind) async throws {
        let (store, done) = try await StoreConformanceTests.make(kind)
        defer { done() }
        #expect(try await store.createGroup(Self.record("g", code: "FFFF7777", members: ["a"])))
        let base = try #require(try await store.group("g"))
        let outcomes = try await withThrowingTaskGroup(of: AppendOutcome.self) { tasks in
            for i in 0..<16 {
                var mine = base
                mine.state = Data("writer-\(i)".utf8)
                tasks.addTask { try await store.updateGroup(mine, expectedVersion: 1) }
            }
            return try await tasks.reduce(into: []) { $0.append($1) }
        }
        #expect(outcomes.filter { $0 == .appended(version: 2) }.count == 1)
        #expect(outcomes.filter { $0 == .conflict }.count == 15)
        #expect(try await store.group("g")?.version == 2)
    }
}

/// The webhook outbox, on every store: deliveries are written with the group change or not at
/// all, claimed under a lease, recorded, listed.
@Suite struct WebhookOutboxConformanceTests {
    typealias Kind = StoreConformanceTests.Kind

    static func delivery(_ id: String, at: Int64) -> WebhookDelivery {
        WebhookDelivery(id: id, event: "group.matched", payload: Data(#"{"id":"\#(id)"}"#.utf8), nextAttemptAt: at, createdAt: at)
    }

    @Test("stored with the group update (a conflicting update stores none); claimed once per lease; attempts recorded; listed newest first", arguments: Kind.available)
    func outbox(kind: Kind) async throws {
        let (store, done) = try await StoreConformanceTests.make(kind)
        defer { done() }
        #expect(try await store.createGroup(GroupStoreConformanceTests.record("g", code: "WWWW2222", members: ["a"])))
        var next = try #require(try await store.group("g"))
        next.status = "matched"
        // A stale version: the group is not written, and neither is its delivery.
        #expect(try await store.updateGroup(next, expectedVersion: 7, enqueuing: [Self.delivery("lost", at: 100)]) == .conflict)
        #expect(try await store.webhookDeliveries(status: nil, limit: 10).isEmpty)
        #expect(try await store.updateGroup(next, expectedVersion: 1, enqueuing: [Self.delivery("d1", at: 100), Self.delivery("d2", at: 200)])
                == .appended(version: 2))
        // The same id again is kept as it was.
        var again = Self.delivery("d1", at: 999)
        again.payload = Data("{}".utf8)
        #expect(try await store.updateGroup(next, expectedVersion: 2, enqueuing: [again]) == .appended(version: 3))
        #expect(try await store.webhookDeliveries(status: nil, limit: 10).map(\.id) == ["d2", "d1"])
        #expect(try await store.webhookDeliveries(status: nil, limit: 10).last?.payload == Data(#"{"id":"d1"}"#.utf8))

        // Due at 150: d1 only, leased until 1,150; a second claim meanwhile gets nothing.
        let first = try await store.claimWebhookDeliveries(now: 150, leaseUntil: 1_150, limit: 10)
        #expect(first.map(\.id) == ["d1"] && first[0].nextAttemptAt == 1_150 && first[0].status == .pending)
        #expect(try await store.claimWebhookDeliveries(now: 160, leaseUntil: 1_160, limit: 10).isEmpty)
        // After the lease (the sender died), d1 is due again; d2 (due earlier) comes first; the limit holds.
        #expect(try await store.claimWebhookDeliveries(now: 1_200, leaseUntil: 2_200, limit: 1).map(\.id) == ["d2"])
        #expect(try await store.claimWebhookDeliveries(now: 1_200, leaseUntil: 2_200, limit: 5).map(\.id) == ["d1"])
        var failed = first[0]
        failed.attempts = 1
        failed.lastStatus = 500
        failed.lastError = "HTTP 500"
        failed.nextAttemptAt = 5_000
        try await store.recordWebhookAttempt(failed)
        #expect(try await store.claimWebhookDeliveries(now: 2_300, leaseUntil: 3_300, limit: 10).map(\.id) == ["d2"])
        var delivered = try #require(try await store.webhookDeliveries(status: .pending, limit: 10).first { $0.id == "d1" })
        #expect(delivered.attempts == 1 && delivered.lastStatus == 500 && delivered.lastError == "HTTP 500")
        delivered.status = .delivered
        delivered.attempts = 2
        delivered.lastStatus = 204
        delivered.lastError = nil
        delivered.deliveredAt = 5_001
        try await store.recordWebhookAttempt(delivered)
        #expect(try await store.claimWebhookDeliveries(now: 9_000, leaseUntil: 9_999, limit: 10).map(\.id) == ["d2"])
        let done1 = try await store.webhookDeliveries(status: .delivered, limit: 10)
        #expect(done1.map(\.id) == ["d1"] && done1[0].deliveredAt == 5_001 && done1[0].lastError == nil && done1[0].lastStatus == 204)
        #expect(try await store.webhookDeliveries(status: .failed, limit: 10).isEmpty)
    }
}
