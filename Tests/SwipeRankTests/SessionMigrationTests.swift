import Foundation
import Testing
import SwipeRank
import SwipeRankNumerics

/// Issue 29, part 1: a snapshot taken on another catalog (items added, changed, removed) or
/// under another population model is migrated, not refused.
@Suite("Session migration to a changed catalog")
struct SessionMigrationTests {
    static let root = Fixtures.root.appendingPathComponent("datasets/restaurants")
    static let schema: ItemSchema = {
        do { return try ItemSchema.load(contentsOfFile: root.appendingPathComponent("restaurants.schema.json").path) }
        catch { fatalError("\(error)") }
    }()
    static let lines: [String] = {
        let text = (try? String(contentsOf: root.appendingPathComponent("restaurants.csv"), encoding: .utf8)) ?? ""
        return text.split(separator: "\n").map(String.init)
    }()

    static func engine(_ lines: [String]) throws -> SwipeEngine<ItemMatcher> {
        let catalog = try Catalog(table: Fixtures.table(lines, source: "restaurants.csv"), schema: schema)
        return SwipeEngine(matcher: ItemMatcher(catalog: catalog, regionAttribute: "neighborhood"))
    }

    static let profile = ItemProfile(home: try! GeoPoint(latitude: 40.05, longitude: -74.95), maxDistanceMiles: 3,
                                     preferences: ["quality": 0.8])

    /// A session with `swipes` swipes (decks of 7, likes by a seeded coin), the feedback prompts
    /// answered with their first option, a save-like judgement and 3 cards served unswiped.
    static func session(on engine: SwipeEngine<ItemMatcher>, seed: UInt64, swipes: Int) throws -> SwipeSession<ItemMatcher> {
        var session = try engine.session(studentID: "m\(seed)", profile: profile, seed: seed)
        var rng = SplitMix64(seed: seed &+ 99)
        var done = 0
        while done < swipes {
            for card in session.recommendations(count: min(7, swipes - done)).recommendations {
                let action: SwipeAction = rng.next() % 3 == 0 ? .like : .dislike
                let result = try session.recordSwipe(Swipe(swipeID: "w\(done)", cardID: card.item.id, action: action, timestamp: Int64(done)))
                if let prompt = result.feedback { try session.submitFeedback(cardID: prompt.cardID, options: [prompt.options[0]]) }
                done += 1
            }
            if done == 5 {
                let unseen = session.ranking(count: 1)[0].item.id
                _ = try session.recordJudgement(Swipe(swipeID: "/save/\(unseen)", cardID: unseen, action: .like, timestamp: 5), weight: 2)
            }
        }
        _ = session.recommendations(count: 3)
        return session
    }

    @Test("on the engine a snapshot was taken on, migrating equals restoring (seeded histories)", arguments: [1, 2, 3, 4, 5] as [UInt64])
    func sameEngine(seed: UInt64) throws {
        let engine = try Self.engine(Self.lines)
        let original = try Self.session(on: engine, seed: seed, swipes: 8 + Int(seed) * 6)
        let snapshot = original.snapshot()
        var restored = try engine.restore(snapshot)
        let migration = try engine.migrate(snapshot)
        var migrated = migration.session
        #expect(migrated.snapshot() == snapshot)
        #expect(migrated.model == restored.model)
        #expect(migration.report.retired == 0 && migration.report.servedDropped == 0 && migration.report.feedbackDropped == 0)
        #expect(migration.report.servedKept == original.served.count)
        #expect(migrated.recommendations(count: 10) == restored.recommendations(count: 10))
    }

    @Test("items added, changed and removed: swipes counted, gone cards never served, the result restores exactly")
    func changedCatalog() throws {
        let old = try Self.engine(Self.lines)
        let original = try Self.session(on: old, seed: 11, swipes: 24)
        let snapshot = original.snapshot()
        // Remove three swiped cards and one served-unswiped card; change a value; add two rows.
        let swiped = original.served.filter { $0.action != nil }.map(\.cardID)
        let unswiped = original.served.filter { $0.action == nil }.map(\.cardID)
        let removed = Set([swiped[0], swiped[5], swiped[9], unswiped[0]])
        var lines = Self.lines.filter { line in !removed.contains(String(line.prefix(while: { $0 != "," }))) }
        let changedID = swiped[2]
        let i = try #require(lines.firstIndex { $0.hasPrefix(changedID + ",") })
        var fields = lines[i].split(separator: ",", omittingEmptySubsequences: false).map(String.init)
        fields[8] = "\((Int(fields[8]) ?? 0) + 1)"  // reviews + 1, the issue's example
        lines[i] = fields.joined(separator: ",")
        lines.append("x901,New Place 1,Old Town,40.0211,-74.9905,thai,2,4.5,12,40,yes")
        lines.append("x902,New Place 2,Northgate,40.1066,-74.9845,vegan,1,4.1,3,20,no")
        let new = try Self.engine(lines)

        #expect(throws: DataError.self) { _ = try new.restore(snapshot) }
        let migration = try new.migrate(snapshot)
        var migrated = migration.session
        #expect(migrated.totalSwipes == original.totalSwipes, "every swipe still counts")
        #expect(migrated.phase == original.phase)
        #expect(migration.report.retired == 3)
        #expect(migration.report.servedDropped == 4)
        #expect(migration.report.servedKept == original.served.count - 4)
        #expect(migrated.served.allSatisfy { !removed.contains($0.cardID) })
        // Positions are the original ones (gaps where cards left); the next card continues.
        let positions = original.served.filter { !removed.contains($0.cardID) }.map(\.position)
        #expect(migrated.served.map(\.position) == positions)
        // Idempotency by id survives, retired swipes included.
        for id in ["w0", "w5", "w9", "w3"] { #expect(migrated.hasRecorded(swipeID: id)) }
        // Restores exactly on the new engine, and continues as the migrated session would.
        let data = try migrated.snapshot().jsonData()
        var restored = try new.restore(SessionSnapshot<ItemProfile>.decode(json: data, source: "migrated"))
        #expect(restored.model == migrated.model)
        let next = migrated.recommendations(count: 10)
        #expect(next == restored.recommendations(count: 10))
        #expect(next.recommendations.first?.isProbe == ((positions.last! + 1) % new.configuration.probeInterval == 0))
        let served = Set(migrated.served.map(\.cardID))
        #expect(served.count == migrated.served.count, "no card served twice")
        #expect(served.isDisjoint(with: removed))
        // A swipe on a card that left is refused as unknown; a new card can be swiped.
        #expect(throws: SwipeError.self) {
            _ = try migrated.recordSwipe(Swipe(swipeID: "late", cardID: unswiped[0], action: .like, timestamp: 99))
        }
    }

    @Test("the migrated model is the model of the same swipes learned on the new catalog from the start")
    func sameAsLearningOnTheNewCatalog() throws {
        // Reference: replay the surviving swipes, in order, as judgements/swipes on a session
        // created on the new catalog; migration must reach the same posterior.
        let old = try Self.engine(Self.lines)
        let original = try Self.session(on: old, seed: 21, swipes: 15)
        let gone = original.served.filter { $0.action != nil }.map(\.cardID)[1]
        let new = try Self.engine(Self.lines.filter { !$0.hasPrefix(gone + ",") })
        let migrated = try new.migrate(original.snapshot()).session

        var reference = try new.session(studentID: original.studentID, profile: Self.profile, seed: 0)
        var migration = SessionMigration(session: reference)
        for card in original.served {
            migration.served(cardID: card.cardID, position: card.position, isProbe: card.isProbe,
                             propensity: card.propensity, predictedMatch: card.predictedMatch)
        }
        reference = migration.session
        let snapshot = original.snapshot()
        var retired = 0
        for event in try JSONSerialization.jsonObject(with: snapshot.jsonData()) as! [String: Any] where event.key == "events" {
            for e in event.value as! [[String: Any]] {
                if let s = e["swipe"] as? [String: Any] {
                    let swipe = Swipe(swipeID: s["swipe_id"] as! String, cardID: s["card_id"] as! String,
                                      action: (s["action"] as! String) == "like" ? .like : .dislike, timestamp: Int64(s["timestamp"] as! Int))
                    if swipe.cardID == gone { retired += 1; continue }
                    _ = try reference.recordSwipe(swipe)
                } else if let j = e["judged"] as? [String: Any], let s = j["swipe"] as? [String: Any] {
                    let swipe = Swipe(swipeID: s["swipe_id"] as! String, cardID: s["card_id"] as! String, action: .like,
                                      timestamp: Int64(s["timestamp"] as! Int))
                    _ = try reference.recordJudgement(swipe, weight: j["weight"] as! Double)
                } else if let f = e["feedback"] as? [String: Any] {
                    try? reference.submitFeedback(cardID: f["card_id"] as! String,
                                                  options: (f["options"] as! [String]).compactMap(FeedbackOption.init(rawValue:)))
                }
            }
        }
        #expect(retired == 1)
        #expect(reference.model == migrated.model)
        #expect(reference.totalSwipes + retired == migrated.totalSwipes)
    }

    @Test("a new population model: the same path carries the student over")
    func newConfiguration() throws {
        let old = try Self.engine(Self.lines)
        let original = try Self.session(on: old, seed: 31, swipes: 12)
        var configuration = old.configuration
        configuration.priorPrecision *= 2
        let new = SwipeEngine(matcher: old.matcher, configuration: configuration)
        #expect(throws: DataError.self) { _ = try new.restore(original.snapshot()) }
        let migration = try new.migrate(original.snapshot())
        #expect(migration.session.totalSwipes == 12 && migration.report.retired == 0)
        #expect(migration.session.model != original.model, "learned again under the new prior")
        #expect(try new.restore(migration.session.snapshot()).model == migration.session.model)
    }

    @Test("a profile that no longer fits the catalog is a DataError naming it, not a trap")
    func profileDoesNotFit() throws {
        let old = try Self.engine(Self.lines)
        var profile = Self.profile
        profile.preferences = ["cuisine=thai": 1]
        var session = try old.session(studentID: "p", profile: profile, seed: 1)
        _ = session.recommendations(count: 3)
        // A catalog with no Thai restaurant has no cuisine=thai column.
        let new = try Self.engine(Self.lines.filter { !$0.contains(",thai,") })
        #expect(throws: DataError.self) { _ = try new.migrate(session.snapshot()) }
    }

    @Test("retired events round-trip through JSON and count on restore")
    func retiredJSON() throws {
        let old = try Self.engine(Self.lines)
        let original = try Self.session(on: old, seed: 41, swipes: 9)
        let gone = original.served.filter { $0.action != nil }.map(\.cardID)[0]
        let new = try Self.engine(Self.lines.filter { !$0.hasPrefix(gone + ",") })
        let migrated = try new.migrate(original.snapshot()).session
        let json = String(decoding: try migrated.snapshot().jsonData(), as: UTF8.self)
        #expect(json.contains(#"{"retired":{"#))
        let restored = try new.restore(SessionSnapshot<ItemProfile>.decode(json: Data(json.utf8), source: "r"))
        #expect(restored.totalSwipes == 9 && restored.hasRecorded(swipeID: "w0"))
        // The item comes back: the retired swipe teaches again, as a judgement.
        let back = try new.migrate(restored.snapshot())
        #expect(back.report.retired == 1, "still gone on this engine")
        let again = try old.migrate(restored.snapshot())
        #expect(again.report.retired == 0 && again.report.judgementsReplayed >= 1 && again.session.totalSwipes == 9)
    }
}
