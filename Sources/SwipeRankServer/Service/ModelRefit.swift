import Foundation
import Logging
import ServiceLifecycle
import SwipeRank
import SwipeRankStore
import Synchronization

/// `serve --refit-every`: the collaborative model refitted from the service's own log on a
/// schedule. One instance fits at a time (`ModelRegistry.withExclusiveJob`: a PostgreSQL
/// advisory lock, a file lock for SQLite); the model goes into the store, and every instance —
/// the fitter included — installs the newest stored one, so a fleet serves one model. A fit
/// that fails, or a model that does not apply to the catalog, leaves the current one serving.
public struct RefitOptions: Sendable {
    /// How often a model is fitted (from the newest stored model's time: instances that share
    /// a store do not each fit one).
    public var interval: Duration
    /// How often each instance looks for a newer stored model.
    public var pollInterval: Duration = .seconds(5)
    /// Fewer logged swipes than this: no fit (the model stays as it is).
    public var minimumSwipes = 100
    /// Whether the log read for a fit includes the app's dwell times and reactions
    /// (`LoggedSwipes.signals`): set when the fit weighs answers by them — otherwise every
    /// student's app events would be read for nothing.
    public var readsSignals = false
    /// When set, each refit also fits the population prior (the cold start's shift and an
    /// effect per item) from the same log and the students' stored profiles, stores it as kind
    /// `priorKind` and installs it: new students start from it, and stored students move over
    /// to it (their swipes learned again) on their next request or by the migration sweep.
    /// Nil (the default): the prior stays the one the service started with.
    public var prior: (any PopulationPriorFitter)?
    /// Fits a model from the log for the catalog in the context. Runs on a thread of its own,
    /// not the server's.
    public var fit: @Sendable (_ log: LoggedSwipes, _ context: RefitContext) throws -> FactorModelFile

    /// Creates the options.
    ///
    /// - Parameters:
    ///   - interval: Time between fits.
    ///   - fit: The fit (`swiperank serve` passes `FactorFit.fit`).
    public init(interval: Duration, fit: @escaping @Sendable (_ log: LoggedSwipes, _ context: RefitContext) throws -> FactorModelFile) {
        self.interval = interval
        self.fit = fit
    }

    /// The registry's kind for the collaborative model.
    public static let kind = "factors"
}

/// What a refit fits for.
public struct RefitContext: Sendable {
    /// The catalog the model must match (its ids and feature columns).
    public var catalog: Catalog
    /// The model serving now, if any: its settings are a natural start.
    public var current: FactorModelFile?
    /// The catalog's calibration scale (raw-score units of one standard match): γ is set in it.
    public var scale: Double
}

/// What the service logged, as a population fit reads it: every answered card, and the cards
/// served but never answered (the implicit negatives only the service's own log knows).
public struct LoggedSwipes: Sendable {
    /// One answer.
    public struct Judgement: Sendable, Hashable {
        /// The student.
        public var studentID: String
        /// The item.
        public var itemID: String
        /// A like (a swipe right or a save), or a dislike.
        public var liked: Bool
        /// When the app says it happened (Unix milliseconds).
        public var timestamp: Int64

        /// Creates an answer.
        ///
        /// - Parameters:
        ///   - studentID: The student.
        ///   - itemID: The item.
        ///   - liked: A like.
        ///   - timestamp: Unix milliseconds.
        public init(studentID: String, itemID: String, liked: Bool, timestamp: Int64) {
            (self.studentID, self.itemID, self.liked, self.timestamp) = (studentID, itemID, liked, timestamp)
        }
    }

    /// A card served and never answered.
    public struct Shown: Sendable, Hashable {
        /// The student.
        public var studentID: String
        /// The item.
        public var itemID: String

        /// Creates one.
        ///
        /// - Parameters:
        ///   - studentID: The student.
        ///   - itemID: The item.
        public init(studentID: String, itemID: String) {
            (self.studentID, self.itemID) = (studentID, itemID)
        }
    }

    /// Swipes and saves, in log order per student.
    public var judgements: [Judgement] = []
    /// Served cards without an answer (each once per student).
    public var shown: [Shown] = []
    /// What the app said about answered cards besides the swipe: its `focus` events (dwell
    /// times) and `swipe_reaction` events, read from the store's app events when it keeps
    /// them. Only cards the student answered are kept: a fit weighs answers by them.
    public var signals: [EngagementSignal] = []
    /// Students read.
    public var students = 0

    /// An empty log.
    public init() {}

    /// Reads every student of a store (the default catalog's, read through a whole store):
    /// swipes and saves as judgements (a save is a like),
    /// served cards left unanswered as `shown`, and — when the store is also an `AppEventLog`
    /// — the focus and reaction events about answered cards as `signals` (when asked for).
    /// Items outside `itemIDs` (retired since) are left out.
    ///
    /// - Parameters:
    ///   - store: The store (one catalog's view).
    ///   - itemIDs: The catalog's items now.
    ///   - signals: Whether to read the app events for `signals` (a pass over every answering
    ///     student's app events).
    /// - Throws: `StoreError` when the store fails. A logged event that does not decode is
    ///   skipped (the log was written by this service; nothing to fit from it).
    public static func read(from store: any StudentStore, itemIDs: Set<String>, signals: Bool = true) async throws(StoreError) -> LoggedSwipes {
        var log = LoggedSwipes()
        let decoder = JSONDecoder()
        var answeredBy: [String: Set<String>] = [:]
        try await forEachStudentLog(in: store, kinds: [.served, .swipe, .save]) { id, events in
            var served: [String] = []
            var answered = Set<String>()
            for event in events {
                switch event.kind {
                case .served:
                    if let deck = try? decoder.decode(ServedPayload.self, from: event.payload) { served += deck.cards.map(\.cardID) }
                case .swipe:
                    guard let swipe = try? decoder.decode(SwipeRequest.self, from: event.payload), itemIDs.contains(swipe.itemID) else { continue }
                    answered.insert(swipe.itemID)
                    log.judgements.append(Judgement(studentID: id, itemID: swipe.itemID, liked: swipe.action == .like,
                                                    timestamp: swipe.timestamp))
                default:
                    guard let save = try? decoder.decode(SavePayload.self, from: event.payload), itemIDs.contains(save.itemID) else { continue }
                    answered.insert(save.itemID)
                    log.judgements.append(Judgement(studentID: id, itemID: save.itemID, liked: true, timestamp: save.timestamp))
                }
            }
            var seen = Set<String>()
            for item in served where itemIDs.contains(item) && !answered.contains(item) && seen.insert(item).inserted {
                log.shown.append(Shown(studentID: id, itemID: item))
            }
            if !answered.isEmpty { answeredBy[id] = answered }
            log.students += 1
        }
        guard signals, let apps = store as? any AppEventLog else { return log }
        for id in answeredBy.keys.sorted() {
            let answered = answeredBy[id]!
            var cursor = 0
            while true {
                let page = try await apps.appEvents(of: id, after: cursor, limit: 1_000)
                guard let end = page.last else { break }
                cursor = end.seq
                for event in page { if let signal = Self.signal(event, studentID: id), answered.contains(signal.itemID) { log.signals.append(signal) } }
            }
        }
        return log
    }

    /// The signal an app event carries: a `focus` with `duration_ms` is a dwell time, a
    /// `swipe_reaction` a reaction; anything else (or a payload that does not parse: the
    /// service validated it when it was posted) none.
    static func signal(_ event: AppEvent, studentID: String) -> EngagementSignal? {
        guard event.type == "focus" || event.type == "swipe_reaction",
              let object = try? JSONSerialization.jsonObject(with: Data(event.payload.utf8)) as? [String: Any],
              let item = object["school_id"] as? String else { return nil }
        if event.type == "focus" {
            guard let ms = (object["duration_ms"] as? NSNumber)?.doubleValue, ms.isFinite, ms >= 0 else { return nil }
            return EngagementSignal(studentID: studentID, itemID: item, kind: .dwell(milliseconds: ms))
        }
        guard let reaction = object["reaction"] as? String else { return nil }
        return EngagementSignal(studentID: studentID, itemID: item, kind: .reaction(reaction))
    }
}

/// Calls `body` with every student of a store and their logged events of `kinds`, in order,
/// students by id (another catalog's students — `serve --catalogs` keys — skipped when read
/// through a whole store). The walk the refit and the experiment report share.
func forEachStudentLog(in store: any StudentStore, kinds: Set<EventKind>,
                       _ body: (String, [StoredEvent]) throws(StoreError) -> Void) async throws(StoreError) {
    var after: String?
    while true {
        let ids = try await store.studentIDs(after: after, limit: 500)
        guard let last = ids.last else { return }
        after = last
        for id in ids where !id.hasPrefix("\u{1}") {
            var events: [StoredEvent] = []
            var cursor = 0
            while true {
                let page = try await store.events(of: id, after: cursor, kinds: kinds, limit: 1_000)
                guard let end = page.last else { break }
                cursor = end.seq
                events += page
            }
            try body(id, events)
        }
    }
}

/// Builds each generation (catalog version × model version) and swaps it in, one install at a
/// time, so a catalog edit and a new model landing together cannot undo each other.
final class GenerationInstaller<M: ServableMatcher>: Sendable {
    struct Installed: Sendable {
        var version: Int
        var file: FactorModelFile
    }

    /// A stored population prior in service.
    struct InstalledPrior: Sendable {
        var version: Int
        var prior: PopulationPrior
    }

    /// The stored models in service (nil: the one the engine was started with).
    struct Models: Sendable {
        var factors: Installed?
        var prior: InstalledPrior?
    }

    let generations: ServiceGenerations<M>
    let shared: SharedParts
    let manager: ManagerSlot<M>
    let experiment: Experiment<M>?
    /// The stored models in service: one lock, so installs happen one at a time.
    private let models = Mutex(Models())

    init(generations: ServiceGenerations<M>, shared: SharedParts, manager: ManagerSlot<M>, experiment: Experiment<M>?) {
        self.experiment = experiment
        self.generations = generations
        self.shared = shared
        self.manager = manager
    }

    /// The stored model version in service (0: none).
    var modelVersion: Int { models.withLock { $0.factors?.version ?? 0 } }

    /// The stored population prior in service (0: none; the start-up one serves).
    var priorVersion: Int { models.withLock { $0.prior?.version ?? 0 } }

    /// A rebuilt catalog's engine, with the stored model in service on it.
    func installCatalog(_ engine: SwipeEngine<M>, sequence: Int) {
        models.withLock { models in
            var built = engine
            if let installed = models.prior {
                do { built = try built.withPopulation(installed.prior) } catch {
                    // A catalog edit the prior was not fitted on: the start-up prior stays.
                    shared.logger.error("the refitted population prior does not apply to the edited catalog; serving the start-up prior",
                                        metadata: ["version": "\(installed.version)", "error": "\(error)"])
                }
            }
            if let installed = models.factors {
                do { built = try built.withFactors(installed.file) } catch {
                    // Another catalog's columns: the model cannot follow; the catalog's own stays.
                    shared.logger.error("the refitted model does not apply to the edited catalog; serving the start-up model",
                                        metadata: ["version": "\(installed.version)", "error": "\(error)"])
                }
            }
            generations.swap(makeGeneration(engine: built, sequence: sequence, shared: shared, catalog: { self.manager.value },
                                            experiment: experiment))
        }
    }

    /// A stored model on the current catalog.
    ///
    /// - Throws: `DataError` when it does not apply (nothing changes).
    func installModel(_ file: FactorModelFile, version: Int) throws(DataError) {
        try models.withLock { (models: inout Models) throws(DataError) in
            let current = generations.current
            let engine = try current.students.engine.withFactors(file)
            models.factors = Installed(version: version, file: file)
            generations.swap(makeGeneration(engine: engine, sequence: current.catalogSequence, shared: shared,
                                            catalog: { self.manager.value }, experiment: experiment))
        }
    }
}

extension GenerationInstaller {
    /// A stored population prior on the current catalog (its factors kept).
    ///
    /// - Throws: `DataError` when it does not apply (nothing changes).
    func installPrior(_ prior: PopulationPrior, version: Int) throws(DataError) {
        try models.withLock { (models: inout Models) throws(DataError) in
            let current = generations.current
            let engine = try current.students.engine.withPopulation(prior)
            models.prior = InstalledPrior(version: version, prior: prior)
            generations.swap(makeGeneration(engine: engine, sequence: current.catalogSequence, shared: shared,
                                            catalog: { self.manager.value }, experiment: experiment))
        }
    }
}

/// What one refit attempt did.
enum RefitOutcome: Sendable, Equatable {
    /// Fitted, stored as this version and installed.
    case fitted(version: Int, swipes: Int)
    /// Another instance holds the job.
    case held
    /// A model younger than the interval is stored (another instance fitted it).
    case recent
    /// Too few swipes logged.
    case tooFewSwipes(Int)
    /// The fit, the store or the model failed; the current model keeps serving.
    case failed(String)
}

/// What `/health` says about the scheduled refit: the stored model in service and the last
/// attempt on this instance.
final class RefitLedger: Sendable {
    struct State: Sendable, Encodable {
        var modelVersion = 0
        /// The stored population prior in service (nil: none refitted).
        var priorVersion: Int?
        var lastAttempt: Attempt?
        enum CodingKeys: String, CodingKey { case modelVersion = "model_version", priorVersion = "prior_version", lastAttempt = "last_attempt" }
    }

    struct Attempt: Sendable, Encodable {
        var outcome: String
        var at: Int64
        var swipes: Int?
        var detail: String?
    }

    private let state = Mutex(State())

    var snapshot: State { state.withLock { $0 } }

    func installed(_ version: Int) { state.withLock { $0.modelVersion = version } }

    func installedPrior(_ version: Int) { state.withLock { $0.priorVersion = version } }

    func attempted(_ outcome: RefitOutcome, at: Int64) {
        let attempt: Attempt
        switch outcome {
        case let .fitted(_, swipes): attempt = Attempt(outcome: "fitted", at: at, swipes: swipes)
        case .held: attempt = Attempt(outcome: "held", at: at)
        case .recent: attempt = Attempt(outcome: "recent", at: at)
        case let .tooFewSwipes(n): attempt = Attempt(outcome: "too_few_swipes", at: at, swipes: n)
        case let .failed(reason): attempt = Attempt(outcome: "failed", at: at, detail: String(reason.prefix(500)))
        }
        state.withLock { $0.lastAttempt = attempt }
    }
}

/// Fits, stores and installs models on the schedule, and installs other instances' models.
final class ModelRefitter<M: ServableMatcher>: Sendable {
    let installer: GenerationInstaller<M>
    let store: any ServiceStore
    let options: RefitOptions
    let ledger: RefitLedger
    let logger: Logger
    let clock: @Sendable () -> Int64
    /// A stored version that failed to install (not tried again).
    private let rejected = Mutex<Int>(0)
    /// A stored prior version that failed to install (not tried again).
    private let rejectedPrior = Mutex<Int>(0)

    init(installer: GenerationInstaller<M>, store: any ServiceStore, options: RefitOptions, ledger: RefitLedger, logger: Logger,
         clock: @escaping @Sendable () -> Int64) {
        self.installer = installer
        self.store = store
        self.options = options
        self.ledger = ledger
        self.logger = logger
        self.clock = clock
    }

    /// Installs the newest stored model when it is newer than the one in service.
    ///
    /// - Returns: Whether a model was installed.
    @discardableResult
    func follow() async -> Bool {
        let factors = await followFactors()
        let prior = await followPrior()
        return factors || prior
    }

    /// Installs the newest stored population prior when it is newer than the one in service.
    private func followPrior() async -> Bool {
        do {
            let newest = try await store.latestModelVersion(kind: RefitOptions.priorKind)
            guard newest > installer.priorVersion, newest != rejectedPrior.withLock({ $0 }) else { return false }
            guard let stored = try await store.latestModel(kind: RefitOptions.priorKind) else { return false }
            do {
                let prior = try PopulationPrior.decode(json: stored.data, source: "stored population prior \(stored.version)")
                try installer.installPrior(prior, version: stored.version)
                ledger.installedPrior(stored.version)
                logger.info("refitted population prior installed", metadata: ["version": "\(stored.version)", "students": "\(prior.students)"])
                return true
            } catch {
                rejectedPrior.withLock { $0 = stored.version }
                logger.error("a stored population prior does not apply to this catalog; the current one keeps serving",
                             metadata: ["version": "\(stored.version)", "error": "\(error)"])
                return false
            }
        } catch {
            logger.error("reading the stored population priors failed", metadata: ["error": "\(error)"])
            return false
        }
    }

    /// Installs the newest stored collaborative model when it is newer than the one in service.
    private func followFactors() async -> Bool {
        do {
            let newest = try await store.latestModelVersion(kind: RefitOptions.kind)
            guard newest > installer.modelVersion, newest != rejected.withLock({ $0 }) else { return false }
            guard let stored = try await store.latestModel(kind: RefitOptions.kind) else { return false }
            do {
                let file = try FactorModelFile.decode(json: stored.data, source: "stored model \(stored.version)")
                try installer.installModel(file, version: stored.version)
                ledger.installed(stored.version)
                logger.info("refitted model installed", metadata: ["version": "\(stored.version)", "fitted_on": "\(file.fittedOn ?? "")"])
                return true
            } catch {
                rejected.withLock { $0 = stored.version }
                logger.error("a stored model does not apply to this catalog; the current one keeps serving",
                             metadata: ["version": "\(stored.version)", "error": "\(error)"])
                return false
            }
        } catch {
            logger.error("reading the stored models failed", metadata: ["error": "\(error)"])
            return false
        }
    }

    /// One attempt: under the job lock, unless a model younger than the interval is stored,
    /// read the log, fit, check the model on the catalog, store and install it.
    func refit() async -> RefitOutcome {
        let outcome: RefitOutcome?
        do {
            outcome = try await store.withExclusiveJob("refit:" + RefitOptions.kind) { () async -> RefitOutcome in
                await self.refitHoldingJob()
            }
        } catch {
            outcome = .failed("\(error)")
        }
        ledger.attempted(outcome ?? .held, at: clock())
        switch outcome ?? .held {
        case .failed(let reason):
            logger.error("refitting the model failed; the current one keeps serving", metadata: ["error": "\(reason)"])
        case .fitted(let version, let swipes):
            logger.info("model refitted", metadata: ["version": "\(version)", "swipes": "\(swipes)"])
        default:
            break
        }
        return outcome ?? .held
    }

    private func refitHoldingJob() async -> RefitOutcome {
        do {
            if let newest = try await store.latestModel(kind: RefitOptions.kind),
               Double(clock() - newest.createdAt) < Self.milliseconds(options.interval) {
                _ = await follow()
                return .recent
            }
            let engine = installer.generations.current.students.engine
            let log = try await LoggedSwipes.read(from: store, itemIDs: Set(engine.matcher.catalog.ids), signals: options.readsSignals)
            guard log.judgements.count >= options.minimumSwipes else { return .tooFewSwipes(log.judgements.count) }
            let fit = options.fit
            let context = RefitContext(catalog: engine.matcher.catalog, current: engine.factors?.file, scale: engine.matcher.calibration.scale)
            var priorFit: (any PopulationPriorFitter, PriorFitInput<M>)?
            if let fitter = options.prior {
                let (input, skipped) = try await PriorFitInput.read(from: store, log: log, engine: engine)
                if skipped > 0 {
                    logger.warning("students left out of the population prior's fit (erased, or a stored profile that no longer decodes)",
                                   metadata: ["students": "\(skipped)"])
                }
                priorFit = (fitter, input)
            }
            let priorJob = priorFit
            // A fit is seconds of BLAS: off the server's executor. Both fits finish before
            // anything is stored: a refit either lands whole or leaves the current models serving.
            let (file, prior): (FactorModelFile, PopulationPrior?) = try await withCheckedThrowingContinuation { continuation in
                Thread.detachNewThread {
                    continuation.resume(with: Result {
                        (try fit(log, context), try priorJob.map { fitter, input in try fitter.fit(input) })
                    })
                }
            }
            // A model that does not apply is never stored.
            _ = try engine.withFactors(file)
            if let prior { _ = try engine.withPopulation(prior) }
            let version = try await store.putModel(kind: RefitOptions.kind, data: file.jsonData(), createdAt: clock())
            try installer.installModel(file, version: version)
            ledger.installed(version)
            if let prior {
                let priorVersion = try await store.putModel(kind: RefitOptions.priorKind, data: prior.jsonData(), createdAt: clock())
                try installer.installPrior(prior, version: priorVersion)
                ledger.installedPrior(priorVersion)
                logger.info("population prior refitted", metadata: ["version": "\(priorVersion)", "students": "\(prior.students)"])
            }
            return .fitted(version: version, swipes: log.judgements.count)
        } catch {
            return .failed("\(error)")
        }
    }

    static func milliseconds(_ d: Duration) -> Double {
        Double(d.components.seconds) * 1_000 + Double(d.components.attoseconds) / 1e15
    }
}

/// Runs a `ModelRefitter`: polls for other instances' models, refits on the schedule, and
/// after a new model sweeps the stored students over to it (when the sweep is on).
struct ModelRefitService<M: ServableMatcher>: Service {
    let refitter: ModelRefitter<M>
    let sweep: Bool

    func run() async throws {
        await cancelWhenGracefulShutdown {
            let clock = ContinuousClock()
            var due = clock.now.advanced(by: refitter.options.interval)
            while !Task.isCancelled {
                try? await Task.sleep(for: refitter.options.pollInterval)
                var installed = await refitter.follow()
                if clock.now >= due {
                    due = clock.now.advanced(by: refitter.options.interval)
                    if case .fitted = await refitter.refit() { installed = true }
                }
                if installed && sweep {
                    await MigrationSweepService(students: { refitter.installer.generations.current.students }).sweepAll()
                }
            }
        }
    }
}
