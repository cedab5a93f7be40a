import Testing
import SwipeRankNumerics

/// `FeatureRows`, the one copy of a large catalog's features: read through a permutation, every
/// row must equal the row-major matrix's, and every product over a row must be bit-identical
/// to the row-major one (a card's score, a swipe's learning vector).
@Suite("Feature rows")
struct FeatureRowsTests {
    @Test("a permuted store reads every row as the row-major matrix does (60 seeded matrices and permutations)")
    func permutedEqualsRowMajor() {
        var rng = SplitMix64(seed: 11)
        for trial in 0..<60 {
            let n = trial < 3 ? trial : Int.random(in: 1...300, using: &rng)
            let d = Int.random(in: 1...9, using: &rng)
            var x = Matrix(rows: n, columns: d)
            for r in 0..<n { for j in 0..<d { x[r, j] = Float.random(in: -3...3, using: &rng) } }
            let rowAtPosition = (0..<n).map { Int32($0) }.shuffled(using: &rng)
            let values = rowAtPosition.flatMap { x.row(Int($0)) }
            let rows = FeatureRows(permuted: values, columns: d, rowAtPosition: rowAtPosition)
            let plain = FeatureRows(x)
            #expect(!rows.isRowOrder && plain.isRowOrder)
            #expect(rows.rows == n && rows.columns == d)
            #expect(rows.rowMajor() == x && plain.rowMajor() == x)
            for r in 0..<n {
                #expect(Int(rowAtPosition[rows.position(of: r)]) == r)
                #expect((0..<d).allSatisfy { rows[r, $0] == x[r, $0] && plain[r, $0] == x[r, $0] })
                // Zero weights skipped, the same additions: bit for bit.
                let w = (0..<d).map { _ in Bool.random(using: &rng) ? 0 : Float.random(in: -1...1, using: &rng) }
                let expected = LinearBlockIndex.dot(x, row: r, w)
                #expect(rows.dot(row: r, w).bitPattern == expected.bitPattern)
                #expect(plain.dot(row: r, w).bitPattern == expected.bitPattern)
            }
            let asked = (0..<Int.random(in: 0...20, using: &rng)).map { _ in Int.random(in: 0..<max(1, n), using: &rng) }.filter { $0 < n }
            let stride = d + Int.random(in: 0...3, using: &rng)
            #expect(rows.rowsAsDouble(asked, stride: stride) == x.rowsAsDouble(asked, stride: stride))
            #expect(plain.rowsAsDouble(asked, stride: stride) == x.rowsAsDouble(asked, stride: stride))
        }
    }
}
