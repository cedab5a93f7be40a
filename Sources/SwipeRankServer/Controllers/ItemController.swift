import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import SwipeRank

/// Operator routes authenticate with the operator key (`Authorization: Bearer <key>`), never a
/// student token: a catalog edit changes what every student is served.
struct OperatorAuthMiddleware: RouterMiddleware {
    typealias Context = SwipeRankRequestContext
    /// The key, or nil when the item API is off.
    let key: String?

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard let header = request.headers[.authorization] else { throw APIError.authRequired }
        guard let key else {
            throw APIError(.forbidden, code: "ACCESS_DENIED",
                           message: "operator routes (the item API, the webhook log) are off: start the server with SWIPERANK_OPERATOR_KEY set")
        }
        let parts = header.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
        guard parts.count == 2, parts[0].lowercased() == "bearer" else {
            throw APIError.authInvalid("expected \"Authorization: Bearer <operator key>\"")
        }
        // Compared as digests: constant time whatever the lengths.
        let given = SHA256.hash(data: Data(parts[1].utf8)), expected = SHA256.hash(data: Data(key.utf8))
        guard zip(given, expected).reduce(UInt8(0), { $0 | ($1.0 ^ $1.1) }) == 0 else {
            throw APIError(.forbidden, code: "ACCESS_DENIED", message: "this route needs the operator key; student tokens cannot reach operator routes")
        }
        return try await next(request, context)
    }
}

/// The item API: `PUT/PATCH/DELETE /items/{id}`, `GET /items/{id}/fields` and `POST /items/bulk` (NDJSON), for
/// operators (`OperatorAuthMiddleware`). Every write is validated against the catalog's schema
/// by building the catalog with it, stored in the store's catalog log and served by the next
/// request of every instance.
struct ItemController<M: ServableMatcher>: Sendable {
    typealias Context = SwipeRankRequestContext
    let catalog: @Sendable () -> CatalogManager<M>?
    let clock: @Sendable () -> Int64
    /// The most edits in one request (`ServerConfiguration.maxItemEdits`).
    var maxEdits = 200_000
    /// The largest bulk upload (bytes).
    static var maxBulkBytes: Int { 64 << 20 }

    func addRoutes(to group: RouterGroup<Context>, table: RouteTable) {
        group.get(":id/fields") { _, context -> Response in
            let id = try context.parameters.require("id")
            guard let fields = try manager().item(id) else { throw Self.notFound(id) }
            return .json(try WireJSON.encode(ItemBody(itemID: id, fields: fields)), cache: CachePolicy.neverStore)
        }
        group.put(":id") { request, context in try await single(.put, request, context) }
        group.patch(":id") { request, context in try await single(.patch, request, context) }
        group.delete(":id") { request, context in try await single(.delete, request, context) }
        group.post("bulk") { request, context in
            let buffer: ByteBuffer
            do { buffer = try await request.body.collect(upTo: Self.maxBulkBytes) } catch {
                throw APIError(.contentTooLarge, code: "PAYLOAD_TOO_LARGE", message: "a bulk upload is at most \(Self.maxBulkBytes >> 20) MiB",
                               details: ["limit_bytes": .number(Double(Self.maxBulkBytes))])
            }
            let type = request.headers[.contentType]?.split(separator: ";").first.map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
            guard let type, ["application/x-ndjson", "application/jsonl", "application/json"].contains(type) else {
                throw APIError(.unsupportedMediaType, code: "UNSUPPORTED_MEDIA_TYPE",
                               message: "send the edits as application/x-ndjson, one JSON object per line",
                               details: ["content_type": type.map { .string($0) } ?? .null])
            }
            let partial = request.uri.queryParameters["partial"].map { $0 == "true" } ?? false
            let edits = try Self.parseBulk(Array(buffer.readableBytesView), maxEdits: maxEdits)
            return try await apply(edits, partial: partial, single: false)
        }
        for (method, path) in [(HTTPRequest.Method.get, "/items/:id/fields"), (.put, "/items/:id"), (.patch, "/items/:id"),
                               (.delete, "/items/:id"), (.post, "/items/bulk")] {
            table.add(method, path)
        }
    }

    private func manager() throws(APIError) -> CatalogManager<M> {
        guard let manager = catalog() else {
            throw APIError(.forbidden, code: "ACCESS_DENIED", message: "this server was started without an editable catalog source")
        }
        return manager
    }

    private static func notFound(_ id: String) -> APIError {
        APIError.notFound("no item \"\(id.prefix(64))\"", details: ["resource": .string("item")])
    }

    private func single(_ operation: ItemEdit.Operation, _ request: Request, _ context: Context) async throws -> Response {
        let id = try context.parameters.require("id")
        var fields: [String: JSONValue] = [:]
        if operation != .delete {
            let body = try await request.jsonBody(context: context)!
            guard case let .object(object) = try WireJSON.decode(JSONValue.self, from: body, what: "body", maxBytes: context.maxUploadSize) else {
                throw APIError.validation("the body is a JSON object of column → value", field: "$")
            }
            fields = object
        }
        return try await apply([ItemEdit(operation: operation, itemID: id, fields: fields, path: "$", line: nil)], partial: false, single: true)
    }

    private func apply(_ edits: [ItemEdit], partial: Bool, single: Bool) async throws -> Response {
        guard !edits.isEmpty else { throw APIError.validation("no edits: send one JSON object per line", field: "$") }
        guard edits.count <= maxEdits else {
            throw APIError(.contentTooLarge, code: "PAYLOAD_TOO_LARGE", message: "at most \(maxEdits) edits per request",
                           details: ["limit": .number(Double(maxEdits))])
        }
        let outcome: CatalogManager<M>.Outcome
        do {
            outcome = try await manager().apply(edits, partial: partial, now: clock())
        } catch let rejected as ItemEditErrors {
            if single, let first = rejected.errors.first, first.notFound { throw Self.notFound(first.itemID) }
            throw APIError(.badRequest, code: "VALIDATION_ERROR",
                           message: rejected.errors.count == 1 ? rejected.errors[0].reason
                               : "\(rejected.errors.count) edits are invalid; nothing was applied",
                           details: ["rows": .array(rejected.errors.map(\.json)), "applied": .number(0)])
        }
        let body = ItemWriteBody(
            applied: outcome.applied, rejected: outcome.rejected.map(\.json),
            catalog: .init(sequence: outcome.sequence, fingerprint: outcome.engine.catalogFingerprint,
                           items: outcome.engine.matcher.catalog.count))
        return .json(try WireJSON.encode(body), cache: CachePolicy.neverStore)
    }

    /// One edit per line: `{"op": "put"|"patch"|"delete", "id": "…", "fields": {…}}` (`op`
    /// defaults to put). Blank lines are skipped. A line that is not such an object rejects the
    /// upload (400 naming the line), before anything is validated against the catalog.
    static func parseBulk(_ bytes: [UInt8], maxEdits: Int) throws(APIError) -> [ItemEdit] {
        var edits: [ItemEdit] = []
        var start = 0
        var line = 0
        func parse(_ slice: ArraySlice<UInt8>, line: Int) throws(APIError) {
            let path = "$[\(line - 1)]"
            guard let value = try? JSONDecoder().decode(JSONValue.self, from: Data(slice)), case let .object(o) = value else {
                throw APIError(.badRequest, code: "VALIDATION_ERROR", message: "line \(line): not a JSON object",
                               details: ["line": .number(Double(line)), "path": .string(path)])
            }
            func fail(_ reason: String, _ key: String) -> APIError {
                APIError(.badRequest, code: "VALIDATION_ERROR", message: "line \(line): \(reason)",
                         details: ["line": .number(Double(line)), "path": .string("\(path).\(key)")])
            }
            if let unknown = o.keys.sorted().first(where: { !["op", "id", "fields"].contains($0) }) {
                throw fail("unknown key \"\(unknown.prefix(32))\" (an edit has op, id and fields)", unknown)
            }
            var operation = ItemEdit.Operation.put
            if let raw = o["op"] {
                guard case let .string(s) = raw, let op = ItemEdit.Operation(rawValue: s) else { throw fail("op is put, patch or delete", "op") }
                operation = op
            }
            guard case let .string(id)? = o["id"] else { throw fail("id is a string", "id") }
            var fields: [String: JSONValue] = [:]
            switch (operation, o["fields"]) {
            case (.delete, nil): break
            case (.delete, _): throw fail("a delete has no fields", "fields")
            case let (_, .object(f)?): fields = f
            default: throw fail("fields is an object of column → value", "fields")
            }
            edits.append(ItemEdit(operation: operation, itemID: id, fields: fields, path: path, line: line))
        }
        for i in 0...bytes.count where i == bytes.count || bytes[i] == UInt8(ascii: "\n") {
            line += 1
            var slice = bytes[start..<i]
            if slice.last == UInt8(ascii: "\r") { slice = slice.dropLast() }
            start = i + 1
            if slice.allSatisfy({ $0 == 32 || $0 == 9 }) { continue }
            try parse(slice, line: line)
            if edits.count > maxEdits {
                throw APIError(.contentTooLarge, code: "PAYLOAD_TOO_LARGE", message: "at most \(maxEdits) edits per request",
                               details: ["limit": .number(Double(maxEdits))])
            }
        }
        return edits
    }
}

/// `GET /items/{id}/fields`.
struct ItemBody: Encodable {
    var itemID: String
    var fields: [String: String]
    enum CodingKeys: String, CodingKey { case itemID = "item_id", fields }
}

/// The answer to an item write.
struct ItemWriteBody: Encodable {
    var applied: Int
    var rejected: [JSONValue]
    var catalog: Catalog

    struct Catalog: Encodable {
        var sequence: Int
        var fingerprint: String
        var items: Int
    }
}
