import SwipeRank
import SwipeRankColleges
import SwipeRankNumerics

/// Generates an evaluation dataset: simulated students and the swipes they logged while the
/// engine served them.
///
/// Each student has a profile (colleges: a random one, `SchoolSimulation.randomProfile`; any
/// catalog: the users given) and hidden weights (`SimulatedStudent`, deviation 2 on eight
/// opinion weights); the engine serves batches of 10 (so probes carry their real
/// propensities), the student answers each card with the logistic choice model, and answers
/// feedback prompts. Everything flows from one seed, so the same seed writes the same bytes.
public struct DatasetGenerator<M: Matcher>: Sendable {
    /// The engine acting as the logging policy.
    public let engine: SwipeEngine<M>
    /// Feature groups a simulated student may hold strong opinions on; nil: every group.
    public let opinionGroups: Set<String>?

    /// Creates a generator.
    ///
    /// - Parameters:
    ///   - engine: The logging policy.
    ///   - opinionGroups: Groups eligible for strong opinions; nil: all.
    public init(engine: SwipeEngine<M>, opinionGroups: Set<String>?) {
        self.engine = engine
        self.opinionGroups = opinionGroups
    }

    /// Generates the swipes of given students.
    ///
    /// - Parameters:
    ///   - seed: The seed.
    ///   - students: The students, with ids and profiles.
    ///   - swipesPerStudent: Swipes each.
    /// - Returns: Their interactions, by student then time.
    /// - Throws: `DataError` for an invalid profile.
    public func generate(seed: UInt64, students: [DatasetStudent<M.Profile>], swipesPerStudent: Int) throws -> [Interaction] {
        var iterator = students.makeIterator()
        return try generate(seed: seed, count: students.count, swipesPerStudent: swipesPerStudent) { _, _ in iterator.next()! }.1
    }

    /// Generates students from `makeStudent` and their interactions, drawing each student's
    /// profile, hidden weights, session seed and answers from one generator in that order.
    func generate(seed: UInt64, count: Int, swipesPerStudent: Int,
                  makeStudent: (Int, inout SplitMix64) -> DatasetStudent<M.Profile>) throws -> ([DatasetStudent<M.Profile>], [Interaction]) {
        precondition(count >= 0 && swipesPerStudent >= 0, "Counts must not be negative")
        var rng = SplitMix64(seed: seed)
        var roster: [DatasetStudent<M.Profile>] = [], log: [Interaction] = []
        for s in 0..<count {
            let student = makeStudent(s, &rng)
            let id = student.id, profile = student.profile
            let simulated = try SimulatedStudent(profile: profile, engine: engine, deviation: 2.0,
                                                 opinionGroups: opinionGroups, using: &rng)
            var session = try engine.session(studentID: id, profile: profile, seed: rng.next())
            roster.append(student)
            // Timestamps: one student after another, a second apart, so the file reads in time order.
            let start = 1_767_225_600_000 + Int64(s) * 86_400_000
            for position in 1...max(1, swipesPerStudent) where swipesPerStudent > 0 {
                if session.served.count < position { _ = session.recommendations(count: 10) }
                guard position <= session.served.count else { break }
                let card = session.served[position - 1]
                let action = simulated.swipe(row: card.row, session: session, using: &rng)
                let timestamp = start + Int64(position) * 1000
                let result = try session.recordSwipe(Swipe(swipeID: "\(id)-\(position)", cardID: card.cardID, action: action,
                                                           timestamp: timestamp))
                if let prompt = result.feedback {
                    try session.submitFeedback(cardID: prompt.cardID, options: simulated.answer(prompt, session: session))
                }
                log.append(Interaction(studentID: id, itemID: card.cardID, action: action, timestamp: timestamp,
                                       isProbe: card.isProbe, propensity: card.propensity))
            }
        }
        return (roster, log)
    }
}

extension DatasetGenerator where M == SchoolMatcher {
    /// A generator for colleges, with `SchoolSimulation.opinionGroups`.
    ///
    /// - Parameter engine: The logging policy.
    public init(engine: SwipeEngine<SchoolMatcher>) { self.init(engine: engine, opinionGroups: SchoolSimulation.opinionGroups) }

    /// Generates random students (`SchoolSimulation.randomProfile`, ids `s001`…) and their
    /// interactions.
    ///
    /// - Parameters:
    ///   - seed: The seed.
    ///   - students: How many students.
    ///   - swipesPerStudent: Swipes each.
    /// - Returns: The students and their interactions, by student then time.
    /// - Throws: `DataError` or `SwipeError` only on an internal inconsistency (generated
    ///   profiles are valid by construction).
    public func generate(seed: UInt64, students: Int, swipesPerStudent: Int) throws -> ([DatasetStudent<StudentProfile>], [Interaction]) {
        let width = String(students).count
        return try generate(seed: seed, count: students, swipesPerStudent: swipesPerStudent) { s, rng in
            let id = "s" + String(repeating: "0", count: max(0, width - String(s + 1).count)) + String(s + 1)
            return DatasetStudent(id: id, profile: SchoolSimulation.randomProfile(schools: engine.matcher.schools, using: &rng))
        }
    }
}
