// Per-request products summed in one fixed order, without BLAS: OpenBLAS splits a gemv across
// threads when it has more than one, which changes the rounding, so the same session scored
// with 1 or 2 BLAS threads (or on another CPU's kernels) would drift apart. These loops only
// add along the catalog's rows, so each score is Σⱼ wⱼ·xⱼᵢ in j order: bit-identical anywhere.

extension Matrix {
    /// Computes `y = selfᵀ · x`, adding row by row in order (see the file comment): with
    /// `self` a feature-major d × N catalog and `x` the d weights, `y` is the N scores.
    ///
    /// - Parameters:
    ///   - x: `rows` values.
    ///   - y: Resized to `columns` and overwritten.
    /// - Complexity: O(rows × columns); reads the matrix once.
    public func multiplyTransposedInOrder(_ x: [Float], into y: inout [Float]) {
        precondition(x.count == rows, "multiplyTransposedInOrder: x has \(x.count) values, matrix has \(rows) rows")
        if y.count != columns { y = [Float](repeating: 0, count: columns) }
        let n = columns
        storage.withUnsafeBufferPointer { a in
            y.withUnsafeMutableBufferPointer { out in
                for i in 0..<n { out[i] = 0 }
                for r in 0..<rows {
                    let w = x[r]
                    if w == 0 { continue }
                    let row = UnsafeBufferPointer(rebasing: a[(r * n)..<((r + 1) * n)])
                    for i in 0..<n { out[i] += w * row[i] }
                }
            }
        }
    }
}

/// Adds `scale · Float(values[offset + i])` to `y[i]` for every i: one row of a fixed-point
/// block (per-student terms stored as `Int16`) added to N scores.
///
/// - Parameters:
///   - values: The fixed-point values.
///   - offset: Where the row starts in `values`.
///   - scale: The value of one unit.
///   - y: The scores; `y.count` values are read from `values` starting at `offset`.
/// - Complexity: O(y.count).
public func addScaledFixedPoint(_ values: ContiguousArray<Int16>, offset: Int, scale: Float, into y: inout [Float]) {
    precondition(offset >= 0 && offset + y.count <= values.count, "addScaledFixedPoint: row out of range")
    values.withUnsafeBufferPointer { v in
        y.withUnsafeMutableBufferPointer { out in
            for i in 0..<out.count { out[i] += scale * Float(v[offset + i]) }
        }
    }
}
