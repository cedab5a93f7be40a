import Testing
import SwipeRankNumerics

/// `GroupedTopKSelector`, which selects each geographic band's best cards for a deck: every
/// group's result must be exactly the first `k` rows of a stable descending sort of that group's
/// scores (ties to the lower row, NaN never kept), and the counts every row of the group with a
/// number for a score (what a deck may take: NaN rows counted but never returned trapped it).
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
                #expect(counts[g] == rows.filter { !scores[$0].isNaN }.count, "seed \(seed) group \(g): the rows with a number count, NaN not")
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

    /// Scores as decks and adversaries give them: smooth, clustered near a few values with
    /// ties, one far outlier (every other score in one bin), a narrow range near a large value
    /// (bins a few ulps wide), subnormal gaps, and NaN mixed in.
    static func scores(kind: Int, n: Int, rng: inout SplitMix64) -> [Float] {
        switch kind {
        case 0: return (0..<n).map { _ in Float.random(in: -2...2, using: &rng) }
        case 1: return (0..<n).map { _ in Float(Int.random(in: 0..<7, using: &rng)) * 0.25 + (Int.random(in: 0..<3, using: &rng) == 0 ? 1e-6 : 0) }
        case 2: return (0..<n).map { i in i == n / 2 ? 1e30 : Float.random(in: 0...1, using: &rng) }
        case 3: return (0..<n).map { _ in 1_000 + Float(Int.random(in: 0..<40, using: &rng)) * Float(1_000).ulp }
        case 4: return (0..<n).map { _ in Float(Int.random(in: 0..<9, using: &rng)) * Float.leastNonzeroMagnitude }
        default: return (0..<n).map { _ in Int.random(in: 0..<50, using: &rng) == 0 ? .nan : Float.random(in: -1...1, using: &rng) }
        }
    }

    @Test("through bins and through chunks, each path alone equals the reference: smooth, tied, outlier, ulp-narrow, subnormal and NaN scores", arguments: 0..<60)
    func binsAndChunks(seed: UInt64) {
        var rng = SplitMix64(seed: 9_500 + seed)
        let n = Int.random(in: 1...(seed % 5 == 4 ? 12_000 : 2_400), using: &rng)
        let groupCount = [1, 3, 4][Int(seed % 3)], kind = Int(seed % 6)
        let k = [1, 2, 17, 58, 300, 5_000][Int(seed / 6 % 6)]
        let scores = Self.scores(kind: kind, n: n, rng: &rng)
        let groups: [Int8] = (0..<n).map { _ in Int.random(in: 0..<6, using: &rng) == 0 ? -1 : Int8(Int.random(in: 0..<groupCount, using: &rng)) }
        var byBins: [[Int]] = [], binCounts: [Int] = [], byChunks: [[Int]] = [], chunkCounts: [Int] = []
        let binned = GroupedTopKSelector.selectByBins(k: min(k, n), from: scores, groups: groups, groupCount: groupCount, into: &byBins, counts: &binCounts)
        var selector = GroupedTopKSelector()
        selector.selectByChunks(k: k, from: scores, groups: groups, groupCount: groupCount, into: &byChunks, counts: &chunkCounts)
        // Bins decline subnormal gaps (a scale past the largest Float) and, when the sample
        // caught the far outlier, more than k + 4,096 rows of a group in one bin; they take
        // every other kind once the sample has rows enough to hold two distinct scores.
        if n >= 64 && kind != 4 && (kind != 2 || n <= 4_096) { #expect(binned, "seed \(seed) kind \(kind) n \(n): selected through bins") }
        for g in 0..<groupCount {
            let rows = scores.indices.filter { groups[$0] == Int8(g) }
            let reference = Array(rows.filter { !scores[$0].isNaN }
                .sorted { scores[$0] > scores[$1] || (scores[$0] == scores[$1] && $0 < $1) }
                .prefix(k))
            if binned {
                #expect(byBins[g] == reference, "seed \(seed) kind \(kind) group \(g) n \(n) k \(k): bins")
                #expect(binCounts[g] == rows.filter { !scores[$0].isNaN }.count, "seed \(seed) group \(g): bins count the rows with a number")
            }
            #expect(byChunks[g] == reference, "seed \(seed) kind \(kind) group \(g) n \(n) k \(k): chunks")
            #expect(chunkCounts[g] == rows.filter { !scores[$0].isNaN }.count, "seed \(seed) group \(g): chunks count the rows with a number")
        }
    }

    @Test("bins take infinities, NaN and ranges past the largest Float; they decline, changing nothing, k = 0, a sample of one distinct finite value, subnormal gaps and more than k + 4,096 rows a group in the bins kept")
    func binsDecline() {
        var result: [[Int]] = [[7]], counts: [Int] = [7]
        func declines(_ scores: [Float], _ groups: [Int8], k: Int = 2) -> Bool {
            !GroupedTopKSelector.selectByBins(k: k, from: scores, groups: groups, groupCount: 2, into: &result, counts: &counts)
                && result == [[7]] && counts == [7]
        }
        #expect(declines([1, 2, 3], [0, 1, 0], k: 0))
        #expect(declines([2, 2, 2, 2], [0, 1, 1, 0]))
        #expect(declines([.nan, .nan, 1, -0.0, 0], [0, 1, -1, 0, 0]))  // ±0 are one value; row 2 is left out
        #expect(declines([0, .leastNonzeroMagnitude, 2 * .leastNonzeroMagnitude], [0, 1, 0]))
        // A far outlier in the sample (row 0) puts the other 9,999 rows in one bin: more than
        // 2 · (k + 4,096) kept.
        let crowded: [Float] = (0..<10_000).map { (row: Int) -> Float in row == 0 ? 1e30 : 1 + Float(row % 7) / 1_000 }
        #expect(declines(crowded, [Int8](repeating: 0, count: 10_000)))
        let cases: [(scores: [Float], groups: [Int8], best: [[Int]], counts: [Int])] = [
            ([1, .infinity, 3, 2, -.infinity], [0, 1, 1, 0, 0], [[3, 0], [1, 2]], [3, 2]),
            ([.nan, .nan, 1, -0.0, 0, 0.5], [0, 1, -1, 0, 0, 1], [[3, 4], [5]], [2, 1]),
            ([.infinity, 5, .greatestFiniteMagnitude, -.greatestFiniteMagnitude, 4], [-1, 0, 1, 1, 0], [[1, 4], [2, 3]], [2, 2])
        ]
        for c in cases {
            #expect(GroupedTopKSelector.selectByBins(k: 2, from: c.scores, groups: c.groups, groupCount: 2, into: &result, counts: &counts))
            #expect(result == c.best && counts == c.counts, "\(c.scores)")
        }
    }
}
