import Synchronization

/// One lock per key, taken in arrival order: requests for the same student run one at a time
/// (no lost update), different students in parallel.
final class KeyedLock: Sendable {
    private struct State {
        var held: Set<String> = []
        var waiters: [String: [CheckedContinuation<Void, Never>]] = [:]
    }

    private let state = Mutex(State())

    /// Runs `body` holding the lock of `key`, on the caller's executor (`nonisolated(nonsending)`,
    /// as the service's request path is: under `serve --executor nio` each nonisolated async call
    /// and return re-queued the request's task on its event loop).
    nonisolated(nonsending) func withLock<T>(_ key: String, _ body: nonisolated(nonsending) () async throws -> T) async throws -> T {
        await lock(key)
        defer { unlock(key) }
        return try await body()
    }

    private nonisolated(nonsending) func lock(_ key: String) async {
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
