import Foundation
import SwipeRankNumerics

/// Which served positions are probes, and how a probe is chosen.
///
/// Positions 4, 8, 12, … of a student's card sequence (1-based, counted across batches) are
/// probes. Among the unseen cards of the slot's band, `window` candidates are taken
/// (`EngineConfiguration.probeCandidates`: by default the best cards after the deck's own
/// picks, or those whose predicted match is closest to 0.5); one is drawn with probability ∝
/// exp(u / T), where u = zᵀA⁻¹z is the model's variance of the card's score. The draw's
/// probability is the card's propensity, recorded so an evaluator can re-weight probe
/// outcomes without bias.
///
/// The phases change the exploration: discovery draws from 48 candidates at temperature 4
/// (close to uniform: explore broadly), refinement from 24 at 1, stable from 12 at 0.25
/// (nearly the most uncertain card).
public struct ProbeScheduler: Sendable, Hashable, Codable {
    /// Every how many cards a probe is served.
    public let interval: Int

    /// Creates a scheduler.
    ///
    /// - Parameter interval: Probe every `interval`-th card (4).
    public init(interval: Int = 4) {
        precondition(interval >= 1, "The probe interval must be at least 1")
        self.interval = interval
    }

    /// Whether the card at 1-based `position` is a probe.
    ///
    /// - Parameter position: The position in the student's sequence, ≥ 1.
    public func isProbe(position: Int) -> Bool { position % interval == 0 }

    /// The candidate window and temperature of a phase.
    ///
    /// - Parameter phase: The learning phase.
    /// - Returns: How many boundary candidates, and the softmax temperature.
    public func exploration(for phase: LearningPhase) -> (window: Int, temperature: Double) {
        switch phase {
        case .discovery: (48, 4)
        case .refinement: (24, 1)
        case .stable: (12, 0.25)
        }
    }

    /// Draws one candidate with probability ∝ exp(uncertainty / temperature).
    ///
    /// Values that are not numbers never stop a deck: a NaN is never drawn (unless nothing
    /// else can be), +∞ candidates share the draw among themselves, and when no candidate has a
    /// weight (every value NaN or −∞) the draw is uniform. The propensity is always the
    /// probability the draw had. (A NaN weight made the total NaN, and `Double.random(in:)`
    /// trapped on the range `0..<NaN`.)
    ///
    /// - Parameters:
    ///   - uncertainties: One value per candidate (not empty).
    ///   - temperature: > 0.
    ///   - generator: The randomness.
    /// - Returns: The chosen index and its probability.
    public static func draw(uncertainties: [Double], temperature: Double,
                            using generator: inout some RandomNumberGenerator) -> (index: Int, propensity: Double) {
        precondition(!uncertainties.isEmpty && temperature > 0, "A probe draw needs candidates and a positive temperature")
        var top = -Double.infinity
        for x in uncertainties where x > top { top = x }  // NaN is never greater
        // Each weight in [0, 1] (the largest is 1 when `top` is finite); anything else is 0.
        var weights = uncertainties.map { x -> Double in
            let w = top == .infinity ? (x == .infinity ? 1 : 0) : exp((x - top) / temperature)
            return w >= 0 && w <= 1 ? w : 0
        }
        var total = weights.reduce(0, +)
        if !(total > 0) {
            weights = [Double](repeating: 1, count: weights.count)
            total = Double(weights.count)
        }
        var u = Double.random(in: 0..<total, using: &generator)
        for (i, w) in weights.enumerated() {
            if u < w { return (i, w / total) }
            u -= w
        }
        return (weights.count - 1, weights[weights.count - 1] / total)
    }
}
