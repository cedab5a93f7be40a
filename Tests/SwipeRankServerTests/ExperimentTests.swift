import Crypto
import Foundation
import SwipeRank
import SwipeRankColleges
import SwipeRankEvaluation
@testable import SwipeRankServer
import SwipeRankStore
import Testing

/// A/B arms (`serve --experiment`): stable assignment, each arm's engine serving and learning,
/// the arm logged with every deck and read back for the report.
@Suite("Experiment arms")
struct ExperimentTests {
    static func arms(_ shares: [Int]) -> [Experiment<SchoolMatcher>.Arm] {
        shares.enumerated().map { i, share in Experiment<SchoolMatcher>.Arm(name: "arm\(i)", share: share) { $0 } }
    }

    @Test("assignment: SHA-256(salt ␀ id) over the shares, as a reference computes it; proportions follow the shares")
    func assignment() throws {
        let experiment = try Experiment(salt: "exp-1", arms: Self.arms([3, 1]))
        var counts = [0, 0]
        for i in 0..<4_000 {
            let id = "student-\(i)"
            let digest = Array(SHA256.hash(data: Data("exp-1\u{0}\(id)".utf8)))
            var value: UInt64 = 0
            for byte in digest[0..<8] { value = value << 8 | UInt64(byte) }
            let expected = value % 4 < 3 ? 0 : 1
            #expect(experiment.arm(of: id) == expected, "\(id)")
            counts[expected] += 1
        }
        // Fixed ids: a fixed count (no randomness); near 3:1.
        #expect(abs(Double(counts[0]) / 4_000 - 0.75) < 0.03, "\(counts)")
        // Another salt reshuffles.
        let other = try Experiment(salt: "exp-2", arms: Self.arms([3, 1]))
        #expect((0..<200).contains { other.arm(of: "student-\($0)") != experiment.arm(of: "student-\($0)") })
    }

    @Test("an experiment that cannot run is refused, naming why")
    func invalid() {
        let cases: [(String, [Experiment<SchoolMatcher>.Arm], String)] = [
            ("s", Self.arms([1]), "2…16 arms"),
            ("", Self.arms([1, 1]), "salt"),
            ("s", Self.arms([1, 0]), "share"),
            ("s", [.init(name: "A B") { $0 }, .init(name: "b") { $0 }], "arm name"),
            ("s", [.init(name: "a") { $0 }, .init(name: "a") { $0 }], "same name"),
        ]
        for (salt, arms, message) in cases {
            #expect { try Experiment(salt: salt, arms: arms) } throws: { "\($0)".contains(message) }
        }
    }

    @Test("each arm serves and learns with its own engine, logs its name and model; a restart keeps every student's arm")
    func armsServe() async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("swiperank-arms-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("db.sqlite").path
        let engine = try FactorRouteTests.engine(weight: 40)
        let experiment = try Experiment<SchoolMatcher>(salt: "route-test", arms: [
            .init(name: "control") { $0 },
            .init(name: "plain") { $0.withoutFactors().reconfigured { $0.probeInterval = 3 } },
        ])
        let variants = try ArmEngines(experiment: experiment, engine: engine)
        let students = (0..<8).map { "x\($0)" }
        #expect(Set(students.map { experiment.arm(of: $0) }) == [0, 1], "both arms are exercised")
        let profile = try StudentProfile.decode(json: Data(Fixtures.profile.utf8), source: "profile")
        let seeds = StudentService(engine: engine, store: MemoryStore(), options: ServiceOptions(), logger: .init(label: "t"))
        var harness = Harness(store: try SQLiteStore(path: path), engine: engine)
        harness.experiment = experiment
        try await harness.run { c in
            for id in students {
                try await c.createStudent(id)
                // The reference: the arm's engine alone, seeded as the service seeds the student.
                var reference = try variants.arm(of: id).engine.session(studentID: id, profile: profile, seed: seeds.seed(id, 1))
                for round in 0..<2 {
                    let deck = try await c.deck(id, count: 4)
                    #expect(deck == reference.deck(count: 4).ids, "\(id) round \(round)")
                    for (i, school) in deck.enumerated() {
                        let reply = try await c.swipe(id, id: "\(id)-\(round)-\(i)", school: school, like: i % 2 == 0, at: Int64(round * 10 + i))
                        #expect(reply.status == .ok || reply.status == .created)
                        _ = try reference.recordSwipe(Swipe(swipeID: "\(id)-\(round)-\(i)", cardID: school, action: i % 2 == 0 ? .like : .dislike,
                                                            timestamp: Int64(round * 10 + i)))
                    }
                }
                let export = try await c.call(.get, "/student/export", student: id)
                let decks = (export.json["events"] as? [[String: Any]] ?? []).filter { $0["kind"] as? String == "served" }
                let arm = variants.arm(of: id)
                #expect(decks.count == 2 && decks.allSatisfy {
                    let data = $0["data"] as? [String: Any]
                    return data?["arm"] as? String == arm.name && data?["model_version"] as? String == arm.modelVersion
                }, "\(decks)")
            }
        }
        #expect(variants.arms[0].modelVersion != variants.arms[1].modelVersion)
        // The log read back: each student's arm, 8 swipes, probes flagged as served.
        let logged = try await ExperimentStudent.read(from: try SQLiteStore(path: path))
        #expect(logged.map(\.studentID) == students)
        for student in logged {
            #expect(student.arm == variants.arm(of: student.studentID).name)
            #expect(student.swipes.count == 8 && student.swipes.allSatisfy { $0.propensity != nil })
            #expect(student.swipes.contains { $0.isProbe })
        }
        // A restart with the same experiment: nobody migrates, decks go on from where they were.
        var again = Harness(store: try SQLiteStore(path: path), engine: engine)
        again.experiment = experiment
        try await again.run { c in
            for id in students { #expect(try await c.deck(id, count: 2).count == 2) }
            let health = try await c.call(.get, "/health")
            #expect((health.json["migration"] as? [String: Any])?["migrated"] as? Int == 0)
        }
    }
}
