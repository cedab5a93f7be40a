// Deck latency of the candidate index against the full scan (issue #30, part 2), side by side
// on the same generated restaurants-schema catalogs (Benchmarks/Scale's generator) and the
// same students, seeds and swipes: the `index` engine (a `CandidateIndex`, the default from
// 50,000 items) and the `scan` engine (threshold raised). Per size and path it reports the
// first deck of a student whose profile is already resolved (the engine's student cache), a
// deck after 10 swipes and after 40, p50 and p99 over the sessions, and checks that both paths
// deal the same decks. A plain executable, built against a release build of the library:
//
//   swift run -c release --package-path Benchmarks swiperank-retrieval 5 6   # exponents; 40 sessions
import Foundation
import SwipeRank
import SwipeRankEvaluation
import SwipeRankNumerics
import Timing



let arguments = CommandLine.arguments.dropFirst().compactMap { Int($0) }
let exponents = arguments.isEmpty ? [5, 6] : arguments
let sessions = Int(ProcessInfo.processInfo.environment["SESSIONS"] ?? "") ?? 40
print("path   items     build s  first deck p50/p99 ms  after 10 p50/p99 ms  after 40 p50/p99 ms")
for exponent in exponents {
    let n = Int(pow(10, Double(exponent)))
    let catalog = try SyntheticCatalog.catalog(items: n, seed: 30)
    let matcher = ItemMatcher(catalog: catalog, regionAttribute: "neighborhood")
    var engines: [(String, SwipeEngine<ItemMatcher>, Double)] = []
    var scan: SwipeEngine<ItemMatcher>!
    let scanBuild = milliseconds { scan = SwipeEngine(matcher: matcher, candidateIndexThreshold: .max) }
    var index: SwipeEngine<ItemMatcher>!
    let indexBuild = milliseconds { index = SwipeEngine(matcher: matcher) }
    precondition(index.hasCandidateIndex)
    engines = [("index", index, indexBuild), ("scan", scan, scanBuild)]
    // Students at the homes of seeded items, 25 miles preferred; every 4th without a home.
    var rng = SplitMix64(seed: 30 &+ UInt64(exponent))
    let profiles = (0..<sessions).map { s -> ItemProfile in
        let home = catalog.locations[Int(rng.next() % UInt64(n))]!
        return s % 4 == 3 ? ItemProfile(preferences: ["price_level": -0.5])
            : ItemProfile(home: home, maxDistanceMiles: 25, preferences: ["price_level": -0.5])
    }
    var decks: [String: [[String]]] = [:]
    for (path, engine, build) in engines {
        var first: [Double] = [], after10: [Double] = [], after40: [Double] = []
        for (s, profile) in profiles.enumerated() {
            _ = try engine.resolvedStudent(profile)   // resolved before timing: the deck alone
            var session = try engine.session(studentID: "s\(s)", profile: profile, seed: UInt64(s))
            var deck: RecommendationResponse!
            first.append(milliseconds { deck = session.recommendations(count: 10) })
            var all = [deck.recommendations.map(\.item.id)]
            var done = 0
            var cards = deck.recommendations
            while done < 40 {
                for card in cards where done < 40 {
                    _ = try session.recordSwipe(Swipe(swipeID: "w\(done)", cardID: card.item.id,
                                                      action: card.matchScore > 0.5 ? .like : .dislike, timestamp: Int64(done)))
                    done += 1
                }
                var next: RecommendationResponse!
                let t = milliseconds { next = session.recommendations(count: 10) }
                if done == 10 { after10.append(t) }
                if done == 40 { after40.append(t) }
                cards = next.recommendations
                all.append(cards.map(\.item.id))
            }
            decks[path, default: []].append(contentsOf: all)
        }
        print(path.padding(toLength: 6, withPad: " ", startingAt: 0) + String(format: "%-9d %7.2f %9.2f / %-9.2f %8.2f / %-9.2f %8.2f / %-9.2f",
              n, build / 1e3, percentile(first, 0.5), percentile(first, 0.99), percentile(after10, 0.5), percentile(after10, 0.99),
              percentile(after40, 0.5), percentile(after40, 0.99)))
    }
    precondition(decks["index"] == decks["scan"], "the index and the scan dealt different decks at \(n) items")
    print("       same decks on both paths (\(decks["index"]!.count) decks)")
}
