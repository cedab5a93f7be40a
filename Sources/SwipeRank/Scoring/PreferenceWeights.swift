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
    // names.count × N fixed-point values, one term's values over all items contiguous.
    var storage: ContiguousArray<Int16>
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
    }

    static func quantize(_ value: Float) -> Int16 {
        value.isNaN ? 0 : Int16((min(1, max(-1, value)) * unit).rounded())
    }

    /// The value of term `k` for item `i`, as stored.
    ///
    /// - Complexity: O(1).
    public subscript(term k: Int, item i: Int) -> Float { Float(storage[k * itemCount + i]) / RelativeTerms.unit }

    /// Adds `Σₖ weights[k] · term k` to every item's score.
    ///
    /// - Parameters:
    ///   - weights: One weight per term.
    ///   - scores: N scores.
    /// - Complexity: O(k × N).
    public func addWeighted(_ weights: [Float], into scores: inout [Float]) {
        precondition(weights.count == names.count && scores.count == itemCount,
                     "Relative terms do not match the catalog or the term weights")
        for k in names.indices where weights[k] != 0 {
            addScaledFixedPoint(storage, offset: k * itemCount, scale: weights[k] / RelativeTerms.unit, into: &scores)
        }
    }

    /// The bytes held (for memory accounting).
    public var byteCount: Int { storage.count * MemoryLayout<Int16>.stride }
}
