// Card pool vs swift-collections' Heap on the same workloads.
//
// - insert N then promote N: the pool's core path; target within 1.2× of Heap.
// - mixed: N cards, then rounds of 3 score updates and 1 promotion. The pool updates in
//   place; Heap has no update-key, so it uses the usual workaround (push a new entry, skip
//   stale ones on pop: lazy deletion) — shown side by side.

import Benchmark
import HeapModule
import SwipeRank
import SwipeRankNumerics

/// A Heap element ordered like the pool: higher score first, then lower id (as max).
struct Scored: Comparable {
    var score: Float
    var id: Int
    static func < (a: Scored, b: Scored) -> Bool { a.score < b.score || (a.score == b.score && a.id > b.id) }
}

func scores(_ n: Int, seed: UInt64) -> [Float] {
    var rng = SplitMix64(seed: seed)
    return (0..<n).map { _ in Float.random(in: 0..<1, using: &rng) }
}

/// Random (card, new score) pairs for the mixed workload.
func updates(_ n: Int, count: Int, seed: UInt64) -> [(Int, Float)] {
    var rng = SplitMix64(seed: seed)
    return (0..<count).map { _ in (Int.random(in: 0..<n, using: &rng), Float.random(in: 0..<1, using: &rng)) }
}

let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(
        metrics: [.wallClock, .throughput, .mallocCountTotal],
        maxDuration: .seconds(3), maxIterations: 1_000)

    for n in [10_000, 100_000] {
        let label = n == 10_000 ? "10k" : "100k"

        Benchmark("Pool insert+promote \(label)", configuration: .init(scalingFactor: .one)) { benchmark, input in
            for _ in benchmark.scaledIterations {
                var pool = CardPool<Int, Float>(capacity: n)
                for (i, s) in input.enumerated() { try pool.insert(i, score: s, timestamp: 0) }
                while let card = pool.popMax() { blackHole(card.id) }
                blackHole(pool.historyCount)
            }
        } setup: { scores(n, seed: 1) }

        Benchmark("Heap insert+popMax \(label)", configuration: .init(scalingFactor: .one)) { benchmark, input in
            for _ in benchmark.scaledIterations {
                var heap = Heap<Scored>()
                heap.reserveCapacity(n)
                var history: [Int] = []
                history.reserveCapacity(n)
                for (i, s) in input.enumerated() { heap.insert(Scored(score: s, id: i)) }
                while let top = heap.popMax() { history.append(top.id) }
                blackHole(history.count)
            }
        } setup: { scores(n, seed: 1) }

        Benchmark("Pool mixed update/promote \(label)", configuration: .init(scalingFactor: .one)) { benchmark, input in
            let (initial, changes) = input
            for _ in benchmark.scaledIterations {
                var pool = CardPool<Int, Float>(capacity: n)
                for (i, s) in initial.enumerated() { try pool.insert(i, score: s, timestamp: 0) }
                var t: Int64 = 1
                for (k, (id, s)) in changes.enumerated() {
                    try pool.update(id, score: s, timestamp: t)
                    t += 1
                    if k % 3 == 2 { blackHole(pool.popMax()?.id) }
                }
                blackHole(pool.count)
            }
        } setup: { (scores(n, seed: 2), updates(n, count: n, seed: 3)) }

        Benchmark("Heap mixed lazy-deletion \(label)", configuration: .init(scalingFactor: .one)) { benchmark, input in
            let (initial, changes) = input
            for _ in benchmark.scaledIterations {
                var heap = Heap<Scored>()
                var current = initial
                var seen = [Bool](repeating: false, count: n)
                for (i, s) in initial.enumerated() { heap.insert(Scored(score: s, id: i)) }
                for (k, (id, s)) in changes.enumerated() {
                    if !seen[id] { current[id] = s; heap.insert(Scored(score: s, id: id)) }
                    if k % 3 == 2 {
                        while let top = heap.popMax() {
                            guard !seen[top.id], top.score == current[top.id] else { continue }
                            seen[top.id] = true
                            blackHole(top.id)
                            break
                        }
                    }
                }
                blackHole(heap.count)
            }
        } setup: { (scores(n, seed: 2), updates(n, count: n, seed: 3)) }
    }
}
