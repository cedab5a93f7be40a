import Foundation
import SwipeRankNumerics

// The catalog cache's raw-byte code: the checksum and the little-endian reads and writes of
// its sections. The only unsafe pointer code of the cache; everything above works on arrays.

/// XXH64 (seed 0): a fast 64-bit non-cryptographic hash, eight bytes a step in four lanes, so
/// checksumming a cache of hundreds of megabytes takes a fraction of the time parsing it would.
/// Every step is a bijection of a lane's state, so one changed byte always changes the digest.
package enum XXH64 {
    private static let p1: UInt64 = 0x9E37_79B1_85EB_CA87
    private static let p2: UInt64 = 0xC2B2_AE3D_27D4_EB4F
    private static let p3: UInt64 = 0x1656_67B1_9E37_79F9
    private static let p4: UInt64 = 0x85EB_CA77_C2B2_AE63
    private static let p5: UInt64 = 0x27D4_EB2F_1656_67C5

    @inline(__always) private static func rotl(_ x: UInt64, _ r: UInt64) -> UInt64 { (x << r) | (x >> (64 - r)) }
    @inline(__always) private static func round(_ acc: UInt64, _ input: UInt64) -> UInt64 {
        rotl(acc &+ input &* p2, 31) &* p1
    }
    @inline(__always) private static func merge(_ acc: UInt64, _ lane: UInt64) -> UInt64 {
        (acc ^ round(0, lane)) &* p1 &+ p4
    }

    /// The digest of `bytes`.
    ///
    /// - Parameters:
    ///   - bytes: The bytes.
    ///   - every: How often `passed` is called, in bytes (a multiple of 32).
    ///   - passed: Called with the count of bytes read so far, every `every` bytes: what the
    ///     caller may release (a mapped file's pages).
    package static func hash(_ bytes: UnsafeRawBufferPointer, every: Int = 1 << 62, passed: (Int) -> Void = { _ in }) -> UInt64 {
        precondition(every > 0 && every % 32 == 0, "XXH64: report every multiple of 32 bytes")
        let n = bytes.count
        var i = 0
        var h: UInt64
        func word(_ at: Int) -> UInt64 { UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: at, as: UInt64.self)) }
        if n >= 32 {
            var v1 = p1 &+ p2, v2 = p2, v3: UInt64 = 0, v4 = 0 &- p1
            while i + 32 <= n {
                v1 = round(v1, word(i)); v2 = round(v2, word(i + 8))
                v3 = round(v3, word(i + 16)); v4 = round(v4, word(i + 24))
                i += 32
                if i % every == 0 { passed(i) }
            }
            h = rotl(v1, 1) &+ rotl(v2, 7) &+ rotl(v3, 12) &+ rotl(v4, 18)
            h = merge(h, v1); h = merge(h, v2); h = merge(h, v3); h = merge(h, v4)
        } else {
            h = p5
        }
        h = h &+ UInt64(n)
        while i + 8 <= n {
            h ^= round(0, word(i))
            h = rotl(h, 27) &* p1 &+ p4
            i += 8
        }
        if i + 4 <= n {
            let w = UInt64(UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: i, as: UInt32.self)))
            h ^= w &* p1
            h = rotl(h, 23) &* p2 &+ p3
            i += 4
        }
        while i < n {
            h ^= UInt64(bytes[i]) &* p5
            h = rotl(h, 11) &* p1
            i += 1
        }
        h ^= h >> 33; h = h &* p2
        h ^= h >> 29; h = h &* p3
        h ^= h >> 32
        return h
    }

    /// The digest of `data` (a mapped file is read in place).
    package static func hash(_ data: Data) -> UInt64 { data.withUnsafeBytes { hash($0) } }
}

/// Appends little-endian values to a byte buffer: the cache writer.
struct CacheWriter {
    var bytes: [UInt8] = []

    mutating func append(_ value: UInt64) { withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) } }
    mutating func append(_ value: UInt32) { withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) } }
    mutating func append(_ values: [Double]) {
        bytes.reserveCapacity(bytes.count + values.count * 8)
        for v in values { append(v.bitPattern) }
    }
    /// Float32 values, as stored (little-endian, as every platform Swift runs on).
    mutating func append(_ values: ContiguousArray<Float>) {
        values.withUnsafeBytes { bytes.append(contentsOf: $0) }
    }
    /// Float32 values, as stored.
    mutating func append(_ values: [Float]) {
        values.withUnsafeBytes { bytes.append(contentsOf: $0) }
    }
    /// Stored values as this platform keeps them (little-endian, as every platform Swift runs
    /// on): what `CacheReader.stored(_:at:count:inPlace:)` reads back in place.
    mutating func append<Element>(_ values: StoredValues<Element>) {
        values.withUnsafeBufferPointer { bytes.append(contentsOf: UnsafeRawBufferPointer($0)) }
    }
    /// Int32 values, as stored (little-endian).
    mutating func append(_ values: [Int32]) {
        values.withUnsafeBytes { bytes.append(contentsOf: $0) }
    }
    mutating func append<S: Sequence>(bytes more: S) where S.Element == UInt8 { bytes.append(contentsOf: more) }
    /// Zeros up to the next multiple of 8: every section starts 8-byte aligned.
    mutating func align() { while bytes.count % 8 != 0 { bytes.append(0) } }
    /// Overwrites 8 bytes at `offset`.
    mutating func set(_ value: UInt64, at offset: Int) {
        withUnsafeBytes(of: value.littleEndian) { for (k, b) in $0.enumerated() { bytes[offset + k] = b } }
    }
}

/// Reads little-endian values from the (mapped) cache bytes; the caller checks bounds first.
struct CacheReader {
    let bytes: UnsafeRawBufferPointer
    /// The mapped file `bytes` are, whose pages a section's copy releases and whose sections a
    /// large catalog reads in place (`stored(_:at:count:inPlace:)`), or nil (bytes in memory).
    var mapping: MappedFile? = nil

    func uint64(at offset: Int) -> UInt64 { UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self)) }
    func uint32(at offset: Int) -> UInt32 { UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt32.self)) }
    func double(at offset: Int) -> Double { Double(bitPattern: uint64(at: offset)) }
    /// `count` Float32 values from `offset`.
    func floats(at offset: Int, count: Int) -> ContiguousArray<Float> {
        ContiguousArray<Float>(unsafeUninitializedCapacity: count) { target, initialized in
            copy(at: offset, into: UnsafeMutableRawBufferPointer(target))
            initialized = count
        }
    }
    /// `count` Float32 values from `offset`, as an Array.
    func floatArray(at offset: Int, count: Int) -> [Float] {
        [Float](unsafeUninitializedCapacity: count) { target, initialized in
            copy(at: offset, into: UnsafeMutableRawBufferPointer(target))
            initialized = count
        }
    }
    /// `count` values of `type` from `offset`, read in place from the mapped file when
    /// `inPlace` and there is one (the values keep the mapping alive; its pages count as page
    /// cache, not as the process's own memory, and are read from the file again if the kernel
    /// dropped them), else copied. Every section starts 8-byte aligned in a page-aligned
    /// mapping, so values of up to 8 bytes are aligned in place.
    func stored<Element: BitwiseCopyable>(_ type: Element.Type, at offset: Int, count: Int, inPlace: Bool) -> StoredValues<Element> {
        let size = MemoryLayout<Element>.stride
        precondition(offset >= 0 && count >= 0 && count <= (bytes.count - offset) / size, "stored: past the end of the bytes")
        if inPlace, let mapping, let base = bytes.baseAddress, count > 0 {
            return StoredValues(unsafeStart: base + offset, count: count, owner: mapping)
        }
        return StoredValues(count: count) { copy(at: offset, into: UnsafeMutableRawBufferPointer($0)) }
    }
    /// Fills `target` with the bytes from `offset` (values stored as this platform keeps them:
    /// little-endian, so a section is one copy).
    private func copy(at offset: Int, into target: UnsafeMutableRawBufferPointer) {
        guard target.count > 0 else { return }
        target.copyMemory(from: UnsafeRawBufferPointer(rebasing: bytes[offset ..< offset + target.count]))
        mapping?.release(offset ..< offset + target.count)
    }
    /// `count` bytes from `offset`.
    func bytes(at offset: Int, count: Int) -> [UInt8] {
        Array(UnsafeRawBufferPointer(rebasing: bytes[offset ..< offset + count]))
    }
    /// `count` Float64 values from `offset`.
    func doubles(at offset: Int, count: Int) -> [Double] {
        [Double](unsafeUninitializedCapacity: count) { target, initialized in
            copy(at: offset, into: UnsafeMutableRawBufferPointer(target))
            initialized = count
        }
    }
    /// `count` Int32 values from `offset`.
    func int32s(at offset: Int, count: Int) -> [Int32] {
        [Int32](unsafeUninitializedCapacity: count) { target, initialized in
            copy(at: offset, into: UnsafeMutableRawBufferPointer(target))
            initialized = count
        }
    }
}

/// Work started on another thread whose result is waited for: a start runs the passes that
/// hash whole files (the cache's checksum, the CSV's key) beside the decoding on one core.
final class BackgroundResult<Value: Sendable>: @unchecked Sendable {  // `value` is written before `done.leave()`, read after `done.wait()`
    private let done = DispatchGroup()
    private var value: Value?

    /// Starts `work` now.
    init(_ work: @escaping @Sendable () -> Value) {
        done.enter()
        DispatchQueue.global(qos: .userInitiated).async {
            self.value = work()
            self.done.leave()
        }
    }

    /// The result, once the work is done.
    func wait() -> Value {
        done.wait()
        return value!
    }
}

/// Cache bytes handed to another thread: valid only until the decoder that owns the mapping
/// returns, which waits for that thread first (`CatalogCache.decode`).
struct SharedBytes: @unchecked Sendable {
    let bytes: UnsafeRawBufferPointer
}

/// A write of `bytes` to a new file, in chunks of at most `chunk` bytes, each retried until
/// written in full (a `write` call may write less than asked, and Linux writes at most
/// 2 GiB − 4 KiB per call), then synced.
///
/// - Parameter naming: The file errors name (the destination of a temporary file), or nil
///   for `path`.
/// - Throws: `DataError` `.unreadable` naming `naming ?? path`.
func writeFile(_ bytes: [UInt8], to path: String, naming: String? = nil, chunk: Int = 1 << 26) throws(DataError) {
    precondition(chunk > 0, "writeFile: chunk must be positive")
    func failure(_ what: String) -> DataError {
        DataError(.unreadable, source: naming ?? path, detail: "cannot write the catalog cache (\(what)): \(String(cString: strerror(errno)))")
    }
    let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
    guard fd >= 0 else { throw failure("open") }
    defer { close(fd) }
    let problem: DataError? = bytes.withUnsafeBytes { raw in
        var at = 0
        while at < raw.count {
            let written = write(fd, raw.baseAddress! + at, min(chunk, raw.count - at))
            if written < 0 {
                if errno == EINTR { continue }
                return failure("write")
            }
            at += written
        }
        return fsync(fd) == 0 ? nil : failure("fsync")
    }
    if let problem { throw problem }
}

/// A file mapped read-only, unmapped when the last reader lets go of it: a cache is read in
/// place (a large catalog keeps reading its columns there, and holds the mapping), and the
/// pages already read are released (`release(_:)`), since a mapped page counts in the
/// process's resident memory until then (ten million items peaked 1.7 GB higher).
///
/// The file must not be rewritten in place while mapped (a truncated mapping faults): the
/// cache is only ever replaced by a rename, which leaves the mapped file as it was.
final class MappedFile: @unchecked Sendable {  // immutable after init; `release` is a hint to the kernel
    /// The file's bytes.
    let bytes: UnsafeRawBufferPointer

    /// Maps `path`.
    ///
    /// - Throws: `DataError` `.unreadable` naming `path` (missing, unreadable, not a regular file).
    init(path: String) throws(DataError) {
        func failure(_ reason: String) -> DataError {
            DataError(.unreadable, source: path, detail: "cannot read the catalog cache: \(reason)")
        }
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw failure(String(cString: strerror(errno))) }
        defer { close(fd) }
        var status = stat()
        guard fstat(fd, &status) == 0 else { throw failure(String(cString: strerror(errno))) }
        guard status.st_mode & S_IFMT == S_IFREG else { throw failure("not a regular file") }
        let size = Int(status.st_size)
        guard size > 0 else {
            bytes = UnsafeRawBufferPointer(start: nil, count: 0)
            return
        }
        let base = mmap(nil, size, PROT_READ, MAP_PRIVATE, fd, 0)
        guard let base, base != UnsafeMutableRawPointer(bitPattern: -1) else { throw failure(String(cString: strerror(errno))) }
        bytes = UnsafeRawBufferPointer(start: base, count: size)
    }

    deinit {
        if let base = bytes.baseAddress { munmap(UnsafeMutableRawPointer(mutating: base), bytes.count) }
    }

    /// Drops the whole pages within `range` from this process's memory; they are read from the
    /// file (or the page cache) again if touched. A read-only private file mapping loses
    /// nothing by it.
    func release(_ range: Range<Int>) {
        let page = Self.pageSize
        let start = (range.lowerBound + page - 1) / page * page, end = min(range.upperBound, bytes.count) / page * page
        guard start < end, let base = bytes.baseAddress else { return }
        _ = madvise(UnsafeMutableRawPointer(mutating: base + start), end - start, Int32(MADV_DONTNEED))
    }

    private static let pageSize = max(1, Int(sysconf(Int32(_SC_PAGESIZE))))
}
