import Foundation
import Testing
@testable import SwipeRank
import SwipeRankNumerics

/// `PoolSelection`, the bounded heap a deck selects each band's best cards with: it must give
/// exactly the first `capacity` rows of a stable descending sort (ties to the lower row, NaN
/// never kept), as `TopKSelector` did before it.
@Suite("Pool selection")
struct PoolSelectionTests {
    @Test("equals a stable descending sort's first rows and TopKSelector, with ties, NaN and infinities",
          arguments: 0..<60)
    func againstReference(seed: UInt64) {
        var rng = SplitMix64(seed: 7_000 + seed)
        let n = Int.random(in: 0...400, using: &rng)
        let capacity = [0, 1, 2, 5, 17, 68, 500][Int(seed % 7)]
        // Few distinct values in half the seeds, so ties are common.
        let palette: [Float] = [-.infinity, -1, 0, 0.5, 1, 2, .infinity, .nan]
        let scores: [Float] = (0..<n).map { _ in
            seed % 2 == 0 ? palette[Int.random(in: 0..<palette.count, using: &rng)] : Float.random(in: -3...3, using: &rng)
        }
        var selection = PoolSelection(capacity: capacity)
        for (row, score) in scores.enumerated() { selection.offer(score: score, row: row) }
        let reference = scores.indices.filter { !scores[$0].isNaN }
            .sorted { scores[$0] > scores[$1] || (scores[$0] == scores[$1] && $0 < $1) }
            .prefix(capacity)
        #expect(selection.rowsBestFirst() == Array(reference), "seed \(seed) n \(n) capacity \(capacity)")
        var selector = TopKSelector()
        var top: [Int] = []
        selector.select(k: min(capacity, n), from: scores, into: &top)
        #expect(selection.rowsBestFirst() == top, "seed \(seed): the selector the pools used before")
    }
}
