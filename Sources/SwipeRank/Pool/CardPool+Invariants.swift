extension CardPool {
    #if SWIPERANK_INTERNAL_CHECKS
    /// Checks the heap order, the position map, and that no card is both seen and unseen;
    /// traps on a violation. Compiled in only with `SWIPERANK_INTERNAL_CHECKS` (the test
    /// scripts set it), where it runs after every mutation.
    ///
    /// - Complexity: O(cards).
    public func _checkInvariants() {
        heap._checkInvariants()
        for (id, h) in handles.entries {
            precondition(ids[Int(h)] == id, "CardPool: handle \(h) does not belong to \(id)")
            let seen = historyIndexes[Int(h)] >= 0, unseen = heap.contains(handle: Int(h))
            precondition(!(seen && unseen), "CardPool: \(id) is both seen and unseen")
            precondition(seen || unseen, "CardPool: \(id) is known but neither seen nor unseen")
        }
        for (index, h) in historyHandles.enumerated() {
            precondition(historyIndexes[Int(h)] == Int32(index), "CardPool: history index of handle \(h) is wrong")
        }
        precondition(heap.count + historyHandles.count <= handles.count, "CardPool: more cards than ids")
    }
    #else
    /// Checks the pool's invariants (a no-op unless built with `SWIPERANK_INTERNAL_CHECKS`).
    @inlinable @inline(__always)
    public func _checkInvariants() {}
    #endif
}
