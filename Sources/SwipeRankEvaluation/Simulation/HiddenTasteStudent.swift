import Foundation
import SwipeRank
import SwipeRankColleges
import SwipeRankNumerics

/// A simulated college applicant whose taste is *not* in the engine's model class, so an
/// evaluation with it cannot flatter the engine: the engine scores schools with a linear model
/// over its features and profile terms, while this student's utility has cliffs, saturation,
/// a must-have and a private taste per school.
///
/// Utility of school s (all terms in "utility points"; the profile is what the engine sees,
/// the real values differ):
/// - **budget cliff**: real budget B = stated budget × U(0.85, 1.2) (no stated budget:
///   U(15, 45) k$). Cost c (net price for the home state) ≤ B adds 0.6 × (1 − c/B); above B
///   it subtracts 2.5 + 2 × min(1, (c − B)/B); an unknown cost −0.3.
/// - **distance that saturates**: −1.5 × (1 − e^(−d/L)) with L = stated maximum distance ×
///   U(0.5, 1.5).
/// - **a must-have major**: half of the students must have their first intended major; a
///   school without it −3.
/// - **prestige that saturates**: p × tanh(3 × (1 − admission rate)), p ~ N(0.3 + 0.6 ×
///   academic priority, 0.4).
/// - **academic fit**: −0.8 × tanh(|SAT − school's average| / 150) when both are known.
/// - **size**: −0.5 × tanh(|ln enrollment − μ|), μ ~ N(8.3, 1.2) (about 4,000 students).
/// - **idiosyncratic taste**: 0.8 × N(0, 1) per (student, school): what no feature shows.
/// - **contradictions**: 15% of students state a profile that contradicts their taste: their
///   real budget is 40–70% of the stated one and distance hardly matters (L × 4).
///
/// Answers: P(like) = 0.04 + 0.92 × σ((u − t) / 0.35), where t is the student's own 75th
/// percentile of utility over the catalog (everyone likes about a quarter of schools; 8% of
/// answers are lapses, a coin flip whatever the school).
public struct HiddenTasteStudent: Sendable {
    /// The profile the student states (what the engine sees).
    public let profile: StudentProfile
    /// Hidden utility of every school, by catalog row.
    public let utility: [Double]
    /// The utility at which P(like) crosses 0.5.
    public let threshold: Double
    /// Whether the stated profile contradicts the real taste.
    public let contradicts: Bool

    /// Draws a student's hidden taste around a stated profile.
    ///
    /// - Parameters:
    ///   - profile: The stated profile.
    ///   - schools: The catalog.
    ///   - generator: The randomness (the per-school taste is drawn from it too).
    /// - Complexity: O(N) over the catalog's schools.
    public init(profile: StudentProfile, schools: SchoolCatalog, using generator: inout SplitMix64) {
        self.profile = profile
        let catalog = schools.catalog
        contradicts = Double.random(in: 0..<1, using: &generator) < 0.15
        let stated = profile.annualBudget ?? Double.random(in: 15_000...45_000, using: &generator)
        let budget = stated * (contradicts ? Double.random(in: 0.4...0.7, using: &generator)
                                           : Double.random(in: 0.85...1.2, using: &generator))
        var scale = profile.maxDistanceMiles * Double.random(in: 0.5...1.5, using: &generator)
        if contradicts { scale *= 4 }
        let mustHave: String? = Double.random(in: 0..<1, using: &generator) < 0.5 ? profile.intendedMajors.first : nil
        let mustHaveCodes: [String]
        if let mustHave, let resolved = try? schools.majors.resolve(mustHave) { mustHaveCodes = resolved.cipCodes } else { mustHaveCodes = [] }
        let prestige = 0.3 + 0.6 * profile.academicPriority + 0.4 * generator.nextGaussian()
        let sizeCenter = 8.3 + 1.2 * generator.nextGaussian()
        let admission = catalog.numericValues[catalog.numericAttribute(named: "admission_rate")!]
        let enrollment = catalog.numericValues[catalog.numericAttribute(named: "undergrad_enrollment")!]
        let satAverage = catalog.numericValues[catalog.numericAttribute(named: "sat_avg")!]
        var distances = [Float]()
        if let home = profile.home { catalog.distancesMiles(from: home, into: &distances) }

        var utility = [Double](repeating: 0, count: catalog.count)
        for row in 0..<catalog.count {
            var u = 0.0
            if let cost = schools.estimatedCost(row: row, homeState: profile.homeState) {
                u += cost <= budget ? 0.6 * (1 - cost / budget) : -(2.5 + 2 * min(1, (cost - budget) / budget))
            } else {
                u -= 0.3
            }
            if !distances.isEmpty, distances[row].isFinite {
                u -= 1.5 * (1 - exp(-Double(distances[row]) / max(1, scale)))
            }
            if !mustHaveCodes.isEmpty && !mustHaveCodes.contains(where: { schools.majors.programs[row].contains($0) }) {
                u -= 3
            }
            u += prestige * tanh(3 * (1 - (admission[row] ?? 0.7)))
            if let sat = profile.sat, let average = satAverage[row] {
                u -= 0.8 * tanh(abs(sat - average) / 150)
            }
            if let e = enrollment[row], e > 0 { u -= 0.5 * tanh(abs(log(e) - sizeCenter)) }
            u += 0.8 * generator.nextGaussian()
            utility[row] = u
        }
        self.utility = utility
        let sorted = utility.sorted()
        threshold = sorted[min(sorted.count - 1, Int(0.75 * Double(sorted.count)))]
    }

    /// The probability that the student likes the school in `row`.
    ///
    /// - Parameter row: A catalog row.
    /// - Returns: P(like), in 0.04…0.96.
    public func likeProbability(row: Int) -> Double {
        0.04 + 0.92 / (1 + exp(-(utility[row] - threshold) / 0.35))
    }

    /// Draws the student's answer on a school.
    ///
    /// - Parameters:
    ///   - row: A catalog row.
    ///   - generator: The randomness.
    /// - Returns: Like or dislike.
    public func swipe(row: Int, using generator: inout SplitMix64) -> SwipeAction {
        Double.random(in: 0..<1, using: &generator) < likeProbability(row: row) ? .like : .dislike
    }
}
