import CompressNIO
import HTTPTypes
import Hummingbird
import NIOCore

/// gzip for text answers over `minimumBytes` when the client accepts it: a 50-card preload is
/// 34,200 bytes of JSON and 6,249 gzipped (measured with curl on `serve`), which matters on a phone. Only bodies of known length
/// (every JSON answer here) are compressed, in one pass; streams (the group SSE feed, NDJSON
/// exports) pass through so each event still reaches the client when written. A compressed
/// answer's ETag becomes weak (the bytes differ from the identity encoding's).
struct CompressionMiddleware: RouterMiddleware {
    typealias Context = SwipeRankRequestContext
    /// Smaller bodies go as they are: gzip's header and the CPU cost outweigh the saving.
    var minimumBytes = 1_024
    /// Larger fixed bodies go as they are rather than being held twice in memory.
    var maximumBytes = 16 << 20
    /// zlib level: a middle setting (the 50-card figure above is at this level).
    var level: Int32 = 5

    /// Content types worth compressing.
    static func compressible(_ type: String?) -> Bool {
        guard let type = type?.split(separator: ";").first?.trimmingCharacters(in: .whitespaces).lowercased() else { return false }
        return type.hasPrefix("text/") && type != "text/event-stream" || type == "application/json" || type == "application/yaml"
            || type == "application/x-ndjson" || type == "image/svg+xml" || type == "application/manifest+json"
    }

    /// Whether `Accept-Encoding` admits gzip (`gzip`, or `*`, with a non-zero quality).
    static func acceptsGzip(_ header: String?) -> Bool {
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

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var response = try await next(request, context)
        guard Self.compressible(response.headers[.contentType]), response.headers[.contentEncoding] == nil,
              response.status != .noContent, response.status != .notModified else { return response }
        // Caches must keep the encodings apart whether or not this answer was compressed.
        response.headers.append(HTTPField(name: .vary, value: "Accept-Encoding"))
        guard Self.acceptsGzip(request.headers[.acceptEncoding]), let length = response.body.contentLength,
              length >= minimumBytes, length <= maximumBytes else { return response }
        let collected = CollectedBody(capacity: length)
        try await response.body.write(CollectingWriter(body: collected))
        var plain = collected.buffer
        let packed = try plain.compress(with: .gzip(configuration: .init(compressionLevel: level)))
        response.headers[.contentEncoding] = "gzip"
        if let etag = response.headers[.eTag], !etag.hasPrefix("W/") { response.headers[.eTag] = "W/" + etag }
        response.body = ResponseBody(byteBuffer: packed)
        return response
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
            let trimmed = candidate.trimmingCharacters(in: .whitespaces)
            return trimmed == "*" || opaque(trimmed[...]) == wanted
        }
    }
}
