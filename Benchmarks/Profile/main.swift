// A fixed workload for profilers (valgrind --tool=callgrind): a session serving batches of 10
// after a swipe each (ROUNDS batches, default 100, at most 229: the catalog runs out), over the
// shipped catalog; with a second argument `restore`, 100 restores of a snapshot taken after 40
// swipes; with `swipes`, 2,000 stable-phase swipes after 31 (the forgetting refactorization on
// every one), printing their median time; with `factors`, the decks of RankingBenchmarks' f = 32
// collaborative model (REPEAT=n runs its session n times, for a profiler); with `reread`, a deck
// of ten open cards read again (`deck(count:)`, median µs and a digest; `reread-unexplained` and
// `reread-brief` the same read without explanations and as brief cards); with `grades` or
// `bands`, a deck's grade-scale order statistics or band selection alone on 2,000 seeded inputs
// (median µs); with `rows`, `FeatureRows.dot` over every row of a 200,000 × 22 store in row
// order and in a permuted (block) order, as a large cached catalog's full scoring reads it
// (instructions per build under callgrind; median ms each). The default run prints the cards served, an
// FNV-1a digest of every card and propensity (a speed change that must serve the same bytes keeps
// it), and the median and 10th-percentile time of a batch in µs (wall clock: compare builds by
// interleaving runs).
import Foundation
import SwipeRank
import SwipeRankColleges
import SwipeRankNumerics

let root = URL(fileURLWithPath: CommandLine.arguments.count > 1 ? CommandLine.arguments[1] : "..")
let schools = try SchoolCatalog(schoolsPath: root.appendingPathComponent("datasets/schools.csv").path,
                                majorsPath: root.appendingPathComponent("datasets/school_majors.csv").path)
let engine = SwipeEngine(matcher: SchoolMatcher(schools: schools))
let profile = StudentProfile(home: try GeoPoint(latitude: 42.3601, longitude: -71.0589), homeState: "MA",
                             maxDistanceMiles: 250, annualBudget: 32000, sat: 1380,
                             intendedMajors: ["Computer Science", "Business Administration"])
var session = try engine.session(studentID: "p", profile: profile, seed: 1)
if CommandLine.arguments.count > 2, CommandLine.arguments[2] == "restore" {
    // 40 swipes, then 100 restores of the snapshot.
    for round in 0..<4 {
        for (i, card) in session.recommendations(count: 10).recommendations.enumerated() {
            _ = try session.recordSwipe(Swipe(swipeID: "\(round)-\(i)", cardID: card.item.id,
                                              action: Int(card.item.id)! % 3 == 0 ? .like : .dislike, timestamp: Int64(round * 10 + i)))
        }
    }
    let snapshot = session.snapshot()
    var restored = 0
    for _ in 0..<100 { restored += try engine.restore(snapshot).totalSwipes }
    print(restored)
    exit(0)
}
if CommandLine.arguments.count > 2, CommandLine.arguments[2] == "grades" {
    // A grade scale's four order statistics of 1,024 scores: branch-free partitions
    // (`valuesAtDescendingRanks`) against quickselect (`selectNth`), interleaved, median µs.
    var rng = SplitMix64(seed: 5)
    let positions = [20, 102, 255, 511]
    var (fast, quick): ([Double], [Double]) = ([], [])
    let clock = ContinuousClock()
    var check = 0.0
    for _ in 0..<2000 {
        let values = (0..<1024).map { _ in Double.random(in: -2...2, using: &rng) * Double.random(in: 0...1, using: &rng) }
        var t0 = clock.now
        let a = valuesAtDescendingRanks(positions, of: values)
        fast.append(Double((clock.now - t0).components.attoseconds) / 1e12)
        t0 = clock.now
        var copy = values, b = [Double](repeating: 0, count: 4), end = 1024
        for (i, k) in positions.enumerated().reversed() {
            selectNth(k, in: &copy, within: 0..<end, by: >)
            b[i] = copy[k]
            end = k + 1
        }
        quick.append(Double((clock.now - t0).components.attoseconds) / 1e12)
        precondition(a == b, "the selections disagree")
        check += a[0]
    }
    fast.sort()
    quick.sort()
    print("grade order statistics p50 µs: branch-free", fast[1000], "quickselect", quick[1000], check)
    exit(0)
}
if CommandLine.arguments.count > 2, CommandLine.arguments[2] == "bands" {
    // A deck's band selection alone: 2,294 scores in three groups (a sixth left out), the best
    // 58 of each, median µs.
    var rng = SplitMix64(seed: 6)
    var selector = GroupedTopKSelector()
    var best: [[Int]] = [], counts: [Int] = []
    var times: [Double] = []
    let clock = ContinuousClock()
    var check = 0
    for _ in 0..<2000 {
        let scores = (0..<2294).map { _ in Float.random(in: -2...2, using: &rng) }
        let groups = (0..<2294).map { _ in Int.random(in: 0..<6, using: &rng) == 0 ? Int8(-1) : Int8(Int.random(in: 0..<3, using: &rng)) }
        let t0 = clock.now
        selector.select(k: 58, from: scores, groups: groups, groupCount: 3, into: &best, counts: &counts)
        times.append(Double((clock.now - t0).components.attoseconds) / 1e12)
        check += best[0][0] + counts[1]
    }
    times.sort()
    print("band selection p50 µs", times[1000], check)
    exit(0)
}
if CommandLine.arguments.count > 2, CommandLine.arguments[2] == "rows" {
    var rng = SplitMix64(seed: 7)
    let (n, d) = (200_000, 22)
    let matrix = Matrix(rows: n, columns: d, elements: (0..<(n * d)).map { _ in Float.random(in: -1...1, using: &rng) })
    let order = (0..<n).map { Int32($0) }.shuffled(using: &rng)
    let permuted = FeatureRows(permuted: FloatValues(order.flatMap { matrix.row(Int($0)) }), columns: d, rowAtPosition: order)
    let plain = FeatureRows(matrix)
    let weights = (0..<d).map { _ in Float.random(in: -1...1, using: &rng) }
    let clock = ContinuousClock()
    for (label, rows) in [("row order", plain), ("permuted", permuted)] {
        var times: [Double] = [], sum: Float = 0
        for _ in 0..<5 {
            let t0 = clock.now
            for row in 0..<n { sum += rows.dot(row: row, weights) }
            times.append(Double((clock.now - t0).components.attoseconds) / 1e15)
        }
        times.sort()
        print("dot over \(n) rows, \(label): p50 ms", times[2], sum)
    }
    exit(0)
}
if CommandLine.arguments.count > 2, CommandLine.arguments[2] == "swipes" {
    for card in session.recommendations(count: 31).recommendations {
        _ = try session.recordSwipe(Swipe(swipeID: card.item.id, cardID: card.item.id, action: .like, timestamp: 0))
    }
    var t: [Double] = []
    let clock = ContinuousClock()
    for _ in 0..<2000 {
        let card = session.recommendations(count: 1).recommendations[0]
        let t0 = clock.now
        _ = try session.recordSwipe(Swipe(swipeID: card.item.id, cardID: card.item.id, action: .dislike, timestamp: 1))
        let d = clock.now - t0
        t.append(Double(d.components.attoseconds) / 1e12)
    }
    t.sort()
    print("recordSwipe stable p50 µs", t[t.count / 2], "model", session.model.digest)
    exit(0)
}
if CommandLine.arguments.count > 2, ["reread-unexplained", "reread-brief"].contains(CommandLine.arguments[2]) {
    // The same re-read in the shapes the service's short cards ask: without explanations
    // (`deck(count:explained: false)`, compressed cards) and brief (`briefDeck(count:)`,
    // minimal cards). Same swipes as `reread`; a digest of the scores and grades, which the
    // two shapes share.
    let brief = CommandLine.arguments[2] == "reread-brief"
    for (i, card) in session.recommendations(count: 12).recommendations.enumerated() {
        _ = try session.recordSwipe(Swipe(swipeID: card.item.id, cardID: card.item.id, action: i % 3 == 0 ? .like : .dislike,
                                          timestamp: Int64(i)))
    }
    _ = session.deck(count: 10)
    var times: [Double] = [], digest: UInt64 = 0xcbf29ce484222325
    let clock = ContinuousClock(), ids = engine.matcher.catalog.ids
    for round in 0..<(CommandLine.arguments.count > 3 ? Int(CommandLine.arguments[3])! : 2000) {
        let t0 = clock.now
        let cards: [(id: String, score: Double, grade: Grade)]
        if brief {
            let deck = session.briefDeck(count: 10)
            times.append(Double((clock.now - t0).components.attoseconds) / 1e12)
            precondition(deck.dealt.isEmpty && deck.open.count == 10, "a re-read deals nothing")
            cards = deck.open.map { (ids[$0.row], $0.matchScore, $0.grade) }
        } else {
            let deck = session.deck(count: 10, explained: false)
            times.append(Double((clock.now - t0).components.attoseconds) / 1e12)
            precondition(deck.dealt.recommendations.isEmpty && deck.open.count == 10, "a re-read deals nothing")
            cards = deck.open.map { ($0.recommendation.item.id, $0.recommendation.matchScore, $0.recommendation.grade) }
        }
        if round == 0 {
            for c in cards {
                for b in "\(c.id)|\(c.score.bitPattern)|\(c.grade)".utf8 { digest = (digest ^ UInt64(b)) &* 0x100000001b3 }
            }
        }
    }
    times.sort()
    print("re-read deck of 10, \(brief ? "brief" : "unexplained"):", String(digest, radix: 16), "p50 µs", times[times.count / 2], "p10", times[times.count / 10])
    exit(0)
}
if CommandLine.arguments.count > 2, CommandLine.arguments[2] == "reread" {
    // A deck read again with its ten cards still open (`deck(count: 10)` deals nothing): what the
    // service computes for a GET whose deck the student has not played, or for the cards left
    // open after a swipe. After 12 swipes, so the weights are learned; 2,000 reads, median µs,
    // and a digest of the cards (the same in every read: it must not change with speed work).
    for (i, card) in session.recommendations(count: 12).recommendations.enumerated() {
        _ = try session.recordSwipe(Swipe(swipeID: card.item.id, cardID: card.item.id, action: i % 3 == 0 ? .like : .dislike,
                                          timestamp: Int64(i)))
    }
    _ = session.deck(count: 10)
    var times: [Double] = [], digest: UInt64 = 0xcbf29ce484222325
    let clock = ContinuousClock()
    for round in 0..<(CommandLine.arguments.count > 3 ? Int(CommandLine.arguments[3])! : 2000) {
        let t0 = clock.now
        let deck = session.deck(count: 10)
        times.append(Double((clock.now - t0).components.attoseconds) / 1e12)
        precondition(deck.dealt.recommendations.isEmpty && deck.open.count == 10, "a re-read deals nothing")
        if round == 0 {
            for c in deck.open.map(\.recommendation) {
                for b in "\(c.item.id)|\(c.matchScore.bitPattern)|\(c.explanations)|\(c.grade)".utf8 { digest = (digest ^ UInt64(b)) &* 0x100000001b3 }
            }
        }
    }
    times.sort()
    print("re-read deck of 10:", String(digest, radix: 16), "p50 µs", times[times.count / 2], "p10", times[times.count / 10])
    exit(0)
}
if CommandLine.arguments.count > 2, CommandLine.arguments[2] == "factors" {
    // RankingBenchmarks' "recommendations(10) after a swipe, schools 2294, factors f=32": the
    // same random f = 32 model, a like on the last served card before each deck.
    var rng = SplitMix64(seed: 32)
    let ids = Array(schools.catalog.ids)
    let file = FactorModelFile(dimension: 32, confidence: 10, dislikeConfidence: 0, regularization: 10, weight: 50, itemIDs: ids,
                               itemFactors: ids.map { _ in (0..<32).map { _ in Double.random(in: -0.3...0.3, using: &rng) } })
    let factorEngine = try engine.withFactors(file)
    var student = profile
    student.sizePreference = .medium
    student.settingPreference = .city
    student.academicPriority = 0.7
    student.earningsPriority = 0.6
    var times: [Double] = []
    var digest: UInt64 = 0xcbf29ce484222325  // FNV-1a of every card's id, score, reasons and grade
    let clock = ContinuousClock()
    // REPEAT runs the same session again from the start (for a profiler's sample count); the
    // digest covers the first run only, the times every run.
    for run in 0..<max(1, Int(ProcessInfo.processInfo.environment["REPEAT"] ?? "") ?? 1) {
        var session = try factorEngine.session(studentID: "b", profile: student, seed: 1)
        _ = session.recommendations(count: 1)
        for _ in 0..<min(200, Int(ProcessInfo.processInfo.environment["ROUNDS"] ?? "") ?? 100) {
            let last = session.served.last!
            _ = try session.recordSwipe(Swipe(swipeID: "\(last.position)", cardID: last.cardID, action: .like, timestamp: Int64(last.position)))
            let t0 = clock.now
            let cards = session.recommendations(count: 10).recommendations
            let t = clock.now - t0
            times.append(Double(t.components.attoseconds) / 1e12 + Double(t.components.seconds) * 1e6)
            if cards.isEmpty { break }
            if run == 0 {
                for c in cards { for b in "\(c.item.id)|\(c.matchScore.bitPattern)|\(c.explanations)|\(c.grade)".utf8 { digest = (digest ^ UInt64(b)) &* 0x100000001b3 } }
            }
        }
    }
    times.sort()
    print("factors f=32:", String(digest, radix: 16), "p50 µs", times[times.count / 2], "p10", times[times.count / 10])
    exit(0)
}
var total = 0
var digest: UInt64 = 0xcbf29ce484222325
/// FNV-1a over the bytes of `s`.
func mix(_ s: String, _ d: inout UInt64) { for b in s.utf8 { d = (d ^ UInt64(b)) &* 0x100000001b3 } }
let rounds = min(229, max(1, Int(ProcessInfo.processInfo.environment["ROUNDS"] ?? "") ?? 100))
var times: [Double] = []
let clock = ContinuousClock()
for round in 0..<rounds {
    let t0 = clock.now
    let cards = session.recommendations(count: 10).recommendations
    let t = clock.now - t0
    times.append(Double(t.components.attoseconds) / 1e12 + Double(t.components.seconds) * 1e6)
    total += cards.count
    for c in cards { mix("\(c.item.id)|\(c.matchScore.bitPattern)|\(c.explanations)|\(c.isProbe)|\(c.matchedMajors)|\(c.distance.map { $0.bitPattern } ?? 0)|\(c.grade)", &digest) }
    for s in session.served.suffix(cards.count) { mix("\(s.propensity.bitPattern)|\(s.band.map { "\($0)" } ?? "-")", &digest) }
    // Mixed answers on varying positions, so learning, probes and every phase are exercised.
    let action: SwipeAction = round % 3 == 0 ? .dislike : .like
    _ = try session.recordSwipe(Swipe(swipeID: "\(round)", cardID: cards[round % cards.count].item.id, action: action, timestamp: Int64(round)))
}
times.sort()
print(total, String(digest, radix: 16), "p50 µs", times[times.count / 2], "p10", times[times.count / 10])
