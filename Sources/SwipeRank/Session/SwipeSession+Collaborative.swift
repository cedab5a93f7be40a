import Foundation
import SwipeRankNumerics

extension SwipeSession {
    /// Why the collaborative part ranks a card, when it does: "Students who liked X also liked
    /// this", where X is the item the student liked that contributes most to the card's
    /// affinity — an exact decomposition, not a guess: the posterior mean is
    /// `u' = A⁻¹ Σₓ cₓ yₓ ṽₓ` (the prior mean is 0), so the affinity of card r is
    /// `Σₓ cₓ yₓ (ṽᵣᵀ A⁻¹ ṽₓ)`, one term per swipe, and only likes have yₓ ≠ 0.
    ///
    /// Given only where that term decides the card's place: when the collaborative term is
    /// positive and larger than what the feature score adds over the deck's typical card
    /// (`raw − typical`, the typical card being the catalog's mean score), the features alone would not have put the card here.
    ///
    /// - Parameters:
    ///   - row: The card's row.
    ///   - term: Its collaborative term (γ × affinity).
    ///   - raw: Its raw (feature) score.
    ///   - typical: The mean raw score over the catalog.
    /// - Returns: The sentence, or nil.
    /// - Complexity: O(f² + likes × f).
    func collaborativeReason(row: Int, term: Float, raw: Float, typical: Float) -> String? {
        guard term > 0, term > raw - typical, let factors = engine.factors, let collaborative else { return nil }
        let catalog = engine.matcher.catalog
        let card = collaborative.factor.solve(factors.vector(row: row))   // A⁻¹ ṽᵣ
        var best: (row: Int, contribution: Double)?
        for swipe in swipes.values where swipe.action == .like {
            guard let liked = catalog.row(of: swipe.cardID), liked != row else { continue }
            let v = factors.vector(row: liked)
            let contribution = zip(card, v).reduce(0) { $0 + $1.0 * $1.1 }
            // Ties to the lower row, so the sentence does not depend on the dictionary's order.
            if contribution > 0, best == nil || contribution > best!.contribution
                || (contribution == best!.contribution && liked < best!.row) {
                best = (liked, contribution)
            }
        }
        guard let best else { return nil }
        return "Students who liked \(catalog.names[best.row]) also liked this"
    }

    /// Puts the collaborative reason first among a card's explanations where it applies.
    func explainCollaborative(_ card: inout Recommendation, row: Int, terms: [Float]?, raw: [Float], typical: Float?) {
        guard let terms, let typical, let reason = collaborativeReason(row: row, term: terms[row], raw: raw[row], typical: typical) else { return }
        card.explanations.insert(reason, at: 0)
    }
}
