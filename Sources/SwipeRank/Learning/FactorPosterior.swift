import Foundation
import SwipeRankNumerics

/// A student's posterior over the collaborative part of their taste, `u'` in the whitened
/// space of `CollaborativeFactors`: `N(mean, A⁻¹)`, starting at `N(0, I)`.
///
/// Each swipe is a Gaussian observation of the affinity `ṽ·u'` with precision `c` (the file's
/// confidence of a like or of a dislike) and target `(1 + α)/α` for a like, 0 for a dislike —
/// the implicit-feedback fit's own objective for that student, so after any swipes the mean
/// equals the fit's closed-form solve for them (`A = I + Σ c ṽṽᵀ`, `mean = A⁻¹ Σ c y ṽ`),
/// whatever their order. Per swipe: `A ← A + c ṽṽᵀ` (a rank-1 update of the Cholesky factor)
/// and `mean ← mean + A⁻¹ ṽ c (y − ṽ·mean)`: O(f²).
///
/// Kept beside the feature model (`PreferenceModel`) rather than inside it: the feature model's
/// likelihood is a like against a dislike of a card shown, this one's is what a student engages
/// with among everything; and the stable phase's forgetting (O(D³) per swipe) stays on the
/// feature weights, where tastes drift, not on the collaborative part, which the population fit
/// re-estimates.
public struct FactorPosterior: Sendable, Hashable, Codable {
    /// f.
    public let dimension: Int
    /// The posterior mean of u'.
    public private(set) var mean: [Double]
    /// The Cholesky factor of the precision A.
    public private(set) var factor: CholeskyFactor
    /// Swipes observed (with a positive confidence).
    public private(set) var observations: Int

    /// The prior `N(0, I)`.
    ///
    /// - Parameter dimension: f ≥ 1.
    public init(dimension: Int) {
        precondition(dimension >= 1, "a factor posterior needs at least one factor")
        self.dimension = dimension
        mean = [Double](repeating: 0, count: dimension)
        factor = CholeskyFactor(identityScaledBy: 1, dimension: dimension)
        observations = 0
    }

    /// Whether any swipe has moved the mean (before one, every affinity is 0).
    public var hasEvidence: Bool { observations > 0 }

    /// The predicted affinity `ṽ·mean`.
    ///
    /// - Parameter v: A whitened item factor.
    /// - Returns: The affinity.
    public func affinity(_ v: [Double]) -> Double { zip(v, mean).reduce(0) { $0 + $1.0 * $1.1 } }

    /// The posterior variance of the affinity, `ṽᵀA⁻¹ṽ`.
    ///
    /// - Parameter v: A whitened item factor.
    /// - Returns: The variance.
    /// - Complexity: O(f²).
    public func variance(along v: [Double]) -> Double { factor.inverseQuadraticForm(v) }

    /// Learns from one swipe.
    ///
    /// - Parameters:
    ///   - v: The card's whitened factor (f values).
    ///   - liked: Whether it was liked.
    ///   - confidence: α of a like (> 0).
    ///   - dislikeConfidence: The confidence of a dislike (≥ 0; 0: a dislike teaches nothing).
    /// - Throws: `NumericsError.nonFinite` for a non-finite vector (the posterior unchanged).
    /// - Complexity: O(f²).
    public mutating func observe(_ v: [Double], liked: Bool, confidence: Double, dislikeConfidence: Double) throws(NumericsError) {
        precondition(v.count == dimension, "a factor of \(v.count) values, the posterior has \(dimension)")
        precondition(confidence > 0 && dislikeConfidence >= 0, "confidences must be positive (a like) and not negative (a dislike)")
        guard v.allSatisfy(\.isFinite) else { throw .nonFinite("item factor") }
        let c = liked ? confidence : dislikeConfidence
        guard c > 0 else { return }
        let target = liked ? (1 + confidence) / confidence : 0
        let residual = target - affinity(v)
        let root = c.squareRoot()
        factor.rankOneUpdate(v.map { $0 * root })
        let step = factor.solve(v.map { $0 * c * residual })
        for i in 0..<dimension { mean[i] += step[i] }
        observations += 1
    }

    /// A digest of the exact state (bit patterns), so a replayed session proves it matches.
    public var digest: String {
        var hasher = FNV1a64()
        hasher.combine(UInt64(dimension))
        hasher.combine(UInt64(observations))
        for v in mean { hasher.combine(v.bitPattern) }
        for v in factor.packed { hasher.combine(v.bitPattern) }
        return hasher.hexDigest
    }

    private enum CodingKeys: String, CodingKey, CaseIterable {
        case dimension, mean, factor, observations
    }

    /// Decodes a posterior and checks it: lengths equal to `dimension`, finite values, a
    /// factor of that dimension, a non-negative count.
    ///
    /// - Parameter decoder: The decoder.
    /// - Throws: `DecodingError` naming the field.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        func fail(_ key: CodingKeys, _ detail: String) -> DecodingError {
            DecodingError.dataCorruptedError(forKey: key, in: c, debugDescription: detail)
        }
        dimension = try c.decode(Int.self, forKey: .dimension)
        guard (1...1_024).contains(dimension) else { throw fail(.dimension, "must be in 1...1024, got \(dimension)") }
        mean = try c.decode([Double].self, forKey: .mean)
        guard mean.count == dimension, mean.allSatisfy(\.isFinite) else { throw fail(.mean, "must hold \(dimension) finite values") }
        factor = try c.decode(CholeskyFactor.self, forKey: .factor)
        guard factor.dimension == dimension else { throw fail(.factor, "has dimension \(factor.dimension), the posterior \(dimension)") }
        observations = try c.decode(Int.self, forKey: .observations)
        guard observations >= 0 else { throw fail(.observations, "must not be negative") }
    }
}
