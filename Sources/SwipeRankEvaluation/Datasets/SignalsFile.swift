import Foundation
import SwipeRank

/// The signals CSV: what an app logged about cards besides the swipes (`EngagementSignal`) —
/// `student_id`, `item_id`, `kind` (`dwell_ms` or `reaction`) and `value` (for `dwell_ms` a
/// number of milliseconds ≥ 0, for `reaction` the reaction's text). Where a log lives outside
/// the service (an app's own analytics export), this is how its dwell times and reactions reach
/// `swiperank fit-factors --signals`.
public enum SignalsFile {
    /// The header written, in order.
    public static let columns = ["student_id", "item_id", "kind", "value"]

    /// Reads a signals CSV.
    ///
    /// - Parameters:
    ///   - table: The parsed file.
    ///   - itemIDs: When given, item ids must be in it (an unknown item is a bad row).
    ///   - policy: Fail on the first bad row, or skip and report bad rows.
    /// - Returns: The signals in file order, and the report.
    /// - Throws: `DataError` naming file:line:column (a missing column always throws).
    public static func read(_ table: CSVTable, itemIDs: Set<String>? = nil,
                            policy: BadRowPolicy = .fail) throws(DataError) -> ([EngagementSignal], LoadReport) {
        let student = try table.column(named: "student_id"), item = try table.column(named: "item_id")
        let kind = try table.column(named: "kind"), value = try table.column(named: "value")
        var report = LoadReport(source: table.source)
        var result: [EngagementSignal] = []
        for row in table.rows {
            let signal = try report.row(policy) { () throws(DataError) -> EngagementSignal in
                let s = row[student].trimmingCharacters(in: .whitespaces), i = row[item].trimmingCharacters(in: .whitespaces)
                if s.isEmpty { throw table.error(.missingValue, row: row, column: student, detail: "empty student_id") }
                if i.isEmpty { throw table.error(.missingValue, row: row, column: item, detail: "empty item_id") }
                if let itemIDs, !itemIDs.contains(i) {
                    throw table.error(.unknownReference, row: row, column: item, detail: "unknown item \"\(DataError.truncated(i))\"")
                }
                let text = row[value].trimmingCharacters(in: .whitespaces)
                switch row[kind].trimmingCharacters(in: .whitespaces) {
                case "dwell_ms":
                    guard let ms = Double(text), ms.isFinite, ms >= 0 else {
                        throw table.error(.invalidValue, row: row, column: value,
                                          detail: "dwell_ms \"\(DataError.truncated(text))\" is not a number of milliseconds ≥ 0")
                    }
                    return EngagementSignal(studentID: s, itemID: i, kind: .dwell(milliseconds: ms))
                case "reaction":
                    guard !text.isEmpty else { throw table.error(.missingValue, row: row, column: value, detail: "empty reaction") }
                    return EngagementSignal(studentID: s, itemID: i, kind: .reaction(text))
                case let other:
                    throw table.error(.invalidValue, row: row, column: kind,
                                      detail: "kind \"\(DataError.truncated(other))\" is not dwell_ms or reaction")
                }
            }
            if let signal { result.append(signal) }
        }
        return (result, report)
    }

    /// Writes signals as CSV text (stable formatting).
    ///
    /// - Parameter signals: The signals.
    /// - Returns: The CSV text with a header.
    public static func write(_ signals: [EngagementSignal]) -> String {
        var lines = [CSVTable.line(columns)]
        for s in signals {
            let (kind, value): (String, String)
            switch s.kind {
            case .dwell(let ms): (kind, value) = ("dwell_ms", ms == ms.rounded() && abs(ms) < 1e15 ? String(Int64(ms)) : String(ms))
            case .reaction(let text): (kind, value) = ("reaction", text)
            }
            lines.append([s.studentID, s.itemID, kind, value].map(CSVTable.escape).joined(separator: ","))
        }
        return lines.joined(separator: "\n") + "\n"
    }
}
