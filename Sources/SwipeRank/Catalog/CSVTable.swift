import Foundation

/// A CSV file parsed into rows of text fields, each field remembering where it stood.
///
/// RFC 4180: fields separated by commas, rows by `\n` or `\r\n`; a field may be quoted with `"`,
/// and inside quotes commas, line breaks and doubled quotes (`""`) are literal. A UTF-8 byte
/// order mark is skipped. Blank lines at the end of the file are ignored; any other row must
/// have as many fields as the header. Header names must be distinct.
///
/// Why not yaslab/CSV.swift or SwiftCSV: neither reports where a malformed row is, and every
/// data error here must name `file:line:column`. This parser is one pass over the bytes.
///
///     let table = try CSVTable(contentsOfFile: "datasets/schools.csv")
///     let sat = try table.column(named: "sat_avg")
///     for row in table.rows { let cell = row[sat] }           // String, "" when missing
public struct CSVTable: Sendable {
    /// One data row.
    public struct Row: Sendable {
        /// The 1-based line the row starts on.
        public let line: Int
        /// The fields, one per header column.
        public let fields: [String]
        /// The 1-based byte column where each field starts.
        public let columns: [Int]
        /// The field in column `index`.
        public subscript(index: Int) -> String { fields[index] }
    }

    /// The name shown in errors, usually the file's path.
    public let source: String
    /// The header names, in order.
    public let header: [String]
    /// The 1-based byte column of each header cell on line 1, for errors about the header.
    public let headerColumns: [Int]
    /// The data rows, in file order.
    public let rows: [Row]

    /// Reads and parses a CSV file.
    ///
    /// - Parameter path: The file's path (`-`: standard input); it also names the file in errors.
    /// - Throws: `DataError` `.unreadable` if the file cannot be read, `.malformedRow` if a row
    ///   does not parse or has the wrong number of fields.
    /// - Complexity: O(size of the file).
    public init(contentsOfFile path: String) throws(DataError) {
        let data = try InputFile.read(path, what: "CSV file")
        try self.init(bytes: Array(data), source: path == "-" ? "<stdin>" : path)
    }

    /// Parses CSV text.
    ///
    /// - Parameters:
    ///   - text: The CSV text.
    ///   - source: The name to show in errors.
    /// - Throws: `DataError` `.malformedRow`.
    /// - Complexity: O(length of the text).
    public init(text: String, source: String) throws(DataError) {
        try self.init(bytes: Array(text.utf8), source: source)
    }

    /// Parses CSV bytes (UTF-8).
    ///
    /// - Parameters:
    ///   - bytes: The file's bytes.
    ///   - source: The name to show in errors.
    /// - Throws: `DataError` `.malformedRow` or `.unreadable` (invalid UTF-8).
    /// - Complexity: O(bytes.count).
    public init(bytes: [UInt8], source: String) throws(DataError) {
        self.source = source
        (header, headerColumns, rows) = try CSVTable.parse(bytes, source: source)
    }

    /// A table built from values rather than text — a catalog with operators' edits applied
    /// (`swiperank serve`'s item API). Row `i` is reported as line `i + 2` (the header is line
    /// 1), each field at its 1-based index as the column, so an error names the row and the
    /// column number.
    ///
    /// - Parameters:
    ///   - header: Distinct column names.
    ///   - rows: The rows, each with one value per column.
    ///   - source: The name shown in errors.
    /// - Throws: `DataError` `.invalidValue` for a repeated column name, `.malformedRow` for a
    ///   row of the wrong width.
    /// - Complexity: O(total number of fields).
    public init(header: [String], rows: [[String]], source: String) throws(DataError) {
        let columns = header.indices.map { $0 + 1 }
        var seen = Set<String>()
        for (i, name) in header.enumerated() where !seen.insert(name).inserted {
            throw DataError(.invalidValue, source: source, line: 1, column: i + 1, field: name,
                            detail: "column \"\(DataError.truncated(name))\" appears twice in the header")
        }
        var built: [Row] = []
        built.reserveCapacity(rows.count)
        for (i, fields) in rows.enumerated() {
            guard fields.count == header.count else {
                throw DataError(.malformedRow, source: source, line: i + 2, column: 1,
                                detail: "row has \(fields.count) fields, the header has \(header.count)")
            }
            built.append(Row(line: i + 2, fields: fields, columns: columns))
        }
        self.source = source
        self.header = header
        self.headerColumns = columns
        self.rows = built
    }

    /// The rows that satisfy `keep`, each with its original line (errors still name the file's).
    ///
    /// - Parameter keep: The predicate.
    /// - Returns: The table with fewer rows.
    public func filtered(_ keep: (Row) -> Bool) -> CSVTable {
        CSVTable(source: source, header: header, headerColumns: headerColumns, rows: rows.filter(keep))
    }

    private init(source: String, header: [String], headerColumns: [Int], rows: [Row]) {
        self.source = source
        self.header = header
        self.headerColumns = headerColumns
        self.rows = rows
    }

    private static func parse(_ bytes: [UInt8], source: String) throws(DataError) -> ([String], [Int], [Row]) {
        var parser = Parser(bytes: bytes, source: source)
        guard let headerRow = try parser.nextRow() else {
            throw DataError(.malformedRow, source: source, line: 1, column: 1, detail: "empty file: no header row")
        }
        let header = headerRow.fields.map { $0.trimmedSpaces }
        var firstColumn: [String: Int] = [:]
        for (i, name) in header.enumerated() {
            if let first = firstColumn.updateValue(i, forKey: name) {
                throw DataError(.invalidValue, source: source, line: 1, column: headerRow.columns[i], field: name,
                                detail: "column \"\(DataError.truncated(name))\" appears twice in the header (first at column \(headerRow.columns[first]))")
            }
        }
        var rows: [Row] = []
        var blankLines: [Row] = []
        while let (row, blank) = try parser.nextRowMarkingBlank() {
            // Blank lines (no text at all, not even "") at the end of the file are ignored;
            // inside a file they are rows like any other (an empty value of a one-column file).
            if blank { blankLines.append(row); continue }
            for pending in blankLines { try append(pending) }
            blankLines.removeAll()
            try append(row)
        }
        func append(_ row: Row) throws(DataError) {
            guard row.fields.count == header.count else {
                throw DataError(.malformedRow, source: source, line: row.line,
                                column: row.columns[min(row.columns.count, header.count) - 1],
                                detail: "row has \(row.fields.count) fields, the header has \(header.count)")
            }
            rows.append(row)
        }
        return (header, headerRow.columns, rows)
    }

    /// The index of the column with this header name.
    ///
    /// - Parameter name: The header name.
    /// - Returns: Its index in every row.
    /// - Throws: `DataError` `.missingColumn` naming the file and the columns it has.
    /// - Complexity: O(number of columns).
    public func column(named name: String) throws(DataError) -> Int {
        guard let index = header.firstIndex(of: name) else {
            throw DataError(.missingColumn, source: source, line: 1, field: name,
                            detail: "missing required column \"\(name)\" (header has: \(header.joined(separator: ", ")))")
        }
        return index
    }

    /// The index of the column with this header name, or `nil` if there is none.
    ///
    /// - Parameter name: The header name.
    /// - Complexity: O(number of columns).
    public func optionalColumn(named name: String) -> Int? { header.firstIndex(of: name) }

    /// An error about a header cell (line 1), e.g. a column name that means nothing.
    ///
    /// - Parameters:
    ///   - kind: The kind of problem.
    ///   - column: The column index.
    ///   - detail: What went wrong.
    /// - Returns: The error, located at `file:1:column`.
    public func headerError(_ kind: DataError.Kind, column: Int, detail: String) -> DataError {
        DataError(kind, source: source, line: 1, column: headerColumns[column], field: header[column], detail: detail)
    }

    /// An error located at one cell.
    ///
    /// - Parameters:
    ///   - kind: The kind of problem.
    ///   - row: The row.
    ///   - column: The column index.
    ///   - detail: What went wrong.
    /// - Returns: A `DataError` naming `file:line:column` and the column's header name.
    public func error(_ kind: DataError.Kind, row: Row, column: Int, detail: String) -> DataError {
        DataError(kind, source: source, line: row.line, column: row.columns[column],
                  field: header[column], detail: detail)
    }

    /// A field as CSV text: quoted (with doubled quotes) when it holds a comma, a quote or a
    /// line break. An empty field stays empty (write rows with `line(_:)`, which quotes the one
    /// case where that would be a blank line).
    ///
    /// Works on the UTF-8 bytes, as the parser does: comparing `Character`s would miss a
    /// `"\r\n"` (one grapheme cluster) or a quote followed by a combining mark.
    ///
    /// - Parameter field: The value.
    /// - Returns: The field, ready to join with commas; `CSVTable` parses it back to `field`.
    /// - Complexity: O(field's length).
    public static func escape(_ field: String) -> String {
        let special: Set<UInt8> = [UInt8(ascii: ","), UInt8(ascii: "\""), UInt8(ascii: "\n"), UInt8(ascii: "\r")]
        // A leading byte order mark is quoted too: at the start of a file the parser skips one.
        guard field.utf8.contains(where: special.contains) || field.utf8.starts(with: [0xEF, 0xBB, 0xBF]) else { return field }
        var bytes: [UInt8] = [UInt8(ascii: "\"")]
        bytes.reserveCapacity(field.utf8.count + 2)
        for b in field.utf8 {
            if b == UInt8(ascii: "\"") { bytes.append(b) }
            bytes.append(b)
        }
        bytes.append(UInt8(ascii: "\""))
        return String(decoding: bytes, as: UTF8.self)
    }

    /// One CSV line (without the line break) holding `fields`, each escaped; a row of one
    /// empty field is written `""`, since an empty line at the end of a file is not a row.
    ///
    /// - Parameter fields: The values.
    /// - Returns: The line; `CSVTable` parses it back to `fields`.
    /// - Complexity: O(total length).
    public static func line(_ fields: [String]) -> String {
        fields == [""] ? "\"\"" : fields.map(escape).joined(separator: ",")
    }

    /// The number in one cell, or `nil` if the cell is empty (a missing value).
    ///
    /// - Parameters:
    ///   - row: The row.
    ///   - column: The column index.
    /// - Returns: The finite value, or `nil` for an empty cell.
    /// - Throws: `DataError` `.nonNumeric` for text, `.nonFinite` for NaN or an infinity.
    public func number(row: Row, column: Int) throws(DataError) -> Double? {
        let text = row.fields[column].trimmedSpaces
        if text.isEmpty { return nil }
        guard let value = Double(text) else {
            throw error(.nonNumeric, row: row, column: column,
                        detail: "non-numeric value \"\(text)\" in column \"\(header[column])\"")
        }
        guard value.isFinite else {
            throw error(.nonFinite, row: row, column: column,
                        detail: "non-finite value \"\(text)\" in column \"\(header[column])\"")
        }
        return value
    }

    /// The number in one cell, which must not be empty.
    ///
    /// - Parameters:
    ///   - row: The row.
    ///   - column: The column index.
    /// - Returns: The finite value.
    /// - Throws: `DataError` `.missingValue`, `.nonNumeric` or `.nonFinite`.
    public func requiredNumber(row: Row, column: Int) throws(DataError) -> Double {
        guard let value = try number(row: row, column: column) else {
            throw error(.missingValue, row: row, column: column,
                        detail: "empty value in required column \"\(header[column])\"")
        }
        return value
    }
}

/// The byte-level RFC 4180 state machine.
private struct Parser {
    let bytes: [UInt8]
    let source: String
    var position = 0
    var line = 1
    var lineStart = 0

    init(bytes: [UInt8], source: String) {
        self.bytes = bytes
        self.source = source
        if bytes.count >= 3 && bytes[0] == 0xEF && bytes[1] == 0xBB && bytes[2] == 0xBF { position = 3; lineStart = 3 }
    }

    var atEnd: Bool { position >= bytes.count }

    /// The next row, and whether its line was blank (no characters before the line break: one
    /// empty, unquoted field).
    mutating func nextRowMarkingBlank() throws(DataError) -> (CSVTable.Row, Bool)? {
        guard position < bytes.count else { return nil }
        let b = bytes[position]
        let blank = b == UInt8(ascii: "\n") || b == UInt8(ascii: "\r")
        guard let row = try nextRow() else { return nil }
        return (row, blank)
    }

    mutating func nextRow() throws(DataError) -> CSVTable.Row? {
        guard position < bytes.count else { return nil }
        let rowLine = line
        var fields: [String] = []
        var columns: [Int] = []
        let quote = UInt8(ascii: "\""), comma = UInt8(ascii: ","), lf = UInt8(ascii: "\n"), cr = UInt8(ascii: "\r")
        while true {
            let fieldColumn = position - lineStart + 1
            let fieldLine = line
            if position < bytes.count && bytes[position] == quote {
                var value: [UInt8] = []
                position += 1
                var closed = false
                while position < bytes.count {
                    let b = bytes[position]
                    if b == quote {
                        if position + 1 < bytes.count && bytes[position + 1] == quote {
                            value.append(quote); position += 2; continue
                        }
                        position += 1; closed = true; break
                    }
                    if b == lf { line += 1; lineStart = position + 1 }
                    value.append(b)
                    position += 1
                }
                guard closed else {
                    throw DataError(.malformedRow, source: source, line: fieldLine, column: fieldColumn,
                                    detail: "unterminated quoted field")
                }
                if position < bytes.count, bytes[position] != comma, bytes[position] != lf, bytes[position] != cr {
                    throw DataError(.malformedRow, source: source, line: line, column: position - lineStart + 1,
                                    detail: "unexpected text after a closing quote")
                }
                guard let text = String(validating: value, as: UTF8.self) else {
                    throw DataError(.unreadable, source: source, line: fieldLine, column: fieldColumn,
                                    detail: "field is not valid UTF-8")
                }
                fields.append(text)
            } else {
                // Unquoted: scan to the delimiter and decode the slice in one go.
                let start = position
                while position < bytes.count {
                    let b = bytes[position]
                    if b == comma || b == lf || b == cr { break }
                    if b == quote {
                        throw DataError(.malformedRow, source: source, line: line, column: position - lineStart + 1,
                                        detail: "a quote inside an unquoted field (quote the whole field and double the quote)")
                    }
                    position += 1
                }
                guard let text = String(validating: bytes[start..<position], as: UTF8.self) else {
                    throw DataError(.unreadable, source: source, line: fieldLine, column: fieldColumn,
                                    detail: "field is not valid UTF-8")
                }
                fields.append(text)
            }
            columns.append(fieldColumn)
            if position >= bytes.count { break }
            let b = bytes[position]
            if b == comma { position += 1; continue }
            // End of row: \n or \r\n.
            if b == cr { position += 1 }
            if position < bytes.count && bytes[position] == lf { position += 1 }
            line += 1
            lineStart = position
            break
        }
        return CSVTable.Row(line: rowLine, fields: fields, columns: columns)
    }
}

extension String {
    /// The string without leading and trailing spaces and tabs (cheaper than Foundation's
    /// trimming, which matters for the 680,000 cells of the majors file).
    package var trimmedSpaces: String {
        let utf8 = self.utf8
        guard let first = utf8.first, let last = utf8.last,
              first == 0x20 || first == 0x09 || last == 0x20 || last == 0x09 else { return self }
        var start = utf8.startIndex, end = utf8.endIndex
        while start < end, utf8[start] == 0x20 || utf8[start] == 0x09 { start = utf8.index(after: start) }
        while end > start, utf8[utf8.index(before: end)] == 0x20 || utf8[utf8.index(before: end)] == 0x09 {
            end = utf8.index(before: end)
        }
        return String(self[start..<end])
    }
}
