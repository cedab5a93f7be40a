import ArgumentParser
import Foundation
import SwipeRank
import SwipeRankColleges

@main
struct SwipeRankCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "swiperank",
        abstract: "A matching and recommendation engine for swipe-based apps.",
        subcommands: [Evaluate.self, EvaluateGroups.self, Recommend.self, Demo.self, Generate.self, FitPrior.self, FitFactors.self, Tune.self, Serve.self, Token.self, Export.self, Arms.self, CatalogCommand.self, BareRoute.self])

    /// Installs the server executor a server command asks for (`ServerExecutor`) before
    /// anything else runs, then parses and runs the command.
    static func main() async {
        ServerExecutor.install(arguments: Array(CommandLine.arguments.dropFirst()), environment: ProcessInfo.processInfo.environment)
        await Self.main(nil)
    }
}

/// Where the catalog files are; shared by every subcommand that needs a catalog. Without
/// `--schema` the catalog is the college one (schools + majors); with it, `--catalog` is any
/// item CSV read through that JSON schema.
struct CatalogOptions: ParsableArguments {
    @Option(help: "The schools CSV, or with --schema any item CSV.")
    var catalog: String = "datasets/schools.csv"

    @Option(help: "The bachelor's programs CSV (schools only).")
    var majors: String = "datasets/school_majors.csv"

    @Option(help: "A JSON item schema (format in datasets/README.md): read --catalog as a generic catalog.")
    var schema: String?

    @Option(help: "With --schema: a text attribute naming each item's region (discovery prefers regions not shown yet).")
    var regionAttribute: String?

    @Option(help: "Schools only: the students' relative terms (env SWIPERANK_TERM_BASIS): standard (distance, budget, academic_fit, major_fit) or expanded (also budget_over and distance_near, shapes a linear weight cannot bend; it changes the model; `serve` migrates students stored under the other basis).")
    var termBasis: SchoolTermBasis?

    func validate() throws {
        if schema == nil && regionAttribute != nil { throw ValidationError("--region-attribute needs --schema") }
        if schema != nil && termBasis != nil { throw ValidationError("--term-basis is for the school catalog, not with --schema") }
    }

    func load() throws -> SchoolCatalog {
        do { return try SchoolCatalog(schoolsPath: ShippedData.resolve(catalog), majorsPath: ShippedData.resolve(majors)) }
        catch { throw CLIError(error.description) }
    }

    /// The term basis: `--term-basis`, else SWIPERANK_TERM_BASIS, else standard.
    func resolvedTermBasis() throws -> SchoolTermBasis {
        if let termBasis { return termBasis }
        guard let raw = ProcessInfo.processInfo.environment["SWIPERANK_TERM_BASIS"], !raw.isEmpty else { return .standard }
        guard let basis = SchoolTermBasis(rawValue: raw) else {
            throw CLIError("SWIPERANK_TERM_BASIS: \"\(raw)\" is not one of \(SchoolTermBasis.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        return basis
    }

    /// The school matcher over `--catalog` and `--majors` with the term basis.
    func schoolMatcher() throws -> SchoolMatcher {
        SchoolMatcher(schools: try load(), termBasis: try resolvedTermBasis())
    }

    /// The generic matcher over `--catalog` read with `--schema`.
    func loadItems(schema path: String) throws -> ItemMatcher {
        let catalog: Catalog
        do {
            catalog = try Catalog(table: CSVTable(contentsOfFile: self.catalog), schema: ItemSchema.load(contentsOfFile: path))
        } catch {
            throw CLIError(error.description)
        }
        if let regionAttribute, catalog.textAttribute(named: regionAttribute) == nil {
            throw CLIError("--region-attribute \"\(regionAttribute)\" is not a text attribute of \(self.catalog) (has: \(catalog.textAttributeNames.joined(separator: ", ")))")
        }
        return ItemMatcher(catalog: catalog, regionAttribute: regionAttribute)
    }
}

extension SchoolTermBasis: ExpressibleByArgument {}

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
