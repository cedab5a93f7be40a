extension Array {
    /// `count` copies of `value`: the same array as `Array(repeating:count:)`, allocated by the
    /// specialized reserve-and-append path.
    ///
    /// Why: on Linux, `Array(repeating:count:)` and `Array(unsafeUninitializedCapacity:…)`
    /// allocate through the standard library's unspecialized `_allocateBufferUninitialized`,
    /// which asks the runtime for the storage class's metadata on every call (a lookup in its
    /// shared metadata cache: about 300 instructions per array under callgrind, and a cache
    /// line that every thread allocating an array touches). Reserving and appending runs code
    /// specialized for `Element`, which looks the metadata up once per process. A deck makes
    /// a few dozen small arrays.
    ///
    /// - Parameters:
    ///   - value: The element to repeat.
    ///   - count: How many; not negative.
    /// - Complexity: O(count).
    @inlinable
    package init(filling value: Element, count: Int) {
        precondition(count >= 0, "Array(filling:count:): negative count \(count)")
        self.init()
        reserveCapacity(count)
        append(contentsOf: repeatElement(value, count: count))
    }
}
