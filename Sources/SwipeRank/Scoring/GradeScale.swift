import SwipeRankNumerics

/// Letter grades by where a card's match score falls among this student's match scores over
/// the catalog: a grade that separates cards, whatever the student's scores look like.
///
/// The rule: **A** is the top 2% of the catalog for this student, **B** the rest of the top 10%,
/// **C** the rest of the top 25%, **D** the rest of the top half and **F** the bottom half
/// (`cumulativePercent`, 2/10/25/50). The tiers are narrow at the top because a deck is the top
/// of the ranking: with 10/30/60/80 a 40-card session of the shipped students showed two grades,
/// A and B. A
/// grade's threshold is the lowest match score within its top share of a sample of the catalog:
/// sorted best first, the sample's score at position ⌈p·m/100⌉ (1-based) for share p% of m
/// sampled rows. A card gets the best grade whose threshold its match score reaches, so the
/// grade is monotone in the match score, and ties share a grade.
///
/// The sample is fixed and deterministic: up to `sampleLimit` (1,024) evenly spaced catalog rows
/// (`sampleRows(catalogCount:)`; every row of a smaller catalog), scored with the student's
/// current weights. Building a scale is O(sample × D) and O(sample), not O(N), so it
/// costs the same on a catalog of 10⁷ items as on one of 2,000, where a deck no longer scores
/// every item. On a catalog of more than 1,024 items the shares hold for the sample, and so
/// for the catalog up to sampling error.
///
/// A fixed cut on the match score (the earlier rule, `Grade(matchScore:)`) gave almost every
/// card of a deck an A: a deck is the top of the ranking, and the logistic calibration puts
/// the top few percent of a full profile's scores above 0.85.
public struct GradeScale: Sendable, Hashable {
    /// Per grade A…D, the percentage of the catalog at or above it (F is the rest).
    public static let cumulativePercent: [(grade: Grade, percent: Int)] = [(.A, 2), (.B, 10), (.C, 25), (.D, 50)]
    /// The most catalog rows sampled.
    public static let sampleLimit = 1024

    /// The lowest match score of A, B, C and D, best first (non-increasing).
    public let thresholds: [Double]

    /// A scale from the match scores of the sampled rows.
    ///
    /// - Parameter sampleMatchScores: Match scores of the sample (any order); an empty sample
    ///   grades every card F.
    /// - Complexity: O(m): the four order statistics are selected, not sorted for.
    public init(sampleMatchScores: [Double]) {
        self.init(sample: sampleMatchScores) { $0 }
    }

    /// A scale from a sample of values that a non-decreasing `matchScore` maps to match scores
    /// (a raw score and its calibration): the k-th best match score is the calibration of the
    /// k-th best value, so only the four thresholds are calibrated, and no sample is sorted.
    /// A deck builds one, and sorting and calibrating 1,024 scores was a fifth of its cost.
    ///
    /// - Parameters:
    ///   - sample: The sample's values (any order).
    ///   - matchScore: A non-decreasing map from a value to its match score.
    /// - Complexity: O(m) expected.
    init(sample: [Double], matchScore: (Double) -> Double) {
        self.init(sample: sample, range: nil, matchScore: matchScore)
    }

    /// `init(sample:matchScore:)` with the sample's least and greatest known (no NaN in it).
    init(sample: [Double], range: (least: Double, greatest: Double)?, matchScore: (Double) -> Double) {
        let m = sample.count
        guard m > 0 else {
            thresholds = GradeScale.cumulativePercent.map { _ in .infinity }
            return
        }
        let positions = GradeScale.cumulativePercent.map { entry in
            min(max((entry.percent * m + 99) / 100, 1), m) - 1  // ⌈p·m/100⌉ in integers, 0-based
        }
        // The four order statistics by branch-free partitions (`valuesAtDescendingRanks`):
        // quickselect's comparisons, taken either way at random, lost about a sixth of a deck's
        // time to mispredicted branches.
        thresholds = valuesAtDescendingRanks(positions, of: sample, range: range).map(matchScore)
    }

    /// The sampled rows of a catalog: `min(N, sampleLimit)` evenly spaced rows, ⌊i·N/m⌋.
    ///
    /// - Parameter catalogCount: N.
    /// - Returns: Distinct rows in increasing order.
    public static func sampleRows(catalogCount: Int) -> [Int] {
        let m = min(max(catalogCount, 0), sampleLimit)
        return (0..<m).map { $0 * catalogCount / m }
    }

    /// The grade of a match score.
    ///
    /// - Parameter matchScore: A match score in [0, 1].
    /// - Returns: The best grade whose threshold it reaches, else F.
    public func grade(matchScore: Double) -> Grade {
        for (entry, threshold) in zip(GradeScale.cumulativePercent, thresholds) where matchScore >= threshold {
            return entry.grade
        }
        return .F
    }
}

extension Recommendation {
    /// Sets the grade from a student's scale (cards are built with the fixed-cut grade).
    ///
    /// - Parameter scale: The student's scale.
    public mutating func grade(by scale: GradeScale) { grade = scale.grade(matchScore: matchScore) }
}

extension MatchCalibration {
    /// The match score a card shows: `matchScore(raw:)` rounded to four decimals (more would be
    /// noise from Float), so a scale's thresholds compare like with like.
    ///
    /// - Parameter raw: The raw score.
    /// - Returns: The rounded match score.
    public func cardMatchScore(raw: Double) -> Double { (matchScore(raw: raw) * 10_000).rounded() / 10_000 }
}

extension Matcher {
    /// The grade scale of a student under `weights`: the sampled rows scored one by one
    /// (features · weights + terms · term weights, plus `itemOffset` of the row when given),
    /// calibrated like a card.
    ///
    /// - Parameters:
    ///   - student: The student.
    ///   - weights: The weights the cards are scored with.
    ///   - itemOffset: A row's offset to its match raw score (a population's item effect), if any.
    /// - Returns: The scale.
    /// - Complexity: O(sample × D), sample ≤ `GradeScale.sampleLimit`.
    public func gradeScale(student: Student, weights: PreferenceWeights, itemOffset: ((Int) -> Double)? = nil) -> GradeScale {
        let features = catalog.featureRows, terms = student.terms  // generic getters, read once
        let d = catalog.dimension, k = min(weights.terms.count, terms.names.count)
        let calibration = calibration
        let scores = GradeScale.sampleRows(catalogCount: catalog.count).map { row -> Double in
            var raw: Float = 0
            for j in 0..<d { raw += features[row, j] * weights.features[j] }
            for t in 0..<k { raw += terms[term: t, item: row] * weights.terms[t] }
            return Double(raw) + (itemOffset?(row) ?? 0)
        }
        return GradeScale(sample: scores) { calibration.cardMatchScore(raw: $0) }
    }

    /// The grade scale from every item's match raw score already computed (`raw[row] −
    /// matchOffsets[row]`): the same sample, read instead of scored.
    ///
    /// - Complexity: O(sample).
    package func gradeScale(raw: [Float], matchOffsets: [Float]?) -> GradeScale {
        let calibration = calibration
        // `sampleRows(catalogCount:)`'s rows, ⌊i·N/m⌋, read in place: a deck builds a scale, and
        // the row list was an array built and freed every time.
        let n = raw.count, m = min(n, GradeScale.sampleLimit)
        guard m > 0 else { return GradeScale(sample: []) { calibration.cardMatchScore(raw: $0) } }
        // The rows ⌊i·N/m⌋ read in place (`gradeSample`: on eight lanes where the CPU has AVX),
        // their range found as they are read, for the selection's bins.
        let (sample, range) = gradeSample(raw, offsets: matchOffsets ?? [], count: m)
        return GradeScale(sample: sample, range: range) { calibration.cardMatchScore(raw: $0) }
    }
}

extension SwipeEngine {
    /// The grade scale of a session's student under `weights`, with the population's item
    /// effects (what a card's match score includes; exposure effects are left out, as on cards).
    ///
    /// - Complexity: O(sample × D).
    public func gradeScale(weights: PreferenceWeights, student: M.Student) -> GradeScale {
        guard let itemOffsets else { return matcher.gradeScale(student: student, weights: weights) }
        return matcher.gradeScale(student: student, weights: weights, itemOffset: { Double(itemOffsets[$0]) })
    }
}
