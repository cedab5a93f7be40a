import Foundation
import Synchronization

/// The row of each item id: an open-addressing table of 8-byte slots (the row and 32 bits of
/// the id's hash), beside the catalog's `ids`.
///
/// What `[String: Int]` did, in a third of its memory or less: that dictionary keeps a copy of
/// every key beside its value in buckets of 24 bytes at up to 75% load (by that layout about
/// 50 MB for a million ids, 400 MB for ten million), where the ids are already held in row
/// order. A slot
/// keeps the row and a hash tag, and the id itself is read from `ids` only when the tag matches.
/// Ids hash with `String.hashValue`, so two ids equal as `String`s (canonically equivalent
/// Unicode) are the same id here as they were as dictionary keys.
struct IDRows: Sendable {
    // 0: empty; else (tag << 32) | (row + 1).
    private var slots: [UInt64]
    private let shift: UInt64

    /// An empty table with room for `capacity` ids at most 75% full.
    ///
    /// - Parameter capacity: How many ids will be inserted, < 2³² − 1.
    init(capacity: Int) {
        precondition(capacity >= 0 && capacity < Int(UInt32.max), "IDRows: too many ids")
        var bits = 4
        while (1 << bits) * 3 < capacity * 4 { bits += 1 }
        slots = [UInt64](repeating: 0, count: 1 << bits)
        shift = UInt64(64 - bits)
    }

    /// The table of `ids`, or the rows of the first id that repeats an earlier one.
    ///
    /// - Parameters:
    ///   - ids: The ids in row order.
    ///   - parallelFrom: From this many ids on they are hashed on every core.
    /// - Returns: The table, or `(first, repeated)`: the earlier row and the first row whose id
    ///   equals it.
    static func build(_ ids: StringColumn, parallelFrom: Int = parallelHashingFrom) -> Result<IDRows, Repeated> {
        var table = IDRows(capacity: ids.count)
        // Hashing every id (a String built from its bytes, then SipHash) was most of a ten-
        // million-item build: from `parallelFrom` ids on every core, in runs of rows;
        // the inserts stay in row order, so the first of two equal ids keeps its row.
        let n = ids.count
        let runs = n >= parallelFrom ? 4 * max(1, ProcessInfo.processInfo.activeProcessorCount) : 1
        let hashed = Mutex([[Int]](repeating: [], count: runs))
        DispatchQueue.concurrentPerform(iterations: runs) { run in
            let rows = (n * run / runs)..<(n * (run + 1) / runs)
            let hashes = rows.map { ids[$0].hashValue }
            hashed.withLock { $0[run] = hashes }
        }
        let hashes = hashed.withLock { $0 }
        var row = 0
        for run in hashes {
            for hash in run {
                let id = ids[row]
                if let first = table.insert(id, hash: hash, row: row, matches: { ids.value(at: $0, equals: id) }) {
                    return .failure(Repeated(first: first, repeated: row))
                }
                row += 1
            }
        }
        return .success(table)
    }

    /// From this many ids on `build` hashes them on every core.
    static let parallelHashingFrom = 100_000

    /// An id that appears twice: its first row and the row that repeats it.
    struct Repeated: Error {
        let first: Int
        let repeated: Int
    }

    /// Adds `id` at `row`, unless an equal id is already in the table.
    ///
    /// - Parameters:
    ///   - id: The id of `row`.
    ///   - row: Its row.
    ///   - matches: Whether the id of an earlier row (inserted before) equals `id`.
    /// - Returns: nil when added, else the row of the equal id already there (nothing added).
    /// - Complexity: O(1) expected.
    mutating func insert(_ id: String, row: Int, matches: (Int) -> Bool) -> Int? {
        insert(id, hash: id.hashValue, row: row, matches: matches)
    }

    /// `insert(_:row:matches:)` with the id's `hashValue` computed already.
    private mutating func insert(_ id: String, hash: Int, row: Int, matches: (Int) -> Bool) -> Int? {
        precondition(row >= 0 && row < Int(UInt32.max), "IDRows: row out of range")
        let (start, tag) = place(hash)
        let mask = slots.count - 1
        var i = start
        while true {
            let slot = slots[i]
            if slot == 0 {
                slots[i] = (tag << 32) | UInt64(row + 1)
                return nil
            }
            if slot >> 32 == tag {
                let other = Int(slot & 0xFFFF_FFFF) - 1
                if matches(other) { return other }
            }
            i = (i + 1) & mask
        }
    }

    /// The row of `id`.
    ///
    /// - Parameters:
    ///   - id: An id.
    ///   - ids: The ids the table was built from.
    /// - Returns: Its row, or nil.
    /// - Complexity: O(1) expected.
    func row(of id: String, ids: StringColumn) -> Int? {
        let (start, tag) = place(id.hashValue)
        let mask = slots.count - 1
        var i = start
        while true {
            let slot = slots[i]
            if slot == 0 { return nil }
            if slot >> 32 == tag {
                let row = Int(slot & 0xFFFF_FFFF) - 1
                if ids.value(at: row, equals: id) { return row }
            }
            i = (i + 1) & mask
        }
    }

    // The first slot to probe (the top bits of the mixed hash) and the tag (its low 32 bits).
    private func place(_ hash: Int) -> (Int, UInt64) {
        let h = UInt64(bitPattern: Int64(hash))
        let mixed = h &* 0x9E37_79B9_7F4A_7C15
        return (Int(truncatingIfNeeded: mixed >> shift), h & 0xFFFF_FFFF)
    }
}
