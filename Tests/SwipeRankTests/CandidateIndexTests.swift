import Foundation
import Testing
@testable import SwipeRank
import SwipeRankEvaluation
import SwipeRankNumerics

/// The engine's candidate index (large catalogs): sessions served through it must deal exactly
/// the decks of the full scan — the same cards in the same order, with the same match scores,
/// probes, propensities and explanations — and so learn exactly the same, swipe after swipe.
@Suite("Candidate index", .serialized)
struct CandidateIndexTests {

    /// One ~60,000-item catalog for the suite (building it is the slow part).
    static let catalog: Catalog = {
        // One item in 500 without a location: a discovery card scored one by one.
        return try! SyntheticCatalog.catalog(items: 60_000, seed: 30, unlocatedEvery: 500)
    }()

    /// The same engine twice: with the index (the default threshold) and with the full scan.
    static func engines(population: Bool, factors: Bool, configure: (inout EngineConfiguration) -> Void = { _ in })
        -> (indexed: SwipeEngine<ItemMatcher>, scan: SwipeEngine<ItemMatcher>) {
        var configuration = EngineConfiguration()
        configure(&configuration)
        let matcher = ItemMatcher(catalog: catalog, regionAttribute: "neighborhood")
        var indexed = SwipeEngine(matcher: matcher, configuration: configuration)
        var scan = SwipeEngine(matcher: matcher, configuration: configuration, candidateIndexThreshold: .max)
        var rng = SplitMix64(seed: 77)
        if population {
            // Item effects on a coarse grid of values, so far items tie often.
            let prior = PopulationPrior(catalogFingerprint: indexed.catalogFingerprint, featureCount: catalog.dimension, termNames: ["distance"],
                                        weightShift: (0...catalog.dimension).map { _ in Double.random(in: -0.3...0.3, using: &rng) },
                                        itemEffects: catalog.ids.map { _ in Double(Int.random(in: -3...3, using: &rng)) / 8 },
                                        students: 100, swipes: 1_000, itemPrecision: 1, exposureWeight: 0.5,
                                        exposureEffects: catalog.ids.map { _ in Double(Int.random(in: -2...2, using: &rng)) / 16 })
            indexed = try! indexed.withPopulation(prior)
            scan = try! scan.withPopulation(prior)
        }
        if factors {
            let f = 3
            let file = FactorModelFile(dimension: f, confidence: 4, dislikeConfidence: 2, regularization: 0.5, weight: 1,
                                       itemIDs: Array(catalog.ids.prefix(500)),
                                       itemFactors: (0..<500).map { _ in (0..<f).map { _ in Double.random(in: -1...1, using: &rng) } },
                                       featureNames: catalog.columns.map(\.name),
                                       featureEmbedding: catalog.columns.map { _ in (0..<f).map { _ in Double.random(in: -0.5...0.5, using: &rng) } })
            indexed = try! indexed.withFactors(file)
            scan = try! scan.withFactors(file)
        }
        #expect(indexed.hasCandidateIndex && !scan.hasCandidateIndex)
        return (indexed, scan)
    }

    /// Plays `rounds` decks of `count` on both engines with the same swipes and compares every
    /// deck, the served cards and the learned weights.
    static func compare(_ engines: (indexed: SwipeEngine<ItemMatcher>, scan: SwipeEngine<ItemMatcher>), profile: ItemProfile,
                        seed: UInt64, rounds: Int, count: Int = 10, expectIndexed: Bool = true) throws {
        var a = try engines.indexed.session(studentID: "s", profile: profile, seed: seed)
        var b = try engines.scan.session(studentID: "s", profile: profile, seed: seed)
        #expect(a.usesCandidateIndex(student: a.student) == expectIndexed)
        // The index engine resolves the student with nothing per item (computed when read),
        // the scan engine with every item's values: the decks below must not tell them apart.
        #expect(a.student.byteCount == 256 && a.student.distances.isComputedOnAccess == (profile.home != nil))
        #expect(!b.student.distances.isComputedOnAccess && b.student.terms.byteCount == 2 * catalog.count)
        var rng = SplitMix64(seed: seed &* 31)
        var swipe = 0
        for round in 0..<rounds {
            // The student's grade scale, bit for bit: the index path scores the sampled rows
            // from its own copy of their features and the student's cached terms there.
            if a.usesCandidateIndex(student: a.student) {
                let (scoresA, scoresB) = (a.deckScores(), b.deckScores())
                #expect(scoresA.indexed && !scoresB.indexed && scoresA.gradeSampleUnits != nil)
                let (scaleA, scaleB) = (scoresA.gradeScale(engine: engines.indexed),
                                        scoresB.gradeScale(engine: engines.scan))
                #expect(scaleA.thresholds.map(\.bitPattern) == scaleB.thresholds.map(\.bitPattern), "round \(round): grade scales differ")
            }
            let deckA = a.deck(count: count), deckB = b.deck(count: count)
            #expect(deckA == deckB, "seed \(seed) round \(round): decks differ\n\(deckA.ids)\n\(deckB.ids)")
            guard deckA == deckB else { return }
            // Play all cards but the last of every other deck (it stays open: the next deck repeats it).
            let cards = deckA.open.map(\.recommendation) + deckA.dealt.recommendations
            for (i, card) in cards.enumerated() where !(round % 2 == 1 && i == cards.count - 1) {
                let like = Double(rng.next() % 1_000) / 1_000 < card.matchScore
                let s = Swipe(swipeID: "w\(swipe)", cardID: card.item.id, action: like ? .like : .dislike, timestamp: Int64(swipe))
                swipe += 1
                let ra = try a.recordSwipe(s), rb = try b.recordSwipe(s)
                #expect(ra == rb)
            }
            // Now and then an organic judgement of a card never served (near or far).
            if round % 3 == 2 {
                let row = Int(rng.next() % UInt64(catalog.count))
                let s = Swipe(swipeID: "j\(round)", cardID: catalog.ids[row], action: .like, timestamp: Int64(swipe))
                _ = try? a.recordJudgement(s, weight: 2)
                _ = try? b.recordJudgement(s, weight: 2)
            }
        }
        #expect(a.served == b.served)
        #expect(a.model.mean == b.model.mean)
        #expect(a.servedPerBand == b.servedPerBand)
    }

    static func homes(_ count: Int, seed: UInt64) -> [GeoPoint] {
        var rng = SplitMix64(seed: seed)
        var result: [GeoPoint] = []
        while result.count < count {
            if let home = catalog.locations[Int(rng.next() % UInt64(catalog.count))] { result.append(home) }
        }
        return result
    }

    @Test("students with a home: identical decks and learning with the index and with the full scan")
    func withHome() throws {
        let engines = Self.engines(population: false, factors: false)
        for (i, home) in Self.homes(4, seed: 1).enumerated() {
            let miles = [25.0, 5, 60, 500][i]
            try Self.compare(engines, profile: ItemProfile(home: home, maxDistanceMiles: miles, preferences: ["price_level": -0.5]),
                             seed: UInt64(i), rounds: 9)
        }
        // The rows near home were listed once, when the student was resolved, and are kept
        // with it (the student's own per-item values are computed on access: 256 bytes).
        let profile = ItemProfile(home: Self.homes(1, seed: 1)[0], maxDistanceMiles: 25, preferences: ["price_level": -0.5])
        let cached = try engines.indexed.resolved(ProfileKey(profile))
        let near = try #require(cached.near)
        let far = CandidateIndex.farMiles(preferred: 25, expansion: engines.indexed.configuration.expansion)
        #expect(near.far == far && near.rows.count > 100)
        // Ascending (the deck asks whether a row is near by a binary search), and `contains`
        // answers as the list does for every row.
        #expect(zip(near.rows, near.rows.dropFirst()).allSatisfy { $0 < $1 })
        let listed = Set(near.rows.map(Int.init))
        #expect((0..<Self.catalog.count).allSatisfy { near.contains($0) == listed.contains($0) })
        var expected: [Int: Float] = [:]
        for row in 0..<Self.catalog.count where !(cached.student.distances[row] > far) { expected[row] = cached.student.distances[row] }
        #expect(near.rows.count == expected.count && zip(near.rows, near.distances).allSatisfy { expected[Int($0)]?.bitPattern == $1.bitPattern })
        // An engine derived with another expansion shares the cache (and this student's list,
        // drawn for the old radius): it lists the rows again for its own, and deals the scan's decks.
        let wider = (indexed: engines.indexed.reconfigured { $0.expansion = 3 }, scan: engines.scan.reconfigured { $0.expansion = 3 })
        #expect(CandidateIndex.farMiles(preferred: 25, expansion: 3) != far)
        try Self.compare(wider, profile: profile, seed: 9, rounds: 4)
    }

    @Test("an index built from a catalog cache's block layout deals the full scan's decks")
    func fromCacheLayout() throws {
        let key = CatalogCache.Key(csvSize: 1, csvHash: 2, schemaDigest: 3)
        guard case let .hit(cached) = try CatalogCache.decode(Data(try CatalogCache.encode(Self.catalog, key: key)),
                                                              path: "x.cache", key: key, source: Self.catalog.source) else {
            Issue.record("stale")
            return
        }
        // 60,000 items is past the layout threshold: the file carries the split the engine would make.
        #expect(Self.catalog.count >= CatalogCache.layoutThreshold)
        #expect(cached.blockLayout == LinearBlockIndex(features: Self.catalog.features).layout)
        let indexed = SwipeEngine(matcher: ItemMatcher(catalog: cached, regionAttribute: "neighborhood"))
        let scan = SwipeEngine(matcher: ItemMatcher(catalog: Self.catalog, regionAttribute: "neighborhood"), candidateIndexThreshold: .max)
        #expect(indexed.candidateIndex?.blocks.layout == cached.blockLayout)
        #expect(cached.featureRows.isRowOrder)  // below `CatalogCache.featuresOnceFromItems`
        for (i, home) in Self.homes(2, seed: 5).enumerated() {
            try Self.compare((indexed, scan), profile: ItemProfile(home: home, maxDistanceMiles: [25.0, 60][i], preferences: ["price_level": -0.5]),
                             seed: UInt64(40 + i), rounds: 6)
        }
    }

    @Test("a cached catalog holding its features once, in block order, deals the full scan's decks (with factors and a prior)")
    func featuresOnce() throws {
        let key = CatalogCache.Key(csvSize: 1, csvHash: 2, schemaDigest: 3)
        guard case let .hit(once) = try CatalogCache.decodeWithKey(Data(try CatalogCache.encode(Self.catalog, key: key)), path: "x.cache",
                                                                   key: key, source: Self.catalog.source, featuresOnceFrom: 0).lookup else {
            Issue.record("stale")
            return
        }
        #expect(!once.featureRows.isRowOrder)
        // The blocks' values themselves (one buffer), not a copy of them or of the rows.
        let index = try #require(once.blockIndex)
        #expect(once.featureRows.withUnsafeStoredValues { Array($0) } == Array(index.values))
        #expect(once.featureRows.withUnsafeStoredValues { $0.baseAddress } == index.values.withUnsafeBufferPointer { $0.baseAddress })
        #expect(!index.values.isBorrowed)  // decoded from bytes in memory: copied
        #expect(once.fingerprint == Self.catalog.fingerprint)
        // Every card, swipe and score reads rows through the positions: the same decks and
        // learning as the row-major catalog's full scan, with a population prior and with factors.
        let (_, scan) = Self.engines(population: true, factors: true)
        var indexed = SwipeEngine(matcher: ItemMatcher(catalog: once, regionAttribute: "neighborhood"))
        indexed = try indexed.withPopulation(try #require(scan.population)).withFactors(try #require(scan.factors?.file))
        for (i, home) in Self.homes(2, seed: 9).enumerated() {
            try Self.compare((indexed, scan), profile: ItemProfile(home: home, maxDistanceMiles: [25.0, 60][i], preferences: ["price_level": -0.5]),
                             seed: UInt64(50 + i), rounds: 6)
        }
        // The row-major matrix, built when asked, equals the rows'.
        #expect(once.features == Self.catalog.features)
    }

    @Test("a cache file read in place: the block features are the file's mapping, and the decks are the full scan's")
    func featuresMapped() throws {
        let key = CatalogCache.Key(csvSize: 1, csvHash: 2, schemaDigest: 3)
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("mapped-\(UUID().uuidString).cache").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        try Data(try CatalogCache.encode(Self.catalog, key: key)).write(to: URL(fileURLWithPath: path))
        guard case let .hit(mapped) = try CatalogCache.readWithKey(path, key: key, source: Self.catalog.source, featuresOnceFrom: 0).lookup,
              case let .hit(copied) = try CatalogCache.readWithKey(path, key: key, source: Self.catalog.source, featuresOnceFrom: .max).lookup else {
            Issue.record("stale")
            return
        }
        let index = try #require(mapped.blockIndex)
        #expect(index.values.isBorrowed && !mapped.featureRows.isRowOrder)
        // The text, numbers and locations are read in place too, and equal the catalog's.
        #expect(mapped.ids.utf8.isBorrowed && mapped.names.utf8.isBorrowed && mapped.locations.coordinates.isBorrowed)
        #expect(mapped.textValues.allSatisfy { $0.utf8.isBorrowed } && mapped.numericValues.allSatisfy { $0.storage.isBorrowed })
        #expect(!copied.ids.utf8.isBorrowed && !copied.locations.coordinates.isBorrowed)
        #expect(mapped.ids == Self.catalog.ids && mapped.names == Self.catalog.names && mapped.locations == Self.catalog.locations)
        #expect(mapped.textValues == Self.catalog.textValues && mapped.numericValues == Self.catalog.numericValues)
        #expect(Self.catalog.ids.indices.allSatisfy { mapped.row(of: Self.catalog.ids[$0]) == $0 })
        #expect(try #require(copied.blockIndex).values.isBorrowed == false && copied.featureRows.isRowOrder)
        #expect(mapped.featureRows.withUnsafeStoredValues { $0.baseAddress } == index.values.withUnsafeBufferPointer { $0.baseAddress })
        #expect(Array(index.values) == Array(LinearBlockIndex(features: Self.catalog.features).values))
        #expect(mapped.readsMappedFile && !copied.readsMappedFile)
        // The file may go (a rebuilt cache replaces it by a rename): the mapping keeps the bytes.
        // Released pages come back from the file when read again: the same values.
        try FileManager.default.removeItem(atPath: path)
        mapped.releaseMappedPages()
        copied.releaseMappedPages()  // nothing mapped: nothing to do
        #expect(mapped.features == Self.catalog.features && mapped.fingerprint == Self.catalog.fingerprint)
        #expect(mapped.ids == Self.catalog.ids && mapped.locations == Self.catalog.locations && copied.features == Self.catalog.features)
        mapped.releaseMappedPages()
        let (_, scan) = Self.engines(population: false, factors: false)
        let indexed = SwipeEngine(matcher: ItemMatcher(catalog: mapped, regionAttribute: "neighborhood"))
        for (i, home) in Self.homes(2, seed: 13).enumerated() {
            try Self.compare((indexed, scan), profile: ItemProfile(home: home, maxDistanceMiles: [25.0, 60][i], preferences: ["price_level": -0.5]),
                             seed: UInt64(60 + i), rounds: 5)
        }
    }

    @Test("students without a home, and with mixing off: identical decks")
    func withoutHome() throws {
        let engines = Self.engines(population: false, factors: false)
        try Self.compare(engines, profile: ItemProfile(preferences: ["price_level": -0.5]), seed: 10, rounds: 9)
        try Self.compare(engines, profile: ItemProfile(), seed: 11, rounds: 6)
        let unmixed = Self.engines(population: false, factors: false) { $0.geographicMixing = false }
        try Self.compare(unmixed, profile: ItemProfile(home: Self.homes(1, seed: 2)[0], maxDistanceMiles: 25), seed: 12, rounds: 6)
    }

    @Test("with a population prior (item and exposure effects) and with factors: identical decks")
    func withPopulationAndFactors() throws {
        let engines = Self.engines(population: true, factors: false)
        for (i, home) in Self.homes(2, seed: 3).enumerated() {
            try Self.compare(engines, profile: ItemProfile(home: home, maxDistanceMiles: 25), seed: 20 + UInt64(i), rounds: 8)
        }
        try Self.compare(engines, profile: ItemProfile(), seed: 22, rounds: 6)
        // With factors the first deck takes the index, later ones (evidence) the scan.
        let withFactors = Self.engines(population: true, factors: true)
        try Self.compare(withFactors, profile: ItemProfile(home: Self.homes(1, seed: 4)[0], maxDistanceMiles: 25), seed: 23, rounds: 4)
    }

    @Test("boundary probes keep the full scan")
    func boundaryProbesScan() throws {
        let engines = Self.engines(population: false, factors: false) { $0.probeCandidates = .boundary }
        try Self.compare(engines, profile: ItemProfile(home: Self.homes(1, seed: 5)[0], maxDistanceMiles: 25), seed: 30, rounds: 2,
                         expectIndexed: false)
    }

    @Test("distances and the distance term computed on access equal the stored ones bit for bit (seeded homes, unlocated items)")
    func computedOnAccess() throws {
        let matcher = ItemMatcher(catalog: Self.catalog)
        var rng = SplitMix64(seed: 41)
        let homes = Self.homes(5, seed: 40) + [try GeoPoint(latitude: -33.9, longitude: 151.2), try GeoPoint(latitude: 89.9, longitude: -179.9)]
        for home in homes {
            let miles = [0.5, 3, 25, 400, 25_000][Int(rng.next() % 5)]
            let profile = ItemProfile(home: home, maxDistanceMiles: miles)
            let stored = try matcher.student(profile), computed = try matcher.student(profile, computingOnAccess: true)
            #expect(!stored.distances.isComputedOnAccess && computed.distances.isComputedOnAccess)
            #expect(computed.distances.count == Self.catalog.count && computed.terms.itemCount == Self.catalog.count)
            #expect(computed.distances.byteCount == 0 && computed.terms.byteCount == 0 && stored.terms.byteCount == 2 * Self.catalog.count)
            var unlocated = 0
            for row in 0..<Self.catalog.count {
                let a = stored.distances[row], b = computed.distances[row]
                if a.isNaN { unlocated += 1 }
                #expect(a.bitPattern == b.bitPattern || (a.isNaN && b.isNaN), "home \(home), row \(row): \(a) vs \(b)")
                #expect(stored.terms.units(term: 0, item: row) == computed.terms.units(term: 0, item: row), "row \(row)")
                if row % 97 == 0 {
                    var a = [Double](repeating: 9, count: 3), b = a
                    stored.terms.write(item: row, into: &a, at: 1)
                    computed.terms.write(item: row, into: &b, at: 1)
                    #expect(a == b && a[0] == 9 && a[2] == 9 && a[1] == Double(stored.terms[term: 0, item: row]))
                }
            }
            // One item in ~500 has no location (drawn): each a NaN either way.
            #expect(unlocated == Self.catalog.locations.filter { $0 == nil }.count && unlocated > 60)
            // An item without a location has no distance (it was once half the globe away) —
            // on its card too — and a neutral distance term.
            let row = try #require(Self.catalog.locations.firstIndex { $0 == nil })
            let weights = matcher.coldStartWeights(for: computed)
            for student in [stored, computed] {
                #expect(student.distances[row].isNaN && student.terms[term: 0, item: row] == 0)
                #expect(matcher.card(row: row, raw: 0, student: student, weights: weights, isProbe: false).distance == nil)
            }
            #expect(Array(stored.distances).map(\.bitPattern) == computed.distances.allValues.map(\.bitPattern))
            // The whole-catalog sum, for both signs of weight.
            for weight: Float in [0.7, -1.3] {
                var x = (0..<Self.catalog.count).map { _ in Float(Int(rng.next() % 2_001) - 1_000) / 997 }, y = x
                stored.terms.addWeighted([weight], into: &x)
                computed.terms.addWeighted([weight], into: &y)
                #expect(x.map(\.bitPattern) == y.map(\.bitPattern))
            }
        }
        // Without a home: no distances, a term of zeros either way.
        let stored = try matcher.student(ItemProfile()), computed = try matcher.student(ItemProfile(), computingOnAccess: true)
        #expect(stored.distances.isEmpty && computed.distances.isEmpty && computed.terms.byteCount == 0)
        var x = (0..<Self.catalog.count).map { Float($0 % 7) - 3 }, y = x
        stored.terms.addWeighted([-2], into: &x)
        computed.terms.addWeighted([-2], into: &y)
        #expect(x.map(\.bitPattern) == y.map(\.bitPattern))
        #expect((0..<Self.catalog.count).allSatisfy { computed.terms[term: 0, item: $0] == 0 && stored.terms[term: 0, item: $0] == 0 })
        // An invalid profile is refused the same way.
        #expect(throws: DataError.self) { try matcher.student(ItemProfile(maxDistanceMiles: -1), computingOnAccess: true) }
        #expect(throws: DataError.self) { try matcher.student(ItemProfile(preferences: ["no_such_column": 1]), computingOnAccess: true) }
    }

    @Test("terms of zeros (several names) read, add and write as stored zeros do")
    func zeroTerms() {
        let names = ["a", "b", "c"], n = 37
        let zero = RelativeTerms(names: names, zeroOver: n), stored = RelativeTerms(names: names, values: Matrix(rows: 3, columns: n))
        var rng = SplitMix64(seed: 5)
        var x = (0..<n).map { _ in Float(Int(rng.next() % 201) - 100) / 7 }, y = x
        zero.addWeighted([0.5, -2, 0], into: &x)
        stored.addWeighted([0.5, -2, 0], into: &y)
        #expect(x.map(\.bitPattern) == y.map(\.bitPattern))
        for i in 0..<n {
            var a = [Double](repeating: 9, count: 5), b = a
            zero.write(item: i, into: &a, at: 1)
            stored.write(item: i, into: &b, at: 1)
            #expect(a == b && a == [9, 0, 0, 0, 9])
            for k in 0..<3 { #expect(zero[term: k, item: i] == 0 && zero.units(term: k, item: i) == 0) }
        }
        #expect(zero.byteCount == 0 && stored.byteCount == 2 * 3 * n && zero.itemCount == n)
    }

    @Test("the grid lists every item within the distance")
    func gridIsComplete() {
        let grid = GeoGrid(locations: Self.catalog.locations)
        var rng = SplitMix64(seed: 6)
        var distances: [Float] = []
        for home in Self.homes(6, seed: 7) + [try! GeoPoint(latitude: 89.5, longitude: 179.9), try! GeoPoint(latitude: 0, longitude: -179.99)] {
            let miles = [1.0, 30, 300, 3_000][Int(rng.next() % 4)]
            Self.catalog.distancesMiles(from: home, into: &distances)
            var listed = Set<Int>()
            grid.forEachRow(within: miles, of: home) { listed.insert($0) }
            let within = Set(distances.indices.filter { distances[$0] <= Float(miles) })
            #expect(within.isSubset(of: listed), "home \(home) within \(miles) miles")
        }
    }

    @Test("the grid's counting sort groups rows as sorting (cell, row) pairs does")
    func gridMatchesSortedReference() throws {
        var rng = SplitMix64(seed: 31)
        for trial in 0..<30 {
            // Clustered and spread points, the poles and the antimeridian, rows without one.
            let count = Int(rng.next() % 2_000)
            let locations: [GeoPoint?] = try (0..<count).map { _ in
                switch rng.next() % 5 {
                case 0: return nil
                case 1: return try GeoPoint(latitude: 40 + Double(rng.next() % 100) / 100, longitude: -75 + Double(rng.next() % 100) / 100)
                case 2: return try GeoPoint(latitude: [-90, 90, 0][Int(rng.next() % 3)], longitude: [-180, 180, 179.999][Int(rng.next() % 3)])
                default: return try GeoPoint(latitude: Double(rng.next() % 180_001) / 1000 - 90, longitude: Double(rng.next() % 360_001) / 1000 - 180)
                }
            }
            let grid = GeoGrid(locations: LocationColumn(locations))
            var keyed: [(cell: Int, row: Int)] = []
            for (row, location) in locations.enumerated() {
                guard let location else { continue }
                keyed.append((GeoGrid.cell(latitude: location.latitude, longitude: location.longitude,
                                           latitudeCells: grid.latitudeCells, longitudeCells: grid.longitudeCells), row))
            }
            keyed.sort { $0.cell < $1.cell || ($0.cell == $1.cell && $0.row < $1.row) }
            #expect(grid.rows == keyed.map { Int32($0.row) }, "trial \(trial)")
            #expect(grid.locatedCount == keyed.count)
            var reference: [Int: Range<Int>] = [:]
            for (i, pair) in keyed.enumerated() {
                let range = reference[pair.cell] ?? i..<i
                reference[pair.cell] = range.lowerBound..<(i + 1)
            }
            #expect(grid.ranges == reference, "trial \(trial)")
        }
    }
}
