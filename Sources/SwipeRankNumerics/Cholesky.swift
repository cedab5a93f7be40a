import CBLAS

/// The Cholesky factor `L` of a symmetric positive definite matrix `A = L Lᵀ`, in `Double`.
///
/// Double because the learning model accumulates many rank-1 updates into a precision matrix;
/// Float would lose the small eigenvalues that decide the posterior's uncertainty.
/// Factorization and solves go to LAPACKE (`dpotrf`, `dpotrs`); LAPACK's `info` is checked in
/// every build configuration. A rank-1 update keeps the factor current in O(d²) instead of
/// refactoring in O(d³).
///
/// Storage: the lower triangle in column-major order (`lower[j·n + i]` is `L[i, j]`, the strict
/// upper triangle is zero), so the rank-1 update walks each column contiguously.
///
///     var factor = try CholeskyFactor(symmetric: precision, dimension: d)
///     let mean = factor.solve(b)              // A⁻¹ b
///     factor.rankOneUpdate(x)                 // now the factor of A + x xᵀ
public struct CholeskyFactor: Sendable, Hashable, Codable {
    /// The order of the matrix.
    public let dimension: Int
    /// `L`, column-major, strict upper triangle zero.
    public private(set) var lower: [Double]

    /// Factors the symmetric positive definite `matrix` (`dimension × dimension`).
    ///
    /// Only the lower triangle (equivalently, by symmetry, either triangle of a row-major
    /// matrix) is read.
    ///
    /// - Parameters:
    ///   - matrix: `dimension²` values.
    ///   - dimension: The order of the matrix.
    /// - Throws: `NumericsError` `.notPositiveDefinite` when LAPACK finds a non-positive pivot,
    ///   `.nonFinite` when the matrix holds NaN or an infinity.
    /// - Complexity: O(dimension³).
    public init(symmetric matrix: [Double], dimension: Int) throws(NumericsError) {
        precondition(dimension >= 0 && matrix.count == dimension * dimension,
                     "Cholesky: \(matrix.count) values do not form a \(dimension)×\(dimension) matrix")
        guard matrix.allSatisfy({ $0.isFinite }) else { throw .nonFinite("Cholesky input") }
        self.dimension = dimension
        self.lower = try CholeskyFactor.factor(matrix, dimension)
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
        var l = [Double](repeating: 0, count: dimension * dimension)
        let root = scale.squareRoot()
        for i in 0..<dimension { l[i * dimension + i] = root }
        self.lower = l
    }

    /// Factors a column-major matrix whose lower triangle holds A, zeroing the strict upper
    /// triangle of the result.
    private static func factor(_ matrix: [Double], _ n: Int) throws(NumericsError) -> [Double] {
        var a = matrix
        for j in 0..<n { for i in 0..<j { a[j * n + i] = 0 } }
        let info = a.withUnsafeMutableBufferPointer { lapackPotrf(dimension: n, a: $0.baseAddress) }
        if info > 0 { throw .notPositiveDefinite(routine: "dpotrf", minor: info) }
        if info < 0 { throw .lapackArgument(routine: "dpotrf", info: info) }
        return a
    }

    /// Solves `A x = b` with `dpotrs`.
    ///
    /// - Parameter b: `dimension` values.
    /// - Returns: `x = A⁻¹ b`.
    /// - Complexity: O(dimension²).
    public func solve(_ b: [Double]) -> [Double] {
        var x = b
        solve(inPlace: &x)
        return x
    }

    /// Solves `A x = b`, overwriting `b` with `x`.
    ///
    /// - Parameter b: `dimension` values on entry, the solution on return.
    /// - Complexity: O(dimension²).
    public func solve(inPlace b: inout [Double]) {
        precondition(b.count == dimension, "Cholesky solve: b has \(b.count) values, need \(dimension)")
        guard dimension > 0 else { return }
        let info = lower.withUnsafeBufferPointer { l in
            b.withUnsafeMutableBufferPointer { lapackPotrs(dimension: dimension, l: l.baseAddress!, b: $0.baseAddress!) }
        }
        // The factor is valid by construction, so a failure here is a programming error.
        precondition(info == 0, "dpotrs failed with info \(info)")
    }

    /// Returns `xᵀ A⁻¹ x = ‖L⁻¹ x‖²`, the posterior variance along `x` when `A` is a precision.
    ///
    /// - Parameter x: `dimension` values.
    /// - Returns: The quadratic form, never negative.
    /// - Complexity: O(dimension²) (one `dtrsv`).
    public func inverseQuadraticForm(_ x: [Double]) -> Double {
        precondition(x.count == dimension, "Cholesky: x has \(x.count) values, need \(dimension)")
        guard dimension > 0 else { return 0 }
        var z = x
        lower.withUnsafeBufferPointer { l in
            z.withUnsafeMutableBufferPointer { forwardSubstitute(dimension: dimension, l: l.baseAddress!, x: $0.baseAddress!) }
        }
        return z.reduce(0) { $0 + $1 * $1 }
    }

    /// `xᵀ A⁻¹ x` for many vectors at once: one `dtrsm` (L⁻¹ X) instead of one `dtrsv` each.
    ///
    /// - Parameter vectors: Vectors of `dimension` values.
    /// - Returns: One quadratic form per vector.
    /// - Complexity: O(dimension² × count).
    public func inverseQuadraticForms(_ vectors: [[Double]]) -> [Double] {
        let n = dimension, m = vectors.count
        guard n > 0, m > 0 else { return [Double](repeating: 0, count: m) }
        var x = [Double](repeating: 0, count: n * m)
        for (j, v) in vectors.enumerated() {
            precondition(v.count == n, "Cholesky: a vector has \(v.count) values, need \(n)")
            for i in 0..<n { x[j * n + i] = v[i] }
        }
        lower.withUnsafeBufferPointer { l in
            x.withUnsafeMutableBufferPointer { forwardSubstituteMany(dimension: n, count: m, l: l.baseAddress!, x: $0.baseAddress!) }
        }
        return (0..<m).map { j in x[(j * n)..<((j + 1) * n)].reduce(0) { $0 + $1 * $1 } }
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
        lower.withUnsafeMutableBufferPointer { l in
            w.withUnsafeMutableBufferPointer { w in
                for k in 0..<n {
                    let column = k * n
                    let lkk = l[column + k], wk = w[k]
                    let r = (lkk * lkk + wk * wk).squareRoot()
                    let c = r / lkk, s = wk / lkk, inverseC = 1 / c
                    l[column + k] = r
                    var i = k + 1
                    while i < n {
                        let lik = (l[column + i] + s * w[i]) * inverseC
                        w[i] = c * w[i] - s * lik
                        l[column + i] = lik
                        i += 1
                    }
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
    /// - Complexity: O(dimension³) (one `dsyrk` and one `dpotrf`).
    public mutating func decay(keeping keep: Double, addingIdentity add: Double) throws(NumericsError) {
        precondition(keep > 0 && keep <= 1 && add >= 0, "Cholesky decay: keep must be in (0, 1], add ≥ 0")
        let n = dimension
        guard n > 0 else { return }
        var a = [Double](repeating: 0, count: n * n)
        lower.withUnsafeBufferPointer { l in
            a.withUnsafeMutableBufferPointer { syrkLower(dimension: n, alpha: keep, l: l.baseAddress!, c: $0.baseAddress!) }
        }
        for i in 0..<n { a[i * n + i] += add }
        lower = try CholeskyFactor.factor(a, n)
    }

    /// Multiplies `A = L Lᵀ` by `factor`, i.e. scales `L` by `√factor`.
    ///
    /// - Parameter factor: A positive scale.
    /// - Complexity: O(dimension²).
    public mutating func scaleMatrix(by factor: Double) {
        precondition(factor > 0 && factor.isFinite, "Cholesky: the scale must be positive and finite")
        let root = factor.squareRoot()
        for i in lower.indices { lower[i] *= root }
    }

    /// The matrix `A = L Lᵀ` (symmetric, so row- and column-major agree).
    ///
    /// - Complexity: O(dimension³).
    public var matrix: [Double] {
        let n = dimension
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

// The `_work` entry points: the plain LAPACKE wrappers first scan every input for NaN (O(D²)
// per call, as much as the solve itself at D ≈ 60); inputs here are finite by construction
// (observations are checked before they reach the factor).

@inline(never)
internal func lapackPotrf(dimension: Int, a: UnsafeMutablePointer<Double>?) -> Int {
    guard dimension > 0 else { return 0 }
    return Int(LAPACKE_dpotrf_work(LAPACK_COL_MAJOR, Int8(UInt8(ascii: "L")), Int32(dimension), a, Int32(dimension)))
}

@inline(never)
internal func lapackPotrs(dimension: Int, l: UnsafePointer<Double>, b: UnsafeMutablePointer<Double>) -> Int {
    Int(LAPACKE_dpotrs_work(LAPACK_COL_MAJOR, Int8(UInt8(ascii: "L")), Int32(dimension), 1, l,
                            Int32(dimension), b, Int32(dimension)))
}

@inline(never)
internal func forwardSubstitute(dimension: Int, l: UnsafePointer<Double>, x: UnsafeMutablePointer<Double>) {
    cblas_dtrsv(CblasColMajor, CblasLower, CblasNoTrans, CblasNonUnit, Int32(dimension), l, Int32(dimension), x, 1)
}

@inline(never)
internal func forwardSubstituteMany(dimension: Int, count: Int, l: UnsafePointer<Double>, x: UnsafeMutablePointer<Double>) {
    cblas_dtrsm(CblasColMajor, CblasLeft, CblasLower, CblasNoTrans, CblasNonUnit, Int32(dimension), Int32(count), 1,
                l, Int32(dimension), x, Int32(dimension))
}

@inline(never)
internal func syrkLower(dimension: Int, alpha: Double, l: UnsafePointer<Double>, c: UnsafeMutablePointer<Double>) {
    cblas_dsyrk(CblasColMajor, CblasLower, CblasNoTrans, Int32(dimension), Int32(dimension), alpha, l,
                Int32(dimension), 0, c, Int32(dimension))
}
