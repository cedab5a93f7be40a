import Foundation
import SwipeRankNumerics

/// One student's log in an A/B test, as `ArmReport` reads it (`swiperank arms` builds these
/// from the service's store).
public struct ArmStudentLog: Sendable, Hashable {
    /// One answered card.
    public struct Swipe: Sendable, Hashable {
        /// A like.
        public var liked: Bool
        /// Whether the card was served as a probe.
        public var isProbe: Bool
        /// The probability it was served with (nil: not logged).
        public var propensity: Double?

        /// Creates a swipe.
        ///
        /// - Parameters:
        ///   - liked: A like.
        ///   - isProbe: A probe.
        ///   - propensity: Its serving probability, if logged.
        public init(liked: Bool, isProbe: Bool, propensity: Double?) {
            (self.liked, self.isProbe, self.propensity) = (liked, isProbe, propensity)
        }
    }

    /// The arm that served the student.
    public var arm: String
    /// Their swipes in order.
    public var swipes: [Swipe]
    /// Swipes before their first save (nil: never saved).
    public var swipesBeforeFirstSave: Int?

    /// Creates a log.
    ///
    /// - Parameters:
    ///   - arm: The arm.
    ///   - swipes: The swipes in order.
    ///   - swipesBeforeFirstSave: Swipes before the first save, or nil.
    public init(arm: String, swipes: [Swipe], swipesBeforeFirstSave: Int?) {
        (self.arm, self.swipes, self.swipesBeforeFirstSave) = (arm, swipes, swipesBeforeFirstSave)
    }
}

/// Each arm's online metrics with percentile-bootstrap intervals over students (a student's
/// swipes are not independent, so students are the resampled unit), and each arm's difference
/// from the first arm, resampling the two arms' students independently.
///
/// Metrics:
/// - `like_rate`: likes ÷ swipes, pooled over the arm's students.
/// - `organic_like_rate`: the same over cards that were not probes (what the arm chose to show).
/// - `probe_like_rate_ips`: the probes' like rate, self-normalized inverse-propensity weighted
///   (Σ like/p ÷ Σ 1/p): what the probe slots would score if probes were drawn uniformly among
///   their candidates, comparable across arms whose probe draws differ.
/// - `saved_share`: the share of students who saved a card.
/// - `swipes_to_first_save`: among those, the mean number of swipes before the first save.
public struct ArmReport: Sendable {
    /// A metric's estimate and interval (NaN when the arm has nothing to measure it on).
    public struct Estimate: Sendable, Hashable {
        /// The estimate on all the arm's students.
        public var value: Double
        /// The interval's lower bound.
        public var lower: Double
        /// The interval's upper bound.
        public var upper: Double
    }

    /// One arm.
    public struct Row: Sendable {
        /// The arm.
        public var arm: String
        /// Its students.
        public var students: Int
        /// Their swipes.
        public var swipes: Int
        /// Metric name → estimate.
        public var metrics: [String: Estimate]
        /// Metric name → this arm minus the first arm (absent for the first arm).
        public var differences: [String: Estimate]
    }

    /// The metrics, in report order.
    public static let metricNames = ["like_rate", "organic_like_rate", "probe_like_rate_ips", "saved_share", "swipes_to_first_save"]

    /// The arms in order (the first is the reference).
    public var rows: [Row]
    /// The interval's coverage.
    public var level: Double

    /// Computes the report.
    ///
    /// - Parameters:
    ///   - logs: Every student's log.
    ///   - order: The arms' order (the first is the reference); arms it does not name follow by
    ///     name. nil: by name.
    ///   - level: Coverage (0.95).
    ///   - resamples: Bootstrap resamples (≥ 1).
    ///   - seed: Seeds the resampling.
    /// - Complexity: O(resamples × swipes).
    public init(logs: [ArmStudentLog], order: [String]? = nil, level: Double = 0.95, resamples: Int = 1_000, seed: UInt64 = 1) {
        precondition(level > 0 && level < 1 && resamples >= 1, "a level in (0, 1) and at least one resample")
        self.level = level
        var byArm: [String: [ArmStudentLog]] = [:]
        for log in logs { byArm[log.arm, default: []].append(log) }
        let named = (order ?? []).filter { byArm[$0] != nil }
        let arms = named + byArm.keys.filter { !named.contains($0) }.sorted()
        var rng = SplitMix64(seed: seed)
        // Each arm's resampled statistics, drawn once and shared by its row and its difference.
        var draws: [String: [String: [Double]]] = [:]
        for arm in arms {
            let students = byArm[arm]!
            var perMetric = [String: [Double]]()
            for _ in 0..<resamples {
                let sample = (0..<students.count).map { _ in students[Int.random(in: 0..<students.count, using: &rng)] }
                for (name, value) in Self.statistics(sample) { perMetric[name, default: []].append(value) }
            }
            draws[arm] = perMetric
        }
        func interval(_ values: [Double], estimate: Double) -> Estimate {
            let finite = values.filter { $0.isFinite }.sorted()
            guard estimate.isFinite, !finite.isEmpty else { return Estimate(value: estimate, lower: .nan, upper: .nan) }
            let alpha = (1 - level) / 2
            let lo = finite[Int((alpha * Double(finite.count)).rounded(.down))]
            let hi = finite[min(finite.count - 1, Int(((1 - alpha) * Double(finite.count)).rounded(.down)))]
            return Estimate(value: estimate, lower: lo, upper: hi)
        }
        let reference = Self.statistics(byArm[arms.first ?? ""] ?? [])
        var rows: [Row] = []
        for arm in arms {
            let students = byArm[arm]!
            let full = Self.statistics(students)
            var metrics: [String: Estimate] = [:]
            var differences: [String: Estimate] = [:]
            for name in Self.metricNames {
                metrics[name] = interval(draws[arm]![name]!, estimate: full[name]!)
                if arm != arms[0] {
                    let diffs = zip(draws[arm]![name]!, draws[arms[0]]![name]!).map { $0 - $1 }
                    differences[name] = interval(diffs, estimate: full[name]! - reference[name]!)
                }
            }
            rows.append(Row(arm: arm, students: students.count, swipes: students.reduce(0) { $0 + $1.swipes.count },
                            metrics: metrics, differences: differences))
        }
        self.rows = rows
    }

    /// Every metric on a set of students (NaN where it has nothing to measure).
    static func statistics(_ students: [ArmStudentLog]) -> [String: Double] {
        var (likes, swipes, organicLikes, organic, weightedLikes, weights) = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
        var savers = 0.0, toSave = 0.0
        for s in students {
            for swipe in s.swipes {
                swipes += 1
                if swipe.liked { likes += 1 }
                if swipe.isProbe {
                    if let p = swipe.propensity, p > 0 {
                        weights += 1 / p
                        if swipe.liked { weightedLikes += 1 / p }
                    }
                } else {
                    organic += 1
                    if swipe.liked { organicLikes += 1 }
                }
            }
            if let n = s.swipesBeforeFirstSave {
                savers += 1
                toSave += Double(n)
            }
        }
        func ratio(_ a: Double, _ b: Double) -> Double { b > 0 ? a / b : .nan }
        return ["like_rate": ratio(likes, swipes), "organic_like_rate": ratio(organicLikes, organic),
                "probe_like_rate_ips": ratio(weightedLikes, weights), "saved_share": ratio(savers, Double(students.count)),
                "swipes_to_first_save": ratio(toSave, savers)]
    }

    /// The report as a text table: per arm, each metric with its interval, then each arm's
    /// difference from the first.
    public var table: String {
        func format(_ e: Estimate?) -> String {
            guard let e, e.value.isFinite else { return "—" }
            let digits = abs(e.value) >= 10 ? 1 : 3
            func f(_ x: Double) -> String { x.isFinite ? String(format: "%.\(digits)f", x) : "?" }
            return "\(f(e.value)) [\(f(e.lower)), \(f(e.upper))]"
        }
        var lines = ["arm\tstudents\tswipes\t" + Self.metricNames.joined(separator: "\t")]
        for row in rows {
            lines.append("\(row.arm)\t\(row.students)\t\(row.swipes)\t" + Self.metricNames.map { format(row.metrics[$0]) }.joined(separator: "\t"))
        }
        if rows.count > 1 {
            lines.append("")
            lines.append("difference from \(rows[0].arm) (\(Int((level * 100).rounded()))% bootstrap interval over students)")
            for row in rows.dropFirst() {
                lines.append("\(row.arm) − \(rows[0].arm)\t\t\t" + Self.metricNames.map { format(row.differences[$0]) }.joined(separator: "\t"))
            }
        }
        return lines.joined(separator: "\n")
    }
}
