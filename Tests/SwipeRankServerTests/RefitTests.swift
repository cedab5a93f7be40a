import Foundation
import HTTPTypes
import Logging
import SwipeRank
import SwipeRankColleges
import SwipeRankEvaluation
import SwipeRankPostgres
@testable import SwipeRankServer
import SwipeRankStore
import Synchronization
import Testing

/// `serve --refit-every`: the collaborative model refitted from the service's own log, stored,
/// installed by every instance, and never replaced by a fit or a model that fails.
@Suite("Scheduled refit")
struct RefitTests {
    /// What the fits saw.
    final class Seen: Sendable {
        let logs = Mutex<[LoggedSwipes]>([])
    }

    /// A real fit (implicit ALS, f = 3, three iterations) that records what it was given.
    static func options(_ seen: Seen, minimumSwipes: Int = 20, fails: Bool = false) -> RefitOptions {
        var options = RefitOptions(interval: .seconds(3_600)) { log, context in
            seen.logs.withLock { $0.append(log) }
            struct FitFailed: Error {}
            if fails { throw FitFailed() }
            var o = FactorFit.Options()
            o.dimension = 3
            o.iterations = 3
            o.shownConfidence = 1
            return try FactorFit.fit(catalog: context.catalog,
                                     interactions: log.judgements.map {
                                         Interaction(studentID: $0.studentID, itemID: $0.itemID, action: $0.liked ? .like : .dislike,
                                                     timestamp: $0.timestamp)
                                     },
                                     shown: log.shown.map { ($0.studentID, $0.itemID) }, options: o,
                                     weight: context.current?.weight ?? 16 * context.scale)
        }
        options.minimumSwipes = minimumSwipes
        options.readsSignals = true
        return options
    }

    /// Four students: a deck of 10 each, 8 of its cards swiped (likes on even positions).
    static func swipe(_ c: Harness.Client) async throws -> [String: [String]] {
        var decks: [String: [String]] = [:]
        for s in 0..<4 {
            let id = "r\(s)"
            try await c.createStudent(id)
            let deck = try await c.deck(id, count: 10)
            decks[id] = deck
            for (i, school) in deck.prefix(8).enumerated() {
                let reply = try await c.swipe(id, id: "\(id)-\(i)", school: school, like: i % 2 == 0, at: Int64(i))
                #expect(reply.status == .ok || reply.status == .created)
            }
        }
        return decks
    }

    static func digest(_ parts: ServiceParts<SchoolMatcher>) -> String? { parts.generations.current.students.engine.factors?.digest }

    @Test("a refit reads every swipe and unanswered card, stores version 1, installs it; students carry over; a second instance starts on it")
    func refitStoreInstall() async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("swiperank-refit-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("db.sqlite").path
        let seen = Seen()
        let engine = try FactorRouteTests.engine(weight: 4)
        let started = try #require(engine.factors?.digest)
        let installed = Mutex<String?>(nil)
        let store = try SQLiteStore(path: path)
        try await Harness(store: store, engine: engine, configure: { $0.refit = Self.options(seen) }).runWithParts { c, parts in
            let refitter = try #require(parts.refitter)
            #expect(Self.digest(parts) == started, "nothing stored: the start-up model serves")
            let decks = try await Self.swipe(c)
            // The app's other events: a dwell and a reaction on answered cards are signals; a
            // focus on a card left unanswered, a focus without a duration and other types are not.
            let (d0, d1) = (decks["r0"]!, decks["r1"]!)
            let events = """
                {"events":[
                  {"event_id":"f1","type":"focus","timestamp":1,"school_id":"\(d0[0])","duration_ms":4500},
                  {"event_id":"f2","type":"swipe_reaction","timestamp":2,"item_id":"\(d0[1])","reaction":"TFU"},
                  {"event_id":"f3","type":"focus","timestamp":3,"school_id":"\(d0[9])","duration_ms":900},
                  {"event_id":"f4","type":"focus","timestamp":4,"school_id":"\(d0[2])"},
                  {"event_id":"f5","type":"custom","timestamp":5,"name":"opened_map"}
                ]}
                """
            #expect(try await c.call(.post, "/events", student: "r0", body: events).status == .accepted)
            let later = #"{"events":[{"event_id":"g1","type":"focus","timestamp":9,"school_id":"\#(d1[3])","duration_ms":120}]}"#
            #expect(try await c.call(.post, "/events", student: "r1", body: later).status == .accepted)
            // Held elsewhere: nothing is fitted.
            let held = try await store.withExclusiveJob("refit:factors") { await refitter.refit() }
            #expect(held == .held)
            #expect(seen.logs.withLock { $0.isEmpty })

            #expect(await refitter.refit() == .fitted(version: 1, swipes: 32))
            let log = try #require(seen.logs.withLock { $0.last })
            #expect(log.students == 4)
            // Every swipe, as logged.
            var expected: [LoggedSwipes.Judgement] = []
            for s in 0..<4 {
                for (i, school) in decks["r\(s)"]!.prefix(8).enumerated() {
                    expected.append(.init(studentID: "r\(s)", itemID: school, liked: i % 2 == 0, timestamp: Int64(i)))
                }
            }
            #expect(log.judgements == expected)
            #expect(log.signals == [
                EngagementSignal(studentID: "r0", itemID: d0[0], kind: .dwell(milliseconds: 4_500)),
                EngagementSignal(studentID: "r0", itemID: d0[1], kind: .reaction("TFU")),
                EngagementSignal(studentID: "r1", itemID: d1[3], kind: .dwell(milliseconds: 120)),
            ])
            // A fit that weighs nothing by them does not read them.
            let plain = try await LoggedSwipes.read(from: store, itemIDs: Set(engine.matcher.catalog.ids), signals: false)
            #expect(plain.signals.isEmpty && plain.judgements == log.judgements && plain.shown == log.shown)
            // The two cards of each deck left unanswered.
            #expect(Set(log.shown) == Set((0..<4).flatMap { s in decks["r\(s)"]!.suffix(2).map { LoggedSwipes.Shown(studentID: "r\(s)", itemID: $0) } }))
            // Stored and in service.
            let stored = try #require(try await store.latestModel(kind: "factors"))
            #expect(stored.version == 1)
            let file = try FactorModelFile.decode(json: stored.data, source: "stored")
            let expectedDigest = try CollaborativeFactors(file: file, catalog: engine.matcher.catalog).digest
            #expect(Self.digest(parts) == expectedDigest && expectedDigest != started)
            installed.withLock { $0 = expectedDigest }
            let health = try await c.call(.get, "/health").json["refit"] as? [String: Any]
            #expect(health?["model_version"] as? Int == 1)
            let attempt = health?["last_attempt"] as? [String: Any]
            #expect(attempt?["outcome"] as? String == "fitted" && attempt?["swipes"] as? Int == 32 && attempt?["at"] as? Int == 1_700_000_000_000)
            // A student learned under the old model carries over: 200, the swipes still counted.
            let state = try await c.call(.get, "/student/learning-state", student: "r0")
            #expect(state.status == .ok, "\(String(decoding: state.body, as: UTF8.self))")
            #expect(state.json["total_swipes"] as? Int == 8)
            #expect(try await c.deck("r1", count: 3).count == 3)
            let more = try await c.swipe("r1", id: "r1-late", school: decks["r1"]![8], like: true, at: 50)
            #expect(more.status == .ok || more.status == .created)
            // A model younger than the interval is stored: the next attempt does not fit again.
            #expect(await refitter.refit() == .recent)
            #expect(seen.logs.withLock { $0.count } == 1)
        }
        // A second instance (a restart) serves the stored model from its first request.
        try await Harness(store: try SQLiteStore(path: path), engine: engine, configure: { $0.refit = Self.options(Seen()) }).runWithParts { c, parts in
            #expect(Self.digest(parts) == installed.withLock { $0 })
            let state = try await c.call(.get, "/student/learning-state", student: "r1")
            #expect(state.status == .ok && state.json["total_swipes"] as? Int == 9)
        }
    }

    @Test("a fit that fails, too few swipes, a stored model that does not apply: the current model keeps serving")
    func failuresKeepServing() async throws {
        let store = MemoryStore()
        let engine = try FactorRouteTests.engine(weight: 4)
        let started = engine.factors?.digest
        let seen = Seen()
        try await Harness(store: store, engine: engine, configure: { $0.refit = Self.options(seen, fails: true) }).runWithParts { c, parts in
            let refitter = try #require(parts.refitter)
            _ = try await Self.swipe(c)
            guard case .failed = await refitter.refit() else { Issue.record("the fit throws: failed"); return }
            #expect(seen.logs.withLock { $0.count } == 1)
            #expect(try await store.latestModelVersion(kind: "factors") == 0, "nothing stored")
            let health = try await c.call(.get, "/health")
            #expect(health.status == .ok)
            let refit = health.json["refit"] as? [String: Any]
            #expect(refit?["model_version"] as? Int == 0)
            #expect((refit?["last_attempt"] as? [String: Any])?["outcome"] as? String == "failed")
            #expect(((refit?["last_attempt"] as? [String: Any])?["detail"] as? String)?.contains("FitFailed") == true)
            #expect(Self.digest(parts) == started)
            #expect(try await c.deck("r0", count: 2).count == 2)
            // A stored model that is not a model, then one of another catalog: neither installs.
            _ = try await store.putModel(kind: "factors", data: Data("{\"version\": 1".utf8), createdAt: 1)
            #expect(await refitter.follow() == false)
            let foreign = FactorModelFile(dimension: 2, confidence: 1, dislikeConfidence: 1, regularization: 1, weight: 1,
                                          itemIDs: ["x"], itemFactors: [[1, 2]], featureNames: ["not_a_column"], featureEmbedding: [[1, 1]])
            _ = try await store.putModel(kind: "factors", data: foreign.jsonData(), createdAt: 2)
            #expect(await refitter.follow() == false)
            #expect(await refitter.follow() == false, "a rejected version is not tried again")
            #expect(Self.digest(parts) == started)
            #expect(try await c.deck("r0", count: 2).count == 2)
            // A good one stored later (another instance's fit) is installed.
            let good = try FactorModelFile.decode(json: engine.factors!.file.withWeight(9).jsonData(), source: "good")
            #expect(try await store.putModel(kind: "factors", data: good.jsonData(), createdAt: 3) == 3)
            #expect(await refitter.follow())
            #expect(parts.generations.current.students.engine.factors?.file.weight == 9)
        }
        try await Harness(store: MemoryStore(), engine: engine, configure: { $0.refit = Self.options(Seen(), minimumSwipes: 1_000) }).runWithParts { c, parts in
            _ = try await Self.swipe(c)
            #expect(await parts.refitter!.refit() == .tooFewSwipes(32))
        }
    }

    @Test("models swapped in while students swipe: every request answered 2xx, every swipe counted under the newest model")
    func swapsUnderLoad() async throws {
        let store = MemoryStore()
        let engine = try FactorRouteTests.engine(weight: 4)
        try await Harness(store: store, engine: engine, configure: { $0.refit = Self.options(Seen()) }).runWithParts { c, parts in
            let refitter = try #require(parts.refitter)
            for s in 0..<3 { try await c.createStudent("w\(s)") }
            try await withThrowingTaskGroup(of: [Int].self) { group in
                for s in 0..<3 {
                    group.addTask {
                        var statuses: [Int] = []
                        for round in 0..<6 {
                            for (i, school) in try await c.deck("w\(s)", count: 2).enumerated() {
                                let reply = try await c.swipe("w\(s)", id: "w\(s)-\(round)-\(i)", school: school, like: i == 0, at: Int64(round * 10 + i))
                                statuses.append(reply.status.code)
                            }
                        }
                        return statuses
                    }
                }
                group.addTask {
                    for weight in 1...5 {
                        let file = engine.factors!.file.withWeight(Double(weight))
                        _ = try await store.putModel(kind: "factors", data: file.jsonData(), createdAt: Int64(weight))
                        #expect(await refitter.follow())
                        await Task.yield()
                    }
                    return []
                }
                for try await statuses in group { #expect(statuses.allSatisfy { $0 == 200 || $0 == 201 }, "\(statuses)") }
            }
            #expect(parts.generations.current.students.engine.factors?.file.weight == 5)
            for s in 0..<3 {
                let state = try await c.call(.get, "/student/learning-state", student: "w\(s)")
                #expect(state.status == .ok && state.json["total_swipes"] as? Int == 12, "\(String(decoding: state.body, as: UTF8.self))")
            }
        }
    }

    /// Where two instances share a database: a SQLite file (two stores on it, as two processes
    /// would open it), and PostgreSQL when `SWIPERANK_POSTGRES_URL` names a server (two pools on
    /// one schema).
    enum Shared: String, CaseIterable, CustomTestStringConvertible {
        case sqlite, postgres
        var testDescription: String { rawValue }
        static var available: [Shared] {
            (ProcessInfo.processInfo.environment["SWIPERANK_POSTGRES_URL"] ?? "").isEmpty ? [.sqlite] : allCases
        }

        /// Two stores on one database and what stops them.
        func pair() async throws -> (any ServiceStore, any ServiceStore, @Sendable () -> Void) {
            switch self {
            case .sqlite:
                let dir = FileManager.default.temporaryDirectory.appendingPathComponent("swiperank-refit2-\(UUID().uuidString)")
                try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
                let path = dir.appendingPathComponent("db.sqlite").path
                return (try SQLiteStore(path: path), try SQLiteStore(path: path), { try? FileManager.default.removeItem(at: dir) })
            case .postgres:
                let url = ProcessInfo.processInfo.environment["SWIPERANK_POSTGRES_URL"]!
                let schema = "t_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()
                var logger = Logger(label: "test.postgres")
                logger.logLevel = .error
                var stores: [PostgresStore] = []
                var tasks: [Task<Void, any Error>] = []
                for _ in 0..<2 {
                    let store = try PostgresStore(url: url, schema: schema, maxConnections: 4, logger: logger)
                    tasks.append(Task { try await store.run() })
                    try await store.migrate()
                    stores.append(store)
                }
                let running = tasks
                return (stores[0], stores[1], { for task in running { task.cancel() } })
            }
        }
    }

    @Test("two instances on one database: refits started together fit once under the job lock; both serve the stored model",
          arguments: Shared.available)
    func twoInstances(shared: Shared) async throws {
        let (storeA, storeB, done) = try await shared.pair()
        defer { done() }
        let engine = try FactorRouteTests.engine(weight: 4)
        let seen = Seen()
        try await Harness(store: storeA, engine: engine, configure: { $0.refit = Self.options(seen) }).runWithParts { c, partsA in
            _ = try await Self.swipe(c)
            var config = ServerConfiguration()
            config.auth = AuthConfiguration(hmacSecret: Fixtures.secret)
            config.service.clock = { 1_700_000_000_000 }
            config.refit = Self.options(seen)
            var logger = Logger(label: "test.b")
            logger.logLevel = .critical
            let partsB = try await buildParts(engine: engine, store: storeB, configuration: config, logger: logger)
            let (a, b) = (try #require(partsA.refitter), try #require(partsB.refitter))
            async let first = a.refit()
            async let second = b.refit()
            let outcomes = await [first, second]
            #expect(outcomes.filter { if case .fitted = $0 { true } else { false } }.count == 1, "\(outcomes)")
            #expect(outcomes.allSatisfy { if case .fitted = $0 { true } else { $0 == .held || $0 == .recent } }, "\(outcomes)")
            #expect(seen.logs.withLock { $0.count } == 1, "one fit for the fleet")
            // The other instance installs the stored model on its next poll.
            _ = await a.follow()
            _ = await b.follow()
            let stored = try #require(try await storeB.latestModel(kind: "factors"))
            #expect(stored.version == 1)
            let digest = try CollaborativeFactors(file: FactorModelFile.decode(json: stored.data, source: "stored"),
                                                  catalog: engine.matcher.catalog).digest
            #expect(Self.digest(partsA) == digest && Self.digest(partsB) == digest)
        }
    }

    /// `--refit-prior on`'s fitter, recording what it was given; `fails` throws instead.
    struct PriorFitFailed: Error {}

    final class RecordingPriorFitter: PopulationPriorFitter {
        let inputs = Mutex<[(students: [String], swipes: Int)]>([])
        let fails: Bool

        init(fails: Bool = false) { self.fails = fails }

        func fit<M: ServableMatcher>(_ input: PriorFitInput<M>) throws -> PopulationPrior {
            inputs.withLock { $0.append((input.students.map(\.id), input.log.judgements.count)) }
            if fails { throw PriorFitFailed() }
            return try PopulationFit.fit(engine: input.engine, students: input.students.map { DatasetStudent(id: $0.id, profile: $0.profile) },
                                         interactions: input.log.judgements.map {
                                             Interaction(studentID: $0.studentID, itemID: $0.itemID, action: $0.liked ? .like : .dislike,
                                                         timestamp: $0.timestamp)
                                         })
        }
    }

    @Test("with the prior refit on, a refit also fits the population prior from the log and the stored profiles, stores and installs it; students carry over")
    func priorRefit() async throws {
        let store = MemoryStore()
        let engine = try FactorRouteTests.engine(weight: 4)
        #expect(engine.population == nil)
        let fitter = RecordingPriorFitter()
        var refit = Self.options(Seen())
        refit.prior = fitter
        let options = refit
        try await Harness(store: store, engine: engine, configure: { $0.refit = options }).runWithParts { c, parts in
            let refitter = try #require(parts.refitter)
            let decks = try await Self.swipe(c)
            // A student who answered nothing is not in the fit.
            try await c.createStudent("quiet")
            #expect(await refitter.refit() == .fitted(version: 1, swipes: 32))
            let given = try #require(fitter.inputs.withLock { $0.last })
            #expect(given.students == ["r0", "r1", "r2", "r3"] && given.swipes == 32)
            // Stored, and equal to a fit of the same swipes from the profiles the students gave.
            let stored = try #require(try await store.latestModel(kind: RefitOptions.priorKind))
            #expect(stored.version == 1)
            let prior = try PopulationPrior.decode(json: stored.data, source: "stored")
            let profile = try SchoolMatcher.decodeProfile(json: Data(Fixtures.profile.utf8), source: "fixture")
            var interactions: [Interaction] = []
            for s in 0..<4 {
                for (i, school) in decks["r\(s)"]!.prefix(8).enumerated() {
                    interactions.append(Interaction(studentID: "r\(s)", itemID: school, action: i % 2 == 0 ? .like : .dislike, timestamp: Int64(i)))
                }
            }
            let reference = try PopulationFit.fit(engine: engine, students: (0..<4).map { DatasetStudent(id: "r\($0)", profile: profile) },
                                                  interactions: interactions)
            #expect(prior.digest == reference.digest && prior.students == 4 && prior.swipes == 32)
            // In service, beside the refitted factors; /health names both versions.
            let serving = parts.generations.current.students.engine
            #expect(serving.population?.digest == reference.digest)
            #expect(serving.factors != nil && serving.factors?.digest != engine.factors?.digest)
            let health = try await c.call(.get, "/health").json["refit"] as? [String: Any]
            #expect(health?["model_version"] as? Int == 1 && health?["prior_version"] as? Int == 1)
            // A new student starts from it: a first deck under the prior, not the plain cold start.
            var plainSession = try engine.withFactors(serving.factors!.file).session(studentID: "n", profile: profile, seed: 1)
            var priorSession = try serving.session(studentID: "n", profile: profile, seed: 1)
            let plainFirst = plainSession.recommendations(count: 10).recommendations.map(\.matchScore)
            let priorFirst = priorSession.recommendations(count: 10).recommendations.map(\.matchScore)
            #expect(plainFirst != priorFirst)
            // A student learned before it carries over (migrated: the swipes learned again).
            let state = try await c.call(.get, "/student/learning-state", student: "r2")
            #expect(state.status == .ok && state.json["total_swipes"] as? Int == 8, "\(String(decoding: state.body, as: UTF8.self))")
            #expect(try await c.deck("r2", count: 2).count == 2)
        }
        // A restart installs both stored models before its first request.
        try await Harness(store: store, engine: engine, configure: { $0.refit = Self.options(Seen()) }).runWithParts { c, parts in
            let stored = try #require(try await store.latestModel(kind: RefitOptions.priorKind))
            let restored = try PopulationPrior.decode(json: stored.data, source: "stored")
            #expect(parts.generations.current.students.engine.population?.digest == restored.digest)
            #expect(try await c.deck("r3", count: 2).count == 2)
        }
    }

    @Test("a prior fit that fails stores neither model; a stored prior of another catalog is not installed")
    func priorFailures() async throws {
        let store = MemoryStore()
        let engine = try FactorRouteTests.engine(weight: 4)
        var failing = Self.options(Seen())
        failing.prior = RecordingPriorFitter(fails: true)
        let options = failing
        try await Harness(store: store, engine: engine, configure: { $0.refit = options }).runWithParts { c, parts in
            let refitter = try #require(parts.refitter)
            _ = try await Self.swipe(c)
            guard case .failed(let reason) = await refitter.refit() else { Issue.record("the prior fit throws: failed"); return }
            #expect(reason.contains("PriorFitFailed"))
            let (factorsStored, priorStored) = (try await store.latestModelVersion(kind: "factors"),
                                                try await store.latestModelVersion(kind: RefitOptions.priorKind))
            #expect(factorsStored == 0 && priorStored == 0, "a refit lands whole or not at all")
            #expect(parts.generations.current.students.engine.factors?.digest == engine.factors?.digest)
            #expect(parts.generations.current.students.engine.population == nil)
            // Not a prior, then a prior of another catalog: neither installs, the deck still serves.
            _ = try await store.putModel(kind: RefitOptions.priorKind, data: Data("{}".utf8), createdAt: 1)
            #expect(await refitter.follow() == false)
            let foreign = PopulationPrior(catalogFingerprint: "another", featureCount: 1, termNames: [], weightShift: [0], itemEffects: [0],
                                          students: 1, swipes: 1, itemPrecision: 5)
            _ = try await store.putModel(kind: RefitOptions.priorKind, data: foreign.jsonData(), createdAt: 2)
            #expect(await refitter.follow() == false)
            #expect(parts.generations.current.students.engine.population == nil)
            #expect(try await c.deck("r0", count: 2).count == 2)
            let health = try await c.call(.get, "/health").json["refit"] as? [String: Any]
            #expect(health?["prior_version"] == nil)
        }
    }
}
