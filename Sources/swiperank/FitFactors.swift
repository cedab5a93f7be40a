import ArgumentParser
import Foundation
import Logging
import SwipeRankServer
import Synchronization
import SwipeRank
import SwipeRankEvaluation

/// `swiperank fit-factors`: fits a collaborative model (implicit ALS with a feature embedding)
/// from a log of swipes; `serve`, `evaluate` and `recommend` load it with `--factors`.
struct FitFactors: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fit-factors",
        abstract: "Fit a collaborative model (item factors and a feature embedding, implicit ALS) from logged swipes; serve loads it with --factors.",
        discussion: """
        Every student's swipes teach every item's factor: a like is a 1 with weight 1 + α, a dislike a 0 with weight \
        1 + α⁻, every item a student never swiped a 0 with weight 1. The file is documented JSON (FactorModelFile): \
        any trainer that writes item_ids, item_factors and the settings can produce one (Spark MLlib's ALS item \
        factors, a numpy script). With --choose, the settings and the weight γ are chosen on a time split of the log \
        (each student's last 30% validating), against the population prior with --exposure-weight.
        """)

    @Option(help: "The logged swipes CSV (student_id, item_id, action, timestamp).")
    var interactions: String = "datasets/swipes.csv"

    @Option(help: "Fit from the service's own log instead of --interactions: sqlite (the --database file) or a postgres:// URL (the default catalog's students). Swipes and saves are the answers; cards served and never answered weigh --shown-confidence.")
    var store: String?

    @Option(help: "With --store sqlite: the file (default swiperank.sqlite).")
    var database: String?

    @Option(help: "With --store: α°, the confidence of a card served and never answered (≥ 0; 0: as if never served).")
    var shownConfidence: Double = 1

    @Option(help: "The students CSV (only for --choose: the prior the factors are weighed against needs profiles; colleges default to datasets/students.csv, --schema catalogs to everyone in the log).")
    var students: String?

    @Option(help: "The model file to write (JSON).")
    var output: String

    @Option(help: "f, the number of factors (1…1024).")
    var dimension = FactorFit.Options().dimension

    @Option(help: "λ, the ridge (> 0).")
    var regularization = FactorFit.Options().regularization

    @Option(help: "α, the confidence of a like (> 0).")
    var confidence = FactorFit.Options().confidence

    @Option(help: "α⁻, the confidence of a dislike (≥ 0; 0: a dislike counts as an item never shown).")
    var dislikeConfidence = FactorFit.Options().dislikeConfidence

    @Option(help: "Alternating iterations (1…1000).")
    var iterations = FactorFit.Options().iterations

    @Flag(help: "Shrink item factors toward 0 instead of toward what their features predict.")
    var noFeaturePrior = false

    @Option(help: "γ in units of the catalog's calibration scale: how much the collaborative affinity moves the ranking (≥ 0).")
    var weight: Double = 16

    @Flag(help: "Choose the settings and γ on a time split of the log instead (FactorFit.chooseOptions; overrides the settings above; γ = 0 unless the factors beat the prior alone there by more than one standard error). With --signals, settings weighed by them (--reaction-boost and --dwell-boost, else 1 and 0.5) are offered beside the plain ones.")
    var choose = false

    @Option(help: "With --choose: the exposure weight β of the population prior the factors are weighed against.")
    var exposureWeight: Double = 0

    @Option(help: "Seeds the items' starting factors.")
    var seed: UInt64 = 1

    @Flag(help: "Skip bad rows of the CSVs (each one is reported) instead of stopping.")
    var skipBadRows = false

    @OptionGroup var catalogOptions: CatalogOptions

    @OptionGroup var signalOptions: SignalOptions

    func validate() throws {
        guard (1...1_024).contains(dimension) else { throw ValidationError("--dimension must be in 1...1024, got \(dimension)") }
        guard regularization.isFinite && regularization > 0 else { throw ValidationError("--regularization must be positive, got \(regularization)") }
        guard confidence.isFinite && confidence > 0 else { throw ValidationError("--confidence must be positive, got \(confidence)") }
        guard dislikeConfidence.isFinite && dislikeConfidence >= 0 else {
            throw ValidationError("--dislike-confidence must not be negative, got \(dislikeConfidence)")
        }
        guard (1...1_000).contains(iterations) else { throw ValidationError("--iterations must be in 1...1000, got \(iterations)") }
        guard weight.isFinite && weight >= 0 else { throw ValidationError("--weight must be finite and not negative, got \(weight)") }
        guard exposureWeight.isFinite && exposureWeight >= 0 else { throw ValidationError("--exposure-weight must not be negative") }
        guard shownConfidence.isFinite && shownConfidence >= 0 else { throw ValidationError("--shown-confidence must not be negative") }
        try signalOptions.validate(readingStore: store != nil)
    }

    func run() async throws {
        let policy: BadRowPolicy = skipBadRows ? .skip : .fail
        if let name = store {
            let logged = try await readStore(name)
            let (log, shown) = (logged.interactions, logged.shownPairs)
            print("read \(log.count) swipes and saves, \(shown.count) unanswered cards and \(logged.signals.count) dwell times and reactions "
                  + "of \(logged.students) students from the store")
            if let schema = catalogOptions.schema {
                try fit(SwipeEngine(matcher: try catalogOptions.loadItems(schema: schema)), { [] }, log, shown: shown, signals: logged.signals)
            } else {
                try fit(SwipeEngine(matcher: try catalogOptions.schoolMatcher()), { [] }, log, shown: shown, signals: logged.signals)
            }
            return
        }
        if let schema = catalogOptions.schema {
            let engine = SwipeEngine(matcher: try catalogOptions.loadItems(schema: schema))
            let users = try students.map { path in
                try loadRows { () throws(DataError) in try ItemUsersFile.read(CSVTable(contentsOfFile: path), matcher: engine.matcher, policy: policy) }
            }
            let log = try readInteractions(interactions, itemIDs: Set(engine.matcher.catalog.ids), studentIDs: users.map { Set($0.map(\.id)) },
                                           policy: policy)
            try fit(engine, { users ?? DatasetStudent.everyone(in: log, profile: ItemProfile()) }, log,
                    signals: try signalOptions.read(itemIDs: Set(engine.matcher.catalog.ids), policy: policy))
        } else {
            let engine = SwipeEngine(matcher: try catalogOptions.schoolMatcher())
            let path = students ?? "datasets/students.csv"
            let roster = choose ? try loadRows { () throws(DataError) in try StudentsFile.read(CSVTable(contentsOfFile: path), policy: policy) } : nil
            let log = try readInteractions(interactions, itemIDs: Set(engine.matcher.catalog.ids), studentIDs: roster.map { Set($0.map(\.id)) },
                                           policy: policy)
            try fit(engine, { roster ?? [] }, log, signals: try signalOptions.read(itemIDs: Set(engine.matcher.catalog.ids), policy: policy))
        }
    }

    /// The default catalog's log from the service's store.
    func readStore(_ name: String) async throws -> LoggedSwipes {
        let ids: Set<String>
        if let schema = catalogOptions.schema {
            ids = Set(try catalogOptions.loadItems(schema: schema).catalog.ids)
        } else {
            ids = Set(try catalogOptions.schoolMatcher().catalog.ids)
        }
        let result = Mutex<LoggedSwipes?>(nil)
        try await withStore(name, sqlitePath: database ?? "swiperank.sqlite", mustExist: true, logger: Logger(label: "swiperank.fit-factors")) { store, _ in
            do {
                let log = try await LoggedSwipes.read(from: store, itemIDs: ids, signals: signalOptions.weighs)
                result.withLock { $0 = log }
            } catch {
                throw CLIError("reading the store: \(error)")
            }
        }
        return result.withLock { $0 } ?? LoggedSwipes()
    }

    func fit<M: Matcher>(_ engine: SwipeEngine<M>, _ roster: () -> [DatasetStudent<M.Profile>], _ log: [Interaction],
                         shown: [(studentID: String, itemID: String)] = [], signals: [EngagementSignal] = []) throws {
        guard !log.isEmpty else { throw CLIError("\(store == nil ? interactions : "the store"): no swipes to fit factors on") }
        let scale = engine.matcher.calibration.scale
        var options = FactorFit.Options()
        options.dimension = dimension
        options.regularization = regularization
        options.confidence = confidence
        options.dislikeConfidence = dislikeConfidence
        options.iterations = iterations
        options.featureInformed = !noFeaturePrior
        options.seed = seed
        if store != nil { options.shownConfidence = shownConfidence }
        (options.reactionBoost, options.dwellBoost) = (signalOptions.reactionBoost, signalOptions.dwellBoost)
        var gamma = weight * scale
        let start = Date()
        do {
            if choose {
                // With signals, the same settings weighed by them are offered beside the plain ones.
                let boosts = signalOptions.weighs ? (signalOptions.reactionBoost, signalOptions.dwellBoost) : FamilyEvaluation.signalBoosts
                let candidates = signals.isEmpty ? FactorFit.optionCandidates : FactorFit.optionCandidates + FactorFit.optionCandidates.map {
                    var o = $0
                    (o.reactionBoost, o.dwellBoost) = boosts
                    return o
                }
                let choice = try FactorFit.chooseOptions(engine: engine, students: roster(), interactions: log, signals: signals,
                                                         exposureWeight: exposureWeight, candidates: candidates)
                print("chosen on the last 30% of each student's swipes (\(choice.students) students, \(choice.table.count) settings × weights): "
                      + "\(choice.options.summary), γ = \(choice.scaleWeight) × scale, NDCG@10 \(String(format: "%.4f", choice.ndcg))"
                      + (choice.factorGain.map { " (the best γ > 0 against none: \(String(format: "%+.4f ± %.4f", $0.mean, $0.standardError)); factors only past one standard error)" } ?? ""))
                options = choice.options
                options.seed = seed
                gamma = choice.weight
            }
            let interactive = isatty(STDERR_FILENO) != 0
            let file = try FactorFit.fit(catalog: engine.matcher.catalog, interactions: log, shown: shown, signals: signals, options: options,
                                         weight: gamma) { done, total in
                guard interactive else { return }
                let bar = String(repeating: "█", count: 20 * done / total) + String(repeating: "·", count: 20 - 20 * done / total)
                FileHandle.standardError.write(Data("\r  fitting \(bar) \(done)/\(total) iterations".utf8))
                if done == total { FileHandle.standardError.write(Data("\n".utf8)) }
            }
            try writeOutput(String(decoding: file.jsonData(), as: UTF8.self) + "\n", to: output)
            print("fitted \(file.itemIDs.count) item factors (\(options.summary), γ = \(String(format: "%.3g", gamma)) raw-score units) "
                  + "on \(log.count) swipes in \(String(format: "%.1f", Date().timeIntervalSince(start))) s")
            print("wrote \(output)")
        } catch let error as CLIError {
            throw error
        } catch {
            throw CLIError("\(error)")
        }
    }
}

/// `--factors FILE`: reads a factor model (`swiperank fit-factors` or an external trainer's)
/// and puts it into an engine, as one-line errors naming the file.
func loadFactors<M: Matcher>(_ path: String, into engine: SwipeEngine<M>) throws -> SwipeEngine<M> {
    let file = try readFactorFile(path)
    do { return try engine.withFactors(file) } catch { throw CLIError("\(path): \(error.detail)") }
}

/// Reads a factor model file (errors name the file and the field).
func readFactorFile(_ path: String) throws -> FactorModelFile {
    do {
        return try FactorModelFile.decode(json: try InputFile.read(path, what: "factor model", maxBytes: 1 << 30), source: path)
    } catch {
        throw CLIError("\(error)")  // names the file (and line:column or the field)
    }
}

extension LoggedSwipes {
    /// The answers as `FactorFit` reads them.
    var interactions: [Interaction] {
        judgements.map { Interaction(studentID: $0.studentID, itemID: $0.itemID, action: $0.liked ? .like : .dislike, timestamp: $0.timestamp) }
    }

    /// The unanswered cards as `FactorFit.fit(…, shown:)` reads them.
    var shownPairs: [(studentID: String, itemID: String)] { shown.map { ($0.studentID, $0.itemID) } }
}
