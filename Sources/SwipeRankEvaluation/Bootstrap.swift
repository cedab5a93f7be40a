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
        interval(values, statistic: mean, level: level, resamples: resamples, using: &generator)
    }

    /// The (lower, upper) percentile interval of any statistic of `values`.
    ///
    /// - Parameters:
    ///   - values: Per-unit values (not empty).
    ///   - statistic: What to estimate, e.g. `Bootstrap.median`.
    ///   - level: Coverage, e.g. 0.95.
    ///   - resamples: How many resamples.
    ///   - generator: The randomness.
    /// - Returns: The interval.
    /// - Complexity: O(resamples × cost of the statistic + resamples log resamples).
    public static func interval(_ values: [Double], statistic: ([Double]) -> Double, level: Double = 0.95,
                                resamples: Int = 1000,
                                using generator: inout some RandomNumberGenerator) -> (lower: Double, upper: Double) {
        precondition(!values.isEmpty && level > 0 && level < 1 && resamples > 0, "bootstrap needs values, a level in (0, 1) and resamples")
        let n = values.count
        var estimates: [Double] = []
        estimates.reserveCapacity(resamples)
        var sample = [Double](repeating: 0, count: n)
        for _ in 0..<resamples {
            for i in 0..<n { sample[i] = values[Int.random(in: 0..<n, using: &generator)] }
            estimates.append(statistic(sample))
        }
        estimates.sort()
        let alpha = (1 - level) / 2
        let lo = estimates[Int((alpha * Double(resamples)).rounded(.down))]
        let hi = estimates[min(resamples - 1, Int(((1 - alpha) * Double(resamples)).rounded(.down)))]
        return (lo, hi)
    }

    /// The mean (summed in order, so a resample's mean is reproducible).
    ///
    /// - Parameter values: Not empty.
    public static func mean(_ values: [Double]) -> Double { values.reduce(0, +) / Double(values.count) }

    /// The median (the mean of the two middle values for an even count; infinities sort last).
    ///
    /// - Parameter values: Not empty.
    /// - Complexity: O(n log n).
    public static func median(_ values: [Double]) -> Double {
        let sorted = values.sorted()
        let mid = sorted.count / 2
        return sorted.count % 2 == 1 ? sorted[mid] : (sorted[mid - 1] == sorted[mid] ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2)
    }
}
