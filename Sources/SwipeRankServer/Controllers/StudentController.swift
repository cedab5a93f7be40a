import Foundation
import HTTPTypes
import Hummingbird
import SwipeRank
import SwipeRankColleges
import SwipeRankStore

/// `/student/…`: the profile, the deck, swipes, feedback, saves, state, sync and export. Every
/// route acts on the token's student only.
struct StudentController<M: ServableMatcher>: Sendable {
    typealias Context = SwipeRankRequestContext
    let service: StudentService<M>
    let groups: GroupService<M>
    let metrics: ServerMetrics
    /// The students' rate limit: a sync batch costs one request per `swipesPerRequest` swipes.
    let buckets: TokenBuckets
    /// Swipes a sync may carry per request it is counted as (the middleware took the first).
    static var swipesPerRequest: Int { 10 }

    func addRoutes(to group: RouterGroup<Context>, table: RouteTable) {
        func route(_ method: HTTPRequest.Method, _ path: String,
                   _ handler: @escaping @Sendable (Request, Context) async throws -> Response) {
            group.on(RouterPath(path), method: method, use: handler)
            table.add(method, "/student/" + path)
        }
        route(.put, "profile") { try await putProfile($0, $1, merge: false) }
        route(.patch, "profile") { try await putProfile($0, $1, merge: true) }
        route(.get, "profile") { _, context in
            let record = try await service.record(try context.student)
            return .json(try profileBody(record), cache: CachePolicy.privateData)
        }
        group.on("", method: .delete) { _, context in
            // Groups first: the student's id leaves every shared session, then the student.
            try await groups.forget(try context.student)
            let erased = try await service.erase(try context.student)
            guard erased else { throw StudentService<M>.noProfile }
            return Response(status: .noContent, headers: [.cacheControl: CachePolicy.neverStore])
        }
        table.add(.delete, "/student")
        route(.get, "export") { _, context in
            .json(try await service.export(try context.student), cache: CachePolicy.neverStore)
        }
        route(.get, "recommendations") { request, context in
            let query = QueryParameters(request)
            let count = try query.int("count", default: service.options.defaultCount, range: 1...service.options.maxCount)
            return .json(try await service.recommendations(try context.student, count: count, fields: try query.fields(),
                                                          compressed: try query.bool("compressed"), preload: false),
                         cache: CachePolicy.neverStore)
        }
        route(.get, "recommendations/preload") { request, context in
            let query = QueryParameters(request)
            let count = try query.int("count", default: service.options.defaultPreloadCount, range: 1...service.options.maxPreloadCount)
            return .json(try await service.recommendations(try context.student, count: count, fields: try query.fields(),
                                                          compressed: try query.bool("compressed"), preload: true),
                         cache: CachePolicy.neverStore)
        }
        route(.get, "matches") { request, context in
            let limit = try request.intQuery("limit", default: 20, range: 1...100)
            let offset = try request.intQuery("offset", default: 0, range: 0...Int(Int32.max))
            return .json(try await service.matches(try context.student, limit: limit, offset: offset, fields: try request.fieldsQuery()),
                         cache: CachePolicy.privateData)
        }
        route(.get, "home") { request, context in
            let student = try context.student
            let count = try request.intQuery("count", default: service.options.defaultCount, range: 1...service.options.maxCount)
            let deck = try await service.recommendations(student, count: count, fields: try request.fieldsQuery(), compressed: false,
                                                         preload: false)
            let (state, saved, liked) = try await service.homeCounts(student)
            let groups = try JSONDecoder().decode(JSONValue.self, from: try await self.groups.list(student, status: .open))
            let open: JSONValue = if case let .object(o) = groups, let sessions = o["sessions"] { sessions } else { .array([]) }
            let body = HomeBody(deck: try JSONDecoder().decode(JSONValue.self, from: deck), learningState: state.learningState,
                                totalSwipes: state.totalSwipes, savedCount: saved, matchesCount: liked, openGroups: open)
            return .json(try WireJSON.encode(body), cache: CachePolicy.neverStore)
        }
        route(.post, "swipe") { request, context in
            let body = try await request.jsonBody(context: context)!
            // The plain reader first (the shape every client sends), within the same size limit.
            let maxBytes = 16 << 10
            let swipe = try (body.count <= maxBytes ? SwipeRequest.plain(body) : nil)
                ?? WireJSON.decode(SwipeRequest.self, from: body, what: "body", maxBytes: maxBytes)
            let result = try await service.swipe(try context.student, swipe)
            if !result.replayed { metrics.swipes.increment() }
            return .json(result.body, status: result.replayed ? .ok : .created, cache: CachePolicy.neverStore,
                         extra: result.replayed ? [.idempotentReplayed: "true"] : [:])
        }
        route(.post, "feedback") { request, context in
            let body = try await request.jsonBody(context: context)!
            let answer = try WireJSON.decode(FeedbackRequest.self, from: body, what: "body", maxBytes: 16 << 10)
            return .json(try await service.feedback(try context.student, answer), cache: CachePolicy.neverStore)
        }
        route(.get, "learning-state") { _, context in
            .json(try await service.learningState(try context.student), cache: CachePolicy.privateData)
        }
        // Every catalog answers under /items; /schools is the colleges' name, kept for every catalog.
        for path in ["schools/:id/save", "items/:id/save"] {
            route(.post, path) { request, context in
                let id = try context.parameters.require("id")
                let body = try await request.jsonBody(context: context, required: false)
                let save = try body.map { data throws(APIError) in try WireJSON.decode(SaveRequest.self, from: data, what: "body", maxBytes: 4 << 10) }
                let result = try await service.save(try context.student, itemID: id, timestamp: save?.timestamp)
                return .json(result.body, status: result.replayed ? .ok : .created, cache: CachePolicy.neverStore,
                             extra: result.replayed ? [.idempotentReplayed: "true"] : [:])
            }
        }
        route(.get, "saved") { request, context in
            .json(try await service.saved(try context.student, fields: try request.fieldsQuery()), cache: CachePolicy.privateData)
        }
        // Every catalog answers under /items; /schools is the colleges' name, kept for every catalog.
        for path in ["schools/:id", "items/:id"] {
            route(.get, path) { request, context in
                let id = try context.parameters.require("id")
                return .json(try await service.school(try context.student, itemID: id, fields: try request.fieldsQuery()),
                             cache: CachePolicy.privateData)
            }
        }
        route(.post, "sync") { request, context in
            let body = try await request.jsonBody(context: context)!
            let sync = try WireJSON.decode(SyncRequest.self, from: body, what: "body", maxBytes: context.maxUploadSize)
            // A batch of k swipes counts as ⌈k / 10⌉ requests: batching pays, but an offline
            // queue cannot carry more than the limit allows one request at a time.
            let extra = (sync.swipes.count + Self.swipesPerRequest - 1) / Self.swipesPerRequest - 1
            var remaining: HTTPFields = [:]
            if extra > 0 {
                switch buckets.take(try context.student, cost: extra) {
                case let .failure(retry):
                    throw APIError.rateLimited(retry, limit: Int(buckets.capacity),
                                               what: "requests (a sync of \(sync.swipes.count) swipes counts as \(extra + 1))")
                case let .success(left):
                    remaining = [.xRateLimitRemaining: String(left)]
                }
            }
            let (data, recorded) = try await service.sync(try context.student, sync)
            // Swipes that arrive through the offline queue are swipes too.
            if recorded > 0 { metrics.swipes.increment(by: Int64(recorded)) }
            return .json(data, cache: CachePolicy.neverStore, extra: remaining)
        }
        route(.get, "sync") { request, context in
            let since = try request.intQuery("since", default: 0, range: 0...Int(Int32.max))
            // The catalog's cursor is separate: an offline client's precached cards change when
            // operators edit items, not only when the student acts.
            let catalogSince = request.uri.queryParameters["catalog_since"] == nil ? nil
                : try request.intQuery("catalog_since", default: 0, range: 0...Int(Int32.max))
            return .json(try await service.changes(try context.student, since: since, catalogSince: catalogSince, fields: try request.fieldsQuery()),
                         cache: CachePolicy.neverStore)
        }
    }

    private func putProfile(_ request: Request, _ context: Context, merge: Bool) async throws -> Response {
        let student = try context.student
        let types: Set<String> = merge ? ["application/json", "application/merge-patch+json"] : ["application/json"]
        var body = try await request.jsonBody(context: context, types: types)!
        if merge {
            // A merge patch onto the stored profile (`merged(with:)`); decoding the result rejects
            // a field the profile does not have, with `null` too.
            let patch = try WireJSON.decode(JSONValue.self, from: body, what: "body", maxBytes: StudentProfile.maxJSONBytes)
            guard case .object = patch else { throw APIError.validation("a merge patch is a JSON object", field: "body") }
            let current = try await service.record(student)
            let stored = try WireJSON.decode(JSONValue.self, from: current.profile, what: "stored profile", maxBytes: 1 << 20)
            body = try WireJSON.encode(stored.merged(with: patch))
        }
        let profile: M.Profile
        do {
            profile = try M.decodeProfile(json: body, source: "body")
        } catch {
            throw APIError.validation(error)
        }
        let (record, created) = try await service.setProfile(student, profileJSON: try WireJSON.encode(profile), profile: profile)
        return .json(try profileBody(record), status: created ? .created : .ok, cache: CachePolicy.privateData)
    }

    private func profileBody(_ record: StudentRecord) throws -> Data {
        let profile = try JSONDecoder().decode(JSONValue.self, from: record.profile)
        return try WireJSON.encode(ProfileBody(studentID: record.studentID, profile: profile, createdAt: record.createdAt,
                                        updatedAt: record.updatedAt, version: record.version))
    }
}

extension JSONValue {
    /// RFC 7396 (objects merge key by key, `null` deletes, anything else replaces), except that
    /// a `null` aimed at a key this document lacks stays as an explicit `null` instead of being
    /// dropped: the profile decoders read a `null` field as absent, and reject it — naming it —
    /// when the profile has no such field, so a misspelt deletion is an error, not a no-op.
    ///
    /// - Parameter patch: The merge patch.
    /// - Returns: The patched document.
    func merged(with patch: JSONValue) -> JSONValue {
        guard case let .object(changes) = patch else { return patch }
        var result: [String: JSONValue]
        if case let .object(current) = self { result = current } else { result = [:] }
        for (key, value) in changes {
            if case .null = value {
                result[key] = result[key] == nil ? .null : nil
            } else {
                result[key] = (result[key] ?? .null).merged(with: value)
            }
        }
        return .object(result)
    }
}

extension HTTPField.Name {
    static let idempotentReplayed = Self("Idempotent-Replayed")!
}

/// A response body.
struct ProfileBody: Encodable {
    var studentID: String
    var profile: JSONValue
    var createdAt: Int64
    var updatedAt: Int64
    var version: Int
    enum CodingKeys: String, CodingKey {
        case studentID = "student_id", profile, createdAt = "created_at", updatedAt = "updated_at", version
    }
}
