import ArgumentParser
import Foundation
import SwipeRank
import SwipeRankColleges
import SwipeRankEvaluation
import SwipeRankNumerics

/// `swiperank tune`: the hyperparameter procedure (`HyperparameterSearch`) on the college catalog.
struct Tune: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Choose the learner's prior precision, forgetting and bias by the documented procedure: a grid served to simulated tuning students (not the evaluated ones), compared with the current configuration paired over students; the held-out replay beside it.")

    @Option(help: "Tuning students: how many random profiles (drawn from --seed, not the evaluation's students).")
    var tuningStudents: Int = 200

    @Option(help: "Swipes per tuning student (10…500).")
    var swipes: Int = 40

    @Option(help: "The tuning students' taste: hidden (outside the engine's model class, the default) or logistic.")
    var studentModel: StudentModelOption = .hidden

    @Option(help: "Prior precisions τ to try, comma-separated.")
    var priorPrecisions: String = "1,3,10"

    @Option(help: "Stable-phase forgetting factors λ to try, comma-separated, each in (0, 1].")
    var forgettings: String = "0.9,0.97,1"

    @Option(help: "Bias settings to try: off, on or both.")
    var bias: String = "both"

    @Option(help: "The students CSV of the held-out replay (empty: no replay).")
    var students: String = "datasets/students.csv"

    @Option(help: "The logged swipes of the held-out replay (empty: no replay).")
    var interactions: String = "datasets/swipes.csv"

    @Option(help: "The seed (tuning profiles, answers, probes, bootstrap).")
    var seed: UInt64 = 7

    @OptionGroup var catalogOptions: CatalogOptions

    func values(_ text: String, _ name: String, _ valid: (Double) -> Bool) throws -> [Double] {
        let parts = text.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
        let numbers = parts.compactMap(Double.init)
        guard !parts.isEmpty, numbers.count == parts.count, numbers.allSatisfy(valid) else {
            throw ValidationError("\(name) must be a comma-separated list of valid numbers, got \(text)")
        }
        return numbers
    }

    func validate() throws {
        guard catalogOptions.schema == nil else { throw ValidationError("tune simulates college students; --schema is not supported yet") }
        guard (1...100_000).contains(tuningStudents) else { throw ValidationError("--tuning-students must be in 1…100000") }
        guard (10...500).contains(swipes) else { throw ValidationError("--swipes must be in 10…500") }
        _ = try values(priorPrecisions, "--prior-precisions") { $0.isFinite && $0 > 0 && $0 <= 1e6 }
        _ = try values(forgettings, "--forgettings") { $0.isFinite && $0 > 0 && $0 <= 1 }
        guard ["off", "on", "both"].contains(bias) else { throw ValidationError("--bias must be off, on or both, got \(bias)") }
    }

    func run() throws {
        let engine = SwipeEngine(matcher: try catalogOptions.schoolMatcher())
        let schools = engine.matcher.schools
        var rng = SplitMix64(seed: seed)
        let tuning = (0..<tuningStudents).map {
            DatasetStudent(id: "tune-\($0)", profile: SchoolSimulation.randomProfile(schools: schools, using: &rng))
        }
        var replay: (students: [DatasetStudent<StudentProfile>], log: [Interaction])?
        if !students.isEmpty && !interactions.isEmpty {
            do {
                let (roster, _) = try StudentsFile.read(CSVTable(contentsOfFile: students))
                let (log, _) = try InteractionsFile.read(CSVTable(contentsOfFile: interactions), itemIDs: Set(engine.matcher.catalog.ids),
                                                         studentIDs: Set(roster.map(\.id)))
                replay = (roster, log)
            } catch {
                throw CLIError("\(error)")
            }
        }
        let grid = HyperparameterSearch<SchoolMatcher>.grid(
            priorPrecisions: try values(priorPrecisions, "--prior-precisions") { _ in true },
            forgettings: try values(forgettings, "--forgettings") { _ in true },
            biases: bias == "both" ? [false, true] : [bias == "on"])
        let search = HyperparameterSearch(engine: engine,
                                          taste: studentModel == .hidden ? SimulationEvaluator<SchoolMatcher>.hiddenTaste(schools: schools) : nil)
        let start = Date()
        let outcomes = try search.run(candidates: grid, students: tuning, swipes: swipes, replay: replay, seed: seed)
        let baseline = HyperparameterSearch<SchoolMatcher>.Candidate(engine.configuration)
        print("Tuning: \(tuning.count) \(studentModel.rawValue) students (seed \(seed)) × \(swipes) swipes × \(outcomes.count) candidates (\(String(format: "%.1f", Date().timeIntervalSince(start))) s)")
        print("objective: each student's mean served NDCG@10 after 10, 20, … swipes; Δ: minus the current configuration (\(baseline)), paired, 95% CI")
        print("candidate                       objective   Δ vs current [95% CI]         replay AUC  replay NDCG@10")
        for o in outcomes {
            let name = o.candidate.description + (o.candidate == baseline ? " (current)" : "")
            let delta = String(format: "%+.4f [%+.4f, %+.4f]", o.difference.mean, o.difference.lower, o.difference.upper)
            print(name.padding(toLength: 32, withPad: " ", startingAt: 0) + String(format: "%9.4f", o.objective) + "   "
                  + delta.padding(toLength: 28, withPad: " ", startingAt: 0)
                  + (o.replayAUC.isNaN ? "         -" : String(format: "%10.3f", o.replayAUC))
                  + (o.replayNDCG.isNaN ? "               -" : String(format: "%16.3f", o.replayNDCG)))
        }
        let best = outcomes[0]
        if best.candidate == baseline {
            print("chosen: the current configuration (\(baseline)) is the best of the grid")
        } else if best.difference.lower > 0 {
            print("chosen: \(best.candidate): better than the current configuration, its interval above 0")
        } else {
            print("chosen: keep the current configuration; the best (\(best.candidate)) is within noise of it (interval includes 0)")
        }
    }
}
