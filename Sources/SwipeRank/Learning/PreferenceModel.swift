import Foundation
import SwipeRankNumerics

/// A student's Bayesian logistic preference model over the combined vector
/// `z = [features (d), relative terms (k)]`, kept by an online Laplace approximation.
///
/// - Likelihood: `P(like | z) = σ((zᵀw − offset) / scale)`, the same logistic curve that maps raw
///   scores to match scores, so the model predicts exactly the match score it shows.
/// - Prior: `w ~ N(μ₀, (τI)⁻¹)` with `μ₀` the cold-start weights.
/// - Each swipe (y = 1 like, 0 dislike) takes one Newton step from the current posterior
///   `N(μ, A⁻¹)`: with `p` the predicted like probability,
///   `A ← A + p(1−p)/scale² · z zᵀ` (a rank-1 update of the Cholesky factor, O(D²)) and
///   `μ ← μ + A⁻¹ z (y − p)/scale` (two triangular solves, O(D²)). A swipe the model already
///   expected barely moves it; a surprise moves it a lot. A floor of 0.05 on p(1−p) keeps even
///   confident swipes informative.
/// - Stable phase: before each swipe the precision decays towards the prior,
///   `A ← λA + (1−λ)τI` (refactored from the old factor, `CholeskyFactor.decay`, O(D³)), so
///   old evidence weighs less and the model keeps adapting.
/// - Each step uses the current posterior, so the order of swipes matters slightly;
///   `SwipeSession.sync(_:)` fixes the order by (timestamp, swipe id).
public struct PreferenceModel: Sendable, Codable, Equatable {
    /// The dimension D = d + k.
    public let dimension: Int
    /// The prior precision τ (per weight).
    public let priorPrecision: Double
    /// The raw score at which a like is a coin flip (the calibration's offset).
    public let offset: Double
    /// Raw-score units per logit (the calibration's scale).
    public let scale: Double
    /// The prior mean μ₀ (cold start plus feedback adjustments).
    public private(set) var priorMean: [Double]
    /// The posterior mean μ.
    public private(set) var mean: [Double]
    /// The Cholesky factor of A.
    public private(set) var factor: CholeskyFactor

    /// Creates the prior.
    ///
    /// - Parameters:
    ///   - priorMean: The cold-start weights (D values).
    ///   - priorPrecision: τ > 0.
    ///   - calibration: The logistic link (offset and scale).
    public init(priorMean: [Float], priorPrecision: Double, calibration: MatchCalibration) {
        precondition(priorPrecision > 0 && priorPrecision.isFinite, "The prior precision must be positive")
        let d = priorMean.count
        dimension = d
        self.priorPrecision = priorPrecision
        offset = calibration.offset
        scale = calibration.scale
        self.priorMean = priorMean.map(Double.init)
        mean = self.priorMean
        factor = CholeskyFactor(identityScaledBy: priorPrecision, dimension: d)
    }

    /// The posterior mean's first d + k values as Float weights, split into features and terms
    /// (any further coordinates, such as a student's bias, are left out).
    ///
    /// - Parameters:
    ///   - featureCount: d.
    ///   - termCount: k; d + k ≤ `dimension`.
    /// - Returns: The weights.
    public func weights(featureCount: Int, termCount: Int) -> PreferenceWeights {
        precondition(featureCount + termCount <= dimension, "the model has \(dimension) weights")
        return PreferenceWeights(features: mean[..<featureCount].map(Float.init),
                                 terms: mean[featureCount..<(featureCount + termCount)].map(Float.init))
    }

    /// The predicted like probability of a card.
    ///
    /// - Parameter z: The card's combined vector.
    /// - Returns: σ((zᵀμ − offset)/scale).
    /// - Complexity: O(D).
    public func likeProbability(_ z: [Double]) -> Double { likeProbability(z, itemOffset: 0) }

    /// The predicted like probability of a card whose raw score has a fixed, unlearned part.
    ///
    /// - Parameters:
    ///   - z: The card's combined vector.
    ///   - itemOffset: Added to zᵀμ (the population's effect of the item; 0 for none).
    /// - Returns: σ((zᵀμ + itemOffset − offset)/scale).
    /// - Complexity: O(D).
    public func likeProbability(_ z: [Double], itemOffset: Double) -> Double {
        let raw = zip(z, mean).reduce(0) { $0 + $1.0 * $1.1 } + itemOffset
        return 1 / (1 + exp(-(raw - offset) / scale))
    }

    /// Learns from one swipe.
    ///
    /// - Parameters:
    ///   - z: The swiped card's combined vector (D values).
    ///   - liked: Whether it was liked.
    ///   - forgetting: λ in (0, 1]: 1 keeps all evidence (rank-1 update); less first decays the
    ///     precision towards the prior (refactorization).
    ///   - weight: How many observations this one counts as (> 0; 1 for a swipe, more for a
    ///     strong signal such as a saved card): it scales both the curvature and the gradient,
    ///     the Laplace update of a weighted log-likelihood.
    ///   - itemOffset: A fixed part of the card's raw score the weights do not explain (the
    ///     population's item effect; 0 for none): the prediction learned against.
    /// - Throws: `NumericsError` for a non-finite vector, or if the decayed precision is not
    ///   positive definite; the model is unchanged.
    /// - Complexity: O(D²) with λ = 1, O(D³) otherwise.
    public mutating func observe(_ z: [Double], liked: Bool, forgetting: Double = 1, weight: Double = 1,
                                 itemOffset: Double = 0) throws(NumericsError) {
        precondition(z.count == dimension, "Observation has \(z.count) values, the model \(dimension)")
        precondition(forgetting > 0 && forgetting <= 1, "Forgetting factor must be in (0, 1]")
        precondition(weight > 0 && weight.isFinite, "Observation weight must be positive and finite")
        guard z.allSatisfy({ $0.isFinite }), itemOffset.isFinite else { throw NumericsError.nonFinite("swipe observation") }
        let p = likeProbability(z, itemOffset: itemOffset)
        let curvature = weight * max(0.05, p * (1 - p)) / (scale * scale)
        // In place: only the decay can fail, and it leaves the factor untouched when it does.
        if forgetting < 1 {
            try factor.decay(keeping: forgetting, addingIdentity: (1 - forgetting) * priorPrecision)
        }
        let root = curvature.squareRoot()
        factor.rankOneUpdate(z.map { $0 * root })
        let step = factor.solve(z.map { $0 * weight * ((liked ? 1 : 0) - p) / scale })
        for i in 0..<dimension { mean[i] += step[i] }
    }

    /// Replaces the posterior mean, keeping the precision: for the evaluation, which serves
    /// with another learner's weights through the engine's serving policy (bands and probes,
    /// probes still chosen by this model's variances).
    ///
    /// - Parameter newMean: D finite values.
    package mutating func replaceMean(with newMean: [Double]) {
        precondition(newMean.count == dimension && newMean.allSatisfy(\.isFinite), "a mean of \(dimension) finite values")
        mean = newMean
    }

    /// Shifts the prior mean by `delta` (a feedback answer); the posterior mean moves by
    /// `τ A⁻¹ δ`: the whole shift at first, less as swipes accumulate evidence.
    ///
    /// - Parameter delta: D values.
    /// - Complexity: O(D²).
    public mutating func shiftPrior(by delta: [Double]) {
        precondition(delta.count == dimension, "Prior shift has \(delta.count) values, the model \(dimension)")
        let step = factor.solve(delta.map { $0 * priorPrecision })
        for i in 0..<dimension {
            priorMean[i] += delta[i]
            mean[i] += step[i]
        }
    }

    /// The posterior variance of the score along `z`: `zᵀ A⁻¹ z`.
    ///
    /// - Parameter z: D values.
    /// - Returns: The variance.
    /// - Complexity: O(D²).
    public func variance(along z: [Double]) -> Double { factor.inverseQuadraticForm(z) }

    /// A digest of the model's exact state (the bit patterns of both means and the factor), so
    /// a replayed session can prove it reached the same model.
    ///
    /// - Complexity: O(D²).
    public var digest: String {
        var hasher = FNV1a64()
        hasher.combine(UInt64(dimension))
        for v in priorMean { hasher.combine(v.bitPattern) }
        for v in mean { hasher.combine(v.bitPattern) }
        for v in factor.packed { hasher.combine(v.bitPattern) }
        return hasher.hexDigest
    }

    /// The posterior variances along many vectors (one triangular solve for all).
    ///
    /// - Parameter vectors: D values each.
    /// - Returns: One variance per vector.
    /// - Complexity: O(D² × count).
    public func variances(along vectors: [[Double]]) -> [Double] { factor.inverseQuadraticForms(vectors) }

    /// What computes posterior variances along many vectors (`InverseQuadraticForms`): built
    /// once, it serves every batch of vectors while the model stays the same (a deck's probes),
    /// each variance the same as `variance(along:)` bit for bit.
    ///
    /// - Complexity: O(D²).
    var varianceForms: InverseQuadraticForms { InverseQuadraticForms(factor) }

    private enum CodingKeys: String, CodingKey, CaseIterable {
        case dimension, priorPrecision, offset, scale, priorMean, mean, factor
    }

    /// Decodes a model and checks it is one: every length equal to `dimension`, every value
    /// finite, a valid Cholesky factor, a positive precision and scale. A tampered model is an
    /// error here, never a memory fault or NaN later.
    ///
    /// - Parameter decoder: The decoder.
    /// - Throws: `DecodingError` naming the field.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        dimension = try c.decode(Int.self, forKey: .dimension)
        priorPrecision = try c.decode(Double.self, forKey: .priorPrecision)
        offset = try c.decode(Double.self, forKey: .offset)
        scale = try c.decode(Double.self, forKey: .scale)
        priorMean = try c.decode([Double].self, forKey: .priorMean)
        mean = try c.decode([Double].self, forKey: .mean)
        factor = try c.decode(CholeskyFactor.self, forKey: .factor)
        func fail(_ key: CodingKeys, _ detail: String) -> DecodingError {
            DecodingError.dataCorruptedError(forKey: key, in: c, debugDescription: detail)
        }
        guard (0...4_096).contains(dimension) else { throw fail(.dimension, "must be in 0...4096, got \(dimension)") }
        guard priorPrecision.isFinite, priorPrecision > 0 else { throw fail(.priorPrecision, "must be positive and finite") }
        guard offset.isFinite else { throw fail(.offset, "must be finite") }
        guard scale.isFinite, scale > 0 else { throw fail(.scale, "must be positive and finite") }
        guard priorMean.count == dimension, priorMean.allSatisfy(\.isFinite) else {
            throw fail(.priorMean, "must hold \(dimension) finite values, has \(priorMean.count)")
        }
        guard mean.count == dimension, mean.allSatisfy(\.isFinite) else {
            throw fail(.mean, "must hold \(dimension) finite values, has \(mean.count)")
        }
        guard factor.dimension == dimension else { throw fail(.factor, "has dimension \(factor.dimension), the model \(dimension)") }
    }
}
