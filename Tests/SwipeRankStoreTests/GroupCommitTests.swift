import Testing
import SwipeRankStore

/// `GroupCommit` — the SQLite store's group commit and the PostgreSQL store's coalesced version
/// checks — driven step by step through a batch that answers only when the test says so: which
/// items go in which batch, that an item never joins a batch already running (a version check's
/// answer must be read after it was asked), and that a failed batch fails its items and nothing else.
@Suite("Group commit")
struct GroupCommitTests {
    /// The fetch under the test's control: records each batch and waits for its answer.
    actor Gate {
        private(set) var batches: [[String]] = []
        private var pending: [Int: CheckedContinuation<[String: Int], any Error>] = [:]

        func enter(_ keys: [String]) async throws -> [String: Int] {
            let index = batches.count
            batches.append(keys)
            return try await withCheckedThrowingContinuation { pending[index] = $0 }
        }

        func answer(_ index: Int, _ result: Result<[String: Int], any Error>) {
            pending.removeValue(forKey: index)!.resume(with: result)
        }

        func isPending(_ index: Int) -> Bool { pending[index] != nil }
    }

    struct Failure: Error, Equatable {}

    /// Keyed lookups as the PostgreSQL store batches its version checks: each batch answers
    /// its distinct keys with one `fetch`, and a failed fetch fails every item of the batch.
    static func lookups(maxBatch: Int, fetch: @escaping @Sendable ([String]) async throws -> [String: Int])
        -> GroupCommit<String, Result<Int?, any Error>> {
        GroupCommit(maxBatch: maxBatch) { keys in
            var distinct: [String] = []
            for key in keys where !distinct.contains(key) { distinct.append(key) }
            do {
                let found = try await fetch(distinct)
                return keys.map { .success(found[$0]) }
            } catch {
                return keys.map { _ in .failure(error) }
            }
        }
    }

    /// Yields until `condition` holds (no clock: a bounded number of scheduler turns).
    static func until(_ condition: () async -> Bool) async throws {
        for _ in 0..<1_000_000 {
            if await condition() { return }
            await Task.yield()
        }
        Issue.record("condition never held")
        throw Failure()
    }

    @Test("items submitted during a batch go in the next one, never in the one running")
    func batching() async throws {
        let gate = Gate()
        let lookups = Self.lookups(maxBatch: 3) { try await gate.enter($0) }
        let first = Task { try await lookups.submit("a").get() }
        try await Self.until { await gate.isPending(0) }
        #expect(await gate.batches == [["a"]])
        // Submitted while batch 0 runs: "a" again, "b", "a" once more, then "c" and "d" (over
        // the batch bound of 3 items).
        var later: [Task<Int?, any Error>] = []
        for (n, key) in ["a", "b", "a", "c", "d"].enumerated() {
            later.append(Task { try await lookups.submit(key).get() })
            try await Self.until { lookups.waitingCount == n + 1 }
        }
        await gate.answer(0, .success(["a": 1]))
        #expect(try await first.value == 1)
        try await Self.until { await gate.isPending(1) }
        #expect(await gate.batches[1] == ["a", "b"])  // the first 3 items, in the order submitted; "a" asked once
        await gate.answer(1, .success(["a": 2]))       // "b" does not exist
        #expect(try await later[0].value == 2)         // not batch 0's 1: submitted after it started
        #expect(try await later[1].value == nil)
        #expect(try await later[2].value == 2)
        try await Self.until { await gate.isPending(2) }
        #expect(await gate.batches[2] == ["c", "d"])
        await gate.answer(2, .failure(Failure()))
        for task in later[3...] {
            await #expect(throws: Failure.self) { try await task.value }
        }
        // Idle again: the next item goes out at once, alone, and a failure did not stick.
        let again = Task { try await lookups.submit("c").get() }
        try await Self.until { await gate.isPending(3) }
        #expect(await gate.batches[3] == ["c"])
        await gate.answer(3, .success(["c": 7]))
        #expect(try await again.value == 7)
        #expect(lookups.waitingCount == 0)
    }

    @Test("many concurrent items: each in exactly one batch of at most the bound, answered with its own outcome",
          arguments: [1, 3, 64])
    func concurrent(maxBatch: Int) async throws {
        // The batches GroupCommit itself forms, whatever the interleaving: every item submitted
        // is run exactly once, no batch exceeds the bound, and each caller gets the outcome
        // `run` gave its own item (not a neighbour's: outcomes are matched by position).
        let seen = BatchLog()
        let commit = GroupCommit<Int, Int>(maxBatch: maxBatch) { items in
            await seen.add(items)
            return items.map { $0 * 10 + 1 }
        }
        let results = await withTaskGroup(of: (Int, Int).self) { group in
            for i in 0..<400 { group.addTask { (i, await commit.submit(i)) } }
            var out: [Int: Int] = [:]
            for await (i, value) in group { out[i] = value }
            return out
        }
        #expect(results == Dictionary(uniqueKeysWithValues: (0..<400).map { ($0, $0 * 10 + 1) }))
        let batches = await seen.batches
        #expect(batches.allSatisfy { !$0.isEmpty && $0.count <= maxBatch })
        #expect(batches.flatMap { $0 }.sorted() == Array(0..<400))
        #expect(commit.waitingCount == 0)
    }

    actor BatchLog {
        private(set) var batches: [[Int]] = []
        func add(_ items: [Int]) { batches.append(items) }
    }
}
