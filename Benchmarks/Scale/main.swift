// The scale run of issue #30: for catalogs of 10⁴, 10⁵ and 10⁶ items (10⁷ with
// `--max-exponent 7`), generated with the restaurants schema from a seed, it measures
//
//   - startup: parsing the CSV text and building the catalog and engine (wall clock, one run);
//   - memory per live session after 40 swipes: the allocator's bytes in use before and after
//     building S sessions (different students: homes spread over the catalog's area), minus
//     what the engine's student cache holds (reported on its own, bounded by its budget);
//   - deck latency in-process: `recommendations(count: 10)` for a new student (the student
//     resolved on the way: a cache miss), for the same student's second deck (cached), and
//     after 40 swipes — p50 and p99 over the sessions.
//   (`new student` is the session's creation, which resolves the profile, plus its first deck.)
//
// It prints a table and writes the numbers as JSON (`--output`, default
// Benchmarks/results/scale.json when run from the repository root): the docs quote that file.
//
//   swift run -c release --package-path Benchmarks swiperank-scale --output Benchmarks/results/scale.json
import Foundation
import MallocInfo
import SwipeRank
import SwipeRankEvaluation
import SwipeRankNumerics
import Timing

struct Options {
    var minExponent = 4
    var maxExponent = 6
    var sessions = 40
    var output: String? = "Benchmarks/results/scale.json"
    var seed: UInt64 = 30

    init(_ arguments: [String]) {
        var i = 1
        func value() -> String {
            i += 1
            guard i < arguments.count else { fatalError("\(arguments[i - 1]) needs a value") }
            return arguments[i]
        }
        while i < arguments.count {
            switch arguments[i] {
            case "--min-exponent": minExponent = Int(value())!
            case "--max-exponent": maxExponent = Int(value())!
            case "--sessions": sessions = Int(value())!
            case "--output": output = value()
            case "--no-output": output = nil
            case "--seed": seed = UInt64(value())!
            default: fatalError("unknown argument \(arguments[i]) (--min-exponent N, --max-exponent N, --sessions S, --output FILE, --no-output, --seed N)")
            }
            i += 1
        }
    }
}



struct Result: Codable {
    var items: Int
    var featureColumns: Int
    var featureMatrixBytes: Int
    var startupSeconds: Double
    var sessions: Int
    var sessionBytes: Int
    var studentCacheBytes: Int
    var newStudentDeckP50Ms: Double
    var newStudentDeckP99Ms: Double
    var cachedDeckP50Ms: Double
    var cachedDeckP99Ms: Double
    var deckAfter40P50Ms: Double
    var deckAfter40P99Ms: Double

    enum CodingKeys: String, CodingKey {
        case items, featureColumns = "feature_columns", featureMatrixBytes = "feature_matrix_bytes", startupSeconds = "startup_seconds"
        case sessions, sessionBytes = "session_bytes_after_40_swipes", studentCacheBytes = "student_cache_bytes"
        case newStudentDeckP50Ms = "new_student_deck_p50_ms", newStudentDeckP99Ms = "new_student_deck_p99_ms"
        case cachedDeckP50Ms = "cached_deck_p50_ms", cachedDeckP99Ms = "cached_deck_p99_ms"
        case deckAfter40P50Ms = "deck_after_40_swipes_p50_ms", deckAfter40P99Ms = "deck_after_40_swipes_p99_ms"
    }
}

let options = Options(CommandLine.arguments)
let schema = SyntheticCatalog.schema
var results: [Result] = []
print("items      d  startup s  session KiB  cache MiB  new deck p50/p99 ms  cached p50/p99 ms  after 40 p50/p99 ms")
for exponent in options.minExponent...options.maxExponent {
    let n = Int(pow(10, Double(exponent)))
    let text = SyntheticCatalog.csv(items: n, seed: options.seed)
    var engine: SwipeEngine<ItemMatcher>!
    let startup = try seconds {
        let catalog = try Catalog(table: CSVTable(text: text, source: "scale-\(n).csv"), schema: schema)
        engine = SwipeEngine(matcher: ItemMatcher(catalog: catalog, regionAttribute: "neighborhood"))
    }
    let catalog = engine.matcher.catalog
    // Students at the homes of seeded items (so every band has cards), 25 miles preferred.
    var rng = SplitMix64(seed: options.seed &+ UInt64(exponent))
    let profiles = (0..<options.sessions).map { _ -> ItemProfile in
        let home = catalog.locations[Int(rng.next() % UInt64(n))]!
        return ItemProfile(home: home, maxDistanceMiles: 25, preferences: ["price_level": -0.5])
    }
    var newDeck: [Double] = [], cachedDeck: [Double] = [], after40: [Double] = []
    let before = Int(swiperank_heap_bytes_in_use())
    var sessions: [SwipeSession<ItemMatcher>] = []
    for (s, profile) in profiles.enumerated() {
        // A new student: the session (resolving the profile: distances and terms over every
        // item) and its first deck.
        var session: SwipeSession<ItemMatcher>!
        var deck: RecommendationResponse!
        newDeck.append(try seconds {
            session = try engine.session(studentID: "s\(s)", profile: profile, seed: UInt64(s))
            deck = session.recommendations(count: 10)
        } * 1e3)
        var done = 0
        var cards = deck.recommendations
        while done < 40 {
            for card in cards where done < 40 {
                _ = try session.recordSwipe(Swipe(swipeID: "w\(done)", cardID: card.item.id,
                                                  action: card.matchScore > 0.5 ? .like : .dislike, timestamp: Int64(done)))
                done += 1
            }
            if done < 40 {
                var next: RecommendationResponse!
                let t = seconds { next = session.recommendations(count: 10) }
                if done == 10 { cachedDeck.append(t * 1e3) }
                cards = next.recommendations
            }
        }
        after40.append(seconds { blackHole(session.recommendations(count: 10)) } * 1e3)
        sessions.append(session)
    }
    let after = Int(swiperank_heap_bytes_in_use())
    let cacheBytes = engine.cachedStudentBytes
    let perSession = (after - before - cacheBytes) / sessions.count
    let result = Result(items: n, featureColumns: catalog.dimension, featureMatrixBytes: n * catalog.dimension * 4,
                        startupSeconds: startup, sessions: sessions.count, sessionBytes: perSession, studentCacheBytes: cacheBytes,
                        newStudentDeckP50Ms: percentile(newDeck, 0.5), newStudentDeckP99Ms: percentile(newDeck, 0.99),
                        cachedDeckP50Ms: percentile(cachedDeck, 0.5), cachedDeckP99Ms: percentile(cachedDeck, 0.99),
                        deckAfter40P50Ms: percentile(after40, 0.5), deckAfter40P99Ms: percentile(after40, 0.99))
    results.append(result)
    print(String(format: "%-9d %2d %9.2f %12.1f %10.1f %9.2f / %-8.2f %7.2f / %-8.2f %7.2f / %-8.2f", n, catalog.dimension, startup,
                 Double(perSession) / 1024, Double(cacheBytes) / 1048576, result.newStudentDeckP50Ms, result.newStudentDeckP99Ms,
                 result.cachedDeckP50Ms, result.cachedDeckP99Ms, result.deckAfter40P50Ms, result.deckAfter40P99Ms))
    withExtendedLifetime(sessions) {}
}
if let output = options.output {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
    struct File: Codable { let command: String; let sessions: Int; let seed: UInt64; let results: [Result] }
    let file = File(command: "swift run -c release --package-path Benchmarks swiperank-scale", sessions: options.sessions, seed: options.seed,
                    results: results)
    try FileManager.default.createDirectory(atPath: (output as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
    try encoder.encode(file).write(to: URL(fileURLWithPath: output))
    print("wrote \(output)")
}

@inline(never) func blackHole<T>(_ value: T) { withExtendedLifetime(value) {} }
