/// Miles from a student's home to each catalog item (NaN for an item without a location;
/// empty without a home), indexed by catalog row.
///
/// Either stored, every item's distance computed once when the student is resolved (a small
/// catalog, whose decks scan every item), or computed on access from the catalog's unit
/// vectors (a large catalog with a `CandidateIndex`, whose decks read the items near home
/// and the cards served: resolving a new student is then O(1) instead of O(N), and the
/// engine's student cache holds no per-item array for it). Both give the same value, bit for
/// bit (`Catalog.distancesMiles(from:into:)`'s expression), so a deck never depends on which.
public struct StudentDistances: RandomAccessCollection, Sendable {
    // Stored distances, or none when `origin` computes them: two plain fields rather than an
    // enum with payloads, so a copy is two retains and a stored read one null check (a deck
    // reads and copies these on its hottest paths).
    let values: [Float]

    /// Starts loading these items' stored distances into the caches (nothing when computed).
    ///
    /// - Parameter items: Items.
    package func prefetch(items: [Int]) { values.prefetch(rows: items) }
    let origin: Origin?
    /// The number of items (0 without a home).
    public let count: Int

    /// Where computed distances are measured from: the home's unit vector, over a catalog.
    final class Origin: Sendable {
        let catalog: Catalog
        let unit: (Float, Float, Float)
        init(catalog: Catalog, unit: (Float, Float, Float)) {
            self.catalog = catalog
            self.unit = unit
        }
    }

    /// Distances already computed, one per catalog row (or none without a home).
    ///
    /// - Parameter values: Miles per row, NaN for no location.
    public init(_ values: [Float]) {
        self.values = values
        origin = nil
        count = values.count
    }

    /// Distances from `home` to the catalog's items, each computed when read.
    ///
    /// - Parameters:
    ///   - home: The student's home.
    ///   - catalog: The items.
    /// - Complexity: O(1); each read O(1).
    public init(computingFrom home: GeoPoint, over catalog: Catalog) {
        let (hx, hy, hz) = home.unitVector
        values = []
        origin = Origin(catalog: catalog, unit: (Float(hx), Float(hy), Float(hz)))
        count = catalog.count
    }

    /// No home: no distances.
    public static let none = StudentDistances([])

    /// `0`.
    public var startIndex: Int { 0 }
    /// `count`.
    public var endIndex: Int { count }

    /// Miles to the item at `row`: stored, or computed now.
    ///
    /// - Complexity: O(1).
    public subscript(row: Int) -> Float {
        guard let origin else { return values[row] }
        precondition(row >= 0 && row < count, "StudentDistances: row \(row) is not in the catalog")
        return origin.catalog.distanceMiles(row: row, fromUnit: origin.unit)
    }

    /// Whether the distances are computed on access (not stored).
    public var isComputedOnAccess: Bool { origin != nil }

    /// The bytes of stored distances (0 when computed on access): the student cache's cost.
    public var byteCount: Int { values.count * MemoryLayout<Float>.stride }

    /// Every distance in one array: the stored one (shared, not copied), or computed now
    /// (O(N): what a full scan over a student whose distances are computed on access costs
    /// per deck).
    var allValues: [Float] {
        guard let origin else { return values }
        var all: [Float] = []
        origin.catalog.distancesMiles(fromUnit: origin.unit, into: &all)
        return all
    }
}
