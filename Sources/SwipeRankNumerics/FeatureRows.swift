/// The rows of a feature matrix read where they are stored: in row order, or in another order
/// with each row's position (the candidate index's block order).
///
/// Why: a catalog large enough for the candidate index keeps its features in block order for
/// the index's scans; what reads single rows (a card's explanations, a swipe's learning, a
/// score) reads them there through `position(of:)`, so the process holds one copy of the
/// features instead of two (at a million items of 22 features, 88 MB) — and none of its own
/// when the index reads them from a cache file's mapping (`FloatValues`).
///
///     let rows = FeatureRows(permuted: index.values, columns: d, rowAtPosition: index.rowAtPosition)
///     rows[row, j] == features[row, j]   // for every row and column
public struct FeatureRows: Sendable {
    // Row order: the matrix itself. Another order: the values by position (shared with the
    // index that scans them) and each row's position.
    private let matrix: Matrix?
    private let permuted: FloatValues?
    private let positionOfRow: [Int32]?
    /// The number of rows.
    public let rows: Int
    /// The number of feature columns.
    public let columns: Int

    /// Rows stored in row order.
    ///
    /// - Parameter matrix: The features, row-major.
    public init(_ matrix: Matrix) {
        self.matrix = matrix
        permuted = nil
        positionOfRow = nil
        rows = matrix.rows
        columns = matrix.columns
    }

    /// Rows stored in another order.
    ///
    /// - Parameters:
    ///   - values: rowAtPosition.count × `columns` features by position, row-major.
    ///   - columns: Feature columns per row.
    ///   - rowAtPosition: The row stored at each position: a permutation of 0..<count (checked).
    /// - Complexity: O(N): the inverse permutation (4 bytes per row); the values are shared, not
    ///   copied.
    public init(permuted values: FloatValues, columns: Int, rowAtPosition: [Int32]) {
        let n = rowAtPosition.count
        precondition(columns >= 0 && values.count == n * columns, "FeatureRows: \(values.count) values for \(n) rows of \(columns)")
        var position = [Int32](repeating: -1, count: n)
        for (p, row) in rowAtPosition.enumerated() {
            precondition(row >= 0 && Int(row) < n && position[Int(row)] < 0, "FeatureRows: the positions are not a permutation")
            position[Int(row)] = Int32(truncatingIfNeeded: p)
        }
        matrix = nil
        permuted = values
        positionOfRow = position
        rows = n
        self.columns = columns
    }

    /// Whether the rows are stored in row order.
    public var isRowOrder: Bool { positionOfRow == nil }

    /// Where row `row` is stored (the row itself in row order).
    ///
    /// - Complexity: O(1).
    @inline(__always)
    public func position(of row: Int) -> Int {
        guard let positionOfRow else { return row }
        return Int(positionOfRow[row])
    }

    /// One feature of one row.
    public subscript(row: Int, column: Int) -> Float {
        if let matrix { return matrix[row, column] }
        precondition(column >= 0 && column < columns, "FeatureRows: column \(column) out of 0..<\(columns)")
        return permuted.unsafelyUnwrapped[position(of: row) &* columns &+ column]
    }

    /// Calls `body` with the stored values, row-major by position (row `r` starts at
    /// `position(of: r) × columns`); the pointer is valid only inside `body`.
    ///
    /// - Parameter body: Reads the values.
    /// - Returns: What `body` returns.
    public func withUnsafeStoredValues<R>(_ body: (UnsafeBufferPointer<Float>) throws -> R) rethrows -> R {
        if let matrix { return try matrix.withUnsafeBufferPointer(body) }
        return try permuted.unsafelyUnwrapped.withUnsafeBufferPointer(body)
    }

    /// Starts loading these rows' values into the caches (`prefetch(rows:width:)`): a
    /// deck's likely cards, before it builds them.
    ///
    /// - Parameter list: Rows (others are left out).
    package func prefetch(rows list: [Int]) {
        guard columns > 0 else { return }
        let positions = list.compactMap { $0 >= 0 && $0 < rows ? position(of: $0) : nil }
        withUnsafeStoredValues { $0.prefetch(rows: positions, width: columns) }
    }

    /// `weights · row`, the zero weights skipped: bit-identical to `LinearBlockIndex.dot` on
    /// the row-major matrix and to the index's scan.
    ///
    /// - Complexity: O(d).
    public func dot(row: Int, _ weights: [Float]) -> Float {
        precondition(row >= 0 && row < rows, "dot: row \(row) is not in the matrix")
        guard let positionOfRow else { return LinearBlockIndex.dot(matrix.unsafelyUnwrapped, row: row, weights) }
        precondition(weights.count == columns, "dot: \(weights.count) weights for \(columns) columns")
        // Read through the values' own buffer, not `withUnsafeStoredValues`: a large catalog's
        // full scoring calls this once per row (the same sum as the matrix's, in the same order).
        let base = Int(positionOfRow[row]) &* columns
        return permuted.unsafelyUnwrapped.withUnsafeBufferPointer { LinearBlockIndex.dot($0, from: base, weights) }
    }

    /// `dot(row:_:)` of each of `rows`, bit for bit, computed together: a list of scattered
    /// rows (those near a home, a grade scale's sample) is read several rows at a time, so
    /// their cache misses overlap instead of queueing (`LinearBlockIndex.dots`).
    ///
    /// - Parameters:
    ///   - rows: Rows of the matrix, in any order, repeats allowed.
    ///   - weights: `columns` weights.
    /// - Returns: One sum per row of `rows`, in that order.
    /// - Complexity: O(rows.count × d).
    public func dots(rows list: [Int32], _ weights: [Float]) -> [Float] {
        precondition(weights.count == columns, "dots: \(weights.count) weights for \(columns) columns")
        let d = columns
        let bases = list.map { row -> Int in
            precondition(row >= 0 && Int(row) < rows, "dots: row \(row) is not in the matrix")
            return position(of: Int(row)) &* d
        }
        var sums = [Float](repeating: 0, count: list.count)
        withUnsafeStoredValues { x in
            bases.withUnsafeBufferPointer { bases in
                sums.withUnsafeMutableBufferPointer { LinearBlockIndex.dots(x, bases: bases, weights, into: $0) }
            }
        }
        return sums
    }

    /// Adds `weights[j] × row[j]` to `sums[bins[j]]` for each column j in order: a row's
    /// contribution per group of columns (a card's explanations), the same additions in the
    /// same order as a loop over the row-major matrix.
    ///
    /// - Parameters:
    ///   - row: The row.
    ///   - weights: At least `columns` weights.
    ///   - bins: For each column, an index into `sums`.
    ///   - sums: The sums added to.
    /// - Complexity: O(d).
    public func addWeightedRow(_ row: Int, weights: [Float], toBins bins: [Int], of sums: inout [Float]) {
        precondition(row >= 0 && row < rows && weights.count >= columns && bins.count >= columns, "addWeightedRow: row \(row) of \(rows)")
        let base = position(of: row) &* columns, d = columns
        withUnsafeStoredValues { x in
            sums.withUnsafeMutableBufferPointer { sums in
                for j in 0..<d {
                    let bin = bins[j]
                    precondition(bin >= 0 && bin < sums.count, "addWeightedRow: bin \(bin) of \(sums.count)")
                    sums[bin] += weights[j] * x[base &+ j]
                }
            }
        }
    }

    /// Rows as `Double`, each padded with zeros to `stride`, in the order asked
    /// (`Matrix.rowsAsDouble`).
    ///
    /// - Complexity: O(rows.count × stride).
    public func rowsAsDouble(_ rows: [Int], stride: Int) -> [Double] {
        if let matrix { return matrix.rowsAsDouble(rows, stride: stride) }
        precondition(stride >= columns, "rowsAsDouble: a stride of \(stride) is shorter than a row (\(columns))")
        for row in rows { precondition(row >= 0 && row < self.rows, "rowsAsDouble: row \(row) is not in the matrix") }
        let positions = rows.map { position(of: $0) }
        return withUnsafeStoredValues { Matrix.rowsAsDouble(of: $0, columns: columns, at: positions, stride: stride) }
    }

    /// The features in row order: the matrix itself, or a copy gathered from the positions.
    ///
    /// - Complexity: O(1) in row order, else O(N × d).
    public func rowMajor() -> Matrix {
        if let matrix { return matrix }
        let d = columns, n = rows
        var result = Matrix(rows: n, columns: d)
        result.withUnsafeMutableBufferPointer { target in
            withUnsafeStoredValues { source in
                for row in 0..<n {
                    let from = position(of: row) &* d, to = row &* d
                    for j in 0..<d { target[to &+ j] = source[from &+ j] }
                }
            }
        }
        return result
    }
}
