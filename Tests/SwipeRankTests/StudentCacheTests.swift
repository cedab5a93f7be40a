import Foundation
@testable import SwipeRankColleges
import Testing
@testable import SwipeRank
import SwipeRankNumerics

/// The plain reference of a cost-bounded LRU: a list, most recent first, scanned linearly.
struct ReferenceLRU {
    var entries: [(key: Int, value: Int, cost: Int)] = []
    let capacity: Int

    mutating func get(_ key: Int) -> Int? {
        guard let i = entries.firstIndex(where: { $0.key == key }) else { return nil }
        let entry = entries.remove(at: i)
        entries.insert(entry, at: 0)
        return entry.value
    }

    mutating func take(_ key: Int) -> Int? {
        guard let i = entries.firstIndex(where: { $0.key == key }) else { return nil }
        return entries.remove(at: i).value
    }

    mutating func put(_ key: Int, _ value: Int, cost: Int) {
        entries.removeAll { $0.key == key }
        entries.insert((key, value, cost), at: 0)
        // The least recent leave while over budget; the entry just put always stays.
        while entries.reduce(0, { $0 + $1.cost }) > capacity, entries.count > 1 { entries.removeLast() }
    }
}

@Suite("Student cache and O(swipes) sessions")
struct StudentCacheTests {
    @Test("model-based: 300 seeded sequences of get, take, put and remove agree with a linear reference",
          arguments: 0..<3)
    func lruModelBased(batch: UInt64) {
        for seed in (batch * 100)..<(batch * 100 + 100) {
            var rng = SplitMix64(seed: seed)
            let capacity = 1 + Int(rng.next() % 40)
            let cache = LRUCache<Int, Int>(capacity: capacity)
            var reference = ReferenceLRU(capacity: capacity)
            for step in 0..<300 {
                let key = Int(rng.next() % 12)
                switch rng.next() % 4 {
                case 0:
                    #expect(cache.get(key) == reference.get(key), "seed \(seed) step \(step): get \(key)")
                case 1:
                    #expect(cache.take(key) == reference.take(key), "seed \(seed) step \(step): take \(key)")
                case 2:
                    cache.remove(key)
                    _ = reference.take(key)
                default:
                    // Costs up to above the capacity: an entry bigger than the budget stays alone.
                    let cost = Int(rng.next() % UInt64(capacity + 5)), value = Int(rng.next() % 1_000)
                    cache.put(key, value, cost: cost)
                    reference.put(key, value, cost: cost)
                }
                #expect(cache.keysByRecency == reference.entries.map(\.key), "seed \(seed) step \(step): order")
                #expect(cache.totalCost == reference.entries.reduce(0) { $0 + $1.cost }, "seed \(seed) step \(step): cost")
                #expect(cache.count == reference.entries.count)
            }
        }
    }

    @Test("an entry costlier than the whole budget is kept alone, and the next put evicts it")
    func oversizedEntry() {
        let cache = LRUCache<String, Int>(capacity: 10)
        cache.put("a", 1, cost: 4)
        cache.put("b", 2, cost: 50)
        #expect(cache.keysByRecency == ["b"])
        cache.put("c", 3, cost: 1)
        #expect(cache.keysByRecency == ["c"])
        #expect(cache.totalCost == 1)
    }

    /// Serves, swipes and answers feedback for two students in turns, with the engine given.
    static func interleaved(_ engine: SwipeEngine<SchoolMatcher>, seed: UInt64) throws -> [String] {
        let profiles = [Fixtures.bostonStudent, StudentProfile(
            home: try GeoPoint(latitude: 34.05, longitude: -118.24), homeState: "CA", maxDistanceMiles: 400,
            annualBudget: 25_000, sat: 1200, intendedMajors: ["Nursing"], sizePreference: .large,
            settingPreference: .suburb, academicPriority: 0.4, earningsPriority: 0.8)]
        var sessions = try profiles.enumerated().map { try engine.session(studentID: "s\($0.offset)", profile: $0.element, seed: seed + UInt64($0.offset)) }
        var log: [String] = []
        var rng = SplitMix64(seed: seed)
        for round in 0..<6 {
            for s in sessions.indices {
                let deck = sessions[s].recommendations(count: 7)
                for card in deck.recommendations {
                    log.append("\(s):\(card.item.id):\(card.matchScore):\(card.isProbe):\(card.explanations)")
                    let liked = rng.next() % 3 == 0
                    let result = try sessions[s].recordSwipe(Swipe(swipeID: "\(s)-\(round)-\(card.item.id)", cardID: card.item.id,
                                                                   action: liked ? .like : .dislike, timestamp: Int64(round)))
                    if let prompt = result.feedback {
                        try sessions[s].submitFeedback(cardID: prompt.cardID, options: Array(prompt.options.prefix(1)))
                    }
                }
                log.append("\(s):weights:\(sessions[s].weights.features):\(sessions[s].weights.terms)")
            }
        }
        // A restore resolves the student through the same cache.
        for s in sessions.indices {
            var restored = try engine.restore(sessions[s].snapshot())
            log.append("\(s):restored:\(restored.recommendations(count: 5).recommendations.map(\.item.id))")
        }
        return log
    }

    @Test("a session whose student is evicted between every request serves, learns and restores bit for bit as one whose student stays cached",
          arguments: [UInt64(3), 11])
    func evictionChangesNothing(seed: UInt64) throws {
        // A budget of one byte keeps only the newest student: the two students evict each
        // other on every request, so each request resolves its student again.
        let thrashing = SwipeEngine(matcher: Fixtures.matcher, studentCacheBytes: 1)
        let roomy = SwipeEngine(matcher: Fixtures.matcher)
        let a = try Self.interleaved(thrashing, seed: seed), b = try Self.interleaved(roomy, seed: seed)
        #expect(a.count == b.count)
        #expect(a == b)
        #expect(thrashing.students.count == 1)
        #expect(roomy.students.count == 2)
    }

    @Test("engines derived from one (population, factors, configuration) share its student cache; a new matcher starts its own")
    func derivedEnginesShareTheCache() throws {
        let engine = SwipeEngine(matcher: Fixtures.matcher)
        _ = try engine.session(studentID: "x", profile: Fixtures.bostonStudent, seed: 1)
        let derived = engine.reconfigured { $0.probeInterval = 5 }
        #expect(derived.students === engine.students)
        #expect(derived.students.count == 1)
        let fresh = SwipeEngine(matcher: Fixtures.matcher)
        #expect(fresh.students.count == 0)
    }

    @Test("an invalid profile is rejected and never cached")
    func invalidProfileNotCached() throws {
        let engine = SwipeEngine(matcher: Fixtures.matcher)
        var profile = Fixtures.bostonStudent
        profile.intendedMajors = ["Underwater Basket Weaving Zzzz"]
        #expect(throws: DataError.self) { _ = try engine.session(studentID: "x", profile: profile, seed: 1) }
        #expect(engine.students.count == 0)
    }

    @Test("a live session holds no array of catalog length: its state after 40 swipes does not grow with the catalog")
    func sessionStateIndependentOfCatalogSize() throws {
        // The same 40 swipes on the schools and on the schools repeated 8 times (ids renamed):
        // the session's own containers (served, swipes, judged rows, indices) have the same
        // sizes, and no stored property of the session is an array of N.
        let small = SwipeEngine(matcher: Fixtures.matcher)
        var session = try small.session(studentID: "m", profile: Fixtures.bostonStudent, seed: 2)
        var done = 0
        while done < 40 {
            for card in session.recommendations(count: 10).recommendations {
                _ = try session.recordSwipe(Swipe(swipeID: "w\(done)", cardID: card.item.id, action: done % 3 == 0 ? .like : .dislike,
                                                  timestamp: Int64(done)))
                done += 1
            }
        }
        let n = small.matcher.catalog.count
        for child in Mirror(reflecting: session).children {
            let count = (child.value as? any Collection)?.count ?? 0
            #expect(count < n / 10, "stored property \(child.label ?? "?") holds \(count) elements, the catalog \(n)")
        }
    }
}
