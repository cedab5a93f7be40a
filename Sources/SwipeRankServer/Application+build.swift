import Foundation
import Hummingbird
import JWTKit
import Logging
import NIOCore
import SwipeRank
import ServiceLifecycle
import Synchronization
import SwipeRankStore

/// Everything `swiperank serve` configures.
public struct ServerConfiguration: Sendable {
    /// The address to bind (default loopback).
    public var host = "127.0.0.1"
    /// The port (0: any free port).
    public var port = 8080
    /// Token verification.
    public var auth = AuthConfiguration(hmacSecret: AuthConfiguration.developmentSecret)
    /// Requests per student per hour (token bucket): one swipe a second sustained, with bursts.
    /// A sync batch counts as one request per 10 swipes.
    public var rateLimitPerHour = 3_600
    /// The most operations in one `/student/batch`.
    public var maxBatchOperations = 20
    /// Service limits.
    public var service = ServiceOptions()
    /// The bearer key of the item API (`/items`), ≥ 32 bytes; nil turns the API off. Distinct
    /// from student tokens: no student token opens an operator route.
    public var operatorKey: String?
    /// Origins browser apps may call from (`https://app.example.com`, or `*` for any); empty:
    /// no CORS headers (same-origin apps only).
    public var corsOrigins: [String] = []
    /// The most edits in one item API request (413 beyond).
    public var maxItemEdits = 200_000
    /// How often an instance checks the store for other instances' catalog edits.
    public var catalogPollInterval: Duration = .milliseconds(250)
    /// Group session limits.
    public var groups = GroupOptions()
    /// Serve the web app at `/app/` (the compiled-in copy, or `appDirectory`).
    public var webApp = true
    /// A JWKS (file or URL) re-read every `jwksReloadInterval` (its keys replace the set in
    /// service when it changes and parses; a broken set is logged and the old keys stay).
    public var jwks: JWKSSource?
    /// How often `jwksFile` is re-read.
    public var jwksReloadInterval: Duration = .seconds(60)
    /// Group matches announced to the app's backend (signed POSTs from a stored outbox); nil: off.
    public var webhook: WebhookConfiguration?
    /// A folder to serve the web app from instead of the copy compiled in (development).
    public var appDirectory: String?
    /// Count guest sign-ups by the last `X-Forwarded-For` address (set when a reverse proxy you
    /// run appends it; never otherwise, since a client could write any address there).
    public var trustForwardedFor = false
    /// Refits the collaborative model from the service's own log on a schedule (each
    /// catalog its own model); nil: the model stays the one given at start.
    public var refit: RefitOptions?
    /// Makes the id of each new guest (`POST /auth/guest`); random by default.
    public var guestID: @Sendable () -> String = { AuthController.randomGuestID() }

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
///   - catalog: Where the catalog comes from, for the item API (`/items`) and the changes
///     stored by earlier runs or other instances; nil serves `engine` as it is.
///   - catalogs: Further catalogs, each served under `/catalogs/<name>/` over the same store.
///   - experiment: An A/B test over the default catalog's students, or nil.
///   - logger: The service log.
///   - onRunning: Called with the bound port once the server listens (port 0 picks one).
/// - Returns: The application (run it with `runService()`).
/// - Throws: `AuthSetupError` for a bad key or secret, or the development secret on a
///   non-loopback address; the engine builder's error when the stored catalog changes do not
///   build on `catalog`; `ExperimentError` when an arm cannot be built.
public func buildApplication<M: ServableMatcher>(
    engine: SwipeEngine<M>, store: any ServiceStore, configuration: ServerConfiguration, catalog: CatalogSource<M>? = nil,
    catalogs: [ServedCatalog] = [], experiment: Experiment<M>? = nil, logger: Logger,
    onRunning: @escaping @Sendable (Int) async -> Void = { _ in }
) async throws -> some ApplicationProtocol {
    if configuration.auth.hmacSecret == AuthConfiguration.developmentSecret && !configuration.isLoopback {
        throw AuthSetupError("the development JWT secret is only allowed on a loopback address; set SWIPERANK_JWT_SECRET")
    }
    let (responder, catalogServices) = try await buildCatalogs(engine: engine, store: store, configuration: configuration, catalog: catalog,
                                                               catalogs: catalogs, experiment: experiment, logger: logger)
    var services = catalogServices
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

/// The default catalog's service and every other catalog's under `/catalogs/<name>/`, over one
/// store (each catalog's keys apart when there are several), one metrics registry.
func buildCatalogs<M: ServableMatcher>(
    engine: SwipeEngine<M>, store: any ServiceStore, configuration: ServerConfiguration, catalog: CatalogSource<M>?,
    catalogs: [ServedCatalog], experiment: Experiment<M>? = nil, logger: Logger
) async throws -> (CatalogsResponder, [any Service]) {
    // One webhook dispatcher for every catalog: the outbox is the store's, not a catalog's.
    func dispatcher(_ metrics: ServerMetrics) -> [any Service] {
        configuration.webhook.map { [WebhookDispatcher(store: store, configuration: $0, logger: logger, metrics: metrics)] } ?? []
    }
    guard !catalogs.isEmpty else {
        let parts = try await buildParts(engine: engine, store: store, configuration: configuration, catalog: catalog,
                                         experiment: experiment, logger: logger)
        return (CatalogsResponder(fallback: parts.responder, named: [:]),
                backgroundServices(parts, configuration: configuration) + dispatcher(parts.shared.metrics))
    }
    guard Set(catalogs.map(\.name)).count == catalogs.count else { throw CatalogStartError("two catalogs have the same name") }
    let parts = try await buildParts(engine: engine, store: NamespacedStore.make(store, catalog: nil), configuration: configuration,
                                     catalog: catalog, experiment: experiment, logger: logger)
    var services = backgroundServices(parts, configuration: configuration) + dispatcher(parts.shared.metrics)
    var named: [String: any HTTPResponder<SwipeRankRequestContext>] = [:]
    for served in catalogs {
        let (responder, own) = try await served.build(store, configuration, logger, parts.shared.metrics)
        named[served.name] = responder
        services += own
    }
    return (CatalogsResponder(fallback: parts.responder, named: named), services)
}

/// The service's responder and metrics (what `buildApplication` serves; tests use it directly).
///
/// - Parameters:
///   - engine: The engine.
///   - store: The store.
///   - configuration: Auth and limits (the address is not used).
///   - catalog: Where the catalog comes from (the item API), or nil.
///   - logger: The log.
/// - Returns: The responder and the metrics it records into.
/// - Throws: `AuthSetupError` for bad keys.
public func buildResponder<M: ServableMatcher>(
    engine: SwipeEngine<M>, store: any ServiceStore, configuration: ServerConfiguration, catalog: CatalogSource<M>? = nil,
    logger: Logger
) async throws -> (some HTTPResponder<SwipeRankRequestContext>, ServerMetrics) {
    let parts = try await buildParts(engine: engine, store: store, configuration: configuration, catalog: catalog, logger: logger)
    return (parts.responder, parts.shared.metrics)
}

/// What outlives a catalog version: metrics, limits, token cache, locks, group subscribers,
/// the migration ledger.
final class SharedParts: Sendable {
    let store: any ServiceStore
    let configuration: ServerConfiguration
    let logger: Logger
    let keys: KeyRing
    let metrics: ServerMetrics
    let buckets: TokenBuckets
    let joinBuckets: TokenBuckets
    /// Guest tokens per client address.
    let guestBuckets: TokenBuckets
    let verified: VerifiedTokens
    let locks = KeyedLock()
    let migrations = MigrationLedger()
    /// The scheduled refit's record (`/health`).
    let refits = RefitLedger()
    let hub = GroupEventHub()
    let relay: GroupRelay?

    init(store: any ServiceStore, configuration: ServerConfiguration, logger: Logger, keys: KeyRing, verified: VerifiedTokens,
         metrics: ServerMetrics) {
        self.metrics = metrics
        self.store = store
        self.configuration = configuration
        self.logger = logger
        self.keys = keys
        self.verified = verified
        guestBuckets = TokenBuckets(capacity: max(1, configuration.auth.guestsPerHour), period: 3_600,
                                    now: TokenBuckets.seconds(configuration.service.clock))
        buckets = TokenBuckets(capacity: configuration.rateLimitPerHour, period: 3_600, now: TokenBuckets.seconds(configuration.service.clock))
        joinBuckets = TokenBuckets(capacity: configuration.groups.joinsPerMinute, period: 60,
                                   now: TokenBuckets.seconds(configuration.service.clock))
        relay = groupRelay(store: store, hub: hub, options: configuration.groups, logger: logger)
    }
}

/// One catalog version's services and router. A catalog edit builds the next generation and
/// swaps it in; requests already running finish on theirs (one engine per request, never two).
struct ServiceGeneration<M: ServableMatcher>: Sendable {
    let students: StudentService<M>
    let groups: GroupService<M>
    let responder: RouterResponder<SwipeRankRequestContext>
    /// The catalog change log's sequence the engine includes.
    let catalogSequence: Int
}

/// The current generation, swapped atomically.
final class ServiceGenerations<M: ServableMatcher>: Sendable {
    private let value: Mutex<ServiceGeneration<M>>
    init(_ first: ServiceGeneration<M>) { value = Mutex(first) }
    var current: ServiceGeneration<M> { value.withLock { $0 } }
    func swap(_ next: ServiceGeneration<M>) { value.withLock { $0 = next } }
}

/// Sends each request to the generation current when it arrives.
struct GenerationResponder<M: ServableMatcher>: HTTPResponder {
    typealias Context = SwipeRankRequestContext
    let generations: ServiceGenerations<M>

    func respond(to request: Request, context: Context) async throws -> Response {
        try await generations.current.responder.respond(to: request, context: context)
    }
}

/// Everything `buildApplication` serves.
struct ServiceParts<M: ServableMatcher>: Sendable {
    let shared: SharedParts
    let generations: ServiceGenerations<M>
    let catalog: CatalogManager<M>?
    /// The scheduled refit (`ServerConfiguration.refit`), or nil.
    let refitter: ModelRefitter<M>?
    var responder: GenerationResponder<M> { GenerationResponder(generations: generations) }
    /// The current generation's group service (tests drain its students' snapshots).
    var groups: GroupService<M> { generations.current.groups }
}

/// The shared parts, the first generation and the catalog manager (which applies the changes
/// the store already holds before the first request).
func buildParts<M: ServableMatcher>(
    engine: SwipeEngine<M>, store: any ServiceStore, configuration: ServerConfiguration, catalog source: CatalogSource<M>? = nil,
    experiment: Experiment<M>? = nil, logger: Logger, metrics: ServerMetrics = ServerMetrics()
) async throws -> ServiceParts<M> {
    // Every arm must build on the engine at start (a bad arm stops the start, naming it).
    if let experiment { _ = try ArmEngines(experiment: experiment, engine: engine) }
    let verified = VerifiedTokens()
    let shared = SharedParts(store: store, configuration: configuration, logger: logger,
                             keys: try await KeyRing(auth: configuration.auth, verified: verified), verified: verified, metrics: metrics)
    let manager = ManagerSlot<M>()
    let generations = ServiceGenerations(makeGeneration(engine: engine, sequence: 0, shared: shared, catalog: { manager.value },
                                                        experiment: experiment))
    let installer = GenerationInstaller(generations: generations, shared: shared, manager: manager, experiment: experiment)
    let refitter = configuration.refit.map {
        ModelRefitter(installer: installer, store: store, options: $0, ledger: shared.refits, logger: logger, clock: configuration.service.clock)
    }
    // A restarted instance serves the newest stored model from its first request.
    if let refitter { await refitter.follow() }
    if let source {
        let built = try CatalogManager(source: source, store: store, logger: logger) { engine, sequence in
            installer.installCatalog(engine, sequence: sequence)
        }
        manager.value = built
        // The first generation was built before the manager existed: build it again with the
        // item routes, then apply what the store holds.
        installer.installCatalog(engine, sequence: 0)
        do {
            try await built.catchUp()
        } catch let error as DataError {
            throw CatalogStartError("the catalog edits stored in the database do not apply to this catalog file: \(error)")
        }
    }
    return ServiceParts(shared: shared, generations: generations, catalog: manager.value, refitter: refitter)
}

/// The catalog manager, set once it exists (its install closure builds generations that name it).
final class ManagerSlot<M: ServableMatcher>: Sendable {
    private let slot = Mutex<CatalogManager<M>?>(nil)
    var value: CatalogManager<M>? {
        get { slot.withLock { $0 } }
        set { slot.withLock { $0 = newValue } }
    }
}

/// Stored catalog edits that do not build on the catalog file given at start.
public struct CatalogStartError: Error, CustomStringConvertible {
    /// What went wrong.
    public let description: String
    init(_ description: String) { self.description = description }
}

/// One generation: services and router over `engine`.
func makeGeneration<M: ServableMatcher>(
    engine: SwipeEngine<M>, sequence: Int, shared: SharedParts, catalog: @escaping @Sendable () -> CatalogManager<M>?,
    experiment: Experiment<M>? = nil
) -> ServiceGeneration<M> {
    let configuration = shared.configuration
    let (store, logger, metrics, keys, verified, buckets) = (shared.store, shared.logger, shared.metrics, shared.keys, shared.verified, shared.buckets)
    let arms = experiment.map { experiment in
        ArmEngines(lenient: experiment, engine: engine) { problem in
            logger.error("an experiment arm does not build on this catalog or model; it serves the common engine", metadata: ["error": "\(problem)"])
        }
    }
    let service = StudentService(engine: engine, store: store, options: configuration.service, logger: logger,
                                 locks: shared.locks, migrations: shared.migrations, catalogSequence: sequence, catalogLog: store, arms: arms)
    var groupOptions = configuration.groups
    groupOptions.announceMatches = configuration.webhook != nil
    let groups = GroupService(engine: engine, store: store, students: service, options: groupOptions, logger: logger,
                              hub: shared.hub, relay: shared.relay, joinBuckets: shared.joinBuckets)
    let box = ResponderBox()
    let table = RouteTable()

    let router = Router(context: SwipeRankRequestContext.self)
    router.add(middleware: FrontDoorMiddleware(compression: CompressionMiddleware(), cors: CORSMiddleware(origins: configuration.corsOrigins),
                                               request: RequestMiddleware(metrics: metrics), errors: ErrorMiddleware(routes: table)))
    PublicController(service: service, metrics: metrics, refits: configuration.refit == nil ? nil : shared.refits)
        .addRoutes(to: router, table: table)
    CatalogInfoController(service: service).addRoutes(to: router, table: table)
    AuthController(keys: keys, buckets: shared.guestBuckets, clock: configuration.service.clock, newGuestID: configuration.guestID,
                   trustForwardedFor: configuration.trustForwardedFor)
        .addRoutes(to: router, table: table)
    if configuration.webApp { WebAppController(directory: configuration.appDirectory).addRoutes(to: router, table: table) }
    let studentGate = StudentGateMiddleware(auth: StudentAuthMiddleware(keys: keys, verified: verified), rateLimit: RateLimitMiddleware(buckets: buckets))
    let student = router.group("student").add(middleware: studentGate)
    StudentController(service: service, groups: groups, metrics: metrics, buckets: buckets).addRoutes(to: student, table: table)
    EventController(store: store, engine: engine, options: configuration.service).addRoutes(
        to: router.group("events").add(middleware: studentGate),
        table: table)
    GroupController(service: groups).addRoutes(
        to: router.group("groups").add(middleware: studentGate),
        table: table)
    BatchController(box: box, maxOperations: configuration.maxBatchOperations).addRoutes(to: student, table: table)
    WebhookController(store: store).addRoutes(
        to: router.group("webhooks").add(middleware: OperatorAuthMiddleware(key: configuration.operatorKey)), table: table)
    ItemController(catalog: catalog, clock: configuration.service.clock, maxEdits: configuration.maxItemEdits).addRoutes(
        to: router.group("items").add(middleware: OperatorAuthMiddleware(key: configuration.operatorKey)), table: table)
    let responder = router.buildResponder()
    box.responder = responder
    return ServiceGeneration(students: service, groups: groups, responder: responder, catalogSequence: sequence)
}
