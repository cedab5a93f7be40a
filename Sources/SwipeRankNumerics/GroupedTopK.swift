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
/// Why one pass with a buffer per group and the buffer's entry threshold kept beside it: most
/// rows are rejected by one comparison with that threshold, so the pass costs little more than
/// reading the scores. A row that passes is appended (two stores); when a group's buffer holds
/// 2k rows, a selection keeps its best k and raises the threshold to the k-th best score. Only
/// the survivors are sorted, once, at the end. A bounded heap per group did the same work with a
/// sift of log k steps per admitted row: most of a deck's band selection.
public struct GroupedTopKSelector: Sendable {
    // Per group, an unordered buffer of at most 2k admitted entries, each a `key(score:row:)`:
    // group g's entries are at g·2k ..< g·2k + size[g].
    private var buffer: [UInt64] = []

    /// Creates a selector with empty buffers.
    public init() {}

    /// Writes each group's best rows into `result`, best first, and each group's row count into
    /// `counts`.
    ///
    /// - Parameters:
    ///   - k: How many rows per group; not negative. A group with fewer eligible rows returns
    ///     all of them.
    ///   - scores: One score per row, fewer than 2³² rows.
    ///   - groups: One entry per row: its group in `0..<groupCount`, or a negative value to
    ///     leave the row out.
    ///   - groupCount: The number of groups, ≥ 0.
    ///   - result: Replaced by `groupCount` lists of rows, best first.
    ///   - counts: Replaced by `groupCount` counts of rows in each group (NaN scores included).
    /// - Complexity: O(n + h + groupCount · k log k) expected for n rows, where h is how often a
    ///   row passes its group's threshold (about 2k·ln(n/k) per group over a random order).
    public mutating func select(k: Int, from scores: [Float], groups: [Int8], groupCount: Int,
                                into result: inout [[Int]], counts: inout [Int]) {
        precondition(k >= 0 && groupCount >= 0, "Grouped top-k needs non-negative k and group count")
        precondition(scores.count == groups.count, "One group per score: \(groups.count) groups, \(scores.count) scores")
        precondition(scores.count <= Int(UInt32.max), "Grouped top-k keys rows in 32 bits: \(scores.count) rows")
        let k = min(k, scores.count)
        let capacity = 2 * max(k, 1)
        if buffer.count < groupCount * capacity { buffer = [UInt64](repeating: 0, count: groupCount * capacity) }
        var tallies = [Int](repeating: 0, count: groupCount)
        var sizes = [Int](repeating: 0, count: groupCount)
        // The score a row must beat to enter its group: −∞ until the group's first compaction
        // (then every score but −∞ and NaN enters), the k-th best kept score after it.
        var threshold = [Float](repeating: k > 0 ? -.infinity : .infinity, count: groupCount)
        Self.pass(k: k, capacity: capacity, scores, groups, groupCount, &buffer, &tallies, &sizes, &threshold)
        counts = tallies
        result = (0..<groupCount).map { g in Self.drain(&buffer, base: g * capacity, size: sizes[g], k: k) }
    }

    /// An entry's sort key: higher is better. The score's bits in an order-preserving form in
    /// the high half (−0 as +0, so equal scores tie), the row's complement in the low half (of
    /// equal scores, the lower row first). One integer comparison instead of two float ones and
    /// a row comparison.
    @inline(__always)
    static func key(score: Float, row: Int) -> UInt64 {
        let bits = (score + 0).bitPattern  // −0 + 0 is +0; every other non-NaN score is unchanged
        let ordered = bits & 0x8000_0000 != 0 ? ~bits : bits | 0x8000_0000
        return UInt64(ordered) << 32 | UInt64(UInt32.max - UInt32(truncatingIfNeeded: row))
    }

    /// One group's best `min(k, size)` rows of its buffer, best first.
    private static func drain(_ buffer: inout [UInt64], base: Int, size: Int, k: Int) -> [Int] {
        let kept = min(k, size)
        return buffer.withUnsafeMutableBufferPointer { keys in
            if kept < size { keepBest(kept, keys, base: base, size: size) }
            // The survivors sorted (a few dozen keys).
            var survivors = UnsafeMutableBufferPointer(rebasing: keys[base..<(base + kept)])
            survivors.sort(by: >)
            return survivors.map { Int(UInt32.max - UInt32(truncatingIfNeeded: $0)) }
        }
    }

    /// The selection pass over every row.
    private static func pass(k: Int, capacity: Int, _ scores: [Float], _ groups: [Int8], _ groupCount: Int,
                             _ buffer: inout [UInt64], _ counts: inout [Int], _ sizes: inout [Int], _ threshold: inout [Float]) {
        scores.withUnsafeBufferPointer { scores in
        groups.withUnsafeBufferPointer { groups in
        buffer.withUnsafeMutableBufferPointer { buffer in
        counts.withUnsafeMutableBufferPointer { counts in
        sizes.withUnsafeMutableBufferPointer { sizes in
        threshold.withUnsafeMutableBufferPointer { threshold in
            for row in 0..<scores.count {
                let g = Int(groups[row])
                guard g >= 0 else { continue }
                precondition(g < groupCount, "Row \(row) is in group \(g) of \(groupCount)")
                counts[g] &+= 1
                let score = scores[row]
                // Most rows stop at the first comparison. An equal score comes with a higher row
                // than every admitted one: it ranks below the k-th. A −∞ score enters while the
                // group holds fewer than k rows, like any other (it does not beat the −∞ of a
                // group not yet compacted), and later −∞ rows rank below those k.
                guard score > threshold[g] || (score == -.infinity && sizes[g] < k) else { continue }
                let base = g &* capacity
                buffer[base &+ sizes[g]] = key(score: score, row: row)
                sizes[g] &+= 1
                if sizes[g] == capacity {
                    // Full: keep the best k, and admit from now on only what beats the k-th.
                    keepBest(k, buffer, base: base, size: capacity)
                    sizes[g] = k
                    var kth = buffer[base]
                    for i in (base &+ 1)..<(base &+ k) { kth = min(kth, buffer[i]) }
                    threshold[g] = scoreOf(key: kth)
                }
            }
        }
        }
        }
        }
        }
        }
    }

    /// The score of a key (the inverse of `key(score:row:)`'s high half).
    @inline(__always)
    static func scoreOf(key: UInt64) -> Float {
        let ordered = UInt32(truncatingIfNeeded: key >> 32)
        return Float(bitPattern: ordered & 0x8000_0000 != 0 ? ordered & 0x7FFF_FFFF : ~ordered)
    }

    /// Moves the `k` largest of a group's `size` keys to its first `k` places (any order):
    /// quickselect, median-of-three pivots. Keys are distinct (rows are).
    private static func keepBest(_ k: Int, _ keys: UnsafeMutableBufferPointer<UInt64>, base: Int, size: Int) {
        guard k > 0, k < size else { return }
        var lo = base, hi = base &+ size &- 1
        let n = base &+ k &- 1  // the k-th largest's place
        while lo < hi {
            let mid = lo &+ (hi &- lo) / 2
            if keys[mid] > keys[lo] { keys.swapAt(mid, lo) }
            if keys[hi] > keys[mid] { keys.swapAt(hi, mid) }
            if keys[mid] > keys[lo] { keys.swapAt(mid, lo) }
            let pivot = keys[mid]
            var i = lo, j = hi
            while i <= j {
                while keys[i] > pivot { i &+= 1 }
                while pivot > keys[j] { j &-= 1 }
                if i <= j {
                    keys.swapAt(i, j)
                    i &+= 1
                    j &-= 1
                }
            }
            // [lo, j] at or above the pivot, [i, hi] at or below; between them, the pivot.
            if n <= j { hi = j } else if n >= i { lo = i } else { return }
        }
    }
}
