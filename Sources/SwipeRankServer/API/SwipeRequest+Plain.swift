import Foundation
import SwipeRank

extension SwipeRequest {
    /// The swipe in a body of the plain shape every client sends: one object with exactly the
    /// four keys (any order, JSON whitespace between tokens), strings without escapes, `action`
    /// `"like"` or `"dislike"`, `timestamp` a plain non-negative integer within range. Anything
    /// else — escapes, other keys, numbers with fractions or exponents, a value out of range,
    /// malformed JSON — gives nil, and the caller decodes with `JSONInput`, which names the
    /// error; so this accepts a subset of what that accepts, with the same values. Why:
    /// `JSONDecoder` took 14 µs for a 90-byte body (6.6% of the server's CPU on swipes).
    ///
    /// - Parameter body: The request body.
    /// - Returns: The request, or nil when the body is not of the plain shape.
    /// - Complexity: O(body.count).
    static func plain(_ body: Data) -> SwipeRequest? {
        var reader = PlainReader(bytes: [UInt8](body))
        return reader.swipe()
    }
}

/// The scanner behind `SwipeRequest.plain`: every method returns nil at the first byte outside
/// the plain shape.
private struct PlainReader {
    let bytes: [UInt8]
    var at = 0

    mutating func swipe() -> SwipeRequest? {
        var swipeID: String?, itemID: String?, action: SwipeAction?, timestamp: Int64?
        guard take(UInt8(ascii: "{")) else { return nil }
        for i in 0..<4 {
            if i > 0 { guard take(UInt8(ascii: ",")) else { return nil } }
            guard let key = string(), take(UInt8(ascii: ":")) else { return nil }
            switch key {
            case "swipe_id" where swipeID == nil: swipeID = string()
            case "school_id" where itemID == nil, "item_id" where itemID == nil: itemID = string()
            case "action" where action == nil:
                switch string() {
                case "like": action = .like
                case "dislike": action = .dislike
                default: return nil
                }
            case "timestamp" where timestamp == nil: timestamp = integer()
            default: return nil
            }
        }
        guard take(UInt8(ascii: "}")) else { return nil }
        skipWhitespace()
        guard at == bytes.count, let swipeID, let itemID, let action, let timestamp,
              timestamp <= SwipeRequest.maxTimestamp else { return nil }
        return SwipeRequest(swipeID: swipeID, itemID: itemID, action: action, timestamp: timestamp)
    }

    mutating func skipWhitespace() {
        while at < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[at]) { at += 1 }
    }

    /// The next token is `byte`.
    mutating func take(_ byte: UInt8) -> Bool {
        skipWhitespace()
        guard at < bytes.count, bytes[at] == byte else { return false }
        at += 1
        return true
    }

    /// A string without escapes or control characters, valid UTF-8.
    mutating func string() -> String? {
        guard take(UInt8(ascii: "\"")) else { return nil }
        let start = at
        while at < bytes.count, bytes[at] != UInt8(ascii: "\"") {
            guard bytes[at] >= 0x20, bytes[at] != UInt8(ascii: "\\") else { return nil }
            at += 1
        }
        guard at < bytes.count else { return nil }
        defer { at += 1 }
        return String(validating: bytes[start..<at], as: UTF8.self)
    }

    /// Digits only: no sign, no fraction or exponent, no leading zero (JSON forbids those).
    mutating func integer() -> Int64? {
        skipWhitespace()
        let start = at
        var value: Int64 = 0
        while at < bytes.count, bytes[at] >= UInt8(ascii: "0"), bytes[at] <= UInt8(ascii: "9") {
            let (times, o1) = value.multipliedReportingOverflow(by: 10)
            let (sum, o2) = times.addingReportingOverflow(Int64(bytes[at] - UInt8(ascii: "0")))
            guard !o1, !o2 else { return nil }
            value = sum
            at += 1
        }
        let count = at - start
        guard count > 0, count == 1 || bytes[start] != UInt8(ascii: "0") else { return nil }
        // A fraction or an exponent right after the digits is not plain.
        if at < bytes.count, [UInt8(ascii: "."), UInt8(ascii: "e"), UInt8(ascii: "E")].contains(bytes[at]) { return nil }
        return value
    }
}
