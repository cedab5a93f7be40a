import SwipeRankNumerics

/// One raw numeric attribute of every item, `nil` where the item has none: a collection of
/// `Double?` in row order, stored as plain doubles with NaN for a gap.
///
/// A catalog never holds a NaN value (a non-finite number is refused when it is read), so NaN
/// is free to mean "missing". Half the memory of `[Double?]` (whose elements take 16 bytes:
/// a million items' four attributes were 64 MB), and a catalog cache stores the same bytes, so
/// a large catalog reads them in place from the cache file's mapping (`StoredValues`).
///
///     let rating = catalog.numericValues[catalog.numericAttribute(named: "rating")!]
///     rating[row]               // Double?, nil for a gap
///     rating.compactMap { $0 }  // the observed values
public struct NumericColumn: RandomAccessCollection, Sendable, Equatable {
    /// The values in row order, NaN for a gap.
    public let storage: StoredValues<Double>

    /// A column from values with `nil` for gaps.
    ///
    /// - Parameter values: One value per row; each non-nil value finite.
    public init(_ values: [Double?]) {
        storage = StoredValues(count: values.count) { target in
            for (i, value) in values.enumerated() {
                guard let value else { target[i] = .nan; continue }
                precondition(!value.isNaN, "NumericColumn: NaN is not a value (nil marks a gap)")
                target[i] = value
            }
        }
    }

    /// A column from its storage: NaN marks a gap.
    ///
    /// - Parameter storage: One value per row.
    public init(storage: [Double]) { self.storage = StoredValues(storage) }

    /// A column over stored values (read in place from a mapping, or owned): NaN marks a gap.
    ///
    /// - Parameter storage: One value per row.
    public init(storage: StoredValues<Double>) { self.storage = storage }

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
