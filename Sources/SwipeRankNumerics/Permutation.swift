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
    package mutating func permute(from offset: Int = 0, source: [Int]) {
        precondition(offset >= 0 && offset + source.count <= count, "permute: \(source.count) places from \(offset) in \(count)")
        var placed = [Bool](repeating: false, count: source.count)
        for k in source {
            precondition(k >= 0 && k < source.count && !placed[k], "permute: the sources are not a permutation")
            placed[k] = true
        }
        for k in placed.indices { placed[k] = false }  // the same buffer for the cycles
        withUnsafeMutableBufferPointer { buffer in
            let elements = UnsafeMutableBufferPointer(rebasing: buffer[offset..<(offset + source.count)])
            for start in source.indices where !placed[start] {
                // Along the cycle start → source[start] → …: each swap puts the awaited element
                // in place k and carries the start's element on, to the cycle's last place.
                var k = start
                while source[k] != start {
                    elements.swapAt(k, source[k])
                    placed[k] = true
                    k = source[k]
                }
                placed[k] = true
            }
        }
    }
}
