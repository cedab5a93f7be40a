import Synchronization

/// A bounded least-recently-used map: the live sessions kept in memory.
///
/// The store is the truth; an entry is only a cache of what the store rebuilds, so evicting
/// one costs a rebuild, never data.
final class LRUCache<Value: Sendable>: Sendable {
    private struct State {
        var index: [String: Int] = [:]
        var keys: [String] = []
        var values: [Value?] = []
        var prev: [Int] = []
        var next: [Int] = []
        var head = -1  // most recent
        var tail = -1  // least recent
        var free: [Int] = []
    }

    private let state: Mutex<State>
    /// The most entries kept.
    let capacity: Int

    init(capacity: Int) {
        precondition(capacity >= 1, "cache capacity must be at least 1")
        self.capacity = capacity
        state = Mutex(State())
    }

    /// Removes and returns the entry (the caller puts it back when done).
    /// - Complexity: O(1).
    func take(_ key: String) -> Value? {
        state.withLock { s in
            guard let i = s.index.removeValue(forKey: key) else { return nil }
            Self.unlink(i, &s)
            let value = s.values[i]
            s.values[i] = nil
            s.free.append(i)
            return value
        }
    }

    /// Inserts or replaces the entry as the most recent, evicting the least recent when full.
    /// - Complexity: O(1).
    func put(_ key: String, _ value: Value) {
        state.withLock { s in
            if let i = s.index[key] {
                s.values[i] = value
                Self.unlink(i, &s)
                Self.pushFront(i, &s)
                return
            }
            if s.index.count >= capacity, s.tail >= 0 {
                let victim = s.tail
                Self.unlink(victim, &s)
                s.index[s.keys[victim]] = nil
                s.values[victim] = nil
                s.free.append(victim)
            }
            let i: Int
            if let reused = s.free.popLast() {
                i = reused
                s.keys[i] = key
                s.values[i] = value
            } else {
                i = s.keys.count
                s.keys.append(key)
                s.values.append(value)
                s.prev.append(-1)
                s.next.append(-1)
            }
            s.index[key] = i
            Self.pushFront(i, &s)
        }
    }

    /// Drops the entry.
    func remove(_ key: String) { _ = take(key) }

    /// Whether the key has an entry (without touching its recency).
    func contains(_ key: String) -> Bool { state.withLock { $0.index[key] != nil } }

    /// Entries held.
    var count: Int { state.withLock { $0.index.count } }

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

/// One lock per key, taken in arrival order: requests for the same student run one at a time
/// (no lost update), different students in parallel.
final class KeyedLock: Sendable {
    private struct State {
        var held: Set<String> = []
        var waiters: [String: [CheckedContinuation<Void, Never>]] = [:]
    }

    private let state = Mutex(State())

    /// Runs `body` holding the lock of `key`.
    func withLock<T>(_ key: String, _ body: () async throws -> T) async throws -> T {
        await lock(key)
        defer { unlock(key) }
        return try await body()
    }

    private func lock(_ key: String) async {
        let acquired = state.withLock { s in s.held.insert(key).inserted }
        if acquired { return }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let now = state.withLock { s -> Bool in
                // The holder may have left between the two critical sections.
                if s.held.insert(key).inserted { return true }
                s.waiters[key, default: []].append(continuation)
                return false
            }
            if now { continuation.resume() }
        }
    }

    private func unlock(_ key: String) {
        let next = state.withLock { s -> CheckedContinuation<Void, Never>? in
            if var queue = s.waiters[key], !queue.isEmpty {
                let first = queue.removeFirst()
                s.waiters[key] = queue.isEmpty ? nil : queue
                return first  // ownership passes on: `held` keeps the key
            }
            s.held.remove(key)
            return nil
        }
        next?.resume()
    }
}
