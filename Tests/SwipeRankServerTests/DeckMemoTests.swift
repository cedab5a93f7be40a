import Foundation
import SwipeRank
import SwipeRankNumerics
@testable import SwipeRankServer
import SwipeRankStore
import Testing

/// The deck re-read memo (`DeckMemo`) only saves work: a service with it answers every request
/// of a seeded random session byte for byte as one that re-computes every read.
@Suite("Deck re-read memo")
struct DeckMemoTests {
    /// One step of a session, drawn from a seeded generator; ids are resolved against the
    /// cards the service answered, which both services answer identically (or the test fails).
    enum Step {
        case deck(count: Int, fields: String, compressed: Bool)
        case preload(count: Int)
        case home
        /// The last read again (a pull-to-refresh, a retry).
        case again
        case swipeOpen(like: Bool)
        case saveOpen
        case organic(like: Bool)
        case patchProfile(budget: Int)

        var isAgain: Bool { if case .again = self { true } else { false } }
    }

    static func steps(seed: UInt64, count: Int) -> [Step] {
        var rng = SplitMix64(seed: seed)
        return (0..<count).map { _ in
            switch rng.next() % 14 {
            case 12, 13: .again
            case 0, 1, 2, 3: .deck(count: [5, 10, 10, 10][Int(rng.next() % 4)], fields: rng.next() % 2 == 0 ? "minimal" : "full",
                                   compressed: rng.next() % 4 == 0)
            case 4: .preload(count: [5, 20][Int(rng.next() % 2)])
            case 5: .home
            case 6, 7, 8: .swipeOpen(like: rng.next() % 2 == 0)
            case 9: .saveOpen
            case 10: .organic(like: rng.next() % 2 == 0)
            default: .patchProfile(budget: 20_000 + Int(rng.next() % 40) * 1_000)
            }
        }
    }

    /// Every answer of the session in order, and how many deck requests the memo answered.
    static func run(_ steps: [Step], memo: Bool) async throws -> (bodies: [Data], hits: Int) {
        let recorder = Recorder()
        let harness = Harness(configure: { $0.service.memoizeDeckRereads = memo })
        try await harness.runWithParts { c, parts in
            let student = "memo"
            try await c.createStudent(student)
            var open: [String] = []
            var swipes = 0
            var lastRead: Step?
            let catalog = Fixtures.engine.matcher.catalog
            for (i, step) in steps.enumerated() {
                let reply: Reply
                let step = step.isAgain ? lastRead ?? step : step
                switch step {
                case let .deck(count, fields, compressed):
                    reply = try await c.call(.get, "/student/recommendations?count=\(count)&fields=\(fields)&compressed=\(compressed)",
                                             student: student)
                    open = Self.ids(reply)
                case let .preload(count):
                    reply = try await c.call(.get, "/student/recommendations/preload?count=\(count)&fields=minimal", student: student)
                    open = Self.ids(reply)
                case .home:
                    reply = try await c.call(.get, "/student/home?fields=minimal", student: student)
                case .again:
                    continue  // nothing read yet
                case let .swipeOpen(like):
                    guard let card = open.first else { continue }
                    open.removeFirst()
                    swipes += 1
                    reply = try await c.swipe(student, id: "s\(swipes)", school: card, like: like, at: Int64(i))
                case .saveOpen:
                    guard let card = open.last else { continue }
                    open.removeLast()
                    reply = try await c.call(.post, "/student/schools/\(card)/save", student: student)
                case let .organic(like):
                    // An item from the catalog's far end: organic unless it was served.
                    let card = catalog.ids[catalog.count - 1 - i]
                    swipes += 1
                    reply = try await c.swipe(student, id: "s\(swipes)", school: card, like: like, at: Int64(i))
                case let .patchProfile(budget):
                    reply = try await c.call(.patch, "/student/profile", student: student, body: #"{"annual_budget": \#(budget)}"#)
                }
                if case .deck = step { lastRead = step } else if case .preload = step { lastRead = step } else if case .home = step { lastRead = step }
                #expect(reply.status.code < 300, "step \(i) \(step): \(String(decoding: reply.body, as: UTF8.self))")
                recorder.append(reply.body)
            }
            recorder.hits = parts.groups.students.deckMemoHits.load(ordering: .relaxed)
        }
        return (recorder.bodies, recorder.hits)
    }

    static func ids(_ reply: Reply) -> [String] {
        // Minimal cards carry `school_id`, full ones the school itself.
        (reply.json["recommendations"] as? [[String: Any]] ?? []).compactMap {
            $0["school_id"] as? String ?? ($0["school"] as? [String: Any])?["id"] as? String
        }
    }

    final class Recorder: @unchecked Sendable {
        var bodies: [Data] = []
        var hits = 0
        func append(_ body: Data) { bodies.append(body) }
    }

    @Test("every answer is the same bytes with the memo as without it", arguments: [1, 2, 3] as [UInt64])
    func sameBytes(seed: UInt64) async throws {
        let steps = Self.steps(seed: seed, count: 60)
        let with = try await Self.run(steps, memo: true)
        let without = try await Self.run(steps, memo: false)
        #expect(with.bodies.count == without.bodies.count)
        for (i, (a, b)) in zip(with.bodies, without.bodies).enumerated() {
            #expect(a == b, "step \(i) \(steps[i]) differs:\n\(String(decoding: a, as: UTF8.self))\n\(String(decoding: b, as: UTF8.self))")
        }
        // The comparison only means something if the memo answered some of them.
        #expect(with.hits > 0)
        #expect(without.hits == 0)
    }

    @Test("a re-read is answered from the memo until the student changes")
    func hitsAndInvalidation() async throws {
        try await Harness().runWithParts { c, parts in
            try await c.createStudent("m")
            let service = parts.groups.students
            let hits = { service.deckMemoHits.load(ordering: .relaxed) }
            let first = try await c.call(.get, "/student/recommendations?count=5", student: "m")  // deals: not kept
            #expect(first.json["repeated"] as? Int == 0)
            let reread = try await c.call(.get, "/student/recommendations?count=5", student: "m")  // re-read: kept
            #expect(reread.json["repeated"] as? Int == 5)
            #expect(hits() == 0)
            let again = try await c.call(.get, "/student/recommendations?count=5", student: "m")
            #expect(hits() == 1)
            #expect(again.body == reread.body)
            // Other parameters are another answer.
            _ = try await c.call(.get, "/student/recommendations?count=5&fields=minimal", student: "m")
            #expect(hits() == 1)
            // A swipe moves the student: the next read re-scores (and deals one card).
            let card = Self.ids(reread)[0]
            #expect(try await c.swipe("m", id: "w1", school: card, like: true).status == .created)
            let after = try await c.call(.get, "/student/recommendations?count=5&fields=minimal", student: "m")
            #expect(hits() == 1)
            #expect(after.json["repeated"] as? Int == 4)
            #expect(!Self.ids(after).contains(card))
        }
    }
}
