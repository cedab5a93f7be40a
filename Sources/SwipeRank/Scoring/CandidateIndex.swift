import Foundation
import SwipeRankNumerics

/// What a large catalog's deck retrieval needs to know of a matcher's relative terms: they are
/// one term, `GeoBand.distanceFit` of the distance from the student's home (0 everywhere
/// without a home, 0 for an item without a location), so beyond 2.5 × the preferred distance
/// it is exactly −1. Then the items far from home score by their features alone plus one
/// constant, which the engine's `CandidateIndex` bounds per block, and the near ones are few
/// enough to score one by one.
public struct DistanceTermShape: Sendable, Hashable {
    /// The student's home, or nil (the term is 0 for every item).
    public var home: GeoPoint?
    /// The preferred maximum distance p in miles (the term's scale).
    public var preferredMiles: Double

    /// Creates a shape.
    ///
    /// - Parameters:
    ///   - home: The student's home, or nil.
    ///   - preferredMiles: The preferred maximum distance, > 0.
    public init(home: GeoPoint?, preferredMiles: Double) {
        self.home = home
        self.preferredMiles = preferredMiles
    }
}

/// The engine's index over a large catalog (`SwipeEngine.candidateIndexThreshold`), shared by
/// every session and by the engines derived from one (`withPopulation(_:)`, `withFactors(_:)`,
/// `reconfigured(_:)`): the feature blocks (`LinearBlockIndex`) that bound any linear score,
/// and a latitude/longitude grid of the item locations that lists the items near a home.
///
/// A deck with it (`SwipeSession.usesCandidateIndex`) scores the items within the distance
/// where the distance term still varies one by one, from the grid, and finds the best far
/// items by the blocks' bounds: the same cards, in the same order, with bit-identical scores
/// as the full scan, at a cost that grows with the items near home and the blocks visited
/// instead of with N.
final class CandidateIndex: Sendable {
    let blocks: LinearBlockIndex
    let grid: GeoGrid
    /// Rows without a location: scored one by one (their distance term is 0, their band discovery).
    let unlocatedRows: [Int]
    /// The region code of each row by block position (empty without regions).
    let regionCodesByPosition: [Int32]
    /// The grade scale's sampled rows (`GradeScale.sampleRows`), and their features copied
    /// together in that order: every indexed deck scores them, and read where the catalog
    /// stores them they were a thousand scattered cache misses a deck.
    let gradeSampleRows: [Int32]
    let gradeSampleFeatures: FeatureRows

    init(catalog: Catalog, regions: RegionCodes) {
        // Blocks that came with the catalog (its cache) are used as they are: no splitting and
        // no copy (they share the catalog's storage).
        blocks = catalog.blockIndex ?? LinearBlockIndex(features: catalog.features)
        grid = GeoGrid(locations: catalog.locations)
        unlocatedRows = catalog.locations.indices.filter { catalog.locations[$0] == nil }
        regionCodesByPosition = regions.codeOfRow.isEmpty ? [] : blocks.codes(regions.codeOfRow)
        gradeSampleRows = GradeScale.sampleRows(catalogCount: catalog.count).map { Int32($0) }
        let d = catalog.dimension, rows = catalog.featureRows
        gradeSampleFeatures = FeatureRows(Matrix(rows: gradeSampleRows.count, columns: d, elements: gradeSampleRows.lazy.flatMap { row in
            (0..<d).lazy.map { rows[Int(row), $0] }
        }))
    }

    /// The sampled rows' feature sums for `weights` (`FeatureRows.dot` of each, bit for bit),
    /// in `gradeSampleRows` order, read from the contiguous copy.
    func gradeSampleSums(_ weights: [Float]) -> [Float] {
        gradeSampleFeatures.dots(rows: (0..<Int32(gradeSampleRows.count)).map { $0 }, weights)
    }

    /// The rows within `far` miles of `home`, and the rows without coordinates that are not
    /// farther (a matcher may place them another way), each with its distance: what an
    /// indexed deck scores one by one. The grid lists more than it keeps (whole cells).
    ///
    /// - Parameters:
    ///   - home: The student's home.
    ///   - distances: The student's distances (each read once: on a large catalog each read
    ///     computes it).
    ///   - far: `farMiles(preferred:expansion:)`.
    /// - Returns: The near rows, ascending.
    /// - Complexity: O(rows in the grid cells within `far` + m log m) for m near rows.
    func nearRows(of home: GeoPoint, distances: StudentDistances, far: Float) -> NearRows {
        // (row, distance's bits) packed so one sort of plain integers orders them by row.
        var pairs: [UInt64] = []
        func keep(_ row: Int, _ d: Float) { pairs.append(UInt64(row) << 32 | UInt64(d.bitPattern)) }
        grid.forEachRow(within: Double(far), of: home) { row in
            let d = distances[row]
            if d <= far { keep(row, d) }
        }
        for row in unlocatedRows {
            let d = distances[row]
            if !(d > far) { keep(row, d) }  // NaN: no location, scored
        }
        pairs.sort()
        // Kept for as long as the student stays cached: copied to their exact size (appending
        // left up to twice the capacity, memory the cache's budget would not see).
        var keptRows = [Int32](repeating: 0, count: pairs.count), keptMiles = [Float](repeating: 0, count: pairs.count)
        for (i, pair) in pairs.enumerated() {
            (keptRows[i], keptMiles[i]) = (Int32(pair >> 32), Float(bitPattern: UInt32(truncatingIfNeeded: pair)))
        }
        return NearRows(far: far, rows: keptRows, distances: keptMiles)
    }

    /// The distance beyond which an item is far: its distance term is exactly −1 (2.5 p and
    /// beyond, with a margin for the Float arithmetic) and its band discovery.
    static func farMiles(preferred: Double, expansion: Double) -> Float {
        Float(max(2.6, expansion * 1.01) * preferred)
    }
}

/// The rows near a student's home with their distances (`CandidateIndex.nearRows`), kept
/// with the resolved student: a deck on a large catalog scores them one by one, and listing
/// them computes each listed row's distance.
struct NearRows: Sendable {
    /// The radius they were listed within.
    let far: Float
    /// Ascending: whether a row is near is a binary search (cheaper than its distance, which
    /// on a large catalog each read computes from memory the deck does not otherwise touch).
    let rows: [Int32]
    /// Miles to each of `rows` (NaN: no location).
    let distances: [Float]

    /// Whether `row` is one of `rows`.
    ///
    /// - Complexity: O(log m).
    func contains(_ row: Int) -> Bool {
        var (lo, hi) = (0, rows.count)
        while lo < hi {
            let mid = (lo &+ hi) >> 1
            if Int(rows[mid]) < row { lo = mid &+ 1 } else { hi = mid }
        }
        return lo < rows.count && Int(rows[lo]) == row
    }
    /// The bytes held, for the student cache's budget.
    var byteCount: Int { rows.count * (MemoryLayout<Int32>.stride + MemoryLayout<Float>.stride) }
}

/// Item locations bucketed by latitude/longitude cell, for listing every item within some
/// miles of a point without reading them all.
struct GeoGrid: Sendable {
    /// The cell side in degrees.
    static let cellDegrees = 0.5
    let latitudeCells: Int
    let longitudeCells: Int
    /// Rows grouped by cell.
    let rows: [Int32]
    /// Cell id → its rows' range in `rows`.
    let ranges: [Int: Range<Int>]
    let locatedCount: Int

    init(locations: LocationColumn) {
        let latitudeCells = Int((180 / Self.cellDegrees).rounded(.up))
        let longitudeCells = Int((360 / Self.cellDegrees).rounded(.up))
        self.latitudeCells = latitudeCells
        self.longitudeCells = longitudeCells
        // A counting sort by cell (the cells are a fixed 259,200), rows ascending within a
        // cell as they are placed in row order: sorting ten million (cell, row) pairs was 4%
        // of a start.
        let cellOfRow = locations.map { location in
            location.map { Int32(Self.cell(latitude: $0.latitude, longitude: $0.longitude,
                                            latitudeCells: latitudeCells, longitudeCells: longitudeCells)) } ?? -1
        }
        var next = [Int](repeating: 0, count: latitudeCells * longitudeCells + 1)
        for cell in cellOfRow where cell >= 0 { next[Int(cell) + 1] += 1 }
        var ranges: [Int: Range<Int>] = [:]
        for cell in 0..<(next.count - 1) {
            let count = next[cell + 1]
            next[cell + 1] = next[cell] + count
            if count > 0 { ranges[cell] = next[cell]..<next[cell + 1] }
        }
        var rows = [Int32](repeating: 0, count: next[next.count - 1])
        for (row, cell) in cellOfRow.enumerated() where cell >= 0 {
            rows[next[Int(cell)]] = Int32(row)
            next[Int(cell)] += 1
        }
        self.rows = rows
        self.ranges = ranges
        locatedCount = rows.count
    }

    static func cell(latitude: Double, longitude: Double, latitudeCells: Int, longitudeCells: Int) -> Int {
        let a = min(latitudeCells - 1, max(0, Int(((latitude + 90) / cellDegrees).rounded(.down))))
        let o = ((Int(((longitude + 180) / cellDegrees).rounded(.down)) % longitudeCells) + longitudeCells) % longitudeCells
        return a * longitudeCells + o
    }

    /// Calls `visit` with every located row within `miles` of `center` (and maybe some
    /// farther: the caller filters by the exact distance), each once.
    ///
    /// - Complexity: O(cells covered + rows in them).
    func forEachRow(within miles: Double, of center: GeoPoint, _ visit: (Int) -> Void) {
        // An angular radius with a margin over the Float distances the caller compares with.
        let r = (miles * 1.01 + 1) / GeoPoint.earthRadiusMiles
        let φ = center.latitude * .pi / 180
        guard r < .pi / 2 - abs(φ) - 1e-3 else {
            // The cap reaches a pole or half the globe: every located row.
            for row in rows { visit(Int(row)) }
            return
        }
        let dλ = asin(min(1, sin(r) / cos(φ))) * 180 / .pi
        let dφ = r * 180 / .pi
        let a0 = max(0, Int(((center.latitude - dφ + 90) / Self.cellDegrees).rounded(.down)))
        let a1 = min(latitudeCells - 1, Int(((center.latitude + dφ + 90) / Self.cellDegrees).rounded(.down)))
        let o0 = Int(((center.longitude - dλ + 180) / Self.cellDegrees).rounded(.down))
        let o1 = Int(((center.longitude + dλ + 180) / Self.cellDegrees).rounded(.down))
        let lonRange = o1 - o0 + 1 >= longitudeCells ? 0..<longitudeCells : o0..<(o1 + 1)
        guard a0 <= a1 else { return }
        for a in a0...a1 {
            for o in lonRange {
                let wrapped = ((o % longitudeCells) + longitudeCells) % longitudeCells
                guard let range = ranges[a * longitudeCells + wrapped] else { continue }
                for i in range { visit(Int(rows[i])) }
            }
        }
    }
}
