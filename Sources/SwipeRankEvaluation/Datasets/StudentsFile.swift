import Foundation
import SwipeRank
import SwipeRankColleges

/// A student (user) of an evaluation dataset: an id and a profile of the matcher's kind
/// (`StudentProfile` for colleges, `ItemProfile` for any catalog).
public struct DatasetStudent<Profile: Sendable & Hashable>: Sendable, Hashable {
    /// The student's id.
    public var id: String
    /// The profile.
    public var profile: Profile

    /// Creates a student.
    ///
    /// - Parameters:
    ///   - id: The id.
    ///   - profile: The profile.
    public init(id: String, profile: Profile) {
        self.id = id
        self.profile = profile
    }
}

/// The students CSV: one row per student, the profile's fields as columns.
///
/// Columns: `student_id`, `home_latitude`, `home_longitude`, `home_state`,
/// `max_distance_miles`, `annual_budget`, `sat`, `intended_majors` (`;`-separated codes or
/// names), `size_preference`, `control_preference`, `setting_preference`,
/// `academic_priority`, `earnings_priority`. Empty cell = not given (the profile's default).
public enum StudentsFile {
    /// The header, in order.
    public static let columns = ["student_id", "home_latitude", "home_longitude", "home_state", "max_distance_miles",
                                 "annual_budget", "sat", "intended_majors", "size_preference", "control_preference",
                                 "setting_preference", "academic_priority", "earnings_priority"]

    /// Reads a students CSV.
    ///
    /// - Parameters:
    ///   - table: The parsed file.
    ///   - policy: Fail on the first bad row, or skip and report bad rows.
    /// - Returns: The students in file order, and the report.
    /// - Throws: `DataError` naming file:line:column (a missing column always throws).
    public static func read(_ table: CSVTable, policy: BadRowPolicy = .fail) throws(DataError) -> ([DatasetStudent<StudentProfile>], LoadReport) {
        var index: [String: Int] = [:]
        for name in columns { index[name] = try table.column(named: name) }
        var report = LoadReport(source: table.source)
        var students: [DatasetStudent<StudentProfile>] = []
        var seen: [String: Int] = [:]
        for row in table.rows {
            let student = try report.row(policy) { () throws(DataError) -> DatasetStudent<StudentProfile> in
                func text(_ name: String) -> String { row[index[name]!].trimmingCharacters(in: .whitespaces) }
                func number(_ name: String) throws(DataError) -> Double? { try table.number(row: row, column: index[name]!) }
                func choice<T: RawRepresentable>(_ name: String, _ type: T.Type, default value: T) throws(DataError) -> T
                where T.RawValue == String {
                    let raw = text(name)
                    if raw.isEmpty { return value }
                    guard let parsed = T(rawValue: raw) else {
                        throw table.error(.invalidValue, row: row, column: index[name]!, detail: "\"\(raw)\" is not a valid \(name)")
                    }
                    return parsed
                }
                let id = text("student_id")
                guard !id.isEmpty else {
                    throw table.error(.missingValue, row: row, column: index["student_id"]!, detail: "empty student_id")
                }
                if let first = seen[id] {
                    throw table.error(.duplicateID, row: row, column: index["student_id"]!,
                                      detail: "duplicate student_id \"\(id)\" (first on line \(first))")
                }
                let home = try table.home(row: row, latitude: index["home_latitude"]!, longitude: index["home_longitude"]!)
                let state = text("home_state")
                let profile = StudentProfile(
                    home: home, homeState: state.isEmpty ? nil : state,
                    maxDistanceMiles: try number("max_distance_miles") ?? 500, annualBudget: try number("annual_budget"),
                    sat: try number("sat"),
                    intendedMajors: text("intended_majors").split(separator: ";").map { String($0).trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty },
                    sizePreference: try choice("size_preference", StudentProfile.SizePreference.self, default: .any),
                    controlPreference: try choice("control_preference", StudentProfile.ControlPreference.self, default: .any),
                    settingPreference: try choice("setting_preference", StudentProfile.SettingPreference.self, default: .any),
                    academicPriority: try number("academic_priority") ?? 0.5,
                    earningsPriority: try number("earnings_priority") ?? 0.5)
                do throws(DataError) { try profile.validate(source: table.source) } catch {
                    let column = error.field.flatMap { index[$0] } ?? index["student_id"]!
                    throw table.error(error.kind, row: row, column: column, detail: error.detail)
                }
                seen[id] = row.line
                return DatasetStudent(id: id, profile: profile)
            }
            if let student { students.append(student) }
        }
        return (students, report)
    }

    /// Writes students as CSV text (stable formatting, so equal input gives equal bytes).
    ///
    /// - Parameter students: The students.
    /// - Returns: The CSV text with a header.
    public static func write(_ students: [DatasetStudent<StudentProfile>]) -> String {
        var lines = [CSVTable.line(columns)]
        for s in students {
            let p = s.profile
            let fields: [String] = [
                s.id, p.home.map { format($0.latitude, 6) } ?? "", p.home.map { format($0.longitude, 6) } ?? "",
                p.homeState ?? "", format(p.maxDistanceMiles, 0), p.annualBudget.map { format($0, 0) } ?? "",
                p.sat.map { format($0, 0) } ?? "", p.intendedMajors.joined(separator: ";"),
                p.sizePreference.rawValue, p.controlPreference.rawValue, p.settingPreference.rawValue,
                format(p.academicPriority, 3), format(p.earningsPriority, 3),
            ]
            lines.append(CSVTable.line(fields))
        }
        return lines.joined(separator: "\n") + "\n"
    }

    static func format(_ x: Double, _ digits: Int) -> String { String(format: "%.\(digits)f", x) }
}

extension CSVTable {
    /// The `home_latitude` / `home_longitude` pair of a students row: both empty (no home) or
    /// both in range.
    ///
    /// - Parameters:
    ///   - row: The row.
    ///   - latitude: The latitude column.
    ///   - longitude: The longitude column.
    /// - Returns: The home, or nil when both cells are empty.
    /// - Throws: `DataError` at the offending cell: non-numeric, out of range, or only one given.
    func home(row: Row, latitude: Int, longitude: Int) throws(DataError) -> GeoPoint? {
        switch (try number(row: row, column: latitude), try number(row: row, column: longitude)) {
        case (nil, nil):
            return nil
        case let (la?, lo?):
            guard (-90...90).contains(la) else {
                throw error(.outOfRange, row: row, column: latitude, detail: "home_latitude \(la) is outside -90...90")
            }
            guard (-180...180).contains(lo) else {
                throw error(.outOfRange, row: row, column: longitude, detail: "home_longitude \(lo) is outside -180...180")
            }
            return try GeoPoint(latitude: la, longitude: lo)
        default:
            throw error(.missingValue, row: row, column: latitude,
                        detail: "home_latitude and home_longitude must both be given or both be empty")
        }
    }
}
