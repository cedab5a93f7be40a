extension IndexedMaxHeap {
    #if SWIPERANK_INTERNAL_CHECKS
    /// Checks the heap order and the position map; traps on a violation. Compiled in only with
    /// `SWIPERANK_INTERNAL_CHECKS` (the test scripts set it), where it runs after every
    /// mutation.
    ///
    /// - Complexity: O(n + handles).
    public func _checkInvariants() {
        for i in 1..<Swift.max(1, entries.count) {
            let parent = (i - 1) / 4
            let p = entries[parent], c = entries[i]
            precondition(!(c.score > p.score || (c.score == p.score && c.handle < p.handle)),
                         "IndexedMaxHeap: slot \(i) ranks above its parent \(parent)")
        }
        var inHeap = 0
        for (handle, slot) in slots.enumerated() where slot >= 0 {
            inHeap += 1
            precondition(Int(slot) < entries.count && Int(entries[Int(slot)].handle) == handle,
                         "IndexedMaxHeap: position map of handle \(handle) points at slot \(slot)")
        }
        precondition(inHeap == entries.count, "IndexedMaxHeap: \(inHeap) mapped handles for \(entries.count) entries")
    }
    #else
    /// Checks the heap order and the position map (a no-op unless built with
    /// `SWIPERANK_INTERNAL_CHECKS`).
    @inlinable @inline(__always)
    public func _checkInvariants() {}
    #endif
}
