import Foundation
import SwipeRankNumerics

/// Why the collaborative part ranks a card, when it does: "Students who liked X also liked
/// this", where X is the item the student liked that contributes most to the card's affinity —
/// an exact decomposition, not a guess: the posterior mean is `u' = A⁻¹ Σₓ cₓ yₓ ṽₓ` (the prior
/// mean is 0), so the affinity of card r is `Σₓ cₓ yₓ (ṽᵣᵀ A⁻¹ ṽₓ)`, one term per swipe, and only
/// likes have yₓ ≠ 0.
///
/// Given only where that term decides the card's place: when the collaborative term is positive
/// and larger than what the card's feature score adds over the catalog's mean score, the
/// features alone would not have put it there. Built once per deck: the liked items' factors laid
/// out once, then one O(f²) solve and one pass over the likes per card that qualifies.
struct CollaborativeReasons {
    let terms: [Float]
    let typical: Float
    /// The liked rows, ascending (ties go to the lower row), and their whitened factors as the
    /// columns of an f × likes matrix (row-major): one pass per card adds every like's term side
    /// by side (`columnDotsInOrder`).
    let likedRows: [Int]
    let likedColumns: [Double]

    init?<M: Matcher>(session: SwipeSession<M>, terms: [Float]?, raw: [Float]) {
        guard let terms, let factors = session.engine.factors, session.collaborative != nil else { return nil }
        self.terms = terms
        typical = raw.reduce(0, +) / Float(max(1, raw.count))
        let rows = session.likedRows.sorted()
        likedRows = rows
        likedColumns = factors.whitened.rowsAsDoubleColumns(rows)
    }

    /// The sentence for a card, or nil.
    ///
    /// - Complexity: O(f² + likes × f) for a card the collaborative term places, O(1) otherwise.
    func reason<M: Matcher>(row: Int, raw: Float, session: SwipeSession<M>) -> String? {
        let term = terms[row]
        guard term > 0, term > raw - typical, let factors = session.engine.factors, let collaborative = session.collaborative else { return nil }
        let card = collaborative.factor.solve(factors.vector(row: row))   // A⁻¹ ṽᵣ
        let contributions = columnDotsInOrder(likedColumns, columns: likedRows.count, with: card)
        var best: (row: Int, contribution: Double)?
        for (liked, contribution) in zip(likedRows, contributions) where liked != row {
            if contribution > 0, best == nil || contribution > best!.contribution { best = (liked, contribution) }
        }
        guard let best else { return nil }
        return "Students who liked \(session.engine.matcher.catalog.names[best.row]) also liked this"
    }
}
