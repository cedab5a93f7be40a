import Foundation
import Logging
import ServiceLifecycle
import SwipeRank
import SwipeRankStore
import Synchronization

/// The stored history of a student does not replay exactly on this engine (another catalog,
/// population model or configuration): the student is migrated.
struct RebuildMismatch: Error {
    var reason: String
}

/// What migration has done since the service started: `/health` reports it.
final class MigrationLedger: Sendable {
    /// The most failed student ids remembered (the count goes on).
    static let maxFailedIDs = 100

    struct State: Sendable {
        var migrated = 0
        var failedIDs: [String] = []
        var failures = 0
        var sweep = SweepState()
    }

    /// The background sweep's progress.
    struct SweepState: Sendable, Encodable {
        var state = "idle"
        var scanned = 0
        var migrated = 0
        var failed = 0
    }

    private let state = Mutex(State())

    func recordMigrated(_ studentID: String) {
        state.withLock { s in
            s.migrated += 1
            if let i = s.failedIDs.firstIndex(of: studentID) {
                s.failedIDs.remove(at: i)
                s.failures -= 1
            }
        }
    }

    func recordFailed(_ studentID: String) {
        state.withLock { s in
            guard !s.failedIDs.contains(studentID) else { return }
            s.failures += 1
            if s.failedIDs.count < Self.maxFailedIDs { s.failedIDs.append(studentID) }
        }
    }

    func updateSweep(_ body: (inout SweepState) -> Void) { state.withLock { body(&$0.sweep) } }

    var snapshot: State { state.withLock { $0 } }
}

extension StudentService {
    /// Carries a student over to this engine from the log (the truth): a fresh session on the
    /// current profile, the swipes and saves before it carried over, then every later event fed
    /// through `SessionMigration` — served cards kept where their items still exist, swipes and
    /// saves replayed on the current features (retired, still counted, where the item left),
    /// feedback answers applied where the new session asks the same question. The result is
    /// stored as a snapshot at the student's version, so the next rebuild restores it exactly.
    ///
    /// - Throws: `APIError.server` when the store fails; 503 `STUDENT_UNAVAILABLE` when the
    ///   history cannot be carried over (recorded for `/health`; other students are unaffected).
    func migrate(_ record: StudentRecord, reason: String) async throws -> LiveStudent<M> {
        let id = record.studentID
        let migration: SessionMigration<M>
        do {
            let profile = try M.decodeProfile(json: record.profile, source: "stored profile")
            var m = SessionMigration(session: try engine(for: id).session(studentID: id, profile: profile,
                                                                 seed: seed(id, record.profileVersion)))
            for event in try await allEvents(id, after: 0, through: record.profileVersion - 1, kinds: [.swipe, .save]) {
                try carryOver(event, into: &m)
            }
            for event in try await allEvents(id, after: record.profileVersion, through: record.version, kinds: nil) {
                try migrateEvent(event, into: &m)
            }
            migration = m
        } catch let error as APIError {
            throw error  // the store failed; nothing about the student is known to be wrong
        } catch {
            migrations.recordFailed(id)
            logger.error("a student cannot be migrated to this catalog or model",
                         metadata: ["student": "\(id)", "reason": "\(reason)", "error": "\(error)"])
            throw APIError(.serviceUnavailable, code: "STUDENT_UNAVAILABLE",
                           message: "this student's stored history cannot be carried over to the current catalog or model; the operator sees it in /health",
                           details: ["resource": .string("student")])
        }
        let session = migration.session
        var updated = record
        var saved = false
        if let data = try? session.snapshot().jsonData(),
           (try? await store.saveSnapshot(data, for: id, version: record.version, createdAt: record.createdAt)) == true {
            updated.snapshot = data
            updated.snapshotVersion = record.version
            saved = true
        }
        migrations.recordMigrated(id)
        let report = migration.report
        logger.info("student migrated to this catalog or model", metadata: [
            "student": "\(id)", "reason": "\(reason.prefix(200))", "served_kept": "\(report.servedKept)",
            "served_dropped": "\(report.servedDropped)", "swipes_replayed": "\(report.swipesReplayed)",
            "retired": "\(report.retired)", "feedback_dropped": "\(report.feedbackDropped)",
        ])
        return LiveStudent(session: session, record: updated, snapshotHistory: saved ? session.served.count + session.totalSwipes : 0)
    }

    /// A swipe or save from before the current profile, judged again under it (retired when
    /// its item left the catalog).
    func carryOver(_ event: StoredEvent, into migration: inout SessionMigration<M>) throws {
        switch event.kind {
        case .swipe:
            try migration.judgement(try JSONDecoder().decode(SwipeRequest.self, from: event.payload).swipe, weight: 1)
        case .save:
            try migration.judgement(try JSONDecoder().decode(SavePayload.self, from: event.payload).judgement, weight: options.saveWeight)
        default:
            break
        }
    }

    private func migrateEvent(_ event: StoredEvent, into migration: inout SessionMigration<M>) throws {
        switch event.kind {
        case .served:
            let deck = try JSONDecoder().decode(ServedPayload.self, from: event.payload)
            for card in deck.cards {
                migration.served(cardID: card.cardID, position: card.position, isProbe: card.isProbe,
                                 propensity: card.propensity, predictedMatch: card.predictedMatch)
            }
        case .swipe:
            try migration.swipe(try JSONDecoder().decode(SwipeRequest.self, from: event.payload).swipe)
        case .feedback:
            let answer = try JSONDecoder().decode(FeedbackPayload.self, from: event.payload)
            migration.feedback(cardID: answer.itemID, options: answer.options)
        case .save:
            try migration.judgement(try JSONDecoder().decode(SavePayload.self, from: event.payload).judgement, weight: options.saveWeight)
        default:
            // A kind a newer version wrote: not evidence this version can use.
            break
        }
    }

    /// Whether the student's stored snapshot restores on this engine as it is (same catalog,
    /// same learning digest, not older than the profile): the sweep skips such students.
    func isCurrent(_ record: StudentRecord) -> Bool {
        guard let data = record.snapshot, record.snapshotVersion >= record.profileVersion,
              let header = try? JSONDecoder().decode(SnapshotHeader.self, from: data) else { return false }
        let engine = engine(for: record.studentID)
        return header.catalogFingerprint == engine.catalogFingerprint && header.configurationDigest == engine.learningDigest
    }

    /// Brings one stored student onto this engine if needed, under the student's lock and
    /// without touching the cache (a sweep must not evict the sessions being served).
    ///
    /// - Returns: Whether the student was migrated; nil when it was already current (or live).
    func sweep(_ studentID: String) async throws -> Bool? {
        try await locks.withLock(studentID) {
            guard !cache.contains(studentID),
                  let record = try await storeCall({ try await self.store.student(studentID) }),
                  !isCurrent(record) else { return nil }
            // Asked of this rebuild, not read off the shared counter: requests migrate other
            // students meanwhile.
            return try await rebuildReporting(record).migrated
        }
    }
}

/// The two fields of a stored snapshot that say which engine it was taken on.
private struct SnapshotHeader: Decodable {
    var catalogFingerprint: String?
    var configurationDigest: String?
}

/// Walks every stored student once at start-up and migrates those whose snapshot was taken on
/// another catalog or model, one at a time (a bounded background load: requests keep their
/// latency), so students who come back later find their state ready. A student who fails is
/// counted in `/health` and skipped; the sweep goes on.
struct MigrationSweepService<M: ServableMatcher>: Sendable, Service {
    /// The current catalog version's student service (asked again for every student: an edit
    /// while the sweep runs moves it on to the new version).
    let students: @Sendable () -> StudentService<M>
    /// Students read per page of ids.
    var pageSize = 200

    func run() async throws {
        await cancelWhenGracefulShutdown { await sweepAll() }
        // A service that returns early would end the application: wait for its shutdown.
        try? await gracefulShutdown()
    }

    /// One pass over every stored student.
    func sweepAll() async {
        let ledger = students().migrations
        ledger.updateSweep { $0.state = "running" }
        var after: String?
        do {
            while !Task.isCancelled {
                let ids = try await students().store.studentIDs(after: after, limit: pageSize)
                for id in ids {
                    if Task.isCancelled { break }
                    var migrated: Bool?
                    var failed = false
                    do { migrated = try await students().sweep(id) } catch { failed = true }
                    ledger.updateSweep { s in
                        s.scanned += 1
                        if migrated == true { s.migrated += 1 }
                        if failed { s.failed += 1 }
                    }
                    after = id
                    await Task.yield()
                }
                if ids.count < pageSize { break }
            }
            ledger.updateSweep { $0.state = Task.isCancelled ? "stopped" : "done" }
        } catch {
            students().logger.error("the migration sweep stopped", metadata: ["error": "\(error)"])
            ledger.updateSweep { $0.state = "failed" }
        }
    }
}
