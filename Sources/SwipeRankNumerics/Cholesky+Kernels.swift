// The raw-buffer loops behind `CholeskyFactor`: column-major lower triangles, each sum taken in
// one fixed order, so results never depend on the machine or on BLAS threading.

/// Solves `L y = b` in place (column-oriented: each step reads one contiguous column of L).
@inline(__always)
func forwardSubstitute(_ l: UnsafeBufferPointer<Double>, _ n: Int, _ x: UnsafeMutableBufferPointer<Double>) {
    for j in 0..<n {
        let column = j * n
        let xj = x[j] / l[column + j]
        x[j] = xj
        var i = j + 1
        while i < n {
            x[i] -= l[column + i] * xj
            i += 1
        }
    }
}

/// Solves `Lᵀ x = y` in place (each step one dot product down a contiguous column of L).
@inline(__always)
func backSubstituteTransposed(_ l: UnsafeBufferPointer<Double>, _ n: Int, _ x: UnsafeMutableBufferPointer<Double>) {
    var j = n - 1
    while j >= 0 {
        let column = j * n
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

/// Writes the lower triangle of `alpha · L Lᵀ` into `a` (zeroed, n × n column-major).
func lowerGram(_ l: UnsafeBufferPointer<Double>, _ n: Int, _ alpha: Double, _ a: UnsafeMutableBufferPointer<Double>) {
    for k in 0..<n {
        let lk = k * n
        for j in k..<n {
            let ljk = alpha * l[lk + j]
            if ljk == 0 { continue }
            let aj = j * n
            var i = j
            while i < n {
                a[aj + i] += l[lk + i] * ljk
                i += 1
            }
        }
    }
}

/// Factors, in place, the lower triangle of a symmetric matrix (column-major, strict upper
/// triangle zero). Returns nil on success, or the 0-based column whose pivot was not positive.
func choleskyLowerInPlace(_ a: UnsafeMutableBufferPointer<Double>, _ n: Int) -> Int? {
    for j in 0..<n {
        let cj = j * n
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
            if akj != 0 {
                let ck = k * n
                var r = k
                while r < n {
                    a[ck + r] -= a[cj + r] * akj
                    r += 1
                }
            }
            k += 1
        }
    }
    return nil
}
