import Foundation
import SwipeRank
import SwipeRankNumerics

/// Fits a `PopulationPrior` from an interaction log (`swiperank fit-prior`).
///
/// 1. Each student's swipes, in time order, teach a fresh model from their own cold start,
///    exactly as a session learns them (the engine's learner, forgetting in the stable phase).
/// 2. **Weight shift** (empirical Bayes): the average over students of (posterior mean − cold
///    start) over `[features, terms]`. Each student's shift is already shrunk toward the cold
///    start, so the average is a conservative estimate of how the population differs from it.
/// 3. **Item effects**: with each student's final model, the residual `y − p` of every swipe
///    and its curvature `p(1 − p)`; per item, one Newton step from 0 of a logit intercept with
///    prior precision `itemPrecision / 4` (that many swipes at p = ½), `b = Σ(y − p) / (Σ p(1 − p)
///    + itemPrecision / 4)`, in raw-score units `b × scale`. An item swiped a few times gets
///    an effect near 0; one the population likes more than its features predict gets a
///    positive one.
public enum PopulationFit {
    /// Fits the prior.
    ///
    /// - Parameters:
    ///   - engine: The engine whose learner and cold start are used (without a population prior
    ///     of its own).
    ///   - students: The students of the log (their profiles give the cold start and terms).
    ///   - interactions: Their swipes, in any order.
    ///   - itemPrecision: The item effects' shrinkage, in swipes (> 0).
    /// - Returns: The prior.
    /// - Throws: `DataError` for an interaction naming an unknown student or item, a profile
    ///   the matcher rejects, or a non-finite model state.
    /// - Complexity: O(swipes × D²) for the models, O(swipes × D) for the residuals.
    public static func fit<M: Matcher>(engine: SwipeEngine<M>, students: [DatasetStudent<M.Profile>], interactions: [Interaction],
                                       itemPrecision: Double = 5) throws -> PopulationPrior {
        precondition(engine.population == nil, "fit a population prior with an engine that has none")
        precondition(itemPrecision > 0 && itemPrecision.isFinite, "itemPrecision must be positive")
        let catalog = engine.matcher.catalog
        let byID = Dictionary(students.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        var logs: [String: [(row: Int, x: Interaction)]] = [:]
        for x in interactions {
            guard byID[x.studentID] != nil else {
                throw DataError(.unknownReference, source: "interactions", detail: "unknown student \"\(x.studentID)\"")
            }
            guard let row = catalog.row(of: x.itemID) else {
                throw DataError(.unknownReference, source: "interactions", detail: "unknown item \"\(x.itemID)\"")
            }
            logs[x.studentID, default: []].append((row, x))
        }
        let d = catalog.dimension, k = engine.matcher.termNames.count
        var shift = [Double](repeating: 0, count: d + k)
        var residual = [Double](repeating: 0, count: catalog.count), curvature = [Double](repeating: 0, count: catalog.count)
        var fitted = 0, swipes = 0
        let scale = engine.matcher.calibration.scale
        // Students in a fixed order (the log's first appearance does not matter).
        for id in logs.keys.sorted() {
            let log = logs[id]!.sorted { ($0.x.timestamp, $0.x.itemID) < ($1.x.timestamp, $1.x.itemID) }
            let student = try engine.matcher.student(byID[id]!.profile)
            var model = engine.coldStartModel(for: student)
            var vectors: [[Double]] = []
            for (n, entry) in log.enumerated() {
                let z = engine.learningVector(row: entry.row, student: student)
                let stable = LearningPhase(totalSwipes: n + 1) == .stable
                do {
                    try model.observe(z, liked: entry.x.action == .like, forgetting: stable ? engine.configuration.stableForgetting : 1)
                } catch {
                    throw DataError(.invalidValue, source: "interactions", detail: "student \"\(id)\": \(error.description)")
                }
                vectors.append(z)
            }
            for i in 0..<(d + k) { shift[i] += model.mean[i] - model.priorMean[i] }
            for (entry, z) in zip(log, vectors) {
                let p = model.likeProbability(z)
                residual[entry.row] += (entry.x.action == .like ? 1 : 0) - p
                curvature[entry.row] += p * (1 - p)
            }
            fitted += 1
            swipes += log.count
        }
        if fitted > 0 { for i in shift.indices { shift[i] /= Double(fitted) } }
        let effects = (0..<catalog.count).map { scale * residual[$0] / (curvature[$0] + itemPrecision / 4) }
        return PopulationPrior(catalogFingerprint: engine.catalogFingerprint, featureCount: d, termNames: engine.matcher.termNames,
                               weightShift: shift, itemEffects: effects, students: fitted, swipes: swipes, itemPrecision: itemPrecision)
    }
}

extension SimulationEvaluator {
    /// Simulates a population's log: each student served by the engine (`engine` as given) and
    /// answering from the same student model as `run` (the `taste`, or hidden weights in the
    /// engine's class), `swipes` swipes each — the log a population prior is fitted on, from
    /// students other than the ones evaluated.
    ///
    /// - Parameters:
    ///   - students: The population.
    ///   - swipes: Swipes per student.
    ///   - seed: The seed.
    /// - Returns: The swipes, timestamps 1, 2, … per student.
    /// - Throws: Errors of the engine on inconsistent input.
    public func simulateLog(students: [DatasetStudent<M.Profile>], swipes: Int, seed: UInt64) throws -> [Interaction] {
        let catalog = engine.matcher.catalog
        var rng = SplitMix64(seed: seed)
        var log: [Interaction] = []
        for student in students {
            let resolved = try engine.matcher.student(student.profile)
            let gains = try truth(for: student, resolved: resolved, using: &rng).gains
            var policy = try EnginePolicy(name: "population", engine: engine, student: student, seed: rng.next())
            var answers = SplitMix64(seed: rng.next())
            var done = 0
            while done < swipes {
                let batch = try policy.serve(count: min(10, swipes - done))
                if batch.isEmpty { break }
                for row in batch {
                    let liked = Double.random(in: 0..<1, using: &answers) < gains[row]
                    try policy.observe(row: row, liked: liked)
                    done += 1
                    log.append(Interaction(studentID: student.id, itemID: catalog.ids[row], action: liked ? .like : .dislike,
                                           timestamp: Int64(done)))
                }
            }
        }
        return log
    }
}
