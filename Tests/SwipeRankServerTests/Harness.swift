import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import NIOCore
import SwipeRank
import SwipeRankColleges
@testable import SwipeRankServer
import SwipeRankStore
import Testing

/// The shipped catalog, loaded once per test process.
enum Fixtures {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()
    static let engine: SwipeEngine<SchoolMatcher> = {
        do {
            let schools = try SchoolCatalog(schoolsPath: root.appendingPathComponent("datasets/schools.csv").path,
                                            majorsPath: root.appendingPathComponent("datasets/school_majors.csv").path)
            return SwipeEngine(matcher: SchoolMatcher(schools: schools))
        } catch {
            fatalError("The shipped dataset must load: \(error)")
        }
    }()

    static let profile = """
        {"home": {"latitude": 42.3601, "longitude": -71.0589}, "home_state": "MA", "max_distance_miles": 250,
         "annual_budget": 32000, "sat": 1380, "intended_majors": ["Computer Science"], "size_preference": "medium",
         "setting_preference": "city", "academic_priority": 0.7, "earnings_priority": 0.6}
        """
    static let secret = "test-secret-test-secret-test-secret-0123"
}

/// A JSON response.
struct Reply {
    var status: HTTPResponse.Status
    var headers: HTTPFields
    var body: Data

    var json: [String: Any] { (try? JSONSerialization.jsonObject(with: body)) as? [String: Any] ?? [:] }
    var error: [String: Any] { json["error"] as? [String: Any] ?? [:] }
    var code: String? { error["code"] as? String }
    var details: [String: Any] { error["details"] as? [String: Any] ?? [:] }
}

/// Runs router tests against the service over a given store.
struct Harness {
    var store: any ServiceStore = MemoryStore()
    var engine = Fixtures.engine
    /// The catalog's source, for the item API (nil: off).
    var catalog: CatalogSource<SchoolMatcher>?
    var configure: @Sendable (inout ServerConfiguration) -> Void = { _ in }
    /// An A/B test over the students, or nil.
    var experiment: Experiment<SchoolMatcher>?

    func run(_ test: @escaping @Sendable (Client) async throws -> Void) async throws {
        try await runWithParts { client, _ in try await test(client) }
    }

    /// `run(_:)`, the test also getting the service's parts (its generations, the refitter).
    func runWithParts(_ test: @escaping @Sendable (Client, ServiceParts<SchoolMatcher>) async throws -> Void) async throws {
        var config = ServerConfiguration()
        config.auth = AuthConfiguration(hmacSecret: Fixtures.secret)
        config.service.clock = { 1_700_000_000_000 }
        configure(&config)
        var logger = Logger(label: "test")
        logger.logLevel = .warning
        let parts = try await buildParts(engine: engine, store: store, configuration: config, catalog: catalog, experiment: experiment,
                                         logger: logger)
        let app = Application(responder: parts.responder, configuration: .init(address: .hostname("127.0.0.1", port: 0)), logger: logger)
        let auth = config.auth
        // Other instances' catalog edits, as `buildApplication`'s poll service follows them.
        let poll = parts.catalog.map { manager in
            Task { try await CatalogPollService(catalog: manager, interval: .milliseconds(20)).run() }
        }
        defer { poll?.cancel() }
        try await app.test(.router) { client in try await test(Client(client: client, auth: auth), parts) }
        // Snapshots are written after the requests that made them due: finish them, so a test
        // that opens the store again sees what this server stored.
        await parts.groups.students.snapshots.drain()
    }

    struct Client: Sendable {
        let client: any TestClientProtocol
        let auth: AuthConfiguration

        func token(_ student: String) async throws -> String {
            try await auth.token(studentID: student, lifetime: 3_600)
        }

        /// One request; `student` adds a bearer token; `body` is sent as JSON unless
        /// `contentType` says otherwise.
        func call(_ method: HTTPRequest.Method, _ uri: String, student: String? = nil, body: String? = nil,
                  contentType: String? = "application/json", headers: HTTPFields = [:]) async throws -> Reply {
            var fields = headers
            if let student { fields[.authorization] = "Bearer \(try await token(student))" }
            if body != nil, let contentType { fields[.contentType] = contentType }
            let response = try await client.execute(uri: uri, method: method, headers: fields,
                                                    body: body.map { ByteBuffer(string: $0) })
            return Reply(status: response.status, headers: response.headers, body: Data(response.body.readableBytesView))
        }

        /// PUT the fixture profile.
        func createStudent(_ student: String) async throws {
            let reply = try await call(.put, "/student/profile", student: student, body: Fixtures.profile)
            #expect(reply.status == .created, "\(String(decoding: reply.body, as: UTF8.self))")
        }

        /// The ids of a served deck.
        func deck(_ student: String, count: Int = 10) async throws -> [String] {
            let reply = try await call(.get, "/student/recommendations?count=\(count)&fields=minimal", student: student)
            #expect(reply.status == .ok)
            return (reply.json["recommendations"] as? [[String: Any]] ?? []).compactMap { $0["school_id"] as? String }
        }

        func swipe(_ student: String, id: String, school: String, like: Bool, at: Int64 = 1) async throws -> Reply {
            try await call(.post, "/student/swipe", student: student,
                           body: #"{"swipe_id":"\#(id)","school_id":"\#(school)","action":"\#(like ? "like" : "dislike")","timestamp":\#(at)}"#)
        }
    }
}
