import Foundation
import Hummingbird
import JWTKit
import Logging
import NIOCore
import SwipeRank
import ServiceLifecycle
import SwipeRankStore

/// Everything `swiperank serve` configures.
public struct ServerConfiguration: Sendable {
    /// The address to bind (default loopback).
    public var host = "127.0.0.1"
    /// The port (0: any free port).
    public var port = 8080
    /// Token verification.
    public var auth = AuthConfiguration(hmacSecret: AuthConfiguration.developmentSecret)
    /// Requests per student per hour (token bucket).
    public var rateLimitPerHour = 1_000
    /// The most operations in one `/student/batch`.
    public var maxBatchOperations = 20
    /// Service limits.
    public var service = ServiceOptions()
    /// Group session limits.
    public var groups = GroupOptions()

    /// The defaults.
    public init() {}

    /// Whether `host` only accepts connections from this machine.
    public var isLoopback: Bool { ["127.0.0.1", "::1", "localhost"].contains(host) }
}

/// Builds the service: the router with its middleware (request ids and metrics, the error
/// envelope, auth and the rate limit on `/student`), over a store and an engine.
///
/// - Parameters:
///   - engine: The engine (its catalog is what the service serves).
///   - store: Where students and groups live.
///   - configuration: Address, auth, limits.
///   - logger: The service log.
///   - onRunning: Called with the bound port once the server listens (port 0 picks one).
/// - Returns: The application (run it with `runService()`).
/// - Throws: `AuthSetupError` for a bad key or secret, or the development secret on a
///   non-loopback address.
public func buildApplication<M: ServableMatcher>(
    engine: SwipeEngine<M>, store: any ServiceStore, configuration: ServerConfiguration, logger: Logger,
    onRunning: @escaping @Sendable (Int) async -> Void = { _ in }
) async throws -> some ApplicationProtocol {
    if configuration.auth.hmacSecret == AuthConfiguration.developmentSecret && !configuration.isLoopback {
        throw AuthSetupError("the development JWT secret is only allowed on a loopback address; set SWIPERANK_JWT_SECRET")
    }
    let (responder, _, groups) = try await buildParts(engine: engine, store: store, configuration: configuration, logger: logger)
    var services: [any Service] = []
    if let relay = groups.relay { services.append(GroupRelayService(relay: relay)) }
    if configuration.service.migrationSweep { services.append(MigrationSweepService(service: groups.students)) }
    if configuration.service.eventRetentionDays > 0 {
        services.append(EventRetentionService(store: store, days: configuration.service.eventRetentionDays,
                                              clock: configuration.service.clock, logger: logger))
    }
    return Application(
        responder: responder,
        configuration: .init(address: .hostname(configuration.host, port: configuration.port), serverName: "SwipeRank"),
        services: services,
        onServerRunning: { channel in await onRunning(channel.localAddress?.port ?? configuration.port) },
        logger: logger)
}

/// The service's responder and metrics (what `buildApplication` serves; tests use it directly).
///
/// - Parameters:
///   - engine: The engine.
///   - store: The store.
///   - configuration: Auth and limits (the address is not used).
///   - logger: The log.
/// - Returns: The responder and the metrics it records into.
/// - Throws: `AuthSetupError` for bad keys.
public func buildResponder<M: ServableMatcher>(
    engine: SwipeEngine<M>, store: any ServiceStore, configuration: ServerConfiguration, logger: Logger
) async throws -> (RouterResponder<SwipeRankRequestContext>, ServerMetrics) {
    let (responder, metrics, _) = try await buildParts(engine: engine, store: store, configuration: configuration, logger: logger)
    return (responder, metrics)
}

/// The responder, its metrics and the group service (whose relay `buildApplication` runs).
func buildParts<M: ServableMatcher>(
    engine: SwipeEngine<M>, store: any ServiceStore, configuration: ServerConfiguration, logger: Logger
) async throws -> (RouterResponder<SwipeRankRequestContext>, ServerMetrics, GroupService<M>) {
    let keys = try await configuration.auth.keys()
    let metrics = ServerMetrics()
    let service = StudentService(engine: engine, store: store, options: configuration.service, logger: logger)
    let groups = GroupService(engine: engine, store: store, students: service, options: configuration.groups, logger: logger)
    let buckets = TokenBuckets(capacity: configuration.rateLimitPerHour, period: 3_600,
                               now: TokenBuckets.seconds(configuration.service.clock))
    let box = ResponderBox()
    let table = RouteTable()
    let verified = VerifiedTokens()

    let router = Router(context: SwipeRankRequestContext.self)
    router.add(middleware: RequestMiddleware(metrics: metrics))
    router.add(middleware: ErrorMiddleware<SwipeRankRequestContext>(routes: table, requestID: { $0.requestID }))
    PublicController(service: service, metrics: metrics).addRoutes(to: router, table: table)
    let student = router.group("student")
        .add(middleware: StudentAuthMiddleware(keys: keys, verified: verified))
        .add(middleware: RateLimitMiddleware(buckets: buckets))
    StudentController(service: service, groups: groups, metrics: metrics).addRoutes(to: student, table: table)
    EventController(store: store, engine: engine, options: configuration.service).addRoutes(
        to: router.group("events").add(middleware: StudentAuthMiddleware(keys: keys, verified: verified)).add(middleware: RateLimitMiddleware(buckets: buckets)),
        table: table)
    GroupController(service: groups).addRoutes(
        to: router.group("groups").add(middleware: StudentAuthMiddleware(keys: keys, verified: verified)).add(middleware: RateLimitMiddleware(buckets: buckets)),
        table: table)
    BatchController(box: box, maxOperations: configuration.maxBatchOperations).addRoutes(to: student, table: table)
    let responder = router.buildResponder()
    box.responder = responder
    return (responder, metrics, groups)
}

