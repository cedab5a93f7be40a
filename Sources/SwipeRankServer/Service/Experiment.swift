import Crypto
import Foundation
import SwipeRank

/// An A/B test (`serve --experiment FILE`): students are split between arms, each arm serving
/// and learning with its own variant of the engine — another collaborative model or none,
/// another population prior, another configuration (probe rate, band mix, forgetting). The
/// arm is a pure function of the student id and the experiment's salt, so a student stays in
/// one arm on every instance and after every restart; every logged deck names its arm, and
/// `swiperank arms` reports each arm's online metrics from the log.
///
/// An arm is a change applied to the engine being served, so arms follow catalog edits and
/// refitted models: each catalog version and model version gets its arms' engines anew.
public struct Experiment<M: ServableMatcher>: Sendable {
    /// One arm.
    public struct Arm: Sendable {
        /// Its name in logs and reports: 1–32 of `a-z 0-9 _ -`.
        public var name: String
        /// Its share of students, relative to the other arms' (≥ 1).
        public var share: Int
        /// Makes the arm's engine from the engine being served (`{ $0 }`: the control).
        public var variant: @Sendable (SwipeEngine<M>) throws -> SwipeEngine<M>

        /// Creates an arm.
        ///
        /// - Parameters:
        ///   - name: The name.
        ///   - share: The relative share (≥ 1).
        ///   - variant: The engine change.
        public init(name: String, share: Int = 1, variant: @escaping @Sendable (SwipeEngine<M>) throws -> SwipeEngine<M>) {
            self.name = name
            self.share = share
            self.variant = variant
        }
    }

    /// Mixed into the assignment hash: a new salt reshuffles students for a new experiment.
    public var salt: String
    /// The arms (at least two), in the order their shares are laid out.
    public var arms: [Arm]

    /// Creates an experiment.
    ///
    /// - Parameters:
    ///   - salt: The assignment salt (1…200 bytes).
    ///   - arms: Two to 16 arms with distinct valid names and shares ≥ 1.
    /// - Throws: `ExperimentError` naming what is wrong.
    public init(salt: String, arms: [Arm]) throws(ExperimentError) {
        guard (1...200).contains(salt.utf8.count) else { throw ExperimentError("the salt is 1…200 bytes") }
        guard (2...16).contains(arms.count) else { throw ExperimentError("an experiment has 2…16 arms, got \(arms.count)") }
        for arm in arms {
            guard ServedCatalog.isValidName(arm.name) else { throw ExperimentError("arm name \"\(arm.name.prefix(40))\": 1–32 of a-z, 0-9, _ and -") }
            guard (1...1_000_000).contains(arm.share) else { throw ExperimentError("arm \(arm.name): share must be in 1…1000000, got \(arm.share)") }
        }
        guard Set(arms.map(\.name)).count == arms.count else { throw ExperimentError("two arms have the same name") }
        self.salt = salt
        self.arms = arms
    }

    /// The arm of a student: the first 8 bytes of SHA-256(salt ␀ student id), big-endian,
    /// modulo the total share, laid out over the arms' shares in order.
    ///
    /// - Parameter studentID: The student.
    /// - Returns: An index into `arms`.
    public func arm(of studentID: String) -> Int {
        let digest = SHA256.hash(data: Data(salt.utf8) + [0] + Data(studentID.utf8))
        let value = digest.prefix(8).reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        var slot = value % UInt64(arms.reduce(0) { $0 + $1.share })
        for (i, arm) in arms.enumerated() {
            if slot < UInt64(arm.share) { return i }
            slot -= UInt64(arm.share)
        }
        return arms.count - 1  // unreachable: the slot is below the total
    }
}

/// An experiment that cannot run.
public struct ExperimentError: Error, CustomStringConvertible, Sendable {
    /// What is wrong.
    public let description: String
    init(_ description: String) { self.description = description }
}

/// One generation's arms: each arm's engine over the generation's engine, and its model
/// version (logged with every deck).
struct ArmEngines<M: ServableMatcher>: Sendable {
    struct Built: Sendable {
        var name: String
        var engine: SwipeEngine<M>
        var modelVersion: String
    }

    let experiment: Experiment<M>
    let arms: [Built]

    /// Builds every arm over `engine`.
    ///
    /// - Throws: The first arm's error, named.
    init(experiment: Experiment<M>, engine: SwipeEngine<M>) throws(ExperimentError) {
        self.experiment = experiment
        var built: [Built] = []
        for arm in experiment.arms {
            let variant: SwipeEngine<M>
            do { variant = try arm.variant(engine) } catch {
                throw ExperimentError("arm \(arm.name): \(error)")
            }
            guard variant.catalogFingerprint == engine.catalogFingerprint else {
                throw ExperimentError("arm \(arm.name): an arm serves the same catalog as the others")
            }
            built.append(Built(name: arm.name, engine: variant, modelVersion: variant.modelVersion))
        }
        arms = built
    }

    /// Builds every arm over `engine`; an arm whose change fails on this engine (a catalog edit
    /// its model does not fit) serves `engine` itself, and the failure is reported.
    init(lenient experiment: Experiment<M>, engine: SwipeEngine<M>, report: (String) -> Void) {
        self.experiment = experiment
        arms = experiment.arms.map { arm in
            do {
                let variant = try arm.variant(engine)
                if variant.catalogFingerprint == engine.catalogFingerprint {
                    return Built(name: arm.name, engine: variant, modelVersion: variant.modelVersion)
                }
                report("arm \(arm.name): an arm serves the same catalog as the others")
            } catch {
                report("arm \(arm.name): \(error)")
            }
            return Built(name: arm.name, engine: engine, modelVersion: engine.modelVersion)
        }
    }

    /// The student's arm.
    func arm(of studentID: String) -> Built { arms[experiment.arm(of: studentID)] }
}
