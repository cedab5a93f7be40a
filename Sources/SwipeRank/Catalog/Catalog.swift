import Foundation
import Synchronization
import SwipeRankNumerics

/// A loaded set of items: ids, names, locations, raw attributes and the N × d feature matrix.
///
/// Immutable once built, so one catalog can serve every request of a process concurrently.
/// Rows of `features` follow `ids`; columns follow `columns`.
///
///     let table = try CSVTable(contentsOfFile: "items.csv")
///     let catalog = try Catalog(table: table, schema: schema)
///     catalog.features            // Matrix, N × d, row-major Float32
public struct Catalog: Sendable {
    // Every stored value lives in one immutable object, so a copy of a catalog is one retain:
    // the engine reads `matcher.catalog` through a generic witness on every deck and swipe, and
    // copying two dozen arrays and columns there was 2% of a deck's instructions, all of them
    // atomic retains and releases (Benchmarks/results/deck-callgrind.txt).
    private var storage: Storage

    /// Item ids, in row order.
    public var ids: StringColumn { storage.ids }
    /// Display names, in row order.
    public var names: StringColumn { storage.names }
    /// Item locations (nil where the catalog has none).
    public var locations: LocationColumn { storage.locations }
    /// The names of the text attributes, in `textValues` order.
    public var textAttributeNames: [String] { storage.textAttributeNames }
    /// Text attribute values: `textValues[attribute][row]`.
    public var textValues: [StringColumn] { storage.textValues }
    /// The names of the raw numeric attributes, in `numericValues` order.
    public var numericAttributeNames: [String] { storage.numericAttributeNames }
    /// Raw numeric attribute values: `numericValues[attribute][row]`, nil where missing.
    public var numericValues: [NumericColumn] { storage.numericValues }
    /// The feature matrix, N × d, row-major: one item's features are contiguous.
    ///
    /// A large catalog read from a catalog cache keeps its features once, in the candidate
    /// index's block order (`featureRows`); this row-major copy is then built by the first call
    /// that reads it (once, then kept), so what serves single rows reads `featureRows` instead.
    ///
    /// - Complexity: O(1), or O(N × d) for the call that builds it.
    public var features: Matrix {
        if let rowMajor = storage.rowMajor { return rowMajor }
        return storage.derivedRowMajor.value { [featureRows] in featureRows.rowMajor() }
    }

    /// The features row by row, read where they are stored (row order, or the candidate index's
    /// block order): what serving reads a card's, a swipe's or a score's row from, so a large
    /// catalog from a cache holds its features once.
    public var featureRows: FeatureRows { storage.featureRows }
    /// The same values feature-major, d × N (`features` transposed): what scoring every item
    /// multiplies. OpenBLAS' sgemv streams a d × N matrix 1.2–1.8× faster than N × d here (the
    /// kernel for long columns of a short matrix is the faster one), so the catalog keeps both
    /// layouts, twice the feature memory (2 × N × d × 4 bytes). Above `eagerFeatureMajorLimit`
    /// items it is built by the first call that reads it (once, then kept): there decks come
    /// from the engine's candidate index, which never scans every item, and an idle server
    /// holding a second copy of a million items' features was a sixth of its memory.
    ///
    /// - Complexity: O(1), or O(N × d) for the call that builds it.
    public var featuresByColumn: Matrix {
        if let eagerFeaturesByColumn { return eagerFeaturesByColumn }
        return lazyFeaturesByColumn.value { features.transposed }
    }

    /// The feature-major copy when it exists without building it: what a reader that can
    /// make do with a transient copy (the item matcher's medians) asks first.
    var builtFeaturesByColumn: Matrix? { eagerFeaturesByColumn ?? lazyFeaturesByColumn.built }

    /// Each feature column's median over the rows whose value was observed (not imputed: its
    /// `<name>_missing` indicator is 0, or it has none), and each numeric attribute's median
    /// raw value (nil without values): what the item matcher states "higher … than most"
    /// against. Computed by the first reader and kept, or read from a catalog cache, which
    /// stores them: at ten million items they were a sixth of a start.
    ///
    /// - Complexity: O(N × (d + attributes)) for the call that computes them, on every core.
    var medians: ColumnMedians { derivedMedians.value { computeMedians() } }

    /// The candidate index's blocks over these rows (their layout, the features in block order
    /// and each block's bounds), when they came with the catalog: read from a catalog cache, or
    /// built while writing one. The engine's index uses them as they are instead of splitting
    /// and copying the features again (`CandidateIndex`). Nil for a catalog parsed from its CSV
    /// alone.
    var blockIndex: LinearBlockIndex? {
        get { storage.blockIndex }
        set {
            // A new block index over the rows: the rows' own order is kept (the old positions
            // would not fit the new index).
            let rows = features
            storage = Storage(storage, blockIndex: newValue, rowMajor: rows, featureRows: FeatureRows(rows))
        }
    }

    /// The same catalog holding its features once, in its block index's order (as a large
    /// catalog read from the cache does): what a start that parsed the CSV keeps once it has
    /// written the cache, so it does not serve with two copies of the features either.
    ///
    /// - Returns: The same catalog (same rows, ids, fingerprint) reading its rows from the
    ///   blocks; `self` when it has no block index.
    /// - Complexity: O(N) for the positions; the row-major copy is released when no other copy
    ///   of the catalog holds it.
    func holdingFeaturesInBlocks() -> Catalog {
        guard let index = storage.blockIndex, storage.rowMajor != nil else { return self }
        var copy = self
        copy.storage = Storage(storage, blockIndex: index, rowMajor: nil,
                               featureRows: FeatureRows(permuted: index.values, columns: dimension, rowAtPosition: index.rowAtPosition))
        return copy
    }

    /// `blockIndex`'s layout; setting one builds the index it describes over these features.
    var blockLayout: LinearBlockIndex.Layout? {
        get { blockIndex?.layout }
        set { blockIndex = newValue.map { LinearBlockIndex(features: features, layout: $0) } }
    }
    /// What each feature column means.
    public var columns: [FeatureColumn] { storage.columns }
    /// Where the catalog came from (a path or a name), for messages.
    public var source: String { storage.source }
    /// The distinct explanation groups of the columns, in first-appearance order.
    public var groups: [String] { storage.groups }
    /// The index in `groups` of each column's group.
    public var groupOfColumn: [Int] { storage.groupOfColumn }

    // Unit vectors of the locations, as three contiguous arrays, so distances to all items
    // are three fused multiply-adds and one asin each (NaN where an item has no location).
    var unitX: [Float] { storage.unitX }
    var unitY: [Float] { storage.unitY }
    var unitZ: [Float] { storage.unitZ }
    private var rowByID: IDRows { storage.rowByID }
    // Every item's summary, built once: a card is served with one, and building it per card
    // (a dictionary of every attribute) was a tenth of a batch's instructions. Nil above
    // `eagerSummaryLimit` items, where the dictionaries would be most of the process's memory
    // (about 1 KiB an item): a summary is then built per card.
    private var summaries: [ItemSummary]? { storage.summaries }
    // `featuresByColumn` up to `eagerFeatureMajorLimit` items, else nil and built in the box.
    private var eagerFeaturesByColumn: Matrix? { storage.eagerFeaturesByColumn }
    private var lazyFeaturesByColumn: DerivedOnce<Matrix> { storage.lazyFeaturesByColumn }
    // Derived from the rows, computed once per catalog and shared by its copies (or filled by
    // the cache reader, which stores them: `adoptDerived(medians:fingerprint:)`).
    private var derivedMedians: DerivedOnce<ColumnMedians> { storage.derivedMedians }
    var derivedFingerprint: DerivedOnce<String> { storage.derivedFingerprint }
    // The cache file this catalog reads columns from in place, if any (`CatalogCache`).
    var mappedFile: DerivedOnce<MappedFile> { storage.mappedFile }

    /// The most items whose summaries are built with the catalog; larger catalogs build each
    /// summary when asked (same value, built per card). Small enough that the summaries stay a
    /// few tens of MB (at 100,000 restaurants, with the service's JSON of them, they had been
    /// 118,396 of an idle server's 167,868 KiB of anonymous memory), large enough for every
    /// shipped catalog, whose decks and evaluations write many cards.
    package static let eagerSummaryLimit = 20_000

    /// The most items whose feature-major copy (`featuresByColumn`) is built with the catalog;
    /// larger catalogs build it when first read. The engine's candidate index takes over the
    /// decks from 50,000 items (`SwipeEngine.defaultCandidateIndexThreshold`), so every catalog that
    /// scans every item per deck has its copy from the start.
    package static let eagerFeatureMajorLimit = 100_000

    /// The number of items.
    public var count: Int { ids.count }

    /// Whether `other` is a copy of this catalog (the same shared values, not only equal
    /// ones): a table built from one catalog's rows serves another only then. O(1).
    package func sharesStorage(with other: Catalog) -> Bool { storage === other.storage }
    /// The number of feature columns, d.
    public var dimension: Int { columns.count }

    /// The row of the item with this id.
    ///
    /// - Parameter id: An item id.
    /// - Returns: Its row, or nil.
    /// - Complexity: O(1) on average.
    public func row(of id: String) -> Int? { rowByID.row(of: id, ids: ids) }

    /// The index of a numeric attribute by name.
    ///
    /// - Parameter name: The attribute's column name.
    /// - Returns: Its index in `numericValues`, or nil.
    public func numericAttribute(named name: String) -> Int? { numericAttributeNames.firstIndex(of: name) }

    /// The index of a text attribute by name.
    ///
    /// - Parameter name: The attribute's column name.
    /// - Returns: Its index in `textValues`, or nil.
    public func textAttribute(named name: String) -> Int? { textAttributeNames.firstIndex(of: name) }

    /// Builds a catalog from a parsed CSV and a schema.
    ///
    /// Transforms, per `FeatureSpec`: numeric values are transformed, missing ones imputed with
    /// the median of the observed transformed values (plus a `<name>_missing` indicator), then
    /// z-scored with the mean and standard deviation over all items (a constant column stays
    /// 0). Categorical and binned features become one 0/1 column per category. External
    /// features are appended last, in the order given.
    ///
    /// - Parameters:
    ///   - table: The parsed item CSV.
    ///   - schema: How to read it.
    ///   - external: Extra feature columns keyed by item id.
    /// - Throws: `DataError` naming `file:line:column` for a missing column, an empty id, a
    ///   duplicate id, a non-numeric or non-finite number, a coordinate out of range, a
    ///   category not in the schema, or an empty required value.
    /// - Complexity: O(N × d).
    public init(table: CSVTable, schema: ItemSchema, external: [ExternalFeature] = []) throws(DataError) {
        let idColumn = try table.column(named: schema.idColumn)
        let nameColumn = try table.column(named: schema.nameColumn)
        var ids: [String] = [], names: [String] = [], rowByID = IDRows(capacity: table.rows.count)
        ids.reserveCapacity(table.rows.count)
        for row in table.rows {
            let id = row[idColumn].trimmedSpaces
            guard !id.isEmpty else {
                throw table.error(.missingValue, row: row, column: idColumn, detail: "empty id in column \"\(schema.idColumn)\"")
            }
            if let first = rowByID.insert(id, row: ids.count, matches: { ids[$0] == id }) {
                throw table.error(.duplicateID, row: row, column: idColumn,
                                  detail: "duplicate id \"\(id)\" (first on line \(table.rows[first].line))")
            }
            ids.append(id)
            names.append(row[nameColumn])
        }
        // Locations.
        var locations = [GeoPoint?](repeating: nil, count: ids.count)
        if let (latName, lonName) = schema.coordinateColumns {
            let lat = try table.column(named: latName), lon = try table.column(named: lonName)
            for (r, row) in table.rows.enumerated() {
                let la = try table.number(row: row, column: lat), lo = try table.number(row: row, column: lon)
                switch (la, lo) {
                case (nil, nil): continue
                case let (la?, lo?):
                    guard (-90...90).contains(la) else {
                        throw table.error(.outOfRange, row: row, column: lat, detail: "latitude \(la) is outside -90...90")
                    }
                    guard (-180...180).contains(lo) else {
                        throw table.error(.outOfRange, row: row, column: lon, detail: "longitude \(lo) is outside -180...180")
                    }
                    locations[r] = try GeoPoint(latitude: la, longitude: lo)
                default:
                    let missing = la == nil ? lat : lon
                    throw table.error(.missingValue, row: row, column: missing,
                                      detail: "latitude and longitude must both be given or both be empty")
                }
            }
        }
        // Raw attributes.
        var texts: [StringColumn] = []
        for name in schema.textAttributes {
            let c = try table.column(named: name)
            texts.append(try StringColumn.checked(table.rows.map { $0[c] }, source: table.source, field: name))
        }
        var numbers: [NumericColumn] = []
        for name in schema.numericAttributes {
            let c = try table.column(named: name)
            var values: [Double] = []
            values.reserveCapacity(table.rows.count)
            // `number` refuses NaN, so NaN can mark a gap (`NumericColumn`).
            for row in table.rows { values.append(try table.number(row: row, column: c) ?? .nan) }
            numbers.append(NumericColumn(storage: values))
        }
        // Feature columns, built column by column, then interleaved into the row-major matrix.
        var columnValues: [[Float]] = []
        var columns: [FeatureColumn] = []
        for spec in schema.features {
            try FeatureBuilder.build(spec, table: table, into: &columnValues, columns: &columns)
        }
        for feature in external {
            columns.append(feature.column)
            columnValues.append(ids.map { feature.values[$0] ?? feature.defaultValue })
        }
        var seen = Set<String>()
        for column in columns where !seen.insert(column.name).inserted {
            throw DataError(.invalidValue, source: table.source, field: column.name,
                            detail: "the schema derives the feature column \"\(column.name)\" twice (from column \"\(column.source)\"); give one feature a distinct name")
        }
        // Every feature value must be finite: a column whose values overflow (a sum past
        // Double.greatestFiniteMagnitude while z-scoring, a value past Float's range) would
        // make every score NaN and every recommendation list silently empty.
        for (c, values) in columnValues.enumerated() {
            if let r = values.firstIndex(where: { !$0.isFinite }) {
                let column = columns[c]
                let detail = "feature column \"\(column.name)\" (from \"\(column.source)\") is not finite for item \"\(DataError.truncated(ids[r]))\": its values overflow Float after transformation and standardization (center \(column.center), scale \(column.scale)); rescale the column"
                if let tc = table.optionalColumn(named: column.source), r < table.rows.count {
                    throw table.error(.nonFinite, row: table.rows[r], column: tc, detail: detail)
                }
                throw DataError(.nonFinite, source: table.source, field: column.name, detail: detail)
            }
        }
        let n = ids.count, d = columns.count
        var elements = ContiguousArray<Float>(repeating: 0, count: n * d)
        for (c, values) in columnValues.enumerated() {
            for r in 0..<n { elements[r * d + c] = values[r] }
        }
        self.init(source: table.source, ids: try StringColumn.checked(ids, source: table.source, field: schema.idColumn),
                  rowByID: rowByID, names: try StringColumn.checked(names, source: table.source, field: schema.nameColumn),
                  locations: LocationColumn(locations),
                  textAttributeNames: schema.textAttributes, textValues: texts,
                  numericAttributeNames: schema.numericAttributes, numericValues: numbers,
                  features: .rows(Matrix(rows: n, columns: d, elements: elements)), columns: columns)
    }

    /// Builds a catalog from its parts, as `init(table:schema:external:)` derived them: what
    /// the catalog cache stores, so a cached start parses no CSV and yields the same catalog.
    ///
    /// - Throws: `DataError` `.duplicateID` or `.invalidValue` (naming `source`) when the parts
    ///   do not fit together: an id twice, or arrays of different lengths.
    /// - Complexity: O(N × d).
    init(source: String, ids: StringColumn, names: StringColumn, locations: LocationColumn, textAttributeNames: [String],
         textValues: [StringColumn], numericAttributeNames: [String], numericValues: [NumericColumn], features: Matrix,
         columns: [FeatureColumn]) throws(DataError) {
        try self.init(source: source, ids: ids, names: names, locations: locations, textAttributeNames: textAttributeNames,
                      textValues: textValues, numericAttributeNames: numericAttributeNames, numericValues: numericValues,
                      stored: .rows(features), columns: columns)
    }

    /// Builds a catalog whose features only the candidate index's blocks hold (in block order):
    /// what the catalog cache reads for a large catalog, so the process keeps one copy of the
    /// features. `features` is then built from the blocks when first read.
    ///
    /// - Throws: as `init(source:ids:…features:columns:)`.
    /// - Complexity: O(N × (d + 1)) for the unit vectors, ids and positions; no copy of the
    ///   features.
    init(source: String, ids: StringColumn, names: StringColumn, locations: LocationColumn, textAttributeNames: [String],
         textValues: [StringColumn], numericAttributeNames: [String], numericValues: [NumericColumn],
         blocks: LinearBlockIndex, columns: [FeatureColumn]) throws(DataError) {
        try self.init(source: source, ids: ids, names: names, locations: locations, textAttributeNames: textAttributeNames,
                      textValues: textValues, numericAttributeNames: numericAttributeNames, numericValues: numericValues,
                      stored: .blocks(blocks), columns: columns)
    }

    /// Where a catalog's features are stored when it is built.
    private enum FeatureSource {
        /// Row-major, row order.
        case rows(Matrix)
        /// Only in the blocks of a candidate index over these rows.
        case blocks(LinearBlockIndex)
    }

    private init(source: String, ids: StringColumn, names: StringColumn, locations: LocationColumn, textAttributeNames: [String],
                 textValues: [StringColumn], numericAttributeNames: [String], numericValues: [NumericColumn],
                 stored features: FeatureSource, columns: [FeatureColumn]) throws(DataError) {
        let n = ids.count
        let (rows, d): (Int, Int)
        switch features {
        case .rows(let matrix): (rows, d) = (matrix.rows, matrix.columns)
        case .blocks(let index): (rows, d) = (index.rowCount, index.dimension)
        }
        guard names.count == n, locations.count == n, textValues.count == textAttributeNames.count,
              textValues.allSatisfy({ $0.count == n }), numericValues.count == numericAttributeNames.count,
              numericValues.allSatisfy({ $0.count == n }), rows == n, d == columns.count else {
            throw DataError(.invalidValue, source: source, detail: "the catalog's parts have different lengths")
        }
        let rowByID: IDRows
        switch IDRows.build(ids) {
        case .success(let table): rowByID = table
        case .failure(let repeated):
            throw DataError(.duplicateID, source: source, field: "id",
                            detail: "duplicate id \"\(DataError.truncated(ids[repeated.repeated]))\"")
        }
        self.init(source: source, ids: ids, rowByID: rowByID, names: names, locations: locations,
                  textAttributeNames: textAttributeNames, textValues: textValues,
                  numericAttributeNames: numericAttributeNames, numericValues: numericValues,
                  features: features, columns: columns)
    }

    /// The one place a catalog's stored properties are set: what every catalog derives from its
    /// parts (unit vectors, groups, the feature-major copy, summaries) is derived the same way.
    private init(source: String, ids: StringColumn, rowByID: IDRows, names: StringColumn, locations: LocationColumn,
                 textAttributeNames: [String], textValues: [StringColumn], numericAttributeNames: [String],
                 numericValues: [NumericColumn], features: FeatureSource, columns: [FeatureColumn]) {
        storage = Storage(source: source, ids: ids, rowByID: rowByID, names: names, locations: locations,
                          textAttributeNames: textAttributeNames, textValues: textValues,
                          numericAttributeNames: numericAttributeNames, numericValues: numericValues,
                          features: features, columns: columns)
    }

    /// A catalog's values, shared by its copies.
    private final class Storage: Sendable {
        let ids: StringColumn
        let names: StringColumn
        let locations: LocationColumn
        let textAttributeNames: [String]
        let textValues: [StringColumn]
        let numericAttributeNames: [String]
        let numericValues: [NumericColumn]
        // The row-major features; nil when only the block index holds them (`init(…blocks:…)`).
        let rowMajor: Matrix?
        let derivedRowMajor: DerivedOnce<Matrix>
        let featureRows: FeatureRows
        let columns: [FeatureColumn]
        let source: String
        let groups: [String]
        let groupOfColumn: [Int]
        let rowByID: IDRows
        let summaries: [ItemSummary]?
        let eagerFeaturesByColumn: Matrix?
        let lazyFeaturesByColumn: DerivedOnce<Matrix>
        let derivedMedians: DerivedOnce<ColumnMedians>
        let derivedFingerprint: DerivedOnce<String>
        let mappedFile: DerivedOnce<MappedFile>
        let unitX: [Float]
        let unitY: [Float]
        let unitZ: [Float]
        let blockIndex: LinearBlockIndex?

        init(source: String, ids: StringColumn, rowByID: IDRows, names: StringColumn, locations: LocationColumn,
             textAttributeNames: [String], textValues: [StringColumn], numericAttributeNames: [String],
             numericValues: [NumericColumn], features: FeatureSource, columns: [FeatureColumn]) {
            self.source = source
            self.ids = ids
            self.rowByID = rowByID
            self.names = names
            self.locations = locations
            var ux = [Float](), uy = [Float](), uz = [Float]()
            ux.reserveCapacity(ids.count); uy.reserveCapacity(ids.count); uz.reserveCapacity(ids.count)
            for location in locations {
                if let (x, y, z) = location?.unitVector {
                    ux.append(Float(x)); uy.append(Float(y)); uz.append(Float(z))
                } else {
                    ux.append(.nan); uy.append(.nan); uz.append(.nan)
                }
            }
            unitX = ux; unitY = uy; unitZ = uz
            self.textAttributeNames = textAttributeNames
            self.textValues = textValues
            self.numericAttributeNames = numericAttributeNames
            self.numericValues = numericValues
            self.columns = columns
            var groups: [String] = []
            groupOfColumn = columns.map { column in
                if let g = groups.firstIndex(of: column.group) { return g }
                groups.append(column.group)
                return groups.count - 1
            }
            self.groups = groups
            switch features {
            case .rows(let matrix):
                rowMajor = matrix
                featureRows = FeatureRows(matrix)
                blockIndex = nil
            case .blocks(let index):
                rowMajor = nil
                featureRows = FeatureRows(permuted: index.values, columns: columns.count, rowAtPosition: index.rowAtPosition)
                blockIndex = index
            }
            derivedRowMajor = DerivedOnce()
            eagerFeaturesByColumn = ids.count <= Catalog.eagerFeatureMajorLimit ? (rowMajor ?? featureRows.rowMajor()).transposed : nil
            lazyFeaturesByColumn = DerivedOnce()
            derivedMedians = DerivedOnce()
            derivedFingerprint = DerivedOnce()
            mappedFile = DerivedOnce()
            summaries = ids.count <= Catalog.eagerSummaryLimit
                ? (0..<ids.count).map { Catalog.summary(row: $0, ids, names, locations, textAttributeNames, textValues,
                                                     numericAttributeNames, numericValues) }
                : nil
        }

        /// The same values with another block index or another store of the same features (the
        /// derived values stay shared: they depend on the rows, which are the same).
        init(_ other: Storage, blockIndex: LinearBlockIndex?, rowMajor: Matrix?, featureRows: FeatureRows) {
            ids = other.ids
            names = other.names
            locations = other.locations
            textAttributeNames = other.textAttributeNames
            textValues = other.textValues
            numericAttributeNames = other.numericAttributeNames
            numericValues = other.numericValues
            self.rowMajor = rowMajor
            derivedRowMajor = DerivedOnce()
            self.featureRows = featureRows
            columns = other.columns
            source = other.source
            groups = other.groups
            groupOfColumn = other.groupOfColumn
            rowByID = other.rowByID
            summaries = other.summaries
            eagerFeaturesByColumn = other.eagerFeaturesByColumn
            lazyFeaturesByColumn = other.lazyFeaturesByColumn
            derivedMedians = other.derivedMedians
            derivedFingerprint = other.derivedFingerprint
            mappedFile = other.mappedFile
            unitX = other.unitX
            unitY = other.unitY
            unitZ = other.unitZ
            self.blockIndex = blockIndex
        }
    }

    /// Builds the summary of a row from the raw attributes.
    private func makeSummary(row: Int) -> ItemSummary {
        Self.summary(row: row, ids, names, locations, textAttributeNames, textValues, numericAttributeNames, numericValues)
    }

    private static func summary(row: Int, _ ids: StringColumn, _ names: StringColumn, _ locations: LocationColumn,
                                _ textAttributeNames: [String], _ textValues: [StringColumn],
                                _ numericAttributeNames: [String], _ numericValues: [NumericColumn]) -> ItemSummary {
        var attributes: [String: ItemSummary.Value] = [:]
        for (a, name) in textAttributeNames.enumerated() {
            let value = textValues[a][row]
            attributes[name] = value.isEmpty ? .missing : .text(value)
        }
        for (a, name) in numericAttributeNames.enumerated() {
            attributes[name] = numericValues[a][row].map { .number($0) } ?? .missing
        }
        if let location = locations[row] {
            attributes["latitude"] = .number(location.latitude)
            attributes["longitude"] = .number(location.longitude)
        }
        return ItemSummary(id: ids[row], name: names[row], attributes: attributes)
    }

    /// Writes the great-circle distance in miles from `home` to every item into `distances`
    /// (NaN for items without a location).
    ///
    /// Uses the chord between unit vectors, `d = 2R·asin(‖p − q‖ / 2)`, which equals the
    /// haversine distance and stays accurate for nearby points.
    ///
    /// - Parameters:
    ///   - home: The origin.
    ///   - distances: Resized to `count` and overwritten.
    /// - Complexity: O(N).
    public func distancesMiles(from home: GeoPoint, into distances: inout [Float]) {
        let (hx, hy, hz) = home.unitVector
        distancesMiles(fromUnit: (Float(hx), Float(hy), Float(hz)), into: &distances)
    }

    /// `distancesMiles(from:into:)` from the home's unit vector in Float.
    func distancesMiles(fromUnit home: (Float, Float, Float), into distances: inout [Float]) {
        let (x0, y0, z0) = home
        let (ux, uy, uz) = (unitX, unitY, unitZ)
        if distances.count != count { distances = [Float](repeating: 0, count: count) }
        for i in 0..<count { distances[i] = Catalog.chordMiles(ux[i] - x0, uy[i] - y0, uz[i] - z0) }
    }

    /// The distance in miles from a home's unit vector to the item at `row` (NaN without a
    /// location): one item of `distancesMiles(from:into:)`, the same value bit for bit.
    ///
    /// - Complexity: O(1).
    func distanceMiles(row: Int, fromUnit home: (Float, Float, Float)) -> Float {
        let storage = self.storage
        return Catalog.chordMiles(storage.unitX[row] - home.0, storage.unitY[row] - home.1, storage.unitZ[row] - home.2)
    }

    // The great-circle miles of a chord between unit vectors: one expression for the whole
    // catalog's pass and a single item's, so the two agree exactly. An item without a
    // location (NaN unit vector) is NaN miles away: `min(1, NaN)` is 1, which made it half
    // the globe away (~12,437 miles: the farthest band, a distance term of −1, and that
    // distance on its card) where the documented contract is "no distance".
    @inline(__always) private static func chordMiles(_ dx: Float, _ dy: Float, _ dz: Float) -> Float {
        let chord = (dx * dx + dy * dy + dz * dz).squareRoot()
        return chord.isNaN ? .nan : Float(2 * GeoPoint.earthRadiusMiles) * asinf(min(1, chord * 0.5))
    }
}

/// Turns one `FeatureSpec` into matrix columns.
private enum FeatureBuilder {
    static func build(_ spec: FeatureSpec, table: CSVTable, into values: inout [[Float]],
                      columns: inout [FeatureColumn]) throws(DataError) {
        let c = try table.column(named: spec.column)
        let n = table.rows.count
        var missing = [Bool](repeating: false, count: n)
        switch spec.kind {
        case let .numeric(transform, standardize):
            var raw = [Double](repeating: 0, count: n)
            for (r, row) in table.rows.enumerated() {
                if let v = try value(table, row, c, spec) {
                    switch transform {
                    case .identity: raw[r] = v
                    case .log1p: raw[r] = Foundation.log1p(max(0, v))
                    case .oneMinus: raw[r] = 1 - v
                    }
                } else {
                    missing[r] = true
                }
            }
            let observed = raw.indices.filter { !missing[$0] }.map { raw[$0] }.sorted()
            let median = observed.isEmpty ? 0 : observed[(observed.count - 1) / 2] / 2 + observed[observed.count / 2] / 2
            for r in 0..<n where missing[r] { raw[r] = median }
            var center = 0.0, scale = 1.0
            if standardize, n > 0 {
                center = raw.reduce(0, +) / Double(n)
                var variance = raw.reduce(0) { $0 + ($1 - center) * ($1 - center) } / Double(n)
                if !center.isFinite || !variance.isFinite {
                    // The sums overflowed (1e308 in a cell is a legal, if odd, value): redo them
                    // scaled by the largest magnitude, which cannot overflow.
                    let unit = raw.reduce(0) { max($0, abs($1)) }
                    let mean = raw.reduce(0) { $0 + $1 / unit } / Double(n)
                    variance = raw.reduce(0) { $0 + ($1 / unit - mean) * ($1 / unit - mean) } / Double(n)
                    center = mean * unit
                    variance = variance * unit * unit
                    scale = variance > 0 && variance.isFinite ? variance.squareRoot() : unit
                } else {
                    scale = variance > 0 ? variance.squareRoot() : 1
                }
            }
            columns.append(FeatureColumn(name: spec.name, group: spec.group, source: spec.column,
                                         role: .value, center: center, scale: scale))
            values.append(raw.map { x in
                let z = (x - center) / scale
                return Float(z.isFinite ? z : x / scale - center / scale)
            })
        case let .categorical(categories):
            var labels: [String] = table.rows.map { $0[c].trimmedSpaces }
            let allowed = categories ?? Array(Set(labels.filter { !$0.isEmpty })).sorted()
            let position = Dictionary(uniqueKeysWithValues: allowed.enumerated().map { ($1, $0) })
            var oneHot = [[Float]](repeating: [Float](repeating: 0, count: n), count: allowed.count)
            for (r, row) in table.rows.enumerated() {
                if labels[r].isEmpty {
                    guard spec.missing == .imputeWithIndicator else {
                        throw table.error(.missingValue, row: row, column: c, detail: "empty value in required column \"\(spec.column)\"")
                    }
                    missing[r] = true
                    continue
                }
                guard let k = position[labels[r]] else {
                    throw table.error(.invalidValue, row: row, column: c,
                                      detail: "\"\(labels[r])\" is not a category of column \"\(spec.column)\" (allowed: \(allowed.joined(separator: ", ")))")
                }
                oneHot[k][r] = 1
            }
            labels.removeAll()
            for (k, category) in allowed.enumerated() {
                columns.append(FeatureColumn(name: "\(spec.name)=\(category)", group: spec.group,
                                             source: spec.column, role: .category, category: category))
                values.append(oneHot[k])
            }
        case let .bins(edges, labels):
            guard labels.count == edges.count + 1, edges.allSatisfy(\.isFinite), zip(edges, edges.dropFirst()).allSatisfy({ $0 < $1 }) else {
                throw DataError(.invalidValue, source: table.source, field: spec.name,
                                detail: "feature \"\(spec.name)\": bins need finite, strictly increasing edges and one more label than edges")
            }
            var oneHot = [[Float]](repeating: [Float](repeating: 0, count: n), count: labels.count)
            for (r, row) in table.rows.enumerated() {
                guard let v = try value(table, row, c, spec) else { missing[r] = true; continue }
                oneHot[edges.firstIndex(where: { v < $0 }) ?? edges.count][r] = 1
            }
            for (k, label) in labels.enumerated() {
                columns.append(FeatureColumn(name: "\(spec.name)=\(label)", group: spec.group,
                                             source: spec.column, role: .category, category: label))
                values.append(oneHot[k])
            }
        case let .flag(label):
            var bits = [Float](repeating: 0, count: n)
            for (r, row) in table.rows.enumerated() {
                let cell = row[c].trimmedSpaces
                if cell.isEmpty {
                    guard spec.missing == .imputeWithIndicator else {
                        throw table.error(.missingValue, row: row, column: c, detail: "empty value in required column \"\(spec.column)\"")
                    }
                    missing[r] = true   // imputed as 0: the item is not known to have it
                    continue
                }
                switch cell.lowercased() {
                case "1", "true", "yes", "y": bits[r] = 1
                case "0", "false", "no", "n": bits[r] = 0
                default:
                    throw table.error(.invalidValue, row: row, column: c,
                                      detail: "\"\(DataError.truncated(cell))\" is not a 0/1 flag in column \"\(spec.column)\" (1, true, yes, y or 0, false, no, n)")
                }
            }
            columns.append(FeatureColumn(name: spec.name, group: spec.group, source: spec.column, role: .flag,
                                         category: label ?? spec.name))
            values.append(bits)
        }
        if spec.missing == .imputeWithIndicator {
            columns.append(FeatureColumn(name: "\(spec.name)_missing", group: spec.group,
                                         source: spec.column, role: .missingIndicator))
            values.append(missing.map { $0 ? 1 : 0 })
        }
    }

    private static func value(_ table: CSVTable, _ row: CSVTable.Row, _ c: Int,
                              _ spec: FeatureSpec) throws(DataError) -> Double? {
        if spec.missing == .reject { return try table.requiredNumber(row: row, column: c) }
        return try table.number(row: row, column: c)
    }
}

extension Catalog {
    /// The item summary of a row: id, name and its display attributes (text attributes as
    /// text, numeric attributes as numbers, null for gaps, and the location if any).
    ///
    /// - Parameter row: The item.
    /// - Returns: The summary.
    /// - Complexity: O(1) up to `eagerSummaryLimit` items (built when the catalog is), else
    ///   O(attributes) (built per call).
    public func summary(row: Int) -> ItemSummary { summaries?[row] ?? makeSummary(row: row) }

    /// Starts loading the summaries of these rows' cards (when built with the catalog) into the
    /// caches: the objects they share, which a card retains.
    ///
    /// - Parameter rows: Rows (others are left out).
    func prefetchSummaries(rows: [Int]) {
        guard let summaries else { return }
        summaries.withUnsafeBufferPointer { list in
            for row in rows where row >= 0 && row < list.count { list[row].prefetchFields() }
        }
    }
}

/// A value derived from a catalog's rows, built by the first reader under a lock so
/// concurrent first readers build it once, and shared by every copy of its catalog (a class),
/// so a copy made before the first read sees it too.
final class DerivedOnce<Value: Sendable>: Sendable {
    private let state = Mutex<Value?>(nil)

    /// The value if built (or adopted).
    var built: Value? { state.withLock { $0 } }

    /// The value, built by `make` on the first call (`make` must always derive the same value:
    /// later calls return the first one).
    func value(_ make: () -> Value) -> Value {
        state.withLock { built in
            if let built { return built }
            let v = make()
            built = v
            return v
        }
    }

    /// Sets the value before any reader, from a source that already derived it (a catalog
    /// cache); a value already built is kept.
    func adopt(_ value: Value) {
        state.withLock { if $0 == nil { $0 = value } }
    }
}

/// Medians of a catalog's columns (`Catalog.medians`).
struct ColumnMedians: Sendable, Hashable {
    /// Per feature column: the median over its observed rows (0 when none is observed).
    var columns: [Float]
    /// Per numeric attribute: the median raw value, or nil without values.
    var attributes: [Double?]
}

extension Catalog {
    /// Drops the pages of the catalog cache file this catalog reads in place (`CatalogCache`:
    /// a large catalog's features, text, numbers and locations) from the process's resident
    /// memory. They stay in the kernel's page cache and come back when next read; clean pages
    /// of a read-only mapping lose nothing. Why: a one-time pass over every item after the
    /// start (the candidate index's grid, the attribute listing) would otherwise leave the
    /// whole file resident in an idle server. Nothing for a catalog that owns its memory.
    public func releaseMappedPages() {
        guard let file = mappedFile.built else { return }
        file.release(0 ..< file.bytes.count)
    }

    /// Whether this catalog reads some of its columns in place from a catalog cache file's
    /// mapping (`releaseMappedPages()` then has pages to release).
    public var readsMappedFile: Bool { mappedFile.built != nil }

    /// Sets what a catalog cache stored beside the rows, derived from them when it was written
    /// (the checksum vouches for them), so a start does not derive them again.
    func adoptDerived(medians: ColumnMedians, fingerprint: String) {
        derivedMedians.adopt(medians)
        derivedFingerprint.adopt(fingerprint)
    }

    /// The medians `medians` reports: one per column and per numeric attribute, each
    /// independent of the others, so on every core; each column read from the feature-major
    /// copy, where it is contiguous (read down the row-major matrix, ten million items made
    /// this a sixth of a start); a large catalog that has not built its copy gets a transient
    /// one, freed here, so an idle server does not keep it.
    func computeMedians() -> ColumnMedians {
        let columnCount = columns.count, attributes = numericValues.count, n = count
        let columnIndex = Dictionary(uniqueKeysWithValues: columns.enumerated().map { ($1.name, $0) })
        let byColumn = (builtFeaturesByColumn ?? features.transposed).elements
        let medians = Mutex(ColumnMedians(columns: [Float](repeating: 0, count: columnCount),
                                          attributes: [Double?](repeating: nil, count: attributes)))
        let columns = self.columns, numericValues = self.numericValues
        DispatchQueue.concurrentPerform(iterations: columnCount + attributes) { task in
            if task < columnCount {
                let j = task
                let indicator = columnIndex["\(columns[j].name)_missing"]
                var observed: [Float] = []
                observed.reserveCapacity(n)
                for row in 0..<n where indicator == nil || byColumn[indicator! * n + row] == 0 {
                    observed.append(byColumn[j * n + row])
                }
                if !observed.isEmpty { selectNth(observed.count / 2, in: &observed, by: <) }  // not sorted: a second at 10⁶
                let m = observed.isEmpty ? 0 : observed[observed.count / 2]
                medians.withLock { $0.columns[j] = m }
            } else {
                var values = numericValues[task - columnCount].compactMap { $0 }
                if !values.isEmpty { selectNth(values.count / 2, in: &values, by: <) }
                let m = values.isEmpty ? nil : values[values.count / 2]
                medians.withLock { $0.attributes[task - columnCount] = m }
            }
        }
        return medians.withLock { $0 }
    }
}
