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
    /// A candidate: its score inline (comparisons never chase a pointer) and its index.
    @usableFromInline
    struct Candidate: Sendable {
        @usableFromInline var score: Float
        @usableFromInline var index: Int
        @inlinable init(score: Float, index: Int) { self.score = score; self.index = index }
    }

    // A min-heap (by the order above, the worst candidate at the root) of at most k entries.
    @usableFromInline internal var heap: [Candidate] = []
    // Scratch for the sampled pre-filter of long inputs.
    @usableFromInline internal var samples: [Float] = []
    @usableFromInline internal var survivors: [Int] = []
    @usableFromInline internal var survivorScores: [Float] = []

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
    /// Long inputs (n ≥ 2,048 and k ≤ n/32) first take a cut from every 16th score: the
    /// ⌈2.5k/16⌉-th best of that sample, which about 2.5k scores reach. One SIMD pass keeps the
    /// scores at or above the cut, and the heap runs on those few. If fewer than k survive (an
    /// unlucky or adversarial order) or too many do (mass ties), the plain heap pass runs on
    /// everything; the result is the same either way. Why: each time a score displaces the
    /// heap's worst, several branches mispredict; over random order that happens k·ln(n/k)
    /// times and cost ~1.5 ns a score, far more than reading it.
    ///
    /// - Parameters:
    ///   - k: How many to select; not negative.
    ///   - scores: The scores.
    ///   - result: Replaced by the selected indices.
    /// - Complexity: O(n log k + k log k) for n scores.
    public mutating func select(k: Int, from scores: UnsafeBufferPointer<Float>, into result: inout [Int]) {
        precondition(k >= 0, "Top-k needs a non-negative k, got \(k)")
        result.removeAll(keepingCapacity: true)
        // More than n is all of them (k may be any count a caller was given, even Int.max).
        let k = min(k, scores.count)
        guard k > 0, !scores.isEmpty else { return }
        let n = scores.count
        if n >= 2_048 && k &* 32 <= n, let base = scores.baseAddress {
            // Written through a raw buffer: 625 appends (a uniqueness and capacity check each)
            // cost as much as the whole filter pass.
            let m = (n &+ 15) / 16
            if samples.count != m { samples = [Float](repeating: 0, count: m) }
            samples.withUnsafeMutableBufferPointer { sample in
                for j in 0..<m { sample[j] = base[j &* 16] }
            }
            let rank = (5 &* k &+ 31) / 32   // ⌈2.5k / 16⌉
            samples.withUnsafeBufferPointer { heapSelect(k: rank, from: $0, into: &result) }
            if result.count == rank {
                let cut = samples[result[rank - 1]]
                survivors.removeAll(keepingCapacity: true)
                let cap = 16 &* k &+ 64
                let raw = UnsafeRawPointer(base)
                let limit = SIMD8<Float>(repeating: cut)
                var i = 0
                while i < n && survivors.count <= cap {
                    if i &+ 8 <= n {
                        let block = raw.loadUnaligned(fromByteOffset: i &* MemoryLayout<Float>.stride, as: SIMD8<Float>.self)
                        if !any(block .>= limit) { i &+= 8; continue }
                    }
                    let end = Swift.min(i &+ 8, n)
                    while i < end {
                        if base[i] >= cut { survivors.append(i) }
                        i &+= 1
                    }
                }
                if survivors.count >= k && survivors.count <= cap {
                    // Survivors are in index order, so ties still go to the lower index.
                    survivorScores.removeAll(keepingCapacity: true)
                    for i in survivors { survivorScores.append(base[i]) }
                    survivorScores.withUnsafeBufferPointer { heapSelect(k: k, from: $0, into: &result) }
                    for r in result.indices { result[r] = survivors[result[r]] }
                    return
                }
            }
            result.removeAll(keepingCapacity: true)
        }
        heapSelect(k: k, from: scores, into: &result)
    }

    /// The plain selection: a k-entry min-heap over one pass.
    mutating func heapSelect(k: Int, from scores: UnsafeBufferPointer<Float>, into result: inout [Int]) {
        result.removeAll(keepingCapacity: true)
        guard k > 0, !scores.isEmpty else { return }
        heap.removeAll(keepingCapacity: true)
        heap.reserveCapacity(k)
        // Fill the heap with the first k scores that are not NaN.
        var i = 0
        let n = scores.count
        while i < n && heap.count < k {
            let s = scores[i]
            if !s.isNaN { heap.append(Candidate(score: s, index: i)) }
            i += 1
        }
        let count = heap.count
        heap.withUnsafeMutableBufferPointer { h in
            // Floyd's heapify of the first k, then the scan.
            var p = count / 2 - 1
            while p >= 0 { Self.siftDown(h, p, count); p -= 1 }
            guard count == k, let base = scores.baseAddress else { return }
            // The hot loop: compare against the current k-th best, kept in a register; the heap
            // is touched only for the few scores that beat it (about k·ln(n/k) of n for random
            // order). Eight scores at a time are skipped with one SIMD compare while none beats
            // it: 0.25 ns a score here against 0.53 for the scalar loop (SIMD16 is scalarized by
            // the compiler and far slower). The heap works on raw buffers with one write per
            // level: bounds and uniqueness checks made each replacement ~100 ns. NaN never
            // compares above.
            var threshold = h[0].score
            let raw = UnsafeRawPointer(base)
            while i < n {
                let limit = SIMD8<Float>(repeating: threshold)
                while i &+ 8 <= n {
                    let block = raw.loadUnaligned(fromByteOffset: i &* MemoryLayout<Float>.stride, as: SIMD8<Float>.self)
                    if any(block .> limit) { break }
                    i &+= 8
                }
                let end = Swift.min(i &+ 8, n)
                while i < end {
                    let s = base[i]
                    if s > threshold {
                        // Equal scores keep the earlier (lower) index, already in the heap.
                        h[0] = Candidate(score: s, index: i)
                        Self.siftDown(h, 0, count)
                        threshold = h[0].score
                    }
                    i &+= 1
                }
            }
        }
        // Pop worst-first into the tail of the result: the result ends up best-first.
        result.reserveCapacity(count)
        for _ in 0..<count { result.append(0) }
        heap.withUnsafeMutableBufferPointer { h in
            var left = count
            while left > 0 {
                result[left - 1] = h[0].index
                left -= 1
                h.swapAt(0, left)
                Self.siftDown(h, 0, left)
            }
        }
    }

    /// Whether `a` ranks below `b` (lower score, or equal score and higher index).
    @inline(__always)
    static func worse(_ a: Candidate, _ b: Candidate) -> Bool {
        a.score < b.score || (a.score == b.score && a.index > b.index)
    }

    /// Moves the entry at `start` down to its place among the first `count` (one write per level).
    @inline(__always)
    static func siftDown(_ h: UnsafeMutableBufferPointer<Candidate>, _ start: Int, _ count: Int) {
        let item = h[start]
        var parent = start
        while true {
            let left = 2 &* parent &+ 1
            guard left < count else { break }
            var child = left
            var candidate = h[left]
            if left &+ 1 < count {
                let right = h[left &+ 1]
                if worse(right, candidate) { child = left &+ 1; candidate = right }
            }
            guard worse(candidate, item) else { break }
            h[parent] = candidate
            parent = child
        }
        h[parent] = item
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
