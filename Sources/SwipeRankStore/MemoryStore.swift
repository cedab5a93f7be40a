import Foundation
import Synchronization

/// A `StudentStore` and `GroupStore` in memory: the reference implementation the conformance suite checks the
/// others against, and the store of router tests. Nothing survives the process.
public final class MemoryStore: StudentStore {
    private struct Student {
        var record: StudentRecord
        var events: [StoredEvent]
        var byClientID: [EventKind: [String: Int]]
    }

    private let students = Mutex<[String: Student]>([:])
    let groupTable = MemoryGroups()
    let appEventTable = MemoryAppEvents()
    let catalogTable = Mutex<[CatalogChange]>([])
    /// Models by kind, oldest first (`ModelRegistry`).
    let modelTable = Mutex<[String: [StoredModel]]>([:])
    let jobClaims = JobClaims()

    /// Creates an empty store.
    public init() {}

    /// See `StudentStore.student(_:)`.
    ///
    /// - Parameter studentID: The student.
    public func student(_ studentID: String) async throws(StoreError) -> StudentRecord? {
        students.withLock { $0[studentID]?.record }
    }

    /// See `StudentStore.studentVersion(_:)`.
    ///
    /// - Parameter studentID: The student.
    public func studentVersion(_ studentID: String) async throws(StoreError) -> Int? {
        students.withLock { $0[studentID]?.record.version }
    }

    /// See `StudentStore.events(of:after:kinds:limit:)`.
    ///
    /// - Parameters:
    ///   - studentID: The student.
    ///   - after: Exclusive lower bound.
    ///   - kinds: Kinds wanted, nil for all.
    ///   - limit: At most this many.
    /// - Complexity: O(events after `after`).
    public func events(of studentID: String, after: Int, kinds: Set<EventKind>?, limit: Int) async throws(StoreError) -> [StoredEvent] {
        students.withLock { all in
            guard let s = all[studentID], after < s.events.count else { return [] }
            var out: [StoredEvent] = []
            for e in s.events[max(0, after)...] where kinds?.contains(e.kind) ?? true {
                out.append(e)
                if out.count == limit { break }
            }
            return out
        }
    }

    /// See `StudentStore.event(of:kind:clientID:)`.
    ///
    /// - Parameters:
    ///   - studentID: The student.
    ///   - kind: The kind.
    ///   - clientID: The client id.
    public func event(of studentID: String, kind: EventKind, clientID: String) async throws(StoreError) -> StoredEvent? {
        students.withLock { all in
            guard let s = all[studentID], let seq = s.byClientID[kind]?[clientID] else { return nil }
            return s.events[seq - 1]
        }
    }

    /// See `StudentStore.append(_:to:expectedVersion:update:)`.
    ///
    /// - Parameters:
    ///   - events: The events.
    ///   - studentID: The student.
    ///   - expectedVersion: The version read.
    ///   - update: Profile and snapshot changes.
    public func append(_ events: [StoredEvent], to studentID: String, expectedVersion: Int,
                       update: StudentUpdate) async throws(StoreError) -> AppendOutcome {
        precondition(!events.isEmpty, "append needs at least one event")
        return students.withLock { all -> AppendOutcome in
            var s: Student
            if let existing = all[studentID] {
                s = existing
            } else {
                guard expectedVersion == 0, let profile = update.profile else { return .conflict }
                let now = events[0].createdAt
                s = Student(record: StudentRecord(studentID: studentID, profile: profile, version: 0, profileVersion: 0,
                                                  snapshot: nil, snapshotVersion: 0, createdAt: now, updatedAt: now),
                            events: [], byClientID: [:])
            }
            guard s.record.version == expectedVersion else { return .conflict }
            var seen = Set<String>()
            for e in events {
                if let id = e.clientID {
                    guard s.byClientID[e.kind]?[id] == nil, seen.insert("\(e.kind.rawValue)\u{0}\(id)").inserted else { return .conflict }
                }
            }
            var version = expectedVersion
            var profileVersion: Int?
            for var e in events {
                version += 1
                e.seq = version
                if let id = e.clientID { s.byClientID[e.kind, default: [:]][id] = version }
                if e.kind == .profile && profileVersion == nil { profileVersion = version }
                s.events.append(e)
            }
            s.record.version = version
            s.record.updatedAt = events[events.count - 1].createdAt
            if let profile = update.profile {
                s.record.profile = profile
                s.record.profileVersion = profileVersion ?? version
            }
            if let snapshot = update.snapshot {
                s.record.snapshot = snapshot
                s.record.snapshotVersion = version
            }
            all[studentID] = s
            return .appended(version: version)
        }
    }

    /// See `StudentStore.saveSnapshot(_:for:version:createdAt:)`.
    ///
    /// - Parameters:
    ///   - data: The snapshot.
    ///   - studentID: The student.
    ///   - version: Its version.
    ///   - createdAt: The student's creation time as read.
    public func saveSnapshot(_ data: Data, for studentID: String, version: Int, createdAt: Int64) async throws(StoreError) -> Bool {
        students.withLock { all in
            guard var s = all[studentID], s.record.createdAt == createdAt, s.record.version >= version,
                  s.record.profileVersion <= version, s.record.snapshot == nil || s.record.snapshotVersion <= version else { return false }
            s.record.snapshot = data
            s.record.snapshotVersion = version
            all[studentID] = s
            return true
        }
    }

    /// See `StudentStore.deleteStudent(_:)`.
    ///
    /// - Parameter studentID: The student.
    public func deleteStudent(_ studentID: String) async throws(StoreError) -> Bool {
        let events = appEventTable.logs.withLock { $0.removeValue(forKey: studentID) != nil }
        return students.withLock { $0.removeValue(forKey: studentID) != nil } || events
    }

    /// See `StudentStore.studentIDs(after:limit:)`.
    ///
    /// - Parameters:
    ///   - after: Exclusive lower bound.
    ///   - limit: At most this many.
    /// - Complexity: O(n log n) over all students.
    public func studentIDs(after: String?, limit: Int) async throws(StoreError) -> [String] {
        // Byte order, as the SQL stores compare.
        func precedes(_ a: String, _ b: String) -> Bool { a.utf8.lexicographicallyPrecedes(b.utf8) }
        return students.withLock { all in
            Array(all.keys.filter { id in after.map { precedes($0, id) } ?? true }.sorted(by: precedes).prefix(max(0, limit)))
        }
    }

    /// Always answers.
    public func ping() async throws(StoreError) {}
}

/// Groups in memory: `MemoryStore` keeps them beside its students.
final class MemoryGroups: Sendable {
    let groups = Mutex<[String: GroupRecord]>([:])
    /// The webhook outbox (locked inside `groups` when written with a group update).
    let deliveries = Mutex<[String: WebhookDelivery]>([:])
    init() {}
}

extension MemoryStore: GroupStore {
    /// See `GroupStore.createGroup(_:)`.
    ///
    /// - Parameter group: The group.
    public func createGroup(_ group: GroupRecord) async throws(StoreError) -> Bool {
        groupTable.groups.withLock { all in
            guard all[group.groupID] == nil, !all.values.contains(where: { $0.inviteCode == group.inviteCode }) else { return false }
            var stored = group
            stored.version = 1
            stored.members.sort()
            all[group.groupID] = stored
            return true
        }
    }

    /// See `GroupStore.group(_:)`.
    ///
    /// - Parameter groupID: The id.
    public func group(_ groupID: String) async throws(StoreError) -> GroupRecord? {
        groupTable.groups.withLock { $0[groupID] }
    }

    /// See `GroupStore.group(inviteCode:)`.
    ///
    /// - Parameter inviteCode: The code.
    /// - Complexity: O(groups).
    public func group(inviteCode: String) async throws(StoreError) -> GroupRecord? {
        groupTable.groups.withLock { all in all.values.first { $0.inviteCode == inviteCode } }
    }

    /// See `GroupStore.updateGroup(_:expectedVersion:)`.
    ///
    /// - Parameters:
    ///   - group: The new record.
    ///   - expectedVersion: The version read.
    public func updateGroup(_ group: GroupRecord, expectedVersion: Int) async throws(StoreError) -> AppendOutcome {
        groupTable.groups.withLock { all in
            guard let current = all[group.groupID], current.version == expectedVersion else { return .conflict }
            var stored = group
            stored.version = expectedVersion + 1
            stored.members.sort()
            stored.inviteCode = current.inviteCode
            stored.createdAt = current.createdAt
            all[group.groupID] = stored
            return .appended(version: stored.version)
        }
    }

    /// See `GroupStore.groups(ofMember:status:limit:)`.
    ///
    /// - Parameters:
    ///   - studentID: The member.
    ///   - status: A status filter.
    ///   - limit: At most this many.
    /// - Complexity: O(groups log groups).
    public func groups(ofMember studentID: String, status: String?, limit: Int) async throws(StoreError) -> [GroupRecord] {
        groupTable.groups.withLock { all in
            Array(all.values.filter { $0.members.contains(studentID) && (status == nil || $0.status == status) }
                .sorted { $0.createdAt != $1.createdAt ? $0.createdAt > $1.createdAt : $0.groupID > $1.groupID }
                .prefix(max(0, limit)))
        }
    }
}

/// App events in memory: `MemoryStore` keeps them beside its students.
final class MemoryAppEvents: Sendable {
    struct Log {
        var events: [AppEvent] = []
        var ids: Set<String> = []
        var lastSeq = 0
    }
    let logs = Mutex<[String: Log]>([:])
    init() {}
}

extension MemoryStore: AppEventLog {
    /// See `AppEventLog.appendAppEvents(_:for:)`.
    ///
    /// - Parameters:
    ///   - events: The events.
    ///   - studentID: The student.
    public func appendAppEvents(_ events: [AppEvent], for studentID: String) async throws(StoreError) -> Int {
        appEventTable.logs.withLock { all in
            var log = all[studentID] ?? MemoryAppEvents.Log()
            var added = 0
            for var event in events where log.ids.insert(event.eventID).inserted {
                log.lastSeq += 1
                event.seq = log.lastSeq
                log.events.append(event)
                added += 1
            }
            all[studentID] = log
            return added
        }
    }

    /// See `AppEventLog.appEvents(of:after:limit:)`.
    ///
    /// - Parameters:
    ///   - studentID: The student.
    ///   - after: The cursor.
    ///   - limit: At most this many.
    public func appEvents(of studentID: String, after: Int, limit: Int) async throws(StoreError) -> [AppEvent] {
        appEventTable.logs.withLock { all in Array((all[studentID]?.events ?? []).filter { $0.seq > after }.prefix(max(0, limit))) }
    }

    /// See `AppEventLog.purgeAppEvents(receivedBefore:)`.
    ///
    /// - Parameter time: The cut-off.
    public func purgeAppEvents(receivedBefore time: Int64) async throws(StoreError) -> Int {
        appEventTable.logs.withLock { all in
            var removed = 0
            for key in all.keys {
                let before = all[key]!.events.count
                all[key]!.events.removeAll { $0.receivedAt < time }
                all[key]!.ids = Set(all[key]!.events.map(\.eventID))  // a purged id is new again, as in SQL
                removed += before - all[key]!.events.count
            }
            return removed
        }
    }
}

extension MemoryStore: CatalogLog {
    /// See `CatalogLog.catalogSequence()`.
    public func catalogSequence() async throws(StoreError) -> Int { catalogTable.withLock { $0.count } }

    /// See `CatalogLog.catalogChanges(after:limit:)`.
    ///
    /// - Parameters:
    ///   - after: Exclusive lower bound.
    ///   - limit: At most this many.
    public func catalogChanges(after: Int, limit: Int) async throws(StoreError) -> [CatalogChange] {
        catalogTable.withLock { log in Array(log.dropFirst(max(0, after)).prefix(max(1, limit))) }
    }

    /// See `CatalogLog.appendCatalogChanges(_:expectedSequence:)`.
    ///
    /// - Parameters:
    ///   - changes: The changes.
    ///   - expectedSequence: The sequence the caller read.
    public func appendCatalogChanges(_ changes: [CatalogChange], expectedSequence: Int) async throws(StoreError) -> Int? {
        catalogTable.withLock { log in
            guard log.count == expectedSequence else { return nil }
            for change in changes {
                var stored = change
                stored.seq = log.count + 1
                log.append(stored)
            }
            return log.count
        }
    }
}

extension MemoryStore: WebhookOutbox {
    /// See `WebhookOutbox.updateGroup(_:expectedVersion:enqueuing:)`.
    ///
    /// - Parameters:
    ///   - group: The new record.
    ///   - expectedVersion: The version read.
    ///   - deliveries: Stored with it.
    public func updateGroup(_ group: GroupRecord, expectedVersion: Int, enqueuing deliveries: [WebhookDelivery]) async throws(StoreError)
        -> AppendOutcome {
        groupTable.groups.withLock { all in
            guard let current = all[group.groupID], current.version == expectedVersion else { return .conflict }
            var stored = group
            stored.version = expectedVersion + 1
            stored.members.sort()
            stored.inviteCode = current.inviteCode
            stored.createdAt = current.createdAt
            all[group.groupID] = stored
            groupTable.deliveries.withLock { outbox in
                for delivery in deliveries where outbox[delivery.id] == nil { outbox[delivery.id] = delivery }
            }
            return .appended(version: stored.version)
        }
    }

    /// See `WebhookOutbox.claimWebhookDeliveries(now:leaseUntil:limit:)`.
    ///
    /// - Parameters:
    ///   - now: The time.
    ///   - leaseUntil: The lease's end.
    ///   - limit: At most this many.
    public func claimWebhookDeliveries(now: Int64, leaseUntil: Int64, limit: Int) async throws(StoreError) -> [WebhookDelivery] {
        groupTable.deliveries.withLock { outbox in
            let due = outbox.values.filter { $0.status == .pending && $0.nextAttemptAt <= now }
                .sorted { ($0.nextAttemptAt, $0.id) < ($1.nextAttemptAt, $1.id) }.prefix(max(0, limit))
            return due.map { delivery in
                var leased = delivery
                leased.nextAttemptAt = leaseUntil
                outbox[delivery.id] = leased
                return leased
            }
        }
    }

    /// See `WebhookOutbox.recordWebhookAttempt(_:)`.
    ///
    /// - Parameter delivery: The delivery as it now is.
    public func recordWebhookAttempt(_ delivery: WebhookDelivery) async throws(StoreError) {
        groupTable.deliveries.withLock { outbox in
            guard outbox[delivery.id] != nil else { return }
            outbox[delivery.id] = delivery
        }
    }

    /// See `WebhookOutbox.webhookDeliveries(status:limit:)`.
    ///
    /// - Parameters:
    ///   - status: A filter.
    ///   - limit: At most this many.
    public func webhookDeliveries(status: WebhookDelivery.Status?, limit: Int) async throws(StoreError) -> [WebhookDelivery] {
        groupTable.deliveries.withLock { outbox in
            Array(outbox.values.filter { status == nil || $0.status == status }
                .sorted { ($0.createdAt, $0.id) > ($1.createdAt, $1.id) }.prefix(max(0, limit)))
        }
    }
}
