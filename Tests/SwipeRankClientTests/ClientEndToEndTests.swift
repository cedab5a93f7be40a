import Crypto
import Foundation
import Hummingbird
import HummingbirdTesting
import Logging
import OpenAPIRuntime
import SwipeRankColleges
import Synchronization
import SwipeRank
import SwipeRankClient
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
    static let secret = "test-secret-test-secret-test-secret-0123"
    static let profile = Profile(home: .init(value1: .init(latitude: 42.3601, longitude: -71.0589)), home_state: "MA",
                                 max_distance_miles: 250, annual_budget: 32_000, sat: 1_380,
                                 intended_majors: ["Computer Science"], size_preference: .medium,
                                 setting_preference: .city, academic_priority: 0.7, earnings_priority: 0.6)
}

/// The service's clock, moved only by the test (the rate limiter's buckets refill by it).
final class ManualClock: Sendable {
    private let millis = Mutex<Int64>(1_700_000_000_000)
    var now: Int64 { millis.withLock { $0 } }
    func advance(_ duration: Duration) {
        let ms = duration.components.seconds * 1_000 + duration.components.attoseconds / 1_000_000_000_000_000
        millis.withLock { $0 += ms }
    }
}

/// The waits a client asked for, recorded instead of slept (they advance the server's clock).
final class SleepLog: Sendable {
    private let waits = Mutex<[Duration]>([])
    let clock: ManualClock
    init(clock: ManualClock) { self.clock = clock }
    var recorded: [Duration] { waits.withLock { $0 } }
    func sleep(_ d: Duration) { waits.withLock { $0.append(d) }; clock.advance(d) }
}

/// Deterministic swipe ids: `prefix-1`, `prefix-2`, …
final class IDSequence: Sendable {
    private let next = Mutex(0)
    let prefix: String
    init(_ prefix: String) { self.prefix = prefix }
    func make() -> String { "\(prefix)-\(next.withLock { $0 += 1; return $0 })" }
}

/// The real service on 127.0.0.1, an ephemeral port, over a memory store.
struct LiveServer {
    var configure: @Sendable (inout ServerConfiguration) -> Void = { _ in }
    let clock = ManualClock()

    /// Runs `test` with the server's base URL and a token minter.
    func run(_ test: @Sendable (URL, @escaping @Sendable (String) async throws -> String) async throws -> Void) async throws {
        var config = ServerConfiguration()
        config.auth = AuthConfiguration(hmacSecret: Fixtures.secret)
        let clock = self.clock
        config.service.clock = { clock.now }
        configure(&config)
        var logger = Logger(label: "client-test")
        logger.logLevel = .warning
        let parts = try await buildParts(engine: Fixtures.engine, store: MemoryStore(), configuration: config, logger: logger)
        let app = Application(responder: parts.responder, configuration: .init(address: .hostname("127.0.0.1", port: 0)), logger: logger)
        let auth = config.auth
        try await app.test(.live) { client in
            let port = try #require(client.port)
            try await test(URL(string: "http://127.0.0.1:\(port)")!) { student in
                try await auth.token(studentID: student, lifetime: 3_600)
            }
        }
    }
}

@Suite("SwipeRankClient against the real service")
struct ClientEndToEndTests {
    @Test("profile, deck (a retried deck is the same cards), swipes, an offline queue flushed by a new instance, and again (replayed)")
    func offlineQueue() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("swiperank-client-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        try await LiveServer().run { url, mint in
            let token = try await mint("alice")
            let ids = IDSequence("q")
            let client = SwipeRankClient(serverURL: url, token: { token }, newSwipeID: { ids.make() }, now: { 1_000 })
            let stored = try await client.setProfile(Fixtures.profile)
            #expect(stored.student_id == "alice" && stored.version == 1)

            let first = try await client.deck(count: 5, fields: .minimal)
            #expect(first.recommendations.count == 5 && first.repeated == 0)
            let again = try await client.deck(count: 5, fields: .minimal)
            #expect(again.recommendations.map(\.itemID) == first.recommendations.map(\.itemID), "unplayed cards come back first")
            #expect(again.repeated == 5)
            let cards = first.recommendations.map(\.itemID)

            let live = try await client.swipe(itemID: cards[0], action: .like)
            #expect(live.swipe_id == "q-1" && live.total_swipes == 1 && live.organic == false)

            // Offline: three swipes queued to a file.
            let file = directory.appendingPathComponent("queue.json")
            let queue = try SwipeQueue(fileURL: file)
            for (k, card) in cards[1...3].enumerated() {
                try await queue.enqueue(client.makeSwipe(itemID: card, action: k == 1 ? .dislike : .like, timestamp: 2_000 + Int64(k)))
            }
            #expect(FileManager.default.fileExists(atPath: file.path))
            let copy = directory.appendingPathComponent("copy.json")
            try FileManager.default.copyItem(at: file, to: copy)

            // A new client and queue instance (a restarted app) flush the file.
            let restarted = SwipeRankClient(serverURL: url, token: { token })
            let reopened = try SwipeQueue(fileURL: file)
            #expect(await reopened.swipes.map(\.swipe_id) == ["q-2", "q-3", "q-4"])
            let report = try await reopened.flush(using: restarted)
            #expect(report.recorded == 3 && report.replayed == 0 && report.rejected.isEmpty)
            #expect(report.totalSwipes == 4)
            #expect(try await restarted.learningState().total_swipes == 4)
            #expect(await reopened.swipes.isEmpty)
            #expect(try await SwipeQueue(fileURL: file).swipes.isEmpty, "the emptied queue is on disk")

            // The same queue sent again (the app crashed before it saw the answer): replayed.
            let resent = try await SwipeQueue(fileURL: copy).flush(using: restarted)
            #expect(resent.replayed == 3 && resent.recorded == 0 && resent.totalSwipes == 4)
            #expect(try await restarted.learningState().total_swipes == 4)

            let saved = try await client.save(itemID: cards[4])
            guard case let .SchoolSaveResponse(body) = saved else { Issue.record("expected school_id on the college catalog"); return }
            #expect(body.saved && body.school_id == cards[4])
            #expect(try await client.saved(fields: .minimal).count == 1)

            // The screens: matches (liked or saved, newest first) and home.
            let matches = try await client.matches(limit: 10, fields: .minimal)
            #expect(matches.count == 4 && matches.matches.first?.itemID == cards[4] && matches.next_offset == nil)
            #expect(matches.details.first?.saved == true && matches.details.first?.swiped == false)
            let home = try await client.home(count: 3, fields: .minimal)
            #expect(home.total_swipes == 5 && home.saved_count == 1 && home.matches_count == 4 && home.deck.recommendations.count == 3)
        }
    }

    @Test("a guest token signs up a student")
    func guest() async throws {
        // Real time: a guest token's expiry is stamped by the service's clock and checked against now.
        try await LiveServer(configure: { config in
            config.auth.guestTokens = true
            config.service.clock = { Int64(Date().timeIntervalSince1970 * 1_000) }
        }).run { url, _ in
            let token = try await SwipeRankClient(serverURL: url).guestToken()
            #expect(token.token_type == .Bearer && token.student_id.hasPrefix("guest-"))
            let client = SwipeRankClient(serverURL: url, token: { token.token })
            #expect(try await client.setProfile(Fixtures.profile).student_id == token.student_id)
            #expect(try await client.profile().student_id == token.student_id)
        }
    }

    @Test("errors are typed values carrying the service's code, message and details")
    func errors() async throws {
        try await LiveServer().run { url, mint in
            let token = try await mint("bob")
            let client = SwipeRankClient(serverURL: url, token: { token })
            do {
                _ = try await client.deck()
                Issue.record("a student without a profile has no deck")
            } catch let error as SwipeRankAPIError {
                #expect(error.status == 404 && error.code == "NOT_FOUND" && !error.message.isEmpty)
            }
            _ = try await client.setProfile(Fixtures.profile)
            do {
                _ = try await client.deck(count: 0)
                Issue.record("count 0 is refused")
            } catch let error as SwipeRankAPIError {
                #expect(error.status == 400 && error.code == "VALIDATION_ERROR" && error.detail("field") == "count")
            }
            do {
                _ = try await client.swipe(itemID: "no-such-school", action: .like, timestamp: 1)
                Issue.record("an unknown card is refused")
            } catch let error as SwipeRankAPIError {
                #expect(error.status == 404 && error.code == "NOT_FOUND")
            }
            let anonymous = SwipeRankClient(serverURL: url)
            do {
                _ = try await anonymous.learningState()
                Issue.record("no token, no student")
            } catch let error as SwipeRankAPIError {
                #expect(error.status == 401 && error.code == "AUTH_REQUIRED")
            }
        }
    }

    @Test("a 429 is waited out for its Retry-After (the injected sleep records the wait) and the call succeeds")
    func rateLimited() async throws {
        let server = LiveServer(configure: { $0.rateLimitPerHour = 3 })
        let sleeps = SleepLog(clock: server.clock)
        try await server.run { url, mint in
            let token = try await mint("carol")
            let noRetry = SwipeRankClient(serverURL: url, token: { token }, retry: RetryPolicy(maxAttempts: 1))
            _ = try await noRetry.setProfile(Fixtures.profile)
            _ = try await noRetry.learningState()
            _ = try await noRetry.learningState()
            var retryAfter = 0
            do {
                _ = try await noRetry.learningState()
                Issue.record("the fourth request in the hour is limited")
            } catch let error as SwipeRankAPIError {
                #expect(error.status == 429 && error.code == "RATE_LIMITED")
                retryAfter = try #require(error.retryAfterSeconds)
                #expect(retryAfter > 0)
            }
            let patient = SwipeRankClient(serverURL: url, token: { token },
                                          retry: RetryPolicy(maxAttempts: 3, maxDelay: .seconds(7_200), sleep: { sleeps.sleep($0) }))
            let state: Components.Schemas.LearningStateResponse
            do {
                state = try await patient.learningState()
            } catch {
                Issue.record("waits \(sleeps.recorded), clock \(server.clock.now): \(error)")
                return
            }
            #expect(state.total_swipes == 0)
            #expect(sleeps.recorded == [.seconds(retryAfter)], "one wait, as long as the service said")
        }
    }

    @Test("without Retry-After the waits double from the base, and are bounded")
    func backoff() {
        let policy = RetryPolicy(maxAttempts: 4, baseDelay: .milliseconds(500), maxDelay: .seconds(60), sleep: { _ in })
        #expect(policy.delays(retryAfterSeconds: nil) == [.milliseconds(500), .seconds(1), .seconds(2)])
        #expect(policy.delays(retryAfterSeconds: 30) == [.seconds(30), .seconds(30), .seconds(30)])
        #expect(policy.delays(retryAfterSeconds: 600).isEmpty, "a wait past maxDelay is not waited out")
    }

    @Test("the generated client is current: openapi.yaml's SHA-256 is the one recorded by scripts/generate-client")
    func generatedIsCurrent() throws {
        let spec = try Data(contentsOf: Fixtures.root.appendingPathComponent("Sources/SwipeRankServer/openapi.yaml"))
        let recorded = try String(contentsOf: Fixtures.root.appendingPathComponent("Sources/SwipeRankClient/Generated/openapi.sha256"),
                                  encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        let actual = SHA256.hash(data: spec).map { String(format: "%02x", $0) }.joined()
        #expect(actual == recorded, "openapi.yaml changed: run scripts/generate-client")
    }
}
