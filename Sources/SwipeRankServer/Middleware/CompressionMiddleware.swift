import CompressNIO
import HTTPTypes
import Hummingbird
import NIOCore

/// gzip for text answers over `minimumBytes` when the client accepts it: a 50-card preload is
/// 34,200 bytes of JSON and 6,249 gzipped (measured with curl on `serve`), which matters on a phone. Only bodies of known length
/// (every JSON answer here) are compressed, in one pass; streams (the group SSE feed, NDJSON
/// exports) pass through so each event still reaches the client when written. A compressed
/// answer's ETag becomes weak (the bytes differ from the identity encoding's). The last step of
/// `FrontDoorMiddleware`, on every answer.
struct CompressionMiddleware: Sendable {
    typealias Context = SwipeRankRequestContext
    /// Smaller bodies go as they are: gzip's header and the CPU cost outweigh the saving.
    var minimumBytes = 1_024
    /// Larger fixed bodies go as they are rather than being held twice in memory.
    var maximumBytes = 16 << 20
    /// zlib level: a middle setting (the 50-card figure above is at this level).
    var level: Int32 = 5

    /// Content types worth compressing.
    static func compressible(_ type: String?) -> Bool {
        guard let type else { return false }
        let essence = HeaderToken.lowercased(HeaderToken.first(type[...], before: UInt8(ascii: ";")))
        return essence.hasPrefix("text/") && essence != "text/event-stream" || essence == "application/json"
            || essence == "application/yaml" || essence == "application/x-ndjson" || essence == "image/svg+xml"
            || essence == "application/manifest+json"
    }

    /// Whether `Accept-Encoding` admits gzip (`gzip`, or `*`, with a non-zero quality).
    static func acceptsGzip(_ header: String?) -> Bool {
        guard let header else { return false }
        var star = false
        for part in header.split(separator: ",") {
            let fields = part.split(separator: ";", omittingEmptySubsequences: false)
            let coding = HeaderToken.lowercased(HeaderToken.trimmed(fields[0]))
            let quality = fields.dropFirst().lazy.map { HeaderToken.lowercased(HeaderToken.trimmed($0)) }
                .first { $0.hasPrefix("q=") }.flatMap { Double($0.dropFirst(2)) } ?? 1
            if coding == "gzip" || coding == "x-gzip" { return quality > 0 }
            if coding == "*" { star = quality > 0 }
        }
        return star
    }

    /// Compresses `response` when it is worth it and the client accepts gzip. On the caller's
    /// executor (`nonisolated(nonsending)`): it suspends only to collect a body it compresses.
    nonisolated(nonsending) func compress(_ response: inout Response, for request: Request) async throws {
        guard Self.compressible(response.headers.value(.contentType)), response.headers.value(.contentEncoding) == nil,
              response.status != .noContent, response.status != .notModified else { return }
        // Caches must keep the encodings apart whether or not this answer was compressed.
        response.headers.append(HTTPField(name: .vary, value: "Accept-Encoding"))
        guard Self.acceptsGzip(request.headers.value(.acceptEncoding)), let length = response.body.contentLength,
              length >= minimumBytes, length <= maximumBytes else { return }
        let collected = CollectedBody(capacity: length)
        try await response.body.write(CollectingWriter(body: collected))
        var plain = collected.buffer
        let packed = try plain.compress(with: .gzip(configuration: .init(compressionLevel: level)))
        response.headers[.contentEncoding] = "gzip"
        if let etag = response.headers[.eTag], !etag.hasPrefix("W/") { response.headers[.eTag] = "W/" + etag }
        response.body = ResponseBody(byteBuffer: packed)
    }
}

/// The bytes a response body writes.
final class CollectedBody: @unchecked Sendable {
    // One request's body, written and read by that request's task only.
    var buffer: ByteBuffer
    init(capacity: Int) { buffer = ByteBufferAllocator().buffer(capacity: capacity) }
}

/// A body writer that keeps what it is given.
struct CollectingWriter: ResponseBodyWriter {
    let body: CollectedBody

    mutating func write(_ buffer: ByteBuffer) async throws {
        var buffer = buffer
        body.buffer.writeBuffer(&buffer)
    }

    consuming func finish(_ trailingHeaders: HTTPFields?) async throws {}
}

extension Request {
    /// Whether `If-None-Match` names `etag` (weak comparison, RFC 9110 §13.1.2: `W/"x"` matches
    /// `"x"`, since a gzipped answer carries the weak form), or is `*`.
    func ifNoneMatch(_ etag: String) -> Bool {
        guard let header = headers[.ifNoneMatch] else { return false }
        func opaque(_ tag: Substring) -> Substring {
            let tag = tag.drop { $0 == " " }
            return tag.hasPrefix("W/") ? tag.dropFirst(2) : tag
        }
        let wanted = opaque(etag[...])
        return header.split(separator: ",").contains { candidate in
            let trimmed = HeaderToken.trimmed(candidate)
            return trimmed == "*" || opaque(trimmed) == wanted
        }
    }
}

/// Header values read as HTTP reads them: whitespace is spaces and tabs (RFC 9110 §5.6.3), and
/// tokens compare ASCII case-insensitively. Byte by byte, without Foundation: its Unicode
/// trimming and lowercasing, on every JSON answer's content type, were 3% of a re-scored deck
/// request's CPU (`perf record` on `serve` under `scripts/load`).
enum HeaderToken {
    /// `value` without leading and trailing spaces and tabs.
    static func trimmed(_ value: Substring) -> Substring {
        let utf8 = value.utf8
        var start = utf8.startIndex, end = utf8.endIndex
        while start < end, utf8[start] == 0x20 || utf8[start] == 0x09 { utf8.formIndex(after: &start) }
        while start < end {
            let last = utf8.index(before: end)
            guard utf8[last] == 0x20 || utf8[last] == 0x09 else { break }
            end = last
        }
        // Cut at ASCII bytes, so on Unicode scalar boundaries.
        return Substring(utf8[start..<end])
    }

    /// `value`'s part before the first `separator` byte (all of it when there is none), trimmed.
    static func first(_ value: Substring, before separator: UInt8) -> Substring {
        let utf8 = value.utf8
        return trimmed(Substring(utf8[..<(utf8.firstIndex(of: separator) ?? utf8.endIndex)]))
    }

    /// `value` with ASCII capitals lowercased; every other byte as it is (`value` itself, not a
    /// copy, when it has no capitals: the usual case).
    static func lowercased(_ value: Substring) -> Substring {
        let utf8 = value.utf8
        guard utf8.contains(where: { $0 >= 0x41 && $0 <= 0x5A }) else { return value }
        return Substring(String(decoding: utf8.map { $0 >= 0x41 && $0 <= 0x5A ? $0 | 0x20 : $0 }, as: UTF8.self))
    }
}
