import Foundation
import FuzzSupport
import SwipeRank

// Any bytes: the parser either throws a DataError or returns rows, and a table it returns
// survives a write → parse round trip unchanged (header and every field).
// libFuzzer calls this for every input (its own main drives the run).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ pointer: UnsafePointer<UInt8>?, _ count: Int) -> Int32 {
    let bytes = Array(fuzzData(pointer, count))
    guard let table = try? CSVTable(bytes: bytes, source: "fuzz.csv") else { return 0 }
    let text = ([CSVTable.line(table.header)] + table.rows.map { CSVTable.line($0.fields) }).joined(separator: "\n") + "\n"
    do {
        let again = try CSVTable(text: text, source: "again.csv")
        FuzzProperty.require(again.header == table.header, "header changed in a round trip")
        FuzzProperty.require(again.rows.map(\.fields) == table.rows.map(\.fields), "fields changed in a round trip")
    } catch {
        FuzzProperty.require(false, "a written table does not parse: \(error)")
    }
    return 0
}
