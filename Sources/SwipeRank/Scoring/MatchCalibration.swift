import Foundation

/// Maps a raw score to a match score in [0, 1] and a letter grade.
///
/// `match = 1 / (1 + exp(−(raw − offset) / scale))`: a logistic curve, so the match score reads
/// as the probability of a like under a logistic choice model with that offset and
/// temperature. The defaults (offset 2, scale 1.5) were set from the shipped catalog: for a
/// full sample profile the median school scores raw ≈ 1.3 (match 0.39, grade F), the top 1%
/// raw ≥ 6 (match ≥ 0.93, grade A); a neutral school (raw 0) maps to 0.21.
///
/// Grades: cards served to a student are graded by `GradeScale` (quantiles of the student's own
/// match scores over a sample of the catalog); `Grade(matchScore:)` is the fixed cut below
/// (A ≥ 0.85, B ≥ 0.70, C ≥ 0.55, D ≥ 0.40, F below), which a card starts with.
public struct MatchCalibration: Sendable, Hashable, Codable {
    /// The raw score that maps to 0.5.
    public var offset: Double
    /// The temperature: raw-score units per logit.
    public var scale: Double

    /// The calibration used unless configured otherwise.
    public static let `default` = MatchCalibration(offset: 2.0, scale: 1.5)

    /// Creates a calibration.
    ///
    /// - Parameters:
    ///   - offset: The raw score that maps to 0.5.
    ///   - scale: A positive temperature.
    public init(offset: Double, scale: Double) {
        precondition(scale > 0 && scale.isFinite && offset.isFinite, "Calibration needs a positive scale and a finite offset")
        self.offset = offset
        self.scale = scale
    }

    /// The match score of a raw score.
    ///
    /// - Parameter raw: The raw score.
    /// - Returns: A value in [0, 1].
    /// - Complexity: O(1).
    public func matchScore(raw: Double) -> Double {
        1 / (1 + exp(-(raw - offset) / scale))
    }
}

/// A letter grade for a match score.
public enum Grade: String, Sendable, Hashable, Codable, CaseIterable {
    /// Match ≥ 0.85.
    case A
    /// Match ≥ 0.70.
    case B
    /// Match ≥ 0.55.
    case C
    /// Match ≥ 0.40.
    case D
    /// Below 0.40.
    case F

    /// The lowest match score of each grade, A to D.
    public static let thresholds: [(Grade, Double)] = [(.A, 0.85), (.B, 0.70), (.C, 0.55), (.D, 0.40)]

    /// The grade of a match score.
    ///
    /// - Parameter matchScore: A value in [0, 1].
    public init(matchScore: Double) {
        self = Grade.thresholds.first { matchScore >= $0.1 }?.0 ?? .F
    }
}
