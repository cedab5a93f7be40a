import Foundation
import SwipeRank
import SwipeRankServer

/// `serve --experiment FILE`: an A/B test over the default catalog's students.
///
/// ```json
/// {"salt": "2026-11-collaborative",
///  "arms": [{"name": "control"},
///           {"name": "collaborative", "share": 1, "factors": "factors.json"},
///           {"name": "no_prior", "population_prior": null, "configuration": {"probeInterval": 3}}]}
/// ```
///
/// Each arm changes the engine being served: `factors` (a file, or null for none),
/// `population_prior` (a file, or null for none), `configuration` (fields of
/// `EngineConfiguration` replacing the served one's). Absent keys keep what is served.
struct ExperimentSpec: Sendable {
    enum Change: Sendable {
        case keep, remove, file(String)
    }

    struct Arm: Sendable {
        var name: String
        var share: Int
        var factors: Change
        var populationPrior: Change
        /// JSON object text of configuration fields, or nil.
        var configuration: Data?
    }

    var salt: String
    var arms: [Arm]

    /// Reads the file; errors name it and the JSON path.
    static func read(_ path: String) throws -> ExperimentSpec {
        let data = try InputFile.read(path, what: "experiment", maxBytes: 1 << 20)
        func fail(_ at: String, _ detail: String) -> CLIError { CLIError("\(path): \(at): \(detail)") }
        guard let root = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] else {
            throw fail("$", "not a JSON object")
        }
        for key in root.keys where !["salt", "arms"].contains(key) { throw fail("$.\(key)", "unknown key (salt, arms)") }
        guard let salt = root["salt"] as? String else { throw fail("$.salt", "a string is required") }
        guard let arms = root["arms"] as? [Any] else { throw fail("$.arms", "an array of arms is required") }
        var out: [Arm] = []
        for (i, raw) in arms.enumerated() {
            let at = "$.arms[\(i)]"
            guard let arm = raw as? [String: Any] else { throw fail(at, "an arm is an object") }
            for key in arm.keys where !["name", "share", "factors", "population_prior", "configuration"].contains(key) {
                throw fail("\(at).\(key)", "unknown key (name, share, factors, population_prior, configuration)")
            }
            guard let name = arm["name"] as? String else { throw fail("\(at).name", "a string is required") }
            var share = 1
            if let value = arm["share"] {
                // JSONDecoder tells an integer from true or 2.5; JSONSerialization's NSNumber does not.
                struct Share: Decodable { var share: Int }
                let object = try JSONSerialization.data(withJSONObject: ["share": value])
                guard let whole = try? JSONDecoder().decode(Share.self, from: object).share else {
                    throw fail("\(at).share", "an integer is required")
                }
                share = whole
            }
            func change(_ key: String) throws -> Change {
                guard let value = arm[key] else { return .keep }
                if value is NSNull { return .remove }
                guard let file = value as? String, !file.isEmpty else { throw fail("\(at).\(key)", "a file path or null") }
                return .file(file)
            }
            var configuration: Data?
            if let value = arm["configuration"] {
                guard let object = value as? [String: Any] else { throw fail("\(at).configuration", "an object of EngineConfiguration fields") }
                configuration = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
            }
            out.append(Arm(name: name, share: share, factors: try change("factors"), populationPrior: try change("population_prior"),
                           configuration: configuration))
        }
        return ExperimentSpec(salt: salt, arms: out)
    }

    /// The experiment for a catalog's engine type: the files are read now (a missing or broken
    /// one stops the start); whether they fit the catalog is checked when the service builds.
    func experiment<M: ServableMatcher>(for _: M.Type) throws -> Experiment<M> {
        let arms = try self.arms.map { spec -> Experiment<M>.Arm in
            let factors: FactorModelFile?
            if case let .file(path) = spec.factors { factors = try readFactorFile(path) } else { factors = nil }
            let prior: PopulationPrior?
            if case let .file(path) = spec.populationPrior { prior = try readPopulationPrior(path) } else { prior = nil }
            let (factorChange, priorChange, configuration) = (spec.factors, spec.populationPrior, spec.configuration)
            return Experiment<M>.Arm(name: spec.name, share: spec.share) { engine in
                var e = engine
                switch factorChange {
                case .keep: break
                case .remove: e = e.withoutFactors()
                case .file: e = try e.withFactors(factors!)
                }
                switch priorChange {
                case .keep: break
                case .remove: e = e.withoutPopulation()
                case .file: e = try e.withPopulation(prior!)
                }
                if let configuration { e = try Self.reconfigure(e, with: configuration) }
                return e
            }
        }
        do { return try Experiment(salt: salt, arms: arms) } catch { throw CLIError("experiment: \(error)") }
    }

    /// The engine with some configuration fields replaced (the rest as served).
    static func reconfigure<M: Matcher>(_ engine: SwipeEngine<M>, with fields: Data) throws -> SwipeEngine<M> {
        var merged = (try JSONSerialization.jsonObject(with: JSONEncoder().encode(engine.configuration)) as? [String: Any]) ?? [:]
        for (key, value) in (try JSONSerialization.jsonObject(with: fields) as? [String: Any]) ?? [:] { merged[key] = value }
        let configuration = try JSONDecoder().decode(EngineConfiguration.self, from: JSONSerialization.data(withJSONObject: merged))
        return engine.reconfigured { $0 = configuration }
    }
}
