import Foundation

/// Ranking-quality measures of one ranked list against a set of relevant items.
///
/// All take the ranking best first and count an item relevant if it is in `relevant`
/// (binary relevance). Cut-offs `k` larger than the ranking use the whole ranking.
///
///     RankingMetrics.ndcg(ranking: ["a", "b", "c"], relevant: ["c"], k: 3)   // 1 / log2(4) = 0.5
public enum RankingMetrics {
    /// The share of the top `k` that is relevant.
    ///
    /// - Parameters:
    ///   - ranking: Items, best first.
    ///   - relevant: The relevant items.
    ///   - k: The cut-off, > 0.
    /// - Returns: Relevant in the top k / k.
    /// - Complexity: O(k).
    public static func precision<T: Hashable>(ranking: [T], relevant: Set<T>, k: Int) -> Double {
        precondition(k > 0, "precision@k needs k > 0")
        return Double(ranking.prefix(k).filter(relevant.contains).count) / Double(k)
    }

    /// The share of the relevant items found in the top `k`; 0 when nothing is relevant.
    ///
    /// - Parameters:
    ///   - ranking: Items, best first.
    ///   - relevant: The relevant items.
    ///   - k: The cut-off, > 0.
    /// - Returns: Relevant in the top k / all relevant.
    /// - Complexity: O(k).
    public static func recall<T: Hashable>(ranking: [T], relevant: Set<T>, k: Int) -> Double {
        precondition(k > 0, "recall@k needs k > 0")
        guard !relevant.isEmpty else { return 0 }
        return Double(ranking.prefix(k).filter(relevant.contains).count) / Double(relevant.count)
    }

    /// Normalized discounted cumulative gain at `k` with binary gains:
    /// DCG = Σ 1/log₂(rank + 1) over relevant ranks ≤ k, divided by the DCG of an ideal
    /// ranking (all relevant first). 0 when nothing is relevant.
    ///
    /// - Parameters:
    ///   - ranking: Items, best first.
    ///   - relevant: The relevant items.
    ///   - k: The cut-off, > 0.
    /// - Returns: A value in [0, 1].
    /// - Complexity: O(k).
    public static func ndcg<T: Hashable>(ranking: [T], relevant: Set<T>, k: Int) -> Double {
        precondition(k > 0, "NDCG@k needs k > 0")
        guard !relevant.isEmpty else { return 0 }
        var dcg = 0.0
        for (i, item) in ranking.prefix(k).enumerated() where relevant.contains(item) { dcg += 1 / log2(Double(i + 2)) }
        let ideal = (0..<min(k, relevant.count)).reduce(0.0) { $0 + 1 / log2(Double($1 + 2)) }
        return dcg / ideal
    }

    /// Graded NDCG@k: gains are given per item (e.g. a hidden true utility), and the ideal
    /// ranking sorts all items by gain.
    ///
    /// - Parameters:
    ///   - ranking: Items, best first.
    ///   - gains: Gain of each item (missing items gain 0); gains must not be negative.
    ///   - k: The cut-off, > 0.
    /// - Returns: A value in [0, 1]; 0 when every gain is 0.
    /// - Complexity: O(n log n) for n gains.
    public static func ndcg<T: Hashable>(ranking: [T], gains: [T: Double], k: Int) -> Double {
        precondition(k > 0, "NDCG@k needs k > 0")
        var dcg = 0.0
        for (i, item) in ranking.prefix(k).enumerated() { dcg += (gains[item] ?? 0) / log2(Double(i + 2)) }
        let best = gains.values.sorted(by: >).prefix(k)
        let ideal = best.enumerated().reduce(0.0) { $0 + $1.element / log2(Double($1.offset + 2)) }
        return ideal > 0 ? dcg / ideal : 0
    }

    /// Average precision at `k`: the mean of precision@i over the ranks i ≤ k that hold a
    /// relevant item, divided by min(k, relevant count). 0 when nothing is relevant.
    ///
    /// - Parameters:
    ///   - ranking: Items, best first.
    ///   - relevant: The relevant items.
    ///   - k: The cut-off, > 0.
    /// - Returns: A value in [0, 1].
    /// - Complexity: O(k).
    public static func averagePrecision<T: Hashable>(ranking: [T], relevant: Set<T>, k: Int) -> Double {
        precondition(k > 0, "AP@k needs k > 0")
        guard !relevant.isEmpty else { return 0 }
        var hits = 0, sum = 0.0
        for (i, item) in ranking.prefix(k).enumerated() where relevant.contains(item) {
            hits += 1
            sum += Double(hits) / Double(i + 1)
        }
        return sum / Double(min(k, relevant.count))
    }

    /// The reciprocal rank of the first relevant item; 0 if none is ranked.
    ///
    /// - Parameters:
    ///   - ranking: Items, best first.
    ///   - relevant: The relevant items.
    /// - Returns: 1 / rank of the first hit.
    /// - Complexity: O(n).
    public static func reciprocalRank<T: Hashable>(ranking: [T], relevant: Set<T>) -> Double {
        guard let i = ranking.firstIndex(where: relevant.contains) else { return 0 }
        return 1 / Double(i + 1)
    }

    /// The area under the ROC curve of a full ranking: the probability that a random relevant
    /// item is ranked above a random non-relevant one. Items of `ranking` not in `relevant` are
    /// the negatives. nil when either class is empty.
    ///
    /// - Parameters:
    ///   - ranking: All candidate items, best first.
    ///   - relevant: The relevant items.
    /// - Returns: AUC in [0, 1], or nil.
    /// - Complexity: O(n).
    public static func auc<T: Hashable>(ranking: [T], relevant: Set<T>) -> Double? {
        var negativesBelow = 0, positives = 0, pairs = 0
        // Walk from the bottom: each positive beats the negatives already seen below it.
        for item in ranking.reversed() {
            if relevant.contains(item) { positives += 1; pairs += negativesBelow } else { negativesBelow += 1 }
        }
        guard positives > 0, negativesBelow > 0 else { return nil }
        return Double(pairs) / Double(positives * negativesBelow)
    }

    /// Precision@k, recall@k, NDCG@k and AUC of a scored candidate set, each the expectation
    /// over every order of tied scores (ties in random order): within a group of equal scores
    /// every position holds the group's share of relevant items, and in AUC a tied
    /// (positive, negative) pair counts ½. A ranking that breaks ties by catalog row would read
    /// anything from chance to far above it for a constant policy, depending on the file's row
    /// order; this cannot.
    ///
    /// - Parameters:
    ///   - scores: One score per candidate.
    ///   - relevant: Whether each candidate is relevant (same count).
    ///   - k: The cutoff, > 0.
    /// - Returns: The four metrics (AUC nil without both a relevant and an irrelevant candidate;
    ///   all 0 without a relevant one, AUC nil).
    /// - Complexity: O(n log n).
    public static func tieAware(scores: [Float], relevant: [Bool], k: Int)
        -> (precision: Double, recall: Double, ndcg: Double, auc: Double?) {
        precondition(k > 0 && scores.count == relevant.count, "tie-aware metrics need k > 0 and one flag per score")
        let order = scores.indices.sorted { scores[$0] > scores[$1] }
        let positives = relevant.filter { $0 }.count, negatives = relevant.count - positives
        var hits = 0.0, dcg = 0.0, position = 0, start = 0
        var negativesAbove = 0, aucPairs = 0.0
        // Walk tie groups from the top.
        while start < order.count {
            var end = start
            var groupPositives = 0
            while end < order.count && scores[order[end]] == scores[order[start]] {
                if relevant[order[end]] { groupPositives += 1 }
                end += 1
            }
            let size = end - start
            let share = Double(groupPositives) / Double(size)
            for _ in start..<end where position < k {
                hits += share
                dcg += share / log2(Double(position + 2))
                position += 1
            }
            // Each positive here is above every negative below the group and ties half of the group's.
            let groupNegatives = size - groupPositives
            aucPairs += Double(groupPositives) * (Double(negatives - negativesAbove - groupNegatives) + 0.5 * Double(groupNegatives))
            negativesAbove += groupNegatives
            start = end
        }
        guard positives > 0 else { return (0, 0, 0, nil) }
        let ideal = (0..<min(k, positives)).reduce(0.0) { $0 + 1 / log2(Double($1 + 2)) }
        return (hits / Double(k), hits / Double(positives), dcg / ideal,
                negatives > 0 ? aucPairs / Double(positives * negatives) : nil)
    }

    /// Whether every score is the same (a policy that does not rank at all).
    ///
    /// - Parameter scores: The scores.
    /// - Returns: True for a constant (or empty) list.
    public static func isConstant(_ scores: [Float]) -> Bool { scores.allSatisfy { $0 == scores.first } }
}
