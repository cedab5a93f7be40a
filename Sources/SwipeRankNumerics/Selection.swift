// One selection ("nth element") for every order statistic the package takes: grade thresholds,
// the candidate index's median splits, the item matcher's column medians.

import CSwipeRankKernels

/// Rearranges `values[range]` so that index `n` holds the element a sort of the range by `less`
/// would put there, with no element before it greater and none after it less — without sorting
/// (Hoare partitions around a median-of-three pivot: deterministic, O(count) expected).
///
/// With a strict total order the elements before `n` are then exactly the range's `n −
/// range.lowerBound` smallest; with ties, the value at `n` is still the sorted one.
///
/// - Parameters:
///   - n: An index within `range`.
///   - values: The array.
///   - range: The part rearranged (the whole array when nil).
///   - less: A strict weak order.
/// - Complexity: O(range.count) expected.
@inlinable
public func selectNth<T>(_ n: Int, in values: inout [T], within range: Range<Int>? = nil, by less: (T, T) -> Bool) {
    values.withUnsafeMutableBufferPointer { selectNth(n, in: $0, within: range ?? 0..<$0.count, by: less) }
}

/// `selectNth(_:in:within:by:)` on a buffer (the candidate index splits ranges of one).
@inlinable
func selectNth<T>(_ n: Int, in values: UnsafeMutableBufferPointer<T>, within range: Range<Int>, by less: (T, T) -> Bool) {
    precondition(range.contains(n) && range.upperBound <= values.count, "selectNth: \(n) is not an index of \(range)")
    var lo = range.lowerBound, hi = range.upperBound - 1
    while lo < hi {
        let mid = lo + (hi - lo) / 2
        var (a, b, c) = (values[lo], values[mid], values[hi])
        if less(b, a) { swap(&a, &b) }
        if less(c, b) { swap(&b, &c) }
        if less(b, a) { swap(&a, &b) }
        let pivot = b
        var i = lo, j = hi
        while i <= j {
            while i <= hi && less(values[i], pivot) { i += 1 }
            while j >= lo && less(pivot, values[j]) { j -= 1 }
            if i <= j {
                values.swapAt(i, j)
                i += 1
                j -= 1
            }
        }
        // values[lo...j] ≤ pivot ≤ values[i...hi]; anything between equals the pivot.
        if n <= j { hi = j } else if n >= i { lo = i } else { return }
    }
}

/// The values at descending ranks of `values` (rank 0 the largest): exactly what sorting a copy
/// best first and reading those places gives, selected with partitions that do not branch on
/// the values. A deck's grade scale takes four order statistics of 1,024 scores, and
/// quickselect's comparisons, taken either way at random, cost about 17 µs of mispredicted
/// branches: a seventh of a deck.
///
/// Widest rank first, each narrower one among the values before it (as
/// `quickselectDescending`). Each partition writes every value of the range to both ends of a
/// second buffer and advances one end by the comparison's outcome (values above a
/// median-of-three pivot first), then copies the range back; when none is above the pivot, a
/// second pass puts the values equal to it first, so runs of equal values still shrink the
/// range. With a NaN anywhere the order is not total: the result is then
/// `quickselectDescending`'s.
///
/// - Parameters:
///   - ranks: Ranks, ascending, each in `0..<values.count`.
///   - values: The values (not modified).
/// - Returns: One value per rank, in the order of `ranks`.
/// - Complexity: O(n) expected.
public func valuesAtDescendingRanks(_ ranks: [Int], of values: [Double]) -> [Double] {
    valuesAtDescendingRanks(ranks, of: values, range: nil)
}

/// `valuesAtDescendingRanks(_:of:)` with the values' least and greatest already known (a grade
/// scale finds them while it samples), so the bins skip their own pass over the values.
///
/// - Parameter range: `(values.min(), values.max())` of values without NaN, or nil to find them.
package func valuesAtDescendingRanks(_ ranks: [Int], of values: [Double], range: (least: Double, greatest: Double)?) -> [Double] {
    let m = values.count
    precondition(ranks.allSatisfy { $0 >= 0 && $0 < m } && zip(ranks, ranks.dropFirst()).allSatisfy { $0 <= $1 },
                 "valuesAtDescendingRanks: ranks \(ranks) of \(m) values (ascending)")
    if let binned = valuesAtDescendingRanksByBins(ranks, of: values, range: range) { return binned }
    guard !values.contains(where: \.isNaN) else { return quickselectDescending(ranks, of: values) }
    return valuesAtDescendingRanksByPartitions(ranks, of: values)
}

/// `valuesAtDescendingRanks(_:of:)` by branch-free partitions alone (values without NaN).
package func valuesAtDescendingRanksByPartitions(_ ranks: [Int], of values: [Double]) -> [Double] {
    let m = values.count
    var copy = values
    var spare = values
    var result = [Double](filling: 0, count: ranks.count)
    copy.withUnsafeMutableBufferPointer { a in
        spare.withUnsafeMutableBufferPointer { b in
            var end = m
            for (i, rank) in ranks.enumerated().reversed() {
                result[i] = branchFreeSelectDescending(rank, in: a, spare: b, upTo: end)
                end = rank + 1
            }
        }
    }
    return result
}

/// `valuesAtDescendingRanks(_:of:)` through bins: each value goes to one of about m/4 equal-width
/// bins between the least and the greatest (bin 0 the greatest values), by `(x − least) · scale`
/// rounded, which never decreases as x grows, so a bin's values all rank below every value of a
/// better bin. A count per bin finds the bin holding each rank, one counting-sort pass lays out
/// the values of those bins alone, and each rank is selected within its bin's few values. The
/// partitions' passes over all 1,024 scores of a grade scale (and their copies back) were a
/// tenth of a deck; this reads them three times, each a few instructions.
///
/// - Returns: nil when the values cannot be binned (a NaN, an infinity, or a range whose width
///   or scale overflows); the caller then partitions, or with a NaN quickselects.
///
/// - Parameter range: The values' least and greatest (no NaN among them), if the caller knows
///   them; nil to find them here.
package func valuesAtDescendingRanksByBins(_ ranks: [Int], of values: [Double], range: (least: Double, greatest: Double)? = nil,
                                           kernel: NumericsKernel? = nil) -> [Double]? {
    let m = values.count
    guard m > 0, !ranks.isEmpty else { return ranks.isEmpty ? [] : nil }
    guard let (least, greatest) = range ?? nanFreeRange(values) else { return nil }
    if least == greatest { return ranks.map { _ in least } }
    let binCount = min(max(m / 4, 16), 1 << 16)
    let top = binCount - 1
    let width = greatest - least, scale = Double(top) / width
    guard width.isFinite, scale.isFinite, scale > 0 else { return nil }
    // Bin 0 holds the greatest values, so descending ranks run with the bins.
    let scratch = UnsafeMutableRawBufferPointer.allocate(byteCount: m * (2 * MemoryLayout<Double>.stride + MemoryLayout<Int32>.stride)
                                                           + (binCount + 1) * MemoryLayout<Int32>.stride + binCount,
                                                         alignment: MemoryLayout<Double>.alignment)
    defer { scratch.deallocate() }
    let laid = scratch.baseAddress!.bindMemory(to: Double.self, capacity: 2 * m)
    let sorted = UnsafeMutableBufferPointer(start: laid, count: m), spare = UnsafeMutableBufferPointer(start: laid + m, count: m)
    let binOf = (scratch.baseAddress! + 2 * m * MemoryLayout<Double>.stride).bindMemory(to: Int32.self, capacity: m + binCount + 1)
    let starts = binOf + m  // starts[b]: values in bins before b, once summed
    starts.initialize(repeating: 0, count: binCount + 1)
    let wanted = (scratch.baseAddress! + m * (2 * MemoryLayout<Double>.stride + MemoryLayout<Int32>.stride)
                  + (binCount + 1) * MemoryLayout<Int32>.stride).bindMemory(to: UInt8.self, capacity: binCount)
    wanted.initialize(repeating: 0, count: binCount)
    var result = [Double](filling: 0, count: ranks.count)
    let vector = NumericsKernel.resolve(kernel) == .vector
    values.withUnsafeBufferPointer { values in
        if vector {
            // Four bins a step (the same rounding), then the counts one value at a time.
            swiperank_selection_bins_avx(values.baseAddress!, m, least, scale, top, binOf, starts)
        } else {
            for i in 0..<m {
                // (x − least) · scale is in [0, top]: adding 2⁵² rounds it to an integer in the
                // low mantissa bits, a conversion without `Int(_:)`'s range checks. Rounding
                // never decreases either.
                let lifted = (values[i] - least) * scale + 4_503_599_627_370_496
                let b = top &- min(Int(truncatingIfNeeded: lifted.bitPattern & 0xF_FFFF_FFFF_FFFF), top)
                binOf[i] = Int32(truncatingIfNeeded: b)
                starts[b &+ 1] &+= 1
            }
        }
        for b in 0..<binCount { starts[b &+ 1] &+= starts[b] }
        // Bin b spans [starts[b], starts[b + 1]) of the values laid out by bin. Only the bins
        // holding a rank are laid out (a counting sort of those values alone, in their order):
        // writing every value to its place was most of this function's time.
        var spans: [(start: Int, end: Int)] = []
        spans.reserveCapacity(ranks.count)
        var b = 0, wantedBins = SIMD4<Int32>(repeating: 0), wantedCount = 0
        for rank in ranks {
            while Int(starts[b &+ 1]) <= rank { b &+= 1 }
            spans.append((Int(starts[b]), Int(starts[b &+ 1])))
            if wanted[b] == 0 {
                if wantedCount < 4 { wantedBins[wantedCount] = Int32(b) }
                wantedCount += 1
            }
            wanted[b] = 1
        }
        if vector && wantedCount <= 4 {
            // Up to four bins (a grade scale's four ranks) compared four values a step.
            withUnsafePointer(to: &wantedBins) { lanes in
                lanes.withMemoryRebound(to: Int32.self, capacity: 4) { list in
                    swiperank_selection_gather_avx(values.baseAddress!, binOf, m, list, wantedCount, starts, sorted.baseAddress!)
                }
            }
        } else {
            for i in 0..<m {
                let b = Int(binOf[i])
                guard wanted[b] != 0 else { continue }
                sorted[Int(starts[b])] = values[i]
                starts[b] &+= 1  // the cursor of a wanted bin (its span was read above)
            }
        }
        for (i, rank) in ranks.enumerated() {
            let (start, end) = spans[i]
            result[i] = branchFreeSelectDescending(rank &- start, in: sorted, spare: spare, from: start, upTo: end)
        }
    }
    return result
}

/// The least and greatest of `values` (non-empty), or nil if any is NaN. The NaN test reads the
/// bits (a NaN's exponent is all ones and its fraction not zero): comparing a value with itself
/// compiled to a branch per value.
@inline(__always)
func nanFreeRange(_ values: [Double]) -> (least: Double, greatest: Double)? {
    var least = values[0], greatest = values[0], nans: UInt64 = 0
    for x in values {
        least = x < least ? x : least
        greatest = x > greatest ? x : greatest
        nans |= (x.bitPattern & 0x7FFF_FFFF_FFFF_FFFF) > 0x7FF0_0000_0000_0000 ? 1 : 0
    }
    return nans == 0 ? (least, greatest) : nil
}

/// Puts the value of descending rank `k` of `a[start..<end]` (rank 0 at `start`) at
/// `start + k`, larger ones before it and smaller or equal after, and returns it; `b` is
/// scratch covering the same indices. The values must be totally ordered (no NaN).
@inline(__always)
func branchFreeSelectDescending<T: Comparable>(_ k: Int, in a: UnsafeMutableBufferPointer<T>, spare b: UnsafeMutableBufferPointer<T>,
                                               from start: Int = 0, upTo end: Int) -> T {
    let k = start + k
    var lo = start, hi = end
    // Writes a[lo..<hi] into b with the values above `pivot` (or, `orEqual`, not below it) at
    // the front, then back into a; returns where the others start. Two plain loops: a
    // predicate passed as a closure was a call per value.
    func partition(_ pivot: T, orEqual: Bool) -> Int {
        var front = lo, back = hi &- 1
        if orEqual {
            for i in lo..<hi {
                let v = a[i]
                let step = v >= pivot ? 1 : 0
                b[front] = v
                b[back] = v
                front &+= step
                back &-= 1 &- step
            }
        } else {
            for i in lo..<hi {
                let v = a[i]
                let step = v > pivot ? 1 : 0
                b[front] = v
                b[back] = v
                front &+= step
                back &-= 1 &- step
            }
        }
        _ = UnsafeMutableBufferPointer(rebasing: a[lo..<hi]).update(fromContentsOf: b[lo..<hi])
        return front
    }
    while hi - lo > 16 {
        let mid = lo &+ (hi &- lo) / 2
        let (x, y, z) = (a[lo], a[mid], a[hi &- 1])
        let pivot = max(min(x, y), min(max(x, y), z))
        let split = partition(pivot, orEqual: false)  // [lo, split) > pivot ≥ [split, hi)
        if k < split { hi = split; continue }
        if split > lo { lo = split; continue }
        // Nothing above the pivot: the values equal to it first (the pivot at least).
        let equal = partition(pivot, orEqual: true)
        if k < equal { return pivot }
        lo = equal
    }
    // A few values left: insertion sort, best first.
    if lo < hi {
        for i in (lo &+ 1)..<hi {
            let v = a[i]
            var j = i
            while j > lo && a[j &- 1] < v {
                a[j] = a[j &- 1]
                j &-= 1
            }
            a[j] = v
        }
    }
    return a[k]
}

/// `valuesAtDescendingRanks(_:of:)` by quickselect on a copy, widest rank first: a selection
/// leaves the larger values before its rank, so each narrower one is selected among those alone.
package func quickselectDescending(_ ranks: [Int], of values: [Double]) -> [Double] {
    var copy = values
    var result = [Double](filling: 0, count: ranks.count)
    var end = copy.count
    for (i, rank) in ranks.enumerated().reversed() {
        selectNth(rank, in: &copy, within: 0..<end, by: >)
        result[i] = copy[rank]
        end = rank + 1
    }
    return result
}
