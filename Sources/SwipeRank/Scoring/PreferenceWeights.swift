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
/// Each row is one term with values in about −1…1, so term weights are comparable with
/// feature weights on z-scored columns.
public struct RelativeTerms: Sendable {
    /// The term names, one per row.
    public let names: [String]
    /// The values, `names.count × N`, row-major (one term's values over all items contiguous).
    public var values: Matrix

    /// Creates terms.
    ///
    /// - Parameters:
    ///   - names: One name per row.
    ///   - values: A `names.count × N` matrix.
    public init(names: [String], values: Matrix) {
        precondition(names.count == values.rows, "RelativeTerms: \(names.count) names for \(values.rows) rows")
        self.names = names
        self.values = values
    }

    /// The value of term `k` for item `i`.
    ///
    /// - Complexity: O(1).
    public subscript(term k: Int, item i: Int) -> Float { values[k, i] }
}
