import SwipeRankNumerics

/// Percentile bootstrap confidence intervals of a mean, seeded.
public enum Bootstrap {
    /// The (lower, upper) percentile interval of the mean of `values`.
    ///
    /// - Parameters:
    ///   - values: Per-student values (not empty).
    ///   - level: Coverage, e.g. 0.95.
    ///   - resamples: How many resamples.
    ///   - generator: The randomness.
    /// - Returns: The interval.
    /// - Complexity: O(resamples × n + resamples log resamples).
    public static func meanInterval(_ values: [Double], level: Double = 0.95, resamples: Int = 1000,
                                    using generator: inout some RandomNumberGenerator) -> (lower: Double, upper: Double) {
        precondition(!values.isEmpty && level > 0 && level < 1 && resamples > 0, "bootstrap needs values, a level in (0, 1) and resamples")
        let n = values.count
        var means: [Double] = []
        means.reserveCapacity(resamples)
        for _ in 0..<resamples {
            var sum = 0.0
            for _ in 0..<n { sum += values[Int.random(in: 0..<n, using: &generator)] }
            means.append(sum / Double(n))
        }
        means.sort()
        let alpha = (1 - level) / 2
        let lo = means[Int((alpha * Double(resamples)).rounded(.down))]
        let hi = means[min(resamples - 1, Int(((1 - alpha) * Double(resamples)).rounded(.down)))]
        return (lo, hi)
    }
}
