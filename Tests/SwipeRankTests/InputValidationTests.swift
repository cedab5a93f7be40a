import Foundation
import SwipeRankColleges
import Testing
import SwipeRank
import SwipeRankNumerics

/// Issue "No input crashes the engine", items 3–10: each reproduction from the issue either
/// works or throws a `DataError` naming what and where.
@Suite("Total validation of data input")
struct InputValidationTests {
    let engine = SessionFixtures.engine

    // MARK: 3, 9: extreme values and overflowing columns

    @Test("profiles at the edges of every range give finite scores in a whole session")
    func extremeProfiles() throws {
        let profiles = [
            StudentProfile(home: try GeoPoint(latitude: 89.9, longitude: 179.9), homeState: "AK", maxDistanceMiles: 25_000,
                           annualBudget: 1, sat: 400, intendedMajors: ["11"]),
            StudentProfile(home: try GeoPoint(latitude: -89.9, longitude: -179.9), maxDistanceMiles: 1e-9,
                           annualBudget: 10_000_000, sat: 1600),
        ]
        for profile in profiles {
            var session = try engine.session(studentID: "edge", profile: profile, seed: 1)
            for round in 0..<3 {
                let cards = session.recommendations(count: 10).recommendations
                #expect(cards.count == 10)
                #expect(cards.allSatisfy { $0.matchScore.isFinite })
                for (i, card) in cards.enumerated() {
                    _ = try session.recordSwipe(Swipe(swipeID: "\(round)-\(i)", cardID: card.item.id, action: i % 2 == 0 ? .like : .dislike,
                                                      timestamp: Int64(round * 10 + i)))
                }
            }
            #expect(session.model.mean.allSatisfy { $0.isFinite })
        }
    }

    let wide = ItemSchema(idColumn: "id", nameColumn: "name", coordinateColumns: nil, textAttributes: [], numericAttributes: ["x"],
                          features: [.numeric("x", group: "x")])

    @Test("a column whose z-scoring would overflow still loads with finite features")
    func hugeButFinite() throws {
        let catalog = try Catalog(table: Fixtures.table(["id,name,x", "a,A,1e308", "b,B,", "c,C,-1e308", "d,D,5"]), schema: wide)
        #expect(catalog.features.elements.allSatisfy { $0.isFinite })
        let matcher = ItemMatcher(catalog: catalog)
        let response = try matcher.recommend(profile: ItemProfile(preferences: ["x": 1]), count: 4)
        #expect(response.recommendations.count == 4)
        #expect(response.recommendations.first?.item.id == "a")
    }

    @Test("a column that overflows Float without standardization is an error naming its cell")
    func overflowingColumn() throws {
        let schema = ItemSchema(idColumn: "id", nameColumn: "name", coordinateColumns: nil, textAttributes: [], numericAttributes: [],
                                features: [FeatureSpec(column: "x", kind: .numeric(transform: .identity, standardize: false),
                                                       missing: .reject, group: "x")])
        do {
            _ = try Catalog(table: Fixtures.table(["id,name,x", "a,A,1", "b,B,1e39"]), schema: schema)
            Issue.record("accepted")
        } catch let error as DataError {
            #expect(error.kind == .nonFinite)
            #expect(error.description.hasPrefix("test.csv:3:5:"), "\(error)")
            #expect(error.field == "x")
        } catch { Issue.record("\(error)") }
    }

    // MARK: 4: huge finite numbers never trap on conversion

    @Test("completers beyond any school's size are an error at their cell")
    func hugeCompleters() throws {
        let majors = try String(contentsOfFile: Fixtures.majorsPath, encoding: .utf8)
        var lines = majors.split(separator: "\n").map(String.init)
        let header = lines[0].split(separator: ",").map(String.init)
        let c = header.firstIndex(of: "completers")!
        var fields = try CSVTable(text: lines[0] + "\n" + lines[1] + "\n", source: "m").rows[0].fields
        fields[c] = "1e19"
        lines[1] = CSVTable.line(fields)
        do {
            _ = try SchoolCatalog(schools: CSVTable(contentsOfFile: Fixtures.schoolsPath),
                                  majors: CSVTable(text: lines.joined(separator: "\n") + "\n", source: "majors.csv"))
            Issue.record("accepted")
        } catch {
            #expect(error.kind == .outOfRange && error.field == "completers" && error.line == 2, "\(error)")
        }
    }

    @Test("explanations of absurd but finite catalog values are text, not a trap")
    func hugeEarnings() throws {
        let text = try String(contentsOfFile: Fixtures.schoolsPath, encoding: .utf8)
        var lines = text.split(separator: "\n").map(String.init)
        let table = try CSVTable(text: lines[0] + "\n", source: "h")
        for column in ["median_earnings", "sat_avg", "admission_rate", "undergrad_enrollment"] {
            guard let c = table.optionalColumn(named: column) else { continue }
            for r in 1..<lines.count {
                var fields = try CSVTable(text: lines[0] + "\n" + lines[r] + "\n", source: "r").rows[0].fields
                fields[c] = "1e300"
                lines[r] = CSVTable.line(fields)
            }
        }
        let schools = try SchoolCatalog(schools: CSVTable(text: lines.joined(separator: "\n") + "\n", source: "s.csv"),
                                        majors: CSVTable(contentsOfFile: Fixtures.majorsPath))
        let response = try SchoolMatcher(schools: schools).recommend(profile: Fixtures.bostonStudent, count: 50)
        #expect(response.recommendations.count == 50)
        #expect(response.recommendations.allSatisfy { $0.matchScore.isFinite })
    }

    // MARK: 5: counts

    @Test("count: .max is clamped to what the catalog has")
    func hugeCounts() throws {
        var session = try engine.session(studentID: "c", profile: Fixtures.bostonStudent, seed: 2)
        let all = session.recommendations(count: .max).recommendations
        #expect(all.count == engine.matcher.catalog.count)
        #expect(Set(all.map(\.item.id)).count == all.count)
        #expect(session.recommendations(count: .max).recommendations.isEmpty)
        #expect(session.recommendations(count: -3).recommendations.isEmpty)
        #expect(try engine.matcher.recommend(profile: Fixtures.bostonStudent, count: .max).recommendations.count
                == engine.matcher.catalog.count)
        let batch = try engine.matcher.recommend(profiles: [Fixtures.bostonStudent, StudentProfile()], count: .max)
        #expect(batch.map(\.recommendations.count) == [engine.matcher.catalog.count, engine.matcher.catalog.count])
    }

    // MARK: 6: schema collisions

    @Test("a schema whose derived column names collide names the JSON path")
    func schemaCollision() {
        let json = """
        {"id_column": "id", "name_column": "name", "features": [
          {"column": "x", "kind": "numeric", "group": "g"},
          {"column": "y", "kind": "numeric", "group": "g", "name": "x_missing"}]}
        """
        do {
            _ = try ItemSchema.decode(json: Data(json.utf8), source: "s.json")
            Issue.record("accepted")
        } catch {
            #expect(error.field == "features[1].name", "\(error)")
        }
        // Discovered categories can collide only once the data is read: an error, not a trap.
        let schema = ItemSchema(idColumn: "id", nameColumn: "name", coordinateColumns: nil, textAttributes: [], numericAttributes: [],
                                features: [.categorical("k", group: "g"),
                                           FeatureSpec(column: "v", kind: .numeric(transform: .identity, standardize: true),
                                                       missing: .reject, group: "g", name: "k=a")])
        #expect(throws: DataError.self) { try Catalog(table: Fixtures.table(["id,name,k,v", "1,A,a,1"]), schema: schema) }
    }

    // MARK: 7: bounded cost

    @Test("oversized profiles are refused before work proportional to them")
    func oversized() throws {
        let majors = "[" + (0..<1_000).map { _ in "\"Computer Science\"" }.joined(separator: ",") + "]"
        do {
            _ = try StudentProfile.decode(json: Data("{\"intended_majors\": \(majors)}".utf8), source: "p")
            Issue.record("accepted")
        } catch { #expect(error.field == "intended_majors", "\(error)") }
        let big = String(repeating: "x", count: 1 << 20)
        do {
            _ = try StudentProfile.decode(json: Data("{\"home_state\": \"\(big)\"}".utf8), source: "p")
            Issue.record("accepted")
        } catch { #expect(error.description.count < 300, "the message echoes the whole value") }
        var direct = StudentProfile()
        direct.homeState = big
        do { try direct.validate(); Issue.record("accepted") } catch { #expect(error.description.count < 300) }
        let deep = String(repeating: "[", count: 10_000) + String(repeating: "]", count: 10_000)
        #expect(throws: DataError.self) { try StudentProfile.decode(json: Data(deep.utf8), source: "p") }
    }

    @Test("twenty major names resolve through the prebuilt index")
    func manyMajors() throws {
        let names = ["Computer Science", "Nursing", "Psychology", "Biology", "Economics", "History", "Chemistry", "Physics",
                     "Mathematics", "English", "Philosophy", "Sociology", "Accounting", "Finance", "Marketing",
                     "Music", "Architecture", "Journalism", "Anthropology", "Geography"]
        let student = try engine.matcher.student(StudentProfile(intendedMajors: names))
        #expect(student.majors.count == 20)
        #expect(throws: DataError.self) { try engine.matcher.student(StudentProfile(intendedMajors: names + ["Art"])) }
    }

    // MARK: 10: JSON, configuration, feedback

    @Test("malformed JSON is located by line and column", arguments: [
        ("{\n  \"sat\": 1200,\n}", 3, 1),
        ("{\"sat\": 12 00}", 1, 12),
        ("{\"sat\": tru}", 1, 9),
        ("[1, 2", 1, 6),
        ("{\"a\": \"\\x\"}", 1, 9),
    ])
    func malformed(json: String, line: Int, column: Int) {
        do {
            try JSONInput.check(Data(json.utf8), source: "j.json")
            Issue.record("accepted \(json)")
        } catch {
            #expect(error.line == line && error.column == column, "\(error)")
            #expect(error.description.hasPrefix("j.json:\(line):\(column): malformed JSON"))
        }
    }

    @Test("the JSON checker accepts what JSONSerialization accepts on valid documents")
    func checkerReference() throws {
        let valid = ["{}", "[]", "0", "-0.5e-3", "\"\\u00e9\\ud83d\\ude00\"", "{\"a\": [1, {\"b\": null}], \"c\": true}", " \n\t[false] "]
        for json in valid {
            try JSONInput.check(Data(json.utf8), source: "v")
            _ = try JSONSerialization.jsonObject(with: Data(json.utf8), options: .fragmentsAllowed)
        }
        // Seeded random byte strings: whatever the checker accepts, JSONSerialization parses.
        var rng = SplitMix64(seed: 11)
        let alphabet = Array("{}[]\",:0123456789-+.eEtrufalsn \\u".utf8)
        var accepted = 0
        for _ in 0..<20_000 {
            let bytes = (0..<Int.random(in: 1...12, using: &rng)).map { _ in alphabet.randomElement(using: &rng)! }
            // Numbers past Double's range ("9e999") are valid JSON that Foundation refuses; the
            // decoder reports them per field, so they are left out of the comparison.
            let text = String(decoding: bytes, as: UTF8.self)
            let hugeExponent = text.range(of: "[eE][+-]?[0-9]{3,}", options: .regularExpression) != nil
            if (try? JSONInput.check(Data(bytes), source: "r")) != nil, !hugeExponent {
                accepted += 1
                #expect((try? JSONSerialization.jsonObject(with: Data(bytes), options: .fragmentsAllowed)) != nil,
                        "accepted \(String(decoding: bytes, as: UTF8.self))")
            }
        }
        #expect(accepted > 50)
    }

    @Test("a configuration from JSON is validated, with unknown keys named")
    func configuration() throws {
        let ok = try EngineConfiguration.decode(json: Data("{\"probeInterval\": 5}".utf8), source: "c.json")
        #expect(ok.probeInterval == 5 && ok.priorPrecision == 3 && ok.probeCandidates == .plausiblyGood)
        let boundary = try EngineConfiguration.decode(json: Data("{\"probeCandidates\": \"boundary\"}".utf8), source: "c.json")
        #expect(boundary.probeCandidates == .boundary)
        #expect(try EngineConfiguration.decode(json: JSONEncoder().encode(boundary), source: "c.json") == boundary)
        let cases: [(String, String)] = [
            ("{\"probeInterval\": 0}", "probeInterval"), ("{\"bandShares\": [0.5, 0.5]}", "bandShares"),
            ("{\"stableForgetting\": 0}", "stableForgetting"), ("{\"priorPrecison\": 3}", "priorPrecison"),
            ("{\"feedbackCooldown\": {\"later\": 2}}", "feedbackCooldown.later"), ("{\"expansion\": 1e400}", ""),
            ("{\"feedbackCooldown\": {\"stable\": -1}}", "feedbackCooldown.stable"),
            ("{\"probeCandidates\": \"nearby\"}", "probeCandidates"), ("{\"probeCandidates\": 1}", ""),
        ]
        for (json, field) in cases {
            do {
                _ = try EngineConfiguration.decode(json: Data(json.utf8), source: "c.json")
                Issue.record("accepted \(json)")
            } catch {
                if !field.isEmpty { #expect(error.field == field, "\(json): \(error)") }
            }
        }
        // Encoding round-trips.
        var custom = EngineConfiguration()
        custom.feedbackCooldown = [.stable: 4]
        let data = try JSONEncoder().encode(custom)
        #expect(try EngineConfiguration.decode(json: data, source: "c") == custom)
    }

    @Test("the same feedback option sent 8 times is applied once")
    func repeatedFeedback() throws {
        var session = try engine.session(studentID: "f", profile: Fixtures.bostonStudent, seed: 3)
        var prompt: FeedbackPrompt?
        var i = 0
        while prompt == nil {
            for card in session.recommendations(count: 4).recommendations where prompt == nil {
                prompt = try session.recordSwipe(Swipe(swipeID: "f\(i)", cardID: card.item.id, action: .dislike, timestamp: Int64(i))).feedback
                i += 1
            }
        }
        var once = session, many = session
        try once.submitFeedback(cardID: prompt!.cardID, options: [prompt!.options[0]])
        try many.submitFeedback(cardID: prompt!.cardID, options: Array(repeating: prompt!.options[0], count: 8))
        #expect(once.model == many.model)
        #expect(once.snapshot() == many.snapshot())
    }

    @Test("overlong swipe ids are rejected and change nothing")
    func longIDs() throws {
        var session = try engine.session(studentID: "l", profile: Fixtures.bostonStudent, seed: 3)
        let card = session.recommendations(count: 1).recommendations[0]
        let before = session.snapshot()
        #expect(throws: SwipeError.self) {
            try session.recordSwipe(Swipe(swipeID: String(repeating: "a", count: 1_000), cardID: card.item.id, action: .like, timestamp: 1))
        }
        #expect(session.snapshot() == before)
    }
}
