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
/// How: rows are read in chunks of 4,096; each row's key (`key(score:row:)`: score and row in
/// one integer) goes to its group's region of a buffer, rows left out (and NaN scores) to a
/// region of their own, so the pass does not branch on the row's group; a region that could
/// overflow with the next chunk first keeps only its best k keys (a branch-free partition
/// selection, `branchFreeSelectDescending`), and at the end each group's best k are selected
/// the same way and only those are sorted. Scratch is O(groups × (k + 4,096)) whatever the
/// catalog's size. A deck keeps the best 58 of each band's ~700 rows: a bounded heap, or a
/// buffer compacted by quickselect, lost most of their time to mispredicted comparisons
/// (`swiperank-profile . bands`: 24 µs for the latter on random scores, 11 µs for this).
public struct GroupedTopKSelector: Sendable {
    /// Creates a selector.
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
    /// - Complexity: O(n + groupCount · k log k) expected for n rows; (groupCount + 2) ·
    ///   min(n, k + 4,096) keys of scratch.
    public mutating func select(k: Int, from scores: [Float], groups: [Int8], groupCount: Int,
                                into result: inout [[Int]], counts: inout [Int]) {
        precondition(k >= 0 && groupCount >= 0, "Grouped top-k needs non-negative k and group count")
        precondition(scores.count == groups.count, "One group per score: \(groups.count) groups, \(scores.count) scores")
        precondition(scores.count <= Int(UInt32.max), "Grouped top-k keys rows in 32 bits: \(scores.count) rows")
        var highest: Int8 = -1
        for g in groups { highest = max(highest, g) }
        precondition(Int(highest) < groupCount, "A row is in group \(highest) of \(groupCount)")
        let n = scores.count, k = min(k, n)
        // Regions 0..<groupCount for the groups, groupCount for the rows left out, each room for
        // k kept keys and a chunk; then the partition's scratch. Every place read is written
        // first: not zeroed.
        let chunk = 4_096, regions = groupCount + 1
        let capacity = min(n, k + chunk)
        var sizes = [Int](repeating: 0, count: regions)
        var nans = [Int](repeating: 0, count: groupCount)
        var tallies = [Int](repeating: 0, count: groupCount)  // rows added to each group's region
        var lists: [[Int]] = []
        lists.reserveCapacity(groupCount)
        let buffer = UnsafeMutableBufferPointer<UInt64>.allocate(capacity: max(1, (regions + 1) * capacity))
        defer { buffer.deallocate() }
        let spare = UnsafeMutableBufferPointer(rebasing: buffer[(regions * capacity)...])
        func region(_ g: Int) -> UnsafeMutableBufferPointer<UInt64> {
            UnsafeMutableBufferPointer(rebasing: buffer[(g * capacity)..<(g * capacity + sizes[g])])
        }
        // Keeps group g's best min(k, size) keys first (in no order).
        func keepBest(_ g: Int) {
            let keys = region(g)
            if k > 0 && k < keys.count { _ = branchFreeSelectDescending(k - 1, in: keys, spare: spare, upTo: keys.count) }
            sizes[g] = min(k, keys.count)
        }
        scores.withUnsafeBufferPointer { scores in
        groups.withUnsafeBufferPointer { groups in
            var start = 0
            while start < n {
                let end = min(n, start + chunk)
                for g in 0..<groupCount where sizes[g] + (end - start) > capacity { keepBest(g) }
                sizes[groupCount] = 0  // the rows left out are never read
                let before = sizes
                sizes.withUnsafeMutableBufferPointer { sizes in
                    for row in start..<end {
                        let score = scores[row]
                        let g = Int(groups[row])
                        if score.isNaN {  // never on a deck's scores: a predictable branch
                            if g >= 0 { nans[g] += 1 }
                        }
                        let target = g < 0 || score.isNaN ? groupCount : g
                        buffer[target &* capacity &+ sizes[target]] = Self.key(score: score, row: row)
                        sizes[target] &+= 1
                    }
                }
                for g in 0..<groupCount { tallies[g] += sizes[g] - before[g] }
                start = end
            }
        }
        }
        for g in 0..<groupCount {
            keepBest(g)
            // The best keys are first, in no order: sorted.
            var best = region(g)
            if best.count <= 64 { Self.insertionSortDescending(best) } else { best.sort(by: >) }
            lists.append(best.map { Int(UInt32.max - UInt32(truncatingIfNeeded: $0)) })
        }
        counts = (0..<groupCount).map { tallies[$0] + nans[$0] }
        result = lists
    }

    /// Sorts a few keys best first.
    private static func insertionSortDescending(_ a: UnsafeMutableBufferPointer<UInt64>) {
        guard a.count > 1 else { return }
        for i in 1..<a.count {
            let v = a[i]
            var j = i
            while j > 0 && a[j &- 1] < v {
                a[j] = a[j &- 1]
                j &-= 1
            }
            a[j] = v
        }
    }

    /// An entry's sort key: higher is better. The score's bits in an order-preserving form in
    /// the high half (−0 as +0, so equal scores tie), the row's complement in the low half (of
    /// equal scores, the lower row first): one integer comparison for the whole order.
    @inline(__always)
    static func key(score: Float, row: Int) -> UInt64 {
        let bits = (score + 0).bitPattern  // −0 + 0 is +0; every other non-NaN score is unchanged
        let ordered = bits & 0x8000_0000 != 0 ? ~bits : bits | 0x8000_0000
        return UInt64(ordered) << 32 | UInt64(UInt32.max - UInt32(truncatingIfNeeded: row))
    }
}
