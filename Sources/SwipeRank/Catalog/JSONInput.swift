import Foundation

/// Strict JSON input: every JSON document the library reads from data (profiles, schemas,
/// configurations, snapshots) goes through here before `JSONDecoder`, so that
///
/// - malformed JSON is located by `source:line:column` (Foundation only says "not valid JSON");
/// - a key given twice in one object is an error (decoders silently keep one of them);
/// - nesting deeper than `maxDepth` and documents larger than the caller's limit are refused
///   before any work proportional to them is done;
/// - decoding errors name the JSON path of the field (`home.latitude`, `features[2].edges`).
///
///     let profile = try JSONInput.decode(StudentProfile.self, from: data, source: "b.json")
public enum JSONInput {
    /// The deepest nesting accepted.
    public static var maxDepth: Int { 64 }

    /// Checks syntax and duplicate keys, then decodes.
    ///
    /// - Parameters:
    ///   - type: The type to decode.
    ///   - data: The JSON bytes.
    ///   - source: The name shown in errors (a path, "profile", "request body").
    ///   - maxBytes: The largest document accepted.
    /// - Returns: The decoded value.
    /// - Throws: `DataError`: `.unreadable` with line:column for malformed JSON, too deep or
    ///   too large input; `.invalidValue` naming the field for a duplicate key, a wrong type,
    ///   an unknown key or a value the type rejects.
    /// - Complexity: O(data.count) before the decoder runs.
    public static func decode<T: Decodable>(_ type: T.Type, from data: Data, source: String,
                                            maxBytes: Int = 16 << 20) throws(DataError) -> T {
        guard data.count <= maxBytes else {
            throw DataError(.unreadable, source: source, detail: "input is \(data.count) bytes, the limit is \(maxBytes)")
        }
        try check(data, source: source)
        do {
            return try JSONDecoder().decode(type, from: data)
        } catch let error as DecodingError {
            throw DataError.decoding(error, source: source, choices: (T.self as? any JSONChoiceFields.Type)?.choiceFields ?? [:])
        } catch let error as DataError {
            // A type that validates while decoding (a GeoPoint, a configuration) throws DataError.
            throw DataError(error.kind, source: source, line: error.line, column: error.column, field: error.field, detail: error.detail)
        } catch {
            throw DataError(.unreadable, source: source, detail: "cannot decode: \(error)")
        }
    }

    /// Checks that `data` is one well-formed JSON value (RFC 8259) with no key repeated within
    /// an object and nesting at most `maxDepth`.
    ///
    /// - Parameters:
    ///   - data: The bytes.
    ///   - source: The name shown in errors.
    /// - Throws: `DataError` located by line and column (1-based; the column counts bytes).
    /// - Complexity: O(data.count).
    public static func check(_ data: Data, source: String) throws(DataError) {
        let bytes = [UInt8](data)
        var scanner = JSONScanner(bytes: bytes, source: source)
        try scanner.document()
    }
}

/// The recursive-descent checker behind `JSONInput.check`.
private struct JSONScanner {
    let bytes: [UInt8]
    let source: String
    var position = 0
    var line = 1
    var lineStart = 0

    init(bytes: [UInt8], source: String) {
        self.bytes = bytes
        self.source = source
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { position = 3; lineStart = 3 }
    }

    func fail(_ detail: String, kind: DataError.Kind = .unreadable, field: String? = nil) -> DataError {
        DataError(kind, source: source, line: line, column: position - lineStart + 1, field: field,
                  detail: field.map { "\($0): \(detail)" } ?? "malformed JSON: \(detail)")
    }

    var current: UInt8? { position < bytes.count ? bytes[position] : nil }

    mutating func skipWhitespace() {
        while let b = current {
            switch b {
            case 0x20, 0x09, 0x0D: position += 1
            case 0x0A: position += 1; line += 1; lineStart = position
            default: return
            }
        }
    }

    mutating func document() throws(DataError) {
        skipWhitespace()
        guard current != nil else { throw fail("empty input") }
        try value(path: "", depth: 1)
        skipWhitespace()
        if current != nil { throw fail("unexpected text after the JSON value") }
    }

    mutating func value(path: String, depth: Int) throws(DataError) {
        guard depth <= JSONInput.maxDepth else { throw fail("nested deeper than \(JSONInput.maxDepth) levels") }
        guard let b = current else { throw fail("unexpected end of input, expected a value") }
        switch b {
        case UInt8(ascii: "{"): try object(path: path, depth: depth)
        case UInt8(ascii: "["): try array(path: path, depth: depth)
        case UInt8(ascii: "\""): _ = try string()
        case UInt8(ascii: "t"): try literal("true")
        case UInt8(ascii: "f"): try literal("false")
        case UInt8(ascii: "n"): try literal("null")
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): try number()
        default: throw fail("unexpected character \(JSONScanner.describe(b)), expected a value")
        }
    }

    mutating func object(path: String, depth: Int) throws(DataError) {
        position += 1
        skipWhitespace()
        if current == UInt8(ascii: "}") { position += 1; return }
        var keys = Set<String>()
        while true {
            skipWhitespace()
            guard current == UInt8(ascii: "\"") else { throw fail("expected a quoted key") }
            let keyLine = line, keyColumn = position - lineStart + 1
            let key = try string()
            let field = path.isEmpty ? key : "\(path).\(key)"
            guard keys.insert(key).inserted else {
                throw DataError(.invalidValue, source: source, line: keyLine, column: keyColumn, field: field,
                                detail: "\(JSONScanner.truncated(field)): key given twice")
            }
            skipWhitespace()
            guard current == UInt8(ascii: ":") else { throw fail("expected ':' after a key") }
            position += 1
            skipWhitespace()
            try value(path: field, depth: depth + 1)
            skipWhitespace()
            switch current {
            case UInt8(ascii: ","): position += 1
            case UInt8(ascii: "}"): position += 1; return
            default: throw fail("expected ',' or '}' in an object")
            }
        }
    }

    mutating func array(path: String, depth: Int) throws(DataError) {
        position += 1
        skipWhitespace()
        if current == UInt8(ascii: "]") { position += 1; return }
        var index = 0
        while true {
            skipWhitespace()
            try value(path: "\(path)[\(index)]", depth: depth + 1)
            index += 1
            skipWhitespace()
            switch current {
            case UInt8(ascii: ","): position += 1
            case UInt8(ascii: "]"): position += 1; return
            default: throw fail("expected ',' or ']' in an array")
            }
        }
    }

    /// Reads a string (the opening quote at `position`) and returns its decoded text.
    mutating func string() throws(DataError) -> String {
        position += 1
        var out: [UInt8] = []
        while true {
            guard let b = current else { throw fail("unterminated string") }
            switch b {
            case UInt8(ascii: "\""):
                position += 1
                guard let text = String(validating: out, as: UTF8.self) else { throw fail("string is not valid UTF-8") }
                return text
            case UInt8(ascii: "\\"):
                position += 1
                guard let e = current else { throw fail("unterminated escape") }
                position += 1
                switch e {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): out.append(e)
                case UInt8(ascii: "b"): out.append(0x08)
                case UInt8(ascii: "f"): out.append(0x0C)
                case UInt8(ascii: "n"): out.append(0x0A)
                case UInt8(ascii: "r"): out.append(0x0D)
                case UInt8(ascii: "t"): out.append(0x09)
                case UInt8(ascii: "u"):
                    var scalar = try hex4()
                    if (0xD800...0xDBFF).contains(scalar) {
                        guard current == UInt8(ascii: "\\"), position + 1 < bytes.count, bytes[position + 1] == UInt8(ascii: "u") else {
                            throw fail("unpaired surrogate in \\u escape")
                        }
                        position += 2
                        let low = try hex4()
                        guard (0xDC00...0xDFFF).contains(low) else { throw fail("unpaired surrogate in \\u escape") }
                        scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                    } else if (0xDC00...0xDFFF).contains(scalar) {
                        throw fail("unpaired surrogate in \\u escape")
                    }
                    out.append(contentsOf: Array(String(Character(Unicode.Scalar(scalar)!)).utf8))
                default:
                    position -= 1
                    throw fail("invalid escape \\\(JSONScanner.describe(e))")
                }
            case 0x00..<0x20:
                throw fail("control character \(JSONScanner.describe(b)) in a string (escape it)")
            default:
                out.append(b)
                position += 1
            }
        }
    }

    mutating func hex4() throws(DataError) -> UInt32 {
        var value: UInt32 = 0
        for _ in 0..<4 {
            guard let b = current else { throw fail("unterminated \\u escape") }
            let digit: UInt32
            switch b {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt32(b - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = UInt32(b - UInt8(ascii: "a") + 10)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = UInt32(b - UInt8(ascii: "A") + 10)
            default: throw fail("\\u needs four hex digits")
            }
            value = value * 16 + digit
            position += 1
        }
        return value
    }

    mutating func literal(_ word: StaticString) throws(DataError) {
        let expected = word.withUTF8Buffer { Array($0) }
        guard bytes.count - position >= expected.count, Array(bytes[position..<(position + expected.count)]) == expected else {
            throw fail("unexpected text, expected \(word)")
        }
        position += expected.count
    }

    mutating func number() throws(DataError) {
        func digits(_ scanner: inout JSONScanner) -> Int {
            let start = scanner.position
            while let b = scanner.current, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(b) { scanner.position += 1 }
            return scanner.position - start
        }
        if current == UInt8(ascii: "-") { position += 1 }
        if current == UInt8(ascii: "0") {
            position += 1
        } else {
            guard digits(&self) > 0 else { throw fail("a number needs digits") }
        }
        if current == UInt8(ascii: ".") {
            position += 1
            guard digits(&self) > 0 else { throw fail("a number needs digits after '.'") }
        }
        if current == UInt8(ascii: "e") || current == UInt8(ascii: "E") {
            position += 1
            if current == UInt8(ascii: "+") || current == UInt8(ascii: "-") { position += 1 }
            guard digits(&self) > 0 else { throw fail("a number needs digits in its exponent") }
        }
    }

    static func describe(_ b: UInt8) -> String {
        (0x21..<0x7F).contains(b) ? "'\(Character(Unicode.Scalar(b)))'" : String(format: "0x%02X", b)
    }

    static func truncated(_ text: String) -> String { DataError.truncated(text) }
}

extension DataError {
    /// Text from the input shown in a message, cut to 64 characters: a 50 MB value must not be
    /// echoed into logs.
    package static func truncated(_ text: String, limit: Int = 64) -> String {
        text.utf8.count <= limit ? text : String(decoding: text.utf8.prefix(limit), as: UTF8.self) + "…"
    }
}

/// A coding key for any name (to list every key of an object).
struct AnyCodingKey: CodingKey {
    var stringValue: String
    var intValue: Int?
    init(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { self.stringValue = "\(intValue)"; self.intValue = intValue }
}

extension Decoder {
    /// Throws when the object being decoded has a key that `keys` does not list, so a typo
    /// (`annual_budgett`) is an error naming the key instead of a silently ignored field.
    ///
    /// - Parameter keys: The type's coding keys.
    /// - Throws: `DecodingError.dataCorrupted` at the unknown key's path.
    public func rejectUnknownKeys<K: CodingKey & CaseIterable>(_ keys: K.Type) throws {
        let known = Set(K.allCases.map(\.stringValue))
        let all = try container(keyedBy: AnyCodingKey.self)
        if let unknown = all.allKeys.map(\.stringValue).sorted().first(where: { !known.contains($0) }) {
            throw DecodingError.dataCorrupted(.init(
                codingPath: codingPath + [AnyCodingKey(stringValue: unknown)],
                debugDescription: "unknown key (allowed: \(known.sorted().joined(separator: ", ")))"))
        }
    }
}
