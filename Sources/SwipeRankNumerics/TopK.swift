/// Selects the `k` largest of many scores without sorting them all, reusing its buffers.
///
/// The order is a total order: higher score first; among equal scores, the lower index first.
/// So the result is deterministic and equal to the first `k` of a full stable sort by
/// descending score. NaN scores are never selected.
///
///     var selector = TopKSelector()
///     var best: [Int] = []
///     selector.select(k: 20, from: scores, into: &best)   // indices, best first
///
/// Keep one selector per worker and call it for every request: after the first call with a
/// given `k`, selection allocates nothing.
public struct TopKSelector: Sendable {
    // A min-heap (by the order above, the worst candidate at the root) of at most k entries.
    @usableFromInline internal var heapScores: [Float] = []
    @usableFromInline internal var heapIndices: [Int] = []

    /// Creates a selector with empty buffers.
    public init() {}

    /// Writes the indices of the `k` best scores into `result`, best first.
    ///
    /// - Parameters:
    ///   - k: How many to select; not negative. If fewer than `k` scores are eligible, all of
    ///     them are returned.
    ///   - scores: The scores, indexed `0..<scores.count`.
    ///   - result: Replaced by the selected indices.
    /// - Complexity: O(n log k + k log k) for n scores.
    public mutating func select(k: Int, from scores: [Float], into result: inout [Int]) {
        scores.withUnsafeBufferPointer { select(k: k, from: $0, into: &result) }
    }

    /// Writes the indices of the `k` best scores into `result`, best first.
    ///
    /// - Parameters:
    ///   - k: How many to select; not negative.
    ///   - scores: The scores.
    ///   - result: Replaced by the selected indices.
    /// - Complexity: O(n log k + k log k) for n scores.
    public mutating func select(k: Int, from scores: UnsafeBufferPointer<Float>, into result: inout [Int]) {
        precondition(k >= 0, "Top-k needs a non-negative k, got \(k)")
        result.removeAll(keepingCapacity: true)
        guard k > 0, !scores.isEmpty else { return }
        heapScores.removeAll(keepingCapacity: true)
        heapIndices.removeAll(keepingCapacity: true)
        heapScores.reserveCapacity(k)
        heapIndices.reserveCapacity(k)
        var count = 0, i = 0
        let n = scores.count
        // Fill the heap with the first k scores that are not NaN.
        while i < n && count < k {
            let s = scores[i]
            if !s.isNaN {
                heapScores.append(s)
                heapIndices.append(i)
                count += 1
                siftUp(count - 1)
            }
            i += 1
        }
        // The hot loop: one comparison per score against the current k-th best, kept in a
        // register; the heap is touched only for the few scores that beat it (about
        // k·ln(n/k) of n for random order). NaN never compares above.
        if count == k, let p = scores.baseAddress {
            var threshold = heapScores[0]
            while i < n {
                let s = p[i]
                if s > threshold {
                    // Equal scores keep the earlier (lower) index, already in the heap.
                    heapScores[0] = s
                    heapIndices[0] = i
                    siftDown(0, count)
                    threshold = heapScores[0]
                }
                i &+= 1
            }
        }
        // Pop worst-first into the tail of the result: the result ends up best-first.
        result.reserveCapacity(count)
        for _ in 0..<count { result.append(0) }
        var left = count
        while left > 0 {
            result[left - 1] = heapIndices[0]
            left -= 1
            heapScores.swapAt(0, left)
            heapIndices.swapAt(0, left)
            siftDown(0, left)
        }
    }

    /// Whether entry `a` ranks below entry `b` (lower score, or equal score and higher index).
    @inline(__always)
    private func worse(_ a: Int, _ b: Int) -> Bool {
        let sa = heapScores[a], sb = heapScores[b]
        return sa < sb || (sa == sb && heapIndices[a] > heapIndices[b])
    }

    private mutating func siftUp(_ start: Int) {
        var child = start
        while child > 0 {
            let parent = (child - 1) / 2
            guard worse(child, parent) else { break }
            heapScores.swapAt(child, parent)
            heapIndices.swapAt(child, parent)
            child = parent
        }
    }

    private mutating func siftDown(_ start: Int, _ count: Int) {
        var parent = start
        while true {
            let left = 2 * parent + 1
            guard left < count else { return }
            var candidate = left
            if left + 1 < count && worse(left + 1, left) { candidate = left + 1 }
            guard worse(candidate, parent) else { return }
            heapScores.swapAt(candidate, parent)
            heapIndices.swapAt(candidate, parent)
            parent = candidate
        }
    }
}

extension Array where Element == Float {
    /// The indices of the `k` largest elements, best first; ties go to the lower index.
    ///
    ///     [0.2, 0.9, 0.5, 0.9].topIndices(2)   // [1, 3]
    ///
    /// - Parameter k: How many to select; not negative.
    /// - Returns: At most `k` indices.
    /// - Complexity: O(n log k + k log k).
    public func topIndices(_ k: Int) -> [Int] {
        var selector = TopKSelector()
        var result: [Int] = []
        selector.select(k: k, from: self, into: &result)
        return result
    }
}

extension TopKSelector {
    /// The top `k` items for each of many students: `scores = weights · items`, computed in
    /// blocks of students so each block's score rows are still in cache when they are selected
    /// from (one `cblas_sgemm` per block, then one top-k per row).
    ///
    /// Equal to a full sgemm followed by `select` on every row, without materializing the
    /// S × N score matrix.
    ///
    ///     var selector = TopKSelector()
    ///     let best = selector.topK(k: 20, weights: students, items: catalog.featuresByColumn)
    ///
    /// - Parameters:
    ///   - k: Items per student.
    ///   - weights: S × d, one student per row.
    ///   - items: d × N, the catalog feature-major.
    ///   - blockSize: Students per sgemm (64: large enough for an efficient sgemm, and 64 × 10k
    ///     scores = 2.5 MB stay near the core).
    /// - Returns: S lists of item indices, best first (ties to the lower index).
    /// - Complexity: O(S × d × N + S × N log k).
    public mutating func topK(k: Int, weights: Matrix, items: Matrix, blockSize: Int = 64) -> [[Int]] {
        precondition(weights.columns == items.rows, "topK: weights have \(weights.columns) columns, items \(items.rows) rows")
        precondition(blockSize > 0, "topK: blockSize must be positive")
        let s = weights.rows, n = items.columns
        var result: [[Int]] = []
        result.reserveCapacity(s)
        var block = Matrix(rows: Swift.min(blockSize, s), columns: n)
        var top: [Int] = []
        var start = 0
        while start < s {
            let rows = Swift.min(blockSize, s - start)
            let slice = Matrix(rows: rows, columns: weights.columns,
                               elements: weights.elements[(start * weights.columns)..<((start + rows) * weights.columns)])
            if block.rows != rows { block = Matrix(rows: rows, columns: n) }
            slice.multiply(items, into: &block)
            block.withUnsafeBufferPointer { scores in
                for r in 0..<rows {
                    select(k: k, from: UnsafeBufferPointer(rebasing: scores[(r * n)..<((r + 1) * n)]), into: &top)
                    result.append(top)
                }
            }
            start += rows
        }
        return result
    }
}
