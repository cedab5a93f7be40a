/// A problem with input data: a CSV file, a profile, a value out of range.
///
/// Every data error names where it happened. For CSV input that is `file:line:column`
/// (1-based; the column counts bytes from the start of the line to the offending field) and
/// the column's header name, so a person can open the file at the right cell:
///
///     schools.csv:14:52: non-numeric value "n/a" in column "sat_avg"
///
/// A struct wrapping a private enum, so new kinds can be added without breaking clients.
/// Compare `kind` with the static members.
public struct DataError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What kind of data problem this is.
    public struct Kind: Sendable, Hashable, CustomStringConvertible {
        private let name: String
        /// A CSV row that does not parse: an unterminated quote, text after a closing quote, a
        /// quote inside an unquoted field, or the wrong number of fields.
        public static let malformedRow = Kind(name: "malformed row")
        /// Text where a number is required.
        public static let nonNumeric = Kind(name: "non-numeric value")
        /// NaN or an infinity where a finite number is required.
        public static let nonFinite = Kind(name: "non-finite value")
        /// A value outside its allowed range (latitude, longitude, a negative budget…).
        public static let outOfRange = Kind(name: "value out of range")
        /// The same id twice.
        public static let duplicateID = Kind(name: "duplicate id")
        /// A required column is absent from the header.
        public static let missingColumn = Kind(name: "missing column")
        /// A required value is empty.
        public static let missingValue = Kind(name: "missing value")
        /// A value that is not one of the allowed choices.
        public static let invalidValue = Kind(name: "invalid value")
        /// A file that cannot be read or decoded.
        public static let unreadable = Kind(name: "unreadable input")
        /// A reference to something that does not exist (an unknown major, item or student).
        public static let unknownReference = Kind(name: "unknown reference")
        /// The name of the kind.
        public var description: String { name }
    }

    /// What kind of problem this is.
    public let kind: Kind
    /// The file (or other source, such as a profile) the problem is in.
    public let source: String
    /// The 1-based line, if known.
    public let line: Int?
    /// The 1-based byte column within the line, if known.
    public let column: Int?
    /// The header name of the CSV column or the field of the profile, if any.
    public let field: String?
    /// What went wrong, in words.
    public let detail: String

    /// Creates an error.
    ///
    /// - Parameters:
    ///   - kind: What kind of problem this is.
    ///   - source: The file or other source.
    ///   - line: The 1-based line, if known.
    ///   - column: The 1-based column, if known.
    ///   - field: The column or field name, if any.
    ///   - detail: What went wrong.
    public init(_ kind: Kind, source: String, line: Int? = nil, column: Int? = nil,
                field: String? = nil, detail: String) {
        self.kind = kind
        self.source = source
        self.line = line
        self.column = column
        self.field = field
        self.detail = detail
    }

    /// `source:line:column: detail`.
    public var description: String {
        var location = source
        if let line { location += ":\(line)" }
        if let column { location += ":\(column)" }
        return "\(location): \(detail)"
    }
}
