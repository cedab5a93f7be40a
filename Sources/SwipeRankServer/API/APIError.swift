import Foundation
import HTTPTypes
import Hummingbird
import SwipeRank

/// Every failure the API reports, sent as `{"error": {"code", "message", "details"}}`.
///
/// `code` is stable (clients branch on it); `message` is for people; `details` names what is
/// at fault (`field`, `line`, `column`, …). A `SERVER_ERROR` never carries internals: those go
/// to the log under the request id.
public struct APIError: Error, Sendable {
    /// The HTTP status.
    public let status: HTTPResponse.Status
    /// The stable code.
    public let code: String
    /// A sentence for people.
    public let message: String
    /// What is at fault.
    public let details: [String: JSONValue]
    /// Extra response headers (`Retry-After`, `Allow`).
    public let headers: HTTPFields

    /// Creates an error.
    ///
    /// - Parameters:
    ///   - status: HTTP status.
    ///   - code: Stable code.
    ///   - message: For people.
    ///   - details: What is at fault.
    ///   - headers: Extra headers.
    public init(_ status: HTTPResponse.Status, code: String, message: String, details: [String: JSONValue] = [:],
                headers: HTTPFields = [:]) {
        self.status = status
        self.code = code
        self.message = message
        self.details = details
        self.headers = headers
    }

    /// The same error with more response headers.
    ///
    /// - Parameter fields: Headers to add.
    /// - Returns: The error.
    public func adding(_ fields: HTTPFields) -> APIError {
        var all = headers
        all.append(contentsOf: fields)
        return APIError(status, code: code, message: message, details: details, headers: all)
    }

    /// 401 `AUTH_REQUIRED`: no bearer token.
    public static let authRequired = APIError(.unauthorized, code: "AUTH_REQUIRED",
                                              message: "this route needs a bearer token (Authorization: Bearer <JWT>)",
                                              headers: [.wwwAuthenticate: "Bearer"])

    /// 401 `AUTH_INVALID`: a token that does not verify.
    ///
    /// - Parameter reason: Why (expired, bad signature, malformed), safe to show.
    public static func authInvalid(_ reason: String) -> APIError {
        APIError(.unauthorized, code: "AUTH_INVALID", message: "the bearer token is not valid: \(reason)",
                 headers: [.wwwAuthenticate: "Bearer error=\"invalid_token\""])
    }

    /// 404 `NOT_FOUND`.
    ///
    /// - Parameters:
    ///   - message: What was not found.
    ///   - details: Which.
    public static func notFound(_ message: String, details: [String: JSONValue] = [:]) -> APIError {
        APIError(.notFound, code: "NOT_FOUND", message: message, details: details)
    }

    /// 400 `VALIDATION_ERROR` naming the field (a JSON path or a query parameter).
    ///
    /// - Parameters:
    ///   - message: What is wrong.
    ///   - field: Where.
    public static func validation(_ message: String, field: String? = nil) -> APIError {
        APIError(.badRequest, code: "VALIDATION_ERROR", message: message, details: field.map { ["field": .string($0)] } ?? [:])
    }

    /// 400 `VALIDATION_ERROR` from a data error (malformed JSON with line and column, or the
    /// field a value was rejected at).
    ///
    /// - Parameter error: The engine's error.
    public static func validation(_ error: DataError) -> APIError {
        var details: [String: JSONValue] = ["reason": .string(error.kind.description)]
        if let field = error.field { details["field"] = .string(field) }
        if let line = error.line { details["line"] = .number(Double(line)) }
        if let column = error.column { details["column"] = .number(Double(column)) }
        return APIError(.badRequest, code: "VALIDATION_ERROR", message: error.detail, details: details)
    }

    /// 409 `CONFLICT`.
    ///
    /// - Parameters:
    ///   - message: What conflicts.
    ///   - details: Which.
    public static func conflict(_ message: String, details: [String: JSONValue] = [:]) -> APIError {
        APIError(.conflict, code: "CONFLICT", message: message, details: details)
    }

    /// 500 `SERVER_ERROR`: nothing internal is said.
    public static let server = APIError(.internalServerError, code: "SERVER_ERROR",
                                        message: "the server failed to handle the request; it was logged under this request id")

    /// The error as the client sees it.
    ///
    /// - Parameter requestID: Echoed in `details.request_id` for server errors.
    /// - Returns: The response.
    func response(requestID: String?) -> Response {
        var details = details
        if status == .internalServerError, let requestID { details["request_id"] = .string(requestID) }
        let body = ErrorEnvelope(error: .init(code: code, message: message, details: details))
        var fields = headers
        fields[.contentType] = "application/json; charset=utf-8"
        fields[.cacheControl] = "no-store"
        let data = (try? WireJSON.encode(body)) ?? Data(#"{"error":{"code":"SERVER_ERROR","message":"encoding failed","details":{}}}"#.utf8)
        return Response(status: status, headers: fields, body: ResponseBody(byteBuffer: ByteBuffer(bytes: data)))
    }
}

/// The error body.
struct ErrorEnvelope: Codable {
    struct Body: Codable {
        var code: String
        var message: String
        var details: [String: JSONValue]
    }

    var error: Body
}

/// Any JSON value (for error details and merge patches).
public enum JSONValue: Sendable, Hashable, Codable {
    /// A string.
    case string(String)
    /// A number.
    case number(Double)
    /// true or false.
    case bool(Bool)
    /// null.
    case null
    /// An array.
    case array([JSONValue])
    /// An object.
    case object([String: JSONValue])

    /// Decodes any JSON value.
    ///
    /// - Parameter decoder: The decoder.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.singleValueContainer()
        if c.decodeNil() { self = .null }
        else if let b = try? c.decode(Bool.self) { self = .bool(b) }
        else if let n = try? c.decode(Double.self) { self = .number(n) }
        else if let s = try? c.decode(String.self) { self = .string(s) }
        else if let a = try? c.decode([JSONValue].self) { self = .array(a) }
        else { self = .object(try c.decode([String: JSONValue].self)) }
    }

    /// Encodes the value.
    ///
    /// - Parameter encoder: The encoder.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.singleValueContainer()
        switch self {
        case let .string(s): try c.encode(s)
        case let .number(n):
            // Whole numbers print without a fraction (line 3, not 3.0).
            if n == n.rounded(), abs(n) < 1e15 { try c.encode(Int64(n)) } else { try c.encode(n) }
        case let .bool(b): try c.encode(b)
        case .null: try c.encodeNil()
        case let .array(a): try c.encode(a)
        case let .object(o): try c.encode(o)
        }
    }
}
