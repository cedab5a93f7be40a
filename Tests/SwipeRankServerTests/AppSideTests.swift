import CompressNIO
import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import Logging
import JWTKit
import NIOCore
import SwipeRankColleges
@testable import SwipeRankServer
import SwipeRank
import SwipeRankStore
import Synchronization
import Testing

/// What an app builds on: guest sign-in, audience/issuer checks and rotating keys, the catalog's
/// picker data, gzip, the web app's files.
@Suite struct AppSideTests {
    /// The real clock: tokens are checked against it (JWTKit's `exp`), so a guest token must be
    /// issued on it too.
    static let realClock: @Sendable () -> Int64 = { Int64(Date().timeIntervalSince1970 * 1_000) }

    @Test("guest sign-in: a fresh id per call, a working token, refresh keeps the id; off → 404; per-address limit → 429")
    func guests() async throws {
        let counter = IDCounter()
        try await Harness(configure: {
            $0.service.clock = Self.realClock
            $0.auth.guestTokens = true
            $0.auth.guestsPerHour = 3
            $0.guestID = { AuthController.guestID(high: 0, low: UInt64(counter.next())) }
        }).run { c in
            let first = try await c.call(.post, "/auth/guest")
            #expect(first.status == .created && first.headers[.cacheControl] == "no-store")
            let token = try #require(first.json["token"] as? String)
            let id = try #require(first.json["student_id"] as? String)
            #expect(id == AuthController.guestID(high: 0, low: 1) && first.json["token_type"] as? String == "Bearer")
            let expires = try #require(first.json["expires_at"] as? Int)
            #expect(abs(expires - Int(Date().timeIntervalSince1970) - 12 * 3_600) < 120)
            // The token is a student's: the profile route answers for that id.
            let bearer: HTTPFields = [.authorization: "Bearer \(token)"]
            let put = try await c.call(.put, "/student/profile", body: Fixtures.profile, headers: bearer)
            #expect(put.status == .created && put.json["student_id"] as? String == id)
            let second = try await c.call(.post, "/auth/guest")
            #expect(second.json["student_id"] as? String == AuthController.guestID(high: 0, low: 2))
            // Refresh: same id; an account's token (not a guest's) is refused.
            let refreshed = try await c.call(.post, "/auth/guest/refresh", headers: bearer)
            #expect(refreshed.status == .ok && refreshed.json["student_id"] as? String == id)
            let account = try await c.call(.post, "/auth/guest/refresh", headers: [.authorization: "Bearer \(try await c.token("alice"))"])
            #expect(account.status == .unauthorized && (account.error["message"] as? String)?.contains("guest") == true)
            let anonymous = try await c.call(.post, "/auth/guest/refresh")
            #expect(anonymous.status == .unauthorized && anonymous.code == "AUTH_REQUIRED")
            // Sign-ups are limited per address (3 per hour here), refreshes per guest (also 3):
            // neither starves the other.
            #expect(try await c.call(.post, "/auth/guest").status == .created)
            let limited = try await c.call(.post, "/auth/guest")
            #expect(limited.status == .tooManyRequests && limited.code == "RATE_LIMITED")
            #expect(Int(limited.headers[.retryAfter] ?? "") ?? 0 >= 1)
            for _ in 0..<2 { #expect(try await c.call(.post, "/auth/guest/refresh", headers: bearer).status == .ok) }
            let refreshLimited = try await c.call(.post, "/auth/guest/refresh", headers: bearer)
            #expect(refreshLimited.status == .tooManyRequests && (refreshLimited.error["message"] as? String)?.contains("refreshes") == true)
        }
        try await Harness().run { c in
            let off = try await c.call(.post, "/auth/guest")
            #expect(off.status == .notFound && off.code == "GUEST_DISABLED")
        }
        // Behind a trusted proxy: counted by the address it appends, so two clients are two buckets.
        try await Harness(configure: {
            $0.service.clock = Self.realClock
            $0.auth.guestTokens = true
            $0.auth.guestsPerHour = 1
            $0.trustForwardedFor = true
        }).run { c in
            let a: HTTPFields = [.init("X-Forwarded-For")!: "203.0.113.9, 198.51.100.1"]
            let b: HTTPFields = [.init("X-Forwarded-For")!: "198.51.100.2"]
            let first = try await c.call(.post, "/auth/guest", headers: a)
            let other = try await c.call(.post, "/auth/guest", headers: b)
            let again = try await c.call(.post, "/auth/guest", headers: a)
            #expect(first.status == .created && other.status == .created && again.status == .tooManyRequests)
            // The client-written first entry does not pick the bucket: the proxy's last one does.
            let spoofed: HTTPFields = [.init("X-Forwarded-For")!: "10.9.9.9, 198.51.100.1"]
            let spoof = try await c.call(.post, "/auth/guest", headers: spoofed)
            #expect(spoof.status == .tooManyRequests)
        }
    }

    @Test("guest ids: 128 bits as 26 base32 characters, against a bit-by-bit reference")
    func guestIDs() {
        var rng = SplitMix(seed: 7)
        for _ in 0..<200 {
            let high = rng.next(), low = rng.next()
            // Reference: the 128 bits, two zero bits in front, in groups of five.
            var bits: [Int] = [0, 0]
            for i in 0..<64 { bits.append(Int((high >> UInt64(63 - i)) & 1)) }
            for i in 0..<64 { bits.append(Int((low >> UInt64(63 - i)) & 1)) }
            let alphabet = Array("abcdefghijklmnopqrstuvwxyz234567")
            var expected = "guest-"
            for i in stride(from: 0, to: 130, by: 5) {
                var value = 0
                for bit in bits[i..<i + 5] { value = value * 2 + bit }
                expected.append(alphabet[value])
            }
            #expect(AuthController.guestID(high: high, low: low) == expected)
        }
        #expect(AuthController.randomGuestID() != AuthController.randomGuestID())
    }

    @Test("aud and iss: checked when configured, each refusal says which")
    func audienceAndIssuer() async throws {
        try await Harness(configure: {
            $0.auth.audience = "swiperank-app"
            $0.auth.issuer = "https://id.example"
        }).run { c in
            func call(_ claims: StudentClaims) async throws -> Reply {
                let keys = JWTKeyCollection()
                await keys.add(hmac: HMACKey(from: Fixtures.secret), digestAlgorithm: .sha256)
                return try await c.call(.get, "/student/profile", headers: [.authorization: "Bearer \(try await keys.sign(claims))"])
            }
            let later = Date().addingTimeInterval(600)
            let good = try await call(StudentClaims(studentID: "a", expires: later, audience: "swiperank-app", issuer: "https://id.example"))
            #expect(good.status == .notFound)  // authenticated; no profile yet
            let noAudience = try await call(StudentClaims(studentID: "a", expires: later, issuer: "https://id.example"))
            #expect(noAudience.code == "AUTH_INVALID" && (noAudience.error["message"] as? String)?.contains("audience") == true)
            let otherAudience = try await call(StudentClaims(studentID: "a", expires: later, audience: "another-app", issuer: "https://id.example"))
            #expect(otherAudience.code == "AUTH_INVALID")
            let otherIssuer = try await call(StudentClaims(studentID: "a", expires: later, audience: "swiperank-app", issuer: "https://evil.example"))
            #expect(otherIssuer.code == "AUTH_INVALID" && (otherIssuer.error["message"] as? String)?.contains("issuer") == true)
            // `swiperank token` mints with the configured claims.
            #expect(try await c.call(.get, "/student/profile", student: "a").status == .notFound)
        }
    }

    /// A JWKS naming P-256 public keys.
    static func jwks(_ keys: [(String, ES256PrivateKey)]) -> String {
        let entries = keys.map { kid, key in
            let (x, y) = key.publicKey.parameters!
            return #"{"kty":"EC","crv":"P-256","alg":"ES256","use":"sig","kid":"\#(kid)","x":"\#(x)","y":"\#(y)"}"#
        }
        return #"{"keys":[\#(entries.joined(separator: ","))]}"#
    }

    static func sign(_ key: ES256PrivateKey, kid: String, student: String) async throws -> String {
        let keys = JWTKeyCollection()
        await keys.add(ecdsa: key, kid: JWKIdentifier(string: kid))
        return try await keys.sign(StudentClaims(studentID: student, expires: Date().addingTimeInterval(600)), kid: JWKIdentifier(string: kid))
    }

    @Test("JWKS: keys by kid; a reloaded set takes over at once (removed keys stop working, cached or not); a broken file keeps the old set")
    func jwksRotation() async throws {
        let k1 = ES256PrivateKey(), k2 = ES256PrivateKey()
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("jwks-\(UUID().uuidString).json")
        defer { try? FileManager.default.removeItem(at: file) }
        try Self.jwks([("k1", k1)]).write(to: file, atomically: true, encoding: .utf8)
        var auth = AuthConfiguration()
        auth.jwksJSON = try String(contentsOf: file, encoding: .utf8)
        let verified = VerifiedTokens()
        let ring = try await KeyRing(auth: auth, verified: verified)
        let t1 = try await Self.sign(k1, kid: "k1", student: "a"), t2 = try await Self.sign(k2, kid: "k2", student: "b")
        #expect(try await ring.verify(t1).sub.value == "a")
        await #expect(throws: APIError.self) { try await ring.verify(t2) }
        verified.insert(t1, subject: "a", expires: Date().addingTimeInterval(600))

        let service = JWKSReloadService(source: .file(file.path), interval: .milliseconds(10), ring: ring, logger: .init(label: "test"))
        let task = Task { try await service.run() }
        defer { task.cancel() }
        try "{not json".write(to: file, atomically: true, encoding: .utf8)
        await #expect(throws: (any Error).self) { try await service.reload("{not json") }
        #expect(try await ring.verify(t1).sub.value == "a")  // the broken set changed nothing
        try Self.jwks([("k2", k2)]).write(to: file, atomically: true, encoding: .utf8)
        // The poll picks the new set up (bounded wait, at least 60 s: the interval is 10 ms, but
        // parallel CPU-bound suites can hold the executor for seconds).
        var rotated = false
        for _ in 0..<12_000 where !rotated {
            rotated = (try? await ring.verify(t2)) != nil
            if !rotated { try await Task.sleep(for: .milliseconds(5)) }
        }
        #expect(rotated)
        await #expect(throws: APIError.self) { try await ring.verify(t1) }
        #expect(verified.subject(of: t1, at: Date()) == nil, "a swap forgets tokens verified by the old set")
    }

    @Test("JWKS from the identity provider's URL: fetched, rotated by the poll, a failing URL keeps the keys")
    func jwksFromURL() async throws {
        let k1 = ES256PrivateKey(), k2 = ES256PrivateKey()
        let published = Mutex((200, Self.jwks([("k1", k1)])))
        let router = Router()
        router.get("jwks") { _, _ -> Response in
            let (status, text) = published.withLock { $0 }
            return Response(status: .init(code: status), headers: [.contentType: "application/json"],
                            body: ResponseBody(byteBuffer: ByteBuffer(string: text)))
        }
        let port = AsyncStream<Int>.makeStream()
        let app = Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)),
                              onServerRunning: { port.continuation.yield($0.localAddress?.port ?? 0) }, logger: Logger(label: "idp"))
        let server = Task { try await app.runService(gracefulShutdownSignals: []) }
        defer { server.cancel() }
        var ports = port.stream.makeAsyncIterator()
        let bound = try #require(await ports.next())
        let source = JWKSSource("http://127.0.0.1:\(bound)/jwks")
        #expect(source == .url("http://127.0.0.1:\(bound)/jwks") && JWKSSource("keys.json") == .file("keys.json"))

        var auth = AuthConfiguration()
        // A generous deadline: the fetch's handler runs on the test process's shared executor,
        // which CPU-bound suites running in parallel can keep busy for seconds.
        auth.jwksJSON = try await source.read(timeout: .seconds(300))
        let ring = try await KeyRing(auth: auth, verified: VerifiedTokens())
        let t1 = try await Self.sign(k1, kid: "k1", student: "a"), t2 = try await Self.sign(k2, kid: "k2", student: "b")
        #expect(try await ring.verify(t1).sub.value == "a")
        let service = JWKSReloadService(source: source, interval: .milliseconds(10), ring: ring, logger: Logger(label: "test"))
        let task = Task { try await service.run() }
        defer { task.cancel() }
        // The provider fails for a while: the keys in service stay.
        published.withLock { $0 = (503, "") }
        await #expect(throws: AuthSetupError.self) { try await source.read() }
        #expect(try await ring.verify(t1).sub.value == "a")
        published.withLock { $0 = (200, Self.jwks([("k2", k2)])) }
        var rotated = false
        for _ in 0..<12_000 where !rotated {  // at least 60 s (see above)
            rotated = (try? await ring.verify(t2)) != nil
            if !rotated { try await Task.sleep(for: .milliseconds(5)) }
        }
        #expect(rotated)
        await #expect(throws: APIError.self) { try await ring.verify(t1) }
        await #expect(throws: AuthSetupError.self) { try await JWKSSource.file("/nonexistent/jwks.json").read() }
    }

    @Test("a swipe answer stored by an earlier version replays in today's shape (option codes, organic false); today's bytes as stored")
    func oldReplayShape() throws {
        let old = Data(#"{"feedback":{"card_id":"166027","options":["Too expensive","Great value"],"reason":"probe"},"learning_state":{"phase":"discovery"},"outcome":"recorded","swipe_id":"s-1","total_swipes":3}"#.utf8)
        let now = try #require(try JSONSerialization.jsonObject(with: StudentService<SchoolMatcher>.currentSwipeShape(old)) as? [String: Any])
        #expect(now["organic"] as? Bool == false && now["total_swipes"] as? Int == 3 && now["swipe_id"] as? String == "s-1")
        let options = (now["feedback"] as? [String: Any])?["options"] as? [[String: String]]
        #expect(options == [["code": "too_expensive", "label": "Too expensive"], ["code": "great_value", "label": "Great value"]])
        let current = Data(#"{"feedback":null,"learning_state":{"phase":"discovery"},"organic":true,"outcome":"recorded","swipe_id":"s-2","total_swipes":4}"#.utf8)
        #expect(StudentService<SchoolMatcher>.currentSwipeShape(current) == current)
    }

    @Test("the picker's data: GET /catalog and /catalog/majors (every title a profile accepts)")
    func catalogRoutes() async throws {
        try await Harness().run { c in
            let info = try await c.call(.get, "/catalog")
            #expect(info.status == .ok && info.json["kind"] as? String == "schools" && info.json["item_id_key"] as? String == "school_id")
            #expect(info.json["items"] as? Int == Fixtures.engine.matcher.catalog.count && info.json["has_majors"] as? Bool == true)
            let majors = try await c.call(.get, "/catalog/majors")
            let list = try #require(majors.json["majors"] as? [[String: Any]])
            let names = list.compactMap { $0["name"] as? String }
            #expect(names == names.sorted() && names.count > 100)
            let cs = try #require(list.first { $0["cip_code"] as? String == "11.07" })
            let offering = Fixtures.engine.matcher.schools.majors.offerings["11.07"]?.count
            #expect(cs["name"] as? String == "Computer Science" && cs["schools"] as? Int == offering)
            // Every listed name is a major a profile may name.
            for name in names.prefix(40) {
                let body = #"{"intended_majors":["\#(name)"]}"#
                #expect(try await c.call(.put, "/student/profile", student: "m", body: body).status.code < 300, "\(name)")
            }
        }
        // A catalog whose profiles have no majors says so; its attributes build a profile form.
        try await CatalogsRouteTests().run(MemoryStore()) { c in
            let generic = try await c.call(.get, "/catalogs/restaurants/catalog")
            #expect(generic.json["kind"] as? String == "items" && generic.json["has_majors"] as? Bool == false)
            #expect(try await c.call(.get, "/catalogs/restaurants/catalog/majors").status == .notFound)
            let attributes = try await c.call(.get, "/catalogs/restaurants/catalog/attributes")
            let list = try #require(attributes.json["attributes"] as? [[String: Any]])
            let catalog = ItemWireTests.engine.matcher.catalog
            #expect(list.count == catalog.textAttributeNames.count + catalog.numericAttributeNames.count)
            for (i, name) in catalog.textAttributeNames.enumerated() {
                let entry = try #require(list.first { $0["name"] as? String == name })
                let values = entry["values"] as? [String] ?? []
                #expect(Set(values) == Set(catalog.textValues[i].filter { !$0.isEmpty }) || values.count == AttributesBody.maxValues)
                let counts = values.map { v in catalog.textValues[i].count { $0 == v } }
                #expect(counts == counts.sorted(by: >), "\(name): most frequent first")
            }
            for (i, name) in catalog.numericAttributeNames.enumerated() {
                let entry = try #require(list.first { $0["name"] as? String == name })
                #expect(entry["min"] as? Double == catalog.numericValues[i].compactMap { $0 }.min())
            }
            // Every preference key it lists is one a profile accepts.
            let keys = try #require(attributes.json["preference_keys"] as? [String])
            #expect(keys.contains("distance") && keys.count >= catalog.columns.count)
            for key in keys {
                let body = #"{"home": {"latitude": 40.05, "longitude": -74.95}, "preferences": {"\#(key)": 0.5}}"#
                #expect(try await c.call(.put, "/catalogs/restaurants/student/profile", student: "p", body: body).status.code < 300, "\(key)")
            }
        }
    }

    @Test("gzip: JSON over 1 KB when accepted (the 50-card preload ≤ 12 KB), byte-identical once inflated; small, refused or streamed answers as they are")
    func compression() async throws {
        try await Harness().run { c in
            try await c.createStudent("g")
            let plainCards = try await c.call(.get, "/student/recommendations/preload?count=50", student: "g")
            #expect(plainCards.headers[.contentEncoding] == nil && plainCards.headers[.vary]?.contains("Accept-Encoding") == true)
            // Compare the same deck twice: the second GET serves new cards, so read a stable
            // large answer (the majors list) for byte identity, and the deck for size.
            let gz: HTTPFields = [.acceptEncoding: "gzip, deflate, br"]
            let packedCards = try await c.call(.get, "/student/recommendations/preload?count=50", student: "g", headers: gz)
            #expect(packedCards.headers[.contentEncoding] == "gzip")
            #expect(packedCards.body.count <= 12 * 1_024, "50 cards gzipped: \(packedCards.body.count) bytes")
            let inflatedCards = try Self.gunzip(packedCards.body)
            #expect(inflatedCards.count > 3 * packedCards.body.count)
            #expect((try JSONSerialization.jsonObject(with: inflatedCards) as? [String: Any])?["recommendations"] as? [Any] != nil)

            let plain = try await c.call(.get, "/catalog/majors")
            let packed = try await c.call(.get, "/catalog/majors", headers: gz)
            let inflated = try Self.gunzip(packed.body)
            #expect(packed.headers[.contentEncoding] == "gzip" && inflated == plain.body)
            let refused = try await c.call(.get, "/catalog/majors", headers: [.acceptEncoding: "gzip;q=0, identity"])
            #expect(refused.headers[.contentEncoding] == nil && refused.body == plain.body)
            let star = try await c.call(.get, "/catalog/majors", headers: [.acceptEncoding: "*"])
            #expect(star.headers[.contentEncoding] == "gzip")
            let small = try await c.call(.get, "/health/live", headers: gz)
            #expect(small.headers[.contentEncoding] == nil)
        }
        #expect(CompressionMiddleware.acceptsGzip("deflate, gzip;q=0.5") && !CompressionMiddleware.acceptsGzip("gzip;q=0"))
        #expect(!CompressionMiddleware.acceptsGzip("br") && !CompressionMiddleware.acceptsGzip(nil))
        #expect(!CompressionMiddleware.compressible("text/event-stream") && CompressionMiddleware.compressible("application/json; charset=utf-8"))
    }

    static func gunzip(_ data: Data) throws -> Data {
        var buffer = ByteBuffer(bytes: data)
        return Data(try buffer.decompress(with: .gzip()).readableBytesView)
    }

    @Test("the web app: /app redirects to /app/, files with their types, ETag revalidation, no escape from the folder; the compiled-in copy is the folder's")
    func webApp() async throws {
        let folder = Fixtures.root.appendingPathComponent("Sources/SwipeRankServer/Web")
        let names = try #require(FileManager.default.enumerator(atPath: folder.path)?.allObjects as? [String])
            .filter { name in
                var isDirectory: ObjCBool = false
                return FileManager.default.fileExists(atPath: folder.appendingPathComponent(name).path, isDirectory: &isDirectory)
                    && !isDirectory.boolValue && !(name as NSString).lastPathComponent.hasPrefix(".")
            }
        #expect(Set(names) == Set(WebAssets.files.keys), "run bash scripts/embed-web after editing the app")
        for name in names {
            let text = try String(contentsOf: folder.appendingPathComponent(name), encoding: .utf8)
            #expect(WebAssets.files[name] == text, "\(name): run bash scripts/embed-web after editing the app")
        }
        #expect(names.contains("index.html"))
        try await Harness().run { c in
            let bare = try await c.call(.get, "/app")
            #expect(bare.status == .permanentRedirect && bare.headers[.location] == "/app/")
            let index = try await c.call(.get, "/app/")
            #expect(index.status == .ok && index.headers[.contentType] == "text/html; charset=utf-8")
            #expect(index.headers[.contentSecurityPolicy]?.contains("script-src 'self'") == true)
            #expect(index.body == Data(WebAssets.files["index.html"]!.utf8))
            let etag = try #require(index.headers[.eTag])
            #expect(try await c.call(.get, "/app/", headers: [.ifNoneMatch: etag]).status == .notModified)
            #expect(try await c.call(.get, "/app/", headers: [.ifNoneMatch: "W/\(etag)"]).status == .notModified)
            for name in names where name.hasSuffix(".js") {
                let script = try await c.call(.get, "/app/\(name)")
                #expect(script.status == .ok && script.headers[.contentType] == "text/javascript; charset=utf-8", "\(name)")
            }
            for path in ["/app/../Package.swift", "/app/.hidden.js", "/app/missing.js", "/app/index.exe"] {
                let r = try await c.call(.get, path)
                #expect(r.status == .notFound && r.code == "NOT_FOUND", "\(path): \(r.status)")
            }
        }
        // --app-dir: the folder on disk, edited without a rebuild.
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("app-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir.appendingPathComponent("js"), withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        try "<!doctype html><title>dev</title>".write(to: dir.appendingPathComponent("index.html"), atomically: true, encoding: .utf8)
        try "export const x = 1;".write(to: dir.appendingPathComponent("js/x.js"), atomically: true, encoding: .utf8)
        try await Harness(configure: { $0.appDirectory = dir.path }).run { c in
            let index = try await c.call(.get, "/app/")
            #expect(String(decoding: index.body, as: UTF8.self).contains("dev"))
            let script = try await c.call(.get, "/app/js/x.js")
            #expect(script.body == Data("export const x = 1;".utf8))
        }
        try await Harness(configure: { $0.webApp = false }).run { c in
            let off = try await c.call(.get, "/app/")
            #expect(off.status == .notFound)
        }
    }

    @Test("rate limit: a sync batch of k swipes counts as ⌈k/10⌉ requests, refused whole (nothing applied) when the bucket is short")
    func syncRateRule() async throws {
        try await Harness(configure: { $0.rateLimitPerHour = 6 }).run { c in
            try await c.createStudent("q")  // 1 of 6
            let ids = Fixtures.engine.matcher.catalog.ids
            func batch(_ range: Range<Int>) -> String {
                let swipes = range.map { #"{"swipe_id":"s\#($0)","school_id":"\#(ids[$0])","action":"like","timestamp":\#($0)}"# }
                return #"{"swipes":[\#(swipes.joined(separator: ","))]}"#
            }
            let first = try await c.call(.post, "/student/sync", student: "q", body: batch(0..<25))  // 3 requests: 2 left
            #expect(first.status == .ok && first.headers[.init("X-RateLimit-Remaining")!] == "2")
            let second = try await c.call(.post, "/student/sync", student: "q", body: batch(25..<50))  // needs 3, has 2
            #expect(second.status == .tooManyRequests && (second.error["message"] as? String)?.contains("counts as 3") == true)
            #expect(Int(second.headers[.retryAfter] ?? "") ?? 0 >= 1)
            // Refused whole: the 25 are not recorded (the clock is fixed, so the bucket stays short).
            let state = try await c.call(.get, "/student/learning-state", student: "q")  // the last request left
            #expect(state.status == .ok && state.json["total_swipes"] as? Int == 25)
            #expect(try await c.call(.get, "/student/learning-state", student: "q").status == .tooManyRequests)
        }
    }

    @Test("matches: liked and saved items newest first, one entry per item, paged; home: deck, state, counts and open groups in one call")
    func matchesAndHome() async throws {
        try await Harness().run { c in
            try await c.createStudent("h")
            let empty = try await c.call(.get, "/student/matches", student: "h")
            #expect(empty.status == .ok && empty.json["count"] as? Int == 0 && empty.json["next_offset"] is NSNull)
            let deck = try await c.deck("h", count: 8)
            // Likes at 1…, dislikes in between; one liked card also saved; one organic like; one save alone.
            var expected: [String] = []
            for (i, school) in deck.enumerated() {
                let like = i % 2 == 0
                #expect(try await c.swipe("h", id: "m\(i)", school: school, like: like, at: Int64(10 + i)).status == .created)
                if like { expected.insert(school, at: 0) }
            }
            let outside = Fixtures.engine.matcher.catalog.ids.filter { !deck.contains($0) }
            #expect(try await c.swipe("h", id: "organic", school: outside[0], like: true, at: 30).json["organic"] as? Bool == true)
            expected.insert(outside[0], at: 0)
            #expect(try await c.call(.post, "/student/schools/\(outside[1])/save", student: "h", body: #"{"timestamp": 40}"#).status == .created)
            expected.insert(outside[1], at: 0)
            #expect(try await c.call(.post, "/student/schools/\(deck[0])/save", student: "h", body: #"{"timestamp": 50}"#).status == .created)
            expected.removeAll { $0 == deck[0] }
            expected.insert(deck[0], at: 0)

            var seen: [String] = []
            var details: [[String: Any]] = []
            var offset: Int? = 0
            while let at = offset {
                let page = try await c.call(.get, "/student/matches?limit=3&offset=\(at)&fields=minimal", student: "h")
                #expect(page.status == .ok && page.json["count"] as? Int == expected.count)
                let cards = try #require(page.json["matches"] as? [[String: Any]])
                seen += cards.compactMap { $0["school_id"] as? String }
                details += page.json["details"] as? [[String: Any]] ?? []
                #expect(cards.allSatisfy { $0["match_score"] is Double })
                offset = page.json["next_offset"] as? Int
            }
            #expect(seen == expected)
            #expect(details.first?["saved"] as? Bool == true && details.first?["swiped"] as? Bool == true && details.first?["liked_at"] as? Int == 50)
            #expect(details[1]["saved"] as? Bool == true && details[1]["swiped"] as? Bool == false)
            let bad = try await c.call(.get, "/student/matches?limit=0", student: "h")
            #expect(bad.status == .badRequest && bad.details["field"] as? String == "limit")

            let (groupID, _) = try await GroupRouteTests.makeGroup(c, "h")
            let home = try await c.call(.get, "/student/home?count=4&fields=minimal", student: "h")
            #expect(home.status == .ok)
            #expect(home.json["total_swipes"] as? Int == 11 && home.json["saved_count"] as? Int == 2 && home.json["matches_count"] as? Int == expected.count)
            let homeDeck = try #require(home.json["deck"] as? [String: Any])
            let homeCards = (homeDeck["recommendations"] as? [[String: Any]] ?? []).compactMap { $0["school_id"] as? String }
            #expect(homeCards.count == 4 && homeDeck["exhausted"] as? Bool == false)
            #expect(try await c.deck("h", count: 4) == homeCards, "the home deck is the deck: asking again returns it")
            let groups = try #require(home.json["open_groups"] as? [[String: Any]])
            #expect(groups.count == 1 && groups[0]["session_id"] as? String == groupID)
            #expect((home.json["learning_state"] as? [String: Any])?["phase"] as? String == "refinement")
        }
    }

    @Test("an organic swipe replays after a restart as it was recorded (no migration), and its card stays out of decks")
    func organicSwipeSurvivesRestart() async throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("organic-\(UUID().uuidString).sqlite").path
        defer { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) } }
        let unseen = Fixtures.engine.matcher.catalog.ids[2_000]
        try await Harness(store: try SQLiteStore(path: path)).run { c in
            try await c.createStudent("o")
            let deck = try await c.deck("o", count: 4)
            #expect(!deck.contains(unseen))
            #expect(try await c.swipe("o", id: "a", school: deck[0], like: true).status == .created)
            #expect(try await c.swipe("o", id: "b", school: unseen, like: true).json["organic"] as? Bool == true)
            #expect(try await c.swipe("o", id: "c", school: deck[1], like: false).status == .created)
        }
        try await Harness(store: try SQLiteStore(path: path)).run { c in
            let state = try await c.call(.get, "/student/learning-state", student: "o")
            #expect(state.json["total_swipes"] as? Int == 3)
            #expect(try await !c.deck("o", count: 40).contains(unseen))
            let health = try await c.call(.get, "/health")
            #expect((health.json["migration"] as? [String: Any])?["migrated"] as? Int == 0)
        }
    }
}

/// A thread-safe counter for deterministic ids.
final class IDCounter: Sendable {
    private let value = Mutex(0)
    func next() -> Int { value.withLock { $0 += 1; return $0 } }
}

/// SplitMix64 for seeded test inputs.
struct SplitMix {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
