import ArgumentParser
import Foundation
import SwipeRank
import SwipeRankColleges
import SwipeRankEvaluation
import SwipeRankNumerics

/// `--exposure-weight`: a number ≥ 0 or `auto`.
enum ExposureWeightOption: ExpressibleByArgument, Equatable {
    case fixed(Double)
    case auto

    init?(argument: String) {
        if argument == "auto" {
            self = .auto
        } else if let value = Double(argument), value.isFinite, value >= 0, value <= 100 {
            self = .fixed(value)
        } else {
            return nil
        }
    }

    var defaultValueDescription: String {
        switch self {
        case .auto: "auto"
        case .fixed(let value): value == value.rounded() ? String(Int(value)) : String(value)
        }
    }

    /// The replay's setting.
    var setting: PopulationFit.ExposureWeight {
        switch self {
        case .auto: .chosen
        case .fixed(let value): .fixed(value)
        }
    }
}

/// `--student-model`.
enum StudentModelOption: String, ExpressibleByArgument, CaseIterable {
    case logistic, hidden
}

struct Evaluate: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Simulate students swiping through the engine and the baselines; print learning curves and metrics.")

    @Option(help: "The students CSV (colleges: profile columns, default datasets/students.csv; with --schema: student_id, home, pref:<key> columns, optional: without it the users are everyone in --interactions, with no stated preferences).")
    var students: String?

    @Option(help: "The logged swipes CSV for the replay evaluation (empty: skip the replay).")
    var interactions: String = "datasets/swipes.csv"

    @Flag(help: "Skip the simulation (only the replay of --interactions).")
    var skipSimulation = false

    @Flag(help: "Skip the replay of the logged swipes (only the simulation).")
    var skipReplay = false

    @Option(help: "Replay: the share of each student's logged swipes (earliest first) to learn from, in (0, 1).")
    var trainFraction: Double = 0.7

    @Option(help: "Replay: the cut-off k of precision, recall, NDCG and MAP (1…1000).")
    var k: Int = 10

    @Option(help: "The population prior engine_population_prior starts from (written by `swiperank fit-prior`). Default for colleges: fitted on --population-students simulated students other than the evaluated ones; with --schema and no file that policy is left out.")
    var populationPrior: String?

    @Option(help: "Colleges: how many other simulated students (random profiles, the same student model) the population prior is fitted on when no --population-prior is given (0: leave engine_population_prior out).")
    var populationStudents: Int = 200

    @Option(help: "Replay: the exposure weight β of the population prior fitted on the training swipes — how much an item's share of people who swiped it adds to its rank. 0 (default) for logs the engine served; `auto` chooses β on a time split of the training swipes (`PopulationFit.chooseExposureWeight`), for logs where people chose what to swipe (ratings, visits).")
    var exposureWeight: ExposureWeightOption = .fixed(0)

    @Flag(help: "Replay: also fit a collaborative model (implicit ALS, `swiperank fit-factors`) on the training swipes, its settings and weight chosen on a time split of them, and report collaborative_affinity and engine_collaborative.")
    var collaborative = false

    @Option(help: "Replay: also write every policy's per-student metrics to this CSV (policy, student_id, precision@k, recall@k, ndcg@k, auc, swipe_auc; blank where undefined) — the shape scripts/anchors writes, for paired comparisons.")
    var perStudent: String?

    @Flag(help: "Colleges: instead of the usual run, simulate the student families the engine was not designed for (peer_groups, herd, noisy, drifting: TasteFamily), each with a population of --population-students other students whose log fits a prior and a collaborative model, and print every policy's served NDCG@10 per family.")
    var families = false

    @Flag(help: "With --families: instead of every policy, measure what the app's other events (dwell times, reactions; simulated twice — tied to the taste, and pure noise) add to the population's collaborative model: engine_collaborative with factors fitted on swipes only, with signals, and with the signal settings offered to the choice.")
    var signals = false

    @Option(help: "Evaluate only the first N students (0: all).")
    var limit: Int = 0

    @Option(help: "Swipes per student (1…500).")
    var swipes: Int = 40

    @Option(help: "Simulated students' taste: logistic (hidden weights in the engine's own model class) or hidden (HiddenTasteStudent: cliffs, saturation, a must-have major, private taste; colleges only). With --export the report has both (colleges).")
    var studentModel: StudentModelOption = .logistic

    @Option(help: "Seed for hidden preferences, answers and probes.")
    var seed: UInt64 = 1

    @Option(help: "Write the report (Markdown, SVG charts, CSVs) into this folder.")
    var export: String?

    @Flag(help: "Skip bad rows of the students CSV (each one is reported) instead of stopping.")
    var skipBadRows = false

    @Option(help: "With --schema: a numeric attribute giving each item's popularity (popularity baseline, novelty); default: likes in --interactions.")
    var popularityColumn: String?

    @OptionGroup var catalogOptions: CatalogOptions

    func validate() throws {
        guard (1...500).contains(swipes) else { throw ValidationError("--swipes must be in 1…500") }
        guard limit >= 0 else { throw ValidationError("--limit must not be negative") }
        if studentModel == .hidden && catalogOptions.schema != nil {
            throw ValidationError("--student-model hidden is the college student model; with --schema use logistic")
        }
        if families && (catalogOptions.schema != nil || export != nil) {
            throw ValidationError("--families is a college simulation printed on its own: it cannot go with --schema or --export")
        }
        if signals && !families { throw ValidationError("--signals is a part of --families") }
        if popularityColumn != nil && catalogOptions.schema == nil {
            throw ValidationError("--popularity-column needs --schema (colleges use undergraduate enrollment)")
        }
        guard trainFraction > 0 && trainFraction < 1 else { throw ValidationError("--train-fraction must be in (0, 1), got \(trainFraction)") }
        guard (1...1000).contains(k) else { throw ValidationError("--k must be in 1…1000, got \(k)") }
        guard (0...100_000).contains(populationStudents) else { throw ValidationError("--population-students must be in 0…100000") }
        if skipSimulation && (skipReplay || interactions.isEmpty) {
            throw ValidationError("--skip-simulation leaves only the replay: it needs --interactions and no --skip-replay")
        }
        if skipSimulation && export != nil {
            throw ValidationError("--export writes the simulation's report: it cannot go with --skip-simulation")
        }
        if students == nil && catalogOptions.schema != nil && (interactions.isEmpty || skipReplay && skipSimulation) {
            throw ValidationError("with --schema and no --students the users come from --interactions: give one or the other")
        }
    }

    /// Whether the logged swipes are replayed (they are still read for a generic catalog's
    /// popularity and, without --students, its users).
    var replaysLog: Bool { !skipReplay && !interactions.isEmpty }

    func run() throws {
        // Before minutes of simulation: an export folder that cannot be written fails now.
        if let export { try createOutputFolder(export) }
        guard let schema = catalogOptions.schema else {
            let engine = SwipeEngine(matcher: try catalogOptions.schoolMatcher())
            let (roster, log) = try loadData(itemIDs: Set(engine.matcher.catalog.ids)) { table, policy throws(DataError) in
                try StudentsFile.read(table, policy: policy)
            }
            // The population a prior is fitted on: other students, drawn like the shipped ones.
            var rng = SplitMix64(seed: seed ^ 0x5050_4f50_554c_4154)
            let population = (0..<populationStudents).map {
                DatasetStudent(id: "population-\($0)", profile: SchoolSimulation.randomProfile(schools: engine.matcher.schools, using: &rng))
            }
            if families && signals { return try evaluateSignals(engine: engine, roster: roster, population: population) }
            if families { return try evaluateFamilies(engine: engine, roster: roster, population: population) }
            try evaluate(engine: engine, roster: roster, log: log, popularity: SchoolSimulation.popularity(engine.matcher.schools),
                         opinionGroups: SchoolSimulation.opinionGroups, itemNoun: "school",
                         hiddenTaste: SimulationEvaluator<SchoolMatcher>.hiddenTaste(schools: engine.matcher.schools),
                         populationStudents: population,
                         // The expanded basis beside the standard one (as the main engine, nothing to compare).
                         expandedTermsEngine: engine.matcher.termBasis == .expanded ? nil
                             : SwipeEngine(matcher: SchoolMatcher(schools: engine.matcher.schools, termBasis: .expanded)))
            return
        }
        let matcher = try catalogOptions.loadItems(schema: schema)
        if let popularityColumn, matcher.catalog.numericAttribute(named: popularityColumn) == nil {
            throw CLIError("--popularity-column \"\(popularityColumn)\" is not a numeric attribute of \(matcher.catalog.source) (has: \(matcher.catalog.numericAttributeNames.joined(separator: ", ")))")
        }
        let readUsers: ((CSVTable, BadRowPolicy) throws(DataError) -> ([DatasetStudent<ItemProfile>], LoadReport))?
            = students == nil ? nil : { table, policy throws(DataError) in try ItemUsersFile.read(table, matcher: matcher, policy: policy) }
        let (roster, log) = try loadData(itemIDs: Set(matcher.catalog.ids), anonymous: ItemProfile(), readStudents: readUsers)
        try evaluate(engine: SwipeEngine(matcher: matcher), roster: roster, log: log,
                     popularity: itemPopularity(matcher.catalog, log: log), opinionGroups: nil, itemNoun: "item", hiddenTaste: nil,
                     populationStudents: [], expandedTermsEngine: nil)
    }

    /// How far the best γ > 0 led γ = 0 on the choice's validation, for the printed settings.
    func gainText(_ choice: FactorFit.Choice) -> String {
        choice.factorGain.map { "; best γ > 0 vs none \(f($0.mean, 4)) ± \(f($0.standardError, 4))" } ?? ""
    }

    /// `--families`: each `TasteFamily` with its own population, every policy's served NDCG@10
    /// curve with a 95% bootstrap interval at the last checkpoint, generalization and the gap
    /// closed, and the paired differences the learning targets are about.
    func evaluateFamilies(engine: SwipeEngine<SchoolMatcher>, roster: [DatasetStudent<StudentProfile>],
                          population: [DatasetStudent<StudentProfile>]) throws {
        guard !population.isEmpty else { throw CLIError("--families needs --population-students > 0") }
        var rng = SplitMix64(seed: seed)
        for family in TasteFamily.allCases {
            let start = Date()
            let outcome = try FamilyEvaluation.run(family: family, engine: engine, students: roster, population: population,
                                                   swipes: swipes, seed: seed)
            let results = outcome.results
            print("")
            print("Family \(family.rawValue): \(roster.count) students × \(swipes) swipes; prior and factors from \(population.count) other students "
                  + "(\(outcome.populationSwipes) swipes; \(outcome.choice.options.summary), γ = \(f(outcome.choice.scaleWeight, 1)) × scale\(gainText(outcome.choice))) "
                  + "(\(f(Date().timeIntervalSince(start), 1)) s)")
            let checkpoints = results[0].checkpoints
            print(pad("served NDCG@10", 26) + checkpoints.map { pad("n=\($0)", 8, left: true) }.joined() + "   95% CI at n=\(checkpoints.last!)"
                  + pad("general", 9, left: true) + pad("gap", 7, left: true))
            for r in results {
                let means = SimulationPolicyResult.means(r.servedNDCG)
                let ci = Bootstrap.meanInterval(r.servedNDCG.last!, using: &rng)
                let general = r.generalization.reduce(0, +) / Double(max(1, r.generalization.count))
                let gap = EvaluationReport.gapClosed(r.policy, in: results)
                print(pad(r.policy.rawValue, 26) + means.map { pad(f($0, 3), 8, left: true) }.joined()
                      + "   [\(f(ci.lower, 3)), \(f(ci.upper, 3))]" + pad(f(general, 3), 9, left: true)
                      + pad(gap.isNaN ? "-" : f(gap * 100, 0) + "%", 7, left: true))
            }
            let byPolicy = Dictionary(uniqueKeysWithValues: results.map { ($0.policy, $0) })
            for (a, b, c) in [(PolicyKind.engineCollaborative, PolicyKind.engineNoLearning, results[0].checkpoints.count - 1),
                              (.engineCollaborative, .naiveSGD, results[0].checkpoints.count - 1),
                              (.engineCollaborative, .enginePopulationPrior, results[0].checkpoints.count - 1),
                              (.engineCollaborative, .profileOnly, 0)] {
                guard let x = byPolicy[a]?.servedNDCG[c], let y = byPolicy[b]?.servedNDCG[c], x.count == y.count, !x.isEmpty else { continue }
                let d = zip(x, y).map { $0 - $1 }
                let ci = Bootstrap.meanInterval(d, using: &rng)
                print("  " + pad("\(a.rawValue) − \(b.rawValue) at n=\(checkpoints[c])", 60)
                      + "\(f(Bootstrap.mean(d), 3)) [\(f(ci.lower, 3)), \(f(ci.upper, 3))]")
            }
        }
        print("")
        print("served NDCG@10: the next deck as served (probes and bands included) against the student's 10 best unseen schools.")
        print("general: NDCG@10 of the final scores over the schools no policy served; gap: the share of the gap from profile_only")
        print("to linear_oracle closed there. Families: TasteFamily (peer_groups: hidden groups over a hidden vibe; herd: a hidden")
        print("buzz everyone shares; noisy: 30% coin-flip answers; drifting: a second, independent taste after half the")
        print("swipes — the oracles know only the first), all on top of HiddenTasteStudent. constrained_oracle: the true taste")
        print("served under the engine's band plan, the bound of any banded deck.")
    }

    /// `--families --signals`: per family and signal model, the collaborative engine's served
    /// NDCG@10 with factors fitted three ways, and the paired differences to swipes only.
    func evaluateSignals(engine: SwipeEngine<SchoolMatcher>, roster: [DatasetStudent<StudentProfile>],
                         population: [DatasetStudent<StudentProfile>]) throws {
        guard !population.isEmpty else { throw CLIError("--families needs --population-students > 0") }
        var rng = SplitMix64(seed: seed)
        for family in TasteFamily.allCases {
            for model in SignalModel.allCases {
                let start = Date()
                let outcome = try FamilyEvaluation.runSignals(family: family, model: model, engine: engine, students: roster,
                                                              population: population, swipes: swipes, seed: seed)
                print("")
                print("Family \(family.rawValue), \(model.rawValue) signals: \(roster.count) students × \(swipes) swipes; factors from "
                      + "\(population.count) other students (\(outcome.signalCount) signals) (\(f(Date().timeIntervalSince(start), 1)) s)")
                let checkpoints = outcome.arms[0].result.checkpoints
                print(pad("served NDCG@10", 20) + checkpoints.map { pad("n=\($0)", 8, left: true) }.joined()
                      + "   95% CI at n=\(checkpoints.last!)   − swipes only at n=\(checkpoints.last!)   chosen")
                let base = outcome.arms[0].result.servedNDCG.last!
                for arm in outcome.arms {
                    let served = arm.result.servedNDCG
                    let ci = Bootstrap.meanInterval(served.last!, using: &rng)
                    let d = zip(served.last!, base).map { $0 - $1 }
                    let dci = Bootstrap.meanInterval(d, using: &rng)
                    let delta = arm.name == outcome.arms[0].name ? pad("", 26)
                        : pad("\(f(Bootstrap.mean(d), 3)) [\(f(dci.lower, 3)), \(f(dci.upper, 3))]", 26)
                    print(pad(arm.name, 20) + SimulationPolicyResult.means(served).map { pad(f($0, 3), 8, left: true) }.joined()
                          + "   [\(f(ci.lower, 3)), \(f(ci.upper, 3))]   " + delta
                          + "\(arm.choice.options.summary), γ = \(f(arm.choice.scaleWeight, 1)) × scale")
                }
                // The fit's own held-out ranking, more sensitive than a served deck: the choice's
                // best plain and best signal-weighted settings on its time split.
                let table = outcome.arms.last!.choice.table
                if let plain = table.first(where: { $0.options.reactionBoost == 0 && $0.options.dwellBoost == 0 }),
                   let boosted = table.first(where: { $0.options.reactionBoost > 0 || $0.options.dwellBoost > 0 }) {
                    print("  validation NDCG@10 on the population's time split: swipes only \(f(plain.ndcg, 4)), with signals \(f(boosted.ndcg, 4))")
                }
                // The prior alone (engine_population_prior): what the signals do to it.
                let priorBase = outcome.priorArms[0].result.servedNDCG.last!
                for arm in outcome.priorArms {
                    let served = arm.result.servedNDCG
                    let ci = Bootstrap.meanInterval(served.last!, using: &rng)
                    let d = zip(served.last!, priorBase).map { $0 - $1 }
                    let dci = Bootstrap.meanInterval(d, using: &rng)
                    let delta = arm.name == outcome.priorArms[0].name ? "" : "\(f(Bootstrap.mean(d), 3)) [\(f(dci.lower, 3)), \(f(dci.upper, 3))]"
                    print(pad(arm.name, 20) + SimulationPolicyResult.means(served).map { pad(f($0, 3), 8, left: true) }.joined()
                          + "   [\(f(ci.lower, 3)), \(f(ci.upper, 3))]   " + delta)
                }
                let choice = outcome.priorChoice
                print("  the prior's choice on the population's time split (\(choice.students) students), validation NDCG@10: plain "
                      + "\(f(choice.candidates[0].ndcg, 4)), with signals \(f(choice.candidates[1].ndcg, 4)): "
                      + (choice.boosts == .none ? "plain" : "signals"))
            }
        }
        print("")
        print("signals: every swipe of the population's log with a dwell time, ln(ms) = ln 2500 + 0.9 (2v − 1) + 0.5 ε, and a reaction")
        print("with probability 0.3 (2v − 1)²; informative: v = the student's probability of liking the card; noise: v uniform.")
        print("signals weigh each answer's confidence in the fit (FactorFit.Options: reactions × (1 + 1), dwell × exp(±0.5 z));")
        print("\"signals if chosen\" offers those settings to the time-split choice beside the plain ones. engine_collaborative serves.")
        print("prior rows: engine_population_prior (no factors) with the prior fitted on the swipes, then with each answer's weight")
        print("in its student's model and its item's effect × the same reaction and dwell factors; \"if chosen\" serves the one")
        print("PopulationFit.chooseSignalBoosts picks on the population's time split. Differences are to the first.")
    }

    /// Reads the students (in the matcher's format) and the interactions, honoring
    /// `--skip-bad-rows` and `--limit`; skipped rows are reported on stderr. Without a students
    /// file (`readStudents` nil) the students are everyone in the interactions, in order of first
    /// appearance, each with `anonymous` as the profile.
    func loadData<Profile>(itemIDs: Set<String>, anonymous: Profile? = nil,
                           readStudents: ((CSVTable, BadRowPolicy) throws(DataError) -> ([DatasetStudent<Profile>], LoadReport))?)
    throws -> ([DatasetStudent<Profile>], [Interaction]) {
        do {
            let policy: BadRowPolicy = skipBadRows ? .skip : .fail
            let read: [DatasetStudent<Profile>]
            let logged: [Interaction]
            if let readStudents, let students = students ?? (catalogOptions.schema == nil ? "datasets/students.csv" : nil) {
                let (rows, report) = try readStudents(CSVTable(contentsOfFile: students), policy)
                if !report.skipped.isEmpty { FileHandle.standardError.write(Data((report.summary + "\n").utf8)) }
                read = rows
                guard !interactions.isEmpty else { return (limit > 0 ? Array(read.prefix(limit)) : read, []) }
                logged = try readLog(itemIDs: itemIDs, studentIDs: Set(read.map(\.id)), policy: policy)
            } else {
                // Nobody states preferences: the users are the log's.
                guard let anonymous else { throw CLIError("--students is required for this catalog") }
                logged = try readLog(itemIDs: itemIDs, studentIDs: nil, policy: policy)
                read = DatasetStudent.everyone(in: logged, profile: anonymous)
            }
            let roster = limit > 0 ? Array(read.prefix(limit)) : read
            let kept = Set(roster.map(\.id))
            return (roster, logged.filter { kept.contains($0.studentID) })
        } catch let error as CLIError {
            throw error
        } catch {
            throw CLIError("\(error)")
        }
    }

    /// The interactions file, bad rows reported on stderr.
    func readLog(itemIDs: Set<String>, studentIDs: Set<String>?, policy: BadRowPolicy) throws -> [Interaction] {
        let (logged, logReport) = try InteractionsFile.read(CSVTable(contentsOfFile: interactions), itemIDs: itemIDs,
                                                            studentIDs: studentIDs, policy: policy)
        if !logReport.skipped.isEmpty { FileHandle.standardError.write(Data((logReport.summary + "\n").utf8)) }
        return logged
    }

    /// A generic catalog's popularity: `--popularity-column` (values below 1 or missing count
    /// as 1), else 1 + likes per item in the interactions, else none (no popularity baseline,
    /// no novelty).
    func itemPopularity(_ catalog: Catalog, log: [Interaction]) -> [Double]? {
        if let popularityColumn, let a = catalog.numericAttribute(named: popularityColumn) {
            return catalog.numericValues[a].map { max(1, $0 ?? 1) }
        }
        guard !log.isEmpty else { return nil }
        var likes = [Double](repeating: 1, count: catalog.count)
        for x in log where x.action == .like { likes[catalog.row(of: x.itemID)!] += 1 }
        return likes
    }

    func evaluate<M: Matcher>(engine: SwipeEngine<M>, roster: [DatasetStudent<M.Profile>], log: [Interaction],
                              popularity: [Double]?, opinionGroups: Set<String>?, itemNoun: String,
                              hiddenTaste: SimulationEvaluator<M>.TasteModel?, populationStudents: [DatasetStudent<M.Profile>],
                              expandedTermsEngine: SwipeEngine<M>?) throws {
        let interactive = isatty(STDERR_FILENO) == 1
        let filePrior = try populationPrior.map { try loadPopulationPrior($0, into: engine).population! }
        let policies = PolicyKind.allCases.filter {
            (popularity != nil || $0 != .popularity) && (filePrior != nil || !populationStudents.isEmpty || $0 != .enginePopulationPrior)
                && (expandedTermsEngine != nil || $0 != .engineExpandedTerms)
                // Run by --families (with the populations they need), not by the report.
                && ![.engineCollaborative, .constrainedOracle].contains($0)
        }
        func simulate(_ taste: SimulationEvaluator<M>.TasteModel?, _ label: String) throws -> [SimulationPolicyResult] {
            let start = Date()
            var evaluator = SimulationEvaluator(engine: engine, popularity: popularity, opinionGroups: opinionGroups)
            evaluator.taste = taste
            evaluator.expandedTermsEngine = expandedTermsEngine
            if policies.contains(.enginePopulationPrior) {
                // Fitted on other students under the same student model: what the evaluated
                // students' population taught, never their own swipes.
                evaluator.population = try filePrior ?? PopulationFit.fit(
                    engine: engine, students: populationStudents,
                    interactions: evaluator.simulateLog(students: populationStudents, swipes: swipes, seed: seed &+ 1))
            }
            let results = try evaluator.run(
                students: roster, swipes: swipes, policies: policies, seed: seed,
                progress: interactive ? { done, total in
                    FileHandle.standardError.write(Data("\r  simulating \(done)/\(total) students (\(label))".utf8))
                    if done == total { FileHandle.standardError.write(Data("\n".utf8)) }
                } : nil)
            let seconds = Date().timeIntervalSince(start)
            print("Simulation (\(label)): \(roster.count) students × \(swipes) swipes × \(results.count) policies, seed \(seed) (\(String(format: "%.1f", seconds)) s)")
            return results
        }
        // The chosen model is printed; with --export on colleges the report carries both.
        let primaryTaste = studentModel == .hidden ? hiddenTaste : nil
        let results = skipSimulation ? [] : try simulate(primaryTaste, studentModel.rawValue)
        if !results.isEmpty { printSimulation(results, catalog: engine.matcher.catalog, itemNoun: itemNoun) }
        var replayer = ReplayEvaluator(engine: engine)
        replayer.exposureWeight = exposureWeight.setting
        replayer.collaborative = collaborative
        let outcome = !replaysLog || log.isEmpty ? nil
            : try replayer.replay(students: roster, interactions: log, k: k, trainFraction: trainFraction, seed: seed)
        let replay = outcome?.results ?? []
        if let export {
            let origin = catalogOptions.schema == nil
                ? "Generated by `swiperank evaluate --export notebooks-export` on the shipped datasets"
                : "Generated by `swiperank evaluate` on \(catalogOptions.catalog) (schema \(catalogOptions.schema!))"
            try createOutputFolder(export)
            do {
                // The report shows both student models where there are two: logistic first (as the
                // engine models students), then the taste outside that model class.
                let logistic = studentModel == .logistic ? results : try simulate(nil, StudentModelOption.logistic.rawValue)
                let outside = hiddenTaste == nil ? nil
                    : studentModel == .hidden ? results : try simulate(hiddenTaste, StudentModelOption.hidden.rawValue)
                var report = EvaluationReport(simulation: logistic, replay: replay, students: roster.count, swipes: swipes, seed: seed,
                                              loggedSwipes: log.count, origin: origin, itemNoun: itemNoun, outsideModel: outside)
                report.trainFraction = trainFraction
                report.k = k
                try report.write(to: URL(fileURLWithPath: export, isDirectory: true))
            } catch {
                throw CLIError("\(export): cannot write the report: permission denied or disk full")
            }
            print("wrote the report to \(export)/report.md")
        }
        guard !replay.isEmpty else { return }
        if let perStudent { try writeOutput(Self.perStudentCSV(replay, k: k), to: perStudent) }
        print("")
        print("Replay of \(log.count) logged swipes (\(interactions)): first \(f(trainFraction * 100, 0))% of each student's swipes to learn, the rest held out;")
        print("full ranking of every \(itemNoun) not swiped in training, held-out likes relevant.")
        if let choice = outcome?.exposureChoice {
            print("exposure weight β chosen on the training swipes (each student's last 30% of them validating; \(choice.students) students), NDCG@\(k): "
                  + choice.candidates.map { "β=\(f($0.weight, 1)) \(f($0.ndcg, 4))" }.joined(separator: ", ") + " → β = \(f(choice.weight, 1))")
        } else if let outcome, outcome.exposureWeight > 0 {
            print("population prior with exposure weight β = \(f(outcome.exposureWeight, 2))")
        }
        if let choice = outcome?.factorChoice {
            let noFactors = choice.table.filter { $0.weight == 0 }.map(\.ndcg).max() ?? .nan
            print("collaborative model chosen on the training swipes (each student's last 30% validating; \(choice.students) students, \(choice.table.count) settings × weights): "
                  + "\(choice.options.summary), γ = \(f(choice.scaleWeight, 2)) × scale, NDCG@\(k) \(f(choice.ndcg, 4)) (without the factors \(f(noFactors, 4))\(gainText(choice)))")
        }
        let metrics = ["precision@\(k)", "recall@\(k)", "ndcg@\(k)", "map@\(k)", "mrr", "auc", "swipe_auc"]
        print(pad("policy", 30) + metrics.map { pad($0, 13, left: true) }.joined() + pad("IPS likes", 12, left: true) + pad("matches", 9, left: true))
        for r in replay {
            print(pad(r.policy, 30) + metrics.map { pad(f(r.mean($0), 3), 13, left: true) }.joined()
                  + pad(r.ipsLikeRate.map { f($0, 3) } ?? "-", 12, left: true) + pad(String(r.ipsMatches), 9, left: true))
        }
        print("precision, recall, NDCG and AUC count tied scores in expectation (a tie is ½ in AUC); MAP and MRR break ties by row.")
        print("swipe_auc: held-out likes against held-out dislikes (will the student like a card shown?), ties ½.")
        // The comparisons the learning targets are about, paired over the same students (every
        // policy is scored on the same students, so the per-student values line up).
        let byName = Dictionary(uniqueKeysWithValues: replay.map { ($0.policy, $0) })
        let pairs = [("engine", "popularity"), ("engine_population_prior", "popularity"),
                     ("engine_population_prior", "population_prior"), ("engine_population_prior_bias", "population_prior"),
                     ("engine_collaborative", "engine_population_prior"), ("engine_collaborative", "collaborative_affinity")]
        var rng = SplitMix64(seed: seed)
        var header = false
        for (a, b) in pairs {
            guard let x = byName[a], let y = byName[b] else { continue }
            if !header {
                print("paired differences, mean [95% bootstrap CI]:")
                header = true
            }
            let cells = ["precision@\(k)", "auc", "swipe_auc"].compactMap { m -> String? in
                guard let u = x.metrics[m], let v = y.metrics[m], u.count == v.count, !u.isEmpty else { return nil }
                let d = zip(u, v).map { $0 - $1 }
                let ci = Bootstrap.meanInterval(d, using: &rng)
                return "\(m) \(f(Bootstrap.mean(d), 3)) [\(f(ci.lower, 3)), \(f(ci.upper, 3))]"
            }
            print("  " + pad("\(a) − \(b)", 50) + cells.joined(separator: "   "))
        }
        for r in replay where r.constantScores > 0 {
            print("warning: \(r.policy) scored every candidate the same for \(r.constantScores) of \(roster.count) students: its metrics there are chance.")
        }
    }

    /// Prints the simulation's tables: served and own-ranking NDCG@10 curves, the final metrics,
    /// and generalization on never-served items against the linear oracle.
    func printSimulation(_ results: [SimulationPolicyResult], catalog: Catalog, itemNoun: String) {
        let checkpoints = results[0].checkpoints
        let width = 26
        var rng = SplitMix64(seed: seed)
        for (title, metric) in [("NDCG@10 of the cards served next (the batch as served: probes and bands included) vs the students' taste, after n swipes",
                                 \SimulationPolicyResult.servedNDCG),
                                ("NDCG@10 of each policy's own top-10 unseen cards (the engine's posterior ranking), after n swipes",
                                 \SimulationPolicyResult.ndcg)] {
            print("")
            print(title)
            print(pad("policy", width) + checkpoints.map { pad("n=\($0)", 8, left: true) }.joined() + "   95% CI at n=\(checkpoints.last!)")
            for r in results {
                let values = r[keyPath: metric]
                let means = SimulationPolicyResult.means(values)
                let ci = Bootstrap.meanInterval(values.last!, using: &rng)
                print(pad(r.policy.rawValue, width) + means.map { pad(f($0, 3), 8, left: true) }.joined()
                      + "   [\(f(ci.lower, 3)), \(f(ci.upper, 3))]")
            }
        }
        print("")
        print(pad("policy", width) + pad("P@10", 8, left: true) + pad("likes", 8, left: true) + pad("cosine", 8, left: true)
              + pad("cover", 8, left: true) + pad("divers", 8, left: true) + pad("novel", 8, left: true) + pad("geo err", 9, left: true)
              + pad("general", 9, left: true) + pad("gap", 7, left: true))
        for r in results {
            let likes = r.likeRate.dropFirst().flatMap { $0 }
            let cosine = SimulationPolicyResult.means(r.cosine).last!
            let general = r.generalization.isEmpty ? Double.nan : r.generalization.reduce(0, +) / Double(r.generalization.count)
            let gap = EvaluationReport.gapClosed(r.policy, in: results)
            print(pad(r.policy.rawValue, width) + pad(f(SimulationPolicyResult.means(r.precision).last!, 3), 8, left: true)
                  + pad(f(likes.reduce(0, +) / Double(max(1, likes.count)), 3), 8, left: true)
                  + pad(cosine.isNaN ? "-" : f(cosine, 3), 8, left: true) + pad(f(r.coverage, 3), 8, left: true)
                  + pad(f(r.diversity, 2), 8, left: true) + pad(r.novelty.isNaN ? "-" : f(r.novelty, 2), 8, left: true)
                  + pad(f(r.geoMixError, 3), 9, left: true) + pad(general.isNaN ? "-" : f(general, 3), 9, left: true)
                  + pad(gap.isNaN ? "-" : f(gap * 100, 0) + "%", 7, left: true))
        }
        print("")
        let relevant = SimulationEvaluator<SchoolMatcher>.relevantCount(catalogSize: catalog.count)
        print("P@10: share of the top 10 among each student's \(relevant) truly best unseen \(itemNoun)s (final). likes: like rate of all swipes.")
        print("cosine: learned vs hidden weights (final; logistic students only). cover: distinct \(itemNoun)s served / \(catalog.count).")
        print("divers: mean pairwise feature distance within a batch. novel: mean −log2 popularity share.")
        print("geo err: largest gap from the 50/30/20 band mix.")
        print("general: NDCG@10 of the final scores over the \(itemNoun)s no policy served the student; gap: the share of the gap")
        print("from profile_only to linear_oracle (the best linear fit of the true taste) closed on them.")
    }

    /// The replay's per-student metrics as CSV, one row per (policy, student), students in
    /// order of first appearance; values with 17 significant digits, blank where undefined.
    static func perStudentCSV(_ replay: [ReplayPolicyResult], k: Int) -> String {
        let columns = ["precision@\(k)", "recall@\(k)", "ndcg@\(k)", "auc", "swipe_auc"]
        var text = CSVTable.line(["policy", "student_id"] + columns) + "\n"
        for result in replay {
            var order: [String] = [], values: [String: [String: Double]] = [:]
            for column in columns {
                for (student, value) in zip(result.students[column] ?? [], result.metrics[column] ?? []) {
                    if values[student] == nil { order.append(student) }
                    values[student, default: [:]][column] = value
                }
            }
            for student in order {
                let cells = columns.map { values[student]?[$0].map { String(format: "%.17g", $0) } ?? "" }
                text += CSVTable.line([result.policy, student] + cells) + "\n"
            }
        }
        return text
    }

    func f(_ x: Double, _ digits: Int) -> String { String(format: "%.\(digits)f", x) }
    func pad(_ s: String, _ n: Int, left: Bool = false) -> String {
        let fill = String(repeating: " ", count: max(0, n - s.count))
        return left ? fill + s : s + fill
    }
}
