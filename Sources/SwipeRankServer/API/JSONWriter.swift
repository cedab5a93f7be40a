import Foundation
import SwipeRank

/// Writes JSON bytes directly, exactly as `JSONEncoder` with `[.sortedKeys,
/// .withoutEscapingSlashes]` writes them (same key order, number formatting and escapes), for
/// the responses every swipe and deck sends. Foundation's encoder builds a tree of boxed values
/// and dictionaries first; it took a quarter of the server's CPU under load (a full deck of 10
/// cards), this writer a small fraction. `JSONWriterTests` compares both on seeded random
/// values of every type that has a writer, and the golden files pin the bytes.
struct JSONWriter {
    private(set) var bytes: [UInt8] = []

    init(capacity: Int = 1_024) { bytes.reserveCapacity(capacity) }

    /// Appends literal JSON (a key with its colon, punctuation).
    mutating func raw(_ text: StaticString) {
        text.withUTF8Buffer { bytes.append(contentsOf: $0) }
    }

    /// Appends JSON written before (by this writer).
    mutating func raw(_ json: [UInt8]) { bytes.append(contentsOf: json) }

    /// `"key":`, escaped (for keys only known at run time).
    mutating func key(_ key: String) {
        string(key)
        bytes.append(UInt8(ascii: ":"))
    }

    /// A JSON string: `"`, `\` and control characters escaped as Foundation does (`\b \f \n
    /// \r \t`, else `\u00xx` in lowercase hex); `/` and non-ASCII written as they are.
    mutating func string(_ value: String) {
        bytes.append(UInt8(ascii: "\""))
        let utf8 = value.utf8
        var start = utf8.startIndex
        var i = start
        while i != utf8.endIndex {
            let byte = utf8[i]
            if byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") {
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
                start = utf8.index(after: i)
            }
            i = utf8.index(after: i)
        }
        bytes.append(contentsOf: utf8[start..<utf8.endIndex])
        bytes.append(UInt8(ascii: "\""))
    }

    /// A number: the shortest representation that reads back the same (`description`), with
    /// a trailing `.0` dropped, as Foundation writes it.
    ///
    /// - Throws: `EncodingError.invalidValue` for NaN and infinities, which JSON cannot carry.
    mutating func number(_ value: Double) throws {
        guard value.isFinite else {
            throw EncodingError.invalidValue(value, .init(codingPath: [], debugDescription: "\(value) is not a JSON number"))
        }
        var text = value.description
        if text.hasSuffix(".0") { text.removeLast(2) }
        bytes.append(contentsOf: text.utf8)
    }

    /// An integer.
    mutating func number(_ value: Int) {
        bytes.append(contentsOf: String(value).utf8)
    }

    /// `true` or `false`.
    mutating func bool(_ value: Bool) {
        if value { raw("true") } else { raw("false") }
    }

    /// `null`.
    mutating func null() { raw("null") }

    /// A string or null.
    mutating func string(_ value: String?) {
        if let value { string(value) } else { null() }
    }

    /// An array of strings.
    mutating func strings<S: Sequence>(_ values: S) where S.Element == String {
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
    mutating func array<S: Sequence>(_ values: S) throws where S.Element: JSONWritable {
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
    mutating func object<V>(_ entries: [(key: String, value: V)], _ write: (inout JSONWriter, V) throws -> Void) rethrows {
        bytes.append(UInt8(ascii: "{"))
        for (i, entry) in entries.sorted(by: { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }).enumerated() {
            if i > 0 { bytes.append(UInt8(ascii: ",")) }
            key(entry.key)
            try write(&self, entry.value)
        }
        bytes.append(UInt8(ascii: "}"))
    }
}

/// A value with a hand-written JSON form, byte-identical to its `Encodable` form under
/// `WireJSON`'s options (which `WireJSON.encode` then skips).
protocol JSONWritable {
    /// Appends the value's JSON.
    func write(to writer: inout JSONWriter) throws
}

// Keys in each writer below are in byte order, as `.sortedKeys` puts them.

extension LearningState: JSONWritable {
    func write(to w: inout JSONWriter) throws {
        w.raw("{\"phase\":")
        w.string(phase.rawValue)
        w.raw(",\"preference_weights\":")
        try w.object(preferenceWeights.map { ($0.key, $0.value) }) { w, value in try w.number(value) }
        w.raw(",\"progress\":")
        try w.number(progress)
        w.raw("}")
    }
}

extension ItemSummary.Value: JSONWritable {
    func write(to w: inout JSONWriter) throws {
        switch self {
        case let .text(text): w.string(text)
        case let .number(number): try w.number(number)
        case .missing: w.null()
        }
    }
}

extension ItemSummary: JSONWritable {
    func write(to w: inout JSONWriter) throws {
        var entries: [(key: String, value: Value)] = [("id", .text(id)), ("name", .text(name))]
        entries.reserveCapacity(attributes.count + 2)
        for (key, value) in attributes where key != "id" && key != "name" { entries.append((key, value)) }
        try w.object(entries) { w, value in try value.write(to: &w) }
    }
}

extension FeedbackPrompt: JSONWritable {
    func write(to w: inout JSONWriter) throws {
        w.raw("{\"card_id\":")
        w.string(cardID)
        w.raw(",\"options\":")
        w.strings(options.map(\.rawValue))
        w.raw(",\"reason\":")
        w.string(reason.rawValue)
        w.raw("}")
    }
}

extension FullCard: JSONWritable {
    func write(to w: inout JSONWriter) throws {
        w.raw("{")
        if let distance = card.distance {
            w.raw("\"distance\":")
            try w.number(distance)
            w.raw(",")
        }
        w.raw("\"explanations\":")
        w.strings(card.explanations)
        w.raw(",\"grade\":")
        w.string(card.grade.rawValue)
        w.raw(",\"is_probe\":")
        w.bool(card.isProbe)
        w.raw(",\"match_score\":")
        try w.number(card.matchScore)
        w.raw(",\"matched_majors\":")
        w.strings(card.matchedMajors)
        if let position {
            w.raw(",\"position\":")
            w.number(position)
        }
        w.raw(",\"school\":")
        if let schoolJSON { w.raw(schoolJSON) } else { try card.item.write(to: &w) }
        w.raw("}")
    }
}

extension MinimalCard: JSONWritable {
    func write(to w: inout JSONWriter) throws {
        w.raw("{\"grade\":")
        w.string(grade.rawValue)
        w.raw(",\"is_probe\":")
        w.bool(isProbe)
        w.raw(",\"match_score\":")
        try w.number(matchScore)
        w.raw(",\"name\":")
        w.string(name)
        if let position {
            w.raw(",\"position\":")
            w.number(position)
        }
        w.raw(",\"school_id\":")
        w.string(schoolID)
        w.raw("}")
    }
}

extension CompressedCard: JSONWritable {
    func write(to w: inout JSONWriter) throws {
        w.raw("{\"i\":")
        w.string(i)
        w.raw(",\"img\":")
        w.string(img)
        w.raw(",\"l\":")
        w.string(l)
        w.raw(",\"m\":")
        w.number(m)
        w.raw(",\"n\":")
        w.string(n)
        if let p {
            w.raw(",\"p\":")
            w.number(p)
        }
        w.raw(",\"q\":")
        w.bool(q)
        w.raw("}")
    }
}

extension CardList: JSONWritable {
    func write(to w: inout JSONWriter) throws {
        switch self {
        case let .full(cards): try w.array(cards)
        case let .minimal(cards): try w.array(cards)
        case let .compressed(cards): try w.array(cards)
        }
    }
}

extension DeckResponse: JSONWritable {
    func write(to w: inout JSONWriter) throws {
        w.raw("{\"deck_id\":")
        w.string(deckID)
        w.raw(",\"learning_state\":")
        try learningState.write(to: &w)
        w.raw(",\"preload\":")
        w.bool(preload)
        w.raw(",\"recommendations\":")
        try recommendations.write(to: &w)
        w.raw(",\"total_swipes\":")
        w.number(totalSwipes)
        w.raw("}")
    }
}

extension SwipeResponse: JSONWritable {
    func write(to w: inout JSONWriter) throws {
        w.raw("{\"feedback\":")
        if let feedback { try feedback.write(to: &w) } else { w.null() }
        w.raw(",\"learning_state\":")
        try learningState.write(to: &w)
        w.raw(",\"outcome\":")
        w.string(outcome)
        w.raw(",\"swipe_id\":")
        w.string(swipeID)
        w.raw(",\"total_swipes\":")
        w.number(totalSwipes)
        w.raw("}")
    }
}

extension SwipeRequest: JSONWritable {
    func write(to w: inout JSONWriter) throws {
        w.raw("{\"action\":")
        w.string(action.rawValue)
        w.raw(",\"school_id\":")
        w.string(schoolID)
        w.raw(",\"swipe_id\":")
        w.string(swipeID)
        w.raw(",\"timestamp\":")
        w.number(Int(timestamp))
        w.raw("}")
    }
}

extension ServedPayload.Card: JSONWritable {
    func write(to w: inout JSONWriter) throws {
        w.raw("{")
        if let band {
            w.raw("\"band\":")
            w.string(band)
            w.raw(",")
        }
        w.raw("\"card_id\":")
        w.string(cardID)
        w.raw(",\"is_probe\":")
        w.bool(isProbe)
        w.raw(",\"position\":")
        w.number(position)
        w.raw(",\"predicted_match\":")
        try w.number(predictedMatch)
        w.raw(",\"propensity\":")
        try w.number(propensity)
        w.raw("}")
    }
}

extension ServedPayload: JSONWritable {
    func write(to w: inout JSONWriter) throws {
        w.raw("{\"cards\":")
        try w.array(cards)
        w.raw(",\"count\":")
        w.number(count)
        if let modelVersion {
            w.raw(",\"model_version\":")
            w.string(modelVersion)
        }
        w.raw(",\"preload\":")
        w.bool(preload)
        w.raw("}")
    }
}

extension LearningStateResponse: JSONWritable {
    func write(to w: inout JSONWriter) throws {
        w.raw("{\"learning_state\":")
        try learningState.write(to: &w)
        w.raw(",\"served_cards\":")
        w.number(servedCards)
        w.raw(",\"total_swipes\":")
        w.number(totalSwipes)
        w.raw(",\"unseen_cards\":")
        w.number(unseenCards)
        w.raw("}")
    }
}
