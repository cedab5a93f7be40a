import Foundation
import Testing
@testable import SwipeRank
import SwipeRankNumerics

@Suite("Catalog cache")
struct CatalogCacheTests {
    static let restaurantsCSV = Fixtures.root.appendingPathComponent("datasets/restaurants/restaurants.csv").path
    static let restaurantsSchema = Fixtures.root.appendingPathComponent("datasets/restaurants/restaurants.schema.json").path

    /// A catalog with gaps, unicode, quoted fields and items without locations, from a seed.
    static let generatedSchema = ItemSchema(
        idColumn: "id", nameColumn: "name", coordinateColumns: (latitude: "lat", longitude: "lon"),
        textAttributes: ["kind", "note"], numericAttributes: ["price", "size"],
        features: [
            .numeric("price", transform: .log1p, group: "cost"),
            .categorical("kind", group: "kind"),
            FeatureSpec(column: "size", kind: .bins(edges: [10, 100], labels: ["s", "m", "l"]), missing: .imputeWithIndicator, group: "size"),
            FeatureSpec(column: "open", kind: .flag(label: "Open late"), missing: .imputeWithIndicator, group: "hours"),
        ])

    static func generatedCSV(seed: UInt64, count: Int) -> String {
        var rng = SplitMix64(seed: seed)
        let kinds = ["a", "b", "café", "東京", "🍜 noodles", ""]
        let notes = ["", "plain", "with, comma", "with \"quotes\"", "long note that is longer than fifteen bytes", "naïve ünïcödé"]
        var lines = ["id,name,lat,lon,price,kind,size,open,note"]
        for i in 0..<count {
            let id = i % 7 == 3 ? "ïd-\(i)-日本" : "id\(i)"
            let name = i % 5 == 0 ? "\"Café \(i), \"\"the\"\" one\"" : "Name \(i) 🍕"
            let located = rng.next() % 4 != 0
            let lat = located ? String(format: "%.5f", Double(rng.next() % 180_000) / 1000 - 90) : ""
            let lon = located ? String(format: "%.5f", Double(rng.next() % 360_000) / 1000 - 180) : ""
            let price = rng.next() % 5 == 0 ? "" : String(Double(rng.next() % 10_000) / 100)
            let size = rng.next() % 6 == 0 ? "" : String(rng.next() % 300)
            let open = ["", "yes", "no", "1"][Int(rng.next() % 4)]
            let note = notes[Int(rng.next() % UInt64(notes.count))]
            let quotedNote = note.contains(",") || note.contains("\"") ? "\"" + note.replacingOccurrences(of: "\"", with: "\"\"") + "\"" : note
            lines.append([id, name, lat, lon, price, kinds[Int(rng.next() % UInt64(kinds.count))], size, open, quotedNote].joined(separator: ","))
        }
        return lines.joined(separator: "\n") + "\n"
    }

    static func expectIdentical(_ a: Catalog, _ b: Catalog) {
        #expect(a.ids == b.ids)
        #expect(a.names == b.names)
        #expect(a.locations == b.locations)
        #expect(a.textAttributeNames == b.textAttributeNames)
        #expect(a.textValues == b.textValues)
        #expect(a.numericAttributeNames == b.numericAttributeNames)
        #expect(a.numericValues == b.numericValues)
        #expect(a.features.elements.map(\.bitPattern) == b.features.elements.map(\.bitPattern))
        #expect(a.features.rows == b.features.rows && a.features.columns == b.features.columns)
        #expect(a.featuresByColumn == b.featuresByColumn)
        #expect(a.columns == b.columns)
        #expect(a.columns.map(\.center.bitPattern) == b.columns.map(\.center.bitPattern))
        #expect(a.columns.map(\.scale.bitPattern) == b.columns.map(\.scale.bitPattern))
        #expect(a.source == b.source)
        #expect(a.groups == b.groups)
        #expect(a.groupOfColumn == b.groupOfColumn)
        #expect(a.fingerprint == b.fingerprint)
        #expect(a.medians == b.medians)
        for (row, id) in a.ids.enumerated() {
            #expect(b.row(of: id) == row)
            #expect(a.summary(row: row) == b.summary(row: row))
        }
        let home = try! GeoPoint(latitude: 40.01, longitude: -75.02)
        var da: [Float] = [], db: [Float] = []
        a.distancesMiles(from: home, into: &da)
        b.distancesMiles(from: home, into: &db)
        #expect(da.map(\.bitPattern) == db.map(\.bitPattern))
        var rng = SplitMix64(seed: 7)
        for _ in 0..<3 {
            let weights = PreferenceWeights(features: (0..<a.dimension).map { _ in Float(Int(rng.next() % 2001) - 1000) / 500 }, terms: [])
            var sa: [Float] = [], sb: [Float] = []
            a.scores(weights: weights, terms: nil, into: &sa)
            b.scores(weights: weights, terms: nil, into: &sb)
            #expect(sa.map(\.bitPattern) == sb.map(\.bitPattern))
        }
    }

    static func roundTrip(_ catalog: Catalog) throws -> Catalog {
        let key = CatalogCache.Key(csvSize: 1, csvHash: 2, schemaDigest: 3)
        let bytes = try CatalogCache.encode(catalog, key: key)
        guard case let .hit(read) = try CatalogCache.decode(Data(bytes), path: "test.cache", key: key, source: catalog.source) else {
            Issue.record("the cache was stale")
            return catalog
        }
        return read
    }

    static func generated() throws -> Catalog {
        try Catalog(table: CSVTable(text: generatedCSV(seed: 42, count: 300), source: "generated.csv"), schema: generatedSchema)
    }

    @Test("XXH64 matches the reference digests")
    func xxh64() {
        func digest(_ bytes: [UInt8]) -> UInt64 { bytes.withUnsafeBytes { XXH64.hash($0) } }
        #expect(digest([]) == 0xEF46_DB37_51D8_E999)
        #expect(digest(Array("abc".utf8)) == 0x44BC_2CF5_AD77_0999)
        #expect(digest((0..<100).map { UInt8($0) }) == 0x6AC1_E580_3216_6597)
    }

    @Test("the restaurants catalog round-trips identically")
    func restaurants() throws {
        let schema = try ItemSchema.load(contentsOfFile: Self.restaurantsSchema)
        let catalog = try Catalog(table: CSVTable(contentsOfFile: Self.restaurantsCSV), schema: schema)
        Self.expectIdentical(catalog, try Self.roundTrip(catalog))
    }

    @Test("a catalog with gaps, unicode and items without locations round-trips identically")
    func generatedRoundTrip() throws {
        let catalog = try Self.generated()
        #expect(catalog.locations.contains(nil) && catalog.locations.contains { $0 != nil })
        #expect(catalog.numericValues.joined().contains(nil))
        Self.expectIdentical(catalog, try Self.roundTrip(catalog))
        // Encoding is deterministic.
        let key = CatalogCache.Key(csvSize: 1, csvHash: 2, schemaDigest: 3)
        #expect(try CatalogCache.encode(catalog, key: key) == CatalogCache.encode(try Self.generated(), key: key))
    }

    @Test("an empty catalog and one without coordinates round-trip")
    func edgeCases() throws {
        let schema = ItemSchema(idColumn: "id", nameColumn: "name", coordinateColumns: nil, textAttributes: [], numericAttributes: ["x"],
                                features: [.numeric("x", group: "x")])
        for text in ["id,name,x\n", "id,name,x\n1,one,2\n2,two,\n"] {
            let catalog = try Catalog(table: CSVTable(text: text, source: "small.csv"), schema: schema)
            Self.expectIdentical(catalog, try Self.roundTrip(catalog))
        }
    }

    @Test("every changed byte is an error or a stale cache, never a different catalog", arguments: [false, true])
    func flippedBytes(checksumBeside: Bool) throws {
        let catalog = try Self.generated()
        // With a block layout (stored from 0 items on here), so its sections are covered too.
        let bytes = try CatalogCache.encode(catalog, key: CatalogCache.Key(csvSize: 1, csvHash: 2, schemaDigest: 3), layoutFrom: 0)
        // With the checksum beside the decoding (a large file's way) every section is read
        // before it is known: every 23rd byte (each section hit), as each flip decodes the file.
        let stride = checksumBeside ? 23 : 1
        var fields: [String: Int] = [:]
        for offset in Swift.stride(from: 0, to: bytes.count, by: stride) {
            var damaged = bytes
            damaged[offset] ^= 0x10
            do {
                let result = try CatalogCache.decodeWithKey(Data(damaged), path: "x.cache", key: nil, source: catalog.source,
                                                            checksumBesideFrom: checksumBeside ? 0 : .max).lookup
                guard case .stale(.otherVersion) = result, (8..<12).contains(offset) else {
                    Issue.record("byte \(offset) changed went unnoticed")
                    continue
                }
            } catch {
                #expect(error.source == "x.cache")
                fields[error.field ?? "", default: 0] += 1
                if offset >= 32 { #expect(error.field == "checksum", "byte \(offset): \(error)") }
            }
        }
        let checksummed = (0..<bytes.count).filter { $0 % stride == 0 && ($0 >= 32 || (16..<24).contains($0)) }.count
        #expect(fields["checksum", default: 0] == checksummed)
        #expect(fields["magic"] == (0..<8).filter { $0 % stride == 0 }.count)
    }

    @Test("the cache file is written whole, chunk after chunk (a Data over 2 GiB was not), and a bad path is an error naming it")
    func writtenInChunks() throws {
        let dir = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        var rng = SplitMix64(seed: 3)
        for (size, chunk) in [(0, 1), (1, 1), (1_000, 7), (4_096, 4_096), (10_000, 999), (65_537, 1 << 26)] {
            let bytes = (0..<size).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
            let path = dir.appendingPathComponent("f\(size)-\(chunk)").path
            try writeFile(bytes, to: path, chunk: chunk)
            #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == Data(bytes), "\(size) bytes in chunks of \(chunk)")
            try writeFile(Array(bytes.prefix(size / 2)), to: path, chunk: chunk)  // an existing file is replaced
            #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == Data(bytes.prefix(size / 2)))
        }
        let missing = dir.appendingPathComponent("no/such/dir/f").path
        #expect { try writeFile([1, 2, 3], to: missing) } throws: { error in
            (error as? DataError)?.source == missing && "\(error)".contains("open")
        }
    }

    @Test("a truncated file is an error naming the file")
    func truncated() throws {
        let catalog = try Self.generated()
        let bytes = try CatalogCache.encode(catalog, key: CatalogCache.Key(csvSize: 1, csvHash: 2, schemaDigest: 3))
        for length in [0, 4, 40, bytes.count / 2, bytes.count - 1] {
            #expect(throws: DataError.self) {
                _ = try CatalogCache.decode(Data(bytes[..<length]), path: "x.cache", key: nil, source: "s")
            }
        }
        do {
            _ = try CatalogCache.decode(Data(bytes.dropLast(8)), path: "x.cache", key: nil, source: "s")
        } catch {
            #expect(error.description.contains("x.cache") && error.description.contains("truncated"))
        }
    }

    @Test("another format version is stale, and load rebuilds it")
    func otherVersion() throws {
        let catalog = try Self.generated()
        var bytes = try CatalogCache.encode(catalog, key: CatalogCache.Key(csvSize: 1, csvHash: 2, schemaDigest: 3))
        bytes[8] = 2  // the version before the derived sections
        let result = try CatalogCache.decode(Data(bytes), path: "x.cache", key: nil, source: "s")
        guard case .stale(.otherVersion(2)) = result else { Issue.record("not stale: \(result)"); return }

        let dir = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let (csv, cache) = (dir.appendingPathComponent("items.csv").path, dir.appendingPathComponent("items.cache").path)
        try Self.generatedCSV(seed: 42, count: 300).write(toFile: csv, atomically: true, encoding: .utf8)
        try Data(bytes).write(to: URL(fileURLWithPath: cache))
        let loaded = try CatalogCache.load(catalogFile: csv, schema: Self.generatedSchema, cachePath: cache)
        #expect(loaded.origin == .rebuilt(reason: "the cache is format version 2, this build reads 3"))
        #expect(try CatalogCache.load(catalogFile: csv, schema: Self.generatedSchema, cachePath: cache).origin == .cache)
    }

    static func temporaryDirectory() throws -> URL {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("swiperank-cache-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        return dir
    }

    @Test("load: built and written when missing, read when fresh, rebuilt when the CSV or schema changes")
    func staleKey() throws {
        let dir = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let (csv, cache) = (dir.appendingPathComponent("items.csv").path, dir.appendingPathComponent("items.cache").path)
        try Self.generatedCSV(seed: 42, count: 300).write(toFile: csv, atomically: true, encoding: .utf8)
        let fromCSV = try Catalog(table: CSVTable(contentsOfFile: csv), schema: Self.generatedSchema)

        let first = try CatalogCache.load(catalogFile: csv, schema: Self.generatedSchema, cachePath: cache)
        #expect(first.origin == .rebuilt(reason: "no cache file"))
        Self.expectIdentical(first.catalog, fromCSV)
        let second = try CatalogCache.load(catalogFile: csv, schema: Self.generatedSchema, cachePath: cache)
        #expect(second.origin == .cache)
        #expect(second.key == first.key)
        Self.expectIdentical(second.catalog, fromCSV)
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path).sorted() == ["items.cache", "items.csv"])

        // The same size, one byte different: the content hash tells.
        var text = Self.generatedCSV(seed: 42, count: 300)
        text = text.replacingOccurrences(of: "Name 1 🍕", with: "Name 1 🍔")
        try text.write(toFile: csv, atomically: true, encoding: .utf8)
        let third = try CatalogCache.load(catalogFile: csv, schema: Self.generatedSchema, cachePath: cache)
        #expect(third.origin == .rebuilt(reason: "the cache was built from another CSV or schema"))
        #expect(third.catalog.names.contains("Name 1 🍔"))
        #expect(try CatalogCache.load(catalogFile: csv, schema: Self.generatedSchema, cachePath: cache).origin == .cache)

        var schema = Self.generatedSchema
        schema.features[0] = .numeric("price", transform: .identity, group: "cost")
        #expect(schema.digest != Self.generatedSchema.digest)
        let fourth = try CatalogCache.load(catalogFile: csv, schema: schema, cachePath: cache)
        #expect(fourth.origin == .rebuilt(reason: "the cache was built from another CSV or schema"))
    }

    @Test("load: a damaged cache or another file is an error naming it, and is not overwritten")
    func damaged() throws {
        let dir = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let (csv, cache) = (dir.appendingPathComponent("items.csv").path, dir.appendingPathComponent("items.cache").path)
        try Self.generatedCSV(seed: 42, count: 300).write(toFile: csv, atomically: true, encoding: .utf8)
        _ = try CatalogCache.load(catalogFile: csv, schema: Self.generatedSchema, cachePath: cache)
        var bytes = try Data(contentsOf: URL(fileURLWithPath: cache))
        bytes[bytes.count - 3] ^= 1
        try bytes.write(to: URL(fileURLWithPath: cache))
        do {
            _ = try CatalogCache.load(catalogFile: csv, schema: Self.generatedSchema, cachePath: cache)
            Issue.record("a damaged cache loaded")
        } catch {
            #expect(error.description.hasPrefix(cache) && error.description.contains("checksum mismatch"))
        }
        // Damaged past its header, but the cache of another CSV: stale (its key tells first),
        // so rebuilt, whatever else is wrong with it; then read.
        try Self.generatedCSV(seed: 43, count: 300).write(toFile: csv, atomically: true, encoding: .utf8)
        for offset in [bytes.count - 3, 100, 30] {
            var other = bytes
            other[offset] ^= 0x40
            try other.write(to: URL(fileURLWithPath: cache))
            let rebuilt = try CatalogCache.load(catalogFile: csv, schema: Self.generatedSchema, cachePath: cache)
            #expect(rebuilt.origin == .rebuilt(reason: "the cache was built from another CSV or schema"), "byte \(offset)")
            #expect(try CatalogCache.load(catalogFile: csv, schema: Self.generatedSchema, cachePath: cache).origin == .cache)
        }
        try Data("id,name\n".utf8).write(to: URL(fileURLWithPath: cache))
        do {
            _ = try CatalogCache.load(catalogFile: csv, schema: Self.generatedSchema, cachePath: cache)
            Issue.record("a non-cache file loaded")
        } catch {
            #expect(error.description.contains("not a SwipeRank catalog cache"))
        }
        #expect(try String(contentsOfFile: cache, encoding: .utf8) == "id,name\n")
    }

    @Test("a catalog with external features is not cached")
    func external() throws {
        let feature = ExternalFeature(name: "share", group: "share", values: [:], defaultValue: 0)
        let catalog = try Catalog(table: CSVTable(text: Self.generatedCSV(seed: 1, count: 10), source: "g.csv"),
                                  schema: Self.generatedSchema, external: [feature])
        #expect(throws: DataError.self) { _ = try CatalogCache.encode(catalog, key: CatalogCache.Key(csvSize: 0, csvHash: 0, schemaDigest: 0)) }
    }

    /// `bytes` with its checksum recomputed: a forged file, which only the checks after the
    /// checksum can catch.
    static func resealed(_ bytes: [UInt8]) -> [UInt8] {
        var sealed = bytes
        let checksum = sealed.withUnsafeBytes { XXH64.hash(UnsafeRawBufferPointer(rebasing: $0[24...])) }
        withUnsafeBytes(of: checksum.littleEndian) { for (k, b) in $0.enumerated() { sealed[16 + k] = b } }
        return sealed
    }

    @Test("the block layout: stored from the threshold on, read back as split, not stored below it")
    func blockLayout() throws {
        let catalog = try Self.generated()
        let key = CatalogCache.Key(csvSize: 1, csvHash: 2, schemaDigest: 3)
        let split = LinearBlockIndex(features: catalog.features).layout
        #expect(split.blockStarts.count >= 3, "the 300 rows split into blocks")
        guard case let .hit(with) = try CatalogCache.decode(Data(try CatalogCache.encode(catalog, key: key, layoutFrom: 300)),
                                                            path: "x.cache", key: key, source: catalog.source) else {
            Issue.record("stale")
            return
        }
        #expect(with.blockLayout == split)
        Self.expectIdentical(catalog, with)
        // Below the threshold (one item short, and the default): no layout, and the engine
        // splits for itself; the file is the layout's bytes shorter.
        let without = try Self.roundTrip(catalog)
        #expect(without.blockLayout == nil)
        let short = try CatalogCache.encode(catalog, key: key, layoutFrom: 301)
        guard case let .hit(below) = try CatalogCache.decode(Data(short), path: "x.cache", key: key, source: catalog.source) else {
            Issue.record("stale")
            return
        }
        #expect(below.blockLayout == nil)
        let withBytes = try CatalogCache.encode(catalog, key: key, layoutFrom: 300)
        func padded(_ bytes: Int) -> Int { (bytes + 7) / 8 * 8 }
        let (d, b) = (catalog.dimension, split.blockStarts.count - 1)
        #expect(withBytes.count - short.count == padded(4 * 300) + 8 * split.blockStarts.count + padded(4 * 300 * d) + 2 * padded(4 * b * d),
                "block rows, starts, features by position, minima, maxima")
        // The blocks read back are the index built from the features: no gather at a start.
        let built = LinearBlockIndex(features: catalog.features)
        #expect(with.blockIndex?.values.map(\.bitPattern) == built.values.map(\.bitPattern))
        #expect(with.blockIndex?.minima.map(\.bitPattern) == built.minima.map(\.bitPattern))
        #expect(with.blockIndex?.maxima.map(\.bitPattern) == built.maxima.map(\.bitPattern))
        // A catalog that carries a layout writes that one (the load path splits once, then writes).
        var carrying = catalog
        carrying.blockLayout = .init(rowAtPosition: (0..<300).map(Int32.init), blockStarts: [0, 100, 300])
        guard case let .hit(back) = try CatalogCache.decode(Data(try CatalogCache.encode(carrying, key: key)), path: "x.cache",
                                                            key: key, source: catalog.source) else {
            Issue.record("stale")
            return
        }
        #expect(back.blockLayout == carrying.blockLayout)
    }

    @Test("the stored medians and fingerprint are the rows' own, and are read, not derived again")
    func derivedSections() throws {
        var rng = SplitMix64(seed: 12)
        let restaurants = try Catalog(table: CSVTable(contentsOfFile: Self.restaurantsCSV), schema: ItemSchema.load(contentsOfFile: Self.restaurantsSchema))
        var catalogs = [restaurants, try Self.generated()]
        for _ in 0..<6 {
            let count = Int(rng.next() % 400)
            catalogs.append(try Catalog(table: CSVTable(text: Self.generatedCSV(seed: rng.next(), count: count), source: "g.csv"),
                                        schema: Self.generatedSchema))
        }
        for catalog in catalogs {
            let read = try Self.roundTrip(catalog)
            // Adopted from the file: already there before any reader derives them.
            #expect(read.derivedFingerprint.built == catalog.computeFingerprint())
            #expect(read.medians == catalog.computeMedians())
            #expect(read.medians == read.computeMedians(), "the file's medians are those of the rows read back")
        }
    }

    @Test("a forged block layout (checksum resealed) is an error naming the section, never an index")
    func forgedLayout() throws {
        let catalog = try Self.generated()
        let key = CatalogCache.Key(csvSize: 1, csvHash: 2, schemaDigest: 3)
        let bytes = try CatalogCache.encode(catalog, key: key, layoutFrom: 0)
        let plain = try CatalogCache.encode(catalog, key: key, layoutFrom: .max)
        // The layout follows the features: the plain file's last 8 bytes are its block count (0).
        let blockCountAt = plain.count - 8
        let rowsAt = blockCountAt + 8
        func expectRejected(_ forged: [UInt8], _ what: String) {
            do {
                _ = try CatalogCache.decode(Data(Self.resealed(forged)), path: "x.cache", key: key, source: "s")
                Issue.record("\(what): accepted")
            } catch {
                #expect(error.source == "x.cache", "\(what)")
                #expect(error.field == "block layout" || error.field?.hasPrefix("block") == true, "\(what): \(error)")
            }
        }
        var duplicate = bytes  // row 0's position holds the second row too
        for k in 0..<4 { duplicate[rowsAt + 4 + k] = duplicate[rowsAt + k] }
        expectRejected(duplicate, "a row twice")
        var tooMany = bytes  // more blocks than items
        withUnsafeBytes(of: UInt64(301).littleEndian) { for (k, b) in $0.enumerated() { tooMany[blockCountAt + k] = b } }
        expectRejected(tooMany, "301 blocks")
        var fewer = bytes  // one block fewer: the starts no longer reach the end of the file's sections
        let blocks = fewer.withUnsafeBytes { UInt64(littleEndian: $0.loadUnaligned(fromByteOffset: blockCountAt, as: UInt64.self)) }
        withUnsafeBytes(of: (blocks - 1).littleEndian) { for (k, b) in $0.enumerated() { fewer[blockCountAt + k] = b } }
        do {
            _ = try CatalogCache.decode(Data(Self.resealed(fewer)), path: "x.cache", key: key, source: "s")
            Issue.record("a short block count: accepted")
        } catch {
            #expect(error.source == "x.cache")
        }
        // Unforged, the same bytes decode.
        #expect(throws: Never.self) { _ = try CatalogCache.decode(Data(bytes), path: "x.cache", key: key, source: "s") }
    }
}
