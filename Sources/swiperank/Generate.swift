import ArgumentParser
import Foundation
import SwipeRank
import SwipeRankEvaluation

struct Generate: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Generate simulated students and their logged swipes (byte-identical for the same seed).",
        discussion: """
        Colleges: writes random students.csv and their swipes.csv. With --schema (any catalog): reads the users \
        of --users and writes only their swipes.csv.
        """)

    @Option(help: "The seed.")
    var seed: UInt64 = 2026

    @Option(help: "How many students (1…100000).")
    var students: Int = 200

    @Option(help: "Swipes per student (1…500).")
    var swipes: Int = 40

    @Option(help: "The folder to write students.csv and swipes.csv into.")
    var output: String = "datasets"

    @Option(help: "With --schema: the users CSV whose swipes to simulate.")
    var users: String?

    @OptionGroup var catalogOptions: CatalogOptions

    func validate() throws {
        guard (1...100_000).contains(students) else { throw ValidationError("--students must be in 1…100000") }
        guard (1...500).contains(swipes) else { throw ValidationError("--swipes must be in 1…500") }
        guard (catalogOptions.schema == nil) == (users == nil) else { throw ValidationError("--users and --schema go together") }
    }

    func run() throws {
        if let schema = catalogOptions.schema, let users {
            let matcher = try catalogOptions.loadItems(schema: schema)
            let roster: [DatasetStudent<ItemProfile>]
            do { roster = try ItemUsersFile.read(CSVTable(contentsOfFile: users), matcher: matcher).0 } catch { throw CLIError(error.description) }
            let log = try DatasetGenerator(engine: SwipeEngine(matcher: matcher), opinionGroups: nil)
                .generate(seed: seed, students: roster, swipesPerStudent: swipes)
            let folder = URL(fileURLWithPath: output, isDirectory: true)
            try createOutputFolder(output)
            try writeOutput(InteractionsFile.write(log), to: folder.appendingPathComponent("swipes.csv").path)
            print("wrote \(log.count) swipes of \(roster.count) users to \(folder.appendingPathComponent("swipes.csv").path)")
            return
        }
        let engine = SwipeEngine(matcher: try catalogOptions.schoolMatcher())
        let (roster, log) = try DatasetGenerator(engine: engine).generate(seed: seed, students: students, swipesPerStudent: swipes)
        let folder = URL(fileURLWithPath: output, isDirectory: true)
        try createOutputFolder(output)
        try writeOutput(StudentsFile.write(roster), to: folder.appendingPathComponent("students.csv").path)
        try writeOutput(InteractionsFile.write(log), to: folder.appendingPathComponent("swipes.csv").path)
        print("wrote \(roster.count) students to \(folder.appendingPathComponent("students.csv").path)")
        print("wrote \(log.count) swipes to \(folder.appendingPathComponent("swipes.csv").path)")
    }
}
