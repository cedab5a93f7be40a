import CSwipeRankKernels

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
/// after L[i, j]. Read in packed order and written by a running offset (L[i + 1, j] is i + 1
/// entries after L[i, j] in `rows`): a deck lays out its factor once, and the gather by rows
/// with its index arithmetic cost three times as much.
func rowMajorLower(_ l: UnsafeBufferPointer<Double>, _ n: Int, into rows: UnsafeMutableBufferPointer<Double>) {
    precondition(l.count >= n * (n + 1) / 2 && rows.count >= n * (n + 1) / 2, "rowMajorLower: buffers shorter than the triangle")
    guard n > 0, let source = l.baseAddress, let target = rows.baseAddress else { return }
    var c = 0
    for j in 0..<n {
        var r = j * (j + 1) / 2 + j
        for i in j..<n {
            target[r] = source[c]
            c &+= 1
            r &+= i &+ 1
        }
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

/// The factor of `keep · L Lᵀ + add · I`, written to `out` (packed like `l`, a separate
/// buffer): the forgetting step, fused and left-looking. Returns nil on success, or the 0-based
/// column whose pivot was not positive.
///
/// Bit for bit the result of forming `keep · L Lᵀ` (column by column of L, as an outer-product
/// sum), adding `add` to its diagonal and factoring it with `choleskyLowerInPlace`, the path
/// every earlier version took: every entry receives the same products in the same order —
/// `keep·L[j,k] · L[i,k]` for ascending k ≤ j, then `add` on the diagonal, then
/// `−L'[j,m] · L'[i,m]` for ascending m < j, each a multiply then an add, skipping the same
/// zero multipliers — so a model's digest does not depend on which path ran. It is faster
/// because column j is finished whole before the next: a block of its rows stays in registers
/// while the earlier columns stream past, instead of every entry of the trailing triangle being
/// loaded and stored once per column (two loads and a store per multiply-add, now one load).
func decayedFactor(_ l: UnsafeBufferPointer<Double>, _ n: Int, keep: Double, add: Double,
                   into out: UnsafeMutableBufferPointer<Double>) -> Int? {
    guard n > 0 else { return nil }
    let old = l.baseAddress!, new = out.baseAddress!
    // Scratch on the stack: the columns' bases, then column j's terms (a source column and its
    // multiplier each; Gram terms first, then the finished columns).
    return withUnsafeTemporaryAllocation(of: UnsafePointer<Double>.self, capacity: 4 * n) { pointers in
        withUnsafeTemporaryAllocation(of: Double.self, capacity: 2 * n) { multipliers in
            // Where each column's row 0 would be, old and new (row i is at `base + i`), computed
            // once: the lists below read them n²/2 times.
            let oldColumns = pointers.baseAddress!, newColumns = pointers.baseAddress! + n
            let sources = pointers.baseAddress! + 2 * n
            for k in 0..<n {
                let offset = packedStart(k, n) - k
                oldColumns[k] = old + offset
                newColumns[k] = UnsafePointer(new + offset)
            }
            for j in 0..<n {
                var gram = 0
                for k in 0...j {
                    let g = keep * oldColumns[k][j]
                    if g == 0 { continue }
                    sources[gram] = oldColumns[k]
                    multipliers[gram] = g
                    gram &+= 1
                }
                var count = gram
                for m in 0..<j {
                    let h = newColumns[m][j]
                    if h == 0 { continue }
                    sources[count] = newColumns[m]
                    multipliers[count] = -h
                    count &+= 1
                }
                let column = UnsafeMutablePointer(mutating: newColumns[j])
                let terms = DecayTerms(sources: UnsafePointer(sources), multipliers: UnsafePointer(multipliers.baseAddress!),
                                       gram: gram, count: count, add: add)
                guard terms.fill(column, rows: j..<n) else { return j }
            }
            return nil
        }
    }
}

/// The contributions to one column in `decayedFactor`: `count` source columns with their
/// multipliers, the first `gram` from the old factor, `add` between the two groups on the
/// diagonal. Each sum starts at +0 and adds `source · multiplier` in list order.
private struct DecayTerms {
    let sources: UnsafePointer<UnsafePointer<Double>>
    let multipliers: UnsafePointer<Double>
    let gram: Int
    let count: Int
    let add: Double

    /// Fills `column` (row i at `column + i`) over `rows`, whose first row is the diagonal:
    /// the first block holds the pivot; every other row is its sum times the inverse of the
    /// pivot's root. Blocks of 16 rows, then one each of 8, 4 and 2 as the rows left allow; a
    /// last single row is done as a pair with the row before it (recomputed, same result).
    /// Returns false, the rest unwritten, if the pivot is not positive.
    @inline(__always)
    func fill(_ column: UnsafeMutablePointer<Double>, rows: Range<Int>) -> Bool {
        let j = rows.lowerBound, n = rows.upperBound
        let inverse: Double?
        var i: Int
        switch n - j {
        case 16...: (inverse, i) = (first(sum16(from: j, diagonal: true), column + j), j + 16)
        case 8...: (inverse, i) = (first(sum(SIMD8<Double>.self, from: j, diagonal: true), column + j), j + 8)
        case 4...: (inverse, i) = (first(sum(SIMD4<Double>.self, from: j, diagonal: true), column + j), j + 4)
        case 2...: (inverse, i) = (first(sum(SIMD2<Double>.self, from: j, diagonal: true), column + j), j + 2)
        default:
            let pivot = diagonal(j)
            guard pivot > 0, pivot.isFinite else { return false }
            column[j] = pivot.squareRoot()
            return true
        }
        guard let inverse else { return false }
        while n - i >= 16 {
            store(sum16(from: i, diagonal: false), inverse, column + i)
            i += 16
        }
        if n - i >= 8 {
            store(sum(SIMD8<Double>.self, from: i, diagonal: false), inverse, column + i)
            i += 8
        }
        if n - i >= 4 {
            store(sum(SIMD4<Double>.self, from: i, diagonal: false), inverse, column + i)
            i += 4
        }
        if n - i >= 2 {
            store(sum(SIMD2<Double>.self, from: i, diagonal: false), inverse, column + i)
            i += 2
        }
        // i ≥ j + 2 here, so the pair never touches the diagonal.
        if n - i == 1 { store(sum(SIMD2<Double>.self, from: i - 1, diagonal: false), inverse, column + i - 1) }
        return true
    }

    /// Stores the first block: the pivot's root in lane 0, the other lanes divided by it (times
    /// its inverse, as the factorization always did). Returns that inverse, or nil if the pivot
    /// is not positive.
    @inline(__always)
    private func first<Block: SIMD>(_ block: Block, _ at: UnsafeMutablePointer<Double>) -> Double? where Block.Scalar == Double {
        let pivot = block[0]
        guard pivot > 0, pivot.isFinite else { return nil }
        let root = pivot.squareRoot()
        let inverse = 1 / root
        var scaled = block * Block(repeating: inverse)
        scaled[0] = root
        UnsafeMutableRawPointer(at).storeBytes(of: scaled, as: Block.self)
        return inverse
    }

    @inline(__always)
    private func store<Block: SIMD>(_ block: Block, _ inverse: Double, _ at: UnsafeMutablePointer<Double>) where Block.Scalar == Double {
        UnsafeMutableRawPointer(at).storeBytes(of: block * Block(repeating: inverse), as: Block.self)
    }

    /// Row j's sum alone, with `add` after the Gram terms.
    @inline(__always)
    func diagonal(_ j: Int) -> Double {
        var s = 0.0
        var t = 0
        while t < gram {
            s = s + sources[t][j] * multipliers[t]
            t += 1
        }
        s = s + add
        while t < count {
            s = s + sources[t][j] * multipliers[t]
            t += 1
        }
        return s
    }

    /// Rows `i..<i + Lanes.scalarCount`; with `diagonal`, lane 0 is the diagonal row and gets
    /// `add` after the Gram terms (the other lanes get +0, which leaves a sum that started at
    /// +0 unchanged: such a sum is never −0).
    @inline(__always)
    func sum<Lanes: SIMD>(_: Lanes.Type, from i: Int, diagonal: Bool) -> Lanes where Lanes.Scalar == Double {
        var s = Lanes(repeating: 0)
        var t = 0
        for phase in 0..<2 {
            let end = phase == 0 ? gram : count
            while t < end {
                s = s + UnsafeRawPointer(sources[t] + i).loadUnaligned(as: Lanes.self) * Lanes(repeating: multipliers[t])
                t += 1
            }
            if phase == 0 && diagonal { s = s + Self.lane0(add) }
        }
        return s
    }

    /// `value` in lane 0, +0 in the others.
    @inline(__always)
    static func lane0<Lanes: SIMD>(_ value: Double) -> Lanes where Lanes.Scalar == Double {
        var v = Lanes(repeating: 0)
        v[0] = value
        return v
    }

    /// Sixteen rows as two independent sums (twice the additions in flight), laid out as one
    /// `SIMD16`.
    @inline(__always)
    func sum16(from i: Int, diagonal: Bool) -> SIMD16<Double> {
        var low = SIMD8<Double>(repeating: 0), high = SIMD8<Double>(repeating: 0)
        var t = 0
        for phase in 0..<2 {
            let end = phase == 0 ? gram : count
            while t < end {
                let source = UnsafeRawPointer(sources[t] + i)
                let m = SIMD8<Double>(repeating: multipliers[t])
                low = low + source.loadUnaligned(as: SIMD8<Double>.self) * m
                high = high + (source + 8 * MemoryLayout<Double>.stride).loadUnaligned(as: SIMD8<Double>.self) * m
                t += 1
            }
            if phase == 0 && diagonal { low = low + Self.lane0(add) }
        }
        return SIMD16(lowHalf: low, highHalf: high)
    }
}

/// Whether this CPU and its OS run the AVX kernels (kernels.c); checked once.
let vectorKernelAvailable = swiperank_has_avx() == 1

/// Which implementation of a kernel that has an AVX twin runs: the same result bit for bit
/// either way (kernels.c), so tests can hold both to it.
package enum NumericsKernel: Sendable {
    /// Plain Swift (SSE2 on x86-64): every machine.
    case portable
    /// 256-bit AVX (C): only where `hasVector`.
    case vector

    /// Whether this CPU runs the AVX kernels (checked once).
    package static var hasVector: Bool { vectorKernelAvailable }

    /// `kernel`, or the fastest this CPU runs when nil.
    static func resolve(_ kernel: NumericsKernel?) -> NumericsKernel {
        precondition(kernel != .vector || vectorKernelAvailable, "the AVX kernel was asked for on a CPU without AVX")
        return kernel ?? (vectorKernelAvailable ? .vector : .portable)
    }
}

/// `count` solves `A z = b` in place with 256-bit AVX (kernels.c), vector v at
/// `b[v·n ..< (v+1)·n]`: each the portable `forwardSubstitute` then `backSubstituteTransposed`
/// bit for bit, up to sixteen side by side (the back substitution is a chain of dependent
/// adds per vector; sixteen chains hide its latency). Call only when `vectorKernelAvailable`.
func choleskySolveManyVector(_ l: UnsafeBufferPointer<Double>, _ n: Int, _ b: UnsafeMutableBufferPointer<Double>, _ count: Int) {
    guard n > 0, count > 0 else { return }
    let scratch = UnsafeMutableRawBufferPointer.allocate(byteCount: 16 * n * MemoryLayout<Double>.stride, alignment: 32)
    defer { scratch.deallocate() }
    swiperank_cholesky_solve_many_avx(l.baseAddress!, n, b.baseAddress!, count, scratch.baseAddress!.assumingMemoryBound(to: Double.self))
}

/// `inverseQuadraticForms` with 256-bit AVX (kernels.c): the same results bit for bit, up to
/// sixteen vectors at a time. Call only when `vectorKernelAvailable`.
func inverseQuadraticFormsVector(rows: UnsafeBufferPointer<Double>, _ n: Int, _ x: UnsafeBufferPointer<Double>, _ count: Int,
                                 _ out: UnsafeMutableBufferPointer<Double>) {
    guard count > 0 else { return }
    guard n > 0 else {
        for v in 0..<count { out[v] = 0 }
        return
    }
    let scratch = UnsafeMutableRawBufferPointer.allocate(byteCount: 32 * n * MemoryLayout<Double>.stride, alignment: 32)
    defer { scratch.deallocate() }
    swiperank_inverse_quadratic_forms_avx(rows.baseAddress!, n, x.baseAddress!, count, out.baseAddress!,
                                          scratch.baseAddress!.assumingMemoryBound(to: Double.self))
}

/// `decayedFactor` with 256-bit AVX (kernels.c): the same result bit for bit, the same
/// contract. Call only when `vectorKernelAvailable`.
func decayedFactorVector(_ l: UnsafeBufferPointer<Double>, _ n: Int, keep: Double, add: Double,
                         into out: UnsafeMutableBufferPointer<Double>) -> Int? {
    guard n > 0 else { return nil }
    return withUnsafeTemporaryAllocation(of: UnsafePointer<Double>?.self, capacity: 4 * n) { pointers in
        withUnsafeTemporaryAllocation(of: Double.self, capacity: 2 * n) { multipliers in
            let failed = swiperank_decayed_factor_avx(l.baseAddress!, n, keep, add, out.baseAddress!,
                                                      pointers.baseAddress!, multipliers.baseAddress!)
            return failed < 0 ? nil : failed
        }
    }
}
