// Loads started early: a deck builds its cards from rows scattered over the catalog (a feature
// row, the student's term values, the item's summary and sentences), each a cache miss the card
// waits on, one after another (`perf`: loads and retains of these were most of a card's time,
// not its instructions). The rows a deck will most likely serve are known before the first card
// is built, so their loads are started together and overlap.
import CSwipeRankKernels

/// Asks the CPU to start loading `bytes` bytes at `pointer` into its caches, without waiting:
/// a hint, with no effect on any result.
///
/// - Parameters:
///   - pointer: The first byte.
///   - bytes: How many.
@usableFromInline
package func prefetch(_ pointer: UnsafeRawPointer, bytes: Int) {
    swiperank_prefetch(pointer, bytes)
}

/// `prefetch(_:bytes:)` of `bytes` bytes at `base + row × stride` for each of `rows`: one call
/// for a list of rows.
///
/// - Parameters:
///   - base: Row 0's first byte.
///   - stride: Bytes from one row to the next.
///   - rows: The rows, each inside the memory the caller owns.
///   - bytes: Bytes per row.
@usableFromInline
package func prefetch(_ base: UnsafeRawPointer, stride: Int, rows: UnsafeBufferPointer<Int>, bytes: Int) {
    guard let first = rows.baseAddress, bytes > 0 else { return }
    swiperank_prefetch_rows(base, stride, first, rows.count, bytes)
}

extension RandomAccessCollection where Index == Int {
    /// Starts loading, for each of `rows`, elements `row × width ..< (row + 1) × width` into the
    /// caches, in one call; rows whose elements are not all inside the collection are left out.
    /// For any collection with contiguous storage (an array, a contiguous array, a slice of one,
    /// a buffer); nothing for others. Rows count from the collection's first element.
    ///
    /// - Parameters:
    ///   - rows: Row numbers.
    ///   - width: Elements per row.
    @inlinable
    package func prefetch(rows: [Int], width: Int = 1) {
        guard width > 0, !rows.isEmpty else { return }
        let rowCount = count / width
        let inside = rows.allSatisfy { $0 >= 0 && $0 < rowCount } ? rows : rows.filter { $0 >= 0 && $0 < rowCount }
        guard !inside.isEmpty else { return }
        _ = withContiguousStorageIfAvailable { elements in
            inside.withUnsafeBufferPointer {
                SwipeRankNumerics.prefetch(UnsafeRawPointer(elements.baseAddress!), stride: width * MemoryLayout<Element>.stride, rows: $0,
                                           bytes: width * MemoryLayout<Element>.stride)
            }
        }
    }
}
