import Foundation
import HTTPTypes
import Hummingbird
import SwipeRank
import SwipeRankStore

/// Routes without a token: health, metrics, and catalog data (cacheable by anyone).
struct PublicController<M: ServableMatcher>: Sendable {
    typealias Context = SwipeRankRequestContext
    let service: StudentService<M>
    let metrics: ServerMetrics
    /// The scheduled refit's record, when there is one.
    var refits: RefitLedger? = nil

    func addRoutes(to router: Router<Context>, table: RouteTable) {
        router.get("health") { _, _ in try await health() }
        router.get("health/live") { _, _ in
            Response.json(Data(#"{"status":"ok"}"#.utf8), cache: CachePolicy.neverStore)
        }
        router.get("health/ready") { _, _ in try await health() }
        router.get("metrics") { _, _ in
            Response(status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8", .cacheControl: CachePolicy.neverStore],
                     body: ResponseBody(byteBuffer: ByteBuffer(string: metrics.render())))
        }
        // Catalog data: /items for every catalog, /schools its colleges' name (kept for all).
        for path in ["schools/:id", "items/:id"] {
            router.get(RouterPath(path)) { request, context in
                let id = try context.parameters.require("id")
                let catalog = service.engine.matcher.catalog
                let noun = M.vocabulary.item
                guard let row = catalog.row(of: id) else {
                    throw APIError.notFound("no \(noun) \"\(id.prefix(64))\"", details: ["resource": .string(noun)])
                }
                let etag = "\"\(service.engine.catalogFingerprint.prefix(16))-\(row)\""
                if request.ifNoneMatch(etag) {
                    return Response(status: .notModified, headers: [.eTag: etag, .cacheControl: CachePolicy.publicCatalog])
                }
                return .json(try WireJSON.encode(ItemSummaryBody(key: noun, summary: catalog.summary(row: row))),
                             cache: CachePolicy.publicCatalog, extra: [.eTag: etag])
            }
        }
        router.get("openapi.yaml") { _, _ in
            Response(status: .ok, headers: [.contentType: "application/yaml; charset=utf-8", .cacheControl: CachePolicy.publicCatalog],
                     body: ResponseBody(byteBuffer: ByteBuffer(string: OpenAPIDocument.yaml + "\n")))
        }
        // The same document as JSON, and a reference page rendering it (no CDN: the page and its
        // script are compiled in; the script is its own route since the CSP allows only 'self').
        router.get("openapi.json") { _, _ in
            Response(status: .ok, headers: [.contentType: "application/json; charset=utf-8", .cacheControl: CachePolicy.publicCatalog],
                     body: ResponseBody(byteBuffer: ByteBuffer(string: OpenAPIDocument.json)))
        }
        router.get("docs") { _, _ in
            Response(status: .ok, headers: [.contentType: "text/html; charset=utf-8", .cacheControl: "no-cache",
                                            .contentSecurityPolicy: WebAppController.securityPolicy,
                                            .xContentTypeOptions: "nosniff", .referrerPolicy: "no-referrer"],
                     body: ResponseBody(byteBuffer: ByteBuffer(string: OpenAPIDocument.docsHTML)))
        }
        router.get("docs/docs.js") { _, _ in
            Response(status: .ok, headers: [.contentType: "text/javascript; charset=utf-8", .cacheControl: "no-cache",
                                            .xContentTypeOptions: "nosniff"],
                     body: ResponseBody(byteBuffer: ByteBuffer(string: OpenAPIDocument.docsJS)))
        }
        for path in ["/health", "/health/live", "/health/ready", "/metrics", "/schools/:id", "/items/:id", "/openapi.yaml",
                     "/openapi.json", "/docs", "/docs/docs.js"] {
            table.add(.get, path)
        }
    }

    /// Ready: the catalog is loaded (it is, or the server would not have started) and the store
    /// answers; 503 otherwise. `degraded` (still 200: every other student is served) when some
    /// stored students could not be carried over to this catalog or model.
    private func health() async throws -> Response {
        var storeUp = true
        do { try await service.store.ping() } catch { storeUp = false }
        let ledger = service.migrations.snapshot
        let status = !storeUp ? "unavailable" : ledger.failures > 0 ? "degraded" : "ok"
        let body = HealthBody(
            status: status, store: storeUp ? "ok" : "unreachable",
            catalogItems: service.engine.matcher.catalog.count, cachedSessions: service.cache.count,
            catalog: .init(fingerprint: service.engine.catalogFingerprint, items: service.engine.matcher.catalog.count,
                           sequence: service.catalogSequence),
            modelVersion: service.modelVersion,
            migration: .init(migrated: ledger.migrated, failed: ledger.failures, failedStudents: ledger.failedIDs,
                             sweep: ledger.sweep),
            refit: refits?.snapshot)
        return .json(try WireJSON.encode(body), status: storeUp ? .ok : .serviceUnavailable, cache: CachePolicy.neverStore)
    }
}

/// A response body.
struct HealthBody: Encodable {
    var status: String
    var store: String
    var catalogItems: Int
    var cachedSessions: Int
    /// Which catalog this instance serves: a stored student taken on another is migrated.
    var catalog: CatalogVersion
    /// `SwipeEngine.modelVersion`.
    var modelVersion: String
    var migration: Migration
    /// With a scheduled refit: the model in service and the last attempt.
    var refit: RefitLedger.State?

    struct CatalogVersion: Encodable {
        var fingerprint: String
        var items: Int
        /// The item API's change log sequence included (0: the file as loaded).
        var sequence: Int
    }

    struct Migration: Encodable {
        var migrated: Int
        var failed: Int
        var failedStudents: [String]
        var sweep: MigrationLedger.SweepState
        enum CodingKeys: String, CodingKey { case migrated, failed, failedStudents = "failed_students", sweep }
    }

    enum CodingKeys: String, CodingKey {
        case status, store, catalogItems = "catalog_items", cachedSessions = "cached_sessions", catalog
        case modelVersion = "model_version", migration, refit
    }
}

/// `GET /schools/:id` and `GET /items/:id`: `{"school": …}` or `{"item": …}`.
struct ItemSummaryBody: Encodable {
    var key: String
    var summary: ItemSummary

    func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: AnyKey.self)
        try c.encode(summary, forKey: AnyKey(key))
    }
}
