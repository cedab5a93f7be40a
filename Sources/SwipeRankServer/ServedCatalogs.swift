import Foundation
import HTTPTypes
import Hummingbird
import Logging
import ServiceLifecycle
import SwipeRank
import SwipeRankStore

/// Another catalog served by the same process, under `/catalogs/<name>/…` (`serve --catalogs`):
/// restaurants beside colleges, movies beside restaurants. Every route of the default catalog
/// exists there — a student's profile, deck and learned state, groups, app events and the item
/// API are per catalog — over the same store, each catalog's keys apart (`NamespacedStore`).
public struct ServedCatalog: Sendable {
    /// The path segment: 1–32 of `a-z 0-9 _ -`.
    public let name: String
    let build: @Sendable (_ store: any ServiceStore, _ configuration: ServerConfiguration, _ logger: Logger,
                          _ metrics: ServerMetrics) async throws -> (any HTTPResponder<SwipeRankRequestContext>, [any Service])

    /// A catalog served under `/catalogs/<name>/`.
    ///
    /// - Parameters:
    ///   - name: The path segment.
    ///   - engine: Its engine.
    ///   - source: Its editable source (the item API), or nil.
    /// - Throws: `ServedCatalog.NameError` for a name outside `[a-z0-9_-]{1,32}`.
    public init<M: ServableMatcher>(name: String, engine: SwipeEngine<M>, source: CatalogSource<M>? = nil) throws {
        guard Self.isValidName(name) else { throw NameError(name: name) }
        self.name = name
        build = { store, configuration, logger, metrics in
            let parts = try await buildParts(engine: engine, store: NamespacedStore.make(store, catalog: name),
                                             configuration: configuration, catalog: source, logger: logger, metrics: metrics)
            return (parts.responder, backgroundServices(parts, configuration: configuration))
        }
    }

    /// Whether a name can be a catalog's path segment.
    public static func isValidName(_ name: String) -> Bool {
        (1...32).contains(name.utf8.count) && name.utf8.allSatisfy { (0x61...0x7A).contains($0) || (0x30...0x39).contains($0) || $0 == 0x5F || $0 == 0x2D }
    }

    /// A catalog name that cannot be a path segment.
    public struct NameError: Error, CustomStringConvertible {
        /// The name given.
        public let name: String
        /// What is wrong.
        public var description: String { "catalog name \"\(name.prefix(40))\": 1–32 of a-z, 0-9, _ and -" }
    }
}

/// The services a catalog's parts need running: the group relay, the migration sweep, the
/// catalog poll.
func backgroundServices<M: ServableMatcher>(_ parts: ServiceParts<M>, configuration: ServerConfiguration) -> [any Service] {
    var services: [any Service] = []
    if let relay = parts.shared.relay { services.append(GroupRelayService(relay: relay)) }
    if configuration.service.migrationSweep {
        services.append(MigrationSweepService(students: { parts.generations.current.students }))
    }
    if let manager = parts.catalog {
        services.append(CatalogPollService(catalog: manager, interval: configuration.catalogPollInterval))
    }
    if let refitter = parts.refitter {
        services.append(ModelRefitService(refitter: refitter, sweep: configuration.service.migrationSweep))
    }
    if let source = configuration.jwks {
        services.append(JWKSReloadService(source: source, interval: configuration.jwksReloadInterval, ring: parts.shared.keys,
                                          logger: parts.shared.logger))
    }
    return services
}

/// Sends `/catalogs/<name>/<rest>` to that catalog's service as `/<rest>`, everything else to
/// the default catalog's.
struct CatalogsResponder: HTTPResponder {
    typealias Context = SwipeRankRequestContext
    let fallback: any HTTPResponder<Context>
    let named: [String: any HTTPResponder<Context>]

    func respond(to request: Request, context: Context) async throws -> Response {
        let path = request.uri.path
        if !named.isEmpty, request.method == .delete, path == "/student" || (path.hasPrefix("/catalogs/") && path.hasSuffix("/student")) {
            return try await eraseEverywhere(request, context: context)
        }
        guard path.hasPrefix("/catalogs/") else { return try await fallback.respond(to: request, context: context) }
        let rest = path.dropFirst("/catalogs/".count)
        let name = String(rest.prefix { $0 != "/" })
        guard let responder = named[name] else {
            // The default catalog's error envelope (and request id) for an unknown catalog.
            return try await fallback.respond(to: request, context: context)
        }
        var head = request.head
        let inner = rest.dropFirst(name.count)
        let query = request.uri.query.map { "?" + $0 } ?? ""
        head.path = (inner.isEmpty ? "/" : String(inner)) + query
        return try await responder.respond(to: Request(head: head, body: request.body), context: context)
    }

    /// `DELETE /student` through any catalog erases the student in every catalog: "erase
    /// everything about me" must not leave a learned state behind in another one. 204 when
    /// anything was erased; otherwise the first catalog's answer (404, 401…).
    private func eraseEverywhere(_ request: Request, context: Context) async throws -> Response {
        var head = request.head
        head.path = "/student"
        var first: Response?, erased: Response?
        for responder in [fallback] + named.keys.sorted().map({ named[$0]! }) {
            let response = try await responder.respond(to: Request(head: head, body: .init(buffer: .init())), context: context)
            if response.status == .noContent { erased = erased ?? response }
            first = first ?? response
        }
        return erased ?? first!
    }
}
