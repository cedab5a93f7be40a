import Foundation
import Logging
import SwipeRank
import SwipeRankColleges
@testable import SwipeRankServer
import SwipeRankStore
import Testing

/// Issue 29, part 1: a restart on an edited catalog (rows added, values changed, rows removed)
/// or a new population model migrates every stored student instead of answering 500.
@Suite("Service: stored students across catalog versions")
struct MigrationRouteTests {
    static let schoolLines: [String] = lines("datasets/schools.csv")
    static let majorLines: [String] = lines("datasets/school_majors.csv")

    static func lines(_ path: String) -> [String] {
        let text = (try? String(contentsOf: Fixtures.root.appendingPathComponent(path), encoding: .utf8)) ?? ""
        return text.split(separator: "\n", omittingEmptySubsequences: true).map(String.init)
    }

    /// The shipped catalog without `removed`, with `changed` schools' tuition raised by 1 and
    /// `added` copies of the first school under new ids.
    static func engine(in dir: URL, removed: Set<String> = [], changed: Set<String> = [], added: Int = 0) throws -> SwipeEngine<SchoolMatcher> {
        func id(_ line: String) -> String { String(line.prefix(while: { $0 != "," })) }
        var schools = [schoolLines[0]]
        for line in schoolLines.dropFirst() where !removed.contains(id(line)) {
            guard changed.contains(id(line)) else { schools.append(line); continue }
            var fields = line.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
            // tuition_in_state is the 11th column (no quoted commas before it in this file).
            fields[10] = "\((Int(fields[10]) ?? 10_000) + 1)"
            schools.append(fields.joined(separator: ","))
        }
        for k in 0..<added {
            var fields = schoolLines[1].split(separator: ",", omittingEmptySubsequences: false).map(String.init)
            fields[0] = "\(990_000 + k)"
            fields[1] = "Added College \(k)"
            schools.append(fields.joined(separator: ","))
        }
        let majors = [majorLines[0]] + majorLines.dropFirst().filter { !removed.contains(id($0)) }
        let tag = UUID().uuidString
        let schoolsPath = dir.appendingPathComponent("schools-\(tag).csv").path
        let majorsPath = dir.appendingPathComponent("majors-\(tag).csv").path
        try (schools.joined(separator: "\n") + "\n").write(toFile: schoolsPath, atomically: true, encoding: .utf8)
        try (majors.joined(separator: "\n") + "\n").write(toFile: majorsPath, atomically: true, encoding: .utf8)
        return SwipeEngine(matcher: SchoolMatcher(schools: try SchoolCatalog(schoolsPath: schoolsPath, majorsPath: majorsPath)))
    }

    func temporaryDirectory() throws -> URL {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("swiperank-migration-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        return dir
    }

    /// What a student did on the first catalog.
    struct History: Sendable {
        var swiped: [String] = []
        var unswiped: [String] = []
        var saved: String?
        var total: Int { swiped.count + (saved == nil ? 0 : 1) }
    }

    /// Students s0…s(n−1): a profile, decks of 6, 3 + k % 5 swipes each, a save for every third.
    static func seed(_ c: Harness.Client, students n: Int) async throws -> [String: History] {
        var out: [String: History] = [:]
        for k in 0..<n {
            let id = "s\(k)"
            try await c.createStudent(id)
            var history = History()
            let deck = try await c.deck(id, count: 12)
            for (i, school) in deck.prefix(3 + k % 5).enumerated() {
                let reply = try await c.swipe(id, id: "\(id)-w\(i)", school: school, like: (i + k) % 2 == 0, at: Int64(i))
                #expect(reply.status == .created)
                history.swiped.append(school)
            }
            history.unswiped = Array(deck.dropFirst(3 + k % 5))
            if k % 3 == 0 {
                let school = try #require(history.unswiped.last)
                let reply = try await c.call(.post, "/student/schools/\(school)/save", student: id)
                #expect(reply.status == .created)
                history.saved = school
                history.unswiped.removeLast()
            }
            out[id] = history
        }
        return out
    }

    @Test("restart with rows added, values changed and rows removed: every student answers, swipe counts intact")
    func editedCatalog() async throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("db.sqlite").path
        let n = 12
        let box = Box<[String: History]>([:])
        try await Harness(store: try SQLiteStore(path: path)).run { c in box.value = try await Self.seed(c, students: n) }
        let histories = box.value
        // Remove a swiped school of s0, an unswiped one of s1 and s3's saved one; change two.
        let removed: Set<String> = [histories["s0"]!.swiped[1], histories["s1"]!.unswiped[0], histories["s3"]!.saved!]
        let changed: Set<String> = [histories["s2"]!.swiped[0], histories["s4"]!.swiped[2]]
        let edited = try Self.engine(in: dir, removed: removed, changed: changed, added: 3)
        #expect(edited.catalogFingerprint != Fixtures.engine.catalogFingerprint)

        try await Harness(store: try SQLiteStore(path: path), engine: edited).run { c in
            for k in 0..<n {
                let id = "s\(k)", history = histories[id]!
                let reply = try await c.call(.get, "/student/recommendations?count=5&fields=minimal", student: id)
                #expect(reply.status == .ok, "\(id): \(String(decoding: reply.body, as: UTF8.self))")
                #expect(reply.json["total_swipes"] as? Int == history.total, "\(id)")
                let deck = (reply.json["recommendations"] as? [[String: Any]] ?? []).compactMap { $0["school_id"] as? String }
                #expect(deck.count == 5 && removed.isDisjoint(with: deck) && Set(history.swiped).isDisjoint(with: deck), "\(id)")
                // A client retrying an acknowledged swipe still gets the stored answer.
                let retry = try await c.swipe(id, id: "\(id)-w0", school: history.swiped[0], like: k % 2 == 0, at: 0)
                #expect(retry.status == .ok && retry.headers[.idempotentReplayed] == "true", "\(id)")
                // A new swipe on a new card is learned from.
                let fresh = try await c.swipe(id, id: "\(id)-new", school: deck[0], like: true, at: 50)
                #expect(fresh.status == .created && fresh.json["total_swipes"] as? Int == history.total + 1, "\(id)")
            }
            // A swipe on a removed school: the error envelope, not a 500.
            let gone = try await c.swipe("s1", id: "s1-gone", school: histories["s1"]!.unswiped[0], like: true, at: 60)
            #expect(gone.status.code >= 400 && gone.status.code < 500 && gone.code != nil, "\(gone.status)")
            let health = try await c.call(.get, "/health")
            #expect(health.status == .ok && health.json["status"] as? String == "ok")
            let catalog = health.json["catalog"] as? [String: Any]
            #expect(catalog?["fingerprint"] as? String == edited.catalogFingerprint)
            #expect(catalog?["items"] as? Int == Fixtures.engine.matcher.catalog.count - 3 + 3)
            let migration = health.json["migration"] as? [String: Any]
            #expect(migration?["migrated"] as? Int == n && migration?["failed"] as? Int == 0)
        }
        // A third start on the same catalog: the migrated snapshots restore as they are.
        try await Harness(store: try SQLiteStore(path: path), engine: edited).run { c in
            for k in 0..<n {
                let reply = try await c.call(.get, "/student/learning-state", student: "s\(k)")
                #expect(reply.status == .ok)
            }
            let migration = try await c.call(.get, "/health").json["migration"] as? [String: Any]
            #expect(migration?["migrated"] as? Int == 0)
        }
    }

    @Test("one student whose history cannot be carried over answers 503, the others are served, /health is degraded")
    func failureIsIsolated() async throws {
        let store = MemoryStore()
        try await Harness(store: store).run { c in _ = try await Self.seed(c, students: 2) }
        // A stored profile this version cannot read (written by something else).
        let bad = Data(#"{"home": "nowhere"}"#.utf8)
        _ = try await store.append([StoredEvent(kind: .profile, payload: bad, createdAt: 1)], to: "broken", expectedVersion: 0,
                                   update: StudentUpdate(profile: bad))
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let edited = try Self.engine(in: dir, added: 1)
        try await Harness(store: store, engine: edited).run { c in
            let broken = try await c.call(.get, "/student/recommendations?count=3", student: "broken")
            #expect(broken.status == .serviceUnavailable && broken.code == "STUDENT_UNAVAILABLE")
            for id in ["s0", "s1"] {
                #expect(try await c.call(.get, "/student/recommendations?count=3", student: id).status == .ok)
            }
            let health = try await c.call(.get, "/health")
            #expect(health.status == .ok && health.json["status"] as? String == "degraded")
            let migration = health.json["migration"] as? [String: Any]
            #expect(migration?["failed"] as? Int == 1 && migration?["failed_students"] as? [String] == ["broken"])
        }
    }

    @Test("the background sweep migrates every stale student once, skipping current ones and going past a failure")
    func sweep() async throws {
        let store = MemoryStore()
        let box = Box<[String: History]>([:])
        try await Harness(store: store).run { c in box.value = try await Self.seed(c, students: 9) }
        let bad = Data(#"{"sat": "high"}"#.utf8)
        _ = try await store.append([StoredEvent(kind: .profile, payload: bad, createdAt: 1)], to: "s4x", expectedVersion: 0,
                                   update: StudentUpdate(profile: bad))
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let edited = try Self.engine(in: dir, removed: [box.value["s2"]!.swiped[0]])
        var logger = Logger(label: "t")
        logger.logLevel = .critical
        let service = StudentService(engine: edited, store: store, options: ServiceOptions(), logger: logger)
        let sweep = MigrationSweepService(students: { service }, pageSize: 4)
        await sweep.sweepAll()
        var state = service.migrations.snapshot
        #expect(state.sweep.state == "done" && state.sweep.scanned == 10 && state.sweep.migrated == 9 && state.sweep.failed == 1)
        #expect(state.failedIDs == ["s4x"])
        // Every migrated student now restores from its stored snapshot: a second pass does nothing.
        let again = StudentService(engine: edited, store: store, options: ServiceOptions(), logger: logger)
        await MigrationSweepService(students: { again }, pageSize: 4).sweepAll()
        state = again.migrations.snapshot
        #expect(state.sweep.scanned == 10 && state.sweep.migrated == 0 && state.sweep.failed == 1)
        for k in 0..<9 {
            let record = try #require(try await store.student("s\(k)"))
            #expect(again.isCurrent(record), "s\(k)")
            let live = try await again.rebuild(record)
            #expect(live.session.totalSwipes == box.value["s\(k)"]!.total)
        }
        #expect(again.migrations.snapshot.migrated == 0)
    }
}

/// A mutable value shared with a `@Sendable` test body (set once, read after it returns).
final class Box<Value: Sendable>: @unchecked Sendable {
    var value: Value
    init(_ value: Value) { self.value = value }
}
