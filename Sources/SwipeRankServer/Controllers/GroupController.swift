import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import SwipeRank

/// `/groups/…`: group sessions — create, join by invite code, the shared deck, likes, close,
/// status and a live event stream. Every route needs a member's token (the creator's to close).
struct GroupController<M: ServableMatcher>: Sendable {
    typealias Context = SwipeRankRequestContext
    let service: GroupService<M>

    func addRoutes(to group: RouterGroup<Context>, table: RouteTable) {
        func route(_ method: HTTPRequest.Method, _ path: String,
                   _ handler: @escaping @Sendable (Request, Context) async throws -> Response) {
            group.on(RouterPath(path), method: method, use: handler)
            table.add(method, "/groups" + (path.isEmpty ? "" : "/" + path))
        }
        route(.post, "") { request, context in
            let body = try await request.jsonBody(context: context)!
            let create = try WireJSON.decode(CreateGroupRequest.self, from: body, what: "body", maxBytes: 64 << 10)
            let (data, id) = try await service.create(try context.student, create)
            return .json(data, status: .created, cache: CachePolicy.neverStore, extra: [.location: "/groups/\(id)"])
        }
        route(.get, "") { request, context in
            let status: GroupStatus?
            switch request.uri.queryParameters["status"].map(String.init) {
            case nil: status = .open
            case "all": status = nil
            case let raw?:
                guard let value = GroupStatus(rawValue: raw) else {
                    throw APIError.validation("status must be open, matched, closed or all", field: "status")
                }
                status = value
            }
            return .json(try await service.list(try context.student, status: status), cache: CachePolicy.privateData)
        }
        route(.post, "join") { request, context in
            let body = try await request.jsonBody(context: context)!
            let join = try WireJSON.decode(JoinGroupRequest.self, from: body, what: "body", maxBytes: 4 << 10)
            return .json(try await service.join(try context.student, code: join.inviteCode), cache: CachePolicy.neverStore)
        }
        route(.get, ":id") { _, context in
            .json(try await service.status(try context.student, group: try context.parameters.require("id")),
                  cache: CachePolicy.privateData)
        }
        route(.get, ":id/options") { request, context in
            let count = try request.intQuery("count", default: 10, range: 1...service.options.maxOptionsPerPage)
            let after = request.uri.queryParameters["after"] == nil ? nil
                : try request.intQuery("after", default: 0, range: 0...Int(Int32.max))
            return .json(try await service.nextOptions(try context.student, group: try context.parameters.require("id"),
                                                       after: after, count: count),
                         cache: CachePolicy.neverStore)
        }
        route(.post, ":id/likes") { request, context in
            let body = try await request.jsonBody(context: context)!
            let like = try WireJSON.decode(GroupLikeRequest.self, from: body, what: "body", maxBytes: 4 << 10)
            let result = try await service.vote(try context.student, group: try context.parameters.require("id"), like)
            return .json(result.body, status: result.replayed ? .ok : .created, cache: CachePolicy.neverStore,
                         extra: result.replayed ? [.idempotentReplayed: "true"] : [:])
        }
        route(.post, ":id/close") { _, context in
            .json(try await service.close(try context.student, group: try context.parameters.require("id")),
                  cache: CachePolicy.neverStore)
        }
        route(.get, ":id/events") { _, context in
            let (first, stream, cancel) = try await service.events(try context.student, group: try context.parameters.require("id"))
            let body = ResponseBody { writer in
                defer { cancel() }
                try await writer.write(ByteBuffer(bytes: first.wire))
                for await event in stream {
                    try await writer.write(ByteBuffer(bytes: event.wire))
                    if event.isTerminal { break }
                }
                try await writer.finish(nil)
            }
            return Response(status: .ok, headers: [.contentType: "text/event-stream; charset=utf-8", .cacheControl: CachePolicy.neverStore],
                            body: body)
        }
    }
}
