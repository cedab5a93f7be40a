import Foundation
import SwipeRankColleges
import Testing
import SwipeRank
import SwipeRankNumerics

enum SessionFixtures {
    static let engine = SwipeEngine(matcher: Fixtures.matcher)

    /// Serves and swipes `count` cards, liking the ones whose id hashes even (deterministic).
    static func swipeThrough(_ session: inout SwipeSession<SchoolMatcher>, count: Int, batch: Int = 10, start: Int = 0) throws {
        var done = 0
        while done < count {
            let cards = session.recommendations(count: min(batch, count - done)).recommendations
            for card in cards {
                let action: SwipeAction = Int(card.item.id)! % 2 == 0 ? .like : .dislike
                _ = try session.recordSwipe(Swipe(swipeID: "s\(start + done)", cardID: card.item.id, action: action,
                                                  timestamp: Int64(start + done)))
                done += 1
            }
        }
    }
}

@Suite("Learning session")
struct SessionTests {
    let engine = SessionFixtures.engine

    @Test("phases change at 10/11 and 30/31 with the documented progress")
    func phases() throws {
        var session = try engine.session(studentID: "p", profile: Fixtures.bostonStudent, seed: 1)
        #expect(session.learningState.phase == .discovery && session.learningState.progress == 0)
        try SessionFixtures.swipeThrough(&session, count: 4)
        #expect(session.learningState.progress == 0.4)
        try SessionFixtures.swipeThrough(&session, count: 6, start: 4)
        #expect(session.learningState.phase == .discovery && session.learningState.progress == 1)
        try SessionFixtures.swipeThrough(&session, count: 1, start: 10)
        #expect(session.learningState.phase == .refinement && session.learningState.progress == 0.05)
        try SessionFixtures.swipeThrough(&session, count: 19, start: 11)
        #expect(session.learningState.phase == .refinement && session.learningState.progress == 1)
        try SessionFixtures.swipeThrough(&session, count: 1, start: 30)
        #expect(session.learningState.phase == .stable && session.totalSwipes == 31)
    }

    @Test("probes sit at positions 4, 8, 12, … whatever the batch sizes", arguments: [[1], [3, 5, 2], [10, 10], [7, 1, 9, 4, 6]])
    func probePositions(batches: [Int]) throws {
        var session = try engine.session(studentID: "p", profile: Fixtures.bostonStudent, seed: 2)
        var flags: [Bool] = []
        for _ in 0..<3 { for size in batches { flags += session.recommendations(count: size).recommendations.map(\.isProbe) } }
        #expect(flags == (1...flags.count).map { $0 % 4 == 0 })
        #expect(session.served.map(\.isProbe) == flags)
        // Probes carry their draw probability; other cards are deterministic.
        for card in session.served {
            if card.isProbe { #expect(card.propensity > 0 && card.propensity <= 1) } else { #expect(card.propensity == 1) }
        }
        // No card is served twice.
        #expect(Set(session.served.map(\.row)).count == session.served.count)
    }

    @Test("largest-remainder quotas for counts 1–50")
    func quotas() {
        let mixer = GeographicMixer()
        #expect(mixer.apportion(10) == [5, 3, 2] && mixer.apportion(20) == [10, 6, 4])
        #expect(mixer.apportion(1) == [1, 0, 0] && mixer.apportion(3) == [1, 1, 1])
        for n in 1...50 {
            let plan = mixer.plan(count: n, served: [0, 0, 0])
            let counts = GeoBand.allCases.map { band in plan.filter { $0 == band }.count }
            #expect(counts == mixer.apportion(n), "count \(n)")
            let exact = [0.5, 0.3, 0.2].map { $0 * Double(n) }
            for b in 0..<3 { #expect(abs(Double(counts[b]) - exact[b]) < 1, "count \(n) band \(b)") }
        }
    }

    @Test("across batches the running mix stays within one card of 50/30/20", arguments: 0..<20)
    func runningMix(seed: UInt64) {
        var rng = SplitMix64(seed: seed)
        let mixer = GeographicMixer()
        var served = [0, 0, 0]
        for _ in 0..<30 {
            let plan = mixer.plan(count: Int.random(in: 1...50, using: &rng), served: served)
            for band in plan {
                served[GeoBand.allCases.firstIndex(of: band)!] += 1
                // Within one card after every single card, not only at batch ends.
                let total = Double(served.reduce(0, +))
                for b in 0..<3 { #expect(abs(Double(served[b]) - mixer.shares[b] * total) <= 1, "seed \(seed)") }
            }
        }
    }

    @Test("a session serves the planned bands, and real distances match them")
    func bandsInSession() throws {
        var session = try engine.session(studentID: "b", profile: Fixtures.bostonStudent, seed: 3)
        _ = session.recommendations(count: 10)
        _ = session.recommendations(count: 20)
        #expect(session.servedPerBand == [15, 9, 6])
        let p = Fixtures.bostonStudent.maxDistanceMiles
        for card in session.served {
            let d = Double(session.student.distances[card.row])
            switch card.band {
            case .nearby?: #expect(d <= p)
            case .slightlyBeyond?: #expect(d > p && d <= 1.5 * p)
            case .discovery?: #expect(d > 1.5 * p)
            case nil: Issue.record("a student with a home has bands")
            }
        }
    }

    @Test("an exhausted band is backfilled from the next one")
    func backfill() throws {
        // Fairbanks with a 60-mile range: one school nearby, none slightly beyond.
        let profile = StudentProfile(home: try GeoPoint(latitude: 64.84, longitude: -147.72), maxDistanceMiles: 60)
        var session = try engine.session(studentID: "ak", profile: profile, seed: 4)
        let cards = session.recommendations(count: 10).recommendations
        #expect(cards.count == 10)
        let bands = session.served.map(\.band)
        let nearbyAvailable = session.student.distances.filter { Double($0) <= 60 }.count
        #expect(bands.filter { $0 == .nearby }.count == nearbyAvailable)
        #expect(bands.allSatisfy { $0 != nil })
    }

    @Test("without a home there are no bands")
    func noHome() throws {
        var session = try engine.session(studentID: "n", profile: StudentProfile(intendedMajors: ["History"]), seed: 5)
        let cards = session.recommendations(count: 12).recommendations
        #expect(cards.count == 12 && cards.allSatisfy { $0.distance == nil })
        #expect(session.served.allSatisfy { $0.band == nil })
        #expect(session.servedPerBand == [0, 0, 0])
    }

    @Test("bad swipes are rejected with a typed reason and change nothing")
    func rejections() throws {
        var session = try engine.session(studentID: "r", profile: Fixtures.bostonStudent, seed: 6)
        let cards = session.recommendations(count: 2).recommendations
        _ = try session.recordSwipe(Swipe(swipeID: "a", cardID: cards[0].item.id, action: .like, timestamp: 1))
        let before = session.snapshot()
        let unserved = Fixtures.schools.catalog.ids.first { id in !session.served.contains { $0.cardID == id } }!
        for (swipe, kind) in [
            (Swipe(swipeID: "b", cardID: "nope", action: .like, timestamp: 2), SwipeError.Kind.unknownCard),
            (Swipe(swipeID: "c", cardID: unserved, action: .like, timestamp: 2), .notServed),
            (Swipe(swipeID: "d", cardID: cards[0].item.id, action: .dislike, timestamp: 2), .alreadySwiped),
        ] {
            do {
                _ = try session.recordSwipe(swipe)
                Issue.record("accepted \(swipe)")
            } catch {
                #expect(error.kind == kind, "\(error)")
                #expect(error.description.contains(swipe.swipeID))
            }
            #expect(session.snapshot() == before)
        }
        // Replaying a swipe id is a no-op, even with other contents.
        let replay = try session.recordSwipe(Swipe(swipeID: "a", cardID: cards[1].item.id, action: .dislike, timestamp: 9))
        #expect(replay.outcome == .duplicate && session.snapshot() == before)
    }

    @Test("sync: the same swipes twice give an identical state; any order equals in-order recording", arguments: 0..<5)
    func sync(seed: UInt64) throws {
        var rng = SplitMix64(seed: seed)
        var reference = try engine.session(studentID: "y", profile: Fixtures.bostonStudent, seed: seed)
        let cards = reference.recommendations(count: 40).recommendations
        var offline = reference
        let swipes = cards.enumerated().map { i, card in
            Swipe(swipeID: "w\(i)", cardID: card.item.id, action: Bool.random(using: &rng) ? .like : .dislike,
                  timestamp: Int64(100 + i))
        }
        for swipe in swipes { _ = try reference.recordSwipe(swipe) }
        let results = offline.sync(swipes.shuffled(using: &rng))
        #expect(results.allSatisfy { if case .success(let r) = $0 { r.outcome == .recorded } else { false } })
        #expect(offline.snapshot() == reference.snapshot(), "seed \(seed)")
        let again = offline.sync(swipes.shuffled(using: &rng))
        #expect(again.allSatisfy { if case .success(let r) = $0 { r.outcome == .duplicate } else { false } })
        #expect(offline.snapshot() == reference.snapshot())
        // Bad swipes in a sync are reported per swipe and skipped.
        let mixed = offline.sync([Swipe(swipeID: "x", cardID: "nope", action: .like, timestamp: 1)])
        if case .failure(let error) = mixed[0] { #expect(error.kind == .unknownCard) } else { Issue.record("accepted") }
    }

    @Test("snapshot → JSON → restore gives identical next recommendations and learning")
    func snapshotRestore() throws {
        var session = try engine.session(studentID: "z", profile: Fixtures.bostonStudent, seed: 9)
        try SessionFixtures.swipeThrough(&session, count: 33, batch: 7)
        _ = session.recommendations(count: 3)       // served but not swiped yet
        let data = try JSONEncoder().encode(session.snapshot())
        var restored = try engine.restore(JSONDecoder().decode(SessionSnapshot<StudentProfile>.self, from: data))
        #expect(restored.snapshot() == session.snapshot())
        let next = session.recommendations(count: 12), again = restored.recommendations(count: 12)
        #expect(next == again)
        try SessionFixtures.swipeThrough(&session, count: 5, start: 100)
        try SessionFixtures.swipeThrough(&restored, count: 5, start: 100)
        #expect(session.snapshot() == restored.snapshot())
        // A snapshot from another format version or catalog is refused.
        var wrong = session.snapshot()
        wrong.formatVersion = 3
        #expect(throws: DataError.self) { try engine.restore(wrong) }
        wrong = session.snapshot()
        wrong.catalogCount = 10
        #expect(throws: DataError.self) { try engine.restore(wrong) }
    }

    @Test("sessions run concurrently from many tasks and match sequential runs")
    func concurrency() async throws {
        let engine = self.engine
        func run(_ i: Int) throws -> SessionSnapshot<StudentProfile> {
            var profile = Fixtures.bostonStudent
            profile.maxDistanceMiles = Double(100 + 50 * i)
            var session = try engine.session(studentID: "c\(i)", profile: profile, seed: UInt64(i))
            try SessionFixtures.swipeThrough(&session, count: 15, batch: 5)
            return session.snapshot()
        }
        let sequential = try (0..<8).map(run)
        let concurrent = try await withThrowingTaskGroup(of: (Int, SessionSnapshot<StudentProfile>).self) { group in
            for i in 0..<8 { group.addTask { (i, try run(i)) } }
            var out = [SessionSnapshot<StudentProfile>?](repeating: nil, count: 8)
            for try await (i, snapshot) in group { out[i] = snapshot }
            return out.map { $0! }
        }
        #expect(concurrent == sequential)
    }
}

@Suite("Feedback")
struct FeedbackTests {
    /// A session whose every probe and pattern break asks (no cooldown).
    func session(cooldown: Int = 0) throws -> SwipeSession<SchoolMatcher> {
        var configuration = EngineConfiguration()
        configuration.feedbackCooldown = [.discovery: cooldown, .refinement: cooldown, .stable: cooldown]
        return try SwipeEngine(matcher: Fixtures.matcher, configuration: configuration)
            .session(studentID: "f", profile: Fixtures.bostonStudent, seed: 11)
    }

    @Test("probe swipes ask; ordinary swipes that match the prediction do not; options ≤ 5")
    func probeTrigger() throws {
        var s = try session()
        let cards = s.recommendations(count: 8).recommendations
        for (i, card) in cards.enumerated() {
            let served = s.served[i]
            // Swipe with the prediction: like what is predicted ≥ 0.5.
            let action: SwipeAction = served.predictedMatch >= 0.5 ? .like : .dislike
            let result = try s.recordSwipe(Swipe(swipeID: "\(i)", cardID: card.item.id, action: action, timestamp: Int64(i)))
            if card.isProbe {
                #expect(result.feedback?.reason == .probe && result.feedback?.cardID == card.item.id)
            } else {
                #expect(result.feedback == nil, "card \(i) predicted \(served.predictedMatch)")
            }
            #expect((result.feedback?.options.count ?? 0) <= 5)
        }
    }

    @Test("a dislike of a confident like is a pattern break; the cooldown suppresses a second ask")
    func patternBreakAndCooldown() throws {
        var s = try session(cooldown: 3)
        let cards = s.recommendations(count: 3).recommendations
        #expect(s.served[0].predictedMatch >= 0.75 && s.served[1].predictedMatch >= 0.75)
        let first = try s.recordSwipe(Swipe(swipeID: "1", cardID: cards[0].item.id, action: .dislike, timestamp: 1))
        #expect(first.feedback?.reason == .patternBreak)
        let second = try s.recordSwipe(Swipe(swipeID: "2", cardID: cards[1].item.id, action: .dislike, timestamp: 2))
        #expect(second.feedback == nil, "within the cooldown of 3 swipes")
    }

    @Test("\"Too expensive\" lowers the scores of expensive schools in the next batch")
    func tooExpensive() throws {
        var s = try session()
        _ = s.recommendations(count: 30)
        let schools = Fixtures.schools
        // A card over 80% of the $32k budget that will ask when disliked (a probe or a confident like).
        let card = try #require(s.served.first { card in
            (schools.estimatedCost(row: card.row, homeState: "MA") ?? 0) > 0.8 * 32_000
                && (card.isProbe || card.predictedMatch >= 0.75)
        })
        let prompt = try #require(try s.recordSwipe(Swipe(swipeID: "x", cardID: card.cardID, action: .dislike, timestamp: 1)).feedback)
        func meanScore(_ session: SwipeSession<SchoolMatcher>, expensive: Bool) -> Float {
            var scores: [Float] = []
            schools.catalog.scores(weights: session.weights, terms: session.student.terms, into: &scores)
            let rows = (0..<schools.catalog.count).filter { row in
                guard let cost = schools.estimatedCost(row: row, homeState: "MA") else { return false }
                return expensive ? cost > 45_000 : cost < 15_000
            }
            return rows.map { scores[$0] }.reduce(0, +) / Float(rows.count)
        }
        if !prompt.options.contains(.tooExpensive) {
            Issue.record("expected \"Too expensive\" among \(prompt.options)")
            return
        }
        let beforeExpensive = meanScore(s, expensive: true), beforeCheap = meanScore(s, expensive: false)
        var answered = s
        try answered.submitFeedback(cardID: prompt.cardID, options: [.tooExpensive])
        #expect(meanScore(answered, expensive: true) < beforeExpensive - 0.2)
        #expect(meanScore(answered, expensive: true) - meanScore(answered, expensive: false)
                < beforeExpensive - beforeCheap - 0.2)
        // The next batch reflects it: cheaper schools than without the answer.
        func meanCost(_ session: inout SwipeSession<SchoolMatcher>) -> Double {
            let costs = session.recommendations(count: 20).recommendations.compactMap { card in
                schools.estimatedCost(row: schools.catalog.row(of: card.item.id)!, homeState: "MA")
            }
            return costs.reduce(0, +) / Double(costs.count)
        }
        var plain = s
        #expect(meanCost(&answered) < meanCost(&plain) - 1000)
        // The prompt is closed now; answering again, or with an option not offered, is refused.
        #expect(throws: SwipeError.self) { try answered.submitFeedback(cardID: prompt.cardID, options: [.tooExpensive]) }
        let notOffered = FeedbackOption.allCases.first { !prompt.options.contains($0) }!
        #expect(throws: SwipeError.self) { try s.submitFeedback(cardID: prompt.cardID, options: [notOffered]) }
    }
}
