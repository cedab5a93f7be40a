import ArgumentParser
import Foundation
import Hummingbird
import Logging
import SwipeRank
import SwipeRankColleges
import SwipeRankEvaluation
import SwipeRankPostgres
import SwipeRankServer
import SwipeRankStore

/// `swiperank serve`: the reference HTTP service. Every option also reads an environment
/// variable (`SWIPERANK_<OPTION>`), the option winning.
struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run the HTTP service (the app's API) on a SQLite store.",
        discussion: """
        Defaults work on a fresh machine: the shipped schools, swiperank.sqlite (created and migrated), \
        127.0.0.1:8080, the development JWT secret (loopback only; mint tokens with `swiperank token`). \
        Environment: SWIPERANK_HOST, SWIPERANK_PORT, SWIPERANK_DATABASE, SWIPERANK_DURABILITY, \
        SWIPERANK_JWT_SECRET, SWIPERANK_JWT_PUBLIC_KEY (a PEM file), SWIPERANK_RATE_LIMIT, \
        SWIPERANK_CACHE_SESSIONS, SWIPERANK_LOG_LEVEL.
        """)

    @OptionGroup var catalogOptions: CatalogOptions

    @Option(help: "A population prior written by `swiperank fit-prior` for this catalog (env SWIPERANK_POPULATION_PRIOR): new students start from what it taught. Students stored under another prior (or none) are migrated on their first request and by a background sweep: their swipes are learned again under this one.")
    var populationPrior: String?

    @Option(help: "A collaborative model written by `swiperank fit-factors` or any trainer that writes its documented JSON (env SWIPERANK_FACTORS): every swipe also places the student among the population's item factors, and decks rank by γ × affinity on top. Checked against the catalog at start (another catalog's file is refused). Students stored under another model are migrated: their swipes are learned again under this one.")
    var factors: String?

    @Option(help: "Address to bind (env SWIPERANK_HOST; default 127.0.0.1).")
    var host: String?

    @Option(help: "Port (env SWIPERANK_PORT; default 8080; 0 picks a free one, printed at start).")
    var port: Int?

    @Option(help: "sqlite (the --database file, default) or a postgres://user:password@host:5432/database URL for several instances (env SWIPERANK_STORE).")
    var store: String?

    @Option(help: "The SQLite file (env SWIPERANK_DATABASE; default swiperank.sqlite).")
    var database: String?

    @Option(help: "normal (survives a killed process) or full (also survives power loss; an fsync per write) (env SWIPERANK_DURABILITY).")
    var durability: String?

    @Option(help: "A PEM public key file (ES256 or RS256) to verify tokens with instead of the HS256 secret (env SWIPERANK_JWT_PUBLIC_KEY).")
    var jwtPublicKey: String?

    @Option(help: "A JWKS (RFC 7517, keys named by kid) to verify tokens with: a file, or the identity provider's https:// URL; re-read every minute, so a key rotation needs no restart (env SWIPERANK_JWKS).")
    var jwks: String?

    @Option(help: "Refuse tokens whose aud claim does not include this audience (env SWIPERANK_JWT_AUDIENCE).")
    var jwtAudience: String?

    @Option(help: "Refuse tokens whose iss claim is not this issuer (env SWIPERANK_JWT_ISSUER).")
    var jwtIssuer: String?

    @Option(help: "on: POST /auth/guest signs short-lived tokens for fresh guest ids (needs the HS256 secret; limited per client address); off: 404. Default on with the development secret, else off (env SWIPERANK_GUEST_TOKENS).")
    var guestTokens: String?

    @Option(help: "Guest sign-ups per client address per hour (env SWIPERANK_GUEST_SIGNUPS_PER_HOUR; default 30).")
    var guestSignupsPerHour: Int?

    @Option(help: "on: count guest sign-ups by the last X-Forwarded-For address, which the reverse proxy in front of the service appends (only behind such a proxy: a client can write anything there); off: by the connection's address (env SWIPERANK_TRUST_FORWARDED_FOR; default off).")
    var trustForwardedFor: String?

    @Option(help: "Serve the web app from this folder instead of the copy compiled in (developing the app: edit and reload) (env SWIPERANK_APP_DIR).")
    var appDir: String?

    @Option(help: "Announce group matches to the app's backend: a signed POST (X-SwipeRank-Signature, HMAC-SHA256 with SWIPERANK_WEBHOOK_SECRET, ≥ 32 bytes) per match, from an outbox stored with the match, retried with backoff; the log at GET /webhooks/deliveries (operator key) (env SWIPERANK_WEBHOOK_URL).")
    var webhookURL: String?

    @Option(help: "Requests per student per hour (env SWIPERANK_RATE_LIMIT; default 3600); a sync batch counts as one request per 10 swipes.")
    var rateLimit: Int?

    @Option(help: "Live sessions cached in memory (env SWIPERANK_CACHE_SESSIONS; default 2000).")
    var cacheSessions: Int?

    @Option(help: "on: a deck asked again before the student plays a card (a pull-to-refresh, a retry, the home screen) is answered with the bytes of the last identical read instead of re-scoring the catalog — the same answer, kept per cached session up to 16 KiB (env SWIPERANK_DECK_MEMO; default on).")
    var deckMemo: String?

    @Option(help: "MiB of resolved students (each profile's terms and distances over every item, ~27 KiB on the 2,294 schools; from 50,000 items only the items near home, ~60 KiB on a million) kept per catalog for the students swiping now; an evicted one is recomputed on its next request (env SWIPERANK_STUDENT_CACHE_MIB; default 256).")
    var studentCacheMib: Int?

    @Option(help: "The fewest events of a student between two stored snapshots (env SWIPERANK_SNAPSHOT_INTERVAL; default 32).")
    var snapshotInterval: Int?

    @Option(help: "Long histories snapshot after this fraction of their events, when more than the interval (env SWIPERANK_SNAPSHOT_SPACING; default 0.125; 0 = every interval).")
    var snapshotSpacing: Double?

    @Option(help: "The most members of a group session (env SWIPERANK_GROUP_MAX_MEMBERS; default 12; 2…100).")
    var groupMaxMembers: Int?

    @Option(help: "Group joins per student per minute (env SWIPERANK_GROUP_JOINS_PER_MINUTE; default 10).")
    var groupJoinsPerMinute: Int?

    @Option(help: "Group deck order: average, least_misery or average_without_misery (env SWIPERANK_GROUP_STRATEGY; default average_without_misery).")
    var groupStrategy: String?

    @Option(help: "Delete app events (POST /events) older than this many days, checked hourly; 0 keeps them (env SWIPERANK_EVENT_RETENTION_DAYS; default 0).")
    var eventRetentionDays: Int?

    @Option(help: "trace, debug, info, notice, warning, error (env SWIPERANK_LOG_LEVEL; default info).")
    var logLevel: String?

    @Option(help: "Origins browser apps may call from, comma-separated (https://app.example.com), or * for any (env SWIPERANK_CORS_ORIGINS; default none: same-origin only).")
    var corsOrigins: String?

    @Option(help: "A JSON file naming more catalogs to serve, each under /catalogs/<name>/ (env SWIPERANK_CATALOGS): {\"restaurants\": {\"schema\": \"…\", \"catalog\": \"…\", \"region_attribute\": \"…\"}, \"colleges\": {\"catalog\": \"…\", \"majors\": \"…\"}}; optional population_prior, factors, term_basis, catalog_cache (with a schema; see --catalog-cache). Each student has one learned state per catalog.")
    var catalogs: String?

    @Option(help: "With --schema: a binary catalog cache file (env SWIPERANK_CATALOG_CACHE). Read at start when it was built from this CSV and schema (no CSV parsing: a million items start in about a second); else the catalog is built from the CSV and the file written for the next start. A file that is not a cache, is truncated or fails its checksum stops the start. `swiperank catalog build` writes one ahead.")
    var catalogCache: String?

    @Option(help: "An A/B test over the default catalog's students (env SWIPERANK_EXPERIMENT): a JSON file {\"salt\": …, \"arms\": [{\"name\": \"control\"}, {\"name\": \"collaborative\", \"share\": 1, \"factors\": \"f.json\"}, …]}; an arm may set factors or population_prior (a file, or null for none) and configuration (EngineConfiguration fields). A student's arm is a hash of the salt and their id: the same on every instance and restart. Every logged deck names its arm; `swiperank arms` reports each arm's online metrics.")
    var experiment: String?

    @Option(help: "Refit the collaborative model from the service's own log this often, e.g. 30m, 6h, 1d (env SWIPERANK_REFIT_EVERY; default off). Swipes and saves are the answers, cards served and never answered weak negatives; the settings are the loaded --factors file's (else fit-factors' defaults). One instance fits at a time (a PostgreSQL advisory lock; a file lock beside a SQLite store); the model is stored in the database and every instance installs the newest, a restart included. A fit that fails, or a model that does not apply to the catalog, leaves the current one serving.")
    var refitEvery: String?

    @Option(help: "With --refit-every: the fewest logged swipes worth a fit (env SWIPERANK_REFIT_MIN_SWIPES; default 100).")
    var refitMinSwipes: Int?

    @Option(help: "With --refit-every: on to fit the population prior too, from the same log and the students' stored profiles (env SWIPERANK_REFIT_PRIOR; default off). Stored and installed like the model: new students start from it, stored ones are migrated to it (their swipes learned again) on their next request and by the migration sweep. A fit that fails leaves both models serving.")
    var refitPrior: String?

    @Option(help: "With --refit-prior on: on to let each refit's log choose whether the app's events weigh the prior's answers — the plain fit against the one weighed by --refit-reaction-boost and --refit-dwell-boost (reactions × 2 and dwell 0.5 when both are 0), kept only if it ranks the last 30% of each student's swipes better, as fit-prior --choose-signals (env SWIPERANK_REFIT_CHOOSE_SIGNALS; default off).")
    var refitChooseSignals: String?

    @Option(help: "With --refit-every: α°, the confidence of a card served and never answered (0: as if never served; env SWIPERANK_REFIT_SHOWN_CONFIDENCE; default 1).")
    var refitShownConfidence: Double?

    @Option(help: "With --refit-every: how much more an answer the app reacted to counts (a swipe_reaction event on the card: its confidence × (1 + this); env SWIPERANK_REFIT_REACTION_BOOST; default 0, off — docs/evaluation.md has what it does on simulated logs).")
    var refitReactionBoost: Double?

    @Option(help: "With --refit-every: how much the app's focus dwell time on a card moves its answer's confidence (× exp(±this · z), z its log-ratio to the log's median dwell, clamped to ±2; env SWIPERANK_REFIT_DWELL_BOOST; default 0, off).")
    var refitDwellBoost: Double?

    @Option(help: "on: at start, walk every stored student and migrate those stored under another catalog or model, one at a time in the background; off: each is migrated on its first request (env SWIPERANK_MIGRATION_SWEEP; default on).")
    var migrationSweep: String?

    @Option(help: "nio: request handlers run on the event loop thread that read the request (NIO installed as Swift concurrency's global executor); pool: on Swift's cooperative pool, handed over from the event loops and back; auto: nio over SQLite, pool over PostgreSQL, where each measured faster (env SWIPERANK_EXECUTOR; default auto).")
    var executor: ServerExecutor?

    func run() async throws {
        let env = ProcessInfo.processInfo.environment
        let executor = try ServerExecutor.chosen(option: executor, environment: env).resolved(store: store ?? env["SWIPERANK_STORE"])
        var config = ServerConfiguration()
        config.host = host ?? env["SWIPERANK_HOST"] ?? config.host
        config.port = try port ?? Self.int(env["SWIPERANK_PORT"], "SWIPERANK_PORT") ?? config.port
        guard (0...65_535).contains(config.port) else { throw ValidationError("--port must be in 0…65535") }
        config.rateLimitPerHour = try rateLimit ?? Self.int(env["SWIPERANK_RATE_LIMIT"], "SWIPERANK_RATE_LIMIT") ?? config.rateLimitPerHour
        guard config.rateLimitPerHour >= 1 else { throw ValidationError("--rate-limit must be at least 1") }
        config.service.cacheCapacity = try cacheSessions ?? Self.int(env["SWIPERANK_CACHE_SESSIONS"], "SWIPERANK_CACHE_SESSIONS")
            ?? config.service.cacheCapacity
        guard config.service.cacheCapacity >= 1 else { throw ValidationError("--cache-sessions must be at least 1") }
        let memo = deckMemo ?? env["SWIPERANK_DECK_MEMO"] ?? "on"
        guard ["on", "off"].contains(memo) else { throw ValidationError("--deck-memo must be on or off, got \(memo.prefix(16))") }
        config.service.memoizeDeckRereads = memo == "on"
        config.service.snapshotInterval = try snapshotInterval ?? Self.int(env["SWIPERANK_SNAPSHOT_INTERVAL"], "SWIPERANK_SNAPSHOT_INTERVAL")
            ?? config.service.snapshotInterval
        guard config.service.snapshotInterval >= 1 else { throw ValidationError("--snapshot-interval must be at least 1") }
        if let raw = snapshotSpacing.map({ "\($0)" }) ?? env["SWIPERANK_SNAPSHOT_SPACING"] {
            guard let value = Double(raw), value.isFinite, (0...1).contains(value) else {
                throw ValidationError("--snapshot-spacing must be a number in 0…1, got \(raw)")
            }
            config.service.snapshotSpacing = value
        }
        config.groups.maxMembers = try groupMaxMembers ?? Self.int(env["SWIPERANK_GROUP_MAX_MEMBERS"], "SWIPERANK_GROUP_MAX_MEMBERS")
            ?? config.groups.maxMembers
        guard (2...100).contains(config.groups.maxMembers) else { throw ValidationError("--group-max-members must be in 2…100") }
        config.groups.joinsPerMinute = try groupJoinsPerMinute
            ?? Self.int(env["SWIPERANK_GROUP_JOINS_PER_MINUTE"], "SWIPERANK_GROUP_JOINS_PER_MINUTE") ?? config.groups.joinsPerMinute
        guard config.groups.joinsPerMinute >= 1 else { throw ValidationError("--group-joins-per-minute must be at least 1") }
        if let raw = groupStrategy ?? env["SWIPERANK_GROUP_STRATEGY"] {
            guard let strategy = GroupStrategy(rawValue: raw) else {
                throw ValidationError("--group-strategy must be one of \(GroupStrategy.allCases.map(\.rawValue).joined(separator: ", ")), got \(raw)")
            }
            config.groups.aggregation.strategy = strategy
        }
        config.service.eventRetentionDays = try eventRetentionDays
            ?? Self.int(env["SWIPERANK_EVENT_RETENTION_DAYS"], "SWIPERANK_EVENT_RETENTION_DAYS") ?? 0
        guard (0...36_500).contains(config.service.eventRetentionDays) else {
            throw ValidationError("--event-retention-days must be in 0…36500")
        }
        if let path = jwtPublicKey ?? env["SWIPERANK_JWT_PUBLIC_KEY"] {
            let pem = try String(decoding: readInput(path, what: "JWT public key"), as: UTF8.self)
            config.auth = AuthConfiguration(hmacSecret: env["SWIPERANK_JWT_SECRET"], publicKeyPEM: pem)
        } else if let secret = env["SWIPERANK_JWT_SECRET"] {
            config.auth = AuthConfiguration(hmacSecret: secret)
        }
        if let text = jwks ?? env["SWIPERANK_JWKS"] {
            let source = JWKSSource(text)
            config.jwks = source
            do {
                config.auth.jwksJSON = try await source.read()
            } catch let error as AuthSetupError {
                throw CLIError(error.description)
            }
            // A key set replaces the development secret; an explicit secret stays beside it.
            if env["SWIPERANK_JWT_SECRET"] == nil && config.auth.hmacSecret == AuthConfiguration.developmentSecret {
                config.auth.hmacSecret = nil
            }
        }
        config.auth.audience = jwtAudience ?? env["SWIPERANK_JWT_AUDIENCE"]
        config.auth.issuer = jwtIssuer ?? env["SWIPERANK_JWT_ISSUER"]
        let guestName = guestTokens ?? env["SWIPERANK_GUEST_TOKENS"]
            ?? (config.auth.hmacSecret == AuthConfiguration.developmentSecret ? "on" : "off")
        guard ["on", "off"].contains(guestName) else { throw ValidationError("--guest-tokens must be on or off, got \(guestName)") }
        config.auth.guestTokens = guestName == "on"
        if config.auth.guestTokens && config.auth.hmacSecret == nil {
            throw ValidationError("--guest-tokens on needs SWIPERANK_JWT_SECRET: guest tokens are signed with it")
        }
        if let url = webhookURL ?? env["SWIPERANK_WEBHOOK_URL"], !url.isEmpty {
            guard let parsed = URL(string: url), ["http", "https"].contains(parsed.scheme ?? ""), parsed.host != nil else {
                throw ValidationError("--webhook-url must be an http(s):// URL, got \(url.prefix(120))")
            }
            guard let secret = env["SWIPERANK_WEBHOOK_SECRET"], secret.utf8.count >= 32 else {
                throw ValidationError("--webhook-url needs SWIPERANK_WEBHOOK_SECRET (at least 32 bytes): receivers check the signature with it")
            }
            config.webhook = WebhookConfiguration(url: url, secret: secret)
        }
        config.auth.guestsPerHour = try guestSignupsPerHour ?? Self.int(env["SWIPERANK_GUEST_SIGNUPS_PER_HOUR"], "SWIPERANK_GUEST_SIGNUPS_PER_HOUR")
            ?? config.auth.guestsPerHour
        guard config.auth.guestsPerHour >= 1 else { throw ValidationError("--guest-signups-per-hour must be at least 1") }
        let forwarded = trustForwardedFor ?? env["SWIPERANK_TRUST_FORWARDED_FOR"] ?? "off"
        guard ["on", "off"].contains(forwarded) else { throw ValidationError("--trust-forwarded-for must be on or off, got \(forwarded)") }
        config.trustForwardedFor = forwarded == "on"
        if let dir = appDir ?? env["SWIPERANK_APP_DIR"] {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: dir, isDirectory: &isDirectory), isDirectory.boolValue else {
                throw ValidationError("--app-dir: \(dir) is not a folder")
            }
            config.appDirectory = dir
        }
        let durabilityName = durability ?? env["SWIPERANK_DURABILITY"] ?? "normal"
        guard let durability = SQLiteStore.Durability(rawValue: durabilityName) else {
            throw ValidationError("--durability must be normal or full, got \(durabilityName)")
        }
        if let key = env["SWIPERANK_OPERATOR_KEY"], !key.isEmpty {
            guard key.utf8.count >= 32 else { throw ValidationError("SWIPERANK_OPERATOR_KEY must be at least 32 bytes") }
            config.operatorKey = key
        }
        let sweepName = migrationSweep ?? env["SWIPERANK_MIGRATION_SWEEP"] ?? "on"
        guard ["on", "off"].contains(sweepName) else { throw ValidationError("--migration-sweep must be on or off, got \(sweepName)") }
        config.service.migrationSweep = sweepName == "on"
        if let every = refitEvery ?? env["SWIPERANK_REFIT_EVERY"] {
            let reactionBoost = try refitReactionBoost ?? Self.double(env["SWIPERANK_REFIT_REACTION_BOOST"], "SWIPERANK_REFIT_REACTION_BOOST") ?? 0
            let dwellBoost = try refitDwellBoost ?? Self.double(env["SWIPERANK_REFIT_DWELL_BOOST"], "SWIPERANK_REFIT_DWELL_BOOST") ?? 0
            guard reactionBoost.isFinite && reactionBoost >= 0 && dwellBoost.isFinite && dwellBoost >= 0 else {
                throw ValidationError("--refit-reaction-boost and --refit-dwell-boost are finite numbers ≥ 0")
            }
            var refit = RefitOptions(interval: try Self.duration(every, "--refit-every"),
                                     fit: Self.refitFit(shownConfidence: try refitShownConfidence
                                                            ?? Self.double(env["SWIPERANK_REFIT_SHOWN_CONFIDENCE"], "SWIPERANK_REFIT_SHOWN_CONFIDENCE") ?? 1,
                                                        reactionBoost: reactionBoost, dwellBoost: dwellBoost))
            refit.readsSignals = reactionBoost > 0 || dwellBoost > 0
            let priorName = refitPrior ?? env["SWIPERANK_REFIT_PRIOR"] ?? "off"
            guard ["on", "off"].contains(priorName) else { throw ValidationError("--refit-prior must be on or off, got \(priorName)") }
            let chooseName = refitChooseSignals ?? env["SWIPERANK_REFIT_CHOOSE_SIGNALS"] ?? "off"
            guard ["on", "off"].contains(chooseName) else { throw ValidationError("--refit-choose-signals must be on or off, got \(chooseName.prefix(16))") }
            guard chooseName == "off" || priorName == "on" else {
                throw ValidationError("--refit-choose-signals on needs --refit-prior on (it chooses how the prior's answers are weighed)")
            }
            if priorName == "on" {
                refit.prior = LogPriorFitter(reactionBoost: reactionBoost, dwellBoost: dwellBoost, chooseSignals: chooseName == "on")
                // The choice reads the app's events even when no boost is set.
                if chooseName == "on" { refit.readsSignals = true }
            }
            refit.minimumSwipes = try refitMinSwipes ?? Self.int(env["SWIPERANK_REFIT_MIN_SWIPES"], "SWIPERANK_REFIT_MIN_SWIPES") ?? refit.minimumSwipes
            guard refit.minimumSwipes >= 1 else { throw ValidationError("--refit-min-swipes must be at least 1") }
            config.refit = refit
        }
        if config.refit == nil, let prior = refitPrior ?? env["SWIPERANK_REFIT_PRIOR"], prior != "off" {
            throw ValidationError("--refit-prior \(prior.prefix(16)) needs --refit-every (the prior is refitted on the model's schedule)")
        }
        if config.refit == nil, let choose = refitChooseSignals ?? env["SWIPERANK_REFIT_CHOOSE_SIGNALS"], choose != "off" {
            throw ValidationError("--refit-choose-signals \(choose.prefix(16)) needs --refit-every and --refit-prior on")
        }
        let levelName = logLevel ?? env["SWIPERANK_LOG_LEVEL"] ?? "info"
        guard let level = Logger.Level(rawValue: levelName) else { throw ValidationError("unknown log level \(levelName)") }
        var logger = Logger(label: "swiperank")
        logger.logLevel = level

        if config.auth.hmacSecret == AuthConfiguration.developmentSecret {
            logger.warning("using the development JWT secret (loopback only); set SWIPERANK_JWT_SECRET for anything else")
        }
        if let raw = corsOrigins ?? env["SWIPERANK_CORS_ORIGINS"] {
            config.corsOrigins = raw.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
            if let bad = config.corsOrigins.first(where: { $0 != "*" && !($0.hasPrefix("http://") || $0.hasPrefix("https://")) }) {
                throw ValidationError("--cors-origins: \"\(bad.prefix(80))\" is not * or an http(s):// origin")
            }
        }
        // Every catalog is loaded before the store is opened: a bad catalog path must not leave a
        // new, empty database file behind.
        let catalogs = try loadCatalogs(logger: logger)
        let experimentSpec = try experimentPath.map(ExperimentSpec.read)
        let storeName = store ?? env["SWIPERANK_STORE"] ?? "sqlite"
        let path = database ?? env["SWIPERANK_DATABASE"] ?? "swiperank.sqlite"
        do {
            try await withStore(storeName, sqlitePath: path, durability: durability, logger: logger) { store, shared in
                var config = config
                // Several instances share the database: a cached session is checked against the
                // stored version before use.
                config.service.verifyCachedVersion = shared
                logger.info("starting", metadata: ["store": "\(shared ? "postgres" : path)", "durability": "\(durability.rawValue)",
                                                   "address": "\(config.host):\(config.port)", "executor": "\(executor.running)"])
                try await serve(catalogs, store: store, config: config, logger: logger, experiment: experimentSpec)
            }
        } catch let error as AuthSetupError {
            throw CLIError(error.description)
        } catch let error as CatalogStartError {
            throw CLIError(error.description)
        }
    }

    /// The default catalog (the command line's) and the others (`--catalogs`), built.
    func loadCatalogs(logger: Logger) throws -> (CatalogSpec.Built, [ServedCatalog]) {
        let env = ProcessInfo.processInfo.environment
        do {
            var spec = CatalogSpec(schema: catalogOptions.schema, catalog: catalogOptions.catalog, majors: catalogOptions.majors,
                                   regionAttribute: catalogOptions.regionAttribute, termBasis: try catalogOptions.resolvedTermBasis(),
                                   populationPrior: populationPrior ?? env["SWIPERANK_POPULATION_PRIOR"],
                                   factors: factors ?? env["SWIPERANK_FACTORS"])
            spec.catalogCache = catalogCache ?? env["SWIPERANK_CATALOG_CACHE"]
            if spec.catalogCache != nil && spec.schema == nil {
                throw ValidationError("--catalog-cache needs --schema (the school catalog starts from its CSV)")
            }
            let mib = try studentCacheMib ?? Self.int(env["SWIPERANK_STUDENT_CACHE_MIB"], "SWIPERANK_STUDENT_CACHE_MIB") ?? 256
            guard (1...1_048_576).contains(mib) else { throw CLIError("--student-cache-mib must be in 1…1048576, got \(mib)") }
            spec.studentCacheBytes = mib << 20
            let others = try (catalogs ?? env["SWIPERANK_CATALOGS"]).map(CatalogSpec.load) ?? [:]
            let served = try others.sorted { $0.key < $1.key }.map { name, spec in
                var spec = spec
                spec.studentCacheBytes = mib << 20
                return try spec.served(name: name, logger: logger)
            }
            return (try spec.build(logger: logger), served)
        } catch let error as DataError {
            throw CLIError(error.description)
        } catch let error as ServedCatalog.NameError {
            throw CLIError(error.description)
        }
    }

    /// Runs the service over the built catalogs until shut down.
    func serve(_ catalogs: (CatalogSpec.Built, [ServedCatalog]), store: any ServiceStore, config: ServerConfiguration, logger: Logger,
               experiment: ExperimentSpec?) async throws {
        do {
            switch catalogs.0 {
            case let .schools(engine, source):
                try await buildApplication(engine: engine, store: store, configuration: config, catalog: source, catalogs: catalogs.1,
                                           experiment: try experiment?.experiment(for: SchoolMatcher.self), logger: logger,
                                           onRunning: Self.announce).runService()
            case let .items(engine, source):
                try await buildApplication(engine: engine, store: store, configuration: config, catalog: source, catalogs: catalogs.1,
                                           experiment: try experiment?.experiment(for: ItemMatcher.self), logger: logger,
                                           onRunning: Self.announce).runService()
            }
        } catch let error as ExperimentError {
            throw CLIError("\(experimentPath ?? "experiment"): \(error)")
        }
    }

    /// The experiment file named by the option or the environment.
    var experimentPath: String? { experiment ?? ProcessInfo.processInfo.environment["SWIPERANK_EXPERIMENT"] }

    /// One line on standard output once listening (scripts and tests wait for it).
    @Sendable static func announce(port: Int) async {
        // Unbuffered: stdout may be a pipe, and the reader waits for this line.
        FileHandle.standardOutput.write(Data("swiperank: listening on port \(port)\n".utf8))
    }

    static func int(_ raw: String?, _ name: String) throws -> Int? {
        guard let raw else { return nil }
        guard let value = Int(raw) else { throw ValidationError("\(name) must be an integer, got \(raw)") }
        return value
    }

    static func double(_ raw: String?, _ name: String) throws -> Double? {
        guard let raw else { return nil }
        guard let value = Double(raw), value.isFinite, value >= 0 else { throw ValidationError("\(name) must be a number ≥ 0, got \(raw)") }
        return value
    }

    /// `90s`, `30m`, `6h`, `1d` (at least a second, at most a year).
    static func duration(_ raw: String, _ name: String) throws -> Duration {
        let units: [Character: Int64] = ["s": 1, "m": 60, "h": 3_600, "d": 86_400]
        guard let unit = raw.last.flatMap({ units[$0] }), let count = Int64(raw.dropLast()), count >= 1, count * unit <= 366 * 86_400 else {
            throw ValidationError("\(name) is a count and a unit (s, m, h, d) between 1s and 366d, e.g. 6h; got \(raw.prefix(40))")
        }
        return .seconds(count * unit)
    }

    /// The scheduled refit: `FactorFit` with the serving model's settings (fit-factors'
    /// defaults and γ = 16 × scale without one), cards served and never answered weighing
    /// `shownConfidence`.
    static func refitFit(shownConfidence: Double, reactionBoost: Double = 0, dwellBoost: Double = 0)
        -> @Sendable (LoggedSwipes, RefitContext) throws -> FactorModelFile {
        { log, context in
            var options = FactorFit.Options()
            if let current = context.current {
                options.dimension = current.dimension
                options.regularization = current.regularization
                options.confidence = current.confidence
                options.dislikeConfidence = current.dislikeConfidence
            }
            options.shownConfidence = shownConfidence
            (options.reactionBoost, options.dwellBoost) = (reactionBoost, dwellBoost)
            return try FactorFit.fit(catalog: context.catalog, interactions: log.interactions, shown: log.shownPairs, signals: log.signals,
                                     options: options, weight: context.current?.weight ?? 16 * context.scale)
        }
    }
}

/// `serve --refit-prior on`: the population prior fitted from the service's own log as
/// `swiperank fit-prior` fits one from a CSV (exposure weight 0: the engine chose what each
/// student saw, so how often an item was shown says nothing of its appeal).
/// The refit's reaction and dwell boosts weigh the prior's answers as they weigh the model's.
struct LogPriorFitter: PopulationPriorFitter {
    /// The item effects' shrinkage, in swipes (`fit-prior --item-precision`).
    var itemPrecision = 5.0
    /// `--refit-reaction-boost`.
    var reactionBoost = 0.0
    /// `--refit-dwell-boost`.
    var dwellBoost = 0.0
    /// `--refit-choose-signals on`: the log chooses between the plain fit and the weighed one.
    var chooseSignals = false

    func fit<M: ServableMatcher>(_ input: PriorFitInput<M>) throws -> PopulationPrior {
        var answers: [String: [String: Bool]] = [:]
        for j in input.log.judgements { answers[j.studentID, default: [:]][j.itemID] = j.liked }
        return try PopulationFit.fitWeighingSignals(
            engine: input.engine, students: input.students.map { DatasetStudent(id: $0.id, profile: $0.profile) },
            interactions: input.log.interactions, signals: input.log.signals,
            boosts: PopulationFit.SignalBoosts(reaction: reactionBoost, dwell: dwellBoost), choose: chooseSignals,
            itemPrecision: itemPrecision, exposureWeight: 0) { chosen in
            AnswerStrengths(signals: input.log.signals, answers: answers, reactionBoost: chosen.reaction, dwellBoost: chosen.dwell)
        }.prior
    }
}

/// `swiperank token`: mints a development bearer token for a student (HS256).
struct Token: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print a bearer token (JWT HS256) for a student, signed with SWIPERANK_JWT_SECRET or the development secret.")

    @Option(help: "The student id (the token's subject).")
    var student: String

    @Option(help: "Lifetime in seconds (default 86400).")
    var ttl: Int = 86_400

    func validate() throws {
        guard !student.isEmpty, student.utf8.count <= 256 else { throw ValidationError("--student must be 1…256 bytes") }
        guard ttl >= 1 && ttl <= 31_536_000 else { throw ValidationError("--ttl must be in 1…31536000 seconds") }
    }

    func run() async throws {
        let secret = ProcessInfo.processInfo.environment["SWIPERANK_JWT_SECRET"] ?? AuthConfiguration.developmentSecret
        do {
            print(try await AuthConfiguration(hmacSecret: secret).token(studentID: student, lifetime: TimeInterval(ttl)))
        } catch let error as AuthSetupError {
            throw CLIError(error.description)
        }
    }
}

/// One catalog `serve` loads: the default one from the command line, others from `--catalogs`.
struct CatalogSpec: Decodable, Sendable {
    var schema: String?
    var catalog: String
    var majors: String?
    var regionAttribute: String?
    var termBasis: SchoolTermBasis?
    var populationPrior: String?
    var factors: String?
    /// A binary catalog cache for an item catalog (`CatalogCache`).
    var catalogCache: String?
    /// The engine's student cache budget (`--student-cache-mib`, one budget per catalog; not
    /// part of a `--catalogs` file).
    var studentCacheBytes = SwipeEngine<ItemMatcher>.defaultStudentCacheBytes

    enum CodingKeys: String, CodingKey, CaseIterable {
        case schema, catalog, majors, regionAttribute = "region_attribute", termBasis = "term_basis"
        case populationPrior = "population_prior", factors, catalogCache = "catalog_cache"
    }

    init(schema: String?, catalog: String, majors: String?, regionAttribute: String?, termBasis: SchoolTermBasis?,
         populationPrior: String?, factors: String?) {
        (self.schema, self.catalog, self.majors, self.regionAttribute) = (schema, catalog, majors, regionAttribute)
        (self.termBasis, self.populationPrior, self.factors) = (termBasis, populationPrior, factors)
    }

    init(from decoder: any Decoder) throws {
        try decoder.rejectUnknownKeys(CodingKeys.self)
        let c = try decoder.container(keyedBy: CodingKeys.self)
        schema = try c.decodeIfPresent(String.self, forKey: .schema)
        catalog = try c.decode(String.self, forKey: .catalog)
        majors = try c.decodeIfPresent(String.self, forKey: .majors)
        regionAttribute = try c.decodeIfPresent(String.self, forKey: .regionAttribute)
        termBasis = try c.decodeIfPresent(SchoolTermBasis.self, forKey: .termBasis)
        populationPrior = try c.decodeIfPresent(String.self, forKey: .populationPrior)
        factors = try c.decodeIfPresent(String.self, forKey: .factors)
        catalogCache = try c.decodeIfPresent(String.self, forKey: .catalogCache)
        if catalogCache != nil && schema == nil {
            throw DecodingError.dataCorruptedError(forKey: .catalogCache, in: c, debugDescription: "catalog_cache needs a schema (the school catalog starts from its CSV)")
        }
    }

    /// The `--catalogs` file: name → catalog (strict JSON: errors name line:column or the key).
    static func load(_ path: String) throws -> [String: CatalogSpec] {
        let specs = try JSONInput.decode([String: CatalogSpec].self, from: InputFile.read(path, what: "catalogs file"), source: path)
        if let bad = specs.keys.sorted().first(where: { !ServedCatalog.isValidName($0) }) {
            throw CLIError("\(path): catalog name \"\(bad.prefix(40))\": 1–32 of a-z, 0-9, _ and -")
        }
        return specs
    }

    /// An engine and its editable source.
    enum Built {
        case schools(SwipeEngine<SchoolMatcher>, CatalogSource<SchoolMatcher>)
        case items(SwipeEngine<ItemMatcher>, CatalogSource<ItemMatcher>)
    }

    /// Loads the catalog and builds its engine (with the prior and factors), and the builder the
    /// item API rebuilds it with: the same for the file at start and for every later version (a
    /// prior is tied to the catalog it was fitted on, so an edit of features is refused while
    /// one is loaded; factors follow items by id).
    func build(logger: Logger = Logger(label: "swiperank")) throws -> Built {
        let prior = try populationPrior.map(readPopulationPrior)
        let factorFile = try factors.map(readFactorFile)
        let (priorPath, factorsPath) = (populationPrior, factors)
        let cacheBytes = studentCacheBytes
        @Sendable func finish<M: Matcher>(_ engine: SwipeEngine<M>) throws(DataError) -> SwipeEngine<M> {
            // Errors name the file: at start, and when an item edit no longer fits it.
            func named(_ path: String?, _ error: DataError) -> DataError {
                DataError(error.kind, source: path ?? error.source, field: error.field, detail: "\(path ?? error.source): \(error.detail)")
            }
            var engine = engine
            if let prior { do { engine = try engine.withPopulation(prior) } catch { throw named(priorPath, error) } }
            if let factorFile { do { engine = try engine.withFactors(factorFile) } catch { throw named(factorsPath, error) } }
            return engine
        }
        let csvPath = ShippedData.resolve(catalog)
        if let schema {
            let itemSchema = try ItemSchema.load(contentsOfFile: ShippedData.resolve(schema))
            let (region, path) = (regionAttribute, catalog)
            let engine: @Sendable (Catalog) throws -> SwipeEngine<ItemMatcher> = { catalog in
                if let region, catalog.textAttribute(named: region) == nil {
                    throw DataError(.invalidValue, source: "region attribute", field: "region_attribute",
                                    detail: "region attribute \"\(region)\" is not a text attribute of \(path) (has: \(catalog.textAttributeNames.joined(separator: ", ")))")
                }
                return try finish(SwipeEngine(matcher: ItemMatcher(catalog: catalog, regionAttribute: region), studentCacheBytes: cacheBytes))
            }
            let make: @Sendable (CSVTable) throws -> SwipeEngine<ItemMatcher> = { table in
                try engine(try Catalog(table: table, schema: itemSchema))
            }
            guard let cachePath = catalogCache else {
                let table = try CSVTable(contentsOfFile: csvPath)
                return .items(try make(table), CatalogSource(base: table, idColumn: itemSchema.idColumn, makeEngine: make))
            }
            let started = ContinuousClock.now
            let (catalog, origin, key) = try CatalogCache.load(catalogFile: csvPath, schema: itemSchema, cachePath: cachePath)
            let elapsed = ContinuousClock.now - started
            switch origin {
            case .cache:
                logger.info("catalog loaded from its cache", metadata: ["cache": "\(cachePath)", "items": "\(catalog.count)", "duration": "\(elapsed)"])
            case let .rebuilt(reason):
                logger.notice("catalog built from its CSV, cache written", metadata: ["cache": "\(cachePath)", "reason": "\(reason)",
                                                                                   "items": "\(catalog.count)", "duration": "\(elapsed)"])
            }
            // The item API's base table is parsed on its first use, not at start, and only if the
            // file is still the one the catalog was built from.
            let source = CatalogSource(idColumn: itemSchema.idColumn, makeEngine: make) {
                let table = try CSVTable(contentsOfFile: csvPath)
                guard try CatalogCache.Key(catalogFile: csvPath, schema: itemSchema) == key else {
                    throw DataError(.invalidValue, source: csvPath,
                                    detail: "\(csvPath): the catalog file changed since the service started; restart the service to serve it, or import it with `swiperank catalog import`")
                }
                return table
            }
            return .items(try engine(catalog), source)
        }
        let table = try CSVTable(contentsOfFile: csvPath)
        let majorsTable = try CSVTable(contentsOfFile: ShippedData.resolve(majors ?? "datasets/school_majors.csv"))
        let basis = termBasis ?? .standard
        let make: @Sendable (CSVTable) throws -> SwipeEngine<SchoolMatcher> = { table in
            let programs = try SchoolCatalog.programs(majorsTable, ofSchoolsIn: table)
            return try finish(SwipeEngine(matcher: SchoolMatcher(schools: try SchoolCatalog(schools: table, majors: programs), termBasis: basis),
                                          studentCacheBytes: cacheBytes))
        }
        return .schools(try make(table), CatalogSource(base: table, idColumn: "unitid", makeEngine: make))
    }

    /// This catalog served under `/catalogs/<name>/`.
    func served(name: String, logger: Logger = Logger(label: "swiperank")) throws -> ServedCatalog {
        switch try build(logger: logger) {
        case let .schools(engine, source): return try ServedCatalog(name: name, engine: engine, source: source)
        case let .items(engine, source): return try ServedCatalog(name: name, engine: engine, source: source)
        }
    }
}

