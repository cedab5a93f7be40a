import Foundation
import SwipeRankColleges
import Testing
import SwipeRank
import SwipeRankNumerics

/// Issue "No input crashes the engine", items 1, 2 and 11: every tampering of a snapshot is a
/// `DataError`, never a trap and never a silently inconsistent session; version-2 snapshots are
/// compact and replay bit-identically; version 1 still restores.
@Suite("Session snapshots: validation, size, versions")
struct SnapshotValidationTests {
    let engine = SessionFixtures.engine

    /// A session with swipes, an answered feedback prompt and cards served but not swiped.
    func liveSession(swipes: Int = 12, profile: StudentProfile = Fixtures.bostonStudent) throws -> SwipeSession<SchoolMatcher> {
        var session = try engine.session(studentID: "t", profile: profile, seed: 5)
        var answered = false
        var done = 0
        while done < swipes {
            for card in session.recommendations(count: min(10, swipes - done)).recommendations {
                let action: SwipeAction = Int(card.item.id)! % 3 == 0 ? .like : .dislike
                let result = try session.recordSwipe(Swipe(swipeID: "w\(done)", cardID: card.item.id, action: action,
                                                           timestamp: Int64(done)))
                if let prompt = result.feedback, !answered {
                    try session.submitFeedback(cardID: prompt.cardID, options: [prompt.options[0]])
                    answered = true
                }
                done += 1
            }
        }
        _ = session.recommendations(count: 3)
        return session
    }

    /// The snapshot as a JSON object to tamper with.
    func object(_ snapshot: SessionSnapshot<StudentProfile>) throws -> [String: Any] {
        try JSONSerialization.jsonObject(with: snapshot.jsonData()) as! [String: Any]
    }

    func restore(_ object: [String: Any]) throws(DataError) -> SwipeSession<SchoolMatcher> {
        let data = (try? JSONSerialization.data(withJSONObject: object)) ?? Data()
        return try engine.restore(SessionSnapshot<StudentProfile>.decode(json: data, source: "snap.json"))
    }

    @Test("a JSON round trip restores a session that continues identically")
    func roundTrip() throws {
        var session = try liveSession(swipes: 40)
        let snapshot = session.snapshot()
        var restored = try engine.restore(SessionSnapshot<StudentProfile>.decode(json: snapshot.jsonData(), source: "s"))
        #expect(restored.snapshot() == snapshot)
        #expect(restored.model == session.model)
        #expect(session.recommendations(count: 10) == restored.recommendations(count: 10))
        try SessionFixtures.swipeThrough(&session, count: 6, start: 500)
        try SessionFixtures.swipeThrough(&restored, count: 6, start: 500)
        #expect(session.snapshot() == restored.snapshot())
    }

    @Test("after 40 swipes a snapshot is at most 16 KiB of JSON")
    func size() throws {
        let bytes = try liveSession(swipes: 40).snapshot().jsonData().count
        #expect(bytes <= 16 << 10, "\(bytes) bytes")
    }

    @Test("every tampering is a DataError naming the field", arguments: [
        "duplicate served card", "served position", "served row out of range", "served card_id of another row",
        "served band", "served is_probe", "served propensity", "served predicted_match", "served action",
        "duplicate swipe id", "swipe on an unserved card", "second swipe on a card", "feedback never asked",
        "model digest", "catalog fingerprint", "configuration digest", "catalog count", "format version",
        "generator missing", "unknown key", "event with two kinds",
    ])
    func tampered(_ tampering: String) throws {
        let snapshot = try liveSession().snapshot()
        var o = try object(snapshot)
        var served = o["served"] as! [[String: Any]]
        var events = o["events"] as! [[String: Any]]
        let swipeEvents = events.indices.filter { events[$0]["swipe"] != nil }
        let unswiped = served.firstIndex { $0["action"] == nil }!
        var expected = ""
        func editSwipe(_ k: Int, _ change: (inout [String: Any]) -> Void) {
            var swipe = events[swipeEvents[k]]["swipe"] as! [String: Any]
            change(&swipe)
            events[swipeEvents[k]]["swipe"] = swipe
            expected = "events[\(swipeEvents[k])]"
        }
        func swipeField(_ k: Int, _ key: String) -> Any { (events[swipeEvents[k]]["swipe"] as! [String: Any])[key]! }
        switch tampering {
        case "duplicate served card": served[1]["row"] = served[0]["row"]; served[1]["card_id"] = served[0]["card_id"]; expected = "served[1]"
        case "served position": served[2]["position"] = 2; expected = "served[2].position"  // not after served[1]; gaps are allowed (migrations keep them)
        case "served row out of range": served[0]["row"] = 99_999; expected = "served[0].row"
        case "served card_id of another row": served[0]["card_id"] = served[1]["card_id"]; expected = "served[0].card_id"
        case "served band": served[0]["band"] = served[0]["band"] as? String == "discovery" ? "nearby" : "discovery"; expected = "served[0].band"
        case "served is_probe": served[0]["is_probe"] = true; expected = "served[0].is_probe"
        case "served propensity": served[3]["propensity"] = 0; expected = "served[3].propensity"
        case "served predicted_match": served[0]["predicted_match"] = 7; expected = "served[0].predicted_match"
        case "served action": served[unswiped]["action"] = "like"; expected = "served[\(unswiped)].action"
        case "duplicate swipe id":
            let first = swipeField(0, "swipe_id")
            editSwipe(1) { $0["swipe_id"] = first }
        case "swipe on an unserved card":
            let unserved = Fixtures.schools.catalog.ids.first { id in !served.contains { $0["card_id"] as? String == id } }!
            editSwipe(0) { $0["card_id"] = unserved }
        case "second swipe on a card":
            let first = swipeField(0, "card_id")
            editSwipe(1) { $0["card_id"] = first }
        case "feedback never asked":
            events.insert(["feedback": ["card_id": served[0]["card_id"]!, "options": ["Too big"]]], at: 0)
            expected = "events[0].feedback"
        case "model digest": o["modelDigest"] = "0000000000000000"; expected = "modelDigest"
        case "catalog fingerprint": o["catalogFingerprint"] = "0123456789abcdef"; expected = "catalogFingerprint"
        case "configuration digest": o["configurationDigest"] = "0123456789abcdef"; expected = "configurationDigest"
        case "catalog count": o["catalogCount"] = 10; expected = "catalogCount"
        case "format version": o["formatVersion"] = 3; expected = "formatVersion"
        case "generator missing": o["generator"] = nil; expected = "generator"
        case "unknown key": o["pools"] = []; expected = "pools"
        case "event with two kinds":
            events[swipeEvents[0]]["feedback"] = ["card_id": "x", "options": []]
            expected = "events[\(swipeEvents[0])]"
        default: Issue.record("unknown case")
        }
        o["served"] = served
        o["events"] = events
        do {
            _ = try restore(o)
            Issue.record("\(tampering): restored")
        } catch {
            #expect(error.field?.hasPrefix(expected) == true, "\(tampering): \(error)")
        }
    }

    @Test("a snapshot taken over another catalog of the same size is refused")
    func otherCatalog() throws {
        let snapshot = try liveSession().snapshot()
        // The same schools with one feature value changed: same count, same ids.
        let table = try CSVTable(contentsOfFile: Fixtures.schoolsPath)
        var lines = try String(contentsOfFile: Fixtures.schoolsPath, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        let sat = try table.column(named: "sat_avg")
        let row = table.rows.first { !$0[sat].isEmpty }!
        var fields = row.fields
        fields[sat] = String(Double(fields[sat])! + 10)
        lines[row.line - 1] = CSVTable.line(fields)
        let edited = try SchoolCatalog(schools: CSVTable(text: lines.joined(separator: "\n"), source: "edited.csv"),
                                       majors: CSVTable(contentsOfFile: Fixtures.majorsPath))
        let other = SwipeEngine(matcher: SchoolMatcher(schools: edited))
        #expect(other.matcher.catalog.count == engine.matcher.catalog.count)
        #expect(throws: DataError.self) { try other.restore(snapshot) }
        // And under another configuration.
        let tuned = engine.reconfigured { $0.priorPrecision = 5 }
        #expect(throws: DataError.self) { try tuned.restore(snapshot) }
    }

    @Test("a live session's snapshot is bit-identical with 1 and 2 BLAS threads")
    func blasThreads() throws {
        let one = try BLASThreads.withCount(1) { try liveSession(swipes: 45).snapshot() }
        let two = try BLASThreads.withCount(2) { try liveSession(swipes: 45).snapshot() }
        #expect(one == two)
        #expect(try one.jsonData() == two.jsonData())
    }

    // MARK: Version 1

    /// A version-1 snapshot of a session, as the previous library wrote it (one pool: the
    /// profile has no home).
    func version1(_ session: SwipeSession<SchoolMatcher>) throws -> [String: Any] {
        let v2 = try object(session.snapshot())
        let servedRows = Set(session.served.map(\.row))
        let unseen = (0..<engine.matcher.catalog.count).filter { !servedRows.contains($0) }
            .map { ["id": $0, "score": 0.5, "timestamp": 1] as [String: Any] }
        let swipes = session.served.compactMap { card -> [String: Any]? in
            guard let action = card.action else { return nil }
            return ["swipe_id": "w-\(card.row)", "card_id": card.cardID, "action": action.rawValue, "timestamp": card.position]
        }
        let model = try JSONSerialization.jsonObject(with: JSONEncoder().encode(session.model))
        return ["formatVersion": 1, "studentID": "t", "profile": v2["profile"]!, "catalogCount": engine.matcher.catalog.count,
                "model": model, "pools": [["version": 1, "unseen": unseen, "history": session.served.map(\.row)]],
                "served": v2["served"]!, "swipes": swipes, "totalSwipes": swipes.count, "bandServed": [0, 0, 0],
                "shownRegions": [], "pendingFeedback": [], "generator": v2["generator"]!, "modelVersion": 3, "poolsVersion": 3]
    }

    var homeless: StudentProfile { StudentProfile(annualBudget: 30000, sat: 1300, intendedMajors: ["Biology"]) }

    @Test("a version-1 snapshot restores and continues like the session it was taken from")
    func version1Restores() throws {
        var session = try liveSession(swipes: 8, profile: homeless)
        var restored = try restore(try version1(session))
        #expect(restored.model == session.model && restored.totalSwipes == 8 && restored.served == session.served)
        #expect(session.recommendations(count: 10) == restored.recommendations(count: 10))
        // Its next snapshot is version 2 with the checkpoint, and restores too.
        let again = try engine.restore(restored.snapshot())
        #expect(again.snapshot() == restored.snapshot())
    }

    @Test("every tampering of a version-1 snapshot is a DataError", arguments: [
        "factor.lower empty", "mean too short", "totalSwipes -1", "bandServed of 2", "Int.max counter", "scale 0",
        "served card left in the pool", "emptied pool", "duplicate swipe id", "pending feedback on an unswiped row",
    ])
    func version1Tampered(_ tampering: String) throws {
        let session = try liveSession(swipes: 8, profile: homeless)
        var o = try version1(session)
        var model = o["model"] as! [String: Any]
        var factor = model["factor"] as! [String: Any]
        var pools = o["pools"] as! [[String: Any]]
        switch tampering {
        case "factor.lower empty": factor["lower"] = []
        case "mean too short": model["mean"] = [0.5]
        case "totalSwipes -1": o["totalSwipes"] = -1
        case "bandServed of 2": o["bandServed"] = [1, 2]
        case "Int.max counter": o["totalSwipes"] = Int.max
        case "scale 0": model["scale"] = 0
        case "served card left in the pool":
            var unseen = pools[0]["unseen"] as! [[String: Any]]
            unseen.append(["id": session.served[0].row, "score": 0.1, "timestamp": 1])
            pools[0]["unseen"] = unseen
        case "emptied pool": pools[0]["unseen"] = []
        case "duplicate swipe id":
            var swipes = o["swipes"] as! [[String: Any]]
            swipes[1]["swipe_id"] = swipes[0]["swipe_id"]
            o["swipes"] = swipes
        case "pending feedback on an unswiped row":
            o["pendingFeedback"] = [["row": session.served.last!.row, "options": ["Too big"]]]
        default: Issue.record("unknown case")
        }
        model["factor"] = factor
        o["model"] = model
        o["pools"] = pools
        #expect(throws: DataError.self, "\(tampering)") { try restore(o) }
    }

    @Test("the restored v1 model with an empty factor never reaches the rank-one update")
    func emptyFactorAfterSwipes() throws {
        // The reported crash: restore after 5 swipes, then one swipe.
        let session = try liveSession(swipes: 5, profile: homeless)
        var o = try version1(session)
        var model = o["model"] as! [String: Any]
        var factor = model["factor"] as! [String: Any]
        factor["lower"] = []
        model["factor"] = factor
        o["model"] = model
        do {
            var restored = try restore(o)
            _ = try restored.recordSwipe(Swipe(swipeID: "z", cardID: session.served.last!.cardID, action: .like, timestamp: 9))
            Issue.record("restored a model without a factor")
        } catch let error as DataError {
            #expect(error.description.contains("factor"), "\(error)")
        }
    }
}

/// Best-first decks: the band plan's cards, probes where the schedule puts them, the rest best first.
@Suite("Best-first decks")
struct BestFirstDeckTests {
    @Test("the same cards, bands and probes as the band plan's deck, probes at every 4th position, the rest by score", arguments: 0..<3)
    func sameCardsBestFirst(seed: UInt64) throws {
        let best = SessionFixtures.engine
        let plan = best.reconfigured { $0.deckOrder = .bandPlan }
        #expect(best.configuration.deckOrder == .bestFirst)
        var a = try best.session(studentID: "b", profile: Fixtures.bostonStudent, seed: seed)
        var b = try plan.session(studentID: "b", profile: Fixtures.bostonStudent, seed: seed)
        var rng = SplitMix64(seed: 40 + seed)
        for round in 0..<4 {
            var scores: [Float] = []
            best.rawScores(weights: a.weights, student: a.student, into: &scores)
            let deckA = a.recommendations(count: 10).recommendations, deckB = b.recommendations(count: 10).recommendations
            let servedA = Array(a.served.suffix(10)), servedB = Array(b.served.suffix(10))
            // The same cards with the same band, probe flag and propensity; positions kept.
            #expect(Set(servedA.map(\.cardID)) == Set(servedB.map(\.cardID)), "round \(round)")
            #expect(servedA.map(\.position) == servedB.map(\.position))
            #expect(servedA.filter(\.isProbe).map(\.cardID) == servedB.filter(\.isProbe).map(\.cardID))
            #expect(servedA.filter(\.isProbe).map(\.propensity) == servedB.filter(\.isProbe).map(\.propensity))
            #expect(servedA.allSatisfy { $0.isProbe == ($0.position % 4 == 0) })
            let byID = Dictionary(uniqueKeysWithValues: servedB.map { ($0.cardID, $0) })
            #expect(servedA.allSatisfy { byID[$0.cardID]?.band == $0.band && byID[$0.cardID]?.propensity == $0.propensity })
            // Non-probes best first by the ranking score.
            let keys = servedA.filter { !$0.isProbe }.map { scores[$0.row] }
            #expect(keys == keys.sorted(by: >), "round \(round): \(keys)")
            // The cards answer as they were served (the response in the served order).
            #expect(deckA.map(\.item.id) == servedA.map(\.cardID) && deckB.map(\.item.id) == servedB.map(\.cardID))
            for card in servedA {
                let s = Swipe(swipeID: "\(round)-\(card.position)", cardID: card.cardID, action: Bool.random(using: &rng) ? .like : .dislike,
                              timestamp: Int64(card.position))
                _ = try a.recordSwipe(s)
                _ = try b.recordSwipe(s)
            }
        }
    }
}

/// The session selects each band's best unseen cards per batch instead of keeping heaps; this
/// checks the order against the `CardPool` reference the session used to hold.
@Suite("Session serving order")
struct ServingOrderTests {
    @Test("non-probe cards are the picks of re-scored CardPools band by band, served in the plan's order or best first",
          arguments: 0..<4, DeckOrder.allCases)
    func cardPoolReference(seed: UInt64, order: DeckOrder) throws {
        let engine = SessionFixtures.engine.reconfigured { $0.probeInterval = .max; $0.discoveryNoveltyBonus = 0; $0.deckOrder = order }
        var rng = SplitMix64(seed: seed)
        let profiles = [Fixtures.bostonStudent, StudentProfile(annualBudget: 25000, sat: 1200)]
        var session = try engine.session(studentID: "o", profile: profiles[Int(seed) % 2], seed: seed)
        let catalog = engine.matcher.catalog
        let mixer = GeographicMixer(shares: engine.configuration.bandShares)
        var servedRows = Set<Int>()
        var bandServed = [0, 0, 0]
        for round in 0..<6 {
            // Reference: pools rebuilt from the current weights, served by the same plan.
            var scores: [Float] = []
            catalog.scores(weights: session.weights, terms: session.student.terms, into: &scores)
            let banded = session.student.preferredDistanceMiles != nil
            var pools = [CardPool<Int, Float>(), CardPool<Int, Float>(), CardPool<Int, Float>()]
            for row in 0..<catalog.count where !servedRows.contains(row) {
                let band = banded ? GeoBand.band(distance: session.student.distances[row], preferred: session.student.preferredDistanceMiles!,
                                                 expansion: engine.configuration.expansion) : .nearby
                _ = try pools[GeoBand.allCases.firstIndex(of: band)!].insert(row, score: scores[row], timestamp: 1)
            }
            let count = Int.random(in: 1...12, using: &rng)
            let plan: [GeoBand?] = banded ? mixer.plan(count: count, served: bandServed) : Array(repeating: nil, count: count)
            var expected: [Int] = []
            for planned in plan {
                let start = planned.map { GeoBand.allCases.firstIndex(of: $0)! } ?? 0
                let p = (0..<3).map { (start + $0) % 3 }.first { !pools[$0].isEmpty }!
                expected.append(pools[p].removeMax().id)
                if banded { bandServed[p] += 1 }
            }
            if order == .bestFirst {
                // The same cards, best first by score; ties keep the plan's order.
                expected = expected.enumerated().sorted { (scores[$0.element], -$0.offset) > (scores[$1.element], -$1.offset) }.map(\.element)
            }
            let cards = session.recommendations(count: count).recommendations
            #expect(cards.map { catalog.row(of: $0.item.id)! } == expected, "seed \(seed) \(order) round \(round)")
            for (i, card) in cards.enumerated() {
                servedRows.insert(catalog.row(of: card.item.id)!)
                _ = try session.recordSwipe(Swipe(swipeID: "\(round)-\(i)", cardID: card.item.id,
                                                  action: Bool.random(using: &rng) ? .like : .dislike, timestamp: Int64(round * 20 + i)))
            }
        }
    }
}
