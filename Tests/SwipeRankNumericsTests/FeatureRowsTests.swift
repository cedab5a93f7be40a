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
            let rows = FeatureRows(permuted: FloatValues(values), columns: d, rowAtPosition: rowAtPosition)
            let plain = FeatureRows(x)
            #expect(!rows.isRowOrder && plain.isRowOrder)
            #expect(rows.rows == n && rows.columns == d)
            #expect(rows.rowMajor() == x && plain.rowMajor() == x)
            // The stored values: by position for the permuted store, the matrix for the other.
            #expect(rows.withUnsafeStoredValues { Array($0) } == values)
            #expect(plain.withUnsafeStoredValues { Array($0) } == Array(x.elements))
            for r in 0..<n {
                #expect(Int(rowAtPosition[rows.position(of: r)]) == r)
                #expect((0..<d).allSatisfy { rows[r, $0] == x[r, $0] && plain[r, $0] == x[r, $0] })
                // Zero weights skipped, the same additions: bit for bit.
                let w = (0..<d).map { _ in Bool.random(using: &rng) ? 0 : Float.random(in: -1...1, using: &rng) }
                let expected = LinearBlockIndex.dot(x, row: r, w)
                #expect(rows.dot(row: r, w).bitPattern == expected.bitPattern)
                #expect(plain.dot(row: r, w).bitPattern == expected.bitPattern)
            }
            // Many rows at once (eight at a time, then the rest; repeats and any order): each
            // sum bit for bit the in-order one, zero weights skipped.
            if n > 0 {
                let w = (0..<d).map { _ in Bool.random(using: &rng) ? 0 : Float.random(in: -1...1, using: &rng) }
                let list = (0..<Int.random(in: 0...43, using: &rng)).map { _ in Int32.random(in: 0..<Int32(n), using: &rng) }
                let expected = list.map { r -> UInt32 in
                    var s: Float = 0
                    for j in 0..<d where w[j] != 0 { s = s + w[j] * x[Int(r), j] }
                    return s.bitPattern
                }
                #expect(rows.dots(rows: list, w).map(\.bitPattern) == expected)
                #expect(plain.dots(rows: list, w).map(\.bitPattern) == expected)
            }
            let asked = (0..<Int.random(in: 0...20, using: &rng)).map { _ in Int.random(in: 0..<max(1, n), using: &rng) }.filter { $0 < n }
            let stride = d + Int.random(in: 0...3, using: &rng)
            #expect(rows.rowsAsDouble(asked, stride: stride) == x.rowsAsDouble(asked, stride: stride))
            #expect(plain.rowsAsDouble(asked, stride: stride) == x.rowsAsDouble(asked, stride: stride))
        }
    }

    @Test("FloatValues: owned copies, values built in place, and values borrowed from memory another object keeps")
    func floatValues() {
        var rng = SplitMix64(seed: 12)
        for n in [0, 1, 7, 1_000] {
            let source = (0..<n).map { _ in Float.random(in: -5...5, using: &rng) }
            let owned = FloatValues(source)
            #expect(Array(owned) == source && owned.count == n && !owned.isBorrowed)
            let built = FloatValues(count: n) { target in for i in target.indices { target[i] = Float(i) } }
            #expect(Array(built) == (0..<n).map(Float.init))
            // Borrowed: reads the owner's memory itself (a mapping in serving), and keeps the
            // owner alive as long as any copy of the values.
            var borrowed: FloatValues? = nil
            weak var released: Holder?
            do {
                let holder = Holder(source)
                released = holder
                borrowed = FloatValues(unsafeStart: UnsafeRawPointer(holder.buffer.baseAddress!), count: n, owner: holder)
            }
            #expect(released != nil)
            let values = try! #require(borrowed)
            #expect(values.isBorrowed && Array(values) == source)
            #expect(values.withUnsafeBufferPointer { $0.baseAddress } == UnsafePointer(released?.buffer.baseAddress))
            borrowed = nil
            withExtendedLifetime(values) { #expect(released != nil) }
        }
    }

    /// Memory owned elsewhere, as a file mapping is.
    final class Holder {
        let buffer: UnsafeMutableBufferPointer<Float>
        init(_ values: [Float]) {
            buffer = .allocate(capacity: max(values.count, 1))
            _ = buffer.initialize(from: values + (values.isEmpty ? [0] : []))
        }
        deinit { buffer.deallocate() }
    }
}
