// Pool vs Heap on one fixed workload, for instruction counts under callgrind:
//   swiperank-poolprofile pool|heap N
import HeapModule
import SwipeRank
import SwipeRankNumerics

struct Scored: Comparable {
    var score: Float
    var id: Int
    static func < (a: Scored, b: Scored) -> Bool { a.score < b.score || (a.score == b.score && a.id > b.id) }
}
let mode = CommandLine.arguments[1], n = Int(CommandLine.arguments[2])!
var rng = SplitMix64(seed: 1)
let scores = (0..<n).map { _ in Float.random(in: 0..<1, using: &rng) }
var check = 0
if mode == "pool" {
    var pool = CardPool<Int, Float>(capacity: n)
    for (i, s) in scores.enumerated() { try pool.insert(i, score: s, timestamp: 0) }
    while let card = pool.popMax() { check &+= card.id }
} else {
    var heap = Heap<Scored>()
    heap.reserveCapacity(n)
    var history: [Int] = []
    history.reserveCapacity(n)
    for (i, s) in scores.enumerated() { heap.insert(Scored(score: s, id: i)) }
    while let top = heap.popMax() { history.append(top.id); check &+= top.id }
}
print(check)
