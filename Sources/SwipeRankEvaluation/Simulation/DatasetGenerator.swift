import SwipeRank
import SwipeRankNumerics

/// Generates an evaluation dataset: simulated students and the swipes they logged while the
/// engine served them.
///
/// Each student gets a random profile (`SimulatedStudent.randomProfile`) and hidden weights
/// (`SimulatedStudent`, deviation 2 on eight opinion weights); the engine serves batches of 10
/// (so probes carry their real propensities), the student answers each card with the logistic
/// choice model, and answers feedback prompts. Everything flows from one seed, so the same seed
/// writes the same bytes.
public struct DatasetGenerator: Sendable {
    /// The engine acting as the logging policy.
    public let engine: SwipeEngine

    /// Creates a generator.
    ///
    /// - Parameter engine: The logging policy.
    public init(engine: SwipeEngine) { self.engine = engine }

    /// Generates students and their interactions.
    ///
    /// - Parameters:
    ///   - seed: The seed.
    ///   - students: How many students.
    ///   - swipesPerStudent: Swipes each.
    /// - Returns: The students and their interactions, by student then time.
    /// - Throws: `DataError` or `SwipeError` only on an internal inconsistency (generated
    ///   profiles are valid by construction).
    public func generate(seed: UInt64, students: Int, swipesPerStudent: Int) throws -> ([DatasetStudent], [Interaction]) {
        precondition(students >= 0 && swipesPerStudent >= 0, "Counts must not be negative")
        var rng = SplitMix64(seed: seed)
        var roster: [DatasetStudent] = [], log: [Interaction] = []
        let width = String(students).count
        for s in 0..<students {
            let id = "s" + String(repeating: "0", count: max(0, width - String(s + 1).count)) + String(s + 1)
            let profile = SimulatedStudent.randomProfile(schools: engine.matcher.schools, using: &rng)
            let simulated = try SimulatedStudent(profile: profile, engine: engine, deviation: 2.0, using: &rng)
            var session = try engine.session(studentID: id, profile: profile, seed: rng.next())
            roster.append(DatasetStudent(id: id, profile: profile))
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
