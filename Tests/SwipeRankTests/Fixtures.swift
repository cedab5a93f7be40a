import Foundation
import SwipeRank
import SwipeRankColleges

/// Shared test data: the shipped catalog is loaded once per test process.
enum Fixtures {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()
    static let schoolsPath = root.appendingPathComponent("datasets/schools.csv").path
    static let majorsPath = root.appendingPathComponent("datasets/school_majors.csv").path

    static let schools: SchoolCatalog = {
        do { return try SchoolCatalog(schoolsPath: schoolsPath, majorsPath: majorsPath) }
        catch { fatalError("The shipped dataset must load: \(error)") }
    }()

    static let matcher = SchoolMatcher(schools: schools)

    static let bostonStudent = StudentProfile(
        home: try! GeoPoint(latitude: 42.3601, longitude: -71.0589), homeState: "MA",
        maxDistanceMiles: 250, annualBudget: 32000, sat: 1380,
        intendedMajors: ["Computer Science", "Business Administration"], sizePreference: .medium,
        settingPreference: .city, academicPriority: 0.7, earningsPriority: 0.6)

    /// Parses CSV text given as lines.
    static func table(_ lines: [String], source: String = "test.csv") throws -> CSVTable {
        try CSVTable(text: lines.joined(separator: "\n") + "\n", source: source)
    }
}
