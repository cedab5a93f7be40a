import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

/// Cache policies per resource: catalog data may be cached anywhere; a student's data only by
/// that student's client; a student's next cards never (each request serves new cards).
enum CachePolicy {
    static let publicCatalog = "public, max-age=3600"
    static let privateData = "private, no-cache"
    static let neverStore = "no-store"
}

extension Response {
    /// A JSON response.
    static func json(_ body: Data, status: HTTPResponse.Status = .ok, cache: String, extra: HTTPFields = [:]) -> Response {
        var headers = extra
        headers[.contentType] = "application/json; charset=utf-8"
        headers[.cacheControl] = cache
        return Response(status: status, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: body)))
    }
}

extension Request {
    /// The JSON body, or nil when there is none and `required` is false.
    ///
    /// - Throws: 415 for another content type, 413 past the context's limit, 400 for a
    ///   missing required body.
    func jsonBody(context: some RequestContext, required: Bool = true,
                  types: Set<String> = ["application/json"]) async throws -> Data? {
        let buffer = try await body.collect(upTo: context.maxUploadSize)
        if buffer.readableBytes == 0 {
            guard !required else { throw APIError.validation("this request needs a JSON body", field: "body") }
            return nil
        }
        let type = headers[.contentType]?.split(separator: ";").first.map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
        guard let type, types.contains(type) else {
            throw APIError(.unsupportedMediaType, code: "UNSUPPORTED_MEDIA_TYPE",
                           message: "send the body as \(types.sorted().joined(separator: " or "))",
                           details: ["content_type": type.map { .string($0) } ?? .null])
        }
        return Data(buffer.readableBytesView)
    }

    /// An integer query parameter within `range`, or `defaultValue` when absent.
    func intQuery(_ name: String, default defaultValue: Int, range: ClosedRange<Int>) throws(APIError) -> Int {
        try QueryParameters(self).int(name, default: defaultValue, range: range)
    }

    /// A boolean query parameter (`true`/`false`/`1`/`0`).
    func boolQuery(_ name: String) throws(APIError) -> Bool { try QueryParameters(self).bool(name) }

    /// `fields=minimal|full` (default full).
    func fieldsQuery() throws(APIError) -> CardFields { try QueryParameters(self).fields() }
}

/// A request's query parameters, parsed once: each `uri.queryParameters` read parses the query
/// again, and a deck route reads three of them on every request.
struct QueryParameters {
    let values: Parameters

    init(_ request: Request) { values = request.uri.queryParameters }

    /// An integer parameter within `range`, or `defaultValue` when absent.
    func int(_ name: String, default defaultValue: Int, range: ClosedRange<Int>) throws(APIError) -> Int {
        guard let raw = values[name[...]] else { return defaultValue }
        guard let value = Int(raw), range.contains(value) else {
            throw APIError.validation("\(name) must be an integer in \(range.lowerBound)…\(range.upperBound), got \"\(raw.prefix(32))\"",
                                      field: name)
        }
        return value
    }

    /// A boolean parameter (`true`/`false`/`1`/`0`), false when absent.
    func bool(_ name: String) throws(APIError) -> Bool {
        guard let raw = values[name[...]] else { return false }
        switch raw.lowercased() {
        case "true", "1": return true
        case "false", "0": return false
        default: throw APIError.validation("\(name) must be true or false, got \"\(raw.prefix(32))\"", field: name)
        }
    }

    /// `fields=minimal|full` (default full).
    func fields() throws(APIError) -> CardFields {
        guard let raw = values["fields"] else { return .full }
        guard let fields = CardFields(rawValue: String(raw)) else {
            throw APIError.validation("fields must be minimal or full, got \"\(raw.prefix(32))\"", field: "fields")
        }
        return fields
    }
}

extension SwipeRankRequestContext {
    /// The authenticated student (the auth middleware guarantees one on `/student` routes).
    var student: String {
        get throws(APIError) {
            guard let studentID else { throw APIError.authRequired }
            return studentID
        }
    }
}
