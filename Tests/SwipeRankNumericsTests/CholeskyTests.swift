import Foundation
import Testing
import SwipeRankNumerics

func randomSPD(_ n: Int, using rng: inout SplitMix64) -> [Double] {
    // B Bᵀ + n·I is symmetric positive definite.
    let b = (0..<n * n).map { _ in Double.random(in: -1...1, using: &rng) }
    var a = [Double](repeating: 0, count: n * n)
    for i in 0..<n { for j in 0..<n {
        var s = 0.0
        for k in 0..<n { s += b[i * n + k] * b[j * n + k] }
        a[i * n + j] = s + (i == j ? Double(n) : 0)
    } }
    return a
}

func multiply(_ a: [Double], _ x: [Double]) -> [Double] {
    let n = x.count
    return (0..<n).map { i in (0..<n).reduce(0) { $0 + a[i * n + $1] * x[$1] } }
}

@Suite("Cholesky factor (plain Swift kernels)")
struct CholeskyTests {
    @Test("solve gives A x = b", arguments: 0..<15)
    func solve(seed: UInt64) throws {
        var rng = SplitMix64(seed: seed)
        let n = Int.random(in: 1...40, using: &rng)
        let a = randomSPD(n, using: &rng)
        let b = (0..<n).map { _ in Double.random(in: -5...5, using: &rng) }
        let factor = try CholeskyFactor(symmetric: a, dimension: n)
        let x = factor.solve(b)
        for (lhs, rhs) in zip(multiply(a, x), b) { #expect(abs(lhs - rhs) < 1e-8 * max(1, abs(rhs)), "seed \(seed)") }
        // L Lᵀ reproduces A.
        for (p, q) in zip(factor.matrix, a) { #expect(abs(p - q) < 1e-9 * max(1, abs(q))) }
        // xᵀA⁻¹x from the factor equals x · solve(x).
        let quadratic = factor.inverseQuadraticForm(b)
        let direct = zip(b, x).reduce(0) { $0 + $1.0 * $1.1 }
        #expect(abs(quadratic - direct) < 1e-9 * max(1, direct))
        // The batched form agrees with the single one.
        let others = (0..<3).map { _ in (0..<n).map { _ in Double.random(in: -2...2, using: &rng) } }
        for (batched, single) in zip(factor.inverseQuadraticForms([b] + others), ([b] + others).map(factor.inverseQuadraticForm)) {
            #expect(abs(batched - single) < 1e-9 * max(1, single))
        }
    }

    @Test("many quadratic forms at once equal the one-vector path bit for bit", arguments: 0..<20)
    func batchedQuadraticFormsAreExact(seed: UInt64) throws {
        var rng = SplitMix64(seed: 500 + seed)
        let n = seed == 0 ? 0 : Int.random(in: 1...70, using: &rng)
        let factor = try CholeskyFactor(symmetric: randomSPD(n, using: &rng), dimension: n)
        // Counts around the lane widths (8, and 4 for a last group of four or fewer), including
        // none and partial last groups.
        for count in [0, 1, 4, 5, 7, 8, 9, 12, 13, 16, 20, 23, Int.random(in: 24...60, using: &rng)] {
            let vectors = (0..<count).map { _ in (0..<n).map { _ in Double.random(in: -4...4, using: &rng) } }
            let single = vectors.map(factor.inverseQuadraticForm)
            let batched = factor.inverseQuadraticForms(flat: vectors.flatMap { $0 }, count: count)
            #expect(batched.map(\.bitPattern) == single.map(\.bitPattern), "seed \(seed) n \(n) count \(count)")
            #expect(factor.inverseQuadraticForms(vectors).map(\.bitPattern) == single.map(\.bitPattern))
        }
    }

    @Test("a diagonal factor's forms (no evidence yet) equal the full solve bit for bit", arguments: 0..<12)
    func diagonalQuadraticFormsAreExact(seed: UInt64) throws {
        var rng = SplitMix64(seed: 700 + seed)
        let n = Int.random(in: 1...64, using: &rng)
        // The prior τI, and a diagonal with unequal entries.
        let diagonal = (0..<n).map { _ in Double.random(in: 0.1...9, using: &rng) }
        var square = [Double](repeating: 0, count: n * n)
        for i in 0..<n { square[i * n + i] = diagonal[i] }
        for factor in [CholeskyFactor(identityScaledBy: Double.random(in: 0.5...5, using: &rng), dimension: n),
                       try CholeskyFactor(symmetric: square, dimension: n)] {
            let forms = InverseQuadraticForms(factor)
            // Zeros (±0) among the values, as one-hot features have.
            let vectors = (0..<13).map { _ in
                (0..<n).map { _ in [0.0, -0.0, Double.random(in: -4...4, using: &rng)][Int.random(in: 0..<3, using: &rng)] }
            }
            let single = vectors.map(factor.inverseQuadraticForm)
            // Twice with one layout: a deck's probes share it.
            for _ in 0..<2 {
                #expect(forms.evaluate(flat: vectors.flatMap { $0 }, count: vectors.count).map(\.bitPattern) == single.map(\.bitPattern),
                        "seed \(seed) n \(n)")
            }
        }
    }

    @Test("one layout serves many batches; a full factor's forms equal the full solve bit for bit", arguments: 0..<8)
    func sharedLayout(seed: UInt64) throws {
        var rng = SplitMix64(seed: 800 + seed)
        let n = Int.random(in: 1...64, using: &rng)
        let factor = try CholeskyFactor(symmetric: randomSPD(n, using: &rng), dimension: n)
        let forms = InverseQuadraticForms(factor)
        for count in [1, 12, 24, 48] {
            let vectors = (0..<count).map { _ in (0..<n).map { _ in Double.random(in: -4...4, using: &rng) } }
            #expect(forms.evaluate(flat: vectors.flatMap { $0 }, count: count).map(\.bitPattern)
                    == vectors.map(factor.inverseQuadraticForm).map(\.bitPattern), "seed \(seed) count \(count)")
        }
    }

    @Test("both kernels' forms equal the one-vector path bit for bit, at every group size", arguments: 0..<10)
    func vectorQuadraticForms(seed: UInt64) throws {
        var rng = SplitMix64(seed: 900 + seed)
        let n = Int.random(in: 1...96, using: &rng)
        let factor = try CholeskyFactor(symmetric: randomSPD(n, using: &rng), dimension: n)
        let forms = InverseQuadraticForms(factor)
        // The AVX kernel takes up to 16 vectors at a time in groups of 4 lanes: every count to 33.
        for count in 0...33 {
            let vectors = (0..<count).map { _ in (0..<n).map { _ in Double.random(in: -4...4, using: &rng) } }
            let single = vectors.map(factor.inverseQuadraticForm).map(\.bitPattern)
            for kernel in Self.kernels {
                #expect(forms.evaluate(flat: vectors.flatMap { $0 }, count: count, kernel: kernel).map(\.bitPattern) == single,
                        "\(kernel) seed \(seed) n \(n) count \(count)")
            }
        }
    }

    @Test("many solves at once equal one at a time bit for bit, on both kernels, at every group size", arguments: 0..<8)
    func batchedSolves(seed: UInt64) throws {
        var rng = SplitMix64(seed: 950 + seed)
        let n = seed == 0 ? 1 : Int.random(in: 1...64, using: &rng)
        let factor = try CholeskyFactor(symmetric: randomSPD(n, using: &rng), dimension: n)
        for count in 0...20 {
            let vectors = (0..<count).map { _ in (0..<n).map { _ in Double.random(in: -4...4, using: &rng) } }
            let single = vectors.flatMap { factor.solve($0) }.map(\.bitPattern)
            for kernel in Self.kernels {
                #expect(factor.solve(flat: vectors.flatMap { $0 }, count: count, kernel: kernel).map(\.bitPattern) == single,
                        "\(kernel) seed \(seed) n \(n) count \(count)")
            }
        }
    }

    @Test("a rank-1 update equals refactoring A + x xᵀ", arguments: 0..<15)
    func rankOne(seed: UInt64) throws {
        var rng = SplitMix64(seed: seed)
        let n = Int.random(in: 1...64, using: &rng)
        var a = randomSPD(n, using: &rng)
        var factor = try CholeskyFactor(symmetric: a, dimension: n)
        for _ in 0..<5 {
            let x = (0..<n).map { _ in Double.random(in: -3...3, using: &rng) }
            factor.rankOneUpdate(x)
            for i in 0..<n { for j in 0..<n { a[i * n + j] += x[i] * x[j] } }
        }
        let fresh = try CholeskyFactor(symmetric: a, dimension: n)
        for (p, q) in zip(factor.lower, fresh.lower) { #expect(abs(p - q) < 1e-8 * max(1, abs(q)), "seed \(seed)") }
    }

    @Test("decay equals refactoring keep·A + add·I", arguments: 0..<5)
    func decay(seed: UInt64) throws {
        var rng = SplitMix64(seed: seed)
        let n = Int.random(in: 1...70, using: &rng)
        let a = randomSPD(n, using: &rng)
        var factor = try CholeskyFactor(symmetric: a, dimension: n)
        try factor.decay(keeping: 0.9, addingIdentity: 0.3)
        var expected = a.map { $0 * 0.9 }
        for i in 0..<n { expected[i * n + i] += 0.3 }
        // L Lᵀ (a plain triple loop) reproduces the decayed matrix: a reference independent of
        // the factorization code.
        for (p, q) in zip(factor.matrix, expected) { #expect(abs(p - q) < 1e-9 * max(1, abs(q)), "seed \(seed)") }
        let fresh = try CholeskyFactor(symmetric: expected, dimension: n)
        for (p, q) in zip(factor.lower, fresh.lower) { #expect(abs(p - q) < 1e-9 * max(1, abs(q)), "seed \(seed)") }
    }

    /// The forgetting step as every version before the fused kernel computed it, in plain
    /// scalar loops: `keep · L Lᵀ` as a sum of outer products of L's columns (ascending k, zero
    /// multipliers skipped), `add` on the diagonal, then a right-looking Cholesky (ascending
    /// columns, zero multipliers skipped). Packed lower triangle by columns.
    static func referenceDecay(_ l: [Double], _ n: Int, keep: Double, add: Double) -> [Double]? {
        func at(_ i: Int, _ j: Int) -> Int { j * n - j * (j - 1) / 2 + i - j }
        var a = [Double](repeating: 0, count: n * (n + 1) / 2)
        for k in 0..<n {
            for j in k..<n {
                let m = keep * l[at(j, k)]
                if m == 0 { continue }
                for i in j..<n { a[at(i, j)] = a[at(i, j)] + l[at(i, k)] * m }
            }
        }
        for j in 0..<n { a[at(j, j)] += add }
        for j in 0..<n {
            let pivot = a[at(j, j)]
            guard pivot > 0, pivot.isFinite else { return nil }
            let root = pivot.squareRoot()
            a[at(j, j)] = root
            let inverse = 1 / root
            for i in (j + 1)..<max(j + 1, n) { a[at(i, j)] *= inverse }
            for k in (j + 1)..<max(j + 1, n) {
                let m = -a[at(k, j)]
                if m == 0 { continue }
                for i in k..<n { a[at(i, k)] = a[at(i, k)] + a[at(i, j)] * m }
            }
        }
        return a
    }

    @Test("decay is bit for bit the Gram-then-factor path (so stored models keep their digests)", arguments: 0..<40)
    func decayBitIdentical(seed: UInt64) throws {
        var rng = SplitMix64(seed: 1_000 + seed)
        let n = Int.random(in: 1...80, using: &rng)
        // Half the cases are a learning model's factor: the prior τI after a few rank-1
        // updates with sparse vectors, so many entries are exactly zero (the skipped terms).
        var factor: CholeskyFactor
        if seed % 2 == 0 {
            factor = try CholeskyFactor(symmetric: randomSPD(n, using: &rng), dimension: n)
        } else {
            factor = CholeskyFactor(identityScaledBy: 3, dimension: n)
            for _ in 0..<Int.random(in: 0...6, using: &rng) {
                factor.rankOneUpdate((0..<n).map { _ in Bool.random(using: &rng) ? 0 : Double.random(in: -2...2, using: &rng) })
            }
        }
        for _ in 0..<3 {
            let keep = Double.random(in: 0.5...1, using: &rng), add = Double.random(in: 0...1, using: &rng)
            let expected = try #require(Self.referenceDecay(factor.packed, n, keep: keep, add: add))
            for kernel in Self.kernels {
                var decayed = factor
                try decayed.decay(keeping: keep, addingIdentity: add, kernel: kernel)
                #expect(Self.firstDifference(decayed.packed, expected) == nil, "seed \(seed), n \(n), \(kernel)")
            }
            try factor.decay(keeping: keep, addingIdentity: add)
            #expect(Self.firstDifference(factor.packed, expected) == nil, "seed \(seed), n \(n), default kernel")
        }
    }

    /// The first packed index whose bits differ (nil when every bit agrees), so a failure names
    /// one entry instead of printing two triangles.
    static func firstDifference(_ a: [Double], _ b: [Double]) -> Int? {
        guard a.count == b.count else { return -1 }
        return a.indices.first { a[$0].bitPattern != b[$0].bitPattern }
    }

    /// Every decay kernel this CPU runs (the AVX one only where it exists; CI's machines do).
    static let kernels: [CholeskyFactor.DecayKernel] = CholeskyFactor.DecayKernel.hasVector ? [.portable, .vector] : [.portable]

    @Test("a decay whose result is not positive definite throws and leaves the factor unchanged")
    func decayFailure() throws {
        // L Lᵀ = [[1, 1], [1, 1 + 1e-340]] rounds to a singular matrix: the second pivot is 0.
        let small = try CholeskyFactor(lower: [1, 1, 0, 1e-170], dimension: 2)
        // The same singular pair inside a 40 × 40 identity, at columns 10 and 11: column 11,
        // with 29 rows, fails in the AVX kernel's blocked path, not its short-column one.
        let n = 40
        var square = [Double](repeating: 0, count: n * n)
        for i in 0..<n { square[i * n + i] = 1 }
        square[10 * n + 11] = 1       // L[11, 10]
        square[11 * n + 11] = 1e-170  // L[11, 11]
        let large = try CholeskyFactor(lower: square, dimension: n)
        for (singular, order) in [(small, 2), (large, 12)] {
            #expect(Self.referenceDecay(singular.packed, singular.dimension, keep: 1, add: 0) == nil)
            for kernel in Self.kernels {
                var factor = singular
                #expect {
                    try factor.decay(keeping: 1, addingIdentity: 0, kernel: kernel)
                } throws: { error in
                    (error as? NumericsError)?.kind == .notPositiveDefinite && "\(error)".contains("order \(order) is")
                }
                #expect(factor == singular, "\(kernel), order \(order)")
            }
        }
        var factor = small
        try factor.decay(keeping: 1, addingIdentity: 0.5)
        #expect(factor != small)
    }

    @Test("scaling the matrix scales the solution inversely")
    func scale() throws {
        var rng = SplitMix64(seed: 3)
        let a = randomSPD(6, using: &rng)
        var factor = try CholeskyFactor(symmetric: a, dimension: 6)
        let b = [1.0, 2, 3, 4, 5, 6]
        let x = factor.solve(b)
        factor.scaleMatrix(by: 0.5)
        for (p, q) in zip(factor.solve(b), x) { #expect(abs(p - 2 * q) < 1e-9 * max(1, abs(q))) }
    }

    @Test("identity factor solves trivially")
    func identity() {
        let factor = CholeskyFactor(identityScaledBy: 4, dimension: 3)
        #expect(factor.solve([4, 8, 12]) == [1, 2, 3])
    }

    @Test("a matrix that is not positive definite throws, naming the minor")
    func notPositiveDefinite() {
        #expect {
            _ = try CholeskyFactor(symmetric: [1, 2, 2, 1], dimension: 2)
        } throws: { error in
            (error as? NumericsError)?.kind == .notPositiveDefinite && "\(error)".contains("order 2")
        }
    }

    @Test("NaN input throws instead of reaching LAPACK")
    func nonFinite() {
        #expect {
            _ = try CholeskyFactor(symmetric: [1, .nan, .nan, 1], dimension: 2)
        } throws: { ($0 as? NumericsError)?.kind == .nonFinite }
    }
}

@Suite("Cholesky factor: stored factors are checked")
struct CholeskyValidationTests {
    @Test("a stored factor must be a factor: length, finiteness, positive diagonal, zero upper triangle")
    func validation() throws {
        var rng = SplitMix64(seed: 4)
        let good = try CholeskyFactor(symmetric: randomSPD(5, using: &rng), dimension: 5)
        #expect(try CholeskyFactor(lower: good.lower, dimension: 5) == good)
        var cases: [[Double]] = [[], Array(good.lower.dropLast())]
        var nan = good.lower; nan[7] = .nan; cases.append(nan)
        var zeroPivot = good.lower; zeroPivot[2 * 5 + 2] = 0; cases.append(zeroPivot)
        var negativePivot = good.lower; negativePivot[0] = -1; cases.append(negativePivot)
        var upper = good.lower; upper[3 * 5 + 1] = 0.5; cases.append(upper)
        for lower in cases { #expect(throws: NumericsError.self) { try CholeskyFactor(lower: lower, dimension: 5) } }
        #expect(throws: NumericsError.self) { try CholeskyFactor(lower: [1], dimension: -1) }
        // Decoding runs the same checks.
        let json = try JSONEncoder().encode(good)
        #expect(try JSONDecoder().decode(CholeskyFactor.self, from: json) == good)
        let empty = Data(#"{"dimension": 5, "lower": []}"#.utf8)
        #expect(throws: DecodingError.self) { try JSONDecoder().decode(CholeskyFactor.self, from: empty) }
    }
}
