/// Float values held either in an array or in memory another object owns and keeps unchanged
/// (a read-only file mapping): a large catalog's features are read where its cache file maps
/// them, so they count as shared, evictable page cache rather than as the process's own
/// memory, and a start copies nothing.
///
/// Immutable. Reads are bounds-checked like an array's.
public struct FloatValues: RandomAccessCollection, @unchecked Sendable {  // immutable; the owner keeps `base` valid and unchanged
    // The first value; valid while `owner` lives.
    private let base: UnsafePointer<Float>
    /// The number of values.
    public let count: Int
    // What keeps `base` alive: an `OwnedFloats` or the caller's owner (a mapping).
    private let owner: AnyObject

    /// The values of an array (copied once, into memory this value owns).
    ///
    /// - Parameter values: The values.
    public init(_ values: [Float]) {
        self.init(count: values.count) { target in
            values.withUnsafeBufferPointer { source in
                if let from = source.baseAddress, let to = target.baseAddress { to.update(from: from, count: source.count) }
            }
        }
    }

    /// `count` values written by `fill` into memory this value owns (zeroed first): built in
    /// place, without an array to copy from.
    ///
    /// - Parameters:
    ///   - count: The number of values, ≥ 0.
    ///   - fill: Writes the values.
    public init(count: Int, fill: (UnsafeMutableBufferPointer<Float>) throws -> Void) rethrows {
        precondition(count >= 0, "FloatValues: negative count")
        let owned = OwnedFloats(count: count)
        try fill(UnsafeMutableBufferPointer(rebasing: owned.buffer[0..<count]))
        base = UnsafePointer(owned.buffer.baseAddress!)
        self.count = count
        owner = owned
    }

    /// Values read in place: `count` floats from `start`, which `owner` keeps valid and
    /// unchanged as long as it lives (a read-only mapping of a file nobody rewrites in place).
    ///
    /// - Parameters:
    ///   - start: The first value, aligned for `Float`.
    ///   - count: The number of values.
    ///   - owner: Keeps the memory mapped; held as long as these values (or a copy of them).
    public init(unsafeStart start: UnsafeRawPointer, count: Int, owner: AnyObject) {
        precondition(count >= 0, "FloatValues: negative count")
        precondition(Int(bitPattern: start) % MemoryLayout<Float>.alignment == 0, "FloatValues: misaligned start")
        base = start.assumingMemoryBound(to: Float.self)
        self.count = count
        self.owner = owner
    }

    /// The first index, 0.
    public var startIndex: Int { 0 }
    /// One past the last index, `count`.
    public var endIndex: Int { count }

    /// The value at `index`.
    @inline(__always)
    public subscript(index: Int) -> Float {
        precondition(index >= 0 && index < count, "FloatValues: index \(index) out of 0..<\(count)")
        return base[index]
    }

    /// Calls `body` with the values; the pointer is valid only inside `body`.
    ///
    /// - Parameter body: Reads the values.
    /// - Returns: What `body` returns.
    public func withUnsafeBufferPointer<R>(_ body: (UnsafeBufferPointer<Float>) throws -> R) rethrows -> R {
        try withExtendedLifetime(owner) { try body(UnsafeBufferPointer(start: base, count: count)) }
    }

    /// Whether these values are read from memory this value does not own (a mapping).
    public var isBorrowed: Bool { !(owner is OwnedFloats) }
}

/// Memory for `FloatValues` built in place, freed with the last value that reads it.
private final class OwnedFloats {
    let buffer: UnsafeMutableBufferPointer<Float>

    init(count: Int) {
        buffer = .allocate(capacity: max(count, 1))
        buffer.initialize(repeating: 0)
    }

    deinit { buffer.deallocate() }
}
