import Foundation
import SwipeRankNumerics

/// The best linear fit of a student's true like probabilities in the engine's own vector space
/// — the ceiling of any learner whose scores are linear in `z = [features, terms]`, the
/// engine's included, and the oracle of the evaluation's generalization metric.
///
/// The fit is a logistic regression on soft labels over every item: weights `w` and an
/// intercept `b` minimizing the cross-entropy
/// `Σᵢ −[pᵢ log σ(zᵢᵀw + b) + (1 − pᵢ) log(1 − σ(zᵢᵀw + b))] + ridge/2 · ‖w‖²`, with `pᵢ` the
/// student's true like probability of item i. Newton's method with a backtracking line search:
/// the objective is convex, so it converges to the unique optimum (the small ridge keeps it
/// unique when columns are collinear). Only `zᵀw` matters for a ranking; the intercept soaks up
/// the overall like rate so it does not bend `w`.
public enum LinearOracle {
    /// Fits the oracle.
    ///
    /// - Parameters:
    ///   - vectors: `count × dimension` values, one item's vector after another.
    ///   - count: The number of items.
    ///   - targets: Each item's true like probability, in [0, 1].
    ///   - ridge: The L2 penalty on `w` (not on the intercept), > 0.
    ///   - maxIterations: Newton steps at most.
    /// - Returns: `w` (dimension values) and `b`.
    /// - Throws: `NumericsError` when a vector holds NaN or an infinity.
    /// - Complexity: O(count × dimension²) per Newton step; usually under 15 steps.
    public static func fit(vectors: [Double], count: Int, targets: [Double], ridge: Double = 1e-3,
                           maxIterations: Int = 50) throws(NumericsError) -> (weights: [Double], intercept: Double) {
        let d = vectors.count / max(1, count)
        precondition(vectors.count == count * d && targets.count == count, "one vector and one target per item")
        precondition(ridge > 0 && targets.allSatisfy { (0...1).contains($0) }, "a positive ridge and targets in [0, 1]")
        guard vectors.allSatisfy(\.isFinite) else { throw .nonFinite("oracle vectors") }
        let n = d + 1  // the intercept is the last coordinate
        var theta = [Double](repeating: 0, count: n)
        // The intercept starts at the logit of the mean target: the best fit with w = 0.
        let meanTarget = min(1 - 1e-9, max(1e-9, targets.reduce(0, +) / Double(max(1, count))))
        theta[d] = log(meanTarget / (1 - meanTarget))
        var margins = self.margins(vectors, count, d, theta)
        var objective = self.objective(margins, targets, theta, d, ridge)
        for _ in 0..<maxIterations {
            // Gradient and the rows scaled by √(p(1 − p)) for the Hessian.
            var gradient = [Double](repeating: 0, count: n)
            var scaled = [Double](repeating: 0, count: count * n)
            for i in 0..<count {
                let p = sigmoid(margins[i]), r = p - targets[i], s = (p * (1 - p)).squareRoot()
                for j in 0..<d {
                    let x = vectors[i * d + j]
                    gradient[j] += r * x
                    scaled[i * n + j] = s * x
                }
                gradient[d] += r
                scaled[i * n + d] = s
            }
            for j in 0..<d { gradient[j] += ridge * theta[j] }
            var hessian = gramMatrix(rows: scaled, count: count, dimension: n)
            for j in 0..<d { hessian[j * n + j] += ridge }
            hessian[d * n + d] += 1e-9 * Double(count)  // keeps the intercept's pivot positive if every p is 0 or 1
            let step = try CholeskyFactor(symmetric: hessian, dimension: n).solve(gradient)
            let decrease = zip(gradient, step).reduce(0) { $0 + $1.0 * $1.1 }
            // Converged: the Newton decrement is negligible next to the objective.
            if decrease / 2 <= 1e-12 * max(1, abs(objective)) { break }
            var t = 1.0, accepted = false
            while t > 1e-10 {
                let trial = zip(theta, step).map { $0 - t * $1 }
                let trialMargins = self.margins(vectors, count, d, trial)
                let trialObjective = self.objective(trialMargins, targets, trial, d, ridge)
                if trialObjective <= objective - 0.25 * t * decrease {
                    theta = trial
                    margins = trialMargins
                    objective = trialObjective
                    accepted = true
                    break
                }
                t /= 2
            }
            if !accepted { break }
        }
        return (Array(theta[..<d]), theta[d])
    }

    /// The gradient of the objective at a fit (zero at the optimum, up to the tolerance): for tests.
    ///
    /// - Parameters:
    ///   - weights: `w`.
    ///   - intercept: `b`.
    ///   - vectors: The items' vectors, as for `fit`.
    ///   - count: The number of items.
    ///   - targets: The like probabilities.
    ///   - ridge: The penalty used.
    /// - Returns: dimension + 1 values (the intercept's last).
    /// - Complexity: O(count × dimension).
    public static func gradient(weights: [Double], intercept: Double, vectors: [Double], count: Int, targets: [Double],
                                ridge: Double = 1e-3) -> [Double] {
        let d = weights.count
        let theta = weights + [intercept]
        let m = margins(vectors, count, d, theta)
        var g = [Double](repeating: 0, count: d + 1)
        for i in 0..<count {
            let r = sigmoid(m[i]) - targets[i]
            for j in 0..<d { g[j] += r * vectors[i * d + j] }
            g[d] += r
        }
        for j in 0..<d { g[j] += ridge * weights[j] }
        return g
    }

    static func sigmoid(_ x: Double) -> Double { 1 / (1 + exp(-x)) }

    static func margins(_ vectors: [Double], _ count: Int, _ d: Int, _ theta: [Double]) -> [Double] {
        (0..<count).map { i in
            var s = theta[d]
            for j in 0..<d { s += vectors[i * d + j] * theta[j] }
            return s
        }
    }

    /// The cross-entropy plus the penalty, with log σ computed stably for large margins.
    static func objective(_ margins: [Double], _ targets: [Double], _ theta: [Double], _ d: Int, _ ridge: Double) -> Double {
        var sum = 0.0
        for (m, y) in zip(margins, targets) {
            // −[y log σ(m) + (1 − y) log σ(−m)] = log(1 + e^m) − y·m
            let softplus = m > 0 ? m + log1p(exp(-m)) : log1p(exp(m))
            sum += softplus - y * m
        }
        for j in 0..<d { sum += 0.5 * ridge * theta[j] * theta[j] }
        return sum
    }
}
