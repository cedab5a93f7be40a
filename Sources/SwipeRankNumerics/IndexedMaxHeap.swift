/// A 4-ary max-heap of scores keyed by small integer handles, with a position map so a
/// handle's score can be changed or removed in O(log n).
///
/// `swift-collections`' `Heap` has no update-key; this one does, at the cost of one `Int32`
/// per handle. Handles are dense integers chosen by the caller (`0, 1, 2, …` in insertion
/// order is the intended use); the position map grows to the largest handle seen.
///
/// Order: higher score first; among equal scores, the lower handle first. So with handles in
/// insertion order, ties are first-in, first-out, and every query is deterministic.
///
///     var heap = IndexedMaxHeap<Float>()
///     heap.insert(handle: 0, score: 0.4)
///     heap.insert(handle: 1, score: 0.9)
///     heap.update(handle: 0, score: 1.2)
///     heap.popMax()        // (handle: 0, score: 1.2)
///
/// Why 4-ary: half the depth of a binary heap, and the four children of a node share one or
/// two cache lines, so pops touch fewer lines; inserts get shallower too.
public struct IndexedMaxHeap<Score: BinaryFloatingPoint & Sendable>: Sendable {
    /// One heap slot: the score inline (comparisons never chase a pointer) and its handle.
    @usableFromInline
    struct Entry: Sendable {
        @usableFromInline var score: Score
        @usableFromInline var handle: Int32
        @inlinable init(score: Score, handle: Int32) { self.score = score; self.handle = handle }
    }

    @usableFromInline var entries: ContiguousArray<Entry> = []
    /// `slots[handle]` is the handle's index in `entries`, or -1 when it is not in the heap.
    @usableFromInline var slots: ContiguousArray<Int32> = []

    /// Creates an empty heap.
    @inlinable public init() {}

    /// The number of handles in the heap.
    ///
    /// - Complexity: O(1).
    @inlinable public var count: Int { entries.count }

    /// Whether the heap is empty.
    ///
    /// - Complexity: O(1).
    @inlinable public var isEmpty: Bool { entries.isEmpty }

    /// Reserves room for `count` entries and handles below `count`.
    ///
    /// - Parameter count: The expected size.
    /// - Complexity: O(count).
    @inlinable
    public mutating func reserveCapacity(_ count: Int) {
        entries.reserveCapacity(count)
        slots.reserveCapacity(count)
    }

    /// Whether `handle` is in the heap.
    ///
    /// - Complexity: O(1).
    @inlinable
    public func contains(handle: Int) -> Bool {
        handle >= 0 && handle < slots.count && slots[handle] >= 0
    }

    /// The score of `handle`, or nil if it is not in the heap.
    ///
    /// - Complexity: O(1).
    @inlinable
    public func score(of handle: Int) -> Score? {
        contains(handle: handle) ? entries[Int(slots[handle])].score : nil
    }

    /// The top handle and its score, or nil when empty.
    ///
    /// - Complexity: O(1).
    @inlinable
    public var max: (handle: Int, score: Score)? {
        entries.first.map { (Int($0.handle), $0.score) }
    }

    /// Adds `handle` with `score`.
    ///
    /// - Parameters:
    ///   - handle: A handle in `0..<Int32.max` not already in the heap.
    ///   - score: A score that is not NaN.
    /// - Complexity: O(log n).
    @inlinable
    public mutating func insert(handle: Int, score: Score) {
        precondition(!score.isNaN, "IndexedMaxHeap: a NaN score has no place in the order")
        precondition(handle >= 0 && handle < Int(Int32.max), "IndexedMaxHeap: handle \(handle) out of range")
        precondition(!contains(handle: handle), "IndexedMaxHeap: handle \(handle) is already in the heap")
        while handle >= slots.count { slots.append(-1) }
        entries.append(Entry(score: score, handle: Int32(handle)))
        slots[handle] = Int32(entries.count - 1)
        _update { $0.siftUp(from: $0.count - 1) }
        _checkInvariants()
    }

    /// Removes and returns the top handle, or nil when empty.
    ///
    /// - Returns: The handle with the highest score (ties: the lowest handle).
    /// - Complexity: O(log n).
    @inlinable
    public mutating func popMax() -> (handle: Int, score: Score)? {
        guard !entries.isEmpty else { return nil }
        return removeMax()
    }

    /// Removes and returns the top handle; the heap must not be empty.
    ///
    /// - Returns: The handle with the highest score (ties: the lowest handle).
    /// - Complexity: O(log n).
    @discardableResult
    @inlinable
    public mutating func removeMax() -> (handle: Int, score: Score) {
        precondition(!entries.isEmpty, "IndexedMaxHeap.removeMax() on an empty heap")
        let top = entries[0]
        slots[Int(top.handle)] = -1
        let last = entries.removeLast()
        if !entries.isEmpty {
            // The last entry goes into the root's hole and only ever moves down.
            entries[0] = last
            _update { $0.siftDown(from: 0) }
        }
        _checkInvariants()
        return (Int(top.handle), top.score)
    }

    /// Changes the score of `handle`.
    ///
    /// - Parameters:
    ///   - handle: A handle in the heap.
    ///   - score: The new score, not NaN.
    /// - Complexity: O(log n).
    @inlinable
    public mutating func update(handle: Int, score: Score) {
        precondition(!score.isNaN, "IndexedMaxHeap: a NaN score has no place in the order")
        precondition(contains(handle: handle), "IndexedMaxHeap.update: handle \(handle) is not in the heap")
        let slot = Int(slots[handle])
        let old = entries[slot].score
        entries[slot].score = score
        _update { score > old ? $0.siftUp(from: slot) : $0.siftDown(from: slot) }
        _checkInvariants()
    }

    /// Removes `handle` from the heap.
    ///
    /// - Parameter handle: A handle.
    /// - Returns: Its score, or nil if it was not in the heap.
    /// - Complexity: O(log n).
    @discardableResult
    @inlinable
    public mutating func remove(handle: Int) -> Score? {
        guard contains(handle: handle) else { return nil }
        let slot = Int(slots[handle])
        let score = entries[slot].score
        removeSlot(slot)
        return score
    }

    /// Replaces every score at once and restores the heap order in O(n) (Floyd's heapify)
    /// instead of n updates of O(log n).
    ///
    /// - Parameter newScore: Called once per handle in the heap with its current score; returns
    ///   the new score (not NaN).
    /// - Complexity: O(n) plus the calls.
    @inlinable
    public mutating func rescoreAll(_ newScore: (_ handle: Int, _ score: Score) throws -> Score) rethrows {
        for i in entries.indices {
            let s = try newScore(Int(entries[i].handle), entries[i].score)
            precondition(!s.isNaN, "IndexedMaxHeap: a NaN score has no place in the order")
            entries[i].score = s
        }
        _update { $0.heapify() }
        _checkInvariants()
    }

    /// The top `k` handles in order, without removing them.
    ///
    /// Walks the heap from the root with a small frontier of candidates, so it reads O(k)
    /// nodes, not n.
    ///
    /// - Parameter k: How many, ≥ 0.
    /// - Returns: At most `k` (handle, score) pairs, best first.
    /// - Complexity: O(k log k).
    @inlinable
    public func top(_ k: Int) -> [(handle: Int, score: Score)] {
        precondition(k >= 0, "IndexedMaxHeap.top: k must not be negative")
        var result: [(handle: Int, score: Score)] = []
        guard k > 0, !entries.isEmpty else { return result }
        result.reserveCapacity(Swift.min(k, entries.count))
        // A binary max-heap of slot indices, ordered like the main heap.
        var frontier: [Int] = [0]
        func better(_ a: Int, _ b: Int) -> Bool {
            let x = entries[a], y = entries[b]
            return x.score > y.score || (x.score == y.score && x.handle < y.handle)
        }
        while result.count < k, !frontier.isEmpty {
            let slot = frontier[0]
            result.append((Int(entries[slot].handle), entries[slot].score))
            // Pop the frontier's root.
            frontier[0] = frontier[frontier.count - 1]
            frontier.removeLast()
            var i = 0
            while true {
                let l = 2 * i + 1, r = l + 1
                var best = i
                if l < frontier.count && better(frontier[l], frontier[best]) { best = l }
                if r < frontier.count && better(frontier[r], frontier[best]) { best = r }
                if best == i { break }
                frontier.swapAt(i, best)
                i = best
            }
            // Push the popped slot's children.
            for child in Swift.min(4 * slot + 1, entries.count)..<Swift.min(4 * slot + 5, entries.count) {
                frontier.append(child)
                var c = frontier.count - 1
                while c > 0 {
                    let p = (c - 1) / 2
                    guard better(frontier[c], frontier[p]) else { break }
                    frontier.swapAt(c, p)
                    c = p
                }
            }
        }
        return result
    }

    /// The handle and score in one heap slot, for O(n) passes over every entry without
    /// copying them out (`unordered` allocates).
    ///
    /// - Parameter slot: A slot in `0..<count`; slots follow heap-array order, which only
    ///   mutations change.
    /// - Returns: The entry.
    /// - Complexity: O(1).
    @inlinable
    public func entry(atSlot slot: Int) -> (handle: Int, score: Score) {
        let e = entries[slot]
        return (Int(e.handle), e.score)
    }

    /// Every (handle, score) in the heap, in heap-array order.
    ///
    /// - Complexity: O(n).
    @inlinable
    public var unordered: [(handle: Int, score: Score)] {
        entries.map { (Int($0.handle), $0.score) }
    }

    @inlinable
    mutating func removeSlot(_ slot: Int) {
        let removed = Int(entries[slot].handle)
        let last = entries.count - 1
        slots[removed] = -1
        if slot != last {
            let moved = entries[last]
            entries[slot] = moved
            slots[Int(moved.handle)] = Int32(slot)
            entries.removeLast()
            // The moved entry may belong above or below its new slot.
            _update { $0.siftUp(from: slot); $0.siftDown(from: Int($0.slots[Int(moved.handle)])) }
        } else {
            entries.removeLast()
        }
        _checkInvariants()
    }
}
