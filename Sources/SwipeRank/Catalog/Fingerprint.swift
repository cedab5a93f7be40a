/// FNV-1a, 64 bits: a fast, stable (unseeded, unlike `Hasher`) digest for fingerprints that
/// must agree across processes and machines. Not cryptographic: it detects accidents (another
/// catalog, another configuration, a hand-edited snapshot), not a determined forger.
package struct FNV1a64 {
    /// The digest so far.
    package private(set) var state: UInt64 = 0xCBF2_9CE4_8422_2325

    /// An empty digest.
    package init() {}

    /// Adds one byte.
    package mutating func combine(byte: UInt8) {
        state = (state ^ UInt64(byte)) &* 0x0000_0100_0000_01B3
    }

    /// Adds a value's eight bytes, least significant first.
    package mutating func combine(_ value: UInt64) {
        var v = value
        for _ in 0..<8 { combine(byte: UInt8(truncatingIfNeeded: v)); v >>= 8 }
    }

    /// Adds a value's four bytes, least significant first, then four zero bytes: exactly what
    /// `combine(UInt64(value))` adds, with the zero bytes' four steps (each only a multiply by
    /// the prime, as x ^ 0 = x) folded into one multiply by the prime's fourth power (mod 2⁶⁴).
    /// The fingerprint of ten million items' features was a second of their start.
    package mutating func combineWidened(_ value: UInt32) {
        var v = value
        for _ in 0..<4 { combine(byte: UInt8(truncatingIfNeeded: v)); v >>= 8 }
        state = state &* 0x9FFA_AC08_5635_BC91  // 0x100000001B3⁴ mod 2⁶⁴
    }

    /// Adds a string's UTF-8 bytes and a separator.
    package mutating func combine(_ text: String) {
        for byte in text.utf8 { combine(byte: byte) }
        combine(byte: 0xFF)  // Not UTF-8: separates consecutive strings.
    }

    /// The digest as 16 lowercase hex digits.
    package var hexDigest: String { Self.hexDigest(of: state) }

    /// A state as 16 lowercase hex digits (what `hexDigest` reports for it).
    package static func hexDigest(of state: UInt64) -> String {
        let hex = String(state, radix: 16)
        return String(repeating: "0", count: 16 - hex.count) + hex
    }
}

extension Catalog {
    /// A digest of the item ids, the feature column names and every feature value (their bit
    /// patterns): two catalogs with the same fingerprint score every student identically. A
    /// session snapshot carries it, so a restore over another catalog (even one of the same
    /// size) is refused.
    ///
    /// - Complexity: O(N × d) for the first call on a catalog (or none when it was read from a
    ///   catalog cache, which stores it), then O(1).
    public var fingerprint: String { derivedFingerprint.value { computeFingerprint() } }

    /// The digest `fingerprint` reports, computed from the rows.
    func computeFingerprint() -> String {
        var hasher = FNV1a64()
        hasher.combine(UInt64(count))
        // Each id's bytes and separator as `combine(String)` adds them, read from the column
        // without building each id's String.
        ids.withUTF8 { bytes in
            for row in 0..<ids.count {
                for i in ids.byteRange(row) { hasher.combine(byte: bytes[i]) }
                hasher.combine(byte: 0xFF)
            }
        }
        for column in columns { hasher.combine(column.name) }
        for v in features.elements { hasher.combineWidened(v.bitPattern) }
        return hasher.hexDigest
    }
}
