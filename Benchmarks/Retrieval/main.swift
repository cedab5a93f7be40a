// Deck latency of the candidate index against the full scan (issue #30, part 2), side by side
// on the same generated restaurants-schema catalogs (Benchmarks/Scale's generator) and the
// same students, seeds and swipes: the `index` engine (a `CandidateIndex`, the default from
// 50,000 items) and the `scan` engine (threshold raised). Per size and path it reports the
// first deck of a student whose profile is already resolved (the engine's student cache), a
// deck after 10 swipes and after 40, p50 and p99 over the sessions, and checks that both paths
// deal the same decks. A plain executable, built against a release build of the library:
//
//   bash Benchmarks/Retrieval/run.sh 5 6       # exponents; 40 sessions
import Foundation
import SwipeRank
import SwipeRankNumerics

/// A restaurants-schema catalog of `n` items around 200 city centres spread over the
/// continental US: the same columns and value ranges as datasets/restaurants.
func catalogCSV(items n: Int, seed: UInt64) -> String {
    var rng = SplitMix64(seed: seed)
    func uniform() -> Double { Double(rng.next() >> 11) / Double(1 << 53) }
    func gauss() -> Double { (-2 * log(max(uniform(), 1e-300))).squareRoot() * cos(2 * .pi * uniform()) }
    let cities = (0..<200).map { _ in (25 + 24 * uniform(), -124 + 57 * uniform()) }
    let cuisines = ["italian", "thai", "mexican", "japanese", "indian", "american", "vegan", "french"]
    let hoods = ["Riverside", "Old Town", "Harbor", "University", "Northgate", "Eastfield", "Westbrook", "Lakeshore"]
    var text = "id,name,neighborhood,latitude,longitude,cuisine,price_level,rating,reviews,seats,outdoor\n"
    text.reserveCapacity(n * 90)
    for i in 0..<n {
        let city = cities[Int(rng.next() % 200)]
        let price = 1 + Int(rng.next() % 4)
        let rating = uniform() < 0.1 ? "" : String(format: "%.1f", min(5, max(2.5, 3.6 + 0.2 * Double(price) + 0.45 * gauss())))
        text += "r\(i),Place \(i),\(hoods[Int(rng.next() % 8)]),"
        text += String(format: "%.5f,%.5f,", min(89, max(-89, city.0 + 0.15 * gauss())), min(179, max(-179, city.1 + 0.15 * gauss())))
        text += "\(cuisines[Int(rng.next() % 8)]),\(price),\(rating),\(Int(exp(4.5 + 1.1 * gauss()))),\(12 + Int(rng.next() % 209)),"
        text += rng.next() % 2 == 0 ? "yes\n" : "no\n"
    }
    return text
}

let schemaJSON = """
{"id_column": "id", "name_column": "name", "coordinates": {"latitude": "latitude", "longitude": "longitude"},
 "text_attributes": ["neighborhood", "cuisine"], "numeric_attributes": ["price_level", "rating", "reviews", "seats"],
 "features": [
  {"column": "price_level", "kind": "numeric", "group": "cost", "missing": "reject"},
  {"column": "rating", "kind": "numeric", "group": "quality"},
  {"column": "rating", "kind": "bins", "name": "rating_band", "edges": [4.0, 4.5], "labels": ["ok", "good", "great"], "group": "quality"},
  {"column": "reviews", "kind": "numeric", "transform": "log1p", "group": "popularity"},
  {"column": "seats", "kind": "numeric", "transform": "log1p", "group": "size"},
  {"column": "cuisine", "kind": "categorical", "group": "cuisine"},
  {"column": "outdoor", "kind": "categorical", "categories": ["yes", "no"], "group": "setting", "missing": "reject"}]}
"""

func milliseconds(_ body: () throws -> Void) rethrows -> Double {
    let start = DispatchTime.now().uptimeNanoseconds
    try body()
    return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e6
}

func percentile(_ values: [Double], _ p: Double) -> Double {
    let sorted = values.sorted()
    return sorted[min(sorted.count - 1, Int((p * Double(sorted.count - 1)).rounded()))]
}

let arguments = CommandLine.arguments.dropFirst().compactMap { Int($0) }
let exponents = arguments.isEmpty ? [5, 6] : arguments
let sessions = Int(ProcessInfo.processInfo.environment["SESSIONS"] ?? "") ?? 40
let schema = try ItemSchema.decode(json: Data(schemaJSON.utf8), source: "scale schema")
print("path   items     build s  first deck p50/p99 ms  after 10 p50/p99 ms  after 40 p50/p99 ms")
for exponent in exponents {
    let n = Int(pow(10, Double(exponent)))
    let catalog = try Catalog(table: CSVTable(text: catalogCSV(items: n, seed: 30), source: "scale-\(n).csv"), schema: schema)
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
