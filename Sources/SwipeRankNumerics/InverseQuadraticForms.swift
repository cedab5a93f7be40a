/// `xᵀA⁻¹x` for many vectors against one Cholesky factor, with the factor laid out once.
///
/// The eight-lane kernel reads `L` row by row; `CholeskyFactor` stores it by columns (what its
/// updates and solves want). Building this once lets every batch of vectors against the same
/// factor — the probes of one deck — share one copy. A diagonal factor (a prior `τI` before any
/// evidence) needs only the diagonal: each form is then `Σᵢ (xᵢ / L[i,i])²`, the same bits as
/// the full solve (see `diagonalQuadraticForms`).
///
///     let forms = InverseQuadraticForms(factor)
///     let variances = forms.evaluate(flat: vectors, count: 12)
public struct InverseQuadraticForms: Sendable {
    /// The order of the factor.
    public let dimension: Int
    /// `L`'s lower triangle by rows (empty when `diagonal` is set).
    private let rows: [Double]
    /// `L`'s diagonal when every other entry is zero, else nil.
    private let diagonal: [Double]?

    /// Lays out `factor` for evaluation.
    ///
    /// - Parameter factor: The factor.
    /// - Complexity: O(dimension²).
    public init(_ factor: CholeskyFactor) {
        let n = factor.dimension
        dimension = n
        let packed = factor.packed
        var isDiagonal = true
        for j in 0..<n where isDiagonal {
            let start = packedStart(j, n)
            for i in (j + 1)..<n where packed[start + i - j] != 0 {
                isDiagonal = false
                break
            }
        }
        if isDiagonal {
            diagonal = (0..<n).map { packed[packedStart($0, n)] }
            rows = []
        } else {
            diagonal = nil
            // Every entry is written: no zeroing first.
            rows = [Double](unsafeUninitializedCapacity: n * (n + 1) / 2) { buffer, count in
                packed.withUnsafeBufferPointer { rowMajorLower($0, n, into: buffer) }
                count = n * (n + 1) / 2
            }
        }
    }

    /// `xᵀ A⁻¹ x` for `count` vectors stored one after another.
    ///
    /// - Parameters:
    ///   - flat: `count × dimension` values: vector v is `flat[v·dimension ..< (v+1)·dimension]`.
    ///   - count: How many vectors.
    /// - Returns: One form per vector, each equal to `CholeskyFactor.inverseQuadraticForm` of it
    ///   bit for bit.
    /// - Complexity: O(dimension² × count), O(dimension × count) for a diagonal factor.
    public func evaluate(flat: [Double], count: Int) -> [Double] {
        evaluate(flat: flat, count: count, kernel: nil)
    }

    /// `evaluate(flat:count:)` with a chosen kernel (nil: the fastest this CPU runs), so tests
    /// can hold both to the same result.
    package func evaluate(flat: [Double], count: Int, kernel: NumericsKernel?) -> [Double] {
        let vector = NumericsKernel.resolve(kernel) == .vector
        precondition(count >= 0 && flat.count == count * dimension,
                     "Cholesky: \(flat.count) values are not \(count) vectors of \(dimension)")
        var out = [Double](filling: 0, count: count)
        let n = dimension
        flat.withUnsafeBufferPointer { x in
            out.withUnsafeMutableBufferPointer { out in
                if let diagonal {
                    diagonal.withUnsafeBufferPointer { diagonalQuadraticForms(diagonal: $0, x, count, out) }
                } else {
                    rows.withUnsafeBufferPointer {
                        vector ? inverseQuadraticFormsVector(rows: $0, n, x, count, out) : inverseQuadraticForms(rows: $0, n, x, count, out)
                    }
                }
            }
        }
        return out
    }
}
