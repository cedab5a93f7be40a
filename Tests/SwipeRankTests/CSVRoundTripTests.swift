import Foundation
import Testing
import SwipeRank
import SwipeRankNumerics

/// CSV writing and reading agree on every string (issue "No input crashes the engine", item 8),
/// and the header and blank-line rules of item 10.
@Suite("CSV round trips and edge rows")
struct CSVRoundTripTests {
    /// Random strings over the characters that matter to CSV, including "\r\n" (one grapheme
    /// cluster), a quote followed by a combining mark, and multi-byte text.
    static func randomField(using rng: inout SplitMix64) -> String {
        let pieces = ["a", "Z", "0", ",", "\"", "\n", "\r", "\r\n", " ", "\t", "é", "\"\u{301}", "\u{301}", "😀", "\"\"", "x,y", ""]
        return (0..<Int.random(in: 0...6, using: &rng)).map { _ in pieces.randomElement(using: &rng)! }.joined()
    }

    @Test("seeded random tables: escape, join, parse gives the same fields", arguments: 0..<20)
    func roundTrip(seed: UInt64) throws {
        var rng = SplitMix64(seed: seed)
        let columns = Int.random(in: 1...4, using: &rng)
        let header = (0..<columns).map { "c\($0)" }
        let rows = (0..<Int.random(in: 1...30, using: &rng)).map { _ in (0..<columns).map { _ in Self.randomField(using: &rng) } }
        let text = ([CSVTable.line(header)] + rows.map(CSVTable.line)).joined(separator: "\n") + "\n"
        let table = try CSVTable(text: text, source: "r.csv")
        #expect(table.header == header, "seed \(seed)")
        #expect(table.rows.map(\.fields) == rows, "seed \(seed)")
    }

    @Test("escape works on bytes: CR LF and a quote with a combining mark")
    func escapeBytes() {
        #expect(CSVTable.escape("a\r\nb") == "\"a\r\nb\"")
        #expect(CSVTable.escape("\"\u{301}") == "\"\"\"\u{301}\"")
        #expect(CSVTable.escape("plain é") == "plain é")
        #expect(CSVTable.line([""]) == "\"\"")
    }

    @Test("a header naming a column twice is an error at the second one")
    func duplicateHeader() {
        do {
            _ = try CSVTable(text: "id,name,id\n1,a,2\n", source: "d.csv")
            Issue.record("accepted")
        } catch {
            #expect(error.description.hasPrefix("d.csv:1:9:"), "\(error)")
            #expect(error.field == "id")
        }
    }

    @Test("blank lines at the end are ignored, however many")
    func trailingBlankLines() throws {
        for text in ["id,x\n1,2\n\n", "id,x\n1,2\n\n\n", "id,x\r\n1,2\r\n\r\n\r\n", "id,x\n1,2"] {
            let table = try CSVTable(text: text, source: "t.csv")
            #expect(table.rows.count == 1, "\(text.debugDescription)")
        }
        // Inside a multi-column file a blank line is still a malformed row.
        #expect(throws: DataError.self) { try CSVTable(text: "id,x\n\n1,2\n", source: "t.csv") }
    }

    @Test("a quoted empty value in the last row of a one-column file is a row")
    func quotedEmptyLastRow() throws {
        let table = try CSVTable(text: "name\nalice\n\"\"\n", source: "o.csv")
        #expect(table.rows.map(\.fields) == [["alice"], [""]])
        let unterminated = try CSVTable(text: "name\nalice\n\"\"", source: "o.csv")
        #expect(unterminated.rows.count == 2)
        // An empty line inside a one-column file is an empty value.
        let middle = try CSVTable(text: "name\n\nbob\n", source: "o.csv")
        #expect(middle.rows.map(\.fields) == [[""], ["bob"]])
    }
}
