import Foundation
import SwipeRankNumerics

/// A binary copy of an `ItemSchema` catalog, so a large catalog starts without parsing its
/// CSV: a million items load in well under a second instead of twenty.
///
/// The file is derived data: it is keyed by what it was built from (the CSV's size and content
/// hash, and a digest of the schema), and rebuilt when either changes. Format version 2, all
/// integers and floats little-endian, every section starting at a multiple of 8 bytes (so a
/// memory-mapped file is read in place):
///
///     offset  size  field
///          0     8  magic "SWRKCAT\n"
///          8     4  format version (UInt32) = 2
///         12     4  reserved, 0
///         16     8  checksum: XXH64 (seed 0) of bytes 24 ..< file length
///         24     8  file length
///         32     8  key: the CSV's size in bytes
///         40     8  key: XXH64 of the CSV's bytes
///         48     8  key: the schema digest (FNV-1a 64 of its fields, `ItemSchema.digest`)
///         56     8  N, the number of items
///         64     8  d, the number of feature columns
///         72     8  J, the length of the header JSON
///         80     J  header JSON, UTF-8: {"text_attributes": [...], "numeric_attributes": [...],
///                   "has_locations": bool, "columns": [{"name", "group", "source", "role",
///                   "category"}]} (zero-padded to a multiple of 8)
///     sections, in this order, each padded to a multiple of 8:
///         column parameters  Float64 × 2d: each column's center, then scale
///         string offsets     UInt64 × (S + 1), S = N × (2 + text attributes): string k is
///                            blob[offset[k] ..< offset[k + 1]]; ids, then names, then each
///                            text attribute's values, in row order
///         string blob        UTF-8
///         numeric values     Float64 × N per numeric attribute (attribute-major); NaN is a
///                            missing value (a CSV number is always finite)
///         locations          Float64 × 2N: latitude, longitude per item; NaN for none
///         features           Float32 × N × d, row-major (`Catalog.features`)
///         column medians     Float32 × d: each feature column's median over its observed
///                            rows (`Catalog.medians`)
///         attribute medians  Float64 × A: each numeric attribute's median, NaN for none
///         fingerprint        UInt64: `Catalog.fingerprint` (its 16 hex digits as a number)
///         block count        UInt64 B: the candidate index's blocks, 0 when the file has no
///                            layout (fewer than `layoutThreshold` items); when B > 0:
///         block rows         Int32 × N: the row at each position (`LinearBlockIndex.Layout`)
///         block starts       UInt64 × (B + 1): block b is positions start[b] ..< start[b + 1]
///         block features     Float32 × N × d: the features by position (row rowAtPosition[p]
///                            at position p), row-major
///         block minima       Float32 × B × d: each block's per-column minima
///         block maxima       Float32 × B × d: each block's per-column maxima
///
/// Version 2 added the block layout: the k-d splitting of a million items was half of a start
/// from the cache, and a layout read back builds the same index in one pass. Version 3 added
/// what a start derived from the rows: the features in block order and their bounds (gathering
/// ten million rows into block order was a fifth of a start), the medians (a sixth) and the
/// fingerprint. Files of other versions are stale: rebuilt once. The checksum vouches for the
/// derived sections; a reader does not derive them again to compare.
///
/// Reading checks, in order: the magic (another file is an error, never overwritten), the
/// version (another version is stale: rebuilt), the key (another CSV or schema is stale), the
/// file length (a truncated file is an error), the checksum (a changed byte is an error), then
/// every offset. A catalog with external feature columns is not cached (they come from outside
/// the CSV the key covers).
public enum CatalogCache {
    /// The format version this build reads and writes.
    public static let formatVersion: UInt32 = 3
    /// From this many items on a cache file stores the candidate index's block layout: the
    /// engine's default index threshold, below which no index is built.
    public static var layoutThreshold: Int { SwipeEngine<ItemMatcher>.defaultCandidateIndexThreshold }
    /// The first 8 bytes of every cache file.
    static let magic = Array("SWRKCAT\n".utf8)
    static let fixedHeaderSize = 80

    /// What a cache is built from: a different key means a stale cache.
    public struct Key: Sendable, Hashable, CustomStringConvertible {
        /// The catalog CSV's size in bytes.
        public var csvSize: UInt64
        /// XXH64 of the catalog CSV's bytes.
        public var csvHash: UInt64
        /// `ItemSchema.digest` of the schema.
        public var schemaDigest: UInt64

        /// Creates a key.
        public init(csvSize: UInt64, csvHash: UInt64, schemaDigest: UInt64) {
            (self.csvSize, self.csvHash, self.schemaDigest) = (csvSize, csvHash, schemaDigest)
        }

        /// The key of a CSV file (read once, mapped, to hash it) and a schema.
        ///
        /// - Throws: `DataError` `.unreadable` naming the CSV.
        public init(catalogFile path: String, schema: ItemSchema) throws(DataError) {
            let data: Data
            do { data = try Data(contentsOf: URL(fileURLWithPath: path), options: .alwaysMapped) } catch {
                throw DataError(.unreadable, source: path, detail: "cannot read the CSV file: \(error.localizedDescription)")
            }
            self.init(csvSize: UInt64(data.count), csvHash: XXH64.hash(data), schemaDigest: schema.digest)
        }

        /// `size/hash/schema` in hex, for logs.
        public var description: String {
            "csv \(csvSize) bytes, hash \(String(csvHash, radix: 16)), schema \(String(schemaDigest, radix: 16))"
        }
    }

    /// Why a cache file was not used.
    public enum Problem: Sendable, Hashable {
        /// Built from another CSV or schema.
        case staleKey
        /// Written in another format version.
        case otherVersion(UInt32)
    }

    /// The outcome of reading a cache file whose key or version may not match.
    public enum Lookup: Sendable {
        /// The file matched: its catalog.
        case hit(Catalog)
        /// The file is a cache, but not of this CSV and schema (or of another version).
        case stale(Problem)
    }

    // MARK: Writing

    /// The cache file's bytes for `catalog`.
    ///
    /// - Throws: `DataError` `.invalidValue` for a catalog with external feature columns.
    public static func encode(_ catalog: Catalog, key: Key) throws(DataError) -> [UInt8] {
        try encode(catalog, key: key, layoutFrom: layoutThreshold)
    }

    /// `encode(_:key:)` storing a block layout from `layoutFrom` items on (the catalog's own,
    /// or split now): tests store one for small catalogs.
    static func encode(_ catalog: Catalog, key: Key, layoutFrom: Int) throws(DataError) -> [UInt8] {
        if let external = catalog.columns.first(where: { $0.role == .external }) {
            throw DataError(.invalidValue, source: catalog.source, field: external.name,
                            detail: "a catalog with external feature columns cannot be cached (the key covers only the CSV and schema)")
        }
        let n = catalog.count, d = catalog.dimension
        let header = HeaderJSON(textAttributes: catalog.textAttributeNames, numericAttributes: catalog.numericAttributeNames,
                                hasLocations: catalog.locations.contains { $0 != nil },
                                columns: catalog.columns.map { ColumnJSON(name: $0.name, group: $0.group, source: $0.source,
                                                                          role: $0.role.rawValue, category: $0.category) })
        let json: Data
        do {
            let encoder = JSONEncoder()
            encoder.outputFormatting = .sortedKeys
            json = try encoder.encode(header)
        } catch {
            throw DataError(.invalidValue, source: catalog.source, detail: "cannot encode the cache header: \(error)")
        }
        var w = CacheWriter()
        w.append(bytes: magic)
        w.append(formatVersion)
        w.append(UInt32(0))
        w.append(UInt64(0))  // checksum, set last
        w.append(UInt64(0))  // length, set last
        w.append(key.csvSize); w.append(key.csvHash); w.append(key.schemaDigest)
        w.append(UInt64(n)); w.append(UInt64(d)); w.append(UInt64(json.count))
        w.append(bytes: json)
        w.align()
        w.append(catalog.columns.map(\.center) + catalog.columns.map(\.scale))
        // Strings: offsets, then the blob.
        var blob: [UInt8] = []
        var offsets: [UInt64] = [0]
        func add(_ column: StringColumn) {
            let base = UInt64(blob.count)
            column.withUTF8 { blob.append(contentsOf: $0) }
            for row in 0..<column.count { offsets.append(base + UInt64(column.byteRange(row).upperBound)) }
        }
        add(catalog.ids)
        add(catalog.names)
        for values in catalog.textValues { add(values) }
        for o in offsets { w.append(o) }
        w.append(bytes: blob)
        w.align()
        for values in catalog.numericValues { w.append(values.storage) }
        w.append(catalog.locations.coordinates)
        w.append(catalog.features.elements)
        w.align()
        let medians = catalog.medians
        w.append(medians.columns)
        w.align()
        w.append(medians.attributes.map { $0 ?? .nan })
        guard let fingerprint = UInt64(catalog.fingerprint, radix: 16) else {
            preconditionFailure("a catalog fingerprint is 16 hex digits")
        }
        w.append(fingerprint)
        let index = catalog.blockIndex ?? (n >= layoutFrom ? LinearBlockIndex(features: catalog.features) : nil)
        if let index, index.blockCount >= 1 {
            w.append(UInt64(index.blockCount))
            w.append(index.rowAtPosition)
            w.align()
            for start in index.layout.blockStarts { w.append(UInt64(start)) }
            w.append(index.values)
            w.align()
            w.append(index.minima)
            w.align()
            w.append(index.maxima)
            w.align()
        } else {
            w.append(UInt64(0))
        }
        w.set(UInt64(w.bytes.count), at: 24)
        let checksum = w.bytes.withUnsafeBytes { XXH64.hash(UnsafeRawBufferPointer(rebasing: $0[24...])) }
        w.set(checksum, at: 16)
        return w.bytes
    }

    /// Writes the cache file for `catalog` atomically (a temporary file in the same folder,
    /// then a rename), so a reader never sees half a file.
    ///
    /// - Throws: `DataError` `.unreadable` naming `path` when it cannot be written.
    public static func write(_ catalog: Catalog, key: Key, to path: String) throws(DataError) {
        let bytes = try encode(catalog, key: key)
        let url = URL(fileURLWithPath: path)
        let temporary = url.deletingLastPathComponent()
            .appendingPathComponent(".\(url.lastPathComponent).\(ProcessInfo.processInfo.processIdentifier).tmp")
        do {
            // Not `Data.write(to:)`: on Linux it writes a buffer over 2 GiB wrongly (from its
            // first byte again after 2 GiB − 4 KiB, a ten-million-item cache failed its checksum).
            try writeFile(bytes, to: temporary.path, naming: path)
        } catch {
            try? FileManager.default.removeItem(at: temporary)
            throw error
        }
        if rename(temporary.path, url.path) != 0 {
            let reason = String(cString: strerror(errno))
            try? FileManager.default.removeItem(at: temporary)
            throw DataError(.unreadable, source: path, detail: "cannot write the catalog cache: \(reason)")
        }
    }

    // MARK: Reading

    /// Reads a cache file (mapped, not copied, until the catalog's arrays are built).
    ///
    /// - Parameters:
    ///   - path: The cache file.
    ///   - key: The key it must have, or nil to accept any.
    ///   - source: The catalog's `source` (the CSV path it stands for).
    /// - Returns: The catalog, or why the file is stale.
    /// - Throws: `DataError` naming `path`: `.unreadable` when it cannot be read, `.invalidValue`
    ///   when it is not a cache file, is truncated, fails its checksum or is inconsistent.
    public static func read(_ path: String, key: Key?, source: String) throws(DataError) -> Lookup {
        try readWithKey(path, key: key, source: source).lookup
    }

    /// `read(_:key:source:)`, with the key the file was written with.
    ///
    /// - Parameter featuresOnceFrom: From this many items on (`featuresOnceFromItems`), the
    ///   catalog's features are its block index's, and they, the text, the numbers and the
    ///   locations are read in place from the file's mapping, which then lives as long as the
    ///   catalog. A cache file is replaced by a rename, never rewritten in place, so the mapped
    ///   bytes stay the checksummed ones.
    static func readWithKey(_ path: String, key: Key?, source: String,
                            featuresOnceFrom: Int = featuresOnceFromItems) throws(DataError) -> (lookup: Lookup, key: Key?) {
        let file = try MappedFile(path: path)
        return try withExtendedLifetime(file) { () throws(DataError) in
            try decode(CacheReader(bytes: file.bytes, mapping: file), path: path, key: key, source: source,
                       checksumBesideFrom: checksumBesideDecodingFrom, featuresOnceFrom: featuresOnceFrom)
        }
    }

    /// Decodes the bytes of a cache file; see `read(_:key:source:)`.
    public static func decode(_ data: Data, path: String, key: Key?, source: String) throws(DataError) -> Lookup {
        try decodeWithKey(data, path: path, key: key, source: source).lookup
    }

    /// `decode(_:path:key:source:)`, with the key the file was written with (nil when its
    /// version is another).
    ///
    /// - Parameters:
    ///   - checksumBesideFrom: From this many bytes on the checksum runs on another thread
    ///     while the sections are read (below it, first: a small file's damaged byte is found
    ///     without reading the sections).
    ///   - featuresOnceFrom: From this many items on, a file with a block index yields a
    ///     catalog holding its features once, in block order (`featuresOnceFromItems`); bytes
    ///     in memory are copied (only a mapped file is read in place).
    static func decodeWithKey(_ data: Data, path: String, key: Key?, source: String,
                              checksumBesideFrom: Int = checksumBesideDecodingFrom,
                              featuresOnceFrom: Int = featuresOnceFromItems) throws(DataError) -> (lookup: Lookup, key: Key?) {
        do {
            // Untyped here: the compiler (6.3) crashes on a typed-throws closure returning a tuple.
            return try data.withUnsafeBytes { (raw: UnsafeRawBufferPointer) throws -> (lookup: Lookup, key: Key?) in
                try decode(CacheReader(bytes: raw), path: path, key: key, source: source, checksumBesideFrom: checksumBesideFrom,
                           featuresOnceFrom: featuresOnceFrom)
            }
        } catch let error as DataError {
            throw error
        } catch {
            throw DataError(.invalidValue, source: path, detail: "\(error)")
        }
    }

    /// From this many bytes on a file's checksum is computed beside the decoding (64 MiB:
    /// about 300,000 items; below, the checksum takes milliseconds).
    static let checksumBesideDecodingFrom = 1 << 26

    /// From this many items on (past `Catalog.eagerFeatureMajorLimit`, where a catalog keeps
    /// no feature-major copy), a catalog read with its block index holds its features once,
    /// in block order (`Catalog.featureRows`): the row-major section is checksummed but not
    /// copied, and `Catalog.features` is built from the blocks only if something asks for it.
    /// At a million items of 22 features that is 88 MB less resident, and less to copy at start.
    /// From a mapped file, the block features, text, numbers and locations are then read in
    /// place, not copied (at a million items 125,152 KiB resident in all, 313,342 before:
    /// Benchmarks/results/catalog-mapped.txt).
    static let featuresOnceFromItems = Catalog.eagerFeatureMajorLimit + 1

    private static func decode(_ r: CacheReader, path: String, key wanted: Key?, source: String,
                               checksumBesideFrom: Int, featuresOnceFrom: Int = featuresOnceFromItems) throws(DataError) -> (lookup: Lookup, key: Key?) {
        func corrupt(_ detail: String, field: String? = nil) -> DataError {
            DataError(.invalidValue, source: path, field: field, detail: "catalog cache: \(detail)")
        }
        let size = r.bytes.count
        guard size >= 12, Array(r.bytes[0..<8]) == magic else {
            throw corrupt("not a SwipeRank catalog cache (no \"SWRKCAT\" magic); delete it or give another --catalog-cache file", field: "magic")
        }
        let version = r.uint32(at: 8)
        guard version == formatVersion else { return (.stale(.otherVersion(version)), nil) }
        guard size >= fixedHeaderSize else { throw corrupt("truncated: \(size) bytes, shorter than the header", field: "header") }
        guard r.uint32(at: 12) == 0 else { throw corrupt("the reserved header bytes are not zero", field: "header") }
        let key = Key(csvSize: r.uint64(at: 32), csvHash: r.uint64(at: 40), schemaDigest: r.uint64(at: 48))
        if let wanted, key != wanted { return (.stale(.staleKey), key) }
        let length = r.uint64(at: 24)
        guard length == UInt64(size) else {
            throw corrupt(length > UInt64(size) ? "truncated: \(size) bytes of \(length)" : "\(size) bytes, the header says \(length)", field: "length")
        }
        // In a large file the checksum (a pass over every byte) runs on another core while the
        // sections are read; nothing is returned before it matched, and a mismatch is the error
        // reported (a damaged file fails its checksum, whatever else its sections say). The
        // sections' own checks guard against any bytes, so reading them before it is known is
        // safe.
        let shared = SharedBytes(bytes: UnsafeRawBufferPointer(rebasing: r.bytes[24...]))
        let beside = size >= checksumBesideFrom
        let mapping = r.mapping
        // Releasing the pages it has read as it goes (a mapped page is resident until then).
        let checksum = beside ? BackgroundResult { XXH64.hash(shared.bytes, every: 1 << 24) { mapping?.release(24 ..< 24 + $0) } } : nil
        let early = beside ? nil : XXH64.hash(shared.bytes)
        let checksumMismatch = corrupt("checksum mismatch (the file was changed or damaged after it was written); rebuild it with `swiperank catalog build`", field: "checksum")
        if let early, early != r.uint64(at: 16) { throw checksumMismatch }
        let decoded = Result { () throws(DataError) -> Catalog in
            try decodeSections(r, path: path, source: source, featuresOnceFrom: featuresOnceFrom)
        }
        if let checksum, checksum.wait() != r.uint64(at: 16) { throw checksumMismatch }
        // Both passes done: drop every page they touched. Each released its own as it went,
        // but one could touch again what the other had released (at a million items 46 MB
        // stayed resident); what the catalog reads in place comes back from the page cache
        // when a request reads it.
        mapping?.release(0 ..< size)
        return (.hit(try decoded.get()), key)
    }

    /// The catalog in the sections after the fixed header of a file whose length matched; the
    /// checks guard against a forged file (a damaged one fails its checksum).
    private static func decodeSections(_ r: CacheReader, path: String, source: String, featuresOnceFrom: Int) throws(DataError) -> Catalog {
        func corrupt(_ detail: String, field: String? = nil) -> DataError {
            DataError(.invalidValue, source: path, field: field, detail: "catalog cache: \(detail)")
        }
        let size = r.bytes.count
        let (n64, d64, j64) = (r.uint64(at: 56), r.uint64(at: 64), r.uint64(at: 72))
        guard n64 < 1 << 40, d64 < 1 << 20, j64 < 1 << 30 else { throw corrupt("implausible counts", field: "header") }
        let (n, d, j) = (Int(n64), Int(d64), Int(j64))
        // A large catalog from a mapped file reads its columns where the file has them: the
        // block features, the text and the numbers (the mapping lives as long as the catalog).
        let inPlace = n >= featuresOnceFrom && r.mapping != nil
        var at = fixedHeaderSize
        func section(_ bytes: Int, _ name: String) throws(DataError) -> Int {
            let start = at
            guard bytes >= 0, start <= size, size - start >= bytes else { throw corrupt("the \(name) section runs past the end", field: name) }
            at = start + (bytes + 7) / 8 * 8
            return start
        }
        let jsonStart = try section(j, "header JSON")
        let header: HeaderJSON
        do {
            header = try JSONDecoder().decode(HeaderJSON.self, from: Data(UnsafeRawBufferPointer(rebasing: r.bytes[jsonStart ..< jsonStart + j])))
        } catch {
            throw corrupt("the header JSON does not decode: \(error)", field: "header JSON")
        }
        guard header.columns.count == d else { throw corrupt("\(header.columns.count) columns named, \(d) counted", field: "columns") }
        let t = header.textAttributes.count, a = header.numericAttributes.count
        let parameters = try section(16 * d, "column parameters")
        var columns: [FeatureColumn] = []
        for (c, column) in header.columns.enumerated() {
            guard let role = FeatureColumn.Role(rawValue: column.role) else { throw corrupt("unknown role \"\(column.role)\"", field: "columns") }
            columns.append(FeatureColumn(name: column.name, group: column.group, source: column.source, role: role,
                                         category: column.category, center: r.double(at: parameters + 8 * c),
                                         scale: r.double(at: parameters + 8 * (d + c))))
        }
        let stringCount = n * (2 + t)
        let offsets = try section(8 * (stringCount + 1), "string offsets")
        let blobLength = r.uint64(at: offsets + 8 * stringCount)
        guard blobLength < 1 << 40 else { throw corrupt("implausible string blob length", field: "string blob") }
        let blob = try section(Int(blobLength), "string blob")
        var previous: UInt64 = 0
        for k in 0...stringCount {
            let o = r.uint64(at: offsets + 8 * k)
            guard o >= previous, o <= blobLength else { throw corrupt("string offset \(k) is out of order", field: "string offsets") }
            previous = o
        }
        // Each group (ids, names, each text attribute) is one column: its bytes and offsets
        // read in place (a large catalog, from a mapped file), else its bytes copied from the
        // blob and its offsets made relative to its first byte; no String is built per value.
        func strings(_ group: Int, field: String) throws(DataError) -> StringColumn {
            let base = r.uint64(at: offsets + 8 * (group * n))
            let end = r.uint64(at: offsets + 8 * (group * n + n))
            guard end - base <= UInt64(StringColumn.maximumBytes) else {
                throw corrupt("\(end - base) bytes of text in one column", field: field)
            }
            if inPlace {
                return StringColumn(utf8: r.stored(UInt8.self, at: blob + Int(base), count: Int(end - base), inPlace: true),
                                    offsets: r.stored(UInt64.self, at: offsets + 8 * (group * n), count: n + 1, inPlace: true))
            }
            var ends = [UInt32](repeating: 0, count: n)
            for i in 0..<n { ends[i] = UInt32(truncatingIfNeeded: r.uint64(at: offsets + 8 * (group * n + i + 1)) - base) }
            return StringColumn(utf8: r.bytes(at: blob + Int(base), count: Int(end - base)), ends: ends)
        }
        let ids = try strings(0, field: "ids"), names = try strings(1, field: "names")
        let textValues = try (0..<t).map { a throws(DataError) in try strings(2 + a, field: header.textAttributes[a]) }
        let numbers = try section(8 * n * a, "numeric values")
        // Stored as the column keeps them (NaN for a gap), so they are copied, not decoded.
        let numericValues = (0..<a).map { attribute in
            NumericColumn(storage: r.stored(Double.self, at: numbers + 8 * attribute * n, count: n, inPlace: inPlace))
        }
        let coordinates = try section(16 * n, "locations")
        // Checked in place (every pair a location or NaN for both), then read in place or copied.
        let storedCoordinates = r.stored(Double.self, at: coordinates, count: 2 * n, inPlace: inPlace)
        if let (row, detail) = LocationColumn.problem(in: storedCoordinates) { throw corrupt("item \(row): \(detail)", field: "locations") }
        let locations = LocationColumn(checkedCoordinates: storedCoordinates)
        let featureStart = try section(4 * n * d, "features")
        let columnMedians = try section(4 * d, "column medians"), attributeMedians = try section(8 * a, "attribute medians")
        let medians = ColumnMedians(columns: Array(r.floats(at: columnMedians, count: d)),
                                    attributes: r.doubles(at: attributeMedians, count: a).map { $0.isNaN ? nil : $0 })
        let fingerprint = FNV1a64.hexDigest(of: r.uint64(at: try section(8, "fingerprint")))
        let blockCount = r.uint64(at: try section(8, "block count"))
        guard blockCount <= UInt64(n) else { throw corrupt("\(blockCount) blocks for \(n) items", field: "block layout") }
        var blockIndex: LinearBlockIndex?
        if blockCount > 0 {
            let b = Int(blockCount)
            let rows = try section(4 * n, "block rows"), starts = try section(8 * (b + 1), "block starts")
            let layout = LinearBlockIndex.Layout(rowAtPosition: r.int32s(at: rows, count: n),
                                                 blockStarts: (0...b).map { Int(truncatingIfNeeded: r.uint64(at: starts + 8 * $0)) })
            if let problem = layout.problem(rowCount: n) { throw corrupt("the block layout is not one: \(problem)", field: "block layout") }
            let values = try section(4 * n * d, "block features")
            let minima = try section(4 * b * d, "block minima"), maxima = try section(4 * b * d, "block maxima")
            // Read in place from a mapped file when this catalog keeps its features once (the
            // block order is then its only copy, and the kernel's, not the process's).
            let blockValues = r.stored(Float.self, at: values, count: n * d, inPlace: inPlace)
            blockIndex = LinearBlockIndex(checkedLayout: layout, dimension: d, values: blockValues,
                                          minima: r.floatArray(at: minima, count: b * d), maxima: r.floatArray(at: maxima, count: b * d))
        }
        guard at == size else { throw corrupt("\(size - at) bytes after the last section", field: "length") }
        do {
            var catalog: Catalog
            if let blockIndex, n >= featuresOnceFrom {
                // The block features are the catalog's only copy (the row-major section is
                // checksummed, not copied): a large catalog's features are held once.
                catalog = try Catalog(source: source, ids: ids, names: names, locations: locations,
                                      textAttributeNames: header.textAttributes, textValues: textValues,
                                      numericAttributeNames: header.numericAttributes, numericValues: numericValues,
                                      blocks: blockIndex, columns: columns)
            } else {
                catalog = try Catalog(source: source, ids: ids, names: names, locations: locations,
                                      textAttributeNames: header.textAttributes, textValues: textValues,
                                      numericAttributeNames: header.numericAttributes, numericValues: numericValues,
                                      features: Matrix(rows: n, columns: d, elements: r.floats(at: featureStart, count: n * d)),
                                      columns: columns)
                catalog.blockIndex = blockIndex
            }
            catalog.adoptDerived(medians: medians, fingerprint: fingerprint)
            if inPlace, let mapping = r.mapping { catalog.mappedFile.adopt(mapping) }
            return catalog
        } catch {
            throw corrupt(error.detail, field: error.field)
        }
    }

    // MARK: Loading

    /// How `load` got its catalog.
    public enum Origin: Sendable, Hashable {
        /// From the cache file.
        case cache
        /// From the CSV, and the cache file was written (it was missing, stale or of another
        /// format version: the reason).
        case rebuilt(reason: String)
    }

    /// The catalog of `catalogFile` read with `schema`, from `cachePath` when it holds this
    /// CSV's and schema's catalog, else from the CSV (then written to `cachePath` for the next
    /// start).
    ///
    /// A cache file that is not one, is truncated or fails its checksum is an error, not a
    /// silent rebuild: a damaged cache says something about the disk, and a wrong path must
    /// not be overwritten.
    ///
    /// - Throws: `DataError` from the CSV, or naming `cachePath` and what is wrong with it.
    /// - Returns: The catalog, where it came from, and the key of the CSV and schema (to check
    ///   the CSV is still the same file when it is read later).
    public static func load(catalogFile: String, schema: ItemSchema, cachePath: String) throws(DataError)
        -> (catalog: Catalog, origin: Origin, key: Key) {
        // The CSV's key hashes every byte of it: on another core, while the cache is read (a
        // hit counts only when the file's key is this one). The CSV's errors come first, as
        // when the key was computed before the cache was opened.
        let csvKey = BackgroundResult { Result { () throws(DataError) -> Key in try Key(catalogFile: catalogFile, schema: schema) } }
        var reason = "no cache file"
        if FileManager.default.fileExists(atPath: cachePath) {
            let read = Result { () throws(DataError) in try readWithKey(cachePath, key: nil, source: catalogFile) }
            let key = try csvKey.wait().get()
            switch read {
            case .success((.hit(let catalog), key)): return (catalog, .cache, key)
            case .success((.hit, _)), .success((.stale(.staleKey), _)): reason = "the cache was built from another CSV or schema"
            case let .success((.stale(.otherVersion(v)), _)): reason = "the cache is format version \(v), this build reads \(formatVersion)"
            case let .failure(error):
                // As when the key was compared before the rest was read: a file whose header
                // names another CSV or schema is stale, whatever is wrong after its header.
                guard let fileKey = headerKey(of: cachePath), fileKey != key else { throw error }
                reason = "the cache was built from another CSV or schema"
            }
        }
        let key = try csvKey.wait().get()
        var catalog = try Catalog(table: CSVTable(contentsOfFile: catalogFile), schema: schema)
        // Built once, here: the cache stores the index and the engine uses this one as it is.
        if catalog.count >= layoutThreshold { catalog.blockIndex = LinearBlockIndex(features: catalog.features) }
        try write(catalog, key: key, to: cachePath)
        // Served as the next start will read it: a large catalog's features held once.
        if catalog.count >= featuresOnceFromItems { catalog = catalog.holdingFeaturesInBlocks() }
        return (catalog, .rebuilt(reason: reason), key)
    }

    /// The key in the header of the cache file at `path`, when it is a cache of this format
    /// version with a whole fixed header (what `decode` checks before it compares keys), else nil.
    static func headerKey(of path: String) -> Key? {
        guard let handle = FileHandle(forReadingAtPath: path) else { return nil }
        defer { try? handle.close() }
        guard let data = try? handle.read(upToCount: fixedHeaderSize), data.count == fixedHeaderSize else { return nil }
        return data.withUnsafeBytes { raw -> Key? in
            let r = CacheReader(bytes: raw)
            guard Array(raw[0..<8]) == magic, r.uint32(at: 8) == formatVersion, r.uint32(at: 12) == 0 else { return nil }
            return Key(csvSize: r.uint64(at: 32), csvHash: r.uint64(at: 40), schemaDigest: r.uint64(at: 48))
        }
    }

    private struct HeaderJSON: Codable {
        var textAttributes: [String]
        var numericAttributes: [String]
        var hasLocations: Bool
        var columns: [ColumnJSON]
        enum CodingKeys: String, CodingKey {
            case textAttributes = "text_attributes", numericAttributes = "numeric_attributes"
            case hasLocations = "has_locations", columns
        }
    }

    private struct ColumnJSON: Codable {
        var name: String
        var group: String
        var source: String
        var role: String
        var category: String?
    }
}

extension ItemSchema {
    /// A digest of every field of the schema (FNV-1a 64): what the catalog cache is keyed by,
    /// so a reformatted schema file keeps its cache and any change of meaning rebuilds it.
    public var digest: UInt64 {
        var h = FNV1a64()
        h.combine("item-schema-1")
        h.combine(idColumn); h.combine(nameColumn)
        if let (lat, lon) = coordinateColumns { h.combine("coordinates"); h.combine(lat); h.combine(lon) } else { h.combine("no coordinates") }
        h.combine(UInt64(textAttributes.count)); textAttributes.forEach { h.combine($0) }
        h.combine(UInt64(numericAttributes.count)); numericAttributes.forEach { h.combine($0) }
        h.combine(UInt64(features.count))
        for f in features {
            h.combine(f.column); h.combine(f.name); h.combine(f.group)
            h.combine(f.missing == .reject ? "reject" : "impute")
            switch f.kind {
            case let .numeric(transform, standardize):
                h.combine("numeric")
                h.combine(transform == .identity ? "identity" : transform == .log1p ? "log1p" : "oneMinus")
                h.combine(standardize ? "standardize" : "raw")
            case let .categorical(categories):
                h.combine("categorical")
                if let categories { h.combine(UInt64(categories.count)); categories.forEach { h.combine($0) } } else { h.combine("discover") }
            case let .bins(edges, labels):
                h.combine("bins")
                h.combine(UInt64(edges.count)); edges.forEach { h.combine($0.bitPattern) }
                h.combine(UInt64(labels.count)); labels.forEach { h.combine($0) }
            case let .flag(label):
                h.combine("flag"); h.combine(label.map { "label:" + $0 } ?? "no label")
            }
        }
        return h.state
    }
}
