import Testing
import SwipeRank

@Suite("CSV parsing")
struct CSVTableTests {
    @Test("quoted fields keep commas, doubled quotes and line breaks")
    func quoted() throws {
        let table = try CSVTable(
            text: "id,name,note\r\n1,\"Maryland, Baltimore\",\"say \"\"hi\"\"\"\r\n2,\"two\nlines\",\r\n3,plain,x",
            source: "q.csv")
        #expect(table.header == ["id", "name", "note"])
        #expect(table.rows.map(\.fields) == [["1", "Maryland, Baltimore", "say \"hi\""], ["2", "two\nlines", ""], ["3", "plain", "x"]])
        #expect(table.rows.map(\.line) == [2, 3, 5])
        #expect(table.rows[2].columns == [1, 3, 9])
    }

    @Test("a byte order mark and a trailing blank line are ignored")
    func bom() throws {
        let table = try CSVTable(bytes: [0xEF, 0xBB, 0xBF] + Array("a,b\n1,2\n\n".utf8), source: "b.csv")
        #expect(table.header == ["a", "b"])
        #expect(table.rows.count == 1)
    }

    @Test("malformed rows throw with file:line:column", arguments: [
        ("a,b\n1,\"open\n", "m.csv:2:3", "unterminated"),
        ("a,b\n1,\"x\"y\n", "m.csv:2:6", "after a closing quote"),
        ("a,b\n1,x\"y\n", "m.csv:2:4", "quote inside an unquoted field"),
        ("a,b\n1,2,3\n", "m.csv:2:3", "3 fields, the header has 2"),
        ("a,b\n1\n", "m.csv:2:1", "1 fields, the header has 2"),
        ("", "m.csv:1:1", "empty file"),
    ])
    func malformed(text: String, location: String, message: String) {
        #expect {
            _ = try CSVTable(text: text, source: "m.csv")
        } throws: { error in
            guard let error = error as? DataError else { return false }
            return error.kind == .malformedRow && error.description.hasPrefix(location + ":")
                && error.description.contains(message)
        }
    }

    @Test("invalid UTF-8 is reported, not replaced")
    func invalidUTF8() {
        #expect {
            _ = try CSVTable(bytes: Array("a\n".utf8) + [0xFF, 0x0A], source: "u.csv")
        } throws: { ($0 as? DataError)?.kind == .unreadable && "\($0)".hasPrefix("u.csv:2:1") }
    }

    @Test("numbers: empty is missing, text and non-finite values throw at their cell")
    func numbers() throws {
        let table = try Fixtures.table(["id,v", "a,1.5", "b,", "c, abc", "d,nan", "e,inf"])
        let v = try table.column(named: "v")
        #expect(try table.number(row: table.rows[0], column: v) == 1.5)
        #expect(try table.number(row: table.rows[1], column: v) == nil)
        #expect(throws: DataError.self) { try table.number(row: table.rows[2], column: v) }
        do {
            _ = try table.number(row: table.rows[2], column: v)
        } catch {
            #expect(error.kind == .nonNumeric)
            #expect(error.description == "test.csv:4:3: non-numeric value \"abc\" in column \"v\"")
            #expect(error.field == "v")
        }
        for r in [3, 4] {
            do {
                _ = try table.number(row: table.rows[r], column: v)
                Issue.record("non-finite value accepted")
            } catch { #expect(error.kind == .nonFinite && error.line == r + 2) }
        }
    }

    @Test("a missing column names the file and the columns it has")
    func missingColumn() throws {
        let table = try Fixtures.table(["id,name", "1,x"])
        do {
            _ = try table.column(named: "sat_avg")
            Issue.record("missing column accepted")
        } catch {
            #expect(error.kind == .missingColumn)
            #expect(error.description.contains("test.csv:1: missing required column \"sat_avg\" (header has: id, name)"))
        }
    }
}
