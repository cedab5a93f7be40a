import Foundation
import SwipeRankColleges
import Testing
import SwipeRank

@Suite("Student profiles")
struct ProfileTests {
    func decode(_ json: String) throws(DataError) -> StudentProfile {
        try StudentProfile.decode(json: Data(json.utf8), source: "p.json")
    }

    @Test("the shipped sample profile decodes with every field")
    func sample() throws {
        let data = try Data(contentsOf: Fixtures.root.appendingPathComponent("datasets/sample-profile.json"))
        let profile = try StudentProfile.decode(json: data, source: "sample")
        #expect(profile.homeState == "MA" && profile.sat == 1380 && profile.sizePreference == .medium)
        #expect(profile.intendedMajors == ["Computer Science", "Business Administration"])
    }

    @Test("absent optional fields take documented defaults")
    func defaults() throws {
        let profile = try decode("{}")
        #expect(profile == StudentProfile())
        #expect(profile.maxDistanceMiles == 500 && profile.sizePreference == .any && profile.home == nil)
    }

    @Test("bad profiles name the field", arguments: [
        ("{\"sat\": 2000}", "sat", DataError.Kind.outOfRange),
        ("{\"max_distance_miles\": -5}", "max_distance_miles", .outOfRange),
        ("{\"annual_budget\": 0}", "annual_budget", .outOfRange),
        ("{\"size_preference\": \"huge\"}", "size_preference", .invalidValue),
        ("{\"home\": {\"latitude\": 95, \"longitude\": 0}}", "home.latitude", .outOfRange),
        ("{\"home\": {\"latitude\": 40}}", "home.longitude", .missingValue),
        ("{\"sat\": \"high\"}", "sat", .invalidValue),
        ("{\"academic_priority\": 2}", "academic_priority", .outOfRange),
        ("{\"home_state\": \"Massachusetts\"}", "home_state", .outOfRange),
        ("{\"sat\": 1200,", nil, .unreadable),
        ("{\"annual_budgett\": 1}", "annual_budgett", .invalidValue),
        ("{\"sat\": 1200, \"sat\": 1300}", "sat", .invalidValue),
        ("{\"home\": {\"latitude\": 40, \"longitude\": 1, \"alt\": 3}}", "home.alt", .invalidValue),
        ("{\"annual_budget\": 1e-300}", "annual_budget", .outOfRange),
        ("{\"max_distance_miles\": 1e300}", "max_distance_miles", .outOfRange),
    ] as [(String, String?, DataError.Kind)])
    func bad(json: String, field: String?, kind: DataError.Kind) {
        do {
            _ = try decode(json)
            Issue.record("accepted \(json)")
        } catch {
            #expect(error.kind == kind, "\(error)")
            #expect(error.field == field, "\(error)")
            #expect(error.description.hasPrefix("p.json:"))
            if let field { #expect(error.description.contains(field)) }
        }
    }

    @Test("an unknown choice lists the allowed values")
    func choices() {
        do {
            _ = try decode("{\"control_preference\": \"charter\"}")
            Issue.record("unknown choice accepted")
        } catch {
            #expect(error.description.contains("not one of public, private, any"))
        }
    }

    @Test("an unknown major is rejected with suggestions")
    func unknownMajor() throws {
        do {
            _ = try Fixtures.matcher.student(StudentProfile(intendedMajors: ["Computer Sciense Engineering"]))
            Issue.record("unknown major accepted")
        } catch {
            #expect(error.kind == .unknownReference)
            #expect(error.description.contains("unknown major \"Computer Sciense Engineering\""))
            #expect(error.description.contains("did you mean"))
        }
    }

    @Test("the JSON response has the app's shape")
    func responseShape() throws {
        let response = try Fixtures.matcher.recommend(profile: Fixtures.bostonStudent, count: 3)
        let encoder = JSONEncoder()
        let json = try JSONSerialization.jsonObject(with: encoder.encode(response)) as! [String: Any]
        #expect(json["total_swipes"] as? Int == 0)
        let state = json["learning_state"] as! [String: Any]
        #expect(state["phase"] as? String == "discovery" && state["progress"] as? Double == 0)
        #expect((state["preference_weights"] as! [String: Double])["distance_weight"] == 1)
        let cards = json["recommendations"] as! [[String: Any]]
        #expect(cards.count == 3)
        for card in cards {
            #expect(Set(card.keys) == ["school", "match_score", "grade", "explanations", "is_probe", "matched_majors", "distance"])
            let school = card["school"] as! [String: Any]
            for key in ["id", "name", "city", "state", "control", "net_price", "sat_avg"] { #expect(school[key] != nil, "\(key)") }
        }
        // Round trip.
        let decoded = try JSONDecoder().decode(RecommendationResponse.self, from: encoder.encode(response))
        #expect(decoded == response)
    }
}
