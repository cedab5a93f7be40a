/// One raw numeric attribute of every item, `nil` where the item has none: a collection of
/// `Double?` in row order, stored as plain doubles with NaN for a gap.
///
/// A catalog never holds a NaN value (a non-finite number is refused when it is read), so NaN
/// is free to mean "missing". Half the memory of `[Double?]` (whose elements take 16 bytes:
/// a million items' four attributes were 64 MB), and a catalog cache stores the same bytes, so
/// a start copies them instead of decoding each value.
///
///     let rating = catalog.numericValues[catalog.numericAttribute(named: "rating")!]
///     rating[row]               // Double?, nil for a gap
///     rating.compactMap { $0 }  // the observed values
public struct NumericColumn: RandomAccessCollection, Sendable, Equatable {
    /// The values in row order, NaN for a gap.
    public let storage: [Double]

    /// A column from values with `nil` for gaps.
    ///
    /// - Parameter values: One value per row; each non-nil value finite.
    public init(_ values: [Double?]) {
        storage = values.map { value in
            guard let value else { return .nan }
            precondition(!value.isNaN, "NumericColumn: NaN is not a value (nil marks a gap)")
            return value
        }
    }

    /// A column from its storage: NaN marks a gap.
    ///
    /// - Parameter storage: One value per row.
    public init(storage: [Double]) { self.storage = storage }

    /// 0.
    public var startIndex: Int { 0 }
    /// The number of rows.
    public var endIndex: Int { storage.count }

    /// The value of a row, nil for a gap.
    public subscript(row: Int) -> Double? {
        let value = storage[row]
        return value.isNaN ? nil : value
    }

    /// Equal when every row holds the same value or both a gap.
    public static func == (a: NumericColumn, b: NumericColumn) -> Bool {
        a.storage.count == b.storage.count && zip(a.storage, b.storage).allSatisfy { $0 == $1 || ($0.isNaN && $1.isNaN) }
    }
}
