import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import Synchronization

/// Holds the application's responder once it is built (the batch route runs operations
/// through the same router, middleware included).
final class ResponderBox: Sendable {
    private let value = Mutex<(any HTTPResponder<SwipeRankRequestContext>)?>(nil)
    var responder: (any HTTPResponder<SwipeRankRequestContext>)? {
        get { value.withLock { $0 } }
        set { value.withLock { $0 = newValue } }
    }
}

/// `POST /student/batch`: `{operations: [{method, path, body}]}` run in order through the
/// router with the caller's token (each one authenticated, rate-limited and logged like a
/// request of its own); the answer lists each status and body. One failing operation does not
/// stop the others.
struct BatchController: Sendable {
    typealias Context = SwipeRankRequestContext
    let box: ResponderBox
    let maxOperations: Int

    func addRoutes(to group: RouterGroup<Context>, table: RouteTable) {
        group.post("batch") { request, context in try await run(request, context) }
        table.add(.post, "/student/batch")
    }

    private func run(_ request: Request, _ context: Context) async throws -> Response {
        let body = try await request.jsonBody(context: context)!
        let batch = try WireJSON.decode(BatchRequest.self, from: body, what: "body", maxBytes: context.maxUploadSize)
        guard batch.operations.count <= maxOperations else {
            throw APIError.validation("at most \(maxOperations) operations per batch, got \(batch.operations.count)", field: "operations")
        }
        // Check every operation before running any: a malformed batch changes nothing.
        var prepared: [Request] = []
        for (i, op) in batch.operations.enumerated() {
            let method = HTTPRequest.Method(op.method.uppercased())
            guard let method, [.get, .post, .put, .patch, .delete].contains(method) else {
                throw APIError.validation("method must be GET, POST, PUT, PATCH or DELETE", field: "operations[\(i)].method")
            }
            guard op.path == "/student" || op.path.hasPrefix("/student/"), !op.path.hasPrefix("/student/batch"),
                  op.path.utf8.count <= 1_024,
                  // The characters openapi.yaml allows: a route, its query, percent escapes.
                  op.path.utf8.allSatisfy({ b in
                      (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A) || "/_.?=&%-".utf8.contains(b)
                  }) else {
                throw APIError.validation("path must be a /student route other than /student/batch, of A-Z a-z 0-9 / _ . ? = & % -",
                                          field: "operations[\(i)].path")
            }
            var head = HTTPRequest(method: method, scheme: "http", authority: "batch", path: op.path)
            head.headerFields[.authorization] = request.headers[.authorization]
            var buffer = ByteBuffer()
            if let body = op.body {
                head.headerFields[.contentType] = "application/json"
                buffer = ByteBuffer(bytes: try WireJSON.encode(body))
            }
            prepared.append(Request(head: head, body: RequestBody(buffer: buffer)))
        }
        guard let responder = box.responder else { throw APIError.server }
        struct Result: Encodable {
            var status: Int
            var body: JSONValue
        }
        var results: [Result] = []
        for sub in prepared {
            var inner = context
            inner.studentID = nil
            inner.coreContext.parameters = .init()
            let response = try await responder.respond(to: sub, context: inner)
            let sink = Sink()
            try await response.body.write(Collector(sink: sink))
            let json = sink.buffer.readableBytes == 0 ? JSONValue.null
                : (try? JSONDecoder().decode(JSONValue.self, from: Data(sink.buffer.readableBytesView))) ?? .null
            results.append(Result(status: Int(response.status.code), body: json))
        }
        struct Body: Encodable { var results: [Result] }
        return .json(try WireJSON.encode(Body(results: results)), cache: CachePolicy.neverStore)
    }

    /// Where `Collector` puts a response body (the writer is passed by value).
    final class Sink: @unchecked Sendable {
        var buffer = ByteBuffer()
    }

    /// Collects a response body in memory (used by one task).
    struct Collector: ResponseBodyWriter {
        let sink: Sink
        mutating func write(_ buffer: ByteBuffer) async throws {
            var b = buffer
            sink.buffer.writeBuffer(&b)
        }
        consuming func finish(_ trailingHeaders: HTTPFields?) async throws {}
    }
}
