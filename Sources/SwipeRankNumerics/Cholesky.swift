import CBLAS

/// The Cholesky factor `L` of a symmetric positive definite matrix `A = L Lᵀ`, in `Double`.
///
/// Double because the learning model accumulates hundreds of rank-1 updates into a precision
/// matrix; Float would lose the small eigenvalues that decide the posterior's uncertainty.
/// Factorization and solves go to LAPACKE (`dpotrf`, `dpotrs`); LAPACK's `info` is checked in
/// every build configuration. A rank-1 update keeps the factor current in O(d²) instead of
/// refactoring in O(d³).
///
///     var factor = try CholeskyFactor(symmetric: precision, dimension: d)
///     let mean = factor.solve(b)              // A⁻¹ b
///     factor.rankOneUpdate(x)                 // now the factor of A + x xᵀ
public struct CholeskyFactor: Sendable, Hashable, Codable {
    /// The order of the matrix.
    public let dimension: Int
    /// Row-major lower-triangular factor; the strict upper triangle is zero.
    public private(set) var lower: [Double]

    /// Factors the symmetric positive definite `matrix` (row-major, `dimension × dimension`).
    ///
    /// Only the lower triangle is read.
    ///
    /// - Parameters:
    ///   - matrix: `dimension²` values, row-major.
    ///   - dimension: The order of the matrix.
    /// - Throws: `NumericsError` `.notPositiveDefinite` when LAPACK finds a non-positive pivot,
    ///   `.nonFinite` when the matrix holds NaN or an infinity.
    /// - Complexity: O(dimension³).
    public init(symmetric matrix: [Double], dimension: Int) throws(NumericsError) {
        precondition(dimension >= 0 && matrix.count == dimension * dimension,
                     "Cholesky: \(matrix.count) values do not form a \(dimension)×\(dimension) matrix")
        guard matrix.allSatisfy({ $0.isFinite }) else { throw .nonFinite("Cholesky input") }
        var a = matrix
        for r in 0..<dimension { for c in (r + 1)..<max(r + 1, dimension) { a[r * dimension + c] = 0 } }
        let info = a.withUnsafeMutableBufferPointer { lapackPotrf(dimension: dimension, a: $0.baseAddress) }
        if info > 0 { throw .notPositiveDefinite(routine: "dpotrf", minor: info) }
        if info < 0 { throw .lapackArgument(routine: "dpotrf", info: info) }
        self.dimension = dimension
        self.lower = a
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
    /// - Complexity: O(dimension²).
    public func inverseQuadraticForm(_ x: [Double]) -> Double {
        precondition(x.count == dimension, "Cholesky: x has \(x.count) values, need \(dimension)")
        var z = x
        var sum = 0.0
        // Forward substitution L z = x, accumulating ‖z‖².
        for i in 0..<dimension {
            var s = z[i]
            let row = i * dimension
            for j in 0..<i { s -= lower[row + j] * z[j] }
            s /= lower[row + i]
            z[i] = s
            sum += s * s
        }
        return sum
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
            for k in 0..<n {
                let lkk = l[k * n + k]
                let r = (lkk * lkk + w[k] * w[k]).squareRoot()
                let c = r / lkk, s = w[k] / lkk
                l[k * n + k] = r
                for i in (k + 1)..<max(k + 1, n) {
                    let lik = (l[i * n + k] + s * w[i]) / c
                    w[i] = c * w[i] - s * lik
                    l[i * n + k] = lik
                }
            }
        }
    }

    /// Multiplies `A = L Lᵀ` by `factor`, i.e. scales `L` by `√factor`.
    ///
    /// Used for exponential forgetting of old evidence.
    ///
    /// - Parameter factor: A positive scale.
    /// - Complexity: O(dimension²).
    public mutating func scaleMatrix(by factor: Double) {
        precondition(factor > 0 && factor.isFinite, "Cholesky: the scale must be positive and finite")
        let root = factor.squareRoot()
        for i in lower.indices { lower[i] *= root }
    }

    /// The matrix `A = L Lᵀ`, row-major.
    ///
    /// - Complexity: O(dimension³).
    public var matrix: [Double] {
        let n = dimension
        var a = [Double](repeating: 0, count: n * n)
        for i in 0..<n {
            for j in 0...i {
                var s = 0.0
                for k in 0...j { s += lower[i * n + k] * lower[j * n + k] }
                a[i * n + j] = s
                a[j * n + i] = s
            }
        }
        return a
    }
}

@inline(never)
internal func lapackPotrf(dimension: Int, a: UnsafeMutablePointer<Double>?) -> Int {
    guard dimension > 0 else { return 0 }
    return Int(LAPACKE_dpotrf(LAPACK_ROW_MAJOR, Int8(UInt8(ascii: "L")), Int32(dimension), a, Int32(dimension)))
}

@inline(never)
internal func lapackPotrs(dimension: Int, l: UnsafePointer<Double>, b: UnsafeMutablePointer<Double>) -> Int {
    Int(LAPACKE_dpotrs(LAPACK_ROW_MAJOR, Int8(UInt8(ascii: "L")), Int32(dimension), 1, l,
                       Int32(dimension), b, 1))
}
