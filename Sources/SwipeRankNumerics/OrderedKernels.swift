// Per-request products summed in one fixed order, without BLAS: OpenBLAS splits a gemv across
// threads when it has more than one, which changes the rounding, so the same session scored
// with 1 or 2 BLAS threads (or on another CPU's kernels) would drift apart. These loops only
// add along the catalog's rows, so each score is Σⱼ wⱼ·xⱼᵢ in j order: bit-identical anywhere.
// Where the CPU has AVX, the same sums run in C with 256-bit registers (kernels.c): the same
// multiplies and adds per output, so the same bits.
import CSwipeRankKernels

extension Matrix {
    /// Computes `y = selfᵀ · x`, adding row by row in order (see the file comment): with
    /// `self` a feature-major d × N catalog and `x` the d weights, `y` is the N scores.
    ///
    /// - Parameters:
    ///   - x: `rows` values.
    ///   - y: Resized to `columns` and overwritten.
    /// - Complexity: O(rows × columns); reads the matrix once.
    public func multiplyTransposedInOrder(_ x: [Float], into y: inout [Float]) {
        multiplyTransposedInOrder(x, into: &y, kernel: nil)
    }

    /// `multiplyTransposedInOrder(_:into:)` with a chosen kernel (nil: the fastest this CPU
    /// runs), so tests can hold both to the same result.
    package func multiplyTransposedInOrder(_ x: [Float], into y: inout [Float], kernel: NumericsKernel?) {
        precondition(x.count == rows, "multiplyTransposedInOrder: x has \(x.count) values, matrix has \(rows) rows")
        // Every output is written below: a new buffer is not zeroed first (a deck's scores
        // start empty, and the fill was a tenth of this product).
        if y.count != columns { y = [Float](unsafeUninitializedCapacity: columns) { _, count in count = columns } }
        let n = columns
        let d = rows
        let vector = NumericsKernel.resolve(kernel) == .vector
        storage.withUnsafeBufferPointer { a in
            x.withUnsafeBufferPointer { w in
            y.withUnsafeMutableBufferPointer { out in
                guard let o = out.baseAddress else { return }
                guard let base = a.baseAddress else {
                    o.update(repeating: 0, count: n)  // no rows (d = 0): every sum is 0
                    return
                }
                if vector {
                    // The matrix has values, so d > 0 and x has a buffer.
                    swiperank_multiply_transposed_avx(base, d, n, w.baseAddress!, o)
                    return
                }
                // 32 outputs at a time held in registers across all rows: each output is still
                // 0 + w₀x₀ + w₁x₁ + … in row order, exactly as row-by-row accumulation, but the
                // outputs are written once instead of once per row, and each row is read 128
                // contiguous bytes at a time.
                var i = 0
                while i + 32 <= n {
                    var a0 = SIMD8<Float>(repeating: 0), a1 = a0, a2 = a0, a3 = a0
                    for r in 0..<d where w[r] != 0 {   // a zero weight adds nothing
                        let p = UnsafeRawPointer(base + r * n + i)
                        let wr = SIMD8<Float>(repeating: w[r])
                        a0 = a0 + wr * p.loadUnaligned(as: SIMD8<Float>.self)
                        a1 = a1 + wr * p.loadUnaligned(fromByteOffset: 32, as: SIMD8<Float>.self)
                        a2 = a2 + wr * p.loadUnaligned(fromByteOffset: 64, as: SIMD8<Float>.self)
                        a3 = a3 + wr * p.loadUnaligned(fromByteOffset: 96, as: SIMD8<Float>.self)
                    }
                    let q = UnsafeMutableRawPointer(o + i)
                    q.storeBytes(of: a0, as: SIMD8<Float>.self)
                    q.storeBytes(of: a1, toByteOffset: 32, as: SIMD8<Float>.self)
                    q.storeBytes(of: a2, toByteOffset: 64, as: SIMD8<Float>.self)
                    q.storeBytes(of: a3, toByteOffset: 96, as: SIMD8<Float>.self)
                    i += 32
                }
                while i < n {
                    var sum: Float = 0
                    for r in 0..<d where w[r] != 0 { sum = sum + w[r] * base[r * n + i] }
                    o[i] = sum
                    i += 1
                }
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
    addScaledFixedPointRows(values, rows: [(offset, scale)], into: &y)
}

/// `addScaledFixedPoint(_:offset:scale:into:)` for several rows in one pass: `y[i]` gets each
/// row's `scale · Float(values[offset + i])` added in the order of `rows`, so every score is the
/// same bits as one pass per row, while the scores are read and written once instead of once
/// per row (a deck adds a student's four terms; the separate passes stalled on the scores).
///
/// - Parameters:
///   - values: The fixed-point values.
///   - rows: Each row's start in `values` and the value of one of its units, in the order added.
///   - y: The scores; `y.count` values are read from each row.
/// - Complexity: O(y.count × rows.count).
public func addScaledFixedPointRows(_ values: ContiguousArray<Int16>, rows: [(offset: Int, scale: Float)], into y: inout [Float]) {
    addScaledFixedPointRows(values, rows: rows, into: &y, kernel: nil)
}

/// `addScaledFixedPointRows(_:rows:into:)` with a chosen kernel (nil: the fastest this CPU
/// runs), so tests can hold both to the same bits.
package func addScaledFixedPointRows(_ values: ContiguousArray<Int16>, rows: [(offset: Int, scale: Float)], into y: inout [Float],
                                     kernel: NumericsKernel?) {
    for row in rows {
        precondition(row.offset >= 0 && row.offset + y.count <= values.count, "addScaledFixedPoint: row out of range")
    }
    values.withUnsafeBufferPointer { v in
        y.withUnsafeMutableBufferPointer { out in
            guard out.count > 0, !rows.isEmpty else { return }
            if NumericsKernel.resolve(kernel) == .vector {
                // Eight scores per step with each row's units widened in one instruction (the
                // SSE2 build's widening took three per four units), the rows' pointers and scales
                // handed over in two small stack arrays.
                withUnsafeTemporaryAllocation(of: UnsafePointer<Int16>?.self, capacity: rows.count) { pointers in
                    withUnsafeTemporaryAllocation(of: Float.self, capacity: rows.count) { scales in
                        for (r, row) in rows.enumerated() {
                            pointers[r] = v.baseAddress! + row.offset
                            scales[r] = row.scale
                        }
                        swiperank_add_scaled_fixed_point_avx(out.baseAddress!, out.count, pointers.baseAddress!, scales.baseAddress!, rows.count)
                    }
                }
                return
            }
            // Up to four rows a pass, their pointers and factors in registers (a loop over the
            // row list inside the lane loop cost more instructions than it saved).
            var first = 0
            while first < rows.count {
                let group = min(4, rows.count - first)
                func row(_ r: Int) -> (UnsafePointer<Int16>, Float) {
                    let entry = rows[first + min(r, group - 1)]
                    return (v.baseAddress! + entry.offset, entry.scale)
                }
                let (p0, s0) = row(0), (p1, s1) = row(1), (p2, s2) = row(2), (p3, s3) = row(3)
                switch group {
                case 1: addScaledFixedPointPass(out, (p0, s0), (p0, s0), (p0, s0), (p0, s0), rows: 1)
                case 2: addScaledFixedPointPass(out, (p0, s0), (p1, s1), (p1, s1), (p1, s1), rows: 2)
                case 3: addScaledFixedPointPass(out, (p0, s0), (p1, s1), (p2, s2), (p2, s2), rows: 3)
                default: addScaledFixedPointPass(out, (p0, s0), (p1, s1), (p2, s2), (p3, s3), rows: 4)
                }
                first += group
            }
        }
    }
}

/// One pass of `addScaledFixedPointRows`: rows 0..<`rows` of the four given (`rows` a constant
/// at each call, so the unused rows' work is folded away), added in order to each score.
@inline(__always)
private func addScaledFixedPointPass(_ out: UnsafeMutableBufferPointer<Float>, _ r0: (UnsafePointer<Int16>, Float),
                                     _ r1: (UnsafePointer<Int16>, Float), _ r2: (UnsafePointer<Int16>, Float),
                                     _ r3: (UnsafePointer<Int16>, Float), rows: Int) {
    // Eight lanes at a time, each exactly the scalar loop's multiply then add per row (an Int16
    // converts to Float exactly), so the result is the same bit for bit.
    let n = out.count, target = UnsafeMutableRawPointer(out.baseAddress!)
    let (q0, q1, q2, q3) = (UnsafeRawPointer(r0.0), UnsafeRawPointer(r1.0), UnsafeRawPointer(r2.0), UnsafeRawPointer(r3.0))
    let (f0, f1, f2, f3) = (SIMD8<Float>(repeating: r0.1), SIMD8<Float>(repeating: r1.1), SIMD8<Float>(repeating: r2.1), SIMD8<Float>(repeating: r3.1))
    @inline(__always) func units(_ q: UnsafeRawPointer, _ i: Int) -> SIMD8<Float> {
        SIMD8<Float>(SIMD8<Int32>(truncatingIfNeeded: q.loadUnaligned(fromByteOffset: 2 * i, as: SIMD8<Int16>.self)))
    }
    var i = 0
    while i + 8 <= n {
        var sum = target.loadUnaligned(fromByteOffset: 4 * i, as: SIMD8<Float>.self)
        sum = sum + f0 * units(q0, i)
        if rows > 1 { sum = sum + f1 * units(q1, i) }
        if rows > 2 { sum = sum + f2 * units(q2, i) }
        if rows > 3 { sum = sum + f3 * units(q3, i) }
        target.storeBytes(of: sum, toByteOffset: 4 * i, as: SIMD8<Float>.self)
        i += 8
    }
    while i < n {
        out[i] += r0.1 * Float(r0.0[i])
        if rows > 1 { out[i] += r1.1 * Float(r1.0[i]) }
        if rows > 2 { out[i] += r2.1 * Float(r2.0[i]) }
        if rows > 3 { out[i] += r3.1 * Float(r3.0[i]) }
        i += 1
    }
}

/// For each column i of the f × n row-major matrix `xt`, `Σⱼ v[j]·xt[j, i]`, summed from 0 in
/// ascending j: each the same bits as a one-vector loop over j, while the n columns are added
/// side by side (contiguous, vectorizable) instead of one strided dot product at a time.
///
/// - Parameters:
///   - xt: f × n values, row-major (column i is one vector).
///   - n: The number of columns.
///   - v: f values.
/// - Returns: n dot products.
/// - Complexity: O(f × n).
public func columnDotsInOrder(_ xt: [Double], columns n: Int, with v: [Double]) -> [Double] {
    columnDotsInOrder(xt, columns: n, with: v, kernel: nil)
}

/// `columnDotsInOrder(_:columns:with:)` with a chosen kernel (nil: the fastest this CPU runs),
/// so tests can hold both to the same result.
package func columnDotsInOrder(_ xt: [Double], columns n: Int, with v: [Double], kernel: NumericsKernel?) -> [Double] {
    var out: [Double] = []
    columnDotsInOrder(xt, columns: n, with: v, from: 0, count: v.count, into: &out, kernel: kernel)
    return out
}

/// `columnDotsInOrder(_:columns:with:)` with the vector at `v[start ..< start + f]`, written into
/// `out` (replaced by n values): a caller with many vectors in one array and one result
/// buffer allocates nothing per vector.
///
/// - Parameters:
///   - xt: f × n values, row-major (column i is one vector).
///   - n: The number of columns.
///   - v: Holds the vector.
///   - start: Where the vector starts in `v`.
///   - f: Its length.
///   - out: Replaced by n dot products (its storage reused).
///   - kernel: nil: the fastest this CPU runs.
/// - Complexity: O(f × n).
package func columnDotsInOrder(_ xt: [Double], columns n: Int, with v: [Double], from start: Int, count f: Int,
                               into out: inout [Double], kernel: NumericsKernel? = nil) {
    precondition(xt.count == f * n, "columnDotsInOrder: \(xt.count) values for \(f) × \(n)")
    precondition(start >= 0 && start + f <= v.count, "columnDotsInOrder: a vector of \(f) from \(start) in \(v.count) values")
    if out.count != n {
        out.removeAll(keepingCapacity: true)
        out.append(contentsOf: repeatElement(0, count: n))
    }
    guard n > 0 else { return }
    let vector = NumericsKernel.resolve(kernel) == .vector
    xt.withUnsafeBufferPointer { x in
        out.withUnsafeMutableBufferPointer { o in
            guard let xb = x.baseAddress, let ob = o.baseAddress else { return }
            if vector {
                // xt has values, so f > 0 and v has a buffer.
                v.withUnsafeBufferPointer { swiperank_column_dots_avx(xb, f, n, $0.baseAddress! + start, ob) }
                return
            }
            // Four columns per SIMD lane group (the pointers may alias as far as the compiler
            // knows, so it would not vectorize the plain loop): lane k is still 0 + v₀x₀ + v₁x₁ + …
            // in j order, a multiply then an add, as the scalar loop.
            var i = 0
            while i + 4 <= n {
                var acc = SIMD4<Double>(repeating: 0)
                for j in 0..<f {
                    acc = acc + SIMD4<Double>(repeating: v[start + j]) * UnsafeRawPointer(xb + j * n + i).loadUnaligned(as: SIMD4<Double>.self)
                }
                UnsafeMutableRawPointer(ob + i).storeBytes(of: acc, as: SIMD4<Double>.self)
                i += 4
            }
            while i < n {
                var sum = 0.0
                for j in 0..<f { sum = sum + v[start + j] * xb[j * n + i] }
                ob[i] = sum
                i += 1
            }
        }
    }
}

/// The sum of `values` in eight interleaved lanes (lane k adds values k, k + 8, …, left to
/// right), the lanes then added in order, then the tail: a fixed order, so the same bits every
/// time, though not `reduce(0, +)`'s. A left-to-right sum waits on each add (about 4 cycles
/// a value); the lanes add side by side.
///
/// - Parameter values: The values.
/// - Returns: Their sum.
/// - Complexity: O(n).
public func laneSum(_ values: [Float]) -> Float {
    values.withUnsafeBufferPointer { v in
        var lanes = SIMD8<Float>(repeating: 0)
        var i = 0
        while i + 8 <= v.count {
            lanes = lanes + UnsafeRawPointer(v.baseAddress! + i).loadUnaligned(as: SIMD8<Float>.self)
            i += 8
        }
        var total: Float = 0
        for k in 0..<8 { total += lanes[k] }
        while i < v.count {
            total += v[i]
            i += 1
        }
        return total
    }
}

/// A grade scale's sample read from a catalog's scores: value i is `raw[r] − offsets[r]` for
/// row r = ⌊i·N/m⌋ (`offsets` empty: `raw[r]`), widened to Double, with the values' least and
/// greatest found as they are read (nil when one is NaN). A deck builds a scale from 1,024
/// such rows; where the CPU has AVX the rows are read eight to a step and their least,
/// greatest and NaN test run on eight lanes (kernels.c), the same values bit for bit (of
/// equal −0 and +0 the range may keep the other).
///
/// - Parameters:
///   - raw: N scores.
///   - offsets: N offsets, or none.
///   - m: How many rows, in 1…N.
///   - kernel: nil for the fastest this CPU runs (tests hold both to the same result).
/// - Returns: The m values and their range.
/// - Complexity: O(m).
package func gradeSample(_ raw: [Float], offsets: [Float], count m: Int, kernel: NumericsKernel? = nil)
    -> (values: [Double], range: (least: Double, greatest: Double)?) {
    let n = raw.count
    precondition(m >= 1 && m <= n && (offsets.isEmpty || offsets.count == n), "gradeSample: \(m) of \(n) rows, \(offsets.count) offsets")
    // ⌊i·N/m⌋: i when m = N; a multiply and a shift when m is a power of two (the sample of
    // every catalog of at least a scale's 1,024 rows). A 64-bit division per row cost more than
    // the rest of the sampling, and stepping the quotient with a carry was a branch per row.
    let shift = m.trailingZeroBitCount
    let byShift = m != n && m == 1 &<< shift
    var least = Double.infinity, greatest = -Double.infinity, nans: UInt64 = 0
    let values = [Double](unsafeUninitializedCapacity: m) { buffer, count in
        raw.withUnsafeBufferPointer { raw in
            offsets.withUnsafeBufferPointer { offsets in
                if NumericsKernel.resolve(kernel) == .vector && (m == n || byShift) {
                    var range: (Float, Float) = (0, 0)
                    let nan = withUnsafeMutablePointer(to: &range) { pair in
                        pair.withMemoryRebound(to: Float.self, capacity: 2) { r in
                            swiperank_grade_sample_avx(raw.baseAddress!, offsets.isEmpty ? nil : offsets.baseAddress, n, m, m == n ? -1 : shift,
                                                       buffer.baseAddress!, r)
                        }
                    }
                    (least, greatest, nans) = (Double(range.0), Double(range.1), nan == 0 ? 0 : 1)
                    count = m
                    return
                }
                // One loop per way of finding a row and its offset, so none is decided per row.
                @inline(__always) func fill(_ rowOf: (Int) -> Int, _ offsetOf: (Int) -> Float) {
                    for i in 0..<m {
                        let row = rowOf(i)
                        let x = Double(raw[row] - offsetOf(row))
                        buffer[i] = x
                        least = x < least ? x : least
                        greatest = x > greatest ? x : greatest
                        // A NaN's exponent bits are all ones and its fraction is not zero
                        // (comparing a value with itself compiled to a branch).
                        nans |= (x.bitPattern & 0x7FFF_FFFF_FFFF_FFFF) > 0x7FF0_0000_0000_0000 ? 1 : 0
                    }
                }
                switch (m == n, byShift, offsets.isEmpty) {
                case (true, _, true): fill({ $0 }, { _ in 0 })
                case (true, _, false): fill({ $0 }, { offsets[$0] })
                case (false, true, true): fill({ ($0 &* n) &>> shift }, { _ in 0 })
                case (false, true, false): fill({ ($0 &* n) &>> shift }, { offsets[$0] })
                case (false, false, true): fill({ $0 * n / m }, { _ in 0 })
                case (false, false, false): fill({ $0 * n / m }, { offsets[$0] })
                }
                count = m
            }
        }
    }
    return (values, nans == 0 ? (least, greatest) : nil)
}
