import ArgumentParser
import Foundation
import SwipeRank
import SwipeRankEvaluation

struct Generate: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Generate simulated students and their logged swipes (byte-identical for the same seed).")

    @Option(help: "The seed.")
    var seed: UInt64 = 2026

    @Option(help: "How many students (1…100000).")
    var students: Int = 200

    @Option(help: "Swipes per student (1…500).")
    var swipes: Int = 40

    @Option(help: "The folder to write students.csv and swipes.csv into.")
    var output: String = "datasets"

    @OptionGroup var catalogOptions: CatalogOptions

    func validate() throws {
        guard (1...100_000).contains(students) else { throw ValidationError("--students must be in 1…100000") }
        guard (1...500).contains(swipes) else { throw ValidationError("--swipes must be in 1…500") }
    }

    func run() throws {
        let engine = SwipeEngine(matcher: SchoolMatcher(schools: try catalogOptions.load()))
        let (roster, log) = try DatasetGenerator(engine: engine).generate(seed: seed, students: students, swipesPerStudent: swipes)
        let folder = URL(fileURLWithPath: output, isDirectory: true)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try StudentsFile.write(roster).write(to: folder.appendingPathComponent("students.csv"), atomically: true, encoding: .utf8)
        try InteractionsFile.write(log).write(to: folder.appendingPathComponent("swipes.csv"), atomically: true, encoding: .utf8)
        print("wrote \(roster.count) students to \(folder.appendingPathComponent("students.csv").path)")
        print("wrote \(log.count) swipes to \(folder.appendingPathComponent("swipes.csv").path)")
    }
}
