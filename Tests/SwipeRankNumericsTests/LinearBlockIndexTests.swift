import Testing
@testable import SwipeRankNumerics

/// `LinearBlockIndex.search`, the exact top-k of large catalogs' decks: whatever the weights,
/// constants, offsets, bonus and rows left out, the list it fills must equal a brute-force
/// pass scoring every admitted row with the same operations (scores bit for bit, ties to the
/// lower row).
@Suite("Linear block index")
struct LinearBlockIndexTests {
    /// The brute-force reference: every accepted row scored in the index's documented order.
    static func reference(_ x: Matrix, weights: [Float], constants: [Float], offsets: [Float]?,
                          bonus: (amount: Float, codes: [Int32], eligible: [Bool])?, seeded: [(Float, Int)],
                          k: Int, accept: (Int) -> Bool) -> [(Float, Int)] {
        var all = seeded
        for row in 0..<x.rows where accept(row) {
            var s: Float = 0
            for j in 0..<x.columns where weights[j] != 0 { s = s + weights[j] * x[row, j] }
            for c in constants { s = s + c }
            if let offsets { s = s + offsets[row] }
            if let bonus, bonus.eligible[Int(bonus.codes[row])] { s = s + bonus.amount }
            all.append((s, row))
        }
        all.sort { $0.0 > $1.0 || ($0.0 == $1.0 && $0.1 < $1.1) }
        return Array(all.prefix(k))
    }

    /// The construction the index documents, written the slow way: split each range wider than
    /// a block at the median of its widest column by sorting it on (value, row), leaves in
    /// ascending rows.
    static func referenceOrder(_ x: Matrix, blockSize: Int) -> [Int32] {
        let (n, d) = (x.rows, x.columns)
        var order = Array(0..<n)
        var stack: [Range<Int>] = n > 0 ? [0..<n] : []
        while let range = stack.popLast() {
            var widest = -1
            var spread: Float = 0
            if range.count > blockSize {
                for c in 0..<d {
                    let column = range.map { x[order[$0], c] }
                    if column.max()! - column.min()! > spread { spread = column.max()! - column.min()!; widest = c }
                }
            }
            guard widest >= 0 else {
                order[range].sort()
                continue
            }
            order[range].sort { (x[$0, widest], $0) < (x[$1, widest], $1) }
            let middle = range.lowerBound + range.count / 2
            stack.append(middle..<range.upperBound)
            stack.append(range.lowerBound..<middle)
        }
        return order.map(Int32.init)
    }

    @Test("the construction equals sorting each range at its median (60 seeded matrices: ties, constant columns, odd sizes)",
          arguments: 0..<60)
    func construction(seed: UInt64) {
        var rng = SplitMix64(seed: 7_700 + seed)
        let n = [0, 1, 7, 257, 1_000, 5_003][Int(seed % 6)]
        let d = Int.random(in: 1...9, using: &rng)
        let blockSize = [1, 3, 16, 64][Int(seed / 6 % 4)]
        let palette: [Float] = [-1, 0, 0.5, 2]
        let values = (0..<(n * d)).map { i -> Float in
            if i % d == 0 && seed % 3 == 0 { return 1 }  // a constant column
            return seed % 2 == 0 ? palette[Int.random(in: 0..<palette.count, using: &rng)] : Float.random(in: -3...3, using: &rng)
        }
        let x = Matrix(rows: n, columns: d, elements: values)
        let index = LinearBlockIndex(features: x, blockSize: blockSize)
        #expect(index.rowAtPosition == Self.referenceOrder(x, blockSize: blockSize), "n \(n) d \(d) block \(blockSize)")
    }

    @Test("equals brute force: ties, negative and zero weights, equal columns, offsets, bonus, exclusions", arguments: 0..<240)
    func againstBruteForce(seed: UInt64) {
        var rng = SplitMix64(seed: 31_000 + seed)
        let n = [0, 1, 5, 300, 2_000, 4_000][Int(seed % 6)]
        let d = Int.random(in: 1...12, using: &rng)
        // Half the seeds draw from a few values per column (one-hot-like, ties everywhere);
        // one column in four is constant.
        let palette: [Float] = [-1.5, 0, 0.25, 1, 2]
        let constantColumn = (0..<d).map { _ in Int.random(in: 0..<4, using: &rng) == 0 }
        var values: [Float] = []
        for _ in 0..<n {
            for j in 0..<d {
                if constantColumn[j] { values.append(0.5) } else if seed % 2 == 0 {
                    values.append(palette[Int.random(in: 0..<palette.count, using: &rng)])
                } else {
                    values.append(Float.random(in: -3...3, using: &rng))
                }
            }
        }
        let x = Matrix(rows: n, columns: d, elements: values)
        let blockSize = [1, 7, 32, 256][Int(seed / 6 % 4)]
        let split = LinearBlockIndex(features: x, blockSize: blockSize)
        #expect(LinearBlockIndex.layout(features: x, blockSize: blockSize) == split.layout, "the layout alone is the index's")
        let index: LinearBlockIndex
        switch seed % 4 {
        case 1:
            // Rebuilt from the split's layout (what a catalog cache stores): the same layout.
            index = LinearBlockIndex(features: x, layout: split.layout)
            #expect(index.layout == split.layout && index.blockCount == split.blockCount)
        case 3:
            // Any valid layout: consecutive rows in blocks of random sizes. A search is exact
            // whatever the grouping (only the blocks it visits change).
            var starts = [0]
            while starts.last! < n { starts.append(min(n, starts.last! + Int.random(in: 1...40, using: &rng))) }
            index = LinearBlockIndex(features: x, layout: .init(rowAtPosition: (0..<n).map(Int32.init), blockStarts: starts))
        default:
            index = split
        }
        #expect(Set(index.rowAtPosition.map(Int.init)) == Set(0..<n) && index.rowAtPosition.count == n)
        let offsetsPerRow: [Float]? = seed % 3 == 0 ? (0..<n).map { _ in Float(Int.random(in: -2...2, using: &rng)) / 4 } : nil
        let offsets = offsetsPerRow.map { index.column($0) }
        let codesPerRow: [Int32] = (0..<n).map { _ in Int32.random(in: 0..<4, using: &rng) }
        let codes = index.codes(codesPerRow)
        // Many weight vectors per index.
        for trial in 0..<6 {
            let weights: [Float] = (0..<d).map { _ in
                switch Int.random(in: 0..<5, using: &rng) {
                case 0: 0
                case 1: Float(Int.random(in: -2...2, using: &rng))
                default: Float.random(in: -2...2, using: &rng)
                }
            }
            let constants: [Float] = trial % 2 == 0 ? [] : [Float.random(in: -1...1, using: &rng)]
            let eligible = (0..<4).map { _ in Bool.random(using: &rng) }
            let bonusAmount: Float = [0.75, -0.5, 0][trial % 3]
            let excluded = Set((0..<(n / 5)).map { _ in Int.random(in: 0..<max(1, n), using: &rng) })
            let k = [0, 1, 3, 10, 40, 5_000][Int.random(in: 0..<6, using: &rng)]
            // Sometimes the list already holds rows found elsewhere (a deck's near rows), with
            // scores that tie the far rows'.
            let seededRows = Array(excluded.sorted().prefix(trial % 3 == 0 ? 5 : 0))
            let seeded: [(Float, Int)] = seededRows.map { (Float(Int.random(in: -4...4, using: &rng)) / 2, $0) }
            var kept = BoundedTopList(capacity: k)
            for (s, row) in seeded { kept.insert(score: s, row: row) }
            let bonus = (amount: bonusAmount, codes: codes, eligible: eligible)
            index.search(weights: weights, constants: constants, offsets: offsets, bonus: bonus, into: &kept) { !excluded.contains($0) }
            let expected = Self.reference(x, weights: weights, constants: constants, offsets: offsetsPerRow,
                                          bonus: (bonusAmount, codesPerRow, eligible), seeded: seeded, k: k) { !excluded.contains($0) }
            #expect(kept.rows == expected.map(\.1), "seed \(seed) trial \(trial) n \(n) d \(d) k \(k)")
            #expect(kept.scores.map(\.bitPattern) == expected.map(\.0.bitPattern), "seed \(seed) trial \(trial): scores bit for bit")
        }
    }

    @Test("a layout is checked: positions, permutation, ascending blocks, starts from 0 to N")
    func layoutProblems() {
        typealias Layout = LinearBlockIndex.Layout
        let x = Matrix(rows: 6, columns: 2, elements: (0..<12).map(Float.init))
        #expect(LinearBlockIndex(features: x, blockSize: 2).layout.problem(rowCount: 6) == nil)
        #expect(Layout(rowAtPosition: [0, 1, 2, 3, 4, 5], blockStarts: [0, 6]).problem(rowCount: 6) == nil)
        #expect(Layout(rowAtPosition: [], blockStarts: [0]).problem(rowCount: 0) == nil)
        let bad: [(Layout, String)] = [
            (Layout(rowAtPosition: [0, 1, 2, 3, 4], blockStarts: [0, 5]), "positions for"),
            (Layout(rowAtPosition: [0, 1, 2, 3, 4, 4], blockStarts: [0, 3, 6]), "twice"),
            (Layout(rowAtPosition: [0, 1, 2, 3, 4, 9], blockStarts: [0, 3, 6]), "not a row"),
            (Layout(rowAtPosition: [0, 1, 2, 3, 4, -1], blockStarts: [0, 3, 6]), "not a row"),
            (Layout(rowAtPosition: [0, 2, 1, 3, 4, 5], blockStarts: [0, 3, 6]), "not ascending"),
            (Layout(rowAtPosition: [0, 1, 2, 3, 4, 5], blockStarts: [0, 3, 3, 6]), "empty or out of order"),
            (Layout(rowAtPosition: [0, 1, 2, 3, 4, 5], blockStarts: [1, 6]), "from 0 to 6"),
            (Layout(rowAtPosition: [0, 1, 2, 3, 4, 5], blockStarts: [0, 5]), "from 0 to 6"),
            (Layout(rowAtPosition: [0, 1, 2, 3, 4, 5], blockStarts: [0]), "from 0 to 6"),
        ]
        for (layout, expected) in bad {
            let problem = layout.problem(rowCount: 6)
            #expect(problem?.contains(expected) == true, "\(layout): \(problem ?? "no problem found")")
        }
    }

    @Test("a row's dot product is the in-order scan's, bit for bit", arguments: 0..<20)
    func dotMatchesScan(seed: UInt64) {
        var rng = SplitMix64(seed: 32_000 + seed)
        let n = Int.random(in: 1...100, using: &rng), d = Int.random(in: 1...40, using: &rng)
        let x = Matrix(rows: n, columns: d, elements: (0..<(n * d)).map { _ in Float.random(in: -3...3, using: &rng) })
        let w: [Float] = (0..<d).map { _ in Bool.random(using: &rng) ? 0 : Float.random(in: -2...2, using: &rng) }
        var scan: [Float] = []
        x.transposed.multiplyTransposedInOrder(w, into: &scan)
        for row in 0..<n { #expect(LinearBlockIndex.dot(x, row: row, w).bitPattern == scan[row].bitPattern) }
    }

    @Test("the search's block heap pops in the sorted order: bound down, first row up among equal bounds", arguments: 0..<40)
    func blockHeapOrder(seed: UInt64) {
        var rng = SplitMix64(seed: 33_000 + seed)
        let n = seed < 3 ? Int(seed) : Int.random(in: 1...300, using: &rng)
        // Few distinct bounds (ties everywhere) for half the seeds, and -0.0 beside 0.0.
        let values: [Float] = seed % 2 == 0 ? [-1, -0.0, 0, 0.5, 2] : (0..<50).map { _ in Float.random(in: -5...5, using: &rng) }
        let bounds = (0..<n).map { _ in values.randomElement(using: &rng)! }
        let firstRows = (0..<Int32(n)).map { $0 * 3 }.shuffled(using: &rng)
        let expected = (0..<n).sorted { a, b in
            bounds[a] > bounds[b] || (bounds[a] == bounds[b] && firstRows[a] < firstRows[b])
        }
        var heap = BlockHeap(bounds: bounds, firstRows: firstRows)
        var popped: [Int] = []
        while let b = heap.pop() { popped.append(b) }
        #expect(popped == expected)
    }

    @Test("the search visits few blocks when the weights single out a corner")
    func prunes() {
        var rng = SplitMix64(seed: 33)
        let n = 20_000, d = 6
        let x = Matrix(rows: n, columns: d, elements: (0..<(n * d)).map { _ in Float.random(in: -3...3, using: &rng) })
        let index = LinearBlockIndex(features: x)
        var kept = BoundedTopList(capacity: 20)
        let scanned = index.search(weights: [1, 0.5, 0, 0, 0, 0], constants: [], offsets: nil, bonus: nil, into: &kept) { _ in true }
        #expect(kept.rows.count == 20)
        #expect(scanned < index.blockCount / 4, "scanned \(scanned) of \(index.blockCount) blocks")
    }
}
