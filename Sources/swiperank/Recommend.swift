import ArgumentParser
import Foundation
import SwipeRank
import SwipeRankColleges

struct Recommend: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print the best items for a profile as the app's JSON response (schools, or any catalog with --schema).")

    @Option(help: "The profile JSON (schools: datasets/sample-profile.json; with --schema an ItemProfile); - reads standard input.")
    var profile: String

    @Option(help: "How many recommendations (1…500).")
    var count: Int = 10

    @OptionGroup var catalogOptions: CatalogOptions

    @Flag(help: "Pretty-print the JSON.")
    var pretty = false

    func validate() throws {
        guard (1...500).contains(count) else { throw ValidationError("--count must be in 1…500, got \(count)") }
    }

    func run() throws {
        let data = try readInput(profile, what: "profile")
        if let schema = catalogOptions.schema {
            let matcher = try catalogOptions.loadItems(schema: schema)
            do {
                let user = try ItemProfile.decode(json: data, source: profile)
                try printJSON(try matcher.recommend(profile: user, count: count), pretty: pretty)
            } catch let error as DataError {
                throw CLIError(error.description)
            }
            return
        }
        let matcher = try catalogOptions.schoolMatcher()
        do {
            let student = try StudentProfile.decode(json: data, source: profile)
            try printJSON(try matcher.recommend(profile: student, count: count), pretty: pretty)
        } catch let error as DataError {
            throw CLIError(error.description)
        }
    }
}
