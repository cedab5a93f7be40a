import Foundation
import SwipeRankColleges
import Testing
import SwipeRank
import SwipeRankEvaluation

@Suite("Evaluation datasets: students and interactions CSV, generator")
struct DatasetFilesTests {
    func table(_ lines: [String], _ source: String = "d.csv") throws -> CSVTable {
        try CSVTable(text: lines.joined(separator: "\n") + "\n", source: source)
    }

    let header = StudentsFile.columns.joined(separator: ",")

    @Test("students: write → read → write gives the same text")
    func studentsRoundTrip() throws {
        let students = [
            DatasetStudent(id: "a", profile: StudentProfile(home: try GeoPoint(latitude: 42.36, longitude: -71.06), homeState: "MA",
                                                            maxDistanceMiles: 250, annualBudget: 30000, sat: 1350,
                                                            intendedMajors: ["11.07", "Business, Management"], sizePreference: .medium)),
            DatasetStudent(id: "b", profile: StudentProfile()),
        ]
        let text = StudentsFile.write(students)
        let (read, report) = try StudentsFile.read(CSVTable(text: text, source: "s.csv"))
        #expect(report.loaded == 2 && report.skipped.isEmpty)
        #expect(read.map(\.id) == ["a", "b"])
        #expect(read[0].profile.intendedMajors == ["11.07", "Business, Management"])
        #expect(read[1].profile == StudentProfile())
        #expect(StudentsFile.write(read) == text)
    }

    @Test("students: bad rows name file:line:column", arguments: [
        ("x,91,0,,,,,,,,,,", "d.csv:2:3", DataError.Kind.outOfRange),
        ("x,,,,,,abc,,,,,,", "d.csv:2:8", .nonNumeric),
        ("x,,,,,,2000,,,,,,", "d.csv:2:8", .outOfRange),
        ("x,,,,,,,,huge,,,,", "d.csv:2:10", .invalidValue),
        ("x,40,,,,,,,,,,,", "d.csv:2:3", .missingValue),
        (",,,,,,,,,,,,", "d.csv:2:1", .missingValue),
    ])
    func badStudents(row: String, location: String, kind: DataError.Kind) throws {
        do {
            _ = try StudentsFile.read(table([header, row]))
            Issue.record("accepted \(row)")
        } catch let error as DataError {
            #expect(error.kind == kind, "\(error)")
            #expect(error.description.hasPrefix(location + ":"), "\(error)")
        } catch { Issue.record("unexpected \(error)") }
    }

    @Test("students: skipping bad rows reports each one; duplicates are bad rows")
    func skipStudents() throws {
        let t = try table([header, "a,,,,,,,,,,,,", "b,,,,,,9999,,,,,,", "a,,,,,,,,,,,,", "c,,,,,,,,,,,,"])
        let (students, report) = try StudentsFile.read(t, policy: .skip)
        #expect(students.map(\.id) == ["a", "c"])
        #expect(report.loaded == 2 && report.skipped.count == 2)
        #expect(report.skipped.map(\.kind) == [.outOfRange, .duplicateID])
        #expect(report.summary.contains("2 skipped") && report.summary.contains("d.csv:3:"))
        #expect(throws: DataError.self) { try StudentsFile.read(t) }
    }

    @Test("interactions: bad rows name file:line:column", arguments: [
        ("s1,i1,love,5,,", "d.csv:2:7", DataError.Kind.invalidValue),
        ("s1,i1,like,soon,,", "d.csv:2:12", .nonNumeric),
        ("s1,i1,like,5,maybe,", "d.csv:2:14", .invalidValue),
        ("s1,i1,like,5,true,1.5", "d.csv:2:19", .outOfRange),
        ("s1,i1,like,5,true,0", "d.csv:2:19", .outOfRange),
        ("s1,zz,like,5,,", "d.csv:2:4", .unknownReference),
        ("s9,i1,like,5,,", "d.csv:2:1", .unknownReference),
    ])
    func badInteractions(row: String, location: String, kind: DataError.Kind) throws {
        do {
            _ = try InteractionsFile.read(table([InteractionsFile.columns.joined(separator: ","), row]),
                                          itemIDs: ["i1"], studentIDs: ["s1"])
            Issue.record("accepted \(row)")
        } catch let error as DataError {
            #expect(error.kind == kind, "\(error)")
            #expect(error.description.hasPrefix(location + ":"), "\(error)")
        } catch { Issue.record("unexpected \(error)") }
    }

    @Test("interactions: optional columns may be absent; round trip")
    func interactions() throws {
        let (plain, _) = try InteractionsFile.read(table(["student_id,item_id,action,timestamp", "s1,i1,dislike,7"]))
        #expect(plain == [Interaction(studentID: "s1", itemID: "i1", action: .dislike, timestamp: 7)])
        let logged = [Interaction(studentID: "s1", itemID: "i,2", action: .like, timestamp: 9, isProbe: true, propensity: 0.25)]
        let (back, _) = try InteractionsFile.read(CSVTable(text: InteractionsFile.write(logged), source: "w.csv"))
        #expect(back == logged)
    }

    @Test("the generator is deterministic: same seed, same bytes; another seed, other data")
    func generatorDeterminism() throws {
        let generator = DatasetGenerator(engine: EvaluationFixtures.engine)
        let (s1, i1) = try generator.generate(seed: 5, students: 4, swipesPerStudent: 12)
        let (s2, i2) = try generator.generate(seed: 5, students: 4, swipesPerStudent: 12)
        let (s3, _) = try generator.generate(seed: 6, students: 4, swipesPerStudent: 12)
        #expect(StudentsFile.write(s1) == StudentsFile.write(s2) && InteractionsFile.write(i1) == InteractionsFile.write(i2))
        #expect(StudentsFile.write(s1) != StudentsFile.write(s3))
        #expect(i1.count == 48)
        // Probes sit at every 4th swipe of each student and carry propensities.
        for x in i1 {
            let position = Int(x.timestamp % 86_400_000 / 1000)
            #expect(x.isProbe == (position % 4 == 0))
            if x.isProbe == true { #expect(x.propensity! > 0 && x.propensity! <= 1) } else { #expect(x.propensity == 1) }
        }
    }

    @Test("the shipped students.csv and swipes.csv load cleanly and match the catalog")
    func shipped() throws {
        let root = EvaluationFixtures.root.appendingPathComponent("datasets")
        let (students, report) = try StudentsFile.read(CSVTable(contentsOfFile: root.appendingPathComponent("students.csv").path))
        #expect(students.count == 200 && report.skipped.isEmpty)
        for student in students { _ = try EvaluationFixtures.engine.matcher.student(student.profile) }
        let (log, _) = try InteractionsFile.read(CSVTable(contentsOfFile: root.appendingPathComponent("swipes.csv").path),
                                                 itemIDs: Set(EvaluationFixtures.schools.catalog.ids),
                                                 studentIDs: Set(students.map(\.id)))
        #expect(log.count == 200 * 40)
        let likeRate = Double(log.filter { $0.action == .like }.count) / Double(log.count)
        #expect(likeRate > 0.2 && likeRate < 0.9, "like rate \(likeRate)")
    }
}
