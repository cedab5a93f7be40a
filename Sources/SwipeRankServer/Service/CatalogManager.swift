import Foundation
import Logging
import ServiceLifecycle
import SwipeRank
import SwipeRankStore
import Synchronization

/// Where the served catalog comes from, and how an engine is built over it: what the item API
/// needs to serve operators' edits.
public struct CatalogSource<M: ServableMatcher>: Sendable {
    /// The catalog file's table, read once: at start, or on the item API's first use (a start
    /// from the catalog cache parses no CSV).
    private let table: LazyTable
    /// The id column's name.
    public var idColumn: String
    /// Builds the engine (matcher, configuration, population prior, factors) over a table with
    /// `base`'s columns. A `DataError` naming a line says which row is wrong (line `i + 2` is row
    /// `i`, see `CSVTable(header:rows:source:)`).
    public var makeEngine: @Sendable (CSVTable) throws -> SwipeEngine<M>

    /// Creates a source over a table already read.
    ///
    /// - Parameters:
    ///   - base: The catalog file.
    ///   - idColumn: Its id column.
    ///   - makeEngine: The engine builder.
    public init(base: CSVTable, idColumn: String, makeEngine: @escaping @Sendable (CSVTable) throws -> SwipeEngine<M>) {
        self.table = LazyTable(table: base)
        self.idColumn = idColumn
        self.makeEngine = makeEngine
    }

    /// Creates a source whose table is read on first use (the first item request, or stored
    /// edits to apply at start).
    ///
    /// - Parameters:
    ///   - idColumn: The id column.
    ///   - makeEngine: The engine builder.
    ///   - loadBase: Reads the catalog file; its error is the item request's (and is logged).
    public init(idColumn: String, makeEngine: @escaping @Sendable (CSVTable) throws -> SwipeEngine<M>,
                loadBase: @escaping @Sendable () throws -> CSVTable) {
        self.table = LazyTable(load: loadBase)
        self.idColumn = idColumn
        self.makeEngine = makeEngine
    }

    /// The catalog file as loaded at start (its columns are every item's columns), read now if
    /// it was not yet.
    public func base() throws -> CSVTable { try table.value() }

    /// Whether the catalog file has been read.
    public var isBaseLoaded: Bool { table.isLoaded }
}

/// A table read once, on first use.
private final class LazyTable: Sendable {
    private let load: @Sendable () throws -> CSVTable
    private let slot: Mutex<CSVTable?>

    init(table: CSVTable) {
        load = { table }
        slot = Mutex(table)
    }

    init(load: @escaping @Sendable () throws -> CSVTable) {
        self.load = load
        slot = Mutex(nil)
    }

    var isLoaded: Bool { slot.withLock { $0 != nil } }

    func value() throws -> CSVTable {
        try slot.withLock { table in
            if let table { return table }
            let loaded = try load()
            table = loaded
            return loaded
        }
    }
}

/// One operator edit, as the item API received it.
struct ItemEdit: Sendable {
    enum Operation: String, Sendable { case put, patch, delete }
    var operation: Operation
    var itemID: String
    /// Column → value (JSON scalars; null is a missing value). Empty for a delete.
    var fields: [String: JSONValue]
    /// Where it came from, for errors: `$`, or `$[3]` (line 4 of a bulk upload).
    var path: String
    /// The bulk upload's line (nil for a single-item request).
    var line: Int?
}

/// A rejected edit: where, which item, what.
struct ItemEditError: Sendable, Error {
    var path: String
    var line: Int?
    var itemID: String
    var field: String?
    var reason: String
    /// Whether the edit named an item that does not exist (404 for a single request).
    var notFound = false

    var json: JSONValue {
        var o: [String: JSONValue] = ["path": .string(path), "item_id": .string(itemID), "reason": .string(reason)]
        if let line { o["line"] = .number(Double(line)) }
        if let field { o["field"] = .string(field) }
        return .object(o)
    }
}

/// The catalog an instance serves: the start-up file with the store's change log applied in
/// order. Every edit rebuilds the whole catalog — standardization statistics are refitted over
/// the new set of items, so every item's features (and every student's learned state, which
/// the next request migrates) follow — and installs the new engine atomically. Writers are
/// serialized in the process and by the store's sequence check across instances; other
/// instances pick changes up by polling the sequence.
final class CatalogManager<M: ServableMatcher>: Sendable {
    struct Items: Sendable {
        var rows: [String: [String]] = [:]
        /// Item ids in catalog order (nil: deleted), and each live id's index there.
        var order: [String?] = []
        var position: [String: Int] = [:]
        var sequence = 0

        mutating func apply(_ id: String, _ row: [String]?) {
            if let row {
                if rows.updateValue(row, forKey: id) == nil {
                    position[id] = order.count
                    order.append(id)
                }
            } else if rows.removeValue(forKey: id) != nil, let i = position.removeValue(forKey: id) {
                order[i] = nil
            }
        }

        /// The live ids in order.
        var ids: [String] { order.compactMap { $0 } }
    }

    let source: CatalogSource<M>
    let store: any CatalogLog
    let logger: Logger
    /// Called with each newly built engine and the sequence it includes.
    let install: @Sendable (SwipeEngine<M>, Int) -> Void
    private let state: Mutex<Items>
    /// The catalog file's header and id column, once it has been read (`layout()`).
    private let loaded = Mutex<Layout?>(nil)
    private let writer = KeyedLock()
    /// The most rejected rows listed in an error.
    static var maxReportedErrors: Int { 20 }

    /// The columns of every item.
    struct Layout: Sendable {
        var header: [String]
        var idIndex: Int
    }

    init(source: CatalogSource<M>, store: any CatalogLog, logger: Logger,
         install: @escaping @Sendable (SwipeEngine<M>, Int) -> Void) throws {
        self.source = source
        self.store = store
        self.logger = logger
        self.install = install
        state = Mutex(Items())
        // A table already read is checked now (its id column); a lazy one on first use.
        if source.isBaseLoaded { _ = try layout() }
    }

    /// The catalog file's layout, reading the file and seeding the items from it on first use.
    /// Nothing is applied to the items before (`catchUpLocked` reads the file before the first
    /// change), so the seeded items keep only the sequence.
    func layout() throws -> Layout {
        if let layout = loaded.withLock({ $0 }) { return layout }
        let base = try source.base()
        let idIndex = try base.column(named: source.idColumn)
        var seeded = Items()
        for row in base.rows { seeded.apply(row.fields[idIndex].trimmingCharacters(in: .whitespaces), row.fields) }
        return loaded.withLock { layout in
            if let layout { return layout }
            state.withLock { items in
                seeded.sequence = items.sequence
                items = seeded
            }
            let made = Layout(header: base.header, idIndex: idIndex)
            layout = made
            return made
        }
    }

    /// The change log's sequence this instance serves.
    var sequence: Int { state.withLock { $0.sequence } }

    /// An item's current fields, or nil.
    func item(_ id: String) throws -> [String: String]? {
        let layout = try loadedLayout()
        guard let row = state.withLock({ $0.rows[id] }) else { return nil }
        return Dictionary(uniqueKeysWithValues: zip(layout.header, row))
    }

    /// `layout()` for a request: a catalog file that cannot be read (any more) is logged and
    /// answered as a server error.
    private func loadedLayout() throws -> Layout {
        do { return try layout() } catch {
            logger.error("reading the catalog file for the item API failed", metadata: ["error": "\(error)"])
            throw APIError.server
        }
    }

    /// The table of `items`, for the engine builder.
    func table(_ items: Items, _ layout: Layout) throws -> CSVTable {
        try CSVTable(header: layout.header, rows: items.ids.map { items.rows[$0]! }, source: "catalog")
    }

    // MARK: Following the log

    /// Applies the store's changes after this instance's sequence and installs the result.
    ///
    /// - Returns: Whether anything changed.
    /// - Throws: `StoreError`, or the builder's error when the stored changes do not build on
    ///   this instance's catalog file (the current catalog keeps serving).
    @discardableResult
    func catchUp() async throws -> Bool {
        try await writer.withLock("catalog") { try await catchUpLocked() }
    }

    private func catchUpLocked() async throws -> Bool {
        var items = state.withLock { $0 }
        // The log's sequence first: with several catalogs in one store the log is shared and a
        // page may hold none of this catalog's changes, yet the sequence moves past them.
        let logSequence = try await store.catalogSequence()
        var changed = false
        var cursor = items.sequence
        var layout = loaded.withLock { $0 }
        while true {
            let page = try await store.catalogChanges(after: cursor, limit: 10_000)
            if !page.isEmpty, layout == nil {
                // The first change: read the catalog file now (the items so far carry only the sequence).
                layout = try self.layout()
                items = state.withLock { $0 }
            }
            for change in page {
                let header = layout!.header
                items.apply(change.itemID, change.fields.map { fields in header.map { fields[$0] ?? "" } })
                cursor = change.seq
                changed = true
            }
            if page.count < 10_000 { break }
        }
        let sequence = max(cursor, logSequence)
        guard changed else {
            state.withLock { $0.sequence = max($0.sequence, sequence) }
            return false
        }
        items.sequence = sequence
        let engine = try source.makeEngine(table(items, layout!))
        state.withLock { $0 = items }
        install(engine, items.sequence)
        logger.info("catalog changes applied", metadata: ["sequence": "\(items.sequence)", "items": "\(items.rows.count)"])
        return true
    }

    // MARK: Editing

    /// What an applied batch did.
    struct Outcome: Sendable {
        var applied: Int
        var rejected: [ItemEditError]
        var sequence: Int
        var engine: SwipeEngine<M>
    }

    /// Validates and applies edits: each against the items as the edits before it left them,
    /// then the whole catalog built once (a row the builder rejects is named by its edit). With
    /// `partial` the valid edits are applied and the others reported; without, one bad edit
    /// rejects the batch and nothing is applied.
    ///
    /// - Throws: `[ItemEditError]` (as `ItemEditErrors`) when nothing is applied;
    ///   `APIError.server` when the store fails.
    func apply(_ edits: [ItemEdit], partial: Bool, now: Int64) async throws -> Outcome {
        let layout = try loadedLayout()
        return try await writer.withLock("catalog") {
            for _ in 0..<5 {
                _ = try await catchUpLocked()
                let base = state.withLock { $0 }
                var (items, accepted, rejected) = resolve(edits, on: base, layout)
                // Build once; a row the builder rejects belongs to an edit: drop it and build
                // again (at most `maxReportedErrors` times).
                var engine: SwipeEngine<M>?
                while engine == nil {
                    if !rejected.isEmpty && !partial { throw ItemEditErrors(errors: rejected) }
                    guard !accepted.isEmpty else { throw ItemEditErrors(errors: rejected) }
                    do {
                        engine = try source.makeEngine(table(items, layout))
                    } catch let error as DataError {
                        let ids = items.ids
                        guard error.source == "catalog", let line = error.line, line >= 2, line - 2 < ids.count,
                              let k = accepted.lastIndex(where: { $0.edit.itemID == ids[line - 2] }),
                              rejected.count < Self.maxReportedErrors else {
                            // Not one row's fault (a column left constant, a category gone...).
                            throw ItemEditErrors(errors: [ItemEditError(path: "$", line: nil, itemID: "", field: error.field,
                                                                        reason: error.detail)])
                        }
                        let bad = accepted.remove(at: k)
                        rejected.append(ItemEditError(path: bad.edit.path, line: bad.edit.line, itemID: bad.edit.itemID,
                                                      field: error.field, reason: error.detail))
                        (items, accepted, _) = resolve(accepted.map(\.edit), on: base, layout)
                    } catch {
                        throw ItemEditErrors(errors: [ItemEditError(path: "$", line: nil, itemID: "", field: nil, reason: "\(error)")])
                    }
                }
                let changes = accepted.map { CatalogChange(itemID: $0.edit.itemID, fields: $0.fields, createdAt: now) }
                let stored: Int?
                do {
                    stored = try await store.appendCatalogChanges(changes, expectedSequence: base.sequence)
                } catch {
                    logger.error("store failure", metadata: ["error": "\(error)"])
                    throw APIError.server
                }
                guard let sequence = stored else { continue }  // another instance wrote first: again on its result
                items.sequence = sequence
                state.withLock { $0 = items }
                install(engine!, sequence)
                rejected.sort { ($0.line ?? 0) < ($1.line ?? 0) }
                return Outcome(applied: accepted.count, rejected: rejected, sequence: sequence, engine: engine!)
            }
            throw APIError.conflict("the catalog changed concurrently; retry the request")
        }
    }

    /// Each edit against the items as the edits before it left them.
    private func resolve(_ edits: [ItemEdit], on base: Items, _ layout: Layout)
        -> (Items, [(edit: ItemEdit, fields: [String: String]?)], [ItemEditError]) {
        let (header, idIndex) = (layout.header, layout.idIndex)
        var items = base
        var accepted: [(edit: ItemEdit, fields: [String: String]?)] = []
        var rejected: [ItemEditError] = []
        for edit in edits {
            func reject(_ reason: String, field: String? = nil, notFound: Bool = false) {
                rejected.append(ItemEditError(path: edit.path, line: edit.line, itemID: edit.itemID, field: field, reason: reason,
                                              notFound: notFound))
            }
            let id = edit.itemID
            guard !id.isEmpty, id.utf8.count <= 256, id.trimmingCharacters(in: .whitespaces) == id else {
                reject("an item id is 1…256 bytes without surrounding spaces"); continue
            }
            let current = items.rows[id]
            switch edit.operation {
            case .delete:
                guard current != nil else { reject("no item \"\(id.prefix(64))\"", notFound: true); continue }
                items.apply(id, nil)
                accepted.append((edit, nil))
            case .put, .patch:
                if edit.operation == .patch && current == nil { reject("no item \"\(id.prefix(64))\"", notFound: true); continue }
                var row = edit.operation == .patch ? current! : [String](repeating: "", count: header.count)
                var failed = false
                for (name, value) in edit.fields.sorted(by: { $0.key < $1.key }) {
                    guard let column = header.firstIndex(of: name) else {
                        reject("no column \"\(name.prefix(64))\" in this catalog (columns: \(header.joined(separator: ", ")))", field: name)
                        failed = true
                        break
                    }
                    guard let text = Self.text(value) else {
                        reject("a value is a string, a number, true/false or null", field: name)
                        failed = true
                        break
                    }
                    if column == idIndex, text != id {
                        reject("the id column says \"\(text.prefix(64))\", the path \"\(id.prefix(64))\"", field: name)
                        failed = true
                        break
                    }
                    row[column] = text
                }
                if failed { continue }
                row[idIndex] = id
                items.apply(id, row)
                accepted.append((edit, Dictionary(uniqueKeysWithValues: zip(header, row))))
            }
        }
        return (items, accepted, rejected)
    }

    /// A JSON scalar as the CSV cell it stands for.
    static func text(_ value: JSONValue) -> String? {
        switch value {
        case let .string(s): return s
        case .null: return ""
        case let .bool(b): return b ? "true" : "false"
        case let .number(n):
            guard n.isFinite else { return nil }
            if n == n.rounded(), abs(n) < 1e15 { return String(Int64(n)) }
            return "\(n)"
        case .array, .object: return nil
        }
    }
}

/// Edits rejected, nothing applied.
struct ItemEditErrors: Error, Sendable {
    var errors: [ItemEditError]
}

/// Polls the store's catalog sequence and applies other instances' edits (LISTEN/NOTIFY would
/// save the polls; a poll is one indexed `MAX` read, and it also covers SQLite).
struct CatalogPollService<M: ServableMatcher>: Service {
    let catalog: CatalogManager<M>
    let interval: Duration

    func run() async throws {
        await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                try? await Task.sleep(for: interval)
                do {
                    if try await catalog.store.catalogSequence() > catalog.sequence { try await catalog.catchUp() }
                } catch {
                    catalog.logger.error("following the catalog's changes failed", metadata: ["error": "\(error)"])
                }
            }
        }
    }
}
