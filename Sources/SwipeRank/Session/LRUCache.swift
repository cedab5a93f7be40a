import Synchronization

/// A bounded least-recently-used map, safe to share between threads.
///
/// Each entry has a cost (1 unless told: a count bound; bytes for a memory bound); the least
/// recently used entries leave while the total is over `capacity`, but the newest entry always
/// stays, whatever its cost. The server keeps its live sessions in one, and `SwipeEngine` its
/// resolved students: in both the entry is only a cache of what can be rebuilt (from the store,
/// from the profile), so evicting one costs a rebuild, never data.
package final class LRUCache<Key: Hashable & Sendable, Value: Sendable>: Sendable {
    private struct State {
        var index: [Key: Int] = [:]
        var keys: [Key?] = []
        var values: [Value?] = []
        var costs: [Int] = []
        var prev: [Int] = []
        var next: [Int] = []
        var head = -1  // most recent
        var tail = -1  // least recent
        var free: [Int] = []
        var total = 0
    }

    private let state: Mutex<State>
    /// The largest total cost kept.
    package let capacity: Int

    /// Creates an empty cache.
    ///
    /// - Parameter capacity: The largest total cost kept, ≥ 1.
    package init(capacity: Int) {
        precondition(capacity >= 1, "cache capacity must be at least 1")
        self.capacity = capacity
        state = Mutex(State())
    }

    /// The entry, made the most recent.
    /// - Complexity: O(1).
    package func get(_ key: Key) -> Value? {
        state.withLock { s in
            guard let i = s.index[key] else { return nil }
            Self.unlink(i, &s)
            Self.pushFront(i, &s)
            return s.values[i]
        }
    }

    /// Removes and returns the entry (the caller puts it back when done).
    /// - Complexity: O(1).
    package func take(_ key: Key) -> Value? {
        state.withLock { s in
            guard let i = s.index[key] else { return nil }
            return Self.release(i, &s)
        }
    }

    /// Inserts or replaces the entry as the most recent, then evicts the least recent entries
    /// while the total cost is over `capacity` (never the entry just put).
    ///
    /// - Parameters:
    ///   - key: The key.
    ///   - value: The value.
    ///   - cost: Its cost, ≥ 0.
    /// - Complexity: O(1) amortized (each eviction O(1)).
    package func put(_ key: Key, _ value: consuming Value, cost: Int = 1) {
        precondition(cost >= 0, "an entry's cost is at least 0")
        // Moved in, not copied: a live session is a struct of dozens of references, and copying
        // it retains each (a few percent of a swipe's CPU in the service, by `perf`).
        var pending: Value? = consume value
        state.withLock { s in
            let i: Int
            if let existing = s.index[key] {
                i = existing
                Self.unlink(i, &s)
                s.total -= s.costs[i]
                s.values[i] = pending.take()
                s.costs[i] = cost
            } else if let reused = s.free.popLast() {
                i = reused
                s.keys[i] = key
                s.values[i] = pending.take()
                s.costs[i] = cost
            } else {
                i = s.keys.count
                s.keys.append(key)
                s.values.append(pending.take())
                s.costs.append(cost)
                s.prev.append(-1)
                s.next.append(-1)
            }
            s.index[key] = i
            s.total += cost
            Self.pushFront(i, &s)
            while s.total > capacity, s.tail >= 0, s.tail != i { _ = Self.release(s.tail, &s) }
        }
    }

    /// Drops the entry.
    package func remove(_ key: Key) { _ = take(key) }

    /// Whether the key has an entry (without touching its recency).
    package func contains(_ key: Key) -> Bool { state.withLock { $0.index[key] != nil } }

    /// Entries held.
    package var count: Int { state.withLock { $0.index.count } }

    /// The total cost of the entries held.
    package var totalCost: Int { state.withLock { $0.total } }

    /// The keys from most to least recent (for tests and invariant checks).
    package var keysByRecency: [Key] {
        state.withLock { s in
            var keys: [Key] = []
            var i = s.head
            while i >= 0 { keys.append(s.keys[i]!); i = s.next[i] }
            return keys
        }
    }

    private static func release(_ i: Int, _ s: inout State) -> Value? {
        unlink(i, &s)
        s.index[s.keys[i]!] = nil
        let value = s.values[i].take()  // moved out: no copy of the value
        s.keys[i] = nil
        s.total -= s.costs[i]
        s.costs[i] = 0
        s.free.append(i)
        return value
    }

    private static func unlink(_ i: Int, _ s: inout State) {
        let p = s.prev[i], n = s.next[i]
        if p >= 0 { s.next[p] = n } else if s.head == i { s.head = n }
        if n >= 0 { s.prev[n] = p } else if s.tail == i { s.tail = p }
        s.prev[i] = -1
        s.next[i] = -1
    }

    private static func pushFront(_ i: Int, _ s: inout State) {
        s.prev[i] = -1
        s.next[i] = s.head
        if s.head >= 0 { s.prev[s.head] = i }
        s.head = i
        if s.tail < 0 { s.tail = i }
    }
}
