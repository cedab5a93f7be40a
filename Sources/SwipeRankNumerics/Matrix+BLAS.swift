import CBLAS

// The only file (with Cholesky.swift and BLASThreads.swift) that calls into OpenBLAS.
// Public entry points take Swift types; the C calls sit in small internal functions.

extension Matrix {
    /// Computes `y = alpha · self · x + beta · y` with one `cblas_sgemv`.
    ///
    /// Writing into a caller-owned `y` lets a request reuse its buffer, so steady-state scoring
    /// allocates nothing.
    ///
    ///     var scores = [Float](repeating: 0, count: catalog.rows)
    ///     catalog.multiply(weights, into: &scores)          // scores = X · w
    ///
    /// - Parameters:
    ///   - x: A vector of `columns` values.
    ///   - y: A vector of `rows` values; overwritten when `beta == 0`.
    ///   - alpha: The scale of the product.
    ///   - beta: The scale of the previous `y`.
    /// - Complexity: O(rows × columns).
    public func multiply(_ x: [Float], into y: inout [Float], alpha: Float = 1, beta: Float = 0) {
        precondition(x.count == columns, "gemv: x has \(x.count) values, matrix has \(columns) columns")
        precondition(y.count == rows, "gemv: y has \(y.count) values, matrix has \(rows) rows")
        guard rows > 0 else { return }
        storage.withUnsafeBufferPointer { a in
            x.withUnsafeBufferPointer { xp in
                y.withUnsafeMutableBufferPointer { yp in
                    sgemv(transpose: false, rows: rows, columns: columns, a: a.baseAddress, x: xp.baseAddress,
                          y: yp.baseAddress!, alpha: alpha, beta: beta)
                }
            }
        }
    }

    /// Computes `y = alpha · selfᵀ · x + beta · y` with one `cblas_sgemv`.
    ///
    /// With `self` a k × N block of per-item terms and `x` their k weights, this adds the
    /// weighted terms to N scores in one pass.
    ///
    /// - Parameters:
    ///   - x: A vector of `rows` values.
    ///   - y: A vector of `columns` values.
    ///   - alpha: The scale of the product.
    ///   - beta: The scale of the previous `y`.
    /// - Complexity: O(rows × columns).
    public func multiplyTransposed(_ x: [Float], into y: inout [Float], alpha: Float = 1, beta: Float = 0) {
        precondition(x.count == rows, "gemv: x has \(x.count) values, matrix has \(rows) rows")
        precondition(y.count == columns, "gemv: y has \(y.count) values, matrix has \(columns) columns")
        guard columns > 0 else { return }
        storage.withUnsafeBufferPointer { a in
            x.withUnsafeBufferPointer { xp in
                y.withUnsafeMutableBufferPointer { yp in
                    sgemv(transpose: true, rows: rows, columns: columns, a: a.baseAddress, x: xp.baseAddress,
                          y: yp.baseAddress!, alpha: alpha, beta: beta)
                }
            }
        }
    }

    /// Computes `result = self · other` with one `cblas_sgemm`, reusing `result`'s storage.
    ///
    /// - Parameters:
    ///   - other: A matrix with `columns` rows.
    ///   - result: A `rows × other.columns` matrix; overwritten.
    /// - Complexity: O(rows × columns × other.columns).
    public func multiply(_ other: Matrix, into result: inout Matrix) {
        precondition(columns == other.rows,
                     "gemm: \(rows)×\(columns) · \(other.rows)×\(other.columns) do not conform")
        precondition(result.rows == rows && result.columns == other.columns,
                     "gemm: result must be \(rows)×\(other.columns), is \(result.rows)×\(result.columns)")
        gemm(other, transposeOther: false, into: &result)
    }

    /// The transpose, `columns × rows`.
    ///
    /// - Complexity: O(rows × columns).
    public var transposed: Matrix {
        var t = Matrix(rows: columns, columns: rows)
        storage.withUnsafeBufferPointer { a in
            t.storage.withUnsafeMutableBufferPointer { b in
                for r in 0..<rows { for c in 0..<columns { b[c * rows + r] = a[r * columns + c] } }
            }
        }
        return t
    }

    /// Returns `self · other` (`rows × other.columns`) with one `cblas_sgemm`.
    ///
    /// - Parameter other: A matrix with `columns` rows.
    /// - Returns: The product.
    /// - Complexity: O(rows × columns × other.columns).
    public func multiplied(by other: Matrix) -> Matrix {
        var result = Matrix(rows: rows, columns: other.columns)
        multiply(other, into: &result)
        return result
    }

    /// Computes `result = self · otherᵀ` with one `cblas_sgemm`, reusing `result`'s storage.
    ///
    /// With `self` a batch of preference vectors (students × d) and `other` the catalog
    /// (N × d), `result` holds every student's score for every item (students × N).
    ///
    /// - Parameters:
    ///   - other: A matrix with as many columns as `self`.
    ///   - result: A `rows × other.rows` matrix; overwritten.
    /// - Complexity: O(rows × columns × other.rows).
    public func multiplyTransposed(_ other: Matrix, into result: inout Matrix) {
        precondition(columns == other.columns,
                     "gemm: \(rows)×\(columns) · (\(other.rows)×\(other.columns))ᵀ do not conform")
        precondition(result.rows == rows && result.columns == other.rows,
                     "gemm: result must be \(rows)×\(other.rows), is \(result.rows)×\(result.columns)")
        gemm(other, transposeOther: true, into: &result)
    }

    /// Returns `self · otherᵀ` (`rows × other.rows`) with one `cblas_sgemm`.
    ///
    /// - Parameter other: A matrix with as many columns as `self`.
    /// - Returns: The product.
    /// - Complexity: O(rows × columns × other.rows).
    public func multipliedTransposed(_ other: Matrix) -> Matrix {
        var result = Matrix(rows: rows, columns: other.rows)
        multiplyTransposed(other, into: &result)
        return result
    }

    private func gemm(_ other: Matrix, transposeOther: Bool, into result: inout Matrix) {
        let m = rows, n = result.columns, k = columns
        guard m > 0, n > 0 else { return }
        if k == 0 {
            result.withUnsafeMutableBufferPointer { $0.update(repeating: 0) }
            return
        }
        storage.withUnsafeBufferPointer { a in
            other.storage.withUnsafeBufferPointer { b in
                result.storage.withUnsafeMutableBufferPointer { c in
                    sgemm(m: m, n: n, k: k, a: a.baseAddress!, lda: columns,
                          b: b.baseAddress!, ldb: other.columns, transposeB: transposeOther,
                          c: c.baseAddress!, ldc: n)
                }
            }
        }
    }
}

/// `y = alpha · op(A) · x + beta · y` for a row-major `rows × columns` A; op is Aᵀ when
/// `transpose`. BLAS rejects a zero leading dimension, so an empty A only scales y.
@inline(never)
internal func sgemv(
    transpose: Bool, rows: Int, columns: Int, a: UnsafePointer<Float>?, x: UnsafePointer<Float>?,
    y: UnsafeMutablePointer<Float>, alpha: Float, beta: Float
) {
    guard rows > 0, columns > 0, let a, let x else {
        for i in 0..<(transpose ? columns : rows) { y[i] *= beta }
        return
    }
    cblas_sgemv(CblasRowMajor, transpose ? CblasTrans : CblasNoTrans, Int32(rows), Int32(columns), alpha, a,
                Int32(columns), x, 1, beta, y, 1)
}

@inline(never)
internal func sgemm(
    m: Int, n: Int, k: Int, a: UnsafePointer<Float>, lda: Int, b: UnsafePointer<Float>, ldb: Int,
    transposeB: Bool, c: UnsafeMutablePointer<Float>, ldc: Int
) {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, transposeB ? CblasTrans : CblasNoTrans,
                Int32(m), Int32(n), Int32(k), 1, a, Int32(lda), b, Int32(ldb), 0, c, Int32(ldc))
}

/// The Gram matrix `XᵀX` of a row-major `count × dimension` Double matrix `X` (one `cblas_dsyrk`),
/// as a square row-major `dimension²` array with both triangles filled: the normal equations'
/// matrix of a least-squares or Newton step over many rows (scale each row by √weight first for
/// a weighted one).
///
/// - Parameters:
///   - rows: `count × dimension` values, row after row.
///   - count: The number of rows.
///   - dimension: The number of columns.
/// - Returns: `XᵀX`.
/// - Complexity: O(count × dimension²).
public func gramMatrix(rows: [Double], count: Int, dimension: Int) -> [Double] {
    precondition(count >= 0 && dimension >= 0 && rows.count == count * dimension,
                 "Gram: \(rows.count) values do not form a \(count)×\(dimension) matrix")
    var gram = [Double](repeating: 0, count: dimension * dimension)
    guard count > 0, dimension > 0 else { return gram }
    rows.withUnsafeBufferPointer { x in
        gram.withUnsafeMutableBufferPointer { c in dsyrkTransposed(n: dimension, k: count, a: x.baseAddress!, c: c.baseAddress!) }
    }
    // dsyrk filled the upper triangle; mirror it.
    for i in 0..<dimension { for j in 0..<i { gram[i * dimension + j] = gram[j * dimension + i] } }
    return gram
}

/// `C = AᵀA` (upper triangle) for a row-major `k × n` A.
@inline(never)
internal func dsyrkTransposed(n: Int, k: Int, a: UnsafePointer<Double>, c: UnsafeMutablePointer<Double>) {
    cblas_dsyrk(CblasRowMajor, CblasUpper, CblasTrans, Int32(n), Int32(k), 1, a, Int32(n), 0, c, Int32(n))
}
