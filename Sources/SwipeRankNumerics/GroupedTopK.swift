/// Selects, in one pass, the `k` best scores of every group of rows: what a deck needs for each
/// geographic band of the unseen cards.
///
/// The order is `TopKSelector`'s: higher score first; among equal scores, the lower row first;
/// NaN scores are never selected, nor counted. So each group's result equals the first `k` of
/// a stable descending sort of that group's scores, and its count says how many rows it could
/// return: a caller that takes rows while the count lasts never reads past a result (a deck
/// counted NaN rows it could not be given and trapped on them).
///
///     var selector = GroupedTopKSelector()
///     var best: [[Int]] = []
///     var counts: [Int] = []
///     selector.select(k: 20, from: scores, groups: bandOfRow, groupCount: 3, into: &best, counts: &counts)
///     // best[g]: the rows of band g, best first; counts[g]: how many rows band g has
///
/// How: through bins of the score (`selectByBins`): a count per group and bin bounds each
/// group's k-th best, and only the rows above that bound are kept, selected and sorted. When
/// the scores cannot be binned (a sample with one distinct finite value) or crowd into one
/// bin on a large catalog, rows are read in chunks of 4,096 instead; each row's key
/// (`key(score:row:)`: score and row in one integer) goes to its group's region of a buffer,
/// rows left out (and NaN scores) to a region of their own, so the pass does not branch on the row's group; a region that could
/// overflow with the next chunk first keeps only its best k keys (a branch-free partition
/// selection, `branchFreeSelectDescending`), and at the end each group's best k are selected
/// the same way and only those are sorted. Scratch is O(groups × (k + 4,096)) whatever the
/// catalog's size. A deck keeps the best 58 of each band's ~700 rows: a bounded heap, or a
/// buffer compacted by quickselect, lost most of their time to mispredicted comparisons
/// (`swiperank-profile . bands`: 24 µs for the latter on random scores, 11 µs for the chunks
/// on an earlier VM); the bins take 0.81× the chunks' instructions there and 0.71× on a deck
/// (callgrind), and no more wall time in interleaved runs.
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
    ///   - counts: Replaced by `groupCount` counts of the rows in each group that have a
    ///     number for a score (NaN scores are neither selected nor counted).
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
        if Self.selectByBins(k: min(k, scores.count), from: scores, groups: groups, groupCount: groupCount,
                             into: &result, counts: &counts) { return }
        selectByChunks(k: k, from: scores, groups: groups, groupCount: groupCount, into: &result, counts: &counts)
    }

    /// `select(k:from:groups:groupCount:into:counts:)` by chunks alone (the arguments checked).
    package mutating func selectByChunks(k: Int, from scores: [Float], groups: [Int8], groupCount: Int,
                                         into result: inout [[Int]], counts: inout [Int]) {
        let n = scores.count, k = min(k, n)
        // Regions 0..<groupCount for the groups, groupCount for the rows left out, each room for
        // k kept keys and a chunk; then the partition's scratch. Every place read is written
        // first: not zeroed.
        let chunk = 4_096, regions = groupCount + 1
        let capacity = min(n, k + chunk)
        var sizes = [Int](filling: 0, count: regions)
        var tallies = [Int](filling: 0, count: groupCount)  // rows added to each group's region
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
        counts = tallies
        result = lists
    }

    /// The selection through bins of the score, which needs no selection over a group's whole
    /// region: about n/4 equal-width bins span the range of a strided sample of the eligible
    /// scores, and a score's bin is `(score − least) · scale` clamped to that range and rounded,
    /// which never decreases as the score grows (scores outside the sample's range share the
    /// end bins), so a bin's rows all rank below every row of a better bin. A count per group
    /// and bin gives the bin that holds each group's k-th best, and a second pass keeps
    /// only the rows at or above it — about k of each group's ~700 on a deck — which are then
    /// selected and sorted by key as the chunked path does. Two reads of every row, a few
    /// instructions each with no branch on the scores; the chunked path's partitions over
    /// every group's region were a tenth of a deck.
    ///
    /// - Returns: false, having changed nothing, when k is 0 or there are no groups or rows,
    ///   when the sample has fewer than two distinct finite eligible scores or a range too
    ///   narrow to scale, or when the bins would keep more than k + 4,096 rows a group (scores
    ///   crowded into one bin); the chunked path then selects with its bounded scratch.
    /// - Complexity: O(n + groupCount · (bins + k log k)) expected, bins ≤ 4,096; 2 bytes of
    ///   scratch a row.
    package static func selectByBins(k: Int, from scores: [Float], groups: [Int8], groupCount: Int,
                                     into result: inout [[Int]], counts: inout [Int]) -> Bool {
        let n = scores.count
        guard k > 0, groupCount > 0, n > 0 else { return false }
        // The range from about 256 evenly strided rows: exact bounds would be a third pass.
        var least = Float.infinity, greatest = -Float.infinity
        for row in stride(from: 0, to: n, by: max(1, n / 256)) where groups[row] >= 0 && scores[row].isFinite {
            least = min(least, scores[row])
            greatest = max(greatest, scores[row])
        }
        guard least < greatest else { return false }
        let binCount = min(max(n / 4, 16), 4_096)
        let top = binCount - 1, topScore = Float(top)
        let scale = Float(Double(top) / (Double(greatest) - Double(least)))
        guard scale.isFinite, scale > 0 else { return false }
        // Each row's bin; binCount (past every bin, in its group's NaN slot) for a NaN score;
        // Int16.max for a row left out: a loop of its own, with no scatter in it, so it runs on
        // vector lanes.
        let binOfRow = UnsafeMutableBufferPointer<Int16>.allocate(capacity: n)
        defer { binOfRow.deallocate() }
        let nanBin = Int16(truncatingIfNeeded: binCount)
        scores.withUnsafeBufferPointer { scores in
            groups.withUnsafeBufferPointer { groups in
                for row in 0..<n {
                    let score = scores[row]
                    let scaled = (score - least) * scale  // ±∞ past the ends; NaN only for NaN
                    let clamped = scaled < 0 ? 0 : scaled > topScore ? topScore : scaled
                    // Adding 2²³ rounds a value in [0, top] to an integer in the low mantissa
                    // bits: a conversion without `Int(_:)`'s range checks.
                    let bin = Int16(truncatingIfNeeded: top) &- Int16(truncatingIfNeeded: (clamped + 8_388_608).bitPattern)
                    binOfRow[row] = groups[row] < 0 ? .max : score == score ? bin : nanBin  // NaN is not equal to itself
                }
            }
        }
        // Per group binCount counts and one for its NaN scores (so the group's count is the sum
        // of the others), then one slot for every row left out, so the pass does not branch on
        // them.
        let span = binCount + 1
        let histogram = UnsafeMutableBufferPointer<Int32>.allocate(capacity: groupCount * span + 1)
        defer { histogram.deallocate() }
        histogram.initialize(repeating: 0)
        // Each row's slot is its group's base plus its bin, the base read by the group's byte; a
        // row left out (bin Int16.max) has a base that lands on the one slot past every group's.
        // A table rather than a test: the compiler made the test a branch.
        // On the stack: a heap table here was one more allocation per deck.
        let ignored = groupCount * span
        withUnsafeTemporaryAllocation(of: Int.self, capacity: 256) { base in
            base.initialize(repeating: ignored &- Int(Int16.max))
            for g in 0..<groupCount { base[g] = g &* span }
            groups.withUnsafeBufferPointer { groups in
                for row in 0..<n {
                    histogram[base[Int(UInt8(bitPattern: groups[row]))] &+ Int(binOfRow[row])] &+= 1
                }
            }
        }
        let tallies = (0..<groupCount).map { g in
            UnsafeMutableBufferPointer(rebasing: histogram[(g * span)..<(g * span + binCount)]).reduce(0) { $0 &+ Int($1) }
        }
        // Per group, the last bin (from the best) needed to reach k rows, or every bin, and the
        // rows kept; by the group's byte, so a row left out (a negative group) reads −1 and is
        // never kept (nor is a NaN score, in bin binCount).
        var lastBin = [Int16](filling: -1, count: 256)
        var offsets = [Int](filling: 0, count: groupCount + 1)
        for g in 0..<groupCount {
            var kept = 0
            lastBin[g] = Int16(truncatingIfNeeded: top)
            for b in 0..<binCount {
                kept &+= Int(histogram[g &* span &+ b])
                if kept >= k { lastBin[g] = Int16(truncatingIfNeeded: b); break }
            }
            offsets[g &+ 1] = offsets[g] &+ kept
        }
        let total = offsets[groupCount]
        // Scores crowded into one bin would keep most rows of a large catalog: the chunked
        // path's bounded scratch instead.
        guard total <= groupCount * (k + 4_096) else { return false }
        // The kept rows in row order, compacted with one counter (a counter per group, read and
        // written back every row, made each row wait on the last store), then their keys by
        // group, each group's from its offset.
        let keptRows = UnsafeMutableBufferPointer<UInt32>.allocate(capacity: total + 1)
        defer { keptRows.deallocate() }
        groups.withUnsafeBufferPointer { groups in
            lastBin.withUnsafeBufferPointer { lastBin in
                var count = 0
                for row in 0..<n {
                    keptRows[count] = UInt32(truncatingIfNeeded: row)
                    // 1 when the bin is at or above the group's last (last − bin ≥ 0), from the
                    // difference's sign: the comparison compiled to a branch, which a tenth of the
                    // rows, scattered, took (`perf`: a sixth of this function's time).
                    count &+= 1 &+ ((Int(lastBin[Int(UInt8(bitPattern: groups[row]))]) &- Int(binOfRow[row])) &>> 63)
                }
            }
        }
        let keys = UnsafeMutableBufferPointer<UInt64>.allocate(capacity: 2 * total)
        defer { keys.deallocate() }
        let spare = UnsafeMutableBufferPointer(rebasing: keys[total...])
        var next = offsets
        scores.withUnsafeBufferPointer { scores in
            for i in 0..<total {
                let row = Int(keptRows[i]), g = Int(groups[row])
                keys[next[g]] = key(score: scores[row], row: row)
                next[g] &+= 1
            }
        }
        var lists: [[Int]] = []
        lists.reserveCapacity(groupCount)
        for g in 0..<groupCount {
            let region = UnsafeMutableBufferPointer(rebasing: keys[offsets[g]..<offsets[g &+ 1]])
            let spareRegion = UnsafeMutableBufferPointer(rebasing: spare[offsets[g]..<offsets[g &+ 1]])
            if k < region.count { _ = branchFreeSelectDescending(k &- 1, in: region, spare: spareRegion, upTo: region.count) }
            var best = UnsafeMutableBufferPointer(rebasing: region[..<min(k, region.count)])
            if best.count <= 64 { insertionSortDescending(best) } else { best.sort(by: >) }
            lists.append(best.map { Int(UInt32.max - UInt32(truncatingIfNeeded: $0)) })
        }
        counts = tallies
        result = lists
        return true
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
