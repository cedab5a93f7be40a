import Foundation
@testable import SwipeRankColleges
import Testing
@testable import SwipeRank
import SwipeRankNumerics

/// `SessionSnapshot.jsonData()` writes the served cards itself and the rest with `JSONEncoder`:
/// its bytes must be exactly `JSONEncoder`'s for the whole snapshot (so stored snapshots and
/// anything hashing them are unchanged), and the direct path must be the one taken.
@Suite("Snapshot JSON bytes")
struct SnapshotJSONTests {
    let engine = SessionFixtures.engine

    func check(_ snapshot: SessionSnapshot<StudentProfile>, _ label: String) throws {
        let reference = try SessionSnapshot<StudentProfile>.encoder.encode(snapshot)
        #expect(try snapshot.jsonData() == reference, "\(label)")
        var rest = snapshot
        rest.served = []
        let spliced = try SessionSnapshot<StudentProfile>.splice(
            snapshot.served, into: SessionSnapshot<StudentProfile>.encoder.encode(rest),
            studentID: SessionSnapshot<StudentProfile>.encoder.encode([snapshot.studentID]))
        #expect(spliced == reference, "\(label): the direct path is taken and writes the same bytes")
        #expect(try SessionSnapshot<StudentProfile>.decode(json: snapshot.jsonData(), source: label) == snapshot, "\(label)")
    }

    @Test("live sessions: swipes, feedback, unswiped cards, no home", arguments: [0, 1, 12, 45])
    func live(swipes: Int) throws {
        var profile = Fixtures.bostonStudent
        if swipes == 12 { profile.home = nil }
        var session = try engine.session(studentID: "s/\"\(swipes)\"", profile: profile, seed: UInt64(swipes))
        try SessionFixtures.swipeThrough(&session, count: swipes, start: 0)
        _ = session.recommendations(count: 7)
        try check(session.snapshot(), "\(swipes) swipes")
    }

    @Test("synthetic cards: ids with quotes, backslashes, control characters and non-ASCII; awkward numbers", arguments: 0..<20)
    func synthetic(seed: UInt64) throws {
        var rng = SplitMix64(seed: 31_000 + seed)
        let alphabet: [String] = ["a", "Z", "7", "\"", "\\", "/", "\n", "\t", "\u{0}", "\u{1f}", "\u{7f}", "é", "\u{2028}", "🎓", " "]
        func text() -> String { (0..<Int.random(in: 0...12, using: &rng)).map { _ in alphabet.randomElement(using: &rng)! }.joined() }
        let numbers: [Double] = [1, 0, 0.5, 1e-7, 0.1 + 0.2, 1.0 / 3, .leastNonzeroMagnitude, 0.9999999999999999, 123_456_789]
        let served = (0..<Int.random(in: 0...40, using: &rng)).map { i in
            ServedCard(position: i + 1, row: Int.random(in: 0...100_000, using: &rng), cardID: text(),
                       band: [nil, .nearby, .slightlyBeyond, .discovery].randomElement(using: &rng)!,
                       isProbe: Bool.random(using: &rng), propensity: numbers.randomElement(using: &rng)!,
                       predictedMatch: Bool.random(using: &rng) ? numbers.randomElement(using: &rng)! : Double.random(in: 0...1, using: &rng),
                       action: [nil, .like, .dislike].randomElement(using: &rng)!)
        }
        let snapshot = SessionSnapshot(
            formatVersion: 2, studentID: text(), profile: Fixtures.bostonStudent, catalogCount: 10,
            catalogFingerprint: Bool.random(using: &rng) ? text() : nil, configurationDigest: text(), served: served,
            checkpoint: nil, events: [.swipe(Swipe(swipeID: text(), cardID: text(), action: .like, timestamp: 3))],
            generator: SplitMix64(seed: seed), modelDigest: text())
        let reference = try SessionSnapshot<StudentProfile>.encoder.encode(snapshot)
        #expect(try snapshot.jsonData() == reference, "seed \(seed)")
        var rest = snapshot
        rest.served = []
        #expect(try SessionSnapshot<StudentProfile>.splice(served, into: SessionSnapshot<StudentProfile>.encoder.encode(rest),
                                                          studentID: SessionSnapshot<StudentProfile>.encoder.encode([snapshot.studentID])) == reference,
                "seed \(seed): the direct path")
    }

    @Test("an encoding that does not end as expected is left to JSONEncoder")
    func fallback() throws {
        let cards = [ServedCard(position: 1, row: 0, cardID: "x", band: nil, isProbe: false, propensity: 1, predictedMatch: 0.5, action: nil)]
        #expect(try SessionSnapshot<StudentProfile>.splice(cards, into: Data(#"{"served":[]}"#.utf8), studentID: Data(#"["a"]"#.utf8)) == nil)
        #expect(try SessionSnapshot<StudentProfile>.splice(cards, into: Data(#","served":[],"studentID":"b"}"#.utf8), studentID: Data(#"["a"]"#.utf8)) == nil)
        #expect(try SessionSnapshot<StudentProfile>.splice(cards, into: Data(#"{"a":1,"served":[],"studentID":"a"}"#.utf8), studentID: Data(#"["a"]"#.utf8))
                == Data(#"{"a":1,"served":[{"card_id":"x","is_probe":false,"position":1,"predicted_match":0.5,"propensity":1,"row":0}],"studentID":"a"}"#.utf8))
    }
}
