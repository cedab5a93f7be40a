import Testing
import SwipeRankNumerics

/// `GroupedTopKSelector`, which selects each geographic band's best cards for a deck: every
/// group's result must be exactly the first `k` rows of a stable descending sort of that group's
/// scores (ties to the lower row, NaN never kept), and the counts every row of the group.
@Suite("Grouped top-k")
struct GroupedTopKTests {
    @Test("equals a stable descending sort per group, with ties, NaN, infinities and rows left out", arguments: 0..<80)
    func againstReference(seed: UInt64) {
        var rng = SplitMix64(seed: 9_000 + seed)
        let n = Int.random(in: 0...(seed % 4 == 3 ? 3_000 : seed % 8 == 5 ? 14_000 : 600), using: &rng)  // past several 4,096-row chunks
        let groupCount = [1, 3, 5][Int(seed % 3)]
        let k = [0, 1, 2, 5, 17, 58, 68, 700][Int(seed % 8)]
        // Few distinct values in half the seeds, so ties are common.
        let palette: [Float] = [-.infinity, -1, 0, 0.5, 1, 2, .infinity, .nan]
        var scores: [Float] = (0..<n).map { _ in
            seed % 2 == 0 ? palette[Int.random(in: 0..<palette.count, using: &rng)] : Float.random(in: -3...3, using: &rng)
        }
        // Sorted ascending in a fifth of the seeds: every row beats the kept ones, so the
        // buffers fill and compact as often as they can; descending in another fifth (almost
        // nothing enters after the first 2k).
        if seed % 5 == 1 { scores.sort { $0 < $1 || ($1.isNaN && !$0.isNaN) } }
        if seed % 5 == 2 { scores.sort { $0 > $1 || ($1.isNaN && !$0.isNaN) } }
        // About one row in six is left out (served or taken).
        let groups: [Int8] = (0..<n).map { _ in Int.random(in: 0..<6, using: &rng) == 0 ? -1 : Int8(Int.random(in: 0..<groupCount, using: &rng)) }
        var selector = GroupedTopKSelector()
        var best: [[Int]] = []
        var counts: [Int] = []
        // Twice with one selector: reused buffers must not leak between calls.
        for _ in 0..<2 {
            selector.select(k: k, from: scores, groups: groups, groupCount: groupCount, into: &best, counts: &counts)
            #expect(best.count == groupCount && counts.count == groupCount, "seed \(seed)")
            for g in 0..<groupCount {
                let rows = scores.indices.filter { groups[$0] == Int8(g) }
                let reference = rows.filter { !scores[$0].isNaN }
                    .sorted { scores[$0] > scores[$1] || (scores[$0] == scores[$1] && $0 < $1) }
                    .prefix(k)
                #expect(best[g] == Array(reference), "seed \(seed) group \(g) n \(n) k \(k)")
                #expect(counts[g] == rows.count, "seed \(seed) group \(g): every row of the group counts, NaN included")
            }
        }
    }

    @Test("no groups, no rows")
    func empty() {
        var selector = GroupedTopKSelector()
        var best: [[Int]] = [[1]]
        var counts: [Int] = [1]
        selector.select(k: 3, from: [], groups: [], groupCount: 0, into: &best, counts: &counts)
        #expect(best.isEmpty && counts.isEmpty)
        selector.select(k: 3, from: [], groups: [], groupCount: 2, into: &best, counts: &counts)
        #expect(best == [[], []] && counts == [0, 0])
    }
}
