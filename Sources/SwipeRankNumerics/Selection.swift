// One selection ("nth element") for every order statistic the package takes: grade thresholds,
// the candidate index's median splits, the item matcher's column medians.

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
