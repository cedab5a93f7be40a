/// The rows of a feature matrix read where they are stored: in row order, or in another order
/// with each row's position (the candidate index's block order).
///
/// Why: a catalog large enough for the candidate index keeps its features in block order for
/// the index's scans; what reads single rows (a card's explanations, a swipe's learning, a
/// score) reads them there through `position(of:)`, so the process holds one copy of the
/// features instead of two (at a million items of 22 features, 88 MB).
///
///     let rows = FeatureRows(permuted: index.values, columns: d, rowAtPosition: index.rowAtPosition)
///     rows[row, j] == features[row, j]   // for every row and column
public struct FeatureRows: Sendable {
    /// The stored rows: row `r` of the features is stored row `position(of: r)`.
    public let stored: Matrix
    // Each row's position in `stored`; nil when stored in row order.
    private let positionOfRow: [Int32]?

    /// Rows stored in row order.
    ///
    /// - Parameter matrix: The features, row-major.
    public init(_ matrix: Matrix) {
        stored = matrix
        positionOfRow = nil
    }

    /// Rows stored in another order.
    ///
    /// - Parameters:
    ///   - values: rowAtPosition.count × `columns` features by position, row-major.
    ///   - columns: Feature columns per row.
    ///   - rowAtPosition: The row stored at each position: a permutation of 0..<count (checked).
    /// - Complexity: O(N): the inverse permutation (4 bytes per row); the values are shared, not
    ///   copied.
    public init(permuted values: [Float], columns: Int, rowAtPosition: [Int32]) {
        let n = rowAtPosition.count
        precondition(values.count == n * columns, "FeatureRows: \(values.count) values for \(n) rows of \(columns)")
        var position = [Int32](repeating: -1, count: n)
        for (p, row) in rowAtPosition.enumerated() {
            precondition(row >= 0 && Int(row) < n && position[Int(row)] < 0, "FeatureRows: the positions are not a permutation")
            position[Int(row)] = Int32(truncatingIfNeeded: p)
        }
        stored = Matrix(rows: n, columns: columns, elements: values)
        positionOfRow = position
    }

    /// The number of rows.
    public var rows: Int { stored.rows }
    /// The number of feature columns.
    public var columns: Int { stored.columns }
    /// Whether the rows are stored in row order.
    public var isRowOrder: Bool { positionOfRow == nil }

    /// Where row `row` is stored in `stored`.
    ///
    /// - Complexity: O(1).
    @inline(__always)
    public func position(of row: Int) -> Int {
        guard let positionOfRow else { return row }
        return Int(positionOfRow[row])
    }

    /// One feature of one row.
    public subscript(row: Int, column: Int) -> Float { stored[position(of: row), column] }

    /// `weights · row`, the zero weights skipped: bit-identical to `LinearBlockIndex.dot` on
    /// the row-major matrix and to the index's scan.
    ///
    /// - Complexity: O(d).
    public func dot(row: Int, _ weights: [Float]) -> Float {
        precondition(row >= 0 && row < rows, "dot: row \(row) is not in the matrix")
        return LinearBlockIndex.dot(stored, row: position(of: row), weights)
    }

    /// Rows as `Double`, each padded with zeros to `stride`, in the order asked
    /// (`Matrix.rowsAsDouble`).
    ///
    /// - Complexity: O(rows.count × stride).
    public func rowsAsDouble(_ rows: [Int], stride: Int) -> [Double] {
        guard let positionOfRow else { return stored.rowsAsDouble(rows, stride: stride) }
        for row in rows { precondition(row >= 0 && row < self.rows, "rowsAsDouble: row \(row) is not in the matrix") }
        return stored.rowsAsDouble(rows.map { Int(positionOfRow[$0]) }, stride: stride)
    }

    /// The features in row order: `stored` itself, or a copy gathered from the positions.
    ///
    /// - Complexity: O(1) in row order, else O(N × d).
    public func rowMajor() -> Matrix {
        guard let positionOfRow else { return stored }
        let d = columns, n = rows
        var result = Matrix(rows: n, columns: d)
        result.withUnsafeMutableBufferPointer { target in
            stored.withUnsafeBufferPointer { source in
                for row in 0..<n {
                    let from = Int(positionOfRow[row]) &* d, to = row &* d
                    for j in 0..<d { target[to &+ j] = source[from &+ j] }
                }
            }
        }
        return result
    }
}
