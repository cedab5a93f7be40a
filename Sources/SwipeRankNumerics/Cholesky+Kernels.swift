// The raw-buffer loops behind `CholeskyFactor`: packed lower triangles (column j's entries from
// the diagonal down start at `packedStart(j, n)`), each sum taken in one fixed order, so
// results never depend on the machine or on BLAS threading.

/// Where column `j` of an n × n packed lower triangle starts (its diagonal entry).
@inline(__always)
func packedStart(_ j: Int, _ n: Int) -> Int { j * n - (j * (j - 1)) / 2 }

/// `y[i] += alpha · x[i]` for `i < count`, four lanes at a time. A multiply then an add per
/// element, exactly as the scalar loop (no fused multiply-add), so the result is the same on
/// any CPU; the explicit vectors matter because the compiler cannot prove `x` and `y` apart.
@inline(__always)
func axpy(_ alpha: Double, _ x: UnsafePointer<Double>, _ y: UnsafeMutablePointer<Double>, _ count: Int) {
    var i = 0
    let a = SIMD4<Double>(repeating: alpha)
    while i + 4 <= count {
        let xv = UnsafeRawPointer(x + i).loadUnaligned(as: SIMD4<Double>.self)
        let yv = UnsafeRawPointer(y + i).loadUnaligned(as: SIMD4<Double>.self)
        UnsafeMutableRawPointer(y + i).storeBytes(of: yv + xv * a, as: SIMD4<Double>.self)
        i += 4
    }
    while i < count {
        y[i] += x[i] * alpha
        i += 1
    }
}

/// Solves `L y = b` in place (column-oriented: each step reads one contiguous column of L).
@inline(__always)
func forwardSubstitute(_ l: UnsafeBufferPointer<Double>, _ n: Int, _ x: UnsafeMutableBufferPointer<Double>) {
    for j in 0..<n {
        let start = packedStart(j, n)
        let xj = x[j] / l[start]
        x[j] = xj
        if j + 1 < n { axpy(-xj, l.baseAddress! + start + 1, x.baseAddress! + j + 1, n - j - 1) }
    }
}

/// Solves `Lᵀ x = y` in place (each step one dot product down a contiguous column of L).
@inline(__always)
func backSubstituteTransposed(_ l: UnsafeBufferPointer<Double>, _ n: Int, _ x: UnsafeMutableBufferPointer<Double>) {
    var j = n - 1
    while j >= 0 {
        let column = packedStart(j, n) - j
        var s = x[j]
        var i = j + 1
        while i < n {
            s -= l[column + i] * x[i]
            i += 1
        }
        x[j] = s / l[column + j]
        j -= 1
    }
}

/// Adds the lower triangle of `alpha · L Lᵀ` to `a` (packed, zeroed by the caller).
func lowerGram(_ l: UnsafeBufferPointer<Double>, _ n: Int, _ alpha: Double, _ a: UnsafeMutableBufferPointer<Double>) {
    for k in 0..<n {
        // Column k of L from row k: lk[i] is L[i, k].
        let lk = packedStart(k, n) - k
        for j in k..<n {
            let ljk = alpha * l[lk + j]
            if ljk == 0 { continue }
            axpy(ljk, l.baseAddress! + lk + j, a.baseAddress! + packedStart(j, n), n - j)
        }
    }
}

/// Factors, in place, the packed lower triangle of a symmetric matrix. Returns nil on success,
/// or the 0-based column whose pivot was not positive.
func choleskyLowerInPlace(_ a: UnsafeMutableBufferPointer<Double>, _ n: Int) -> Int? {
    for j in 0..<n {
        // Column j from row j: a[cj + i] is A[i, j].
        let cj = packedStart(j, n) - j
        let pivot = a[cj + j]
        guard pivot > 0, pivot.isFinite else { return j }
        let root = pivot.squareRoot()
        a[cj + j] = root
        let inverse = 1 / root
        var i = j + 1
        while i < n {
            a[cj + i] *= inverse
            i += 1
        }
        // Right-looking update of the trailing lower triangle by column j.
        var k = j + 1
        while k < n {
            let akj = a[cj + k]
            if akj != 0 { axpy(-akj, a.baseAddress! + cj + k, a.baseAddress! + packedStart(k, n), n - k) }
            k += 1
        }
    }
    return nil
}

/// One column of the rank-1 update: for i in `from..<to`, `lᵢ ← (lᵢ + s·wᵢ)/c` and
/// `wᵢ ← c·wᵢ − s·lᵢ(new)`, four lanes at a time with the scalar loop's exact operations.
@inline(__always)
func givensColumn(_ l: UnsafeMutablePointer<Double>, _ w: UnsafeMutablePointer<Double>, from: Int, to: Int,
                  c: Double, s: Double, inverseC: Double) {
    var i = from
    let cv = SIMD4<Double>(repeating: c), sv = SIMD4<Double>(repeating: s), iv = SIMD4<Double>(repeating: inverseC)
    while i + 4 <= to {
        let lv = UnsafeRawPointer(l + i).loadUnaligned(as: SIMD4<Double>.self)
        let wv = UnsafeRawPointer(w + i).loadUnaligned(as: SIMD4<Double>.self)
        let lik = (lv + sv * wv) * iv
        UnsafeMutableRawPointer(w + i).storeBytes(of: cv * wv - sv * lik, as: SIMD4<Double>.self)
        UnsafeMutableRawPointer(l + i).storeBytes(of: lik, as: SIMD4<Double>.self)
        i += 4
    }
    while i < to {
        let lik = (l[i] + s * w[i]) * inverseC
        w[i] = c * w[i] - s * lik
        l[i] = lik
        i += 1
    }
}

/// Copies the packed lower triangle (by columns) into `rows` by rows: row i's entries
/// L[i, 0…i] start at i(i + 1)/2. In the packed columns L[i, j + 1] comes n − j − 1 entries
/// after L[i, j].
func rowMajorLower(_ l: UnsafeBufferPointer<Double>, _ n: Int, into rows: UnsafeMutableBufferPointer<Double>) {
    var r = 0
    for i in 0..<n {
        var c = i
        for j in 0...i {
            rows[r + j] = l[c]
            c += n - j - 1
        }
        r += i + 1
    }
}

/// `xᵀA⁻¹x = ‖L⁻¹x‖²` for `count` vectors of `n` values stored one after another in `x`, eight
/// at a time in the lanes of one `SIMD8`, with `rows` the factor by rows (`rowMajorLower`).
/// Each lane does exactly the operations of `forwardSubstitute` followed by the sum of squares,
/// in the same order: element i of `L⁻¹x` is `(xᵢ + Σⱼ₍ⱼ₌₀…ᵢ₋₁₎ L[i,j]·(−zⱼ)) / L[i,i]` summed in
/// ascending j there too (the column-oriented loop adds column j's term to every later element
/// before column j + 1's). So every result equals the one-vector path bit for bit, while each
/// entry of L is loaded once per eight vectors instead of once per vector (a probe's
/// candidates share one factor).
func inverseQuadraticForms(rows: UnsafeBufferPointer<Double>, _ n: Int, _ x: UnsafeBufferPointer<Double>, _ count: Int,
                           _ out: UnsafeMutableBufferPointer<Double>) {
    guard count > 0 else { return }
    guard n > 0 else {
        for v in 0..<count { out[v] = 0 }
        return
    }
    let scratch = UnsafeMutableRawBufferPointer.allocate(byteCount: 2 * n * MemoryLayout<SIMD8<Double>>.stride,
                                                         alignment: MemoryLayout<SIMD8<Double>>.alignment)
    defer { scratch.deallocate() }
    var v = 0
    while v < count {
        // Eight vectors at a time; a last group of four or fewer in four lanes (a window of 12
        // would otherwise compute 16).
        if count - v > 4 {
            v += quadraticFormGroup(SIMD8<Double>.self, rows: rows, n, x, from: v, count: count, out, scratch: scratch)
        } else {
            v += quadraticFormGroup(SIMD4<Double>.self, rows: rows, n, x, from: v, count: count, out, scratch: scratch)
        }
    }
}

/// The same forms when L is diagonal (no evidence yet: the prior τI): each is Σᵢ (xᵢ / L[i,i])²
/// in ascending i. Bit for bit the full kernel's result: there every off-diagonal term adds
/// L[i,j]·(−zⱼ) = ±0 to a finite sum, which leaves it unchanged (at most the sign of a zero
/// sum flips, and a zero's square is +0 either way).
func diagonalQuadraticForms(diagonal: UnsafeBufferPointer<Double>, _ x: UnsafeBufferPointer<Double>, _ count: Int,
                            _ out: UnsafeMutableBufferPointer<Double>) {
    let n = diagonal.count
    for v in 0..<count {
        var sum = 0.0
        let start = v * n
        for i in 0..<n {
            let z = x[start + i] / diagonal[i]
            sum = sum + z * z
        }
        out[v] = sum
    }
}

/// One group of `inverseQuadraticForms`: vectors `from…` in the lanes of `Lanes` (fewer when
/// `count` ends first). Returns how many vectors it did.
@inline(__always)
private func quadraticFormGroup<Lanes: SIMD>(_: Lanes.Type, rows: UnsafeBufferPointer<Double>, _ n: Int,
                                             _ x: UnsafeBufferPointer<Double>, from v: Int, count: Int,
                                             _ out: UnsafeMutableBufferPointer<Double>,
                                             scratch: UnsafeMutableRawBufferPointer) -> Int where Lanes.Scalar == Double {
    let negated = scratch.baseAddress!.bindMemory(to: Lanes.self, capacity: 2 * n)
    let group = negated + n
    let lanes = min(Lanes.scalarCount, count - v)
    // The group's vectors lane by lane; unused lanes stay 0 (0 / L[i,i] = 0: nothing
    // non-finite appears in them).
    for i in 0..<n { group[i] = Lanes(repeating: 0) }
    for lane in 0..<lanes {
        let start = (v + lane) * n
        for i in 0..<n { group[i][lane] = x[start + i] }
    }
    var sum = Lanes(repeating: 0)
    for i in 0..<n {
        var s = group[i]
        let r = i * (i + 1) / 2
        var j = 0
        while j < i {
            s = s + Lanes(repeating: rows[r + j]) * negated[j]
            j += 1
        }
        let z = s / Lanes(repeating: rows[r + i])
        negated[i] = -z
        sum = sum + z * z
    }
    for lane in 0..<lanes { out[v + lane] = sum[lane] }
    return lanes
}
