import SwipeRank
import SwipeRankStore

/// What a population-prior refit is given: the engine to fit with, every logged student with
/// the profile the store holds for them, and the log itself.
///
/// The server cannot fit a prior itself (the fit lives in `SwipeRankEvaluation`, which the
/// service does not depend on); `swiperank serve --refit-prior` passes a `PopulationPriorFitter`
/// that runs `PopulationFit` on this.
public struct PriorFitInput<M: ServableMatcher>: Sendable {
    /// A logged student and their stored profile.
    public struct Student: Sendable {
        /// The student's id.
        public var id: String
        /// The profile stored for them now.
        public var profile: M.Profile
    }

    /// The engine serving now, without a population prior (a fit starts every student from the
    /// plain cold start): its catalog, learner and calibration.
    public var engine: SwipeEngine<M>
    /// Every student who answered a card and whose stored profile decodes, by id.
    public var students: [Student]
    /// The log (`LoggedSwipes.read`): the students' swipes and saves.
    public var log: LoggedSwipes
}

/// Fits a population prior from the service's log (`RefitOptions.prior`).
public protocol PopulationPriorFitter: Sendable {
    /// Fits a prior for `input.engine`'s catalog.
    ///
    /// - Parameter input: The engine, the students and the log.
    /// - Returns: The prior.
    /// - Throws: Any error: the refit then stores nothing and the current models keep serving.
    func fit<M: ServableMatcher>(_ input: PriorFitInput<M>) throws -> PopulationPrior
}

extension RefitOptions {
    /// The registry's kind for the population prior.
    public static let priorKind = "prior"
}

extension PriorFitInput {
    /// The input of a prior fit from a store: every student of `log` whose stored profile
    /// decodes (a student erased since, or whose profile no longer decodes, is left out with
    /// their swipes), with `engine` stripped of its population prior.
    ///
    /// - Parameters:
    ///   - store: The store the log was read from (one catalog's view).
    ///   - log: The log (`LoggedSwipes.read`).
    ///   - engine: The engine serving the catalog.
    /// - Returns: The input, and how many logged students were left out.
    /// - Throws: `StoreError` when the store fails.
    public static func read(from store: any StudentStore, log: LoggedSwipes, engine: SwipeEngine<M>) async throws -> (PriorFitInput<M>, skipped: Int) {
        var students: [Student] = []
        var skipped = 0
        for id in Set(log.judgements.map(\.studentID)).sorted() {
            guard let record = try await store.student(id),
                  let profile = try? M.decodeProfile(json: record.profile, source: "student \(id.prefix(64))") else {
                skipped += 1
                continue
            }
            students.append(Student(id: id, profile: profile))
        }
        let kept = Set(students.map(\.id))
        var fitted = log
        fitted.judgements.removeAll { !kept.contains($0.studentID) }
        return (PriorFitInput(engine: engine.withoutPopulation(), students: students, log: fitted), skipped)
    }
}
