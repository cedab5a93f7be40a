import Foundation
import Testing
@testable import SwipeRank
import SwipeRankEvaluation
import SwipeRankNumerics

/// A deck whose scores hold NaN (an overflow the loaders missed) deals the rows that have a
/// number and never traps: the band selection once counted NaN rows that it never returned, and
/// the deck read past a band's list (`BatchPools.nextBest`, index out of range).
@Suite("Deck with NaN scores")
struct DeckNaNTests {
    static let catalog: Catalog = try! SyntheticCatalog.catalog(items: 400, seed: 41)

    @Test("deals only rows with a number, as many as there are, in every band mix and probe mode", arguments: 0..<8)
    func nanRows(seed: UInt64) throws {
        var configuration = EngineConfiguration()
        if seed % 2 == 1 { configuration.probeCandidates = .boundary }
        let engine = SwipeEngine(matcher: ItemMatcher(catalog: Self.catalog, regionAttribute: "neighborhood"), configuration: configuration)
        var rng = SplitMix64(seed: 4_100 + seed)
        let home = (0..<Self.catalog.count).compactMap { Self.catalog.locations[$0] }[Int(rng.next() % 300)]
        // With a home (three bands) in most seeds; without one (a single pool) in seed 6.
        let profile = ItemProfile(home: seed == 6 ? nil : home, maxDistanceMiles: [2.0, 5, 25, 60][Int(seed % 4)], preferences: ["price_level": -0.5])
        var session = try engine.session(studentID: "s", profile: profile, seed: seed)
        let real = session.deckScores()
        // A third of the rows NaN in most seeds; every row of one band in seed 2, every row in 7.
        let nan: [Bool] = (0..<Self.catalog.count).map { row in
            switch seed {
            case 7: return true
            case 2: return real.student.distances[row] <= 2
            default: return rng.next() % 3 == 0
            }
        }
        let raw = zip(real.raw, nan).map { $1 ? Float.nan : $0 }
        let scores = SwipeSession<ItemMatcher>.DeckScores(weights: real.weights, student: real.student, raw: raw, terms: real.terms, reasons: nil)
        var dealt: [Int] = []
        // Deck after deck (nothing swiped, so the cards dealt stay open and are not dealt
        // again) until the rows with a number run out.
        for _ in 0..<60 {
            let cards = session.deal(count: 10, scores: scores, detail: .explained).cards
            let rows = cards.map { Self.catalog.row(of: $0.item.id)! }
            #expect(rows.allSatisfy { !nan[$0] }, "seed \(seed): a NaN row was dealt")
            #expect(cards.allSatisfy { $0.matchScore.isFinite })
            let left = (0..<Self.catalog.count).filter { !nan[$0] && !dealt.contains($0) }.count
            #expect(rows.count == min(10, left), "seed \(seed): \(rows.count) cards with \(left) rows left")
            dealt += rows
            if rows.isEmpty { break }
        }
        #expect(Set(dealt).count == dealt.count && dealt.count == nan.filter { !$0 }.count, "seed \(seed)")
    }
}
