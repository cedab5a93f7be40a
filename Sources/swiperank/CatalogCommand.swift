import ArgumentParser
import Foundation
import Logging
import SwipeRank
import SwipeRankColleges
import SwipeRankEvaluation
import SwipeRankStore

/// `swiperank catalog`: what a new catalog file changes, and pushing it into a running
/// service's store.
struct CatalogCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "catalog",
        abstract: "Compare catalog versions, import a new one into a running service's store, build a catalog cache, generate a large one.",
        subcommands: [CatalogDiff.self, CatalogImport.self, CatalogBuild.self, CatalogSynthesize.self])
}

/// `swiperank catalog synthesize`: a generated restaurants-schema catalog of any size
/// (`SyntheticCatalog`, the generator of the scale benchmarks and the index tests), for
/// measuring large catalogs with the real service (`Benchmarks/catalog-start`).
struct CatalogSynthesize: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "synthesize",
        abstract: "Write a generated restaurants-schema catalog CSV of N items (read it with datasets/restaurants/restaurants.schema.json).")

    @Option(help: "How many items (1…100000000).")
    var items: Int

    @Option(help: "The generator's seed: the same seed writes the same bytes.")
    var seed: UInt64 = 30

    @Option(help: "The CSV file to write.")
    var output: String

    func validate() throws {
        guard (1...100_000_000).contains(items) else { throw ValidationError("--items must be in 1…100000000") }
    }

    func run() throws {
        do {
            try Data(SyntheticCatalog.csv(items: items, seed: seed).utf8).write(to: URL(fileURLWithPath: output), options: .atomic)
        } catch {
            throw CLIError("\(output): cannot write (\(error.localizedDescription))")
        }
    }
}

/// `swiperank catalog build`: writes the binary catalog cache `serve --catalog-cache` starts
/// from, ahead of the first start (or in a deploy step, so no instance parses the CSV).
struct CatalogBuild: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "build",
        abstract: "Write the binary catalog cache of an item catalog (for serve --catalog-cache).",
        discussion: """
        The cache holds the built catalog (ids, names, attributes, locations, the feature matrix), keyed by the CSV's \
        size and content hash and the schema, with a checksum over the file: `serve --schema S --catalog C \
        --catalog-cache FILE` then starts without parsing the CSV. Written atomically (a temporary file, then a rename). \
        Format: docs/operations.md, "Catalog cache".
        """)

    @Option(help: "The item CSV.")
    var catalog: String

    @Option(help: "The JSON item schema.")
    var schema: String

    @Option(help: "The cache file to write.")
    var output: String

    func run() throws {
        let report: String
        do { report = try build() } catch { throw CLIError(error.description) }
        print(report)
    }

    /// Builds and writes the cache; returns the line to print.
    func build() throws(DataError) -> String {
        let started = ContinuousClock.now
        let itemSchema = try ItemSchema.load(contentsOfFile: ShippedData.resolve(schema))
        let csvPath = ShippedData.resolve(catalog)
        let key = try CatalogCache.Key(catalogFile: csvPath, schema: itemSchema)
        let built = try Catalog(table: CSVTable(contentsOfFile: csvPath), schema: itemSchema)
        try CatalogCache.write(built, key: key, to: output)
        let size = (try? FileManager.default.attributesOfItem(atPath: output)[.size] as? Int) ?? 0
        return "\(output): \(built.count) items × \(built.dimension) features, \(size) bytes (\(ContinuousClock.now - started))"
    }
}

/// Where the store is, for the catalog commands.
struct CatalogStoreOptions: ParsableArguments {
    @Option(help: "sqlite (the --database file) or a postgres:// URL (env SWIPERANK_STORE).")
    var store: String?

    @Option(help: "The service's SQLite file (env SWIPERANK_DATABASE).")
    var database: String?

    /// The store named, if any.
    var named: (name: String, path: String)? {
        let env = ProcessInfo.processInfo.environment
        let name = store ?? env["SWIPERANK_STORE"]
        let path = database ?? env["SWIPERANK_DATABASE"]
        if name == nil && path == nil { return nil }
        return (name ?? "sqlite", path ?? "swiperank.sqlite")
    }
}

/// Two catalog versions, item by item.
struct CatalogDifference {
    var added: [String] = []
    var removed: [String] = []
    /// Item → the columns whose text differs.
    var changed: [(id: String, columns: [String])] = []

    var isEmpty: Bool { added.isEmpty && removed.isEmpty && changed.isEmpty }

    /// Compares two tables by the id column (rows keyed by id; the last row of an id wins, as
    /// the catalog itself rejects duplicates before this matters).
    static func between(_ old: [String: [String: String]], _ new: [String: [String: String]], newOrder: [String]) -> CatalogDifference {
        var d = CatalogDifference()
        for id in newOrder {
            guard let before = old[id] else { d.added.append(id); continue }
            let after = new[id]!
            let columns = Set(before.keys).union(after.keys).filter { (before[$0] ?? "") != (after[$0] ?? "") }.sorted()
            if !columns.isEmpty { d.changed.append((id, columns)) }
        }
        d.removed = old.keys.filter { new[$0] == nil }.sorted()
        return d
    }

    /// The rows of a table by id, and the ids in order.
    static func rows(_ table: CSVTable, idColumn: String) throws -> ([String: [String: String]], [String]) {
        let id = try table.column(named: idColumn)
        var rows: [String: [String: String]] = [:]
        var order: [String] = []
        for row in table.rows {
            let key = row[id].trimmingCharacters(in: .whitespaces)
            if rows[key] == nil { order.append(key) }
            rows[key] = Dictionary(uniqueKeysWithValues: zip(table.header, row.fields))
        }
        return (rows, order)
    }

    /// A short report.
    func summary(limit: Int = 10) -> String {
        var lines = ["\(added.count) added, \(removed.count) removed, \(changed.count) changed"]
        func list(_ name: String, _ ids: [String]) {
            guard !ids.isEmpty else { return }
            lines.append("  \(name): " + ids.prefix(limit).joined(separator: ", ") + (ids.count > limit ? ", … (\(ids.count - limit) more)" : ""))
        }
        list("added", added)
        list("removed", removed)
        list("changed", changed.map { "\($0.id) (\($0.columns.joined(separator: " ")))" })
        return lines.joined(separator: "\n")
    }
}

/// Shared by diff and import: loads a catalog file as the service would (validated by building
/// the engine's catalog), and the catalog a store serves (a file plus the store's change log).
struct CatalogFiles: ParsableArguments {
    @Option(help: "A JSON item schema: the files are generic catalogs (default: schools).")
    var schema: String?

    @Option(help: "Schools: the bachelor's programs CSV.")
    var majors: String = "datasets/school_majors.csv"

    /// The id column of these catalogs.
    func idColumn() throws -> String {
        guard let schema else { return "unitid" }
        do { return try ItemSchema.load(contentsOfFile: schema).idColumn } catch { throw CLIError(error.description) }
    }

    /// Parses and validates a catalog file: it must build as `serve` would build it.
    func load(_ path: String) throws -> CSVTable {
        do {
            let table = try CSVTable(contentsOfFile: path)
            try validate(table)
            return table
        } catch let error as DataError {
            throw CLIError(error.description)
        }
    }

    func validate(_ table: CSVTable) throws {
        do {
            if let schema {
                _ = try Catalog(table: table, schema: ItemSchema.load(contentsOfFile: schema))
            } else {
                let majors = try CSVTable(contentsOfFile: self.majors)
                _ = try SchoolCatalog(schools: table, majors: SchoolCatalog.programs(majors, ofSchoolsIn: table))
            }
        } catch {
            throw CLIError(error.description)
        }
    }
}

/// The catalog changes a store's log holds, applied to a table's rows.
func applyStoredChanges(_ store: any CatalogLog, to rows: inout [String: [String: String]], order: inout [String]) async throws -> Int {
    var sequence = 0
    while true {
        let page = try await store.catalogChanges(after: sequence, limit: 10_000)
        for change in page {
            if let fields = change.fields {
                if rows[change.itemID] == nil { order.append(change.itemID) }
                rows[change.itemID] = fields
            } else {
                rows[change.itemID] = nil
            }
            sequence = change.seq
        }
        if page.count < 10_000 { break }
    }
    order.removeAll { rows[$0] == nil }
    return sequence
}

/// The item ids each student's log touched (served, swiped, saved).
func touchedItems(of studentID: String, in store: any StudentStore) async throws -> Set<String> {
    var touched = Set<String>()
    var cursor = 0
    while true {
        let page = try await store.events(of: studentID, after: cursor, kinds: [.served, .swipe, .save], limit: 1_000)
        guard let last = page.last else { break }
        cursor = last.seq
        for event in page {
            guard let object = try? JSONSerialization.jsonObject(with: event.payload) as? [String: Any] else { continue }
            if let id = object["school_id"] as? String { touched.insert(id) }
            for card in object["cards"] as? [[String: Any]] ?? [] { if let id = card["card_id"] as? String { touched.insert(id) } }
        }
    }
    return touched
}

struct CatalogDiff: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "diff",
        abstract: "What a new catalog file changes against an old one (added, removed, changed items and columns), and with a store which students it affects.")

    @Argument(help: "The catalog file served now (with a store: the file the service starts from; its logged edits are applied).")
    var old: String

    @Argument(help: "The new catalog file.")
    var new: String

    @OptionGroup var files: CatalogFiles
    @OptionGroup var storeOptions: CatalogStoreOptions

    @Option(help: "How many ids to list per kind of change.")
    var limit = 10

    func run() async throws {
        let idColumn = try files.idColumn()
        let oldTable = try files.load(old), newTable = try files.load(new)
        var (oldRows, oldOrder) = try CatalogDifference.rows(oldTable, idColumn: idColumn)
        let (newRows, newOrder) = try CatalogDifference.rows(newTable, idColumn: idColumn)
        guard let (name, path) = storeOptions.named else {
            print(CatalogDifference.between(oldRows, newRows, newOrder: newOrder).summary(limit: limit))
            return
        }
        try await withStore(name, sqlitePath: path, mustExist: true, logger: Logger(label: "swiperank.catalog")) { store, _ in
            let sequence = try await applyStoredChanges(store, to: &oldRows, order: &oldOrder)
            let difference = CatalogDifference.between(oldRows, newRows, newOrder: newOrder)
            if sequence > 0 { print("served now: \(old) with the store's \(sequence) logged edits") }
            print(difference.summary(limit: limit))
            let hit = Set(difference.removed).union(difference.changed.map(\.id))
            var students = 0, affected: [String] = []
            var after: String?
            while true {
                let ids = try await store.studentIDs(after: after, limit: 500)
                guard let last = ids.last else { break }
                after = last
                for id in ids {
                    students += 1
                    if !hit.isDisjoint(with: try await touchedItems(of: id, in: store)) { affected.append(id) }
                }
            }
            print("students: \(affected.count) of \(students) were served, swiped or saved a removed or changed item"
                  + (affected.isEmpty ? "" : " (" + affected.prefix(limit).joined(separator: ", ") + (affected.count > limit ? ", …" : "") + ")")
                  + "; they are migrated on their next request or by the start-up sweep, their swipes kept")
        }
    }
}

struct CatalogImport: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract: "Make a running service serve a new catalog file without a restart: its differences from what the store serves are appended to the store's catalog change log, which every instance follows.")

    @Argument(help: "The new catalog file.")
    var new: String

    @Option(help: "The catalog file the service was started with (`serve --catalog`).")
    var catalog: String = "datasets/schools.csv"

    @OptionGroup var files: CatalogFiles
    @OptionGroup var storeOptions: CatalogStoreOptions

    func run() async throws {
        guard let (name, path) = storeOptions.named else { throw ValidationError("name the service's store: --database FILE or --store URL") }
        let idColumn = try files.idColumn()
        let baseTable = try files.load(catalog), newTable = try files.load(new)
        guard baseTable.header == newTable.header else {
            throw CLIError("\(new) has other columns than \(catalog) (\(newTable.header.joined(separator: ","))): the service's columns are fixed at start")
        }
        let (newRows, newOrder) = try CatalogDifference.rows(newTable, idColumn: idColumn)
        try await withStore(name, sqlitePath: path, mustExist: true, logger: Logger(label: "swiperank.catalog")) { store, _ in
            for _ in 0..<3 {
                var (rows, order) = try CatalogDifference.rows(baseTable, idColumn: idColumn)
                let sequence = try await applyStoredChanges(store, to: &rows, order: &order)
                let difference = CatalogDifference.between(rows, newRows, newOrder: newOrder)
                print(difference.summary())
                guard !difference.isEmpty else { print("nothing to import: the store already serves \(new)"); return }
                let now = Int64((Date().timeIntervalSince1970 * 1000).rounded())
                let changes = (difference.added + difference.changed.map(\.id)).map { CatalogChange(itemID: $0, fields: newRows[$0], createdAt: now) }
                    + difference.removed.map { CatalogChange(itemID: $0, fields: nil, createdAt: now) }
                if let new = try await store.appendCatalogChanges(changes, expectedSequence: sequence) {
                    print("imported: \(changes.count) changes, catalog sequence \(sequence) → \(new); running instances apply them within a poll (250 ms) and a rebuild")
                    return
                }
                print("the catalog changed while importing; comparing again")
            }
            throw CLIError("the catalog kept changing while importing; try again")
        }
    }
}
