import ArgumentParser
import Foundation
import SwipeRank

@main
struct SwipeRankCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "swiperank",
        abstract: "A matching and recommendation engine for swipe-based apps.",
        subcommands: [Evaluate.self, Recommend.self, Demo.self, Generate.self])
}

/// Where the catalog files are; shared by every subcommand that needs schools.
struct CatalogOptions: ParsableArguments {
    @Option(help: "The schools CSV.")
    var catalog: String = "datasets/schools.csv"

    @Option(help: "The bachelor's programs CSV.")
    var majors: String = "datasets/school_majors.csv"

    func load() throws -> SchoolCatalog {
        do { return try SchoolCatalog(schoolsPath: catalog, majorsPath: majors) }
        catch { throw CLIError(error.description) }
    }
}

/// An error printed as `error: …` with exit code 1, without a stack trace.
struct CLIError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// Encodes the app's response shape: snake_case keys (declared on the types), sorted for
/// stable output.
func printJSON<T: Encodable>(_ value: T, pretty: Bool) throws {
    let encoder = JSONEncoder()
    encoder.outputFormatting = pretty ? [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes] : [.sortedKeys, .withoutEscapingSlashes]
    let data = try encoder.encode(value)
    print(String(decoding: data, as: UTF8.self))
}
