/// A geographic band relative to the student's home and preferred distance p.
public enum GeoBand: String, Sendable, Hashable, Codable, CaseIterable {
    /// Distance ≤ p.
    case nearby
    /// p < distance ≤ expansion × p (expansion 1.5 by default).
    case slightlyBeyond = "slightly_beyond"
    /// Farther (or no location): discovery, preferring states and regions not shown yet.
    case discovery

    /// The bands by index (nearby, slightly beyond, discovery), without building `allCases`
    /// each time.
    static let byIndex: [GeoBand] = allCases

    /// The band for a distance.
    ///
    /// - Parameters:
    ///   - distance: Miles from home (NaN for an item without a location → discovery).
    ///   - preferred: The preferred maximum distance p.
    ///   - expansion: The slightly-beyond factor.
    /// - Returns: The band.
    public static func band(distance: Float, preferred: Double, expansion: Double) -> GeoBand {
        guard !distance.isNaN else { return .discovery }
        let d = Double(distance)
        if d <= preferred { return .nearby }
        if d <= preferred * expansion { return .slightlyBeyond }
        return .discovery
    }

    /// Every distance's band index (`index` of `band(distance:preferred:expansion:)`: nearby 0,
    /// slightly beyond 1, discovery 2), in one branch-free pass: a deck derives the bands of
    /// every catalog row, and the enum per row was a twentieth of a deck's cost.
    ///
    /// - Parameters:
    ///   - distances: Miles from home per row (NaN: discovery).
    ///   - preferred: The preferred maximum distance p.
    ///   - expansion: The slightly-beyond factor.
    /// - Returns: One index per distance, equal to the enum's.
    static func bandIndices(distances: [Float], preferred: Double, expansion: Double) -> [Int8] {
        let beyond = preferred * expansion
        return [Int8](unsafeUninitializedCapacity: distances.count) { out, count in
            distances.withUnsafeBufferPointer { d in
                for i in 0..<d.count {
                    let x = Double(d[i])
                    // NaN fails both comparisons: discovery, as in `band`.
                    let far: Int8 = x <= beyond ? 1 : 2
                    out[i] = x <= preferred ? 0 : far
                }
            }
            count = distances.count
        }
    }

    /// The `distance` term of a student-relative score: 1 at home, ½ at the preferred maximum
    /// p, then falling by ½ per further p down to −1: `d ≤ p: 1 − d/(2p)`, beyond:
    /// `max(−1, ½ − (d − p)/p)`.
    ///
    /// - Parameters:
    ///   - d: The distance in miles (not NaN).
    ///   - p: The preferred maximum distance in miles, > 0.
    /// - Returns: A value in [−1, 1].
    /// - Complexity: O(1).
    public static func distanceFit(miles d: Float, preferred p: Float) -> Float {
        d <= p ? 1 - d / (2 * p) : max(-1, 0.5 - (d - p) / p)
    }
}

/// Decides which band each served card comes from: 50% nearby, 30% slightly beyond, 20%
/// discovery (configurable), counted over the student's whole card sequence.
///
/// Quotas for a batch of n cards: the largest-remainder apportionment of the running total
/// (cards served so far + n) minus what each band has already served. For a fresh student
/// that is the plain largest-remainder split of n (10 → 5/3/2, 20 → 10/6/4, 1 → 1/0/0,
/// 3 → 1/1/1: remainders go to the largest fractional parts, ties to the earlier band), and
/// after every batch each band's running count is within one card of its target share.
/// Within a batch the cards are interleaved: each slot goes to the band furthest below its
/// running target among those with quota left (ties: nearby, beyond, discovery).
public struct GeographicMixer: Sendable, Hashable, Codable {
    /// Target shares, in `GeoBand.allCases` order, summing to 1.
    public let shares: [Double]

    /// Creates a mixer.
    ///
    /// - Parameter shares: Three non-negative shares summing to 1 (nearby, beyond, discovery).
    public init(shares: [Double] = [0.5, 0.3, 0.2]) {
        precondition(shares.count == 3 && shares.allSatisfy { $0 >= 0 } && abs(shares.reduce(0, +) - 1) < 1e-9,
                     "Band shares must be three non-negative numbers summing to 1")
        self.shares = shares
    }

    /// The largest-remainder apportionment of `total` cards.
    ///
    /// - Parameter total: Cards, ≥ 0.
    /// - Returns: Cards per band.
    /// - Complexity: O(1).
    public func apportion(_ total: Int) -> [Int] {
        let exact = shares.map { $0 * Double(total) }
        var counts = exact.map { Int($0.rounded(.down)) }
        let left = total - counts.reduce(0, +)
        // The `left` largest remainders get one more (ties: the lower band), each band at most
        // once: picked one at a time rather than by sorting the three (every deck apportions).
        let remainders = (0..<3).map { exact[$0] - Double(counts[$0]) }
        var taken = [false, false, false]
        for _ in 0..<max(0, min(left, 3)) {
            var best = -1
            for b in 0..<3 where !taken[b] && (best < 0 || remainders[b] > remainders[best]) { best = b }
            taken[best] = true
            counts[best] += 1
        }
        return counts
    }

    /// The band of each slot of a batch of `count` cards.
    ///
    /// - Parameters:
    ///   - count: Cards in the batch.
    ///   - served: Cards each band has served so far.
    /// - Returns: `count` bands, in slot order.
    /// - Complexity: O(count).
    public func plan(count: Int, served: [Int]) -> [GeoBand] {
        precondition(served.count == 3 && count >= 0, "plan needs three served counts and a count ≥ 0")
        let servedTotal = served.reduce(0, +)
        let target = apportion(servedTotal + count)
        var quota = (0..<3).map { Swift.max(0, target[$0] - served[$0]) }
        // Where earlier backfills overshot a band, the sum can exceed count: trim the bands
        // furthest above their share; if short, add to the ones furthest below.
        func surplus(_ b: Int) -> Double { Double(served[b] + quota[b]) - shares[b] * Double(servedTotal + count) }
        // Plain loops over the three bands (this runs for every batch); ties go to the lower
        // band, as `max(by:)`/`min(by:)` would pick.
        while quota[0] + quota[1] + quota[2] > count {
            var b = -1
            for c in 0..<3 where quota[c] > 0 && (b < 0 || surplus(b) < surplus(c)) { b = c }
            quota[b] -= 1
        }
        while quota[0] + quota[1] + quota[2] < count {
            var b = 0
            for c in 1..<3 where surplus(c) < surplus(b) { b = c }
            quota[b] += 1
        }
        var running = served
        var plan: [GeoBand] = []
        plan.reserveCapacity(count)
        for slot in 0..<count {
            let total = Double(servedTotal + slot + 1)
            var best = -1, bestDeficit = -Double.infinity
            for b in 0..<3 where quota[b] > 0 {
                let deficit = shares[b] * total - Double(running[b])
                if deficit > bestDeficit { best = b; bestDeficit = deficit }   // ties: the earlier band
            }
            quota[best] -= 1
            running[best] += 1
            plan.append(GeoBand.byIndex[best])
        }
        return plan
    }
}
