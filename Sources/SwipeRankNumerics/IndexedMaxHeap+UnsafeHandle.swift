// The one place the indexed heap touches raw buffers: sifting moves entries and position-map
// slots many times per operation, and bounds checks there cost ~20% of a pop.

extension IndexedMaxHeap {
    /// A view of the heap's two buffers for the duration of one `_update` call.
    @usableFromInline
    struct _UnsafeHandle {
        @usableFromInline var entries: UnsafeMutableBufferPointer<Entry>
        @usableFromInline var slots: UnsafeMutableBufferPointer<Int32>

        @inlinable init(entries: UnsafeMutableBufferPointer<Entry>, slots: UnsafeMutableBufferPointer<Int32>) {
            self.entries = entries
            self.slots = slots
        }

        @inlinable var count: Int { entries.count }

        /// Whether the entry in slot `a` ranks above the one in slot `b`.
        @inlinable @inline(__always)
        func better(_ a: Entry, _ b: Entry) -> Bool {
            a.score > b.score || (a.score == b.score && a.handle < b.handle)
        }

        /// Moves the entry at `start` up to its place (hole technique: one write per level).
        @inlinable
        func siftUp(from start: Int) {
            var child = start
            let entry = entries[child]
            while child > 0 {
                let parent = (child &- 1) >> 2
                let p = entries[parent]
                guard better(entry, p) else { break }
                entries[child] = p
                slots[Int(p.handle)] = Int32(truncatingIfNeeded: child)
                child = parent
            }
            entries[child] = entry
            slots[Int(entry.handle)] = Int32(truncatingIfNeeded: child)
        }

        /// Moves the entry at `start` down to its place.
        @inlinable
        func siftDown(from start: Int) {
            let n = entries.count
            var parent = start
            let entry = entries[parent]
            while true {
                let first = (parent << 2) &+ 1
                guard first < n else { break }
                var best = first
                var bestEntry = entries[first]
                let end = Swift.min(first &+ 4, n)
                var c = first &+ 1
                while c < end {
                    let e = entries[c]
                    if better(e, bestEntry) { best = c; bestEntry = e }
                    c &+= 1
                }
                guard better(bestEntry, entry) else { break }
                entries[parent] = bestEntry
                slots[Int(bestEntry.handle)] = Int32(truncatingIfNeeded: parent)
                parent = best
            }
            entries[parent] = entry
            slots[Int(entry.handle)] = Int32(truncatingIfNeeded: parent)
        }

        /// Floyd's bottom-up heap construction, O(n).
        @inlinable
        func heapify() {
            guard count > 1 else { return }
            var i = (count &- 2) >> 2
            while i >= 0 {
                siftDown(from: i)
                i &-= 1
            }
        }
    }

    /// Runs `body` with unsafe access to both buffers; the only entry point to raw memory.
    @inlinable
    mutating func _update<R>(_ body: (_UnsafeHandle) throws -> R) rethrows -> R {
        try entries.withUnsafeMutableBufferPointer { e in
            try slots.withUnsafeMutableBufferPointer { s in
                try body(_UnsafeHandle(entries: e, slots: s))
            }
        }
    }
}
