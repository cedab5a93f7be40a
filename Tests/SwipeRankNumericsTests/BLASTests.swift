import Foundation
import Testing
import SwipeRankNumerics

/// Float comparison with a tolerance relative to the magnitude of the summed terms.
func close(_ a: Float, _ b: Float, scale: Float = 1, tolerance: Float = 1e-4) -> Bool {
    abs(a - b) <= tolerance * max(1, scale, abs(a), abs(b))
}

func randomMatrix(rows: Int, columns: Int, using rng: inout SplitMix64) -> Matrix {
    Matrix(rows: rows, columns: columns, elements: (0..<rows * columns).map { _ in Float.random(in: -2...2, using: &rng) })
}

func randomVector(_ n: Int, using rng: inout SplitMix64) -> [Float] {
    (0..<n).map { _ in Float.random(in: -2...2, using: &rng) }
}

@Suite("BLAS wrappers against naive loops")
struct BLASTests {
    @Test("gemv equals a naive loop", arguments: 0..<20)
    func gemv(seed: UInt64) {
        var rng = SplitMix64(seed: seed)
        let rows = Int.random(in: 1...300, using: &rng), columns = Int.random(in: 1...70, using: &rng)
        let a = randomMatrix(rows: rows, columns: columns, using: &rng)
        let x = randomVector(columns, using: &rng)
        let y0 = randomVector(rows, using: &rng)
        var y = y0
        a.multiply(x, into: &y, alpha: 0.5, beta: 2)
        for r in 0..<rows {
            var s: Float = 0
            for c in 0..<columns { s += a[r, c] * x[c] }
            let expected = 0.5 * s + 2 * y0[r]
            #expect(close(y[r], expected, scale: Float(columns)), "seed \(seed) row \(r): \(y[r]) vs \(expected)")
        }
    }

    @Test("transposed gemv equals a naive loop", arguments: 0..<10)
    func gemvTransposed(seed: UInt64) {
        var rng = SplitMix64(seed: seed)
        let rows = Int.random(in: 1...8, using: &rng), columns = Int.random(in: 1...500, using: &rng)
        let a = randomMatrix(rows: rows, columns: columns, using: &rng)
        let x = randomVector(rows, using: &rng)
        let y0 = randomVector(columns, using: &rng)
        var y = y0
        a.multiplyTransposed(x, into: &y, beta: 1)
        for c in 0..<columns {
            var s: Float = 0
            for r in 0..<rows { s += a[r, c] * x[r] }
            #expect(close(y[c], s + y0[c], scale: Float(rows)), "seed \(seed) column \(c)")
        }
    }

    @Test("gemm · Bᵀ equals one gemv per row", arguments: 0..<10)
    func gemmMatchesGemv(seed: UInt64) {
        var rng = SplitMix64(seed: seed)
        let students = Int.random(in: 1...40, using: &rng), d = Int.random(in: 1...64, using: &rng)
        let n = Int.random(in: 1...400, using: &rng)
        let w = randomMatrix(rows: students, columns: d, using: &rng)
        let x = randomMatrix(rows: n, columns: d, using: &rng)
        let batch = w.multipliedTransposed(x)
        #expect(batch.rows == students && batch.columns == n)
        for s in 0..<students {
            var y = [Float](repeating: 0, count: n)
            x.multiply(w.row(s), into: &y)
            for i in 0..<n { #expect(close(batch[s, i], y[i], scale: Float(d)), "seed \(seed) student \(s) item \(i)") }
        }
    }

    @Test("gemm equals a naive triple loop")
    func gemmNaive() {
        var rng = SplitMix64(seed: 7)
        let a = randomMatrix(rows: 13, columns: 9, using: &rng), b = randomMatrix(rows: 9, columns: 17, using: &rng)
        let c = a.multiplied(by: b)
        for i in 0..<13 {
            for j in 0..<17 {
                var s: Float = 0
                for k in 0..<9 { s += a[i, k] * b[k, j] }
                #expect(close(c[i, j], s, scale: 9))
            }
        }
    }

    @Test("transposed swaps indices; multiply(into:) equals multiplied(by:)")
    func transposeAndMultiplyInto() {
        var rng = SplitMix64(seed: 17)
        let a = randomMatrix(rows: 7, columns: 5, using: &rng), b = randomMatrix(rows: 5, columns: 9, using: &rng)
        let t = a.transposed
        #expect(t.rows == 5 && t.columns == 7)
        for r in 0..<7 { for c in 0..<5 { #expect(t[c, r] == a[r, c]) } }
        var out = Matrix(rows: 7, columns: 9, repeating: 42)
        a.multiply(b, into: &out)
        #expect(out == a.multiplied(by: b))
        // Scoring through the transposed layout equals the row-major gemv.
        let w = randomVector(5, using: &rng)
        var viaRows = [Float](repeating: 0, count: 7), viaColumns = [Float](repeating: 0, count: 7)
        a.multiply(w, into: &viaRows)
        t.multiplyTransposed(w, into: &viaColumns)
        for i in 0..<7 { #expect(close(viaRows[i], viaColumns[i], scale: 5)) }
    }

    @Test("empty dimensions are handled without calling BLAS with invalid leading dimensions")
    func emptyDimensions() {
        let a = Matrix(rows: 3, columns: 0)
        var y: [Float] = [1, 2, 3]
        a.multiply([], into: &y, beta: 0)
        #expect(y == [0, 0, 0])
        let none = Matrix(rows: 0, columns: 4)
        var empty: [Float] = []
        none.multiply([1, 2, 3, 4], into: &empty)
        #expect(empty.isEmpty)
    }

    @Test("addScaledFixedPoint equals the scalar multiply-then-add bit for bit, every tail length", arguments: 0..<24)
    func fixedPointRow(seed: Int) {
        var rng = SplitMix64(seed: UInt64(seed) &+ 900)
        let n = seed < 20 ? seed : Int.random(in: 20...300, using: &rng)
        let offset = Int.random(in: 0...7, using: &rng)
        let values = ContiguousArray((0..<(offset + n + 3)).map { _ in Int16.random(in: .min ... .max, using: &rng) })
        let scale = Float.random(in: -2...2, using: &rng) / 8192
        var y = (0..<n).map { _ in Float.random(in: -50...50, using: &rng) }
        var want = y
        for i in 0..<n { want[i] += scale * Float(values[offset + i]) }
        addScaledFixedPoint(values, offset: offset, scale: scale, into: &y)
        #expect(y.map(\.bitPattern) == want.map(\.bitPattern))
    }

    @Test("addScaledFixedPointRows equals one scalar pass per row, in row order, bit for bit", arguments: 0..<24)
    func fixedPointRows(seed: Int) {
        var rng = SplitMix64(seed: UInt64(seed) &+ 1_900)
        let n = seed < 20 ? seed : Int.random(in: 20...300, using: &rng)
        let rowCount = seed % 10  // none up to nine rows: passes of four, then the rest
        let values = ContiguousArray((0..<(rowCount * n + 11)).map { _ in Int16.random(in: .min ... .max, using: &rng) })
        let rows = (0..<rowCount).map { r in
            (offset: r * n + Int.random(in: 0...11, using: &rng), scale: Float.random(in: -2...2, using: &rng) / 8192)
        }
        let start = (0..<n).map { _ in Float.random(in: -50...50, using: &rng) }
        var want = start
        for row in rows { for i in 0..<n { want[i] += row.scale * Float(values[row.offset + i]) } }
        var y = start
        addScaledFixedPointRows(values, rows: rows, into: &y)
        #expect(y.map(\.bitPattern) == want.map(\.bitPattern))
        // Each kernel alone (the AVX one where this CPU has it), every lane count up to 300.
        for kernel in OrderedKernelTests.kernels {
            var alone = start
            addScaledFixedPointRows(values, rows: rows, into: &alone, kernel: kernel)
            #expect(alone.map(\.bitPattern) == want.map(\.bitPattern), "\(kernel)")
            // The rows' order matters to the bits: the kernel adds them in the order given.
            if rowCount >= 2, n > 0 {
                var reversed = (0..<n).map { _ in Float(0) }, wantReversed = reversed
                for row in rows.reversed() { for i in 0..<n { wantReversed[i] += row.scale * Float(values[row.offset + i]) } }
                addScaledFixedPointRows(values, rows: rows.reversed(), into: &reversed, kernel: kernel)
                #expect(reversed.map(\.bitPattern) == wantReversed.map(\.bitPattern), "\(kernel)")
            }
        }
    }

    @Test("the thread count can be set and is restored")
    func threads() {
        let before = BLASThreads.count
        BLASThreads.withCount(1) { #expect(BLASThreads.count == 1) }
        #expect(BLASThreads.count == before)
    }
}

@Suite("Top-k selection")
struct TopKTests {
    @Test("equals the first k of a stable descending sort, ties to the lower index", arguments: 0..<200)
    func matchesFullSort(seed: UInt64) {
        var rng = SplitMix64(seed: seed)
        let n = Int.random(in: 0...600, using: &rng), k = Int.random(in: 0...50, using: &rng)
        // Few distinct values so ties are common.
        let distinct = Int.random(in: 1...20, using: &rng)
        let scores = (0..<n).map { _ in Float(Int.random(in: 0..<distinct, using: &rng)) / 3 }
        let expected = Array(scores.indices.sorted { scores[$0] > scores[$1] || (scores[$0] == scores[$1] && $0 < $1) }.prefix(k))
        #expect(scores.topIndices(k) == expected, "seed \(seed) n \(n) k \(k)")
    }

    @Test("long inputs with NaNs, infinities and ties (the 16-wide skip path) equal the reference", arguments: 0..<40)
    func longInputs(seed: UInt64) {
        var rng = SplitMix64(seed: 1_000 + seed)
        let n = Int.random(in: 1...5_000, using: &rng), k = Int.random(in: 1...64, using: &rng)
        let scores: [Float] = (0..<n).map { _ in
            switch Int.random(in: 0..<100, using: &rng) {
            case 0: return .nan
            case 1: return .infinity
            case 2: return -.infinity
            case 3..<30: return Float(Int.random(in: 0..<5, using: &rng))   // ties
            default: return Float.random(in: -10...10, using: &rng)
            }
        }
        let eligible = scores.indices.filter { !scores[$0].isNaN }
        let expected = Array(eligible.sorted { scores[$0] > scores[$1] || (scores[$0] == scores[$1] && $0 < $1) }.prefix(k))
        #expect(scores.topIndices(k) == expected, "seed \(seed) n \(n) k \(k)")
    }

    @Test("long inputs take the sampled cut, and fall back when the sample misleads or ties flood it",
          arguments: ["random", "sampled positions hold the best", "ascending", "all equal", "few values", "NaN samples"])
    func sampledCut(shape: String) {
        var rng = SplitMix64(seed: 5)
        let n = 10_000
        let scores: [Float] = (0..<n).map { i in
            switch shape {
            case "random": return Float.random(in: -1...1, using: &rng)
            // Every 16th score is the largest: the cut lets almost nothing else through, so
            // fewer than k survive unless the sampled ones suffice.
            case "sampled positions hold the best": return i % 16 == 0 ? 10 + Float(i) / 1_000 : Float.random(in: 0...1, using: &rng)
            case "ascending": return Float(i)
            case "all equal": return 1
            case "few values": return Float(Int.random(in: 0..<3, using: &rng))
            default: return i % 16 == 0 ? .nan : Float.random(in: -1...1, using: &rng)
            }
        }
        let eligible = scores.indices.filter { !scores[$0].isNaN }
        let order = eligible.sorted { scores[$0] > scores[$1] || (scores[$0] == scores[$1] && $0 < $1) }
        var selector = TopKSelector()
        var out: [Int] = []
        for k in [1, 5, 20, 100, 312, 313, 700] {
            selector.select(k: k, from: scores, into: &out)
            #expect(out == Array(order.prefix(k)), "\(shape) k \(k)")
        }
    }

    @Test("a selector reused across calls gives the same answers as a fresh one")
    func reuse() {
        var rng = SplitMix64(seed: 99)
        var selector = TopKSelector()
        var out: [Int] = []
        for _ in 0..<50 {
            let scores = randomVector(Int.random(in: 1...300, using: &rng), using: &rng)
            let k = Int.random(in: 1...30, using: &rng)
            selector.select(k: k, from: scores, into: &out)
            #expect(out == scores.topIndices(k))
        }
    }

    @Test("blocked batch top-k equals a full sgemm and a top-k per row", arguments: [1, 3, 16, 64])
    func batchTopK(blockSize: Int) {
        var rng = SplitMix64(seed: UInt64(blockSize))
        let students = randomMatrix(rows: 37, columns: 12, using: &rng)
        let items = randomMatrix(rows: 12, columns: 500, using: &rng)
        let full = students.multiplied(by: items)
        var selector = TopKSelector()
        let blocked = selector.topK(k: 7, weights: students, items: items, blockSize: blockSize)
        #expect(blocked.count == 37)
        for s in 0..<37 { #expect(blocked[s] == full.row(s).topIndices(7), "student \(s)") }
    }

    @Test("NaN scores are never selected")
    func nan() {
        #expect([Float.nan, 1, .nan, 3, 2].topIndices(5) == [3, 4, 1])
    }
}

@Suite("Gram matrix")
struct GramMatrixTests {
    @Test("gramMatrix equals the sum of outer products, both triangles", arguments: [(0, 3), (1, 1), (7, 4), (50, 9)])
    func reference(count: Int, dimension: Int) {
        var rng = SplitMix64(seed: UInt64(count * 31 + dimension))
        let x = (0..<(count * dimension)).map { _ in Double.random(in: -2...2, using: &rng) }
        let gram = gramMatrix(rows: x, count: count, dimension: dimension)
        #expect(gram.count == dimension * dimension)
        for i in 0..<dimension {
            for j in 0..<dimension {
                let expected = (0..<count).reduce(0.0) { $0 + x[$1 * dimension + i] * x[$1 * dimension + j] }
                #expect(abs(gram[i * dimension + j] - expected) < 1e-9 * max(1, abs(expected)), "[\(i), \(j)]")
            }
        }
    }
}

@Suite("Matrix rows as Double")
struct RowsAsDoubleTests {
    @Test("each listed row converted in place, zeros up to the stride", arguments: 0..<10)
    func rows(seed: UInt64) {
        var rng = SplitMix64(seed: 60 + seed)
        let m = randomMatrix(rows: Int.random(in: 1...40, using: &rng), columns: Int.random(in: 0...20, using: &rng), using: &rng)
        let rows = (0..<Int.random(in: 0...30, using: &rng)).map { _ in Int.random(in: 0..<m.rows, using: &rng) }
        let stride = m.columns + Int.random(in: 0...3, using: &rng)
        let out = m.rowsAsDouble(rows, stride: stride)
        var reference: [Double] = []
        for row in rows { reference += m.row(row).map(Double.init) + [Double](repeating: 0, count: stride - m.columns) }
        #expect(out.map(\.bitPattern) == reference.map(\.bitPattern), "seed \(seed)")
    }
}
