import ArgumentParser
import Foundation
import SwipeRank

struct Recommend: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print the best schools for a student profile as the app's JSON response.")

    @Option(help: "The student profile JSON (see datasets/sample-profile.json).")
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
        guard let data = FileManager.default.contents(atPath: profile) else {
            throw CLIError("\(profile): cannot read the profile file")
        }
        let schools = try catalogOptions.load()
        let matcher = SchoolMatcher(schools: schools)
        do {
            let student = try StudentProfile.decode(json: data, source: profile)
            try printJSON(try matcher.recommend(profile: student, count: count), pretty: pretty)
        } catch let error as DataError {
            throw CLIError(error.description)
        }
    }
}
