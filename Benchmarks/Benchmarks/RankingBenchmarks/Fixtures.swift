import Foundation
import SwipeRank
import SwipeRankColleges
import SwipeRankNumerics

/// Benchmark data: the shipped catalog, and synthetic matrices of the sizes the issue names.
enum Fixtures {
    static let root: URL = {
        // Benchmarks/Benchmarks/RankingBenchmarks/Fixtures.swift → the repository root.
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
    }()
    static let schoolsPath = root.appendingPathComponent("datasets/schools.csv").path
    static let majorsPath = root.appendingPathComponent("datasets/school_majors.csv").path

    static let schools: SchoolCatalog = try! SchoolCatalog(schoolsPath: schoolsPath, majorsPath: majorsPath)
    static let engine = SwipeEngine(matcher: SchoolMatcher(schools: schools))
    /// The same engine with a collaborative model of f = 32 factors (seeded random values: the
    /// cost of serving and learning does not depend on them), so the cost of the factors is
    /// measured side by side with `engine`.
    static let factorEngine: SwipeEngine<SchoolMatcher> = {
        var rng = SplitMix64(seed: 32)
        let ids = Array(schools.catalog.ids)
        let file = FactorModelFile(dimension: 32, confidence: 10, dislikeConfidence: 0, regularization: 10, weight: 50,
                                   itemIDs: ids, itemFactors: ids.map { _ in (0..<32).map { _ in Double.random(in: -0.3...0.3, using: &rng) } })
        return try! engine.withFactors(file)
    }()

    static let bostonStudent = StudentProfile(
        home: try! GeoPoint(latitude: 42.3601, longitude: -71.0589), homeState: "MA",
        maxDistanceMiles: 250, annualBudget: 32000, sat: 1380,
        intendedMajors: ["Computer Science", "Business Administration"], sizePreference: .medium,
        settingPreference: .city, academicPriority: 0.7, earningsPriority: 0.6)

    /// An N × d matrix of N(0, 1)-ish values and a weight vector, seeded.
    static func synthetic(rows: Int, columns: Int, seed: UInt64 = 1) -> (Matrix, [Float]) {
        var rng = SplitMix64(seed: seed)
        let x = Matrix(rows: rows, columns: columns,
                       elements: (0..<rows * columns).map { _ in Float.random(in: -1.7...1.7, using: &rng) })
        let w = (0..<columns).map { _ in Float.random(in: -1...1, using: &rng) }
        return (x, w)
    }

    /// A synthetic school catalog of `rows` schools: real rows repeated with jittered
    /// coordinates and numbers (ids made unique), and no majors file rows.
    static func syntheticSchools(rows: Int, seed: UInt64 = 2) -> SchoolCatalog {
        let table = try! CSVTable(contentsOfFile: schoolsPath)
        var rng = SplitMix64(seed: seed)
        var lines = [table.header.joined(separator: ",")]
        let numeric = Set(["admission_rate", "sat_avg", "tuition_in_state", "tuition_out_of_state", "undergrad_enrollment",
                           "completion_rate", "net_price", "cost_of_attendance", "median_earnings"])
        for i in 0..<rows {
            let row = table.rows[i % table.rows.count]
            var fields: [String] = []
            for (c, name) in table.header.enumerated() {
                var value = row.fields[c]
                if name == "unitid" { value = String(1_000_000 + i) }
                else if name == "latitude", let v = Double(value) { value = String(max(-89, min(89, v + Double.random(in: -1...1, using: &rng)))) }
                else if name == "longitude", let v = Double(value) { value = String(max(-179, min(179, v + Double.random(in: -1...1, using: &rng)))) }
                else if numeric.contains(name), let v = Double(value) {
                    let jittered = v * Double.random(in: 0.9...1.1, using: &rng)
                    value = String(name.hasSuffix("rate") ? min(1, jittered) : name == "sat_avg" ? min(1600, jittered) : jittered)
                }
                fields.append(value.contains(",") || value.contains("\"") ? "\"" + value.replacingOccurrences(of: "\"", with: "\"\"") + "\"" : value)
            }
            lines.append(fields.joined(separator: ","))
        }
        let schools = try! CSVTable(text: lines.joined(separator: "\n") + "\n", source: "synthetic-\(rows).csv")
        let majors = try! CSVTable(text: "unitid,cip_code,cip_family,major_name,credential_level,completers\n", source: "none.csv")
        return try! SchoolCatalog(schools: schools, majors: majors)
    }
}
