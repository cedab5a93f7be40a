/// Selects, in one pass, the `k` best scores of every group of rows: what a deck needs for each
/// geographic band of the unseen cards.
///
/// The order is `TopKSelector`'s: higher score first; among equal scores, the lower row first;
/// NaN scores are never selected. So each group's result equals the first `k` of a stable
/// descending sort of that group's scores.
///
///     var selector = GroupedTopKSelector()
///     var best: [[Int]] = []
///     var counts: [Int] = []
///     selector.select(k: 20, from: scores, groups: bandOfRow, groupCount: 3, into: &best, counts: &counts)
///     // best[g]: the rows of band g, best first; counts[g]: how many rows band g has
///
/// Why one pass with a bounded heap per group and the heap's worst score kept beside it: most
/// rows are rejected by one comparison with that score, so the pass costs little more than
/// reading the scores; a heap entry moves only when a row beats a group's worst kept one.
public struct GroupedTopKSelector: Sendable {
    // Per group, a min-heap (worst kept first) of at most k entries: group g's entries are at
    // g·k ..< g·k + size[g].
    private var heapScores: [Float] = []
    private var heapRows: [Int] = []

    /// Creates a selector with empty buffers.
    public init() {}

    /// Writes each group's best rows into `result`, best first, and each group's row count into
    /// `counts`.
    ///
    /// - Parameters:
    ///   - k: How many rows per group; not negative. A group with fewer eligible rows returns
    ///     all of them.
    ///   - scores: One score per row.
    ///   - groups: One entry per row: its group in `0..<groupCount`, or a negative value to
    ///     leave the row out.
    ///   - groupCount: The number of groups, ≥ 0.
    ///   - result: Replaced by `groupCount` lists of rows, best first.
    ///   - counts: Replaced by `groupCount` counts of rows in each group (NaN scores included).
    /// - Complexity: O(n + h log k + groupCount · k log k) for n rows, where h is how often a row
    ///   displaces a group's worst kept row (about k·ln(n/k) per group over a random order).
    public mutating func select(k: Int, from scores: [Float], groups: [Int8], groupCount: Int,
                                into result: inout [[Int]], counts: inout [Int]) {
        precondition(k >= 0 && groupCount >= 0, "Grouped top-k needs non-negative k and group count")
        precondition(scores.count == groups.count, "One group per score: \(groups.count) groups, \(scores.count) scores")
        let k = min(k, scores.count)
        if heapScores.count < groupCount * k {
            heapScores = [Float](repeating: 0, count: groupCount * k)
            heapRows = [Int](repeating: 0, count: groupCount * k)
        }
        var tallies = [Int](repeating: 0, count: groupCount)
        var sizes = [Int](repeating: 0, count: groupCount)
        // The score a row must beat to enter its group: the worst kept one once the heap is
        // full, −∞ while it fills (then every score but −∞ and NaN enters).
        var worst = [Float](repeating: k > 0 ? -.infinity : .infinity, count: groupCount)
        Self.pass(k: k, scores, groups, groupCount, &heapScores, &heapRows, &tallies, &sizes, &worst)
        counts = tallies
        result = (0..<groupCount).map { g in Self.drain(&heapScores, &heapRows, base: g * k, size: sizes[g]) }
    }

    /// Empties one group's heap into its rows, best first: the worst kept is the root, so
    /// popping fills the result from the back (a heap sort; the order is total, so ties come
    /// out as the rule says).
    private static func drain(_ heapScores: inout [Float], _ heapRows: inout [Int], base: Int, size: Int) -> [Int] {
        var rows = [Int](repeating: 0, count: size)
        heapScores.withUnsafeMutableBufferPointer { scores in
            heapRows.withUnsafeMutableBufferPointer { heapRows in
                var n = size
                while n > 0 {
                    rows[n &- 1] = heapRows[base]
                    n &-= 1
                    scores[base] = scores[base &+ n]
                    heapRows[base] = heapRows[base &+ n]
                    siftDown(scores, heapRows, base: base, size: n)
                }
            }
        }
        return rows
    }

    /// The selection pass over every row.
    private static func pass(k: Int, _ scores: [Float], _ groups: [Int8], _ groupCount: Int,
                             _ heapScores: inout [Float], _ heapRows: inout [Int],
                             _ counts: inout [Int], _ sizes: inout [Int], _ worst: inout [Float]) {
        scores.withUnsafeBufferPointer { scores in
        groups.withUnsafeBufferPointer { groups in
        heapScores.withUnsafeMutableBufferPointer { heapScores in
        heapRows.withUnsafeMutableBufferPointer { heapRows in
        counts.withUnsafeMutableBufferPointer { counts in
        sizes.withUnsafeMutableBufferPointer { sizes in
        worst.withUnsafeMutableBufferPointer { worst in
            for row in 0..<scores.count {
                let g = Int(groups[row])
                guard g >= 0 else { continue }
                precondition(g < groupCount, "Row \(row) is in group \(g) of \(groupCount)")
                counts[g] &+= 1
                let score = scores[row]
                // Most rows stop at the first comparison. An equal score comes with a higher row:
                // it ranks below the kept one. A −∞ score is kept while the group has room, like
                // any other (it does not beat the −∞ a filling group compares with).
                guard score > worst[g] || (score == -.infinity && sizes[g] < k) else { continue }
                let base = g &* k
                if sizes[g] < k {
                    siftUp(heapScores, heapRows, base: base, at: sizes[g], score: score, row: row)
                    sizes[g] &+= 1
                    if sizes[g] == k { worst[g] = heapScores[base] }
                } else {
                    heapScores[base] = score
                    heapRows[base] = row
                    siftDown(heapScores, heapRows, base: base, size: k)
                    worst[g] = heapScores[base]
                }
            }
        }
        }
        }
        }
        }
        }
        }
    }

    /// Whether (a, ra) ranks below (b, rb): a lower score, or an equal score and a higher row.
    @inline(__always)
    private static func worse(_ a: Float, _ ra: Int, _ b: Float, _ rb: Int) -> Bool { a < b || (a == b && ra > rb) }

    /// Places (score, row) at heap position `at` (the heap had `at` entries) and moves it up.
    @inline(__always)
    private static func siftUp(_ scores: UnsafeMutableBufferPointer<Float>, _ rows: UnsafeMutableBufferPointer<Int>,
                        base: Int, at start: Int, score: Float, row: Int) {
        var i = start
        while i > 0 {
            let parent = (i &- 1) / 2
            guard worse(score, row, scores[base &+ parent], rows[base &+ parent]) else { break }
            scores[base &+ i] = scores[base &+ parent]
            rows[base &+ i] = rows[base &+ parent]
            i = parent
        }
        scores[base &+ i] = score
        rows[base &+ i] = row
    }

    /// Moves the root of a full heap of `size` entries down to its place.
    @inline(__always)
    private static func siftDown(_ scores: UnsafeMutableBufferPointer<Float>, _ rows: UnsafeMutableBufferPointer<Int>,
                          base: Int, size: Int) {
        var i = 0
        let score = scores[base], row = rows[base]
        while true {
            let l = 2 &* i &+ 1
            guard l < size else { break }
            let r = l &+ 1
            var child = l
            if r < size && worse(scores[base &+ r], rows[base &+ r], scores[base &+ l], rows[base &+ l]) { child = r }
            guard worse(scores[base &+ child], rows[base &+ child], score, row) else { break }
            scores[base &+ i] = scores[base &+ child]
            rows[base &+ i] = rows[base &+ child]
            i = child
        }
        scores[base &+ i] = score
        rows[base &+ i] = row
    }
}
