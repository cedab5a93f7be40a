import Foundation
import SwipeRank
import SwipeRankColleges
import SwipeRankNumerics

/// Families of simulated college students built to catch the engine's blind spots: none is in
/// the engine's model class, and each stresses what a learner of one student's features alone
/// cannot know. All start from `HiddenTasteStudent` (cliffs, saturation, a must-have major, a
/// private taste per school) and add one thing. A family's *world* — what its students share —
/// is drawn once from `worldSeed`, so the population a prior and factors are fitted on and the
/// students evaluated live in the same world, while each student's own draws come from their
/// generator.
public enum TasteFamily: String, Sendable, Hashable, CaseIterable {
    /// Peer-driven taste: eight hidden taste groups over a hidden 6-dimensional "vibe" of every
    /// school that no feature shows; a student leans to their group's centre (plus their own
    /// deviation, half as large), and that weighs twice their `HiddenTasteStudent` utility. What
    /// other students of one's group liked is the best evidence; features say little.
    case peerGroups = "peer_groups"
    /// Herd taste: a hidden "buzz" per school, shared by everyone (what is in fashion, not in the
    /// data), weighs as much as the student's own `HiddenTasteStudent` utility.
    case herd
    /// Inconsistent swipers: `HiddenTasteStudent` utility, but 30% of answers are coin flips.
    case noisy
    /// Tastes that drift: `HiddenTasteStudent` utility for the first half of the swipes, then a
    /// second, independent draw of it for the same stated profile (a student who changes their
    /// mind about budget, distance, prestige and every private taste): `driftModel` gives it.
    case drifting

    /// The taste model of this family over a school catalog.
    ///
    /// - Parameters:
    ///   - schools: The catalog.
    ///   - worldSeed: Seeds what the family's students share (groups, vibes, buzz).
    /// - Returns: Every school's like probability for a student, drawn with the generator.
    /// - Complexity: O(N) per student (O(N × 6) for peer groups).
    public func tasteModel(schools: SchoolCatalog, worldSeed: UInt64) -> SimulationEvaluator<SchoolMatcher>.TasteModel {
        let n = schools.catalog.count, dims = 6, groups = 8
        var world = SplitMix64(seed: worldSeed)
        let vibes = (0..<(n * dims)).map { _ in world.nextGaussian() }
        let centres = (0..<(groups * dims)).map { _ in world.nextGaussian() }
        let buzz = (0..<n).map { _ in world.nextGaussian() }
        let family = self
        return { student, generator in
            let own = Self.standardized(HiddenTasteStudent(profile: student.profile, schools: schools, using: &generator).utility)
            var utility = own
            switch family {
            case .peerGroups:
                let g = Int(generator.next() % UInt64(groups))
                let u = (0..<dims).map { centres[g * dims + $0] + 0.5 * generator.nextGaussian() }
                let shared = Self.standardized((0..<n).map { row in (0..<dims).reduce(0.0) { $0 + vibes[row * dims + $1] * u[$1] } })
                utility = zip(own, shared).map { $0 + 2 * $1 }
            case .herd:
                utility = zip(own, buzz).map { $0 + $1 }
            case .noisy, .drifting:
                break
            }
            let scaled = Self.standardized(utility)
            let threshold = scaled.sorted()[min(n - 1, Int(0.75 * Double(n)))]
            let lapse = family == .noisy ? 0.3 : 0.08
            return scaled.map { lapse * 0.5 + (1 - lapse) * (0.02 + 0.96 / (1 + exp(-($0 - threshold) / 0.3))) }
        }
    }

    /// The taste a `.drifting` student changes to (nil for the other families): another draw of
    /// the same model, so the generator gives it its own private taste and hidden parameters.
    ///
    /// - Parameters:
    ///   - schools: The catalog.
    ///   - worldSeed: As for `tasteModel`.
    /// - Returns: The second taste model, or nil.
    public func driftModel(schools: SchoolCatalog, worldSeed: UInt64) -> SimulationEvaluator<SchoolMatcher>.TasteModel? {
        self == .drifting ? tasteModel(schools: schools, worldSeed: worldSeed) : nil
    }

    /// Values shifted and scaled to mean 0 and standard deviation 1 (unchanged if constant).
    static func standardized(_ values: [Double]) -> [Double] {
        guard !values.isEmpty else { return values }
        let mean = values.reduce(0, +) / Double(values.count)
        let sd = (values.reduce(0) { $0 + ($1 - mean) * ($1 - mean) } / Double(values.count)).squareRoot()
        return sd > 0 ? values.map { ($0 - mean) / sd } : values.map { $0 - mean }
    }
}
