import Foundation
import Testing
@testable import SwipeRank
import SwipeRankNumerics
import Synchronization

@Suite("Catalog memory: id table, numeric columns, the feature-major copy on demand")
struct CatalogMemoryTests {
    /// A random id: short (stored inline in a String) or long, ASCII or not.
    static func randomID(_ rng: inout SplitMix64, alphabet: [String]) -> String {
        let length = Int.random(in: 1...(Bool.random(using: &rng) ? 6 : 40), using: &rng)
        return (0..<length).map { _ in alphabet.randomElement(using: &rng)! }.joined()
    }

    @Test("IDRows finds every id at its row and nothing else, as a [String: Int] does (300 seeded sets)")
    func idRowsAgainstDictionary() {
        // Two spellings of é (precomposed, and e + combining accent) are one String: a
        // dictionary keys them as one id, and so must the table.
        let alphabet = ["a", "b", "c", "0", "1", "-", "é", "e\u{301}", "漢", "🙂"]
        var rng = SplitMix64(seed: 1)
        for trial in 0..<300 {
            let n = trial < 20 ? trial : Int.random(in: 0...600, using: &rng)
            var ids: [String] = []
            var reference: [String: Int] = [:]
            while ids.count < n {
                let id = Self.randomID(&rng, alphabet: alphabet)
                if reference[id] == nil { reference[id] = ids.count; ids.append(id) }
            }
            let column = StringColumn(ids)
            // Every other trial hashes on every core (runs of rows, some empty), as from
            // `IDRows.parallelHashingFrom` ids on.
            guard case .success(let table) = IDRows.build(column, parallelFrom: trial % 2 == 0 ? 0 : .max) else {
                Issue.record("distinct ids refused (trial \(trial))"); continue
            }
            #expect(Array(column) == ids)
            for (row, id) in ids.enumerated() { #expect(table.row(of: id, ids: column) == row) }
            for _ in 0..<200 {
                let probe = Self.randomID(&rng, alphabet: alphabet)
                #expect(table.row(of: probe, ids: column) == reference[probe], "trial \(trial): \(probe)")
            }
        }
    }

    @Test("IDRows.build reports the first repeated id and its first row, as inserting into a dictionary in row order does")
    func idRowsRepeats() {
        let alphabet = ["x", "y", "é", "e\u{301}"]
        var rng = SplitMix64(seed: 2)
        var repeats = 0
        for _ in 0..<400 {
            let ids = (0..<Int.random(in: 1...40, using: &rng)).map { _ in Self.randomID(&rng, alphabet: alphabet) }
            var reference: [String: Int] = [:]
            var expected: (first: Int, repeated: Int)?
            for (row, id) in ids.enumerated() {
                if let first = reference[id] { expected = (first, row); break }
                reference[id] = row
            }
            for parallelFrom in [0, Int.max] {
                switch IDRows.build(StringColumn(ids), parallelFrom: parallelFrom) {
                case .success: #expect(expected == nil, "\(ids)")
                case .failure(let repeated):
                    repeats += 1
                    #expect(expected?.first == repeated.first && expected?.repeated == repeated.repeated, "\(ids)")
                }
            }
        }
        #expect(repeats > 100)  // the reference covers both outcomes
        // The canonically equivalent spellings are one id.
        guard case .failure(let r) = IDRows.build(StringColumn(["é", "e\u{301}"])) else { Issue.record("é twice accepted"); return }
        #expect(r.first == 0 && r.repeated == 1)
    }

    @Test("a catalog from parts refuses an id twice, naming it; row(of:) finds each id")
    func catalogIDs() throws {
        let columns = [FeatureColumn(name: "x", group: "g", source: "x", role: .value)]
        func parts(_ ids: [String]) throws -> Catalog {
            try Catalog(source: "parts", ids: StringColumn(ids), names: StringColumn(ids), locations: LocationColumn(ids.map { _ in nil }), textAttributeNames: [],
                        textValues: [], numericAttributeNames: [], numericValues: [],
                        features: Matrix(rows: ids.count, columns: 1), columns: columns)
        }
        let ids = (0..<1_000).map { "item-\($0)-with-a-long-suffix" }
        let catalog = try parts(ids)
        for (row, id) in ids.enumerated() { #expect(catalog.row(of: id) == row) }
        #expect(catalog.row(of: "item-1000-with-a-long-suffix") == nil)
        #expect(catalog.row(of: "") == nil)
        do {
            _ = try parts(["a", "b", "a"])
            Issue.record("duplicate accepted")
        } catch let error as DataError {
            #expect(error.kind == .duplicateID)
            #expect(error.detail == "duplicate id \"a\"")
        } catch { Issue.record("unexpected \(error)") }
    }

    @Test("NumericColumn: nil marks a gap, NaN is the storage of one; equality row by row")
    func numericColumn() {
        var rng = SplitMix64(seed: 3)
        for _ in 0..<100 {
            let values: [Double?] = (0..<Int.random(in: 0...50, using: &rng)).map { _ in
                Bool.random(using: &rng) ? nil : Double.random(in: -1e6...1e6, using: &rng)
            }
            let column = NumericColumn(values)
            #expect(Array(column) == values)
            #expect(column.count == values.count)
            #expect(column.storage.map { $0.isNaN } == values.map { $0 == nil })
            #expect(NumericColumn(storage: column.storage) == column)
            if let i = values.indices.randomElement(using: &rng) {
                var changed = values
                changed[i] = values[i] == nil ? 1.5 : nil
                #expect(NumericColumn(changed) != column)
            }
        }
        #expect(NumericColumn([1, nil]) != NumericColumn([1]))
        #expect(NumericColumn([-0.0]) == NumericColumn([0.0]))  // as Double? compares them
    }

    /// A catalog of `n` rows and three columns from parts (seeded values).
    static func generated(_ n: Int, seed: UInt64) throws -> Catalog {
        var rng = SplitMix64(seed: seed)
        var features = Matrix(rows: n, columns: 3)
        for r in 0..<n {
            features[r, 0] = Float.random(in: -2...2, using: &rng)
            features[r, 1] = Float(Int.random(in: 0...1, using: &rng))  // x's missing indicator
            features[r, 2] = Float.random(in: 0...1, using: &rng)
        }
        let columns = [FeatureColumn(name: "x", group: "g", source: "x", role: .value),
                       FeatureColumn(name: "x_missing", group: "g", source: "x", role: .missingIndicator),
                       FeatureColumn(name: "y", group: "h", source: "y", role: .value)]
        let ids = (0..<n).map { "r\($0)" }
        let values: [Double?] = (0..<n).map { (r: Int) -> Double? in r % 7 == 0 ? nil : Double((r * 7_919) % 1_000) }
        let numbers = NumericColumn(values)
        return try Catalog(source: "generated", ids: StringColumn(ids), names: StringColumn(ids), locations: LocationColumn(ids.map { _ in nil }),
                           textAttributeNames: [], textValues: [], numericAttributeNames: ["v"], numericValues: [numbers],
                           features: features, columns: columns)
    }

    @Test("LocationColumn: nil where none, every location as given; a cache's coordinates checked pair by pair")
    func locationColumn() throws {
        var rng = SplitMix64(seed: 4)
        for _ in 0..<100 {
            let locations: [GeoPoint?] = try (0..<Int.random(in: 0...40, using: &rng)).map { _ in
                Bool.random(using: &rng) ? nil : try GeoPoint(latitude: Double.random(in: -90...90, using: &rng),
                                                             longitude: Double.random(in: -180...180, using: &rng))
            }
            let column = LocationColumn(locations)
            #expect(Array(column) == locations && column.count == locations.count)
            #expect(LocationColumn.problem(in: column.coordinates) == nil)
            #expect(LocationColumn(checkedCoordinates: column.coordinates) == column)
            if let i = locations.indices.randomElement(using: &rng) {
                var changed = locations
                changed[i] = locations[i] == nil ? try GeoPoint(latitude: 1, longitude: 2) : nil
                #expect(LocationColumn(changed) != column)
            }
        }
        // A pair out of range, half missing or non-finite is named by its row.
        let bad: [(Double, Double, String)] = [(91, 0, "latitude 91.0 is outside -90...90"), (0, -181, "longitude -181.0 is outside -180...180"),
                                               (.nan, 3, "latitude/longitude must be finite numbers"), (.infinity, 0, "latitude/longitude must be finite numbers")]
        for (lat, lon, detail) in bad {
            let coordinates = StoredValues<Double>([10, 20, .nan, .nan, lat, lon])
            let problem = LocationColumn.problem(in: coordinates)
            #expect(problem?.row == 2 && problem?.detail == detail)
        }
    }

    @Test("StringColumn over a cache's own offsets reads every value as the built column does, and equals it")
    func stringColumnOffsets() {
        var rng = SplitMix64(seed: 5)
        for _ in 0..<100 {
            let values = (0..<Int.random(in: 0...40, using: &rng)).map { _ in
                String((0..<Int.random(in: 0...12, using: &rng)).map { _ in ["a", "é", "z", "😀", " "].randomElement(using: &rng)! })
            }
            let built = StringColumn(values)
            // As a cache stores a column after others: absolute offsets from some base.
            let base = UInt64.random(in: 0...1_000, using: &rng)
            let offsets = [base] + built.indices.map { base + UInt64(built.byteRange($0).upperBound) }
            let read = StringColumn(utf8: StoredValues(built.withUTF8 { Array($0) }), offsets: StoredValues(offsets))
            #expect(Array(read) == values && read == built && read.count == values.count)
            for (row, value) in values.enumerated() { #expect(read.value(at: row, equals: value) && read.byteRange(row) == built.byteRange(row)) }
            if !values.isEmpty { #expect(read != StringColumn(values.dropLast() + ["other"])) }
        }
    }

    @Test("up to eagerFeatureMajorLimit items the feature-major copy is built with the catalog")
    func eagerCopy() throws {
        let catalog = try Self.generated(1_000, seed: 4)
        #expect(catalog.builtFeaturesByColumn == catalog.features.transposed)
    }

    @Test("above it: built by the first reader, once, shared by copies; the matcher's medians from a transient copy")
    func lazyCopy() throws {
        let n = Catalog.eagerFeatureMajorLimit + 1
        let catalog = try Self.generated(n, seed: 5)
        #expect(catalog.builtFeaturesByColumn == nil)
        // The item matcher's medians equal the sorted references without keeping the copy.
        let matcher = ItemMatcher(catalog: catalog)
        #expect(catalog.builtFeaturesByColumn == nil)
        let observed = (0..<n).filter { catalog.features[$0, 1] == 0 }.map { catalog.features[$0, 0] }.sorted()
        #expect(matcher.columnMedians[0] == observed[observed.count / 2])
        let y = (0..<n).map { catalog.features[$0, 2] }.sorted()
        #expect(matcher.columnMedians[2] == y[n / 2])
        let v = catalog.numericValues[0].compactMap { $0 }.sorted()
        #expect(matcher.attributeMedians[0] == v[v.count / 2])
        // A copy made before the first read sees what that read built; concurrent readers agree.
        let copy = catalog
        let reference = catalog.features.transposed
        let results = Mutex<[Matrix]>([])
        DispatchQueue.concurrentPerform(iterations: 4) { _ in
            let m = catalog.featuresByColumn
            results.withLock { $0.append(m) }
        }
        #expect(results.withLock { $0.count } == 4)
        #expect(results.withLock { $0.allSatisfy { $0 == reference } })
        #expect(copy.builtFeaturesByColumn == reference)
        // Scoring every item reads it: the same scores as row by row.
        var scores: [Float] = []
        let weights = PreferenceWeights(features: [0.5, -1, 2], terms: [])
        catalog.scores(weights: weights, terms: nil, into: &scores)
        #expect(scores.count == n)
        let x = catalog.features
        let mismatches = (0..<n).filter { r in
            let a: Float = 0.5 * x[r, 0], b: Float = -1 * x[r, 1], c: Float = 2 * x[r, 2]
            return scores[r] != (a + b) + c
        }
        #expect(mismatches.isEmpty)
    }

    @Test("a cache read above eagerFeatureMajorLimit holds the features once, in block order; below, in row order")
    func featuresOnceFromCache() throws {
        let key = CatalogCache.Key(csvSize: 1, csvHash: 2, schemaDigest: 3)
        #expect(CatalogCache.featuresOnceFromItems == Catalog.eagerFeatureMajorLimit + 1)
        for n in [Catalog.eagerFeatureMajorLimit, Catalog.eagerFeatureMajorLimit + 1] {
            let catalog = try Self.generated(n, seed: 6)
            guard case let .hit(read) = try CatalogCache.decode(Data(try CatalogCache.encode(catalog, key: key)), path: "x.cache",
                                                                key: key, source: catalog.source) else {
                Issue.record("stale"); continue
            }
            #expect(read.blockIndex != nil)
            #expect(read.featureRows.isRowOrder == (n <= Catalog.eagerFeatureMajorLimit))
            #expect(read.builtFeaturesByColumn == (n <= Catalog.eagerFeatureMajorLimit ? catalog.features.transposed : nil))
            // Single rows, as serving reads them, equal the original rows; the matcher's
            // explanations read them too (its medians adopted from the file).
            let x = catalog.features
            var rng = SplitMix64(seed: UInt64(n))
            for _ in 0..<2_000 {
                let r = Int.random(in: 0..<n, using: &rng)
                #expect((0..<3).allSatisfy { read.featureRows[r, $0] == x[r, $0] })
            }
            let weights = PreferenceWeights(features: [0.5, -1, 2], terms: [])
            let (a, b) = (ItemMatcher(catalog: read), ItemMatcher(catalog: catalog))
            let user = try b.student(ItemProfile())
            for r in stride(from: 0, to: n, by: 997) {
                #expect(read.groupContributions(row: r, weights: weights, terms: nil) == catalog.groupContributions(row: r, weights: weights, terms: nil))
                #expect(read.columnContributions(row: r, weights: weights) == catalog.columnContributions(row: r, weights: weights))
                let withTerm = PreferenceWeights(features: weights.features, terms: user.terms.names.map { _ in 0.3 })
                #expect(a.explanations(row: r, student: user, weights: withTerm, limit: 3)
                        == b.explanations(row: r, student: user, weights: withTerm, limit: 3))
            }
            // The row-major matrix when asked: built once from the blocks, equal to the original.
            #expect(read.features == x)
            #expect(read.fingerprint == catalog.fingerprint)
        }
    }

    @Test("a parsed catalog with a block index can drop its row-major copy: same rows, features, fingerprint and block index")
    func holdingFeaturesInBlocks() throws {
        let catalog = try Self.generated(3_000, seed: 7)
        #expect(catalog.holdingFeaturesInBlocks().featureRows.isRowOrder)  // no block index: unchanged
        var indexed = catalog
        indexed.blockIndex = LinearBlockIndex(features: catalog.features, blockSize: 64)
        let once = indexed.holdingFeaturesInBlocks()
        #expect(!once.featureRows.isRowOrder && indexed.featureRows.isRowOrder)
        #expect(once.blockIndex?.layout == indexed.blockIndex?.layout)
        for r in 0..<catalog.count { #expect((0..<3).allSatisfy { once.featureRows[r, $0] == catalog.features[r, $0] }) }
        #expect(once.features == catalog.features)
        #expect(once.fingerprint == catalog.fingerprint && once.ids == catalog.ids)
        // A new block index on it goes back to the rows' own order, over the same features.
        var reindexed = once
        reindexed.blockLayout = LinearBlockIndex(features: catalog.features, blockSize: 32).layout
        #expect(reindexed.featureRows.isRowOrder && reindexed.features == catalog.features)
        #expect(reindexed.blockIndex.map { Array($0.values) } == Array(LinearBlockIndex(features: catalog.features, blockSize: 32).values))
    }

    /// The fingerprint as first defined: FNV-1a 64 over the count's 8 bytes, each id's UTF-8
    /// and a 0xFF, each column name's UTF-8 and a 0xFF, each feature's bit pattern widened to
    /// 8 bytes; least significant bytes first. Stored sessions carry it, so it must not change.
    static func referenceFingerprint(_ catalog: Catalog) -> String {
        var h: UInt64 = 0xCBF2_9CE4_8422_2325
        func byte(_ b: UInt8) { h = (h ^ UInt64(b)) &* 0x0000_0100_0000_01B3 }
        func word(_ value: UInt64) { var v = value; for _ in 0..<8 { byte(UInt8(truncatingIfNeeded: v)); v >>= 8 } }
        func text(_ s: String) { for b in s.utf8 { byte(b) }; byte(0xFF) }
        word(UInt64(catalog.count))
        for id in catalog.ids { text(id) }
        for column in catalog.columns { text(column.name) }
        for v in catalog.features.elements { word(UInt64(v.bitPattern)) }
        let hex = String(h, radix: 16)
        return String(repeating: "0", count: 16 - hex.count) + hex
    }

    @Test("the fingerprint equals its first definition byte for byte (shipped catalogs, 40 seeded ones with Unicode ids)")
    func fingerprint() throws {
        #expect(Fixtures.schools.catalog.fingerprint == Self.referenceFingerprint(Fixtures.schools.catalog))
        let dir = Fixtures.root.appendingPathComponent("datasets/restaurants")
        let restaurants = try Catalog(table: try CSVTable(contentsOfFile: dir.appendingPathComponent("restaurants.csv").path),
                                      schema: ItemSchema.load(contentsOfFile: dir.appendingPathComponent("restaurants.schema.json").path))
        #expect(restaurants.fingerprint == Self.referenceFingerprint(restaurants))
        var rng = SplitMix64(seed: 6)
        for trial in 0..<40 {
            let n = trial == 0 ? 0 : Int.random(in: 1...300, using: &rng)
            var seen = Set<String>()
            var ids: [String] = []
            while ids.count < n {
                let id = Self.randomID(&rng, alphabet: ["a", "Z", "9", "é", "漢", "🙂", " "])
                if seen.insert(id).inserted { ids.append(id) }
            }
            var features = Matrix(rows: n, columns: 2)
            for r in 0..<n { features[r, 0] = Float.random(in: -1e6...1e6, using: &rng); features[r, 1] = r % 3 == 0 ? -0.0 : .infinity }
            let columns = [FeatureColumn(name: "a", group: "g", source: "a", role: .value),
                           FeatureColumn(name: "b✓", group: "g", source: "b", role: .value)]
            let catalog = try Catalog(source: "t", ids: StringColumn(ids), names: StringColumn(ids), locations: LocationColumn(ids.map { _ in nil }),
                                      textAttributeNames: [], textValues: [], numericAttributeNames: [], numericValues: [],
                                      features: features, columns: columns)
            #expect(catalog.fingerprint == Self.referenceFingerprint(catalog), "trial \(trial)")
        }
    }
}
