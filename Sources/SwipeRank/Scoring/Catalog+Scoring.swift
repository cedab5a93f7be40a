import SwipeRankNumerics

/// Buffers one worker reuses across requests, so steady-state score + top-k allocates nothing.
///
///     var workspace = ScoringWorkspace()
///     catalog.topItems(k: 20, weights: w, terms: t, workspace: &workspace)
///     workspace.top            // rows, best first
public struct ScoringWorkspace: Sendable {
    /// The raw scores of the last request, one per item.
    public internal(set) var scores: [Float] = []
    /// The rows selected by the last top-k, best first.
    public internal(set) var top: [Int] = []
    var selector = TopKSelector()

    /// Creates an empty workspace.
    public init() {}
}

extension Catalog {
    /// Writes every item's raw score, `X · w + Rᵀ · β`, into `scores`: one pass over the
    /// feature-major catalog and one over the k × N relative terms, each summed in a fixed
    /// order (no BLAS), so a score is bit-identical on any machine and BLAS thread count.
    ///
    /// - Parameters:
    ///   - weights: The student's weights (d features, k terms).
    ///   - terms: The student's relative terms (k × N), or nil for none.
    ///   - scores: Resized to N and overwritten.
    /// - Complexity: O(N × (d + k)).
    public func scores(weights: PreferenceWeights, terms: RelativeTerms?, into scores: inout [Float]) {
        precondition(weights.features.count == dimension,
                     "Weights have \(weights.features.count) features, the catalog \(dimension)")
        featuresByColumn.multiplyTransposedInOrder(weights.features, into: &scores)
        if let terms { terms.addWeighted(weights.terms, into: &scores) }
    }

    /// Scores every item and selects the best `k`, reusing the workspace's buffers.
    ///
    /// - Parameters:
    ///   - k: How many items.
    ///   - weights: The student's weights.
    ///   - terms: The student's relative terms.
    ///   - workspace: Reused buffers; holds the scores and the selected rows afterwards.
    /// - Complexity: O(N × (d + k) + N log k).
    public func topItems(k: Int, weights: PreferenceWeights, terms: RelativeTerms?,
                         workspace: inout ScoringWorkspace) {
        scores(weights: weights, terms: terms, into: &workspace.scores)
        workspace.selector.select(k: k, from: workspace.scores, into: &workspace.top)
    }

    /// Scores every item for many students at once: one `cblas_sgemm` (students × d times the
    /// feature-major d × N catalog), then each student's relative terms.
    ///
    /// Gives the same scores as `scores(weights:terms:into:)` per student, up to float
    /// rounding.
    ///
    /// - Parameters:
    ///   - weights: One weight set per student.
    ///   - terms: One term block per student (same count as `weights`), or nil for none.
    /// - Returns: A students × N matrix of raw scores.
    /// - Complexity: O(S × N × (d + k)).
    public func scores(batch weights: [PreferenceWeights], terms: [RelativeTerms]?) -> Matrix {
        let s = weights.count
        precondition(terms == nil || terms!.count == s, "One term block per student is required")
        var w = Matrix(rows: s, columns: dimension)
        for (r, weight) in weights.enumerated() {
            precondition(weight.features.count == dimension, "Weights do not match the catalog")
            for c in 0..<dimension { w[r, c] = weight.features[c] }
        }
        var result = Matrix(rows: s, columns: count)
        w.multiply(featuresByColumn, into: &result)
        guard let terms else { return result }
        var row = [Float](repeating: 0, count: count)
        for r in 0..<s {
            // Per-student terms differ, so they are added row by row (k × N each).
            for i in 0..<count { row[i] = result[r, i] }
            terms[r].addWeighted(weights[r].terms, into: &row)
            for i in 0..<count { result[r, i] = row[i] }
        }
        return result
    }

    /// The contribution of each explanation group to one item's raw score: `wⱼ · xᵢⱼ` summed
    /// over the group's feature columns, and `βₖ · rₖ(i)` for each relative term (its own
    /// group, named after the term).
    ///
    /// - Parameters:
    ///   - row: The item.
    ///   - weights: The student's weights.
    ///   - terms: The student's relative terms.
    /// - Returns: Group name → contribution; the values sum to the raw score.
    /// - Complexity: O(d + k).
    public func contributions(row: Int, weights: PreferenceWeights, terms: RelativeTerms?) -> [String: Float] {
        let values = groupContributions(row: row, weights: weights, terms: terms)
        var result: [String: Float] = [:]
        for (g, name) in groups.enumerated() { result[name, default: 0] += values[g] }
        for (k, name) in (terms?.names ?? []).enumerated() { result[name, default: 0] += values[groups.count + k] }
        return result
    }

    /// The same contributions as an array: one per entry of `groups`, then one per relative
    /// term. No strings are touched, so cards can rank reasons cheaply.
    ///
    /// - Parameters:
    ///   - row: The item.
    ///   - weights: The student's weights.
    ///   - terms: The student's relative terms.
    /// - Returns: `groups.count + (terms?.names.count ?? 0)` values.
    /// - Complexity: O(d + k).
    public func groupContributions(row: Int, weights: PreferenceWeights, terms: RelativeTerms?) -> [Float] {
        var result = [Float](filling: 0, count: groups.count + (terms?.names.count ?? 0))
        // The row read where it is stored, in one pass: every card's explanations start here,
        // and the checked two-index subscript per column cost more than the sums (the same
        // products, summed in the same order).
        precondition(row >= 0 && row < count && weights.features.count >= dimension, "groupContributions: row \(row) of \(count)")
        featureRows.addWeightedRow(row, weights: weights.features, toBins: groupOfColumn, of: &result)
        if let terms {
            for k in 0..<terms.names.count { result[groups.count + k] = weights.terms[k] * terms[term: k, item: row] }
        }
        return result
    }

    /// The contribution of each feature column to one item's raw score, `wⱼ · xᵢⱼ`.
    ///
    /// - Parameters:
    ///   - row: The item.
    ///   - weights: The student's weights.
    /// - Returns: d values in column order.
    /// - Complexity: O(d).
    public func columnContributions(row: Int, weights: PreferenceWeights) -> [Float] {
        (0..<dimension).map { weights.features[$0] * featureRows[row, $0] }
    }
}
