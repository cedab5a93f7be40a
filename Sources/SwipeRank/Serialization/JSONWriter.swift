import Foundation

/// Writes JSON bytes directly, exactly as `JSONEncoder` with `[.sortedKeys,
/// .withoutEscapingSlashes]` writes them (same key order, number formatting and escapes), for
/// the responses every swipe and deck sends and the served cards of session snapshots.
/// Foundation's encoder builds a tree of boxed values and dictionaries first; it took a quarter
/// of the server's CPU under load (a full deck of 10 cards), this writer a small fraction.
/// `JSONWriterTests` compares both on seeded random values of every type that has a writer, and
/// the golden files pin the bytes. Package access: the service writes its wire types with it.
package struct JSONWriter {
    /// The JSON written so far.
    package private(set) var bytes: [UInt8] = []

    /// An empty writer.
    ///
    /// - Parameter capacity: Bytes to reserve.
    package init(capacity: Int = 1_024) { bytes.reserveCapacity(capacity) }

    /// Appends literal JSON (a key with its colon, punctuation).
    package mutating func raw(_ text: StaticString) {
        text.withUTF8Buffer { bytes.append(contentsOf: $0) }
    }

    /// Appends JSON written before (by this writer).
    package mutating func raw(_ json: [UInt8]) { bytes.append(contentsOf: json) }

    /// Appends JSON written before (by this writer), a part of a larger table.
    package mutating func raw(_ json: ArraySlice<UInt8>) { bytes.append(contentsOf: json) }

    /// `"key":`, escaped (for keys only known at run time).
    package mutating func key(_ key: String) {
        string(key)
        bytes.append(UInt8(ascii: ":"))
    }

    /// A JSON string: `"`, `\` and control characters escaped as Foundation does (`\b \f \n
    /// \r \t`, else `\u00xx` in lowercase hex); `/` and non-ASCII written as they are.
    package mutating func string(_ value: String) {
        bytes.append(UInt8(ascii: "\""))
        // The UTF-8 read as one buffer, and the runs between escapes copied whole: stepping a
        // `String.UTF8View` index byte by byte was most of this function's time, and strings
        // (reasons, majors) are most of a card's bytes.
        var value = value  // withUTF8 is mutating: it may make a bridged string native
        value.withUTF8 { utf8 in
            var start = 0
            for i in 0..<utf8.count {
                let byte = utf8[i]
                guard byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") else { continue }
                bytes.append(contentsOf: utf8[start..<i])
                bytes.append(UInt8(ascii: "\\"))
                switch byte {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"): bytes.append(byte)
                case 0x08: bytes.append(UInt8(ascii: "b"))
                case 0x0C: bytes.append(UInt8(ascii: "f"))
                case 0x0A: bytes.append(UInt8(ascii: "n"))
                case 0x0D: bytes.append(UInt8(ascii: "r"))
                case 0x09: bytes.append(UInt8(ascii: "t"))
                default:
                    let hex = "0123456789abcdef".utf8
                    bytes.append(contentsOf: "u00".utf8)
                    bytes.append(hex[hex.index(hex.startIndex, offsetBy: Int(byte >> 4))])
                    bytes.append(hex[hex.index(hex.startIndex, offsetBy: Int(byte & 15))])
                }
                start = i + 1
            }
            bytes.append(contentsOf: utf8[start...])
        }
        bytes.append(UInt8(ascii: "\""))
    }

    /// A number: the shortest representation that reads back the same (`description`), with
    /// a trailing `.0` dropped, as Foundation writes it.
    ///
    /// - Throws: `EncodingError.invalidValue` for NaN and infinities, which JSON cannot carry.
    package mutating func number(_ value: Double) throws {
        // A value of at most four decimals (match scores and named weights are rounded to four)
        // is written from its integer digits: formatting by `description` was most of writing
        // a deck's numbers. The shortest text that reads back as `value` is then its four-decimal
        // text with trailing zeros dropped: that text reads back as `value` (the quotient below
        // is the double nearest to it), and any other text of four or fewer decimals is at least
        // 10⁻⁴ away, more than `value`'s spacing below 10⁹, so cannot read back the same.
        // Below 10⁻⁴ `description` switches to exponents; zero keeps its sign there.
        let scaled = (value * 10_000).rounded()
        if scaled.magnitude < 1e13, scaled != 0, scaled / 10_000 == value {
            var k = Int64(scaled)
            if k < 0 {
                bytes.append(UInt8(ascii: "-"))
                k = -k
            }
            digits(UInt64(k / 10_000))
            var fraction = Int(k % 10_000)
            guard fraction != 0 else { return }
            var places = 4
            while fraction % 10 == 0 { (fraction, places) = (fraction / 10, places - 1) }
            bytes.append(UInt8(ascii: "."))
            var divisor = 1
            for _ in 1..<places { divisor *= 10 }
            while divisor > 0 {
                bytes.append(UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: fraction / divisor % 10))
                divisor /= 10
            }
            return
        }
        guard value.isFinite else {
            throw EncodingError.invalidValue(value, .init(codingPath: [], debugDescription: "\(value) is not a JSON number"))
        }
        var text = value.description
        // The bytes read once (a score's text is a small string, held inline): `hasSuffix` and
        // `removeLast(2)` walked it by characters, several times a number's formatting.
        text.withUTF8 { utf8 in
            let n = utf8.count
            let whole = n >= 2 && utf8[n - 2] == UInt8(ascii: ".") && utf8[n - 1] == UInt8(ascii: "0")
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[..<(whole ? n - 2 : n)]))
        }
    }

    /// An integer.
    package mutating func number(_ value: Int) {
        if value < 0 { bytes.append(UInt8(ascii: "-")) }
        digits(UInt64(value.magnitude))
    }

    /// The decimal digits of `value`, most significant first (written into a stack buffer
    /// back to front, then appended: `String(value)` built a string to copy).
    private mutating func digits(_ value: UInt64) {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { buffer in
            var (v, i) = (value, 20)
            repeat {
                i -= 1
                buffer[i] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: v % 10)
                v /= 10
            } while v > 0
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: buffer[i...]))
        }
    }

    /// `true` or `false`.
    package mutating func bool(_ value: Bool) {
        if value { raw("true") } else { raw("false") }
    }

    /// `null`.
    package mutating func null() { raw("null") }

    /// A string or null.
    package mutating func string(_ value: String?) {
        if let value { string(value) } else { null() }
    }

    /// An array of strings.
    package mutating func strings<S: Sequence>(_ values: S) where S.Element == String {
        bytes.append(UInt8(ascii: "["))
        var first = true
        for value in values {
            if !first { bytes.append(UInt8(ascii: ",")) }
            first = false
            string(value)
        }
        bytes.append(UInt8(ascii: "]"))
    }

    /// An array of writable values.
    package mutating func array<S: Sequence>(_ values: S) throws where S.Element: JSONWritable {
        bytes.append(UInt8(ascii: "["))
        var first = true
        for value in values {
            if !first { bytes.append(UInt8(ascii: ",")) }
            first = false
            try value.write(to: &self)
        }
        bytes.append(UInt8(ascii: "]"))
    }

    /// An object with run-time keys, in the byte order of the keys (what `.sortedKeys` does).
    package mutating func object<V>(_ entries: [(key: String, value: V)], _ write: (inout JSONWriter, V) throws -> Void) rethrows {
        bytes.append(UInt8(ascii: "{"))
        // The entries' places sorted, not the entries: sorting those moved and retained their
        // strings, and was most of writing a learning state.
        var order = Array(entries.indices)
        order.sort { JSONWriter.precedes(entries[$0].key, entries[$1].key) }
        for (n, i) in order.enumerated() {
            if n > 0 { bytes.append(UInt8(ascii: ",")) }
            key(entries[i].key)
            try write(&self, entries[i].value)
        }
        bytes.append(UInt8(ascii: "}"))
    }
}

extension JSONWriter {
    /// Whether `a` sorts before `b` in byte order of their UTF-8 (the order of `.sortedKeys`):
    /// a `memcmp` of the two buffers, where comparing the views stepped them byte by byte.
    package static func precedes(_ a: String, _ b: String) -> Bool {
        var (a, b) = (a, b)  // withUTF8 is mutating: it may make a bridged string native
        return a.withUTF8 { x in
            b.withUTF8 { y in
                let common = min(x.count, y.count)
                let order = common == 0 ? 0 : memcmp(x.baseAddress!, y.baseAddress!, common)
                return order != 0 ? order < 0 : x.count < y.count
            }
        }
    }
}

/// A value with a hand-written JSON form, byte-identical to its `Encodable` form under
/// `WireJSON`'s options (which `WireJSON.encode` then skips).
package protocol JSONWritable {
    /// Appends the value's JSON.
    func write(to writer: inout JSONWriter) throws
}
