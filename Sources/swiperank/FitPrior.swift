import ArgumentParser
import Foundation
import Logging
import SwipeRank
import SwipeRankEvaluation
import SwipeRankServer
import Synchronization

/// `swiperank fit-prior`: fits a population prior from a log of swipes.
struct FitPrior: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fit-prior",
        abstract: "Fit a population prior (a shift of the cold start and an effect per item) from logged swipes; serve and evaluate load it with --population-prior.")

    @Option(help: "The logged swipes CSV (student_id, item_id, action, timestamp).")
    var interactions: String = "datasets/swipes.csv"

    @Option(help: "Fit from the service's own store instead of --interactions: sqlite (the file --database) or a postgres:// URL. The default catalog's swipes and saves, and each answering student's stored profile (what serve --refit-prior on fits from).")
    var store: String?

    @Option(help: "With --store sqlite: the file (default swiperank.sqlite).")
    var database: String?

    @Option(help: "The students CSV (colleges: profile columns, default datasets/students.csv; with --schema optional: without it the users are everyone in --interactions, with no stated preferences).")
    var students: String?

    @Option(help: "The item effects' shrinkage, in swipes (> 0): an item swiped this often gets about half its raw effect.")
    var itemPrecision: Double = 5

    @Option(help: "The exposure weight β: how much an item's share of people who swiped it adds to its rank (not to its match score). 0 (default) for logs the engine served; `auto` chooses β on a time split of the log (the last 30% of each student's swipes validating), for logs where people chose what to swipe (ratings, visits).")
    var exposureWeight: ExposureWeightOption = .fixed(0)

    @Option(help: "The prior file to write (JSON).")
    var output: String

    @Flag(help: "Skip bad rows of the CSVs (each one is reported) instead of stopping.")
    var skipBadRows = false

    @OptionGroup var catalogOptions: CatalogOptions

    @OptionGroup var signalOptions: SignalOptions

    @Flag(help: "With --signals or --store: choose on a time split of the log (each student's last 30% validating) between the plain prior and one weighed by the signals (--reaction-boost and --dwell-boost, else 1 and 0.5); the plain one wins ties.")
    var chooseSignals = false

    func validate() throws {
        guard itemPrecision.isFinite && itemPrecision > 0 && itemPrecision <= 1e6 else {
            throw ValidationError("--item-precision must be in (0, 1e6], got \(itemPrecision)")
        }
        if store != nil && students != nil { throw ValidationError("--students goes with --interactions: --store reads the stored profiles") }
        if store == nil && database != nil { throw ValidationError("--database needs --store sqlite") }
        try signalOptions.validate(readingStore: store != nil)
        if chooseSignals && store == nil && signalOptions.signals == nil {
            throw ValidationError("--choose-signals weighs answers by the app's events: it needs --store or --signals")
        }
    }

    func run() async throws {
        let policy: BadRowPolicy = skipBadRows ? .skip : .fail
        let prior: PopulationPrior
        if let name = store {
            if let schema = catalogOptions.schema {
                prior = try await fitFromStore(name, SwipeEngine(matcher: try catalogOptions.loadItems(schema: schema)))
            } else {
                prior = try await fitFromStore(name, SwipeEngine(matcher: try catalogOptions.schoolMatcher()))
            }
        } else if let schema = catalogOptions.schema {
            let matcher = try catalogOptions.loadItems(schema: schema)
            let engine = SwipeEngine(matcher: matcher)
            let users: [DatasetStudent<ItemProfile>]?
            if let students {
                users = try load { () throws(DataError) in try ItemUsersFile.read(CSVTable(contentsOfFile: students), matcher: matcher, policy: policy) }
            } else {
                users = nil
            }
            let log = try readLog(itemIDs: Set(matcher.catalog.ids), studentIDs: users.map { Set($0.map(\.id)) }, policy: policy)
            let roster = users ?? DatasetStudent.everyone(in: log, profile: ItemProfile())
            prior = try fit(engine, roster, log, signals: try signalOptions.read(itemIDs: Set(matcher.catalog.ids), policy: policy))
        } else {
            let engine = SwipeEngine(matcher: try catalogOptions.schoolMatcher())
            let path = students ?? "datasets/students.csv"
            let roster = try load { () throws(DataError) in try StudentsFile.read(CSVTable(contentsOfFile: path), policy: policy) }
            let log = try readLog(itemIDs: Set(engine.matcher.catalog.ids), studentIDs: Set(roster.map(\.id)), policy: policy)
            prior = try fit(engine, roster, log, signals: try signalOptions.read(itemIDs: Set(engine.matcher.catalog.ids), policy: policy))
        }
        try writeOutput(String(decoding: prior.jsonData(), as: UTF8.self) + "\n", to: output)
        let shift = prior.weightShift.map { $0 * $0 }.reduce(0, +).squareRoot()
        if prior.exposureWeight > 0 { print("exposure weight β = \(prior.exposureWeight)") }
        let effects = prior.itemEffects.map(abs).sorted()
        print("fitted on \(prior.students) students, \(prior.swipes) swipes: weight shift |δ| = \(String(format: "%.3f", shift)), "
              + "item effects median |e| = \(String(format: "%.3f", effects.isEmpty ? 0 : effects[effects.count / 2])), "
              + "max |e| = \(String(format: "%.3f", effects.last ?? 0)) (raw-score units)")
        print("wrote \(output)")
    }

    /// `--store`: the default catalog's log and the answering students' stored profiles.
    func fitFromStore<M: ServableMatcher>(_ name: String, _ engine: SwipeEngine<M>) async throws -> PopulationPrior {
        let read = Mutex<(PriorFitInput<M>, Int)?>(nil)
        try await withStore(name, sqlitePath: database ?? "swiperank.sqlite", mustExist: true, logger: Logger(label: "swiperank.fit-prior")) { store, _ in
            do {
                let log = try await LoggedSwipes.read(from: store, itemIDs: Set(engine.matcher.catalog.ids), signals: signalOptions.weighs || chooseSignals)
                let input = try await PriorFitInput.read(from: store, log: log, engine: engine)
                read.withLock { $0 = input }
            } catch {
                throw CLIError("reading the store: \(error)")
            }
        }
        guard let (input, skipped) = read.withLock({ $0 }) else { throw CLIError("reading the store: nothing read") }
        print("read \(input.log.judgements.count) swipes and saves and \(input.log.signals.count) dwell times and reactions of "
              + "\(input.students.count) students from the store"
              + (skipped > 0 ? " (\(skipped) left out: erased, or a stored profile that no longer decodes)" : ""))
        return try fit(input.engine, input.students.map { DatasetStudent(id: $0.id, profile: $0.profile) }, input.log.interactions,
                       signals: input.log.signals)
    }

    /// The prior; with a boost, the answers weighed by `signals` (`AnswerStrengths`), after an
    /// exposure weight chosen on the plain answers; with `--choose-signals`, weighed only when
    /// the time split says so.
    func fit<M: Matcher>(_ engine: SwipeEngine<M>, _ roster: [DatasetStudent<M.Profile>], _ log: [Interaction],
                         signals: [EngagementSignal] = []) throws -> PopulationPrior {
        guard !log.isEmpty else { throw CLIError("\(store == nil ? interactions : "the store"): no swipes to fit a population prior on") }
        do {
            var beta = 0.0
            switch exposureWeight.setting {
            case .fixed(let value): beta = value
            case .chosen:
                let choice = try PopulationFit.chooseExposureWeight(engine: engine, students: roster, interactions: log, itemPrecision: itemPrecision)
                print("exposure weight chosen on the last 30% of each student's swipes (\(choice.students) students), NDCG@10: "
                      + choice.candidates.map { "β=\($0.weight) \(String(format: "%.4f", $0.ndcg))" }.joined(separator: ", "))
                beta = choice.weight
            }
            let boosts = PopulationFit.SignalBoosts(reaction: signalOptions.reactionBoost, dwell: signalOptions.dwellBoost)
            let fitted = try PopulationFit.fitWeighingSignals(
                engine: engine, students: roster, interactions: log, signals: signals, boosts: boosts, choose: chooseSignals,
                itemPrecision: itemPrecision, exposureWeight: beta) { chosen in
                AnswerStrengths(signals: signals, interactions: log, reactionBoost: chosen.reaction, dwellBoost: chosen.dwell)
            }
            if let choice = fitted.choice {
                print("signals chosen on the last 30% of each student's swipes (\(choice.students) students), NDCG@10: "
                      + choice.candidates.map { c in
                          (c.boosts == .none ? "plain" : "reactions×\(1 + c.boosts.reaction) dwell^\(c.boosts.dwell)")
                              + " \(String(format: "%.4f", c.ndcg))"
                      }.joined(separator: ", ") + (choice.boosts == .none ? ": plain" : ": weighed"))
            }
            return fitted.prior
        } catch {
            throw CLIError("\(error)")
        }
    }

    func load<T>(_ read: () throws(DataError) -> ([T], LoadReport)) throws -> [T] { try loadRows(read) }

    func readLog(itemIDs: Set<String>, studentIDs: Set<String>?, policy: BadRowPolicy) throws -> [Interaction] {
        try readInteractions(interactions, itemIDs: itemIDs, studentIDs: studentIDs, policy: policy)
    }
}

/// Rows read by a dataset reader, with skipped rows reported on stderr and errors as one line.
func loadRows<T>(_ read: () throws(DataError) -> ([T], LoadReport)) throws -> [T] {
    do {
        let (rows, report) = try read()
        if !report.skipped.isEmpty { FileHandle.standardError.write(Data((report.summary + "\n").utf8)) }
        return rows
    } catch {
        throw CLIError("\(error)")
    }
}

/// An interactions CSV, checked against the catalog's ids (and the students', when given).
func readInteractions(_ path: String, itemIDs: Set<String>, studentIDs: Set<String>?, policy: BadRowPolicy) throws -> [Interaction] {
    try loadRows { () throws(DataError) in
        try InteractionsFile.read(CSVTable(contentsOfFile: path), itemIDs: itemIDs, studentIDs: studentIDs, policy: policy)
    }
}

/// `--population-prior FILE`: reads a prior written by `swiperank fit-prior` and puts it into
/// an engine, as one-line errors naming the file.
func loadPopulationPrior<M: Matcher>(_ path: String, into engine: SwipeEngine<M>) throws -> SwipeEngine<M> {
    let prior = try readPopulationPrior(path)
    do { return try engine.withPopulation(prior) } catch { throw CLIError("\(path): \(error.detail)") }
}

/// Reads a population prior file (errors name the file and the field).
func readPopulationPrior(_ path: String) throws -> PopulationPrior {
    do {
        return try PopulationPrior.decode(json: try InputFile.read(path, what: "population prior", maxBytes: 64 << 20), source: path)
    } catch {
        throw CLIError("\(error)")  // names the file (and line:column or the field)
    }
}
