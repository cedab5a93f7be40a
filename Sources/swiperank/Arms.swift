import ArgumentParser
import Foundation
import Logging
import SwipeRankEvaluation
import SwipeRankServer
import Synchronization

/// `swiperank arms`: an A/B test's online metrics per arm, from the service's own log.
struct Arms: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Report an A/B test (serve --experiment): each arm's like rate, organic and IPS probe like rates, save share and swipes to the first save, with bootstrap intervals over students and each arm's difference from the first.",
        discussion: """
        Reads the default catalog's students from the store. A student's arm is the one named by their last logged \
        deck; students served without an experiment are reported as "none". Intervals resample students (a student's \
        swipes are not independent), seeded.
        """)

    @Option(help: "sqlite (the --database file, default) or a postgres:// URL (env SWIPERANK_STORE).")
    var store: String?

    @Option(help: "The SQLite file (env SWIPERANK_DATABASE; default swiperank.sqlite).")
    var database: String?

    @Option(help: "The reference arm, reported first (differences are from it); default: the first by name.")
    var reference: String?

    @Option(help: "Bootstrap resamples (1…100000).")
    var resamples = 1_000

    @Option(help: "Seeds the resampling.")
    var seed: UInt64 = 1

    func validate() throws {
        guard (1...100_000).contains(resamples) else { throw ValidationError("--resamples must be in 1…100000, got \(resamples)") }
    }

    func run() async throws {
        let env = ProcessInfo.processInfo.environment
        let name = store ?? env["SWIPERANK_STORE"] ?? "sqlite"
        let path = database ?? env["SWIPERANK_DATABASE"] ?? "swiperank.sqlite"
        let read = Mutex<[ExperimentStudent]>([])
        try await withStore(name, sqlitePath: path, mustExist: true, logger: Logger(label: "swiperank.arms")) { store, _ in
            do {
                let students = try await ExperimentStudent.read(from: store)
                read.withLock { $0 = students }
            } catch {
                throw CLIError("reading the store: \(error)")
            }
        }
        let logs = read.withLock { $0 }.map { student in
            ArmStudentLog(arm: student.arm ?? "none",
                          swipes: student.swipes.map { .init(liked: $0.liked, isProbe: $0.isProbe, propensity: $0.propensity) },
                          swipesBeforeFirstSave: student.swipesBeforeFirstSave)
        }
        guard !logs.isEmpty else { throw CLIError("\(name == "sqlite" ? path : "the store"): no students logged") }
        if let reference, !logs.contains(where: { $0.arm == reference }) {
            throw CLIError("--reference \(reference): no student was served by that arm (arms: \(Set(logs.map(\.arm)).sorted().joined(separator: ", ")))")
        }
        let report = ArmReport(logs: logs, order: reference.map { [$0] }, resamples: resamples, seed: seed)
        print(report.table)
    }
}
