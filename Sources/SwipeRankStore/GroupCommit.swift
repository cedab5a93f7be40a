import Synchronization

/// Group commit: callers submit work and wait; one drain task at a time takes everything
/// waiting (up to `maxBatch`) and runs it in one call of `run`, which answers each item.
/// While a batch runs, new submissions queue for the next one, so the batch size follows
/// the load: one item when idle, many when busy, never a timer's wait. An item never joins a
/// batch already running, so a read made by a batch happens after its item was submitted.
package final class GroupCommit<Item: Sendable, Outcome: Sendable>: Sendable {
    private struct Waiting: Sendable {
        var item: Item
        var continuation: CheckedContinuation<Outcome, Never>
    }

    private struct State: Sendable {
        var queue: [Waiting] = []
        var draining = false
    }

    private let state = Mutex(State())
    private let maxBatch: Int
    private let run: @Sendable ([Item]) async -> [Outcome]

    /// - Parameters:
    ///   - maxBatch: The most items in one call of `run`.
    ///   - run: Runs a batch; returns one outcome per item, in order.
    package init(maxBatch: Int, run: @escaping @Sendable ([Item]) async -> [Outcome]) {
        precondition(maxBatch >= 1)
        self.maxBatch = maxBatch
        self.run = run
    }

    /// Queues `item` and waits for its outcome.
    package func submit(_ item: Item) async -> Outcome {
        await withCheckedContinuation { continuation in
            let start = state.withLock { state -> Bool in
                state.queue.append(Waiting(item: item, continuation: continuation))
                guard !state.draining else { return false }
                state.draining = true
                return true
            }
            if start { Task { await self.drain() } }
        }
    }

    /// How many items wait for the next batch (tests: to know a submission is queued).
    package var waitingCount: Int { state.withLock { $0.queue.count } }

    private func drain() async {
        while true {
            let batch = state.withLock { state -> [Waiting] in
                guard !state.queue.isEmpty else {
                    state.draining = false
                    return []
                }
                let batch = Array(state.queue.prefix(maxBatch))
                state.queue.removeFirst(batch.count)
                return batch
            }
            guard !batch.isEmpty else { return }
            let outcomes = await run(batch.map(\.item))
            precondition(outcomes.count == batch.count, "a batch must answer every item")
            for (waiting, outcome) in zip(batch, outcomes) { waiting.continuation.resume(returning: outcome) }
        }
    }
}
