import Foundation
import SwipeRank

/// One logged swipe of an evaluation dataset.
public struct Interaction: Sendable, Hashable {
    /// The student.
    public var studentID: String
    /// The item.
    public var itemID: String
    /// Like or dislike.
    public var action: SwipeAction
    /// When (e.g. Unix milliseconds; only the order matters).
    public var timestamp: Int64
    /// Whether the item was served as a probe, if logged.
    public var isProbe: Bool?
    /// The probability with which the logging policy served the item, if logged.
    public var propensity: Double?

    /// Creates an interaction.
    ///
    /// - Parameters:
    ///   - studentID: The student.
    ///   - itemID: The item.
    ///   - action: Like or dislike.
    ///   - timestamp: When.
    ///   - isProbe: Probe flag, if logged.
    ///   - propensity: Serving probability in (0, 1], if logged.
    public init(studentID: String, itemID: String, action: SwipeAction, timestamp: Int64,
                isProbe: Bool? = nil, propensity: Double? = nil) {
        self.studentID = studentID
        self.itemID = itemID
        self.action = action
        self.timestamp = timestamp
        self.isProbe = isProbe
        self.propensity = propensity
    }
}

extension AnswerStrengths {
    /// The strengths of a log's answers: each (student, item) pair's latest answer (by
    /// timestamp, then item id) is the one the signals weigh.
    ///
    /// - Parameters:
    ///   - signals: The signals, any order.
    ///   - interactions: The log, any order.
    ///   - reactionBoost: ≥ 0.
    ///   - dwellBoost: ≥ 0.
    public init(signals: [EngagementSignal], interactions: [Interaction], reactionBoost: Double, dwellBoost: Double) {
        var answers: [String: [String: Bool]] = [:]
        for x in interactions.sorted(by: { ($0.studentID, $0.timestamp, $0.itemID) < ($1.studentID, $1.timestamp, $1.itemID) }) {
            answers[x.studentID, default: [:]][x.itemID] = x.action == .like
        }
        self.init(signals: signals, answers: answers, reactionBoost: reactionBoost, dwellBoost: dwellBoost)
    }
}

/// The interactions CSV: `student_id`, `item_id`, `action` (`like`/`dislike`), `timestamp`
/// (an integer), and optionally `is_probe` (`true`/`false`/`1`/`0`) and `propensity` (in
/// (0, 1]).
public enum InteractionsFile {
    /// The header written, in order.
    public static let columns = ["student_id", "item_id", "action", "timestamp", "is_probe", "propensity"]

    /// Reads an interactions CSV.
    ///
    /// - Parameters:
    ///   - table: The parsed file.
    ///   - itemIDs: When given, item ids must be in it (an unknown item is a bad row).
    ///   - studentIDs: When given, student ids must be in it.
    ///   - policy: Fail on the first bad row, or skip and report bad rows.
    /// - Returns: The interactions in file order, and the report.
    /// - Throws: `DataError` naming file:line:column (a missing required column always throws).
    public static func read(_ table: CSVTable, itemIDs: Set<String>? = nil, studentIDs: Set<String>? = nil,
                            policy: BadRowPolicy = .fail) throws(DataError) -> ([Interaction], LoadReport) {
        let student = try table.column(named: "student_id"), item = try table.column(named: "item_id")
        let action = try table.column(named: "action"), time = try table.column(named: "timestamp")
        let probe = table.optionalColumn(named: "is_probe"), propensity = table.optionalColumn(named: "propensity")
        var report = LoadReport(source: table.source)
        var result: [Interaction] = []
        for row in table.rows {
            let interaction = try report.row(policy) { () throws(DataError) -> Interaction in
                let s = row[student].trimmingCharacters(in: .whitespaces), i = row[item].trimmingCharacters(in: .whitespaces)
                if s.isEmpty { throw table.error(.missingValue, row: row, column: student, detail: "empty student_id") }
                if i.isEmpty { throw table.error(.missingValue, row: row, column: item, detail: "empty item_id") }
                if let studentIDs, !studentIDs.contains(s) {
                    throw table.error(.unknownReference, row: row, column: student, detail: "unknown student \"\(s)\"")
                }
                if let itemIDs, !itemIDs.contains(i) {
                    throw table.error(.unknownReference, row: row, column: item, detail: "unknown item \"\(i)\"")
                }
                guard let a = SwipeAction(rawValue: row[action].trimmingCharacters(in: .whitespaces)) else {
                    throw table.error(.invalidValue, row: row, column: action,
                                      detail: "action \"\(row[action])\" is not like or dislike")
                }
                guard let t = Int64(row[time].trimmingCharacters(in: .whitespaces)) else {
                    throw table.error(.nonNumeric, row: row, column: time, detail: "timestamp \"\(row[time])\" is not an integer")
                }
                var isProbe: Bool?
                if let probe, !row[probe].trimmingCharacters(in: .whitespaces).isEmpty {
                    switch row[probe].trimmingCharacters(in: .whitespaces).lowercased() {
                    case "true", "1": isProbe = true
                    case "false", "0": isProbe = false
                    default: throw table.error(.invalidValue, row: row, column: probe, detail: "is_probe \"\(row[probe])\" is not true/false")
                    }
                }
                var p: Double?
                if let propensity, let value = try table.number(row: row, column: propensity) {
                    guard value > 0 && value <= 1 else {
                        throw table.error(.outOfRange, row: row, column: propensity, detail: "propensity \(value) is outside (0, 1]")
                    }
                    p = value
                }
                return Interaction(studentID: s, itemID: i, action: a, timestamp: t, isProbe: isProbe, propensity: p)
            }
            if let interaction { result.append(interaction) }
        }
        return (result, report)
    }

    /// Writes interactions as CSV text (stable formatting).
    ///
    /// - Parameter interactions: The interactions.
    /// - Returns: The CSV text with a header.
    public static func write(_ interactions: [Interaction]) -> String {
        var lines = [CSVTable.line(columns)]
        for x in interactions {
            lines.append([x.studentID, x.itemID, x.action.rawValue, String(x.timestamp),
                          x.isProbe.map { $0 ? "true" : "false" } ?? "", x.propensity.map { String(format: "%.6f", $0) } ?? ""]
                .map(CSVTable.escape).joined(separator: ","))
        }
        return lines.joined(separator: "\n") + "\n"
    }
}

extension DatasetStudent {
    /// The students of a log when nobody states preferences: everyone in `log`, in order of
    /// first appearance, each with `profile`.
    ///
    /// - Parameters:
    ///   - log: The interactions.
    ///   - profile: Everyone's profile (no stated preferences).
    /// - Returns: One student per distinct student id.
    /// - Complexity: O(log.count).
    public static func everyone(in log: [Interaction], profile: Profile) -> [DatasetStudent] {
        var seen = Set<String>()
        return log.compactMap { seen.insert($0.studentID).inserted ? DatasetStudent(id: $0.studentID, profile: profile) : nil }
    }
}
