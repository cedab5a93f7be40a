import Foundation
import SwipeRank
import SwipeRankColleges
import SwipeRankNumerics

/// A simulated student with hidden true preferences, who answers cards by a logistic choice
/// model: `P(like) = σ((zᵀw* − offset) / scale)` with the engine's calibration, where `w*` is
/// the hidden weight vector over the combined features `[x, r]` and `z` the card's vector.
///
/// The hidden weights are the cold start of the student's own profile, changed the way real
/// students differ from what they state: a few things matter much more or less than the
/// profile says (`deviation` × N(0, 1) on 8 weights drawn from the ones a person has opinions
/// on: the columns of the `opinionGroups` and every student term — for colleges
/// `schoolOpinionGroups`: selectivity, SAT, enrollment, size bands, completion, earnings, net
/// price, control, setting), and everything else a little (0.15 × N(0, 1) on every weight).
public struct SimulatedStudent<M: Matcher>: Sendable {
    /// The student's profile.
    public let profile: M.Profile
    /// The hidden true weights (D values).
    public let hiddenWeights: [Double]
    /// The cold-start weights the engine starts from (D values).
    public let priorWeights: [Double]

    /// Creates a student with hidden weights.
    ///
    /// - Parameters:
    ///   - profile: The profile.
    ///   - engine: The engine (for the cold start and the catalog).
    ///   - deviation: Standard deviation of the hidden deviation per weight.
    ///   - opinionGroups: Feature groups eligible for a strong opinion; nil: every group
    ///     (missing-value indicators never).
    ///   - generator: The randomness.
    /// - Throws: `DataError` for an invalid profile.
    public init(profile: M.Profile, engine: SwipeEngine<M>, deviation: Double, opinionGroups: Set<String>?,
                using generator: inout SplitMix64) throws(DataError) {
        self.profile = profile
        let student = try engine.matcher.student(profile)
        let prior = engine.matcher.coldStartWeights(for: student).combined.map(Double.init)
        priorWeights = prior
        var hidden = prior.map { $0 + 0.15 * generator.nextGaussian() }
        let catalog = engine.matcher.catalog
        let opinions = catalog.columns.indices.filter {
            opinionGroups?.contains(catalog.columns[$0].group) ?? (catalog.columns[$0].role != .missingIndicator)
        } + (0..<engine.matcher.termNames.count).map { catalog.dimension + $0 }
        for j in opinions.shuffled(using: &generator).prefix(8) { hidden[j] += deviation * generator.nextGaussian() }
        hiddenWeights = hidden
    }


    /// The probability that the student likes the school in `row`.
    ///
    /// - Parameters:
    ///   - row: A catalog row.
    ///   - session: The student's session (for the combined vector).
    /// - Returns: P(like).
    public func likeProbability(row: Int, session: SwipeSession<M>) -> Double {
        let z = session.combinedVector(row: row)
        let raw = zip(z, hiddenWeights).reduce(0) { $0 + $1.0 * $1.1 }
        return session.engine.matcher.calibration.matchScore(raw: raw)
    }

    /// Draws the student's swipe on a card.
    ///
    /// - Parameters:
    ///   - row: A catalog row.
    ///   - session: The session.
    ///   - generator: The randomness.
    /// - Returns: Like or dislike.
    public func swipe(row: Int, session: SwipeSession<M>, using generator: inout SplitMix64) -> SwipeAction {
        Double.random(in: 0..<1, using: &generator) < likeProbability(row: row, session: session) ? .like : .dislike
    }

    /// How the student answers a feedback prompt: the one offered option whose adjustment
    /// points most towards their hidden weights from the session's current ones, or none if
    /// every option points away.
    ///
    /// - Parameters:
    ///   - prompt: The prompt.
    ///   - session: The session.
    /// - Returns: Zero or one option.
    public func answer(_ prompt: FeedbackPrompt, session: SwipeSession<M>) -> [FeedbackOption] {
        guard let row = session.engine.matcher.catalog.row(of: prompt.cardID) else { return [] }
        let gap = zip(hiddenWeights, session.model.mean).map { $0 - $1 }
        let scored = prompt.options.map { option in
            (option, zip(session.engine.adjustment(for: option, row: row), gap).reduce(0) { $0 + $1.0 * $1.1 })
        }
        guard let best = scored.max(by: { $0.1 < $1.1 }), best.1 > 0 else { return [] }
        return [best.0]
    }
}

/// College-specific simulation inputs.
public enum SchoolSimulation {
    /// Feature groups of the college catalog whose weights a simulated student has strong
    /// opinions about (with the four student terms).
    public static let opinionGroups: Set<String> = ["selectivity", "academics", "size", "outcomes", "earnings", "cost", "control", "setting"]

    /// Undergraduate enrollment per school (at least 1): the popularity baseline's order and
    /// novelty's base.
    ///
    /// - Parameter schools: The catalog.
    /// - Returns: One value per row.
    public static func popularity(_ schools: SchoolCatalog) -> [Double] {
        let catalog = schools.catalog
        return catalog.numericValues[catalog.numericAttribute(named: "undergrad_enrollment")!].map { max(1, $0 ?? 1) }
    }

    /// A random but plausible profile: home at a random school's location (weighted by
    /// enrollment, so students live where students are), its state, a preferred distance of
    /// 100–800 miles, a budget of $8k–$60k, an SAT for 70% of students, one or two majors drawn
    /// from real bachelor's programs weighted by graduates, and random size/control/setting
    /// preferences.
    ///
    /// - Parameters:
    ///   - schools: The catalog.
    ///   - generator: The randomness.
    /// - Returns: A profile.
    public static func randomProfile(schools: SchoolCatalog, using generator: inout SplitMix64) -> StudentProfile {
        let catalog = schools.catalog
        let enrollment = catalog.numericValues[catalog.numericAttribute(named: "undergrad_enrollment")!]
        let weights = enrollment.map { max(100, $0 ?? 100) }
        let home = weightedIndex(weights, using: &generator)
        let state = catalog.textValues[catalog.textAttribute(named: "state")!][home]
        let codes = schools.majors.offerings.keys.sorted()
        let graduates = codes.map { code in Double(schools.majors.offerings[code]!.reduce(0) { $0 + ($1.completers ?? 0) }) + 1 }
        var majors: [String] = []
        for _ in 0..<Int.random(in: 1...2, using: &generator) {
            let code = codes[weightedIndex(graduates, using: &generator)]
            if !majors.contains(code) { majors.append(code) }
        }
        return StudentProfile(
            home: catalog.locations[home], homeState: state,
            maxDistanceMiles: Double(Int.random(in: 100...800, using: &generator)),
            annualBudget: Double(Int.random(in: 8...60, using: &generator) * 1000),
            sat: Double.random(in: 0..<1, using: &generator) < 0.7 ? Double(Int.random(in: 90...155, using: &generator) * 10) : nil,
            intendedMajors: majors,
            sizePreference: StudentProfile.SizePreference.allCases.randomElement(using: &generator)!,
            controlPreference: StudentProfile.ControlPreference.allCases.randomElement(using: &generator)!,
            settingPreference: StudentProfile.SettingPreference.allCases.randomElement(using: &generator)!,
            academicPriority: Double.random(in: 0...1, using: &generator),
            earningsPriority: Double.random(in: 0...1, using: &generator))
    }

    static func weightedIndex(_ weights: [Double], using generator: inout SplitMix64) -> Int {
        var u = Double.random(in: 0..<weights.reduce(0, +), using: &generator)
        for (i, w) in weights.enumerated() {
            if u < w { return i }
            u -= w
        }
        return weights.count - 1
    }
}

/// Vector helpers of the evaluation.
public enum VectorMath {
    /// Cosine similarity of two weight vectors; 0 when either is zero.
    ///
    /// - Parameters:
    ///   - a: A vector.
    ///   - b: A vector of the same length.
    /// - Returns: a·b / (|a||b|).
    public static func cosine(_ a: [Double], _ b: [Double]) -> Double {
        precondition(a.count == b.count, "cosine of vectors of different lengths")
        let dot = zip(a, b).reduce(0) { $0 + $1.0 * $1.1 }
        let na = a.reduce(0) { $0 + $1 * $1 }.squareRoot(), nb = b.reduce(0) { $0 + $1 * $1 }.squareRoot()
        return na > 0 && nb > 0 ? dot / (na * nb) : 0
    }
}
