extension Array {
    /// Rearranges `self[offset ..< offset + source.count]` so that place `offset + j` holds
    /// what was at `offset + source[j]`, by swaps along the permutation's cycles: every element
    /// moves, none is copied. A deck puts its cards in order this way: copying them (the array
    /// copied on write, then each card assigned) retained each card's strings and arrays twice,
    /// a few hundred atomic retains per deck.
    ///
    /// - Parameters:
    ///   - offset: Where the rearranged range starts.
    ///   - source: A permutation of `0..<source.count`, the range inside the array.
    /// - Complexity: O(source.count).
    // Inlinable so a deck's call is specialized for its card types: unspecialized, every swap
    // went through the element's value witnesses and each array access looked its metadata up.
    @inlinable
    package mutating func permute(from offset: Int = 0, source: [Int]) {
        precondition(offset >= 0 && offset + source.count <= count, "permute: \(source.count) places from \(offset) in \(count)")
        // Which places are done, as bits: a deck's ten need no allocation.
        var placed = PlaceSet(count: source.count)
        for k in source {
            precondition(k >= 0 && k < source.count && !placed.contains(k), "permute: the sources are not a permutation")
            placed.insert(k)
        }
        placed = PlaceSet(count: source.count)
        withUnsafeMutableBufferPointer { buffer in
            let elements = UnsafeMutableBufferPointer(rebasing: buffer[offset..<(offset + source.count)])
            for start in source.indices where !placed.contains(start) {
                // Along the cycle start → source[start] → …: each swap puts the awaited element
                // in place k and carries the start's element on, to the cycle's last place.
                var k = start
                while source[k] != start {
                    elements.swapAt(k, source[k])
                    placed.insert(k)
                    k = source[k]
                }
                placed.insert(k)
            }
        }
    }
}

/// A set of places `0..<count`: one word of bits up to 64 places, an array beyond.
@usableFromInline
struct PlaceSet {
    @usableFromInline var bits: UInt64 = 0
    @usableFromInline var more: [Bool]

    @inlinable
    init(count: Int) { more = count > 64 ? [Bool](filling: false, count: count) : [] }

    @inlinable
    func contains(_ k: Int) -> Bool { more.isEmpty ? bits & (1 << UInt64(k)) != 0 : more[k] }

    @inlinable
    mutating func insert(_ k: Int) {
        if more.isEmpty { bits |= 1 << UInt64(k) } else { more[k] = true }
    }
}
