import ArgumentParser
import Foundation
import SwipeRank
import SwipeRankEvaluation
import SwipeRankNumerics

struct EvaluateGroups: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "evaluate-groups",
        abstract: "Simulate friend groups swiping one deck until a match: the engine's group decks against random and popularity orders.")

    @Option(help: "Simulated groups (10…5000).")
    var groups: Int = 1000

    @Option(help: "Swipes each member makes alone before the group session (0…200).")
    var soloSwipes: Int = 20

    @Option(help: "Seed for members, tastes, answers and shuffles.")
    var seed: UInt64 = 1

    @Option(help: "Write groups.md and groups.csv into this folder.")
    var export: String?

    @OptionGroup var catalogOptions: CatalogOptions

    func validate() throws {
        guard (10...5000).contains(groups) else { throw ValidationError("--groups must be in 10…5000") }
        guard (0...200).contains(soloSwipes) else { throw ValidationError("--solo-swipes must be in 0…200") }
        guard catalogOptions.schema == nil else {
            throw ValidationError("evaluate-groups simulates college applicants; it does not take --schema")
        }
    }

    func run() throws {
        if let export { try createOutputFolder(export) }
        let engine = SwipeEngine(matcher: try catalogOptions.schoolMatcher())
        var simulation = GroupSimulation(engine: engine)
        simulation.soloSwipes = soloSwipes
        let decks: [GroupSimulation.Deck] = GroupStrategy.allCases.map { .learned(GroupAggregation(strategy: $0)) }
            + [.coldStart(.standard), .sharedShuffle, .memberShuffles, .popularity]
        let outcomes = try simulation.run(groups: groups, decks: decks, seed: seed)
        let summaries = GroupSimulation.summarize(outcomes, decks: decks, seed: seed)
        let report = GroupReport(summaries: summaries, outcomes: outcomes, groups: groups, soloSwipes: soloSwipes, seed: seed)
        print(report.table)
        if let export {
            try writeOutput(report.markdown, to: export + "/groups.md")
            try writeOutput(report.csv, to: export + "/groups.csv")
        }
    }
}
