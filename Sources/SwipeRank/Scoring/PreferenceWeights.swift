import SwipeRankNumerics

/// A student's preferences as weights: one per feature column of the catalog and one per
/// student-relative term.
///
/// The raw score of item `i` is `xᵢ · features + Σₖ terms[k] · rₖ(i)`.
public struct PreferenceWeights: Sendable, Hashable, Codable {
    /// One weight per catalog feature column (d).
    public var features: [Float]
    /// One weight per relative term (k).
    public var terms: [Float]

    /// Creates weights.
    ///
    /// - Parameters:
    ///   - features: d feature weights.
    ///   - terms: k term weights.
    public init(features: [Float], terms: [Float]) {
        self.features = features
        self.terms = terms
    }

    /// All weights, features first, as one vector of d + k values (the learning model's view).
    public var combined: [Float] { features + terms }
}

/// Per-item values that depend on the student (distance, budget fit, …): a k × N block.
///
/// Each term lies in −1…1 by construction, so term weights are comparable with feature
/// weights on z-scored columns. Stored in 16-bit fixed point (steps of 1/32767 ≈ 3·10⁻⁵):
/// these arrays are the largest per-student state of a live session (k × N values), and half
/// the bytes of Float keep ~10,000 cached sessions in a few hundred MB; the rounding is far
/// below anything the terms measure. Every reader (scores, contributions, the model's
/// vectors) sees the same stored value, so scores and learning agree exactly. Values outside
/// −1…1 are clamped and NaN is stored as 0 (no input), so no term can make a score non-finite.
public struct RelativeTerms: Sendable {
    /// The term names, one per row.
    public let names: [String]
    /// The number of items N.
    public let itemCount: Int
    // names.count × N fixed-point values, one term's values over all items contiguous; empty
    // when `computed` says how to compute the one term when read. Two plain fields rather
    // than an enum with payloads: the stored read, on a deck's hottest paths, is one null
    // check, and a copy two retains.
    let storage: ContiguousArray<Int16>
    let computed: Computed?

    /// A term computed when read: the distance fit of each distance, or 0 everywhere.
    final class Computed: Sendable {
        /// nil: the term is 0 for every item.
        let distances: StudentDistances?
        let preferred: Float
        init(distances: StudentDistances?, preferred: Float) {
            self.distances = distances
            self.preferred = preferred
        }

        func units(item i: Int) -> Int16 {
            guard let distances else { return 0 }
            return RelativeTerms.distanceFitUnits(miles: distances[i], preferred: preferred)
        }
    }
    static let unit: Float = 32_767

    /// Creates terms.
    ///
    /// - Parameters:
    ///   - names: One name per row.
    ///   - values: A `names.count × N` matrix of values in −1…1 (clamped; NaN → 0).
    /// - Complexity: O(k × N).
    public init(names: [String], values: Matrix) {
        precondition(names.count == values.rows, "RelativeTerms: \(names.count) names for \(values.rows) rows")
        self.names = names
        itemCount = values.columns
        storage = ContiguousArray(values.elements.lazy.map(RelativeTerms.quantize))
        computed = nil
    }

    /// One term, `GeoBand.distanceFit(miles:preferred:)` of each distance (0 for NaN), computed
    /// when read: the same stored value as the matrix form, without holding N values (a large
    /// catalog's decks read it for a few items; see `StudentDistances`).
    ///
    /// - Parameters:
    ///   - name: The term's name.
    ///   - distances: Miles per item, all `itemCount` of them.
    ///   - preferred: The preferred maximum distance p, > 0.
    /// - Complexity: O(1).
    public init(name: String, distanceFitOf distances: StudentDistances, preferred: Float) {
        precondition(preferred > 0, "RelativeTerms: the preferred distance must be positive")
        names = [name]
        itemCount = distances.count
        storage = []
        computed = Computed(distances: distances, preferred: preferred)
    }

    /// Terms that are 0 for every item (a distance term without a home), holding nothing.
    ///
    /// - Parameters:
    ///   - names: The term names.
    ///   - itemCount: The number of items N.
    /// - Complexity: O(1).
    public init(names: [String], zeroOver itemCount: Int) {
        precondition(itemCount >= 0, "RelativeTerms: a negative item count")
        self.names = names
        self.itemCount = itemCount
        storage = []
        computed = Computed(distances: nil, preferred: 1)
    }

    /// Starts loading these items' stored values (one per term) into the caches: a deck's likely
    /// cards, before it builds them. Nothing for computed terms.
    ///
    /// - Parameter items: Items (others are left out).
    func prefetch(items: [Int]) {
        guard computed == nil else { return }
        for k in names.indices { storage[(k &* itemCount)..<((k &+ 1) &* itemCount)].prefetch(rows: items) }
    }

    static func quantize(_ value: Float) -> Int16 {
        value.isNaN ? 0 : Int16((min(1, max(-1, value)) * unit).rounded())
    }

    /// The stored value of the distance term at `miles` (0 for NaN: no location): the one
    /// expression behind every computed read, so all agree with the stored form.
    @inline(__always) static func distanceFitUnits(miles d: Float, preferred p: Float) -> Int16 {
        d.isNaN ? 0 : quantize(GeoBand.distanceFit(miles: d, preferred: p))
    }

    /// The stored fixed-point value of term `k` for item `i`.
    @inline(__always) func units(term k: Int, item i: Int) -> Int16 {
        guard let computed else { return storage[k * itemCount + i] }
        precondition(k >= 0 && k < names.count && i >= 0 && i < itemCount, "RelativeTerms: (\(k), \(i)) out of range")
        return computed.units(item: i)
    }

    /// Every term's value for item `i` (as `subscript(term:item:)` reads them), written at
    /// `out[base...]`: one check of the form per item where the subscript makes one per value
    /// (a deck's probe vectors read them on its hot path).
    func write(item i: Int, into out: inout [Double], at base: Int) {
        let k = names.count
        precondition(base >= 0 && base + k <= out.count && i >= 0 && i < itemCount, "RelativeTerms: item \(i) into \(base) of \(out.count)")
        guard let computed else {
            for t in 0..<k { out[base + t] = Double(Float(storage[t * itemCount + i]) / RelativeTerms.unit) }
            return
        }
        // One term (the distance fit), or zeros for every term.
        let value = Double(Float(computed.units(item: i)) / RelativeTerms.unit)
        for t in 0..<k { out[base + t] = value }
    }

    /// The value of term `k` for item `i`, as stored.
    ///
    /// - Complexity: O(1).
    public subscript(term k: Int, item i: Int) -> Float { Float(units(term: k, item: i)) / RelativeTerms.unit }

    /// Adds `Σₖ weights[k] · term k` to every item's score.
    ///
    /// - Parameters:
    ///   - weights: One weight per term.
    ///   - scores: N scores.
    /// - Complexity: O(k × N) (computing each distance when the terms are computed on access).
    public func addWeighted(_ weights: [Float], into scores: inout [Float]) {
        precondition(weights.count == names.count && scores.count == itemCount,
                     "Relative terms do not match the catalog or the term weights")
        guard let computed else {
            // Every stored term with a weight in one pass over the scores, in term order (the
            // same bits as a pass per term).
            let rows = names.indices.filter { weights[$0] != 0 }.map { (offset: $0 * itemCount, scale: weights[$0] / RelativeTerms.unit) }
            addScaledFixedPointRows(storage, rows: rows, into: &scores)
            return
        }
        for k in names.indices where weights[k] != 0 {
            let scale = weights[k] / RelativeTerms.unit
            // The stored form's operations item by item: scale × the unit count, added
            // (0 units for no location, as stored).
            if let distances = computed.distances {
                let all = distances.allValues, preferred = computed.preferred
                for i in 0..<itemCount {
                    scores[i] += scale * Float(RelativeTerms.distanceFitUnits(miles: all[i], preferred: preferred))
                }
            } else {
                for i in 0..<itemCount { scores[i] += scale * 0 }
            }
        }
    }

    /// The bytes held (for memory accounting): 0 when computed on access.
    public var byteCount: Int { storage.count * MemoryLayout<Int16>.stride }
}
