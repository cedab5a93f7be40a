import Foundation
import Synchronization

/// A `StudentStore` in memory: the reference implementation the conformance suite checks the
/// others against, and the store of router tests. Nothing survives the process.
public final class MemoryStore: StudentStore {
    private struct Student {
        var record: StudentRecord
        var events: [StoredEvent]
        var byClientID: [EventKind: [String: Int]]
    }

    private let students = Mutex<[String: Student]>([:])

    /// Creates an empty store.
    public init() {}

    /// See `StudentStore.student(_:)`.
    ///
    /// - Parameter studentID: The student.
    public func student(_ studentID: String) async throws(StoreError) -> StudentRecord? {
        students.withLock { $0[studentID]?.record }
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

    /// See `StudentStore.deleteStudent(_:)`.
    ///
    /// - Parameter studentID: The student.
    public func deleteStudent(_ studentID: String) async throws(StoreError) -> Bool {
        students.withLock { $0.removeValue(forKey: studentID) != nil }
    }

    /// Always answers.
    public func ping() async throws(StoreError) {}
}
