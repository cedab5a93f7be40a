/// How a group's deck is ordered from its members' preference models.
///
/// Every member's match scores over the candidate options are first turned into percentile
/// ranks within that member's own scores (0 = the member's worst candidate, 1 = their best),
/// so a member whose model is sharper or more optimistic does not outvote the others; the
/// strategies then combine the ranks (O'Connor et al., PolyLens, ECSCW 2001; Masthoff, "Group
/// Recommender Systems: Combining Individual Models", 2011).
public enum GroupStrategy: String, Sendable, Hashable, Codable, CaseIterable {
    /// The mean of the members' ranks (utilitarian: the most total happiness).
    case average
    /// The lowest member rank (nobody is left very unhappy; PolyLens' choice).
    case leastMisery = "least_misery"
    /// The mean of the members' ranks among options that no member ranks below the misery
    /// threshold; options that make someone miserable follow, also by mean.
    case averageWithoutMisery = "average_without_misery"
}

/// Orders options for a group: the aggregation of `GroupStrategy` with its misery threshold.
///
///     let order = GroupAggregation(strategy: .averageWithoutMisery)
///         .rank(candidates: rows, memberScores: [alice, bob], count: 20)
public struct GroupAggregation: Sendable, Hashable, Codable {
    /// The strategy.
    public var strategy: GroupStrategy
    /// The percentile rank below which a member counts as miserable with an option (used by
    /// `averageWithoutMisery`), in 0…1.
    public var miseryThreshold: Double

    /// The default: average without misery, miserable below a member's 30th percentile — the
    /// best of the three strategies on the simulated groups of `GroupSimulation` (fewest
    /// swipes to a match, least-happy member at least as happy; see docs/groups.md).
    public static let standard = GroupAggregation(strategy: .averageWithoutMisery, miseryThreshold: 0.3)

    /// Creates an aggregation.
    ///
    /// - Parameters:
    ///   - strategy: How member ranks combine.
    ///   - miseryThreshold: Percentile rank under which a member is miserable; must be in
    ///     0…1 (a programmer error otherwise: it is configuration, not data).
    public init(strategy: GroupStrategy, miseryThreshold: Double = 0.3) {
        precondition((0...1).contains(miseryThreshold), "the misery threshold is a percentile rank in 0…1")
        self.strategy = strategy
        self.miseryThreshold = miseryThreshold
    }

    /// The group score of one option from its members' percentile ranks: higher is better.
    ///
    /// - Parameter ranks: One percentile rank per member, each in 0…1 (non-empty).
    /// - Returns: The score; `averageWithoutMisery` puts a miserable option below every other
    ///   by subtracting 1 from its mean.
    public func score<C: Collection<Double>>(ranks: C) -> Double {
        precondition(!ranks.isEmpty, "a group has members")
        switch strategy {
        case .average:
            return ranks.reduce(0, +) / Double(ranks.count)
        case .leastMisery:
            return ranks.min()!
        case .averageWithoutMisery:
            let mean = ranks.reduce(0, +) / Double(ranks.count)
            return ranks.min()! < miseryThreshold ? mean - 1 : mean
        }
    }

    /// The best `count` candidates for the group, best first.
    ///
    /// - Parameters:
    ///   - candidates: Rows that may be chosen (distinct).
    ///   - memberScores: Per member, a score for every row (any scale; only the order within
    ///     one member's scores matters). An empty list means no member has a model: the
    ///     candidates keep their given order.
    ///   - count: How many rows to return.
    /// - Returns: Up to `count` rows from `candidates`; ties go to the candidate listed first.
    /// - Complexity: O(M × C log C) for M members and C candidates.
    public func rank(candidates: [Int], memberScores: [[Double]], count: Int) -> [Int] {
        let count = max(0, min(count, candidates.count))
        guard !memberScores.isEmpty, count > 0 else { return Array(candidates.prefix(count)) }
        let ranks = memberScores.map { scores in Self.percentileRanks(of: candidates.map { scores[$0] }) }
        var member = [Double](repeating: 0, count: ranks.count)
        let scored = candidates.indices.map { i -> (score: Double, index: Int) in
            for m in ranks.indices { member[m] = ranks[m][i] }
            return (score(ranks: member), i)
        }
        let order = scored.sorted { (a: (score: Double, index: Int), b: (score: Double, index: Int)) -> Bool in
            a.score != b.score ? a.score > b.score : a.index < b.index
        }
        return order.prefix(count).map { candidates[$0.index] }
    }

    /// Percentile ranks in 0…1 (ties share their mean rank; one value ranks 1).
    ///
    /// - Parameter values: The scores.
    /// - Returns: One rank per value, in input order.
    /// - Complexity: O(n log n).
    public static func percentileRanks(of values: [Double]) -> [Double] {
        guard values.count > 1 else { return values.map { _ in 1 } }
        let order = values.indices.sorted { values[$0] < values[$1] }
        var ranks = [Double](repeating: 0, count: values.count)
        var start = 0
        let scale = Double(values.count - 1)
        while start < order.count {
            var end = start
            while end + 1 < order.count && values[order[end + 1]] == values[order[start]] { end += 1 }
            let rank = Double(start + end) / 2 / scale
            for k in start...end { ranks[order[k]] = rank }
            start = end + 1
        }
        return ranks
    }
}
