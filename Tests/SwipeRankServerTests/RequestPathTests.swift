import Foundation
import HTTPTypes
import Testing
@testable import SwipeRankServer

/// The per-request shortcuts: verified tokens remembered until they expire, and request ids
/// made without reading /dev/urandom.
@Suite("Verified tokens and request ids")
struct RequestPathTests {
    @Test("a remembered token answers only before its expiry, and only for itself")
    func verifiedTokens() {
        let cache = VerifiedTokens(capacity: 4)
        let now = Date(timeIntervalSince1970: 1_000_000)
        #expect(cache.subject(of: "t1", at: now) == nil)
        cache.insert("t1", subject: "alice", expires: now.addingTimeInterval(60))
        #expect(cache.subject(of: "t1", at: now) == "alice")
        #expect(cache.subject(of: "t1", at: now.addingTimeInterval(59.9)) == "alice")
        #expect(cache.subject(of: "t1", at: now.addingTimeInterval(60)) == nil, "expired at exp exactly, as JWT's check")
        #expect(cache.subject(of: "t1", at: now) == nil, "an expired entry is dropped")
        #expect(cache.subject(of: "t1x", at: now) == nil && cache.subject(of: "t", at: now) == nil)
    }

    @Test("full: expired entries go first; if none had expired, all of them")
    func capacity() {
        let cache = VerifiedTokens(capacity: 3)
        let past = Date().addingTimeInterval(-10), future = Date().addingTimeInterval(3_600)
        cache.insert("old", subject: "o", expires: past)
        cache.insert("a", subject: "a", expires: future)
        cache.insert("b", subject: "b", expires: future)
        cache.insert("c", subject: "c", expires: future)   // full: "old" goes, the rest stay
        #expect(cache.subject(of: "a", at: Date()) == "a" && cache.subject(of: "c", at: Date()) == "c")
        cache.insert("d", subject: "d", expires: future)   // full, none expired: cleared, then d
        #expect(cache.subject(of: "a", at: Date()) == nil && cache.subject(of: "d", at: Date()) == "d")
    }

    @Test("a token that verified does not let its forgeries through", arguments: [false, true])
    func forgeriesAfterCaching(tamperPayload: Bool) async throws {
        try await Harness().run { c in
            let token = try await c.token("a")
            #expect(try await c.call(.get, "/student/profile", headers: [.authorization: "Bearer \(token)"]).code == "NOT_FOUND")
            var parts = token.split(separator: ".").map(String.init)
            if tamperPayload {
                parts[1] = String(parts[1].dropLast()) + (parts[1].hasSuffix("A") ? "B" : "A")
            } else {
                parts[2] = String(parts[2].dropLast()) + (parts[2].hasSuffix("A") ? "B" : "A")
            }
            let forged = try await c.call(.get, "/student/profile", headers: [.authorization: "Bearer \(parts.joined(separator: "."))"])
            #expect(forged.status == .unauthorized && forged.code == "AUTH_INVALID")
            // The genuine token still works (from the cache).
            #expect(try await c.call(.get, "/student/profile", headers: [.authorization: "Bearer \(token)"]).code == "NOT_FOUND")
        }
    }

    @Test("request ids are UUID-shaped, version 4, lowercase and distinct")
    func requestIDs() {
        var seen = Set<String>()
        for _ in 0..<5_000 {
            let id = RequestIDs.next()
            #expect(UUID(uuidString: id) != nil && id == id.lowercased(), "\(id)")
            let bytes = Array(id.utf8)
            #expect(bytes.count == 36 && bytes[14] == UInt8(ascii: "4") && "89ab".utf8.contains(bytes[19]), "\(id)")
            seen.insert(id)
        }
        #expect(seen.count == 5_000)
        #expect(RequestMiddleware.requestID(from: "client-id_1.2") == "client-id_1.2")
        #expect(RequestMiddleware.requestID(from: "bad id") != "bad id")
    }
}
