/// Plain values (floats, doubles, bytes, offsets) held either in memory this value owns or in
/// memory another object owns and keeps unchanged (a read-only file mapping): a large
/// catalog's columns are read where its cache file maps them, so they count as shared,
/// evictable page cache rather than as the process's own memory, and a start copies nothing.
///
/// Immutable. Reads are bounds-checked like an array's.
///
///     let owned = StoredValues<Float>([1, 2, 3])
///     let mapped = StoredValues<Float>(unsafeStart: pointer, count: n, owner: mapping)
public struct StoredValues<Element: BitwiseCopyable>: RandomAccessCollection, @unchecked Sendable {  // immutable; the owner keeps `base` valid and unchanged
    // The first value; valid while `owner` lives.
    @usableFromInline let base: UnsafePointer<Element>
    /// The number of values.
    public let count: Int
    // What keeps `base` alive: an `OwnedValues` or the caller's owner (a mapping).
    @usableFromInline let owner: AnyObject

    /// The values of an array (copied once, into memory this value owns).
    ///
    /// - Parameter values: The values.
    public init(_ values: [Element]) {
        self.init(count: values.count) { target in
            values.withUnsafeBufferPointer { source in
                if let from = source.baseAddress, let to = target.baseAddress { to.update(from: from, count: source.count) }
            }
        }
    }

    /// `count` values written by `fill` into memory this value owns (zero bytes first): built
    /// in place, without an array to copy from.
    ///
    /// - Parameters:
    ///   - count: The number of values, ≥ 0.
    ///   - fill: Writes the values.
    public init(count: Int, fill: (UnsafeMutableBufferPointer<Element>) throws -> Void) rethrows {
        precondition(count >= 0, "StoredValues: negative count")
        let owned = OwnedValues<Element>(count: count)
        try fill(UnsafeMutableBufferPointer(rebasing: owned.buffer[0..<count]))
        base = UnsafePointer(owned.buffer.baseAddress!)
        self.count = count
        owner = owned
    }

    /// Values read in place: `count` values from `start`, which `owner` keeps valid and
    /// unchanged as long as it lives (a read-only mapping of a file nobody rewrites in place).
    ///
    /// - Parameters:
    ///   - start: The first value, aligned for `Element`.
    ///   - count: The number of values.
    ///   - owner: Keeps the memory mapped; held as long as these values (or a copy of them).
    public init(unsafeStart start: UnsafeRawPointer, count: Int, owner: AnyObject) {
        precondition(count >= 0, "StoredValues: negative count")
        precondition(Int(bitPattern: start) % MemoryLayout<Element>.alignment == 0, "StoredValues: misaligned start")
        base = start.assumingMemoryBound(to: Element.self)
        self.count = count
        self.owner = owner
    }

    /// The first index, 0.
    public var startIndex: Int { 0 }
    /// One past the last index, `count`.
    public var endIndex: Int { count }

    /// The value at `index`.
    @inlinable @inline(__always)
    public subscript(index: Int) -> Element {
        precondition(index >= 0 && index < count, "StoredValues: index \(index) out of 0..<\(count)")
        return base[index]
    }

    /// Calls `body` with the values; the pointer is valid only inside `body`.
    ///
    /// - Parameter body: Reads the values.
    /// - Returns: What `body` returns.
    @inlinable
    public func withUnsafeBufferPointer<R>(_ body: (UnsafeBufferPointer<Element>) throws -> R) rethrows -> R {
        // The owner outlives the read (what `withExtendedLifetime` does, without its call:
        // it was not inlined here, and a row's dot product is a few dozen instructions).
        defer { _fixLifetime(owner) }
        return try body(UnsafeBufferPointer(start: base, count: count))
    }

    /// The values as one buffer (they always are): lets `Array(_:)` and `append(contentsOf:)`
    /// copy them in one move.
    @inlinable
    public func withContiguousStorageIfAvailable<R>(_ body: (UnsafeBufferPointer<Element>) throws -> R) rethrows -> R? {
        try withUnsafeBufferPointer(body)
    }

    /// Whether these values are read from memory this value does not own (a mapping).
    public var isBorrowed: Bool { !(owner is OwnedStorage) }
}

/// Floats stored as `StoredValues` (a catalog's features).
public typealias FloatValues = StoredValues<Float>

/// Marks memory `StoredValues` allocated itself.
private protocol OwnedStorage: AnyObject {}

/// Memory for `StoredValues` built in place, freed with the last value that reads it.
private final class OwnedValues<Element: BitwiseCopyable>: OwnedStorage {
    let buffer: UnsafeMutableBufferPointer<Element>

    init(count: Int) {
        buffer = .allocate(capacity: max(count, 1))
        // Zero bytes: a valid value of every plain type this holds.
        UnsafeMutableRawBufferPointer(buffer).initializeMemory(as: UInt8.self, repeating: 0)
    }

    deinit { buffer.deallocate() }
}
