import Foundation
import Testing
@testable import SwipeRank
import SwipeRankNumerics

/// The deck's fast helpers against the plain rules they replace (the decks must not change).
@Suite("Deck helpers")
struct DeckHelperTests {
    @Test("bandIndices equals GeoBand.band per distance: boundaries, NaN, infinities, expansion below 1", arguments: 0..<4)
    func bandIndices(seed: UInt64) {
        var rng = SplitMix64(seed: 700 + seed)
        let preferred = [25.0, 0.5, 250, 1e-3][Int(seed)]
        for expansion in [1.5, 1.0, 0.5, 3] {
            var distances: [Float] = (0..<500).map { _ in Float(Double.random(in: 0...(preferred * 4), using: &rng)) }
            // Exactly at each threshold (as Float, then compared as Double, like the rule), just
            // around them, and the values no distance should be but a catalog may hold.
            for t in [preferred, preferred * expansion] {
                let f = Float(t)
                distances += [f, f.nextUp, f.nextDown]
            }
            distances += [.nan, .infinity, -.infinity, 0, -1, .greatestFiniteMagnitude]
            let fast = GeoBand.bandIndices(distances: distances, preferred: preferred, expansion: expansion)
            let plain = distances.map { Int8(GeoBand.band(distance: $0, preferred: preferred, expansion: expansion).index) }
            #expect(fast == plain, "preferred \(preferred), expansion \(expansion)")
            // Every band occurs, so the comparison covers all three outcomes.
            #expect(Set(plain).count == (expansion > 1 ? 3 : 2), "preferred \(preferred), expansion \(expansion)")
        }
        #expect(GeoBand.bandIndices(distances: [], preferred: 1, expansion: 1.5).isEmpty)
    }

    @Test("SmallTable answers as a Dictionary through growth: rows, digest-like keys, overwrites, misses", arguments: 0..<4)
    func smallTable(seed: UInt64) {
        var rng = SplitMix64(seed: 900 + seed)
        var table = SmallTable<Double>()
        var reference: [Int: Double] = [:]
        // Up to 500 distinct keys: the table starts at 64 slots, so it grows three times. Rows
        // (small, dense or sparse) and whole 64-bit digests (negative as Int too).
        func key() -> Int {
            switch seed {
            case 0: Int(rng.next() % 100)
            case 1: Int(rng.next() % 3_000)
            case 2: Int(rng.next() % 1_000_000)
            default: Int(truncatingIfNeeded: rng.next())
            }
        }
        for step in 0..<1_500 {
            let k = key()
            if step % 3 == 0 {
                #expect(table[k] == reference[k], "key \(k) at step \(step)")
            } else if reference.count < 500 || reference[k] != nil {
                let value = Double(step) + 0.25
                table[k] = value
                reference[k] = value
            }
        }
        for (k, value) in reference { #expect(table[k] == value, "key \(k)") }
        // Keys never set are misses, including ones colliding with set keys.
        for k in -100..<200 where reference[k] == nil { #expect(table[k] == nil, "key \(k)") }
    }

    @Test("apportion equals the largest-remainder rule by sorting: random shares, ties, totals 0–300", arguments: 0..<4)
    func apportion(seed: UInt64) {
        var rng = SplitMix64(seed: 1_100 + seed)
        // Ties between remainders come from equal shares (the first two sets), others are random.
        var shareSets: [[Double]] = [[0.5, 0.3, 0.2], [1.0 / 3, 1.0 / 3, 1.0 / 3], [0.25, 0.25, 0.5], [1, 0, 0]]
        for _ in 0..<20 {
            let a = Double.random(in: 0...1, using: &rng), b = Double.random(in: 0...(1 - a), using: &rng)
            shareSets.append([a, b, 1 - a - b])
        }
        for shares in shareSets {
            let mixer = GeographicMixer(shares: shares)
            for total in 0...300 {
                let exact = shares.map { $0 * Double(total) }
                var counts = exact.map { Int($0.rounded(.down)) }
                var left = total - counts.reduce(0, +)
                let order = (0..<3).sorted { (exact[$0] - Double(counts[$0]), -$0) > (exact[$1] - Double(counts[$1]), -$1) }
                for band in order where left > 0 { counts[band] += 1; left -= 1 }
                #expect(mixer.apportion(total) == counts, "shares \(shares), total \(total)")
            }
        }
    }
}
