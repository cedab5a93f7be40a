import Foundation
import SwipeRank

/// The students CSV of a generic catalog (`ItemMatcher`): one row per user.
///
/// Columns: `student_id` (required); optional `home_latitude` and `home_longitude` (both or
/// neither per row), `max_distance_miles` (default 500); and any number of `pref:<key>`
/// columns, each a stated preference weight (`ItemProfile.preferences`: a feature column, a
/// group or `distance`). An empty cell means "not given". Any other column is an error, so a
/// misspelt preference is never silently ignored.
///
///     student_id,home_latitude,home_longitude,max_distance_miles,pref:price,pref:cuisine=thai
///     u1,40.73,-73.99,3,-0.8,1.0
public enum ItemUsersFile {
    /// The fixed columns (besides `pref:` ones).
    public static let fixedColumns = ["student_id", "home_latitude", "home_longitude", "max_distance_miles"]

    /// Reads a users CSV.
    ///
    /// - Parameters:
    ///   - table: The parsed file.
    ///   - matcher: Checks each `pref:` key names a column, a group or `distance` of its catalog.
    ///   - policy: Fail on the first bad row, or skip and report bad rows.
    /// - Returns: The users in file order, and the report.
    /// - Throws: `DataError` naming file:line:column: a missing `student_id` column, an unknown
    ///   column or preference key (always thrown: they concern every row), or a bad row.
    public static func read(_ table: CSVTable, matcher: ItemMatcher,
                            policy: BadRowPolicy = .fail) throws(DataError) -> ([DatasetStudent<ItemProfile>], LoadReport) {
        let idColumn = try table.column(named: "student_id")
        let latitude = table.optionalColumn(named: "home_latitude"), longitude = table.optionalColumn(named: "home_longitude")
        let distance = table.optionalColumn(named: "max_distance_miles")
        var preferenceColumns: [(key: String, column: Int)] = []
        let keys = Set(matcher.catalog.columns.map(\.name) + matcher.catalog.groups + matcher.termNames)
        for (c, name) in table.header.enumerated() where !fixedColumns.contains(name) {
            guard name.hasPrefix("pref:") else {
                throw table.headerError(.invalidValue, column: c,
                                        detail: "unknown column \"\(name)\" (allowed: \(fixedColumns.joined(separator: ", ")), pref:<key>)")
            }
            let key = String(name.dropFirst(5))
            guard keys.contains(key) else {
                throw table.headerError(.unknownReference, column: c,
                                        detail: "\"\(key)\" is not a feature column, group or term of \(matcher.catalog.source)")
            }
            preferenceColumns.append((key, c))
        }
        if (latitude == nil) != (longitude == nil) {
            throw DataError(.missingColumn, source: table.source, line: 1,
                            detail: "home_latitude and home_longitude must both be columns or neither")
        }
        var report = LoadReport(source: table.source)
        var users: [DatasetStudent<ItemProfile>] = []
        var seen: [String: Int] = [:]
        for row in table.rows {
            let user = try report.row(policy) { () throws(DataError) -> DatasetStudent<ItemProfile> in
                let id = row[idColumn].trimmingCharacters(in: .whitespaces)
                guard !id.isEmpty else { throw table.error(.missingValue, row: row, column: idColumn, detail: "empty student_id") }
                if let first = seen[id] {
                    throw table.error(.duplicateID, row: row, column: idColumn, detail: "duplicate student_id \"\(id)\" (first on line \(first))")
                }
                var home: GeoPoint?
                if let latitude, let longitude { home = try table.home(row: row, latitude: latitude, longitude: longitude) }
                var preferences: [String: Double] = [:]
                for (key, c) in preferenceColumns {
                    if let value = try table.number(row: row, column: c) { preferences[key] = value }
                }
                let profile = ItemProfile(home: home, maxDistanceMiles: try distance.flatMap { c throws(DataError) in
                    try table.number(row: row, column: c)
                } ?? 500, preferences: preferences)
                do throws(DataError) { try profile.validate(source: table.source) } catch {
                    let column = error.field == "max_distance_miles" ? distance
                        : preferenceColumns.first { "preferences.\($0.key)" == error.field }?.column
                    throw table.error(error.kind, row: row, column: column ?? idColumn, detail: error.detail)
                }
                seen[id] = row.line
                return DatasetStudent(id: id, profile: profile)
            }
            if let user { users.append(user) }
        }
        return (users, report)
    }
}
