/// The Cholesky factor `L` of a symmetric positive definite matrix `A = L Lᵀ`, in `Double`.
///
/// Double because the learning model accumulates many rank-1 updates into a precision matrix;
/// Float would lose the small eigenvalues that decide the posterior's uncertainty.
///
/// Every operation is our own loop over the stored triangle, summed in a fixed order, with no
/// fused multiply-add: at the model's sizes (D ≈ 60) that is as fast as LAPACK, and the results
/// are bit-identical on any machine and any OpenBLAS thread count, so a session replayed
/// elsewhere continues exactly (a snapshot's restore checks the model's digest). The one O(d³)
/// step, `decay`, has an AVX kernel for CPUs that have it, with the same bits as the portable one.
/// A rank-1 update keeps the factor current in O(d²) instead of refactoring in O(d³).
///
/// Storage: the lower triangle packed column by column (`packed[start(j) + i − j]` is
/// `L[i, j]` for i ≥ j, `start(j) = j·n − j(j−1)/2`), n(n+1)/2 values: half the bytes of a
/// square array (a live session's largest array), and each column still contiguous for the
/// rank-1 update and the solves. `lower` gives the square column-major form.
///
///     var factor = try CholeskyFactor(symmetric: precision, dimension: d)
///     let mean = factor.solve(b)              // A⁻¹ b
///     factor.rankOneUpdate(x)                 // now the factor of A + x xᵀ
public struct CholeskyFactor: Sendable, Hashable {
    /// The order of the matrix.
    public let dimension: Int
    /// `L`'s lower triangle, packed column by column (see the type's storage note).
    public private(set) var packed: [Double]

    /// `L` as a square column-major array (`lower[j·n + i]` is `L[i, j]`), strict upper
    /// triangle zero: the form snapshots store.
    ///
    /// - Complexity: O(dimension²).
    public var lower: [Double] {
        let n = dimension
        var square = [Double](repeating: 0, count: n * n)
        for j in 0..<n {
            let start = packedStart(j, n)
            for i in j..<n { square[j * n + i] = packed[start + i - j] }
        }
        return square
    }

    /// Factors the symmetric positive definite `matrix` (`dimension × dimension`).
    ///
    /// Only the lower triangle (equivalently, by symmetry, either triangle of a row-major
    /// matrix) is read.
    ///
    /// - Parameters:
    ///   - matrix: `dimension²` values.
    ///   - dimension: The order of the matrix.
    /// - Throws: `NumericsError` `.notPositiveDefinite` for a non-positive pivot, `.nonFinite`
    ///   when the matrix holds NaN or an infinity.
    /// - Complexity: O(dimension³).
    public init(symmetric matrix: [Double], dimension: Int) throws(NumericsError) {
        precondition(dimension >= 0 && matrix.count == dimension * dimension,
                     "Cholesky: \(matrix.count) values do not form a \(dimension)×\(dimension) matrix")
        guard matrix.allSatisfy({ $0.isFinite }) else { throw .nonFinite("Cholesky input") }
        self.dimension = dimension
        var a = CholeskyFactor.pack(matrix, dimension)
        try CholeskyFactor.factorInPlace(&a, dimension)
        self.packed = a
    }

    /// The lower triangle of a square column-major matrix, packed.
    private static func pack(_ square: [Double], _ n: Int) -> [Double] {
        var out: [Double] = []
        out.reserveCapacity(n * (n + 1) / 2)
        for j in 0..<n { for i in j..<n { out.append(square[j * n + i]) } }
        return out
    }

    /// Adopts a stored factor after checking that it is one: `dimension²` finite values, a
    /// positive diagonal and a zero strict upper triangle.
    ///
    /// - Parameters:
    ///   - lower: `L`, column-major.
    ///   - dimension: The order.
    /// - Throws: `NumericsError` `.nonFinite` or `.notPositiveDefinite` naming what is wrong.
    /// - Complexity: O(dimension²).
    public init(lower: [Double], dimension: Int) throws(NumericsError) {
        guard dimension >= 0, dimension <= 4_096, lower.count == dimension * dimension else {
            throw NumericsError(kind: .notPositiveDefinite,
                                message: "Cholesky factor: \(lower.count) values do not form a \(dimension)×\(dimension) matrix")
        }
        guard lower.allSatisfy({ $0.isFinite }) else { throw .nonFinite("Cholesky factor") }
        for j in 0..<dimension {
            guard lower[j * dimension + j] > 0 else { throw .notPositiveDefinite(routine: "Cholesky factor", minor: j + 1) }
            for i in 0..<j where lower[j * dimension + i] != 0 {
                throw NumericsError(kind: .notPositiveDefinite,
                                    message: "Cholesky factor: L[\(i), \(j)] above the diagonal is not zero")
            }
        }
        self.dimension = dimension
        self.packed = CholeskyFactor.pack(lower, dimension)
    }

    /// Creates the factor of `scale · I`.
    ///
    /// - Parameters:
    ///   - dimension: The order of the matrix.
    ///   - scale: A positive diagonal value.
    /// - Complexity: O(dimension²).
    public init(identityScaledBy scale: Double, dimension: Int) {
        precondition(scale > 0 && scale.isFinite, "Cholesky: the scale of I must be positive and finite")
        self.dimension = dimension
        var l = [Double](repeating: 0, count: dimension * (dimension + 1) / 2)
        let root = scale.squareRoot()
        for j in 0..<dimension { l[packedStart(j, dimension)] = root }
        self.packed = l
    }

    /// Factors, in place, a packed lower triangle holding A: right-looking, column by column.
    private static func factorInPlace(_ a: inout [Double], _ n: Int) throws(NumericsError) {
        let failed: Int? = a.withUnsafeMutableBufferPointer { choleskyLowerInPlace($0, n) }
        if let failed { throw .notPositiveDefinite(routine: "Cholesky", minor: failed + 1) }
    }

    /// Solves `A x = b`.
    ///
    /// - Parameter b: `dimension` values.
    /// - Returns: `x = A⁻¹ b`.
    /// - Complexity: O(dimension²).
    public func solve(_ b: [Double]) -> [Double] {
        var x = b
        solve(inPlace: &x)
        return x
    }

    /// Solves `A x = b`, overwriting `b` with `x`: `L y = b`, then `Lᵀ x = y`.
    ///
    /// - Parameter b: `dimension` values on entry, the solution on return.
    /// - Complexity: O(dimension²).
    public func solve(inPlace b: inout [Double]) {
        precondition(b.count == dimension, "Cholesky solve: b has \(b.count) values, need \(dimension)")
        let n = dimension
        packed.withUnsafeBufferPointer { l in
            b.withUnsafeMutableBufferPointer { x in
                forwardSubstitute(l, n, x)
                backSubstituteTransposed(l, n, x)
            }
        }
    }

    /// Solves `A z = b` for `count` right-hand sides stored one after another, each result
    /// `solve(_:)`'s bit for bit; where the CPU has AVX, up to sixteen are solved side by side.
    ///
    /// - Parameters:
    ///   - flat: `count × dimension` values: vector v is `flat[v·dimension ..< (v+1)·dimension]`.
    ///   - count: How many vectors.
    /// - Returns: The solutions, laid out as `flat`.
    /// - Complexity: O(dimension² × count).
    public func solve(flat: [Double], count: Int) -> [Double] { solve(flat: flat, count: count, kernel: nil) }

    /// `solve(flat:count:)` with a chosen kernel (nil: the fastest this CPU runs), so tests can
    /// hold both to the same result.
    package func solve(flat: [Double], count: Int, kernel: NumericsKernel?) -> [Double] {
        precondition(count >= 0 && flat.count == count * dimension,
                     "Cholesky solve: \(flat.count) values are not \(count) vectors of \(dimension)")
        var out = flat
        let n = dimension
        guard n > 0, count > 0 else { return out }
        let vector = NumericsKernel.resolve(kernel) == .vector
        packed.withUnsafeBufferPointer { l in
            out.withUnsafeMutableBufferPointer { o in
                if vector { return choleskySolveManyVector(l, n, o, count) }
                for v in 0..<count {
                    let x = UnsafeMutableBufferPointer(rebasing: o[(v * n)..<((v + 1) * n)])
                    forwardSubstitute(l, n, x)
                    backSubstituteTransposed(l, n, x)
                }
            }
        }
        return out
    }

    /// Solves `L y = b` (forward substitution alone): with `A` a precision, `L⁻¹ x` whitens
    /// `x` — its squared norm is `xᵀ A⁻¹ x`.
    ///
    /// - Parameter b: `dimension` values.
    /// - Returns: `y = L⁻¹ b`.
    /// - Complexity: O(dimension²).
    public func solveLower(_ b: [Double]) -> [Double] {
        precondition(b.count == dimension, "Cholesky solve: b has \(b.count) values, need \(dimension)")
        var y = b
        let n = dimension
        packed.withUnsafeBufferPointer { l in y.withUnsafeMutableBufferPointer { forwardSubstitute(l, n, $0) } }
        return y
    }

    /// Returns `xᵀ A⁻¹ x = ‖L⁻¹ x‖²`, the posterior variance along `x` when `A` is a precision.
    ///
    /// - Parameter x: `dimension` values.
    /// - Returns: The quadratic form, never negative.
    /// - Complexity: O(dimension²).
    public func inverseQuadraticForm(_ x: [Double]) -> Double {
        precondition(x.count == dimension, "Cholesky: x has \(x.count) values, need \(dimension)")
        var z = x
        let n = dimension
        packed.withUnsafeBufferPointer { l in z.withUnsafeMutableBufferPointer { forwardSubstitute(l, n, $0) } }
        return z.reduce(0) { $0 + $1 * $1 }
    }

    /// `xᵀ A⁻¹ x` for many vectors.
    ///
    /// - Parameter vectors: Vectors of `dimension` values.
    /// - Returns: One quadratic form per vector, each equal to `inverseQuadraticForm` of it
    ///   bit for bit.
    /// - Complexity: O(dimension² × count).
    public func inverseQuadraticForms(_ vectors: [[Double]]) -> [Double] {
        var flat: [Double] = []
        flat.reserveCapacity(vectors.count * dimension)
        for x in vectors {
            precondition(x.count == dimension, "Cholesky: x has \(x.count) values, need \(dimension)")
            flat.append(contentsOf: x)
        }
        return inverseQuadraticForms(flat: flat, count: vectors.count)
    }

    /// `xᵀ A⁻¹ x` for `count` vectors stored one after another, several at a time (each entry
    /// of the factor is read once per eight vectors).
    ///
    /// - Parameters:
    ///   - flat: `count × dimension` values: vector v is `flat[v·dimension ..< (v+1)·dimension]`.
    ///   - count: How many vectors.
    /// - Returns: One quadratic form per vector, each equal to `inverseQuadraticForm` of it
    ///   bit for bit (the same operations in the same order).
    /// - Complexity: O(dimension² × count).
    public func inverseQuadraticForms(flat: [Double], count: Int) -> [Double] {
        InverseQuadraticForms(self).evaluate(flat: flat, count: count)
    }

    /// Replaces the factor of `A` by the factor of `A + x xᵀ`.
    ///
    /// The classic Givens-style update (Golub & Van Loan §6.5.4): stable, and it keeps the
    /// diagonal positive, so the factor stays valid without a refactorization.
    ///
    /// - Parameter x: `dimension` finite values.
    /// - Complexity: O(dimension²).
    public mutating func rankOneUpdate(_ x: [Double]) {
        precondition(x.count == dimension, "Cholesky update: x has \(x.count) values, need \(dimension)")
        var w = x
        let n = dimension
        packed.withUnsafeMutableBufferPointer { l in
            w.withUnsafeMutableBufferPointer { w in
                for k in 0..<n {
                    // Column k from its diagonal: column[0] is L[k, k], column[i − k] is L[i, k].
                    let column = packedStart(k, n) - k
                    let lkk = l[column + k], wk = w[k]
                    let r = (lkk * lkk + wk * wk).squareRoot()
                    let c = r / lkk, s = wk / lkk, inverseC = 1 / c
                    l[column + k] = r
                    givensColumn(l.baseAddress! + column, w.baseAddress!, from: k + 1, to: n, c: c, s: s, inverseC: inverseC)
                }
            }
        }
    }

    /// Replaces the factor of `A` by the factor of `keep · A + add · I` (exponential
    /// forgetting towards a scaled identity).
    ///
    /// - Parameters:
    ///   - keep: The weight of the old matrix, in (0, 1].
    ///   - add: The identity scale added, ≥ 0.
    /// - Throws: `NumericsError` if the result is not positive definite (it cannot be for
    ///   `add > 0`); the factor is unchanged then.
    /// - Complexity: O(dimension³): dimension³/3 multiplies and adds, each column of the
    ///   result computed whole from the old factor and the finished columns (no Gram matrix
    ///   is stored).
    public mutating func decay(keeping keep: Double, addingIdentity add: Double) throws(NumericsError) {
        try decay(keeping: keep, addingIdentity: add, kernel: nil)
    }

    /// Which implementation of `decay` runs: the same result bit for bit either way.
    package typealias DecayKernel = NumericsKernel

    /// `decay(keeping:addingIdentity:)` with a chosen kernel (nil: the fastest this CPU runs),
    /// so tests can hold both to the same result.
    package mutating func decay(keeping keep: Double, addingIdentity add: Double, kernel: DecayKernel?) throws(NumericsError) {
        precondition(keep > 0 && keep <= 1 && add >= 0, "Cholesky decay: keep must be in (0, 1], add ≥ 0")
        precondition(kernel != .vector || DecayKernel.hasVector, "Cholesky decay: this CPU has no AVX")
        let n = dimension
        guard n > 0 else { return }
        var failed: Int?
        let vector = kernel == .vector || (kernel == nil && DecayKernel.hasVector)
        // Every entry is written before anything reads it: no zeroing first.
        let a = [Double](unsafeUninitializedCapacity: n * (n + 1) / 2) { buffer, count in
            failed = packed.withUnsafeBufferPointer { l in
                vector ? decayedFactorVector(l, n, keep: keep, add: add, into: buffer)
                       : decayedFactor(l, n, keep: keep, add: add, into: buffer)
            }
            // On failure columns after the failed one were never written: keep none.
            count = failed == nil ? n * (n + 1) / 2 : 0
        }
        if let failed { throw .notPositiveDefinite(routine: "Cholesky", minor: failed + 1) }
        packed = a
    }

    /// Multiplies `A = L Lᵀ` by `factor`, i.e. scales `L` by `√factor`.
    ///
    /// - Parameter factor: A positive scale.
    /// - Complexity: O(dimension²).
    public mutating func scaleMatrix(by factor: Double) {
        precondition(factor > 0 && factor.isFinite, "Cholesky: the scale must be positive and finite")
        let root = factor.squareRoot()
        for i in packed.indices { packed[i] *= root }
    }

    /// The matrix `A = L Lᵀ` (symmetric, so row- and column-major agree).
    ///
    /// - Complexity: O(dimension³).
    public var matrix: [Double] {
        let n = dimension
        let lower = self.lower
        var a = [Double](repeating: 0, count: n * n)
        for i in 0..<n {
            for j in 0...i {
                var s = 0.0
                for k in 0...j { s += lower[k * n + i] * lower[k * n + j] }
                a[i * n + j] = s
                a[j * n + i] = s
            }
        }
        return a
    }
}

extension CholeskyFactor: Codable {
    private enum CodingKeys: String, CodingKey { case dimension, lower }

    /// Encodes the dimension and `L` in square form (`lower`), the format every version wrote.
    ///
    /// - Parameter encoder: The encoder.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(dimension, forKey: .dimension)
        try c.encode(lower, forKey: .lower)
    }

    /// Decodes a factor and checks that it is one (see `init(lower:dimension:)`), so a tampered
    /// value is an error here rather than a memory fault in a later update.
    ///
    /// - Parameter decoder: The decoder.
    /// - Throws: `DecodingError.dataCorrupted` naming what is wrong.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        let dimension = try c.decode(Int.self, forKey: .dimension)
        let lower = try c.decode([Double].self, forKey: .lower)
        do { try self.init(lower: lower, dimension: dimension) } catch {
            throw DecodingError.dataCorruptedError(forKey: .lower, in: c, debugDescription: error.message)
        }
    }
}
