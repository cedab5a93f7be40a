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

extension Array {
    /// Starts loading elements `index ..< index + count` (the part inside the array) into the
    /// caches: `prefetch(_:bytes:)` on their memory.
    ///
    /// - Parameters:
    ///   - index: The first element.
    ///   - count: How many.
    @inlinable
    package func prefetch(_ index: Int, count: Int = 1) {
        let from = Swift.max(0, index), to = Swift.min(self.count, index + count)
        guard from < to else { return }
        withUnsafeBytes { bytes in
            SwipeRankNumerics.prefetch(bytes.baseAddress! + from * MemoryLayout<Element>.stride,
                                       bytes: (to - from) * MemoryLayout<Element>.stride)
        }
    }
}

extension ContiguousArray {
    /// `Array.prefetch(_:count:)` for a contiguous array.
    ///
    /// - Parameters:
    ///   - index: The first element.
    ///   - count: How many.
    @inlinable
    package func prefetch(_ index: Int, count: Int = 1) {
        let from = Swift.max(0, index), to = Swift.min(self.count, index + count)
        guard from < to else { return }
        withUnsafeBytes { bytes in
            SwipeRankNumerics.prefetch(bytes.baseAddress! + from * MemoryLayout<Element>.stride,
                                       bytes: (to - from) * MemoryLayout<Element>.stride)
        }
    }
}
