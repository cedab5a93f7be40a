import Foundation

/// A decodable type with fields that take one of a fixed set of values (an enum decoded from
/// a string): an unknown value is reported with the allowed ones, "not one of small, medium,
/// large", instead of Foundation's "cannot initialize … from invalid String value".
public protocol JSONChoiceFields {
    /// The allowed values of each choice field, by JSON key.
    static var choiceFields: [String: [String]] { get }
}

extension JSONInput {
    /// The largest profile JSON accepted, in bytes: a profile is a handful of fields, so
    /// anything larger is a mistake or an attack, refused before it is parsed.
    public static var maxProfileBytes: Int { 64 << 10 }
}

extension GeoPoint {
    enum CodingKeys: String, CodingKey, CaseIterable { case latitude, longitude }

    /// Decodes and range-checks a point.
    ///
    /// - Parameter decoder: The decoder.
    /// - Throws: `DataError` `.outOfRange` for a coordinate out of range; `DecodingError` for an
    ///   unknown key.
    public init(from decoder: any Decoder) throws {
        try decoder.rejectUnknownKeys(CodingKeys.self)
        let c = try decoder.container(keyedBy: CodingKeys.self)
        try self.init(latitude: try c.decode(Double.self, forKey: .latitude),
                      longitude: try c.decode(Double.self, forKey: .longitude))
    }
}

extension DataError {
    /// Decodes a profile JSON (of any matcher), turning every failure into a `DataError`
    /// naming the field; a `home` out of range is reported as `home.latitude` / `home.longitude`.
    package static func decodeProfile<T: Decodable>(_ type: T.Type, json: Data, source: String,
                                                    maxBytes: Int = JSONInput.maxProfileBytes) throws(DataError) -> T {
        do {
            return try JSONInput.decode(type, from: json, source: source, maxBytes: maxBytes)
        } catch where error.field == "latitude" || error.field == "longitude" {
            // GeoPoint validates its own ranges while decoding; it only appears as `home`.
            let field = "home.\(error.field ?? "")"
            throw DataError(error.kind, source: source, field: field, detail: "\(field): \(error.detail)")
        }
    }

    /// A JSON decoding error, with the JSON path of the field (and, for a field named in
    /// `choices`, its allowed values).
    static func decoding(_ error: DecodingError, source: String, choices: [String: [String]] = [:]) -> DataError {
        func path(_ keys: [any CodingKey]) -> String {
            DataError.truncated(keys.map { $0.intValue.map { "[\($0)]" } ?? $0.stringValue }.joined(separator: ".")
                .replacingOccurrences(of: ".[", with: "["), limit: 128)
        }
        switch error {
        case let .typeMismatch(_, context), let .valueNotFound(_, context):
            let field = path(context.codingPath)
            return DataError(.invalidValue, source: source, field: field, detail: "\(field): \(context.debugDescription)")
        case let .keyNotFound(key, context):
            let field = path(context.codingPath + [key])
            return DataError(.missingValue, source: source, field: field, detail: "\(field): required field is missing")
        case let .dataCorrupted(context):
            let field = path(context.codingPath)
            var detail = context.debugDescription
            if let last = context.codingPath.last, let allowed = choices[last.stringValue] {
                detail = "not one of \(allowed.joined(separator: ", "))"
            }
            return DataError(.invalidValue, source: source, field: field.isEmpty ? nil : field,
                             detail: field.isEmpty ? "malformed JSON: \(detail)" : "\(field): \(detail)")
        @unknown default:
            return DataError(.unreadable, source: source, detail: "\(error)")
        }
    }
}
