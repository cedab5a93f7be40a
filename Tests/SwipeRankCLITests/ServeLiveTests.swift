import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing

/// The real binary on a loopback port: an acknowledged swipe survives SIGKILL.
@Suite("swiperank serve, live", .serialized)
struct ServeLiveTests {
    /// A running `swiperank serve` and its port.
    final class Server {
        let process: Process
        let port: Int

        convenience init(database: String) throws {
            try self.init(arguments: ["--database", database])
        }

        init(arguments: [String]) throws {
            // Standard error is not kept: nothing reads the pipe after the start.
            let started = try ServeLiveTests.start(["serve", "--port", "0", "--log-level", "error"] + arguments, keepErrors: false)
            process = started.process
            guard started.port > 0 else {
                process.terminate()
                throw CLIError("serve did not start: \(started.output)")
            }
            port = started.port
        }

        func kill() {
            Foundation.kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
    }

    struct CLIError: Error, CustomStringConvertible {
        let description: String
        init(_ d: String) { description = d }
    }

    static func call(_ port: Int, _ method: String, _ path: String, token: String, body: String? = nil) async throws -> (Int, [String: Any]) {
        var request = URLRequest(url: URL(string: "http://127.0.0.1:\(port)\(path)")!)
        request.httpMethod = method
        request.timeoutInterval = 30
        request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization")
        if let body {
            request.httpBody = Data(body.utf8)
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        }
        let (data, response) = try await URLSession.shared.data(for: request)
        let json = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] ?? [:]
        return ((response as? HTTPURLResponse)?.statusCode ?? 0, json)
    }

    @Test("every acknowledged swipe is there after kill -9 and a restart")
    func killAndRestart() async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("swiperank-live-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let database = dir.appendingPathComponent("live.sqlite").path
        let token = try CLI.run(["token", "--student", "live-student"]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(token.split(separator: ".").count == 3)
        let profile = try String(contentsOf: CLI.root.appendingPathComponent("datasets/sample-profile.json"), encoding: .utf8)

        let first = try Server(database: database)
        var acknowledged: [String] = []
        do {
            let (status, _) = try await Self.call(first.port, "PUT", "/student/profile", token: token, body: profile)
            #expect(status == 201)
            for round in 0..<3 {
                let (_, deck) = try await Self.call(first.port, "GET", "/student/recommendations?count=5&fields=minimal", token: token)
                for (i, card) in (deck["recommendations"] as? [[String: Any]] ?? []).enumerated() {
                    let id = "live-\(round)-\(i)"
                    let body = #"{"swipe_id":"\#(id)","school_id":"\#(card["school_id"] as! String)","action":"\#(i % 2 == 0 ? "like" : "dislike")","timestamp":\#(round * 10 + i)}"#
                    let (s, _) = try await Self.call(first.port, "POST", "/student/swipe", token: token, body: body)
                    if s == 201 { acknowledged.append(id) }
                }
            }
        }
        first.kill()
        #expect(acknowledged.count == 15)

        let second = try Server(database: database)
        defer { second.kill() }
        let (status, state) = try await Self.call(second.port, "GET", "/student/learning-state", token: token)
        #expect(status == 200)
        #expect(state["total_swipes"] as? Int == acknowledged.count)
        let (_, export) = try await Self.call(second.port, "GET", "/student/export", token: token)
        let swipes = (export["events"] as? [[String: Any]] ?? []).filter { $0["kind"] as? String == "swipe" }
        #expect(swipes.compactMap { ($0["data"] as? [String: Any])?["swipe_id"] as? String } == acknowledged)
        // The deck goes on: no card comes back.
        let (_, next) = try await Self.call(second.port, "GET", "/student/recommendations?count=5&fields=minimal", token: token)
        #expect((next["recommendations"] as? [[String: Any]])?.first?["position"] as? Int == 16)
    }

    /// Starts `swiperank` with `arguments` and `environment` on a loopback port; its standard
    /// output (and error, with `keepErrors`) until it listens (bounded), the port (0 when it
    /// never listened) and the process, to stop.
    static func start(_ arguments: [String], environment: [String: String] = [:], keepErrors: Bool = true) throws
        -> (process: Process, port: Int, output: String) {
        let process = Process()
        process.executableURL = CLI.binary
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        process.currentDirectoryURL = CLI.root
        let out = Pipe()
        process.standardOutput = out
        process.standardError = keepErrors ? out : FileHandle.nullDevice
        try process.run()
        var output = ""
        let deadline = Date().addingTimeInterval(60)
        while Date() < deadline, !output.contains("listening on port") {
            let chunk = out.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            output += String(decoding: chunk, as: UTF8.self)
        }
        let line = output.split(separator: "\n").first { $0.contains("listening on port") }
        return (process, line.flatMap { Int($0.split(separator: " ").last ?? "") } ?? 0, output)
    }

    @Test("serve and bare-route --executor: auto is nio over SQLite, installed; pool by the option or SWIPERANK_EXECUTOR; both serve; a bad value is refused naming it")
    func executors() async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("swiperank-executor-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let profile = try String(contentsOf: CLI.root.appendingPathComponent("datasets/sample-profile.json"), encoding: .utf8)
        let cases: [(arguments: [String], environment: [String: String], executor: String)] = [
            ([], [:], "nio"), (["--executor", "pool"], [:], "pool"), (["--executor=nio"], ["SWIPERANK_EXECUTOR": "pool"], "nio"),
            ([], ["SWIPERANK_EXECUTOR": "pool"], "pool"), (["--executor", "auto", "--store", "sqlite"], [:], "nio"),
        ]
        for (i, c) in cases.enumerated() {
            let server = try Self.start(["serve", "--port", "0", "--log-level", "info", "--database", dir.appendingPathComponent("\(i).sqlite").path]
                                        + c.arguments, environment: c.environment)
            defer { server.process.terminate(); server.process.waitUntilExit() }
            #expect(server.port > 0, "\(c): \(server.output)")
            let starting = server.output.split(separator: "\n").first { $0.contains("starting") } ?? ""
            #expect(starting.contains("executor=\(c.executor) "), "\(c): \(starting)")
            let token = try CLI.run(["token", "--student", "executor-\(i)"]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
            #expect(try await Self.call(server.port, "PUT", "/student/profile", token: token, body: profile).0 == 201)
            let (status, deck) = try await Self.call(server.port, "GET", "/student/recommendations?count=5&fields=minimal", token: token)
            #expect(status == 200 && (deck["recommendations"] as? [[String: Any]])?.count == 5, "\(c)")
        }
        let body = dir.appendingPathComponent("body.json")
        try Data(#"{"bare": true}"#.utf8).write(to: body)
        for executor in ["nio", "pool"] {
            let bare = try Self.start(["bare-route", "--body", body.path, "--port", "0", "--executor", executor])
            defer { bare.process.terminate(); bare.process.waitUntilExit() }
            #expect(bare.output.contains("bare-route: executor \(executor)\n"), "\(bare.output)")
            #expect(try await Self.call(bare.port, "GET", "/anything", token: "-").1["bare"] as? Bool == true)
        }
        // Refused before anything starts, naming the option or the variable and the value.
        let option = try CLI.run(["serve", "--port", "0", "--executor", "threads", "--database", dir.appendingPathComponent("x.sqlite").path])
        #expect(option.status != 0 && option.stderr.contains("--executor") && option.stderr.contains("threads"), "\(option.stderr)")
        let variable = try CLI.run(["serve", "--port", "0", "--database", dir.appendingPathComponent("y.sqlite").path],
                                   environment: ["SWIPERANK_EXECUTOR": "threads"])
        #expect(variable.status != 0 && variable.stderr.contains("SWIPERANK_EXECUTOR must be one of auto, nio, pool, got threads"), "\(variable.stderr)")
        #expect(!FileManager.default.fileExists(atPath: dir.appendingPathComponent("y.sqlite").path), "no database before the executor is checked")
    }

    @Test("--catalogs serves another catalog under /catalogs/<name>/; a bad file is refused naming it")
    func severalCatalogs() async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("swiperank-catalogs-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let file = dir.appendingPathComponent("catalogs.json").path
        try #"{"restaurants": {"schema": "datasets/restaurants/restaurants.schema.json", "catalog": "datasets/restaurants/restaurants.csv", "region_attribute": "neighborhood"}}"#
            .write(toFile: file, atomically: true, encoding: .utf8)
        let token = try CLI.run(["token", "--student", "many"]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let server = try Server(arguments: ["--database", dir.appendingPathComponent("db.sqlite").path, "--catalogs", file])
        defer { server.kill() }
        let profile = #"{"home": {"latitude": 40.05, "longitude": -74.95}, "max_distance_miles": 3}"#
        #expect(try await Self.call(server.port, "PUT", "/catalogs/restaurants/student/profile", token: token, body: profile).0 == 201)
        let (status, deck) = try await Self.call(server.port, "GET", "/catalogs/restaurants/student/recommendations?count=2&fields=minimal", token: token)
        #expect(status == 200 && (deck["recommendations"] as? [[String: Any]])?.first?["item_id"] is String)
        #expect(try await Self.call(server.port, "GET", "/student/learning-state", token: token).0 == 404, "no college profile yet")

        // A catalog that cannot be read: refused before any database file is created.
        let nowhere = dir.appendingPathComponent("never.sqlite").path
        let missing = try CLI.run(["serve", "--port", "0", "--database", nowhere, "--catalog", "no/such/schools.csv"])
        #expect(missing.status != 0 && missing.stderr.contains("no/such/schools.csv") && !FileManager.default.fileExists(atPath: nowhere),
                "\(missing.stderr)")
        try #"{"Bad Name": {"catalog": "x.csv"}}"#.write(toFile: file, atomically: true, encoding: .utf8)
        let refused = try CLI.run(["serve", "--port", "0", "--database", dir.appendingPathComponent("db2.sqlite").path, "--catalogs", file])
        #expect(refused.status != 0 && refused.stderr.contains("catalogs.json") && refused.stderr.contains("Bad Name"), "\(refused.stderr)")
        try #"{"food": {"catalog": "datasets/restaurants/restaurants.csv", "schema": "datasets/restaurants/restaurants.schema.json", "colour": 1}}"#
            .write(toFile: file, atomically: true, encoding: .utf8)
        let unknown = try CLI.run(["serve", "--port", "0", "--database", dir.appendingPathComponent("db3.sqlite").path, "--catalogs", file])
        #expect(unknown.status != 0 && unknown.stderr.contains("colour"), "\(unknown.stderr)")
    }
}


/// Several instances over one PostgreSQL (`SWIPERANK_POSTGRES_URL`; `bash scripts/test` starts one).
enum LivePostgres {
    static var available: Bool { !(ProcessInfo.processInfo.environment["SWIPERANK_POSTGRES_URL"] ?? "").isEmpty }
}

@Suite("swiperank serve, two instances on PostgreSQL", .serialized, .enabled(if: LivePostgres.available))
struct MultiInstanceLiveTests {
    typealias Server = ServeLiveTests.Server

    /// The instances clients may use; one can be killed while clients run.
    final class Instances: @unchecked Sendable {
        private let lock = NSLock()
        private var servers: [Server]
        init(_ servers: [Server]) { self.servers = servers }
        var ports: [Int] { lock.withLock { servers.map(\.port) } }
        func kill(at index: Int) {
            let server = lock.withLock { servers.remove(at: index) }
            server.kill()
        }
    }

    static func storeURL() -> String {
        let base = ProcessInfo.processInfo.environment["SWIPERANK_POSTGRES_URL"]!
        let schema = "live_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()
        return base + (base.contains("?") ? "&" : "?") + "schema=" + schema
    }

    static func token(_ student: String) throws -> String {
        try CLI.run(["token", "--student", student]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    @Test("--executor auto runs the handlers on Swift's pool over PostgreSQL; nio over PostgreSQL when asked; both serve a deck")
    func executorOverPostgres() async throws {
        let profile = try String(contentsOf: CLI.root.appendingPathComponent("datasets/sample-profile.json"), encoding: .utf8)
        for (arguments, executor) in [([String](), "pool"), (["--executor", "nio"], "nio")] {
            let server = try ServeLiveTests.start(["serve", "--port", "0", "--log-level", "info", "--store", Self.storeURL()] + arguments)
            defer { server.process.terminate(); server.process.waitUntilExit() }
            #expect(server.port > 0, "\(server.output)")
            let starting = server.output.split(separator: "\n").first { $0.contains("starting") } ?? ""
            #expect(starting.contains("executor=\(executor) "), "\(arguments): \(starting)")
            let token = try Self.token("executor-pg-\(executor)")
            #expect(try await ServeLiveTests.call(server.port, "PUT", "/student/profile", token: token, body: profile).0 == 201)
            let (status, deck) = try await ServeLiveTests.call(server.port, "GET", "/student/recommendations?count=5&fields=minimal", token: token)
            #expect(status == 200 && (deck["recommendations"] as? [[String: Any]])?.count == 5, "\(arguments)")
        }
    }

    /// One student's session: 4 decks of 5, each swipe sent to the instance after the deck's
    /// (alternating), and every swipe sent twice — to both instances — as a retrying client
    /// would. Returns the swipe ids acknowledged (201 or 200) and the last learning state.
    static func drive(_ student: String, ports: @escaping @Sendable () -> [Int], rounds: Int = 4,
                      afterRound: @escaping @Sendable (Int) -> Void = { _ in }) async throws -> (acknowledged: [String], state: [String: Any]) {
        let token = try token(student)
        let profile = try String(contentsOf: CLI.root.appendingPathComponent("datasets/sample-profile.json"), encoding: .utf8)
        /// A request on the first instance that answers (a killed one refuses the connection).
        func call(_ method: String, _ path: String, body: String? = nil, start: Int) async throws -> (Int, [String: Any]) {
            let live = ports()
            var lastError: (any Error)?
            for k in 0..<live.count {
                do { return try await ServeLiveTests.call(live[(start + k) % live.count], method, path, token: token, body: body) } catch {
                    lastError = error
                }
            }
            throw lastError!
        }
        let (status, _) = try await call("PUT", "/student/profile", body: profile, start: 0)
        #expect(status == 201)
        var acknowledged: [String] = []
        var state: [String: Any] = [:]
        for round in 0..<rounds {
            let (_, deck) = try await call("GET", "/student/recommendations?count=5&fields=minimal", start: round)
            for (i, card) in (deck["recommendations"] as? [[String: Any]] ?? []).enumerated() {
                let id = "\(student)-\(round)-\(i)"
                let body = #"{"swipe_id":"\#(id)","school_id":"\#(card["school_id"] as! String)","action":"\#((round + i) % 3 == 0 ? "like" : "dislike")","timestamp":\#(round * 10 + i)}"#
                var answers: [Int] = []
                for attempt in 0..<2 {
                    let (s, reply) = try await call("POST", "/student/swipe", body: body, start: round + 1 + attempt)
                    answers.append(s)
                    state = reply
                }
                // The first is recorded, the retry on the other instance replays it. (A first
                // attempt cut off by the SIGKILL may have been recorded already: then both replay.)
                #expect(answers[1] == 200 && [200, 201].contains(answers[0]), "\(id): \(answers)")
                acknowledged.append(id)
            }
            afterRound(round)
        }
        return (acknowledged, state)
    }

    static func stored(_ student: String, port: Int) async throws -> (ids: [String], state: [String: Any]) {
        let token = try token(student)
        let (_, export) = try await ServeLiveTests.call(port, "GET", "/student/export", token: token)
        let ids = (export["events"] as? [[String: Any]] ?? []).filter { $0["kind"] as? String == "swipe" }
            .compactMap { ($0["data"] as? [String: Any])?["swipe_id"] as? String }
        let (_, state) = try await ServeLiveTests.call(port, "GET", "/student/learning-state", token: token)
        return (ids, state)
    }

    static func weights(_ state: [String: Any]) -> [String: Double] {
        ((state["learning_state"] as? [String: Any])?["preference_weights"] as? [String: Double]) ?? [:]
    }

    @Test("students alternating between two instances: the same state as one instance; a SIGKILL loses and doubles nothing")
    func twoInstances() async throws {
        let url = Self.storeURL()
        let a = try Server(arguments: ["--store", url])
        defer { a.kill() }
        let instances = Instances([a, try Server(arguments: ["--store", url])])
        let ports: @Sendable () -> [Int] = { instances.ports }

        // Reference: the same requests on one instance with its own SQLite file.
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("swiperank-multi-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let single = try Server(database: dir.appendingPathComponent("ref.sqlite").path)
        let singlePort = single.port
        let reference = try await Self.drive("ref", ports: { [singlePort] })
        let killReference = try await Self.drive("kill-1", ports: { [singlePort] })
        single.kill()

        // Two students at once on both instances, no failure: each ends where the single
        // instance ended (same decks, same swipes, same learned weights).
        async let s1 = Self.drive("ref", ports: ports)
        async let s2 = Self.drive("two", ports: ports)
        let (r1, r2) = try await (s1, s2)
        #expect(r1.acknowledged == reference.acknowledged)
        #expect(Self.weights(r1.state) == Self.weights(reference.state) && !Self.weights(r1.state).isEmpty)
        #expect(r2.acknowledged.count == 20)

        // Now B is killed with SIGKILL after the second round of one student while another
        // student keeps going; clients fall back to A.
        async let s3 = Self.drive("kill-1", ports: ports, afterRound: { round in
            if round == 1 { instances.kill(at: 1) }
        })
        async let s4 = Self.drive("kill-2", ports: ports)
        let (r3, r4) = try await (s3, s4)
        // kill-1 had no request in flight when B died: it ends exactly where one instance ends.
        #expect(r3.acknowledged == killReference.acknowledged && Self.weights(r3.state) == Self.weights(killReference.state))
        // A fresh instance reads the database: every acknowledged swipe once, in order.
        let c = try Server(arguments: ["--store", url])
        defer { c.kill() }
        for r in [r1, r2, r3, r4] {
            let student = r.acknowledged[0].split(separator: "-").dropLast(2).joined(separator: "-")
            let stored = try await Self.stored(student, port: c.port)
            #expect(stored.ids == r.acknowledged, "\(student)")
            #expect(stored.state["total_swipes"] as? Int == r.acknowledged.count)
            #expect(Self.weights(stored.state) == Self.weights(r.state), "\(student)")
        }
        _ = r4
    }

    @Test("a live group stream on one instance sees the join and the match made on the other (LISTEN/NOTIFY)")
    func groupEventsAcrossInstances() async throws {
        let url = Self.storeURL()
        let a = try Server(arguments: ["--store", url])
        defer { a.kill() }
        let b = try Server(arguments: ["--store", url])
        defer { b.kill() }
        let ann = try Self.token("x-ann"), bob = try Self.token("x-bob")
        let (created, group) = try await ServeLiveTests.call(a.port, "POST", "/groups", token: ann,
                                                             body: #"{"filter":{"state":["MA"]},"quorum_n":2}"#)
        #expect(created == 201)
        let id = try #require(group["session_id"] as? String), code = try #require(group["invite_code"] as? String)
        let aPort = a.port
        let stream = Task {
            var request = URLRequest(url: URL(string: "http://127.0.0.1:\(aPort)/groups/\(id)/events")!)
            request.timeoutInterval = 30
            request.setValue("Bearer \(ann)", forHTTPHeaderField: "Authorization")
            return String(decoding: try await URLSession.shared.data(for: request).0, as: UTF8.self)
        }
        try await Task.sleep(for: .milliseconds(800))
        #expect(try await ServeLiveTests.call(b.port, "POST", "/groups/join", token: bob, body: #"{"invite_code":"\#(code)"}"#).0 == 200)
        let (_, options) = try await ServeLiveTests.call(b.port, "GET", "/groups/\(id)/options?count=1", token: bob)
        let option = try #require((options["options"] as? [[String: Any]])?.first?["option_id"] as? String)
        #expect(try await ServeLiveTests.call(a.port, "POST", "/groups/\(id)/likes", token: ann,
                                              body: #"{"like_id":"a1","option_id":"\#(option)"}"#).0 == 201)
        let (_, match) = try await ServeLiveTests.call(b.port, "POST", "/groups/\(id)/likes", token: bob,
                                                       body: #"{"like_id":"b1","option_id":"\#(option)"}"#)
        #expect(match["match_found"] as? Bool == true)
        let events = try await stream.value
        let names = events.split(separator: "\n").filter { $0.hasPrefix("event: ") }.map { String($0.dropFirst(7)) }
        #expect(names == ["status", "joined", "matched"], "\(events)")
        #expect(events.contains(#""student_id":"x-bob""#) && events.contains(#""matched_option_id":"\#(option)"}"#))
    }
}

@Suite("serve → swipes → export → evaluate", .serialized)
struct ExportLiveTests {
    @Test("what the service logged is exported with probes and propensities and replayed by evaluate")
    func endToEnd() async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("swiperank-export-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let database = dir.appendingPathComponent("serve.sqlite").path
        let profile = try String(contentsOf: CLI.root.appendingPathComponent("datasets/sample-profile.json"), encoding: .utf8)
        let server = try ServeLiveTests.Server(database: database)
        var logged: [String: [(school: String, like: Bool)]] = [:]
        do {
            for student in ["exp-a", "exp-b"] {
                let token = try CLI.run(["token", "--student", student]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
                #expect(try await ServeLiveTests.call(server.port, "PUT", "/student/profile", token: token, body: profile).0 == 201)
                for round in 0..<2 {
                    let (_, deck) = try await ServeLiveTests.call(server.port, "GET", "/student/recommendations?count=8&fields=minimal", token: token)
                    for (i, card) in (deck["recommendations"] as? [[String: Any]] ?? []).enumerated() {
                        let school = card["school_id"] as! String, like = (i + round) % 2 == 0
                        let body = #"{"swipe_id":"\#(student)-\#(round)-\#(i)","school_id":"\#(school)","action":"\#(like ? "like" : "dislike")","timestamp":\#(1_700_000_000_000 + round * 100 + i)}"#
                        #expect(try await ServeLiveTests.call(server.port, "POST", "/student/swipe", token: token, body: body).0 == 201)
                        logged[student, default: []].append((school, like))
                    }
                }
            }
        }
        // Every logged deck names the model that served it.
        let token = try CLI.run(["token", "--student", "exp-a"]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let (_, log) = try await ServeLiveTests.call(server.port, "GET", "/student/export", token: token)
        let decks = (log["events"] as? [[String: Any]] ?? []).filter { $0["kind"] as? String == "served" }
        #expect(decks.count == 2 && decks.allSatisfy { (($0["data"] as? [String: Any])?["model_version"] as? String)?.hasPrefix("m1-") == true })
        server.kill()
        let out = dir.appendingPathComponent("export").path
        let export = try CLI.run(["export", "--database", database, "--out", out])
        #expect(export.status == 0 && export.stdout.contains("exported 2 students and 32 swipes"), "\(export.stderr)")
        let rows = try String(contentsOfFile: out + "/interactions.csv", encoding: .utf8).split(separator: "\n").map { $0.split(separator: ",", omittingEmptySubsequences: false) }
        #expect(rows.first?.joined(separator: ",") == "student_id,item_id,action,timestamp,is_probe,propensity")
        let body = rows.dropFirst()
        #expect(body.count == 32)
        // Every 4th served card is a probe (the engine's rule), and every row has a propensity in (0, 1].
        #expect(body.filter { $0[4] == "true" }.count == 8)
        #expect(body.allSatisfy { Double($0[5]).map { $0 > 0 && $0 <= 1 } ?? false })
        for student in ["exp-a", "exp-b"] {
            let mine = body.filter { $0[0] == Substring(student) }
            #expect(mine.map { String($0[1]) } == logged[student]!.map(\.school))
            #expect(mine.map { $0[2] == "like" } == logged[student]!.map(\.like))
        }
        let evaluate = try CLI.run(["evaluate", "--students", out + "/students.csv", "--interactions", out + "/interactions.csv",
                                    "--swipes", "5"])
        #expect(evaluate.status == 0, "\(evaluate.stderr)")
        #expect(evaluate.stdout.lowercased().contains("replay"), "\(evaluate.stdout.prefix(400))")
        let missing = try CLI.run(["export", "--database", dir.appendingPathComponent("none.sqlite").path, "--out", out])
        #expect(missing.status != 0 && missing.stderr.contains("no SQLite store"))
        // The service's own log fits a collaborative model, which a server then serves with.
        let factors = dir.appendingPathComponent("factors.json").path
        let fit = try CLI.run(["fit-factors", "--interactions", out + "/interactions.csv", "--output", factors, "--dimension", "4"])
        #expect(fit.status == 0 && fit.stdout.contains("on 32 swipes"), "\(fit.stderr)")
        // The same swipes read straight from the service's database: the same factors.
        let fromStore = dir.appendingPathComponent("from-store.json").path
        let direct = try CLI.run(["fit-factors", "--store", "sqlite", "--database", database, "--output", fromStore, "--dimension", "4"])
        #expect(direct.status == 0 && direct.stdout.contains("read 32 swipes and saves, 0 unanswered cards and 0 dwell times and reactions of 2 students")
                && direct.stdout.contains("on 32 swipes"), "\(direct.stderr)")
        func itemFactors(_ path: String) throws -> [[Double]]? {
            (try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: path))) as? [String: Any])?["item_factors"] as? [[Double]]
        }
        #expect(try itemFactors(fromStore) == itemFactors(factors) && itemFactors(factors) != nil)
        // The prior from the same store: the swipes and the profiles the students stored.
        let priorFromStore = dir.appendingPathComponent("prior-from-store.json").path
        let prior = try CLI.run(["fit-prior", "--store", "sqlite", "--database", database, "--output", priorFromStore])
        #expect(prior.status == 0 && prior.stdout.contains("read 32 swipes and saves and 0 dwell times and reactions of 2 students from the store")
                && prior.stdout.contains("fitted on 2 students, 32 swipes"), "\(prior.stdout) \(prior.stderr)")
        let priorJSON = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: priorFromStore))) as? [String: Any]
        #expect(priorJSON?["students"] as? Int == 2 && priorJSON?["swipes"] as? Int == 32)
        let mixed = try CLI.run(["fit-prior", "--store", "sqlite", "--database", database, "--students", "datasets/students.csv", "--output", priorFromStore])
        #expect(mixed.status != 0 && mixed.stderr.contains("--students goes with --interactions"), "\(mixed.stderr)")
        let noStore = try CLI.run(["fit-factors", "--store", "sqlite", "--database", dir.appendingPathComponent("none.sqlite").path, "--output", fromStore])
        #expect(noStore.status != 0 && noStore.stderr.contains("no SQLite store"), "\(noStore.stderr)")
        for bad in ["0s", "5x", "h", "400d"] {
            let refused = try CLI.run(["serve", "--port", "0", "--database", dir.appendingPathComponent("bad.sqlite").path, "--refit-every", bad])
            #expect(refused.status != 0 && refused.stderr.contains("--refit-every"), "\(bad): \(refused.stderr)")
        }
        // The prior is refitted on the model's schedule: alone, or with a value not on/off, refused.
        for arguments in [["--refit-prior", "on"], ["--refit-every", "6h", "--refit-prior", "yes"]] {
            let refused = try CLI.run(["serve", "--port", "0", "--database", dir.appendingPathComponent("bad.sqlite").path] + arguments)
            #expect(refused.status != 0 && refused.stderr.contains("--refit-prior"), "\(arguments): \(refused.stderr)")
        }
        // The signals' choice is the refitted prior's: without it, without a schedule, or not on/off, refused.
        for (arguments, says) in [(["--refit-every", "6h", "--refit-choose-signals", "on"], "needs --refit-prior on"),
                                  (["--refit-choose-signals", "on"], "needs --refit-every and --refit-prior on"),
                                  (["--refit-every", "6h", "--refit-prior", "on", "--refit-choose-signals", "yes"], "must be on or off, got yes")] {
            let refused = try CLI.run(["serve", "--port", "0", "--database", dir.appendingPathComponent("bad.sqlite").path] + arguments)
            #expect(refused.status != 0 && refused.stderr.contains("--refit-choose-signals") && refused.stderr.contains(says),
                    "\(arguments): \(refused.stderr)")
        }
        let memo = try CLI.run(["serve", "--port", "0", "--database", dir.appendingPathComponent("bad.sqlite").path, "--deck-memo", "yes"])
        #expect(memo.status != 0 && memo.stderr.contains("--deck-memo must be on or off, got yes"), "\(memo.stderr)")
        let withFactors = try ServeLiveTests.Server(arguments: ["--database", dir.appendingPathComponent("factors.sqlite").path, "--factors", factors,
                                                                "--refit-every", "6h", "--refit-prior", "on", "--refit-choose-signals", "on"])
        defer { withFactors.kill() }
        let (_, health) = try await ServeLiveTests.call(withFactors.port, "GET", "/health", token: token)
        #expect((health["refit"] as? [String: Any])?["model_version"] as? Int == 0, "\(health)")
        #expect((health["refit"] as? [String: Any])?["prior_version"] == nil, "no prior refitted yet: \(health)")
        let fresh = try CLI.run(["token", "--student", "exp-c"]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(try await ServeLiveTests.call(withFactors.port, "PUT", "/student/profile", token: fresh, body: profile).0 == 201)
        for round in 0..<2 {
            let (status, deck) = try await ServeLiveTests.call(withFactors.port, "GET", "/student/recommendations?count=4&fields=minimal", token: fresh)
            let cards = deck["recommendations"] as? [[String: Any]] ?? []
            #expect(status == 200 && cards.count == 4)
            for (i, card) in cards.enumerated() {
                let body = #"{"swipe_id":"c-\#(round)-\#(i)","school_id":"\#(card["school_id"] as! String)","action":"like","timestamp":\#(round * 10 + i)}"#
                #expect(try await ServeLiveTests.call(withFactors.port, "POST", "/student/swipe", token: fresh, body: body).0 == 201)
            }
        }
    }
}

@Suite("serve --experiment → swipes → arms", .serialized)
struct ExperimentLiveTests {
    @Test("two arms serve their students; arms reports each with intervals and the difference; bad experiment files are refused naming the place")
    func experiment() async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("swiperank-experiment-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let database = dir.appendingPathComponent("serve.sqlite").path
        let file = dir.appendingPathComponent("experiment.json").path
        try Data(#"{"salt": "cli-test", "arms": [{"name": "control"}, {"name": "probes3", "share": 1, "configuration": {"probeInterval": 3}}]}"#.utf8)
            .write(to: URL(fileURLWithPath: file))
        let profile = try String(contentsOf: CLI.root.appendingPathComponent("datasets/sample-profile.json"), encoding: .utf8)
        let server = try ServeLiveTests.Server(arguments: ["--database", database, "--experiment", file])
        var arms: [String: String] = [:]
        do {
            defer { server.kill() }
            for s in 0..<8 {
                let student = "ab-\(s)"
                let token = try CLI.run(["token", "--student", student]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
                #expect(try await ServeLiveTests.call(server.port, "PUT", "/student/profile", token: token, body: profile).0 == 201)
                let (_, deck) = try await ServeLiveTests.call(server.port, "GET", "/student/recommendations?count=6&fields=minimal", token: token)
                for (i, card) in (deck["recommendations"] as? [[String: Any]] ?? []).enumerated() {
                    let body = #"{"swipe_id":"\#(student)-\#(i)","school_id":"\#(card["school_id"] as! String)","action":"\#(i % 3 == 0 ? "like" : "dislike")","timestamp":\#(i)}"#
                    #expect(try await ServeLiveTests.call(server.port, "POST", "/student/swipe", token: token, body: body).0 == 201)
                }
                let (_, log) = try await ServeLiveTests.call(server.port, "GET", "/student/export", token: token)
                let served = (log["events"] as? [[String: Any]] ?? []).first { $0["kind"] as? String == "served" }
                arms[student] = (served?["data"] as? [String: Any])?["arm"] as? String
            }
        }
        #expect(Set(arms.values) == ["control", "probes3"], "\(arms)")
        let report = try CLI.run(["arms", "--database", database, "--reference", "control", "--resamples", "200"])
        #expect(report.status == 0, "\(report.stderr)")
        let lines = report.stdout.split(separator: "\n").map(String.init)
        let control = lines.first { $0.hasPrefix("control\t") }, other = lines.first { $0.hasPrefix("probes3\t") }
        let controlCount = arms.values.filter { $0 == "control" }.count
        #expect(control?.hasPrefix("control\t\(controlCount)\t\(controlCount * 6)\t") == true, "\(report.stdout)")
        #expect(other?.hasPrefix("probes3\t\(8 - controlCount)\t\((8 - controlCount) * 6)\t") == true, "\(report.stdout)")
        #expect(report.stdout.contains("difference from control") && report.stdout.contains("probes3 − control"))
        let unknown = try CLI.run(["arms", "--database", database, "--reference", "nope"])
        #expect(unknown.status != 0 && unknown.stderr.contains("nope") && unknown.stderr.contains("control"), "\(unknown.stderr)")
        // Bad files: the place is named.
        for (text, place) in [(#"{"salt": "s", "arms": [{"name": "a"}, {"name": "b", "colour": 1}]}"#, "$.arms[1].colour"),
                              (#"{"salt": "s", "arms": [{"name": "a"}, {"name": "b", "share": true}]}"#, "$.arms[1].share"),
                              (#"{"salt": "s", "arms": [{"name": "a"}]}"#, "2…16 arms"),
                              (#"{"salt": "s", "arms": [{"name": "a"}, {"name": "b", "factors": "missing.json"}]}"#, "missing.json"),
                              (#"{"salt": "s", "arms": [{"name": "a"}, {"name": "b", "configuration": {"probeInterval": 0}}]}"#, "arm b")] {
            try Data(text.utf8).write(to: URL(fileURLWithPath: file))
            let refused = try CLI.run(["serve", "--port", "0", "--database", dir.appendingPathComponent("bad.sqlite").path, "--experiment", file])
            #expect(refused.status != 0 && refused.stderr.contains(place), "\(text): \(refused.stderr)")
        }
    }
}
