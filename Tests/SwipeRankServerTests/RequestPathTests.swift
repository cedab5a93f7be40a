import Foundation
import HTTPTypes
import Testing
@testable import SwipeRankServer
import SwipeRankNumerics

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

    @Test("a token that verified lets none of its forgeries through: any changed bit, any re-spelling")
    func forgeriesAfterCaching() async throws {
        try await Harness().run { c in
            let token = try await c.token("a")
            func status(_ token: String) async throws -> Reply {
                try await c.call(.get, "/student/profile", headers: [.authorization: "Bearer \(token)"])
            }
            #expect(try await status(token).code == "NOT_FOUND")
            let segments = token.split(separator: ".", omittingEmptySubsequences: false).map { Array($0) }
            #expect(segments.count == 3)
            func rejoined(_ edit: (inout [[Character]]) -> Void) -> String {
                var parts = segments
                edit(&parts)
                return parts.map { String($0) }.joined(separator: ".")
            }
            var forgeries: [(String, String)] = []
            for s in 0..<3 {
                for i in segments[s].indices {
                    // The top bit of every character's six is a bit of the encoded bytes (the
                    // last character's spare bits are its lowest), so this changes the bytes.
                    forgeries.append((rejoined { $0[s][i] = CompactToken.character(CompactToken.value($0[s][i])! ^ 0x20) },
                                      "segment \(s) character \(i): a used bit flipped"))
                }
                // The same bytes spelled with a spare bit set (what the old test did by chance).
                if segments[s].count % 4 != 0 {
                    forgeries.append((rejoined { $0[s][$0[s].count - 1] = CompactToken.character(CompactToken.value($0[s].last!)! | 0x01) },
                                      "segment \(s): a spare bit set"))
                }
                forgeries.append((rejoined { $0[s].append("=") }, "segment \(s): padding"))
                forgeries.append((rejoined { $0[s].insert(" ", at: 1) }, "segment \(s): a space"))
                forgeries.append((rejoined { $0[s].insert("\t", at: 2) }, "segment \(s): a tab"))
                forgeries.append((rejoined { $0[s].insert("+", at: 0) }, "segment \(s): a base64 (not url) character"))
            }
            forgeries.append((token + ".", "a fourth, empty segment"))
            forgeries.append((rejoined { $0[2] = [] }, "no signature"))
            for (forged, what) in forgeries {
                #expect(forged != token)
                let reply = try await status(forged)
                #expect(reply.status == .unauthorized && reply.code == "AUTH_INVALID", "\(what): \(reply.status)")
            }
            // The genuine token still works (from the cache).
            #expect(try await status(token).code == "NOT_FOUND")
        }
    }

    @Test("canonical base64url: exactly the strings that decode and re-encode to themselves", arguments: 0..<20)
    func canonicalSegments(seed: UInt64) {
        var rng = SplitMix64(seed: 900 + seed)
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
        /// Reference: Foundation's strict decoder after mapping to base64 and padding.
        func reference(_ segment: String) -> Bool {
            guard !segment.isEmpty, segment.count % 4 != 1 else { return false }
            var b64 = segment.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
            b64 += String(repeating: "=", count: (4 - b64.count % 4) % 4)
            guard let data = Data(base64Encoded: b64) else { return false }
            return data.base64EncodedString() == b64
        }
        for _ in 0..<300 {
            let parts = (0..<3).map { _ in
                String((0..<Int.random(in: 0...9, using: &rng)).map { _ in alphabet.randomElement(using: &rng)! })
            }
            let expected = parts.allSatisfy(reference)
            #expect(CompactToken.isCanonical(parts.joined(separator: ".")) == expected, "seed \(seed): \(parts)")
        }
        // Every byte string's own encoding is canonical.
        for n in 1...7 {
            let bytes = (0..<n).map { _ in UInt8.random(in: 0...255, using: &rng) }
            let segment = Data(bytes).base64EncodedString().replacingOccurrences(of: "=", with: "")
                .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            #expect(CompactToken.isCanonical("\(segment).\(segment).\(segment)"), "seed \(seed): \(segment)")
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

/// `SwipeRequest.plain`, the shortcut for the swipe bodies clients send: it may only accept what
/// `JSONInput` accepts, with the same value, and must accept every body of the plain shape.
@Suite("Plain swipe bodies")
struct PlainSwipeBodyTests {
    static func slow(_ body: Data) -> SwipeRequest? {
        try? WireJSON.decode(SwipeRequest.self, from: body, what: "body", maxBytes: 16 << 10)
    }

    @Test("plain bodies take the shortcut with JSONInput's values; near misses never disagree", arguments: 0..<40)
    func againstJSONInput(seed: UInt64) {
        var rng = SplitMix64(seed: 77 + seed)
        let ws = ["", " ", "\n", "\t ", "\r\n"]
        func w() -> String { ws.randomElement(using: &rng)! }
        for _ in 0..<200 {
            let id = ["w1", "abc-DEF_1.2:~x", "é-ü", "s p a c e"].randomElement(using: &rng)!
            let school = ["166027", "130794", "x"].randomElement(using: &rng)!
            let action = Bool.random(using: &rng) ? "like" : "dislike"
            let timestamp = [0, 1, 1_700_000_000_000, SwipeRequest.maxTimestamp].randomElement(using: &rng)!
            var pairs = [("swipe_id", "\"\(id)\""), ("school_id", "\"\(school)\""), ("action", "\"\(action)\""), ("timestamp", "\(timestamp)")]
            pairs.shuffle(using: &rng)
            let plain = "\(w()){" + pairs.map { "\(w())\"\($0.0)\"\(w()):\(w())\($0.1)\(w())" }.joined(separator: ",") + "}\(w())"
            let expected = SwipeRequest(swipeID: id, itemID: school, action: action == "like" ? .like : .dislike, timestamp: timestamp)
            #expect(SwipeRequest.plain(Data(plain.utf8)) == expected, "seed \(seed): \(plain)")
            #expect(Self.slow(Data(plain.utf8)) == expected, "seed \(seed): \(plain)")
            // Near misses: each change below either leaves the body plain or makes it something
            // JSONInput must decide; the shortcut must never accept a body JSONInput rejects or
            // read it differently.
            let mutations: [(String) -> String] = [
                { $0.replacingOccurrences(of: "\"\(action)\"", with: "\"LIKE\"") },
                { $0.replacingOccurrences(of: "\(timestamp)", with: "\(timestamp).0") },
                { $0.replacingOccurrences(of: "\(timestamp)", with: "0\(timestamp)") },
                { $0.replacingOccurrences(of: "\(timestamp)", with: "-\(timestamp)") },
                { $0.replacingOccurrences(of: "\(timestamp)", with: "\(timestamp)e0") },
                { $0.replacingOccurrences(of: "\(timestamp)", with: "99999999999999999999") },
                { $0.replacingOccurrences(of: "\(timestamp)", with: "9007199254740992") },
                { $0.replacingOccurrences(of: "\"\(school)\"", with: "\"a\\\"b\"") },
                { $0.replacingOccurrences(of: "\"\(school)\"", with: "\"\\u0041\"") },
                { $0.replacingOccurrences(of: "\"swipe_id\"", with: "\"swipe_id\",\"x\":1,\"y\"") },
                { $0.replacingOccurrences(of: "}", with: ",\"extra\":1}") },
                { $0.replacingOccurrences(of: "}", with: "}x") },
                { $0.replacingOccurrences(of: "{", with: "[") },
                { String($0.dropLast(Int.random(in: 1...3, using: &rng))) },
                { "\u{FEFF}" + $0 },
                { $0.replacingOccurrences(of: "\"action\"", with: "\"swipe_id\"") },
                { $0.replacingOccurrences(of: ",", with: ",,") },
                { $0.replacingOccurrences(of: "\"\(id)\"", with: "\"\u{1}\"") },
            ]
            let mutated = mutations.randomElement(using: &rng)!(plain)
            if let fast = SwipeRequest.plain(Data(mutated.utf8)) {
                #expect(Self.slow(Data(mutated.utf8)) == fast, "seed \(seed): \(mutated)")
            }
        }
    }

    @Test("invalid UTF-8 is left to JSONInput")
    func invalidUTF8() {
        var body = Data(#"{"swipe_id":"w","school_id":"166027","action":"like","timestamp":1}"#.utf8)
        body[14] = 0xFF
        #expect(SwipeRequest.plain(body) == nil)
    }
}
