/// A dense matrix of `Float` values stored row-major in one contiguous buffer.
///
/// Element `(r, c)` lives at `storage[r * columns + c]`. Rows are the items of a catalog (or the
/// students of a batch) and columns their features, so one item's features are contiguous and
/// a matrix–vector product reads the buffer once, front to back.
///
///     var m = Matrix(rows: 2, columns: 3, elements: [1, 2, 3,
///                                                    4, 5, 6])
///     m[1, 2]        // 6
///     m[0, 0] = 10
///
/// BLAS-backed products are in `Matrix+BLAS.swift`.
public struct Matrix: Sendable, Hashable, Codable {
    /// The number of rows.
    public let rows: Int
    /// The number of columns.
    public let columns: Int
    @usableFromInline
    internal var storage: ContiguousArray<Float>

    /// Creates a matrix with every element set to `value`.
    ///
    /// - Parameters:
    ///   - rows: The number of rows; not negative.
    ///   - columns: The number of columns; not negative.
    ///   - value: The initial value of every element.
    /// - Complexity: O(rows × columns).
    public init(rows: Int, columns: Int, repeating value: Float = 0) {
        precondition(rows >= 0 && columns >= 0, "Matrix dimensions must not be negative")
        self.rows = rows
        self.columns = columns
        self.storage = ContiguousArray(repeating: value, count: rows * columns)
    }

    /// Creates a matrix from its elements in row-major order.
    ///
    /// - Parameters:
    ///   - rows: The number of rows.
    ///   - columns: The number of columns.
    ///   - elements: `rows × columns` values, row after row.
    /// - Complexity: O(rows × columns).
    public init<S: Sequence>(rows: Int, columns: Int, elements: S) where S.Element == Float {
        precondition(rows >= 0 && columns >= 0, "Matrix dimensions must not be negative")
        let storage = ContiguousArray(elements)
        precondition(
            storage.count == rows * columns,
            "Matrix of \(rows)×\(columns) needs \(rows * columns) elements, got \(storage.count)")
        self.rows = rows
        self.columns = columns
        self.storage = storage
    }

    /// Accesses the element at `row`, `column`.
    ///
    /// - Complexity: O(1).
    @inlinable
    public subscript(row: Int, column: Int) -> Float {
        get {
            precondition(row >= 0 && row < rows && column >= 0 && column < columns,
                         "Matrix index (\(row), \(column)) out of range \(rows)×\(columns)")
            return storage[row &* columns &+ column]
        }
        set {
            precondition(row >= 0 && row < rows && column >= 0 && column < columns,
                         "Matrix index (\(row), \(column)) out of range \(rows)×\(columns)")
            storage[row &* columns &+ column] = newValue
        }
    }

    /// The elements of one row, copied into an array.
    ///
    /// - Parameter row: A row index in `0..<rows`.
    /// - Returns: The `columns` values of that row.
    /// - Complexity: O(columns).
    public func row(_ row: Int) -> [Float] {
        precondition(row >= 0 && row < rows, "Row \(row) out of range 0..<\(rows)")
        return Array(storage[row * columns ..< (row + 1) * columns])
    }

    /// All elements in row-major order.
    ///
    /// - Complexity: O(1) (the array shares storage until mutated).
    public var elements: ContiguousArray<Float> { storage }

    /// Calls `body` with the row-major elements; the pointer is valid only inside `body`.
    ///
    /// - Parameter body: A closure that reads the elements.
    /// - Returns: What `body` returns.
    /// - Complexity: O(1) plus `body`.
    @inlinable
    public func withUnsafeBufferPointer<R>(
        _ body: (UnsafeBufferPointer<Float>) throws -> R
    ) rethrows -> R {
        try storage.withUnsafeBufferPointer(body)
    }

    /// Calls `body` with the mutable row-major elements; the pointer is valid only inside `body`.
    ///
    /// - Parameter body: A closure that reads or writes the elements.
    /// - Returns: What `body` returns.
    /// - Complexity: O(1) plus `body` (O(rows × columns) once if the storage is shared).
    @inlinable
    public mutating func withUnsafeMutableBufferPointer<R>(
        _ body: (inout UnsafeMutableBufferPointer<Float>) throws -> R
    ) rethrows -> R {
        try storage.withUnsafeMutableBufferPointer(body)
    }
}

extension Matrix {
    /// Rows of the matrix as `Double`, one after another with `stride` values each: row
    /// `rows[i]` at `[i·stride ..< i·stride + columns]`, then zeros up to the stride (for the
    /// caller's own values). What a deck's probe candidates need: their feature rows beside
    /// values of the caller's.
    ///
    /// - Parameters:
    ///   - rows: Row indices, each in `0..<self.rows`.
    ///   - stride: Values per output row, ≥ `columns`.
    /// - Returns: `rows.count × stride` values.
    /// - Complexity: O(rows.count × stride).
    public func rowsAsDouble(_ rows: [Int], stride: Int) -> [Double] {
        precondition(stride >= columns, "rowsAsDouble: a stride of \(stride) is shorter than a row (\(columns))")
        for row in rows { precondition(row >= 0 && row < self.rows, "rowsAsDouble: row \(row) is not in the matrix") }
        return storage.withUnsafeBufferPointer { Self.rowsAsDouble(of: $0, columns: columns, at: rows, stride: stride) }
    }

    /// `rowsAsDouble(_:stride:)` over row-major values whose rows are at `positions` (a
    /// permuted store's, `FeatureRows`): the caller has checked the positions and the stride.
    static func rowsAsDouble(of source: UnsafeBufferPointer<Float>, columns n: Int, at positions: [Int], stride: Int) -> [Double] {
        // Every entry is written once: no zeroing first.
        [Double](unsafeUninitializedCapacity: positions.count * stride) { target, count in
            for (i, position) in positions.enumerated() {
                let from = position &* n, to = i &* stride
                for j in 0..<n { target.initializeElement(at: to &+ j, to: Double(source[from &+ j])) }
                for j in n..<stride { target.initializeElement(at: to &+ j, to: 0) }
            }
            count = positions.count * stride
        }
    }

    /// Rows of the matrix as the columns of a `columns × rows.count` row-major `Double` matrix:
    /// entry (j, i) is `self[rows[i], j]`. What `columnDotsInOrder` reads: a student's liked
    /// items' factors side by side.
    ///
    /// - Parameter rows: Row indices, each in `0..<self.rows`.
    /// - Returns: `columns × rows.count` values.
    /// - Complexity: O(rows.count × columns).
    public func rowsAsDoubleColumns(_ rows: [Int]) -> [Double] {
        for row in rows { precondition(row >= 0 && row < self.rows, "rowsAsDoubleColumns: row \(row) is not in the matrix") }
        let f = columns, n = rows.count
        return [Double](unsafeUninitializedCapacity: f * n) { target, count in
            storage.withUnsafeBufferPointer { source in
                for (i, row) in rows.enumerated() {
                    let from = row &* f
                    for j in 0..<f { target.initializeElement(at: j &* n &+ i, to: Double(source[from &+ j])) }
                }
            }
            count = f * n
        }
    }
}
