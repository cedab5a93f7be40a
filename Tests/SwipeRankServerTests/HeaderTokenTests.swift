import Foundation
import HTTPTypes
import SwipeRankNumerics
@testable import SwipeRankServer
import Testing

/// The compression middleware's header reading (byte by byte, `HeaderToken`) against the
/// Foundation reading it replaced, on seeded random header values: the same answers wherever
/// the value is ASCII and its first field is not empty.
@Suite struct HeaderTokenTests {
    /// The reading before `HeaderToken`: Foundation's trimming and lowercasing.
    static func referenceCompressible(_ type: String?) -> Bool {
        guard let type = type?.split(separator: ";").first?.trimmingCharacters(in: .whitespaces).lowercased() else { return false }
        return type.hasPrefix("text/") && type != "text/event-stream" || type == "application/json" || type == "application/yaml"
            || type == "application/x-ndjson" || type == "image/svg+xml" || type == "application/manifest+json"
    }

    static func referenceAcceptsGzip(_ header: String?) -> Bool {
        guard let header else { return false }
        var star = false
        for part in header.split(separator: ",") {
            let fields = part.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
            guard let coding = fields.first else { continue }
            let quality = fields.dropFirst().first { $0.hasPrefix("q=") }.flatMap { Double($0.dropFirst(2)) } ?? 1
            if coding == "gzip" || coding == "x-gzip" { return quality > 0 }
            if coding == "*" { star = quality > 0 }
        }
        return star
    }

    /// Random capitals, so case-insensitivity is exercised.
    static func recase(_ text: String, using rng: inout SplitMix64) -> String {
        String(text.map { Bool.random(using: &rng) ? Character($0.uppercased()) : $0 })
    }

    /// Optional whitespace: nothing, spaces, tabs.
    static func space(using rng: inout SplitMix64) -> String {
        ["", "", " ", "  ", "\t", " \t "].randomElement(using: &rng)!
    }

    @Test("content types and Accept-Encoding read as the Foundation reading did, on 4,000 seeded random values")
    func matchesReference() {
        var rng = SplitMix64(seed: 41)
        let types = ["text/html", "text/event-stream", "text/plain", "application/json", "application/yaml",
                     "application/x-ndjson", "image/svg+xml", "application/manifest+json", "application/octet-stream",
                     "image/png", "text/", "application/jsonx", "x", "text/event-streams"]
        let parameters = ["charset=utf-8", "charset=UTF-8", "boundary=x", "q=0"]
        let codings = ["gzip", "x-gzip", "*", "deflate", "br", "identity", "gzipx", "zstd"]
        let qualities = ["q=0", "q=0.0", "q=1", "q=0.5", "q=0.001", "Q=0", "q=abc", "level=1", "q="]
        var compressed = 0, accepted = 0
        for _ in 0..<2_000 {
            var type = Self.space(using: &rng) + Self.recase(types.randomElement(using: &rng)!, using: &rng) + Self.space(using: &rng)
            for _ in 0..<Int.random(in: 0...2, using: &rng) {
                type += ";" + Self.space(using: &rng) + parameters.randomElement(using: &rng)! + Self.space(using: &rng)
            }
            #expect(CompressionMiddleware.compressible(type) == Self.referenceCompressible(type), "\(type.debugDescription)")
            if CompressionMiddleware.compressible(type) { compressed += 1 }

            var parts: [String] = []
            for _ in 0..<Int.random(in: 1...4, using: &rng) {
                var part = Self.space(using: &rng) + Self.recase(codings.randomElement(using: &rng)!, using: &rng) + Self.space(using: &rng)
                for _ in 0..<Int.random(in: 0...2, using: &rng) {
                    part += ";" + Self.space(using: &rng) + Self.recase(qualities.randomElement(using: &rng)!, using: &rng) + Self.space(using: &rng)
                }
                parts.append(part)
            }
            let header = parts.joined(separator: ",")
            #expect(CompressionMiddleware.acceptsGzip(header) == Self.referenceAcceptsGzip(header), "\(header.debugDescription)")
            if CompressionMiddleware.acceptsGzip(header) { accepted += 1 }
        }
        // Both answers drawn often: a generator that never produced one would prove nothing.
        #expect(compressed > 400 && compressed < 1_600 && accepted > 400 && accepted < 1_600, "\(compressed) \(accepted)")
    }

    @Test("HTTP whitespace and ASCII case only; an empty media type is not compressible")
    func edges() {
        #expect(HeaderToken.trimmed(" \t a b \t") == "a b" && HeaderToken.trimmed(" \t ") == "" && HeaderToken.trimmed("") == "")
        #expect(HeaderToken.first("Text/HTML ; charset=x", before: UInt8(ascii: ";")) == "Text/HTML")
        #expect(HeaderToken.lowercased("APPLICATION/Json") == "application/json" && HeaderToken.lowercased("ÀB") == "Àb")
        #expect(CompressionMiddleware.compressible("TEXT/CSV") && CompressionMiddleware.compressible("\tapplication/json\t"))
        #expect(!CompressionMiddleware.compressible(nil) && !CompressionMiddleware.compressible(""))
        // The Foundation reading took the first non-empty field here ("charset=utf-8"); a
        // content type with no media type is not one worth naming.
        #expect(!CompressionMiddleware.compressible(";text/html"))
        // Only spaces and tabs are HTTP whitespace: a no-break space is part of the value.
        #expect(!CompressionMiddleware.compressible("\u{00A0}application/json"))
        #expect(!CompressionMiddleware.acceptsGzip("") && !CompressionMiddleware.acceptsGzip("gzip;q=0, *"))
        #expect(CompressionMiddleware.acceptsGzip("br, *;q=0.1") && CompressionMiddleware.acceptsGzip("GZip ; Q=0.2"))
    }

    @Test("HTTPFields.value(_:) is the subscript's value on seeded random fields: absent, once, repeated, any case")
    func headerValue() throws {
        var rng = SplitMix64(seed: 83)
        let names: [HTTPField.Name] = [.authorization, .acceptEncoding, .contentType, .cookie, try #require(HTTPField.Name("X-Request-ID"))]
        let spellings = ["authorization", "Accept-Encoding", "CONTENT-TYPE", "cookie", "x-request-id", "X-Other"]
        var repeated = 0
        for _ in 0..<400 {
            var fields = HTTPFields()
            for _ in 0..<Int(rng.next() % 6) {
                let spelling = spellings[Int(rng.next() % UInt64(spellings.count))]
                let value = ["", "gzip", "Bearer a.b.c", "text/html; charset=utf-8", "x=1", "a, b"][Int(rng.next() % 6)]
                fields.append(HTTPField(name: try #require(HTTPField.Name(spelling)), value: value))
            }
            for name in names {
                #expect(fields.value(name) == fields[name], "\(name) in \(fields)")
                repeated += fields[values: name].count > 1 ? 1 : 0
            }
        }
        #expect(repeated > 50, "repeated fields were exercised")
    }
}
