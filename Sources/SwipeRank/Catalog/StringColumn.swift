import Foundation
import SwipeRankNumerics

/// Text of every item in one column (ids, names, a text attribute): a collection of `String`
/// in row order, stored as one buffer of UTF-8 with each value's end offset.
///
/// A `[String]` holds 16 bytes per value and, for a value longer than 15 bytes, a heap object
/// of its own (by that layout, not measured here: a million 20-byte names ≈ 16 MB + a million
/// heap objects, against ≈ 24 MB here); a catalog cache
/// stores the same buffer, so a start copies it (or, for a large catalog, reads it in place
/// from the file's mapping) instead of building a `String` per value. A value read is built
/// on access (`String(decoding:as:)`: no allocation up to 15 bytes).
///
///     catalog.names[row]              // String
///     catalog.ids.firstIndex(of: id)  // any Collection algorithm
///
/// Two columns are equal when they hold the same bytes: text that is canonically equivalent
/// but spelled differently is not the same column value (as the cache stores it).
public struct StringColumn: RandomAccessCollection, Sendable, Equatable {
    /// The UTF-8 of every value, in row order.
    let utf8: StoredValues<UInt8>
    // Where each value's bytes are, one of two ways: `ends` (built here: value i spans
    // `ends[i - 1] ..< ends[i]`, from 0), or `offsets` (a cache file's own, read in place:
    // value i spans `offsets[i] ..< offsets[i + 1]`, less `offsets[0]`).
    private let ends: StoredValues<UInt32>?
    private let offsets: StoredValues<UInt64>?
    private let rowCount: Int

    /// The most UTF-8 bytes one column holds (offsets are 32-bit).
    public static let maximumBytes = Int(UInt32.max)

    /// A column of these values.
    ///
    /// - Parameter values: One per row; `maximumBytes` of UTF-8 at most in all (the CSV and
    ///   cache readers refuse more with an error naming the column).
    public init<S: Sequence>(_ values: S) where S.Element == String {
        var utf8: [UInt8] = [], ends: [UInt32] = []
        ends.reserveCapacity(values.underestimatedCount)
        for value in values {
            utf8.append(contentsOf: value.utf8)
            precondition(utf8.count <= Self.maximumBytes, "StringColumn: more than 4 GiB of text")
            ends.append(UInt32(utf8.count))
        }
        self.init(utf8: utf8, ends: ends)
    }

    /// A column of `values`, or an error naming the column when they exceed `maximumBytes`.
    ///
    /// - Parameters:
    ///   - values: One per row.
    ///   - source: The file, for the message.
    ///   - field: The column, for the message.
    /// - Throws: `DataError` `.invalidValue`.
    static func checked(_ values: [String], source: String, field: String) throws(DataError) -> StringColumn {
        var total = 0
        for value in values { total += value.utf8.count }
        guard total <= maximumBytes else {
            throw DataError(.invalidValue, source: source, field: field,
                            detail: "column \"\(field)\" holds \(total) bytes of text, more than a catalog column can (\(maximumBytes))")
        }
        return StringColumn(values)
    }

    /// A column from its buffer and end offsets.
    ///
    /// - Precondition: `ends` ascends and its last element is `utf8.count` (checked by the reader).
    init(utf8: [UInt8], ends: [UInt32]) {
        precondition((ends.last.map(Int.init) ?? 0) == utf8.count, "StringColumn: the last end is not the byte count")
        self.utf8 = StoredValues(utf8)
        self.ends = StoredValues(ends)
        offsets = nil
        rowCount = ends.count
    }

    /// A column read in place from a catalog cache: its bytes and its n + 1 ascending
    /// offsets into them, the first the bytes' start (checked by the reader).
    init(utf8: StoredValues<UInt8>, offsets: StoredValues<UInt64>) {
        precondition(offsets.count >= 1 && offsets[offsets.count - 1] - offsets[0] == UInt64(utf8.count),
                     "StringColumn: the offsets do not span the bytes")
        self.utf8 = utf8
        ends = nil
        self.offsets = offsets
        rowCount = offsets.count - 1
    }

    /// 0.
    public var startIndex: Int { 0 }
    /// The number of rows.
    public var endIndex: Int { rowCount }

    /// The bytes of a row's value.
    @inline(__always)
    func byteRange(_ row: Int) -> Range<Int> {
        if let ends { return (row == 0 ? 0 : Int(ends[row - 1])) ..< Int(ends[row]) }
        let offsets = offsets.unsafelyUnwrapped, first = offsets[0]
        return Int(offsets[row] &- first) ..< Int(offsets[row + 1] &- first)
    }

    /// Calls `body` with every value's UTF-8, in row order (`byteRange(_:)` says where each is).
    func withUTF8<R>(_ body: (UnsafeBufferPointer<UInt8>) throws -> R) rethrows -> R {
        try utf8.withUnsafeBufferPointer(body)
    }

    /// The value of a row.
    public subscript(row: Int) -> String {
        let range = byteRange(row)
        return utf8.withUnsafeBufferPointer { String(decoding: UnsafeBufferPointer(rebasing: $0[range]), as: UTF8.self) }
    }

    /// Whether a row holds `value`, by `String` equality (canonically equivalent spellings are
    /// equal), without building the row's `String` when the bytes already agree or the two
    /// are plain ASCII (where only equal bytes are equal).
    func value(at row: Int, equals value: String) -> Bool {
        let range = byteRange(row)
        var other = value
        return other.withUTF8 { theirs in
            utf8.withUnsafeBufferPointer { all in
                let mine = UnsafeBufferPointer(rebasing: all[range])
                if mine.count == theirs.count,
                   mine.count == 0 || memcmp(mine.baseAddress!, theirs.baseAddress!, mine.count) == 0 { return true }
                if mine.allSatisfy({ $0 < 0x80 }) && theirs.allSatisfy({ $0 < 0x80 }) { return false }
                return String(decoding: mine, as: UTF8.self) == value
            }
        }
    }

    /// Equal when both hold the same bytes for every row (however each stores them).
    public static func == (a: StringColumn, b: StringColumn) -> Bool {
        guard a.count == b.count, a.utf8.count == b.utf8.count else { return false }
        return a.withUTF8 { x in
            b.withUTF8 { y in
                (0..<a.count).allSatisfy { row in
                    let (p, q) = (a.byteRange(row), b.byteRange(row))
                    return p == q && (p.isEmpty || memcmp(x.baseAddress! + p.lowerBound, y.baseAddress! + q.lowerBound, p.count) == 0)
                }
            }
        }
    }
}
