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
/// out once, then the O(f²) solves of the deck's cards that qualify, together, and one pass over
/// the likes per such card.
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
        typical = laneSum(raw) / Float(max(1, raw.count))  // in lanes: a left-to-right sum waits on every add
        let rows = session.likedRows.sorted()
        likedRows = rows
        likedColumns = factors.whitened.rowsAsDoubleColumns(rows)
    }

    /// The sentences for a deck's cards (nil where none), the solves of the cards the
    /// collaborative term places done together (`CholeskyFactor.solve(flat:count:)`: the same
    /// bits as one at a time).
    ///
    /// - Parameters:
    ///   - cards: Each card's row and raw score.
    ///   - session: The session the deck is for.
    /// - Returns: One per card, in order.
    /// - Complexity: O(placed × (f² + likes × f)).
    func reasons<M: Matcher>(for cards: [(row: Int, raw: Float)], session: SwipeSession<M>) -> [String?] {
        var result = [String?](filling: nil, count: cards.count)
        guard let factors = session.engine.factors, let collaborative = session.collaborative else { return result }
        // Only where the collaborative term decides the card's place (see the type's comment).
        let placed = cards.indices.filter { i in
            let term = terms[cards[i].row]
            return term > 0 && term > cards[i].raw - typical
        }
        guard !placed.isEmpty else { return result }
        let f = factors.dimension
        // The placed cards' factors in one array, solved together, and one buffer for every
        // card's contributions: a deck places about eight, and the per-card arrays (a factor row
        // as Float then as Double, its solved slice, its contributions) were a third of this.
        let flat = factors.whitened.rowsAsDouble(placed.map { cards[$0].row }, stride: f)
        let solved = collaborative.factor.solve(flat: flat, count: placed.count)   // A⁻¹ ṽᵣ for each
        let names = session.engine.matcher.catalog.names
        var contributions: [Double] = []
        for (k, i) in placed.enumerated() {
            let row = cards[i].row
            columnDotsInOrder(likedColumns, columns: likedRows.count, with: solved, from: k * f, count: f, into: &contributions)
            var best = -1
            var bestContribution = 0.0
            for (j, liked) in likedRows.enumerated() where liked != row {
                let contribution = contributions[j]
                if contribution > 0, best < 0 || contribution > bestContribution { (best, bestContribution) = (liked, contribution) }
            }
            if best >= 0 { result[i] = Self.sentence(likedName: names[best]) }
        }
        return result
    }

    /// "Students who liked X also liked this", written into one buffer reserved at its size.
    static func sentence(likedName: String) -> String {
        let (head, tail) = ("Students who liked ", " also liked this")
        var text = ""
        text.reserveCapacity(head.utf8.count + likedName.utf8.count + tail.utf8.count)
        text += head
        text += likedName
        text += tail
        return text
    }
}
