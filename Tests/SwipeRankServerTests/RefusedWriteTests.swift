import Foundation
import HTTPTypes
import SwipeRankNumerics
import SwipeRankStore
import Synchronization
import Testing

@testable import SwipeRankServer

/// A `MemoryStore` whose student appends fail while `refusing` is set, as a full disk or a lost
/// database connection would fail them; everything else is the memory store's.
final class RefusingStore: ServiceStore {
    let base = MemoryStore()
    let refusing = Atomic<Bool>(false)

    func append(_ events: [StoredEvent], to studentID: String, expectedVersion: Int, update: StudentUpdate) async throws(StoreError) -> AppendOutcome {
        if refusing.load(ordering: .relaxed) { throw StoreError("the disk is full") }
        return try await base.append(events, to: studentID, expectedVersion: expectedVersion, update: update)
    }

    func student(_ studentID: String) async throws(StoreError) -> StudentRecord? { try await base.student(studentID) }
    func studentVersion(_ studentID: String) async throws(StoreError) -> Int? { try await base.studentVersion(studentID) }
    func events(of studentID: String, after: Int, kinds: Set<EventKind>?, limit: Int) async throws(StoreError) -> [StoredEvent] {
        try await base.events(of: studentID, after: after, kinds: kinds, limit: limit)
    }
    func event(of studentID: String, kind: EventKind, clientID: String) async throws(StoreError) -> StoredEvent? {
        try await base.event(of: studentID, kind: kind, clientID: clientID)
    }
    func saveSnapshot(_ data: Data, for studentID: String, version: Int, createdAt: Int64) async throws(StoreError) -> Bool {
        try await base.saveSnapshot(data, for: studentID, version: version, createdAt: createdAt)
    }
    func deleteStudent(_ studentID: String) async throws(StoreError) -> Bool { try await base.deleteStudent(studentID) }
    func studentIDs(after: String?, limit: Int) async throws(StoreError) -> [String] { try await base.studentIDs(after: after, limit: limit) }
    func ping() async throws(StoreError) { try await base.ping() }
    func createGroup(_ group: GroupRecord) async throws(StoreError) -> Bool { try await base.createGroup(group) }
    func group(_ groupID: String) async throws(StoreError) -> GroupRecord? { try await base.group(groupID) }
    func group(inviteCode: String) async throws(StoreError) -> GroupRecord? { try await base.group(inviteCode: inviteCode) }
    func updateGroup(_ group: GroupRecord, expectedVersion: Int) async throws(StoreError) -> AppendOutcome {
        try await base.updateGroup(group, expectedVersion: expectedVersion)
    }
    func groups(ofMember studentID: String, status: String?, limit: Int) async throws(StoreError) -> [GroupRecord] {
        try await base.groups(ofMember: studentID, status: status, limit: limit)
    }
    func appendAppEvents(_ events: [AppEvent], for studentID: String) async throws(StoreError) -> Int {
        try await base.appendAppEvents(events, for: studentID)
    }
    func appEvents(of studentID: String, after: Int, limit: Int) async throws(StoreError) -> [AppEvent] {
        try await base.appEvents(of: studentID, after: after, limit: limit)
    }
    func purgeAppEvents(receivedBefore time: Int64) async throws(StoreError) -> Int { try await base.purgeAppEvents(receivedBefore: time) }
    func catalogSequence() async throws(StoreError) -> Int { try await base.catalogSequence() }
    func catalogChanges(after: Int, limit: Int) async throws(StoreError) -> [CatalogChange] { try await base.catalogChanges(after: after, limit: limit) }
    func appendCatalogChanges(_ changes: [CatalogChange], expectedSequence: Int) async throws(StoreError) -> Int? {
        try await base.appendCatalogChanges(changes, expectedSequence: expectedSequence)
    }
    func updateGroup(_ group: GroupRecord, expectedVersion: Int, enqueuing deliveries: [WebhookDelivery]) async throws(StoreError) -> AppendOutcome {
        try await base.updateGroup(group, expectedVersion: expectedVersion, enqueuing: deliveries)
    }
    func claimWebhookDeliveries(now: Int64, leaseUntil: Int64, limit: Int) async throws(StoreError) -> [WebhookDelivery] {
        try await base.claimWebhookDeliveries(now: now, leaseUntil: leaseUntil, limit: limit)
    }
    func recordWebhookAttempt(_ delivery: WebhookDelivery) async throws(StoreError) { try await base.recordWebhookAttempt(delivery) }
    func webhookDeliveries(status: WebhookDelivery.Status?, limit: Int) async throws(StoreError) -> [WebhookDelivery] {
        try await base.webhookDeliveries(status: status, limit: limit)
    }
    func latestModelVersion(kind: String) async throws(StoreError) -> Int { try await base.latestModelVersion(kind: kind) }
    func latestModel(kind: String) async throws(StoreError) -> StoredModel? { try await base.latestModel(kind: kind) }
    func putModel(kind: String, data: Data, createdAt: Int64) async throws(StoreError) -> Int {
        try await base.putModel(kind: kind, data: data, createdAt: createdAt)
    }
    func withExclusiveJob<T: Sendable>(_ name: String, _ body: @Sendable () async throws -> T) async throws -> T? {
        try await base.withExclusiveJob(name, body)
    }
}

/// The cached session is changed where it sits (`LiveBox`), so a write the store refuses must
/// leave nothing of itself in the cache: the service must answer afterwards exactly as a twin
/// service that never saw the refused requests.
@Suite struct RefusedWriteTests {
    /// One step of a random session: a deck (which deals and logs cards when few are open), or
    /// a swipe on one of the open cards; `refused` says whether the store refuses appends
    /// meanwhile. Swipe ids and timestamps come from `index`, so the twin's match.
    struct Step {
        var index: Int
        var deck: Int?  // a deck of this many cards, else a swipe
        var pick: Int
        var like: Bool
        var refused: Bool
    }

    @Test("requests whose append the store refuses leave the cached session as the store has it (seeded random sessions against a twin)",
          arguments: [1, 2, 3, 4] as [UInt64])
    func refusedWrites(seed: UInt64) async throws {
        var rng = SplitMix64(seed: seed)
        let steps = (0..<40).map { i in
            Step(index: i, deck: rng.next() % 3 == 0 ? Int(rng.next() % 5) + 1 : nil, pick: Int(rng.next() % 4),
                 like: rng.next() % 2 == 0, refused: rng.next() % 10 < 3)
        }
        let refusing = RefusingStore()
        let (subject, failed) = try await Self.play(steps, store: refusing, refusing: refusing)
        // The twin plays what the subject's store accepted: the steps that did not fail.
        let (twin, twinFailed) = try await Self.play(steps.filter { !failed.contains($0.index) }, store: MemoryStore(), refusing: nil)
        #expect(failed.count >= 3, "seed \(seed): only \(failed.count) writes were refused")
        #expect(twinFailed.isEmpty)
        #expect(subject.count == twin.count, "seed \(seed)")
        for (i, (a, b)) in zip(subject, twin).enumerated() {
            #expect(a == b, "seed \(seed), answer \(i): \(a) against the twin's \(b)")
        }
    }

    /// Plays `steps` on one student; returns every answer that was not a 500 (status and body,
    /// then the learning state, a deck of 5 and the export with the store accepting again)
    /// and the indices of the steps that failed.
    static func play(_ steps: [Step], store: any ServiceStore, refusing: RefusingStore?) async throws -> (answers: [String], failed: Set<Int>) {
        let result = Mutex<(answers: [String], failed: Set<Int>)>(([], []))
        try await Harness(store: store).run { c in
            try await c.createStudent("s")
            var open: [String] = []
            for step in steps {
                refusing?.refusing.store(step.refused, ordering: .relaxed)
                let reply: Reply
                if let count = step.deck {
                    reply = try await c.call(.get, "/student/recommendations?count=\(count)&fields=minimal", student: "s")
                    if reply.status == .ok {
                        open = (reply.json["recommendations"] as? [[String: Any]] ?? []).compactMap { $0["school_id"] as? String }
                    }
                } else {
                    guard !open.isEmpty else { continue }
                    let school = open[step.pick % open.count]
                    reply = try await c.swipe("s", id: "w\(step.index)", school: school, like: step.like, at: Int64(step.index))
                    if reply.status == .created { open.removeAll { $0 == school } }
                }
                if reply.status == .internalServerError {
                    #expect(step.refused, "a 500 from a store that did not refuse: \(String(decoding: reply.body, as: UTF8.self))")
                    result.withLock { _ = $0.failed.insert(step.index) }
                    continue
                }
                result.withLock { $0.answers.append("\(reply.status.code) \(String(decoding: reply.body, as: UTF8.self))") }
            }
            refusing?.refusing.store(false, ordering: .relaxed)
            for path in ["/student/learning-state", "/student/recommendations?count=5&fields=minimal", "/student/export"] {
                let reply = try await c.call(.get, path, student: "s")
                result.withLock { $0.answers.append("\(reply.status.code) \(path) \(String(decoding: reply.body, as: UTF8.self))") }
            }
        }
        return result.withLock { $0 }
    }
}
