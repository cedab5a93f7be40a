import Testing
import SwipeRankNumerics

@Suite("Ordered kernels")
struct OrderedKernelTests {
    /// Every kernel this CPU runs (the AVX one only where it exists; CI's machines do).
    static let kernels: [NumericsKernel] = NumericsKernel.hasVector ? [.portable, .vector] : [.portable]

    @Test("rows as Double columns: entry (j, i) is row i's value j (random rows, repeats, none)")
    func rowsAsColumns() {
        var rng = SplitMix64(seed: 49)
        for trial in 0..<30 {
            let rows = Int(rng.next() % 20) + 1, f = Int(rng.next() % 9) + 1
            let m = Matrix(rows: rows, columns: f, elements: (0..<rows * f).map { _ in Float.random(in: -3...3, using: &rng) })
            let picked = (0..<(trial == 0 ? 0 : Int(rng.next() % 12))).map { _ in Int(rng.next() % UInt64(rows)) }
            let columns = m.rowsAsDoubleColumns(picked)
            #expect(columns.count == f * picked.count)
            for (i, row) in picked.enumerated() {
                for j in 0..<f { #expect(columns[j * picked.count + i] == Double(m[row, j]), "trial \(trial)") }
            }
        }
    }

    @Test("catalog scores equal a row-by-row loop with zero weights skipped, bit for bit, on both kernels (200 seeded shapes)")
    func transposedProducts() {
        var rng = SplitMix64(seed: 48)
        for trial in 0..<200 {
            // Widths around the blocks (64 and 8 outputs in the AVX kernel, 32 in the portable one).
            // And past the AVX kernel's 256 rows listed on its stack (a list allocated then).
            let d = trial % 50 == 7 ? 300 : Int(rng.next() % 60) + 1
            let n = trial < 6 ? [0, 1, 7, 8, 63, 64][trial] : Int(rng.next() % 300)
            let a = Matrix(rows: d, columns: n, elements: (0..<d * n).map { _ in
                Float.random(in: -1...1, using: &rng) * Float(1 << Int(rng.next() % 20))
            })
            // Zeros of both signs among the weights: skipped, as a zero weight adds nothing.
            let w: [Float] = (0..<d).map { _ in [0, -0.0, Float.random(in: -2...2, using: &rng)][Int(rng.next() % 3)] }
            var reference = [Float](repeating: 0, count: n)
            for i in 0..<n {
                var sum: Float = 0
                for r in 0..<d where w[r] != 0 { sum = sum + w[r] * a[r, i] }
                reference[i] = sum
            }
            for kernel in Self.kernels {
                var y: [Float] = []
                a.multiplyTransposedInOrder(w, into: &y, kernel: kernel)
                #expect(y.map(\.bitPattern) == reference.map(\.bitPattern), "\(kernel) d \(d) n \(n)")
            }
        }
    }

    @Test("column dot products equal a one-vector loop over j, bit for bit (300 seeded shapes, 0 columns included)")
    func columnDots() {
        var rng = SplitMix64(seed: 47)
        for trial in 0..<300 {
            let f = Int(rng.next() % 40) + 1, n = trial < 5 ? trial : Int(rng.next() % 150)
            // Magnitudes over many orders, so a changed summation order would show in the bits.
            let xt = (0..<f * n).map { _ in Double.random(in: -1...1, using: &rng) * Double(1 << Int(rng.next() % 30)) }
            let v = (0..<f).map { _ in Double.random(in: -1...1, using: &rng) }
            for kernel in Self.kernels {
                let dots = columnDotsInOrder(xt, columns: n, with: v, kernel: kernel)
                #expect(dots.count == n)
                for i in 0..<n {
                    var reference = 0.0
                    for j in 0..<f { reference += v[j] * xt[j * n + i] }
                    #expect(dots[i].bitPattern == reference.bitPattern, "\(kernel) f \(f) n \(n) column \(i)")
                }
            }
        }
    }

    @Test("column dot products of a vector inside a longer array, into a reused buffer, equal those of the vector alone, bit for bit")
    func columnDotsFromOffset() {
        var rng = SplitMix64(seed: 48)
        var out: [Double] = [1, 2, 3]  // a stale buffer of another length: replaced
        for trial in 0..<200 {
            let f = Int(rng.next() % 40) + 1, n = trial < 3 ? trial : Int(rng.next() % 60)
            let xt = (0..<f * n).map { _ in Double.random(in: -1...1, using: &rng) * Double(1 << Int(rng.next() % 30)) }
            let vectors = Int(rng.next() % 4) + 1, k = Int(rng.next() % UInt64(vectors))
            let many = (0..<(vectors * f)).map { _ in Double.random(in: -1...1, using: &rng) }
            let alone = Array(many[(k * f)..<((k + 1) * f)])
            for kernel in Self.kernels {
                columnDotsInOrder(xt, columns: n, with: many, from: k * f, count: f, into: &out, kernel: kernel)
                let reference = columnDotsInOrder(xt, columns: n, with: alone, kernel: kernel)
                #expect(out.count == n && zip(out, reference).allSatisfy { $0.bitPattern == $1.bitPattern }, "\(kernel) f \(f) n \(n)")
            }
        }
    }

    @Test("laneSum adds in eight interleaved lanes, then the lanes in order, then the tail, bit for bit (200 seeded lengths)")
    func laneSums() {
        var rng = SplitMix64(seed: 49)
        for trial in 0..<200 {
            let n = trial < 20 ? trial : Int(rng.next() % 5_000)
            let values = (0..<n).map { _ in Float.random(in: -1...1, using: &rng) * Float(1 << Int(rng.next() % 20)) }
            var lanes = [Float](repeating: 0, count: 8)
            let whole = n / 8 * 8
            for i in 0..<whole { lanes[i % 8] += values[i] }
            var reference: Float = 0
            for lane in lanes { reference += lane }
            for i in whole..<n { reference += values[i] }
            #expect(laneSum(values).bitPattern == reference.bitPattern, "n \(n)")
        }
    }

    @Test("a grade sample reads rows ⌊i·N/m⌋ minus their offsets, widened, with the range in order and NaN found, bit for bit on both kernels (400 seeded shapes)")
    func gradeSamples() {
        var rng = SplitMix64(seed: 63)
        for trial in 0..<400 {
            let n = trial < 8 ? [1, 7, 8, 9, 1023, 1024, 1025, 2294][trial] : 1 + Int(rng.next() % 3000)
            // m = N (small catalogs), a power of two below N (the scale's 1,024 rows), or neither.
            let shapes = [n, min(n, 1 << Int(rng.next() % 11)), max(1, n - Int(rng.next() % UInt64(n)))]
            let m = shapes[trial % 3]
            var raw = (0..<n).map { _ in Float.random(in: -4...4, using: &rng) * Float(1 << Int(rng.next() % 8)) }
            // Zeros of both signs, infinities, and sometimes a NaN.
            for _ in 0..<Int(rng.next() % 4) { raw[Int(rng.next() % UInt64(n))] = [0, -0.0, .infinity, -.infinity][Int(rng.next() % 4)] }
            if rng.next() % 5 == 0 { raw[Int(rng.next() % UInt64(n))] = .nan }
            let offsets: [Float] = rng.next() % 2 == 0 ? [] : (0..<n).map { _ in Float.random(in: -1...1, using: &rng) }
            // The reference: the definition, one row at a time.
            var expected: [Double] = []
            for i in 0..<m {
                let row = i * n / m
                expected.append(Double(raw[row] - (offsets.isEmpty ? 0 : offsets[row])))
            }
            let hasNaN = expected.contains { $0.isNaN }
            for kernel in Self.kernels {
                let (values, range) = gradeSample(raw, offsets: offsets, count: m, kernel: kernel)
                #expect(values.map(\.bitPattern) == expected.map(\.bitPattern), "\(kernel) n \(n) m \(m)")
                if hasNaN {
                    #expect(range == nil, "\(kernel) n \(n) m \(m)")
                } else {
                    let least = expected.reduce(Double.infinity) { $1 < $0 ? $1 : $0 }
                    let greatest = expected.reduce(-Double.infinity) { $1 > $0 ? $1 : $0 }
                    #expect(range?.least == least && range?.greatest == greatest, "\(kernel) n \(n) m \(m)")
                }
            }
        }
    }
}
