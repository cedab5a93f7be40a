import Foundation
import SwipeRankNumerics

/// Writes the evaluation as a self-contained report: `report.md` with SVG charts and the CSV
/// behind every chart. No timestamps or timings go into the files, so the same run writes the
/// same bytes and a committed report can be checked for staleness by regenerating it.
public struct EvaluationReport: Sendable {
    /// Simulation results, one per policy.
    public let simulation: [SimulationEvaluator.PolicyResult]
    /// Replay results (may be empty).
    public let replay: [ReplayEvaluator.PolicyResult]
    /// Students simulated.
    public let students: Int
    /// Swipes per student.
    public let swipes: Int
    /// The seed.
    public let seed: UInt64
    /// Logged swipes replayed.
    public let loggedSwipes: Int

    /// Creates a report.
    ///
    /// - Parameters:
    ///   - simulation: Simulation results.
    ///   - replay: Replay results.
    ///   - students: Students simulated.
    ///   - swipes: Swipes per student.
    ///   - seed: The seed.
    ///   - loggedSwipes: Logged swipes replayed.
    public init(simulation: [SimulationEvaluator.PolicyResult], replay: [ReplayEvaluator.PolicyResult], students: Int,
                swipes: Int, seed: UInt64, loggedSwipes: Int) {
        self.simulation = simulation
        self.replay = replay
        self.students = students
        self.swipes = swipes
        self.seed = seed
        self.loggedSwipes = loggedSwipes
    }

    static func f(_ x: Double, _ d: Int = 4) -> String { x.isNaN ? "" : String(format: "%.\(d)f", x) }

    /// The files of the report, by name.
    ///
    /// - Returns: File name → contents.
    public func files() -> [String: String] {
        var files: [String: String] = [:]
        var rng = SplitMix64(seed: seed)
        let checkpoints = simulation.first?.checkpoints ?? []
        // CSVs.
        var curves = ["policy,swipes,ndcg_at_10,precision_at_10,like_rate,cosine"]
        for r in simulation {
            let ndcg = SimulationEvaluator.PolicyResult.means(r.ndcg), p = SimulationEvaluator.PolicyResult.means(r.precision)
            let likes = SimulationEvaluator.PolicyResult.means(r.likeRate), cos = SimulationEvaluator.PolicyResult.means(r.cosine)
            for (i, c) in checkpoints.enumerated() {
                curves.append("\(r.policy.rawValue),\(c),\(Self.f(ndcg[i])),\(Self.f(p[i])),\(Self.f(likes[i])),\(Self.f(cos[i]))")
            }
        }
        files["learning_curves.csv"] = curves.joined(separator: "\n") + "\n"
        var finals = ["policy,ndcg_at_10,ndcg_ci_lower,ndcg_ci_upper,precision_at_10,like_rate,cosine,coverage,diversity,novelty,geo_mix_error"]
        var bars: [(label: String, value: Double, interval: (Double, Double)?)] = []
        for r in simulation {
            let last = r.ndcg.last ?? []
            let mean = last.isEmpty ? Double.nan : last.reduce(0, +) / Double(last.count)
            let ci = last.isEmpty ? (Double.nan, Double.nan) : Bootstrap.meanInterval(last, using: &rng)
            let likes = r.likeRate.dropFirst().flatMap { $0 }
            finals.append([r.policy.rawValue, Self.f(mean), Self.f(ci.0), Self.f(ci.1),
                           Self.f(SimulationEvaluator.PolicyResult.means(r.precision).last ?? .nan),
                           Self.f(likes.isEmpty ? .nan : likes.reduce(0, +) / Double(likes.count)),
                           Self.f(SimulationEvaluator.PolicyResult.means(r.cosine).last ?? .nan),
                           Self.f(r.coverage), Self.f(r.diversity), Self.f(r.novelty), Self.f(r.geoMixError)].joined(separator: ","))
            bars.append((r.policy.rawValue, mean, ci))
        }
        files["final_metrics.csv"] = finals.joined(separator: "\n") + "\n"
        var perStudent = ["policy,student,swipes,ndcg_at_10"]
        for r in simulation {
            for (i, c) in checkpoints.enumerated() {
                for (s, v) in r.ndcg[i].enumerated() { perStudent.append("\(r.policy.rawValue),\(s),\(c),\(Self.f(v))") }
            }
        }
        files["per_student_ndcg.csv"] = perStudent.joined(separator: "\n") + "\n"
        let metricNames = ["precision@10", "recall@10", "ndcg@10", "map@10", "mrr", "auc"]
        if !replay.isEmpty {
            var rows = ["policy," + metricNames.joined(separator: ",") + ",replay_like_rate,replay_matches"]
            for r in replay {
                rows.append(([r.policy] + metricNames.map { Self.f(r.mean($0)) } + [r.ipsLikeRate.map { Self.f($0) } ?? "", String(r.ipsMatches)])
                    .joined(separator: ","))
            }
            files["replay.csv"] = rows.joined(separator: "\n") + "\n"
        }
        var geo = ["policy,geo_mix_error"]
        for r in simulation { geo.append("\(r.policy.rawValue),\(Self.f(r.geoMixError))") }
        files["geo_mix.csv"] = geo.joined(separator: "\n") + "\n"

        // Charts.
        let series = simulation.map { r in
            SVGChart.Series(label: r.policy.rawValue,
                            points: zip(checkpoints, SimulationEvaluator.PolicyResult.means(r.ndcg)).map { (Double($0), $1) })
        }
        files["learning_curves.svg"] = SVGChart.lines(
            title: "NDCG@10 vs hidden preferences, by swipes", xLabel: "swipes", yLabel: "mean NDCG@10", series: series,
            yRange: 0...1, markers: [(10, "discovery | refinement"), (30, "refinement | stable")].filter { Double(swipes) >= $0.0 })
        files["final_ndcg.svg"] = SVGChart.bars(title: "NDCG@10 after \(swipes) swipes (95% bootstrap CI)", yLabel: "mean NDCG@10",
                                                bars: bars, yRange: 0...1)
        files["geo_mix.svg"] = SVGChart.bars(title: "Largest gap from the 50/30/20 band mix (students with a home)",
                                             yLabel: "band-share error", bars: simulation.map { ($0.policy.rawValue, $0.geoMixError, nil) },
                                             yRange: 0...0.6, reference: (0.05, "5%"))
        // Per-phase distribution of the engine's per-student NDCG@10.
        var phaseLines: [String] = []
        for r in simulation {
            var cells: [String] = []
            for c in [10, 30, swipes] where checkpoints.contains(c) {
                let values = r.ndcg[checkpoints.firstIndex(of: c)!].sorted()
                func q(_ p: Double) -> Double { values.isEmpty ? .nan : values[min(values.count - 1, Int(p * Double(values.count)))] }
                cells.append("\(Self.f(q(0.1), 2)) / \(Self.f(q(0.5), 2)) / \(Self.f(q(0.9), 2))")
            }
            phaseLines.append("| \(r.policy.rawValue) | " + cells.joined(separator: " | ") + " |")
        }
        let phaseHeader = [10, 30, swipes].filter { checkpoints.contains($0) }.map { "n = \($0)" }

        // The Markdown.
        var md = """
        # SwipeRank offline evaluation

        Generated by `swiperank evaluate --export notebooks-export` on the shipped datasets: \(students) simulated students ×
        \(swipes) swipes, seed \(seed), six policies (see `SimulationEvaluator` for every definition). Regenerate it with the
        same command; the files carry no timestamps, so an unchanged engine writes the same bytes.

        ## Learning curves

        ![NDCG@10 by swipes](learning_curves.svg)

        Data: [learning_curves.csv](learning_curves.csv). Phase boundaries at 10 (discovery → refinement) and 30 (→ stable).

        ## After \(swipes) swipes, against the baselines

        ![Final NDCG@10](final_ndcg.svg)

        | policy | NDCG@10 | 95% CI | P@10 | like rate | cosine | coverage | diversity | novelty | geo-mix error |
        |---|---|---|---|---|---|---|---|---|---|

        """
        for line in finals.dropFirst() {
            let c = line.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
            md += "| \(c[0]) | \(c[1]) | \(c[2])–\(c[3]) | \(c[4]) | \(c[5]) | \(c[6].isEmpty ? "—" : c[6]) | \(c[7]) | \(c[8]) | \(c[9]) | \(c[10]) |\n"
        }
        md += """

        Data: [final_metrics.csv](final_metrics.csv).

        ## Per-student distributions by phase

        NDCG@10 per student, 10th / 50th / 90th percentile (data: [per_student_ndcg.csv](per_student_ndcg.csv)):

        | policy | \(phaseHeader.joined(separator: " | ")) |
        |---|\(phaseHeader.map { _ in "---|" }.joined())

        """
        md += phaseLines.joined(separator: "\n") + "\n"
        md += """

        ## Geographic mix

        ![Band-mix error](geo_mix.svg)

        Data: [geo_mix.csv](geo_mix.csv).

        """
        if !replay.isEmpty {
            md += """

            ## Replay of \(loggedSwipes) logged swipes

            First 70% of each student's swipes (in time) to learn, the rest held out; full ranking of every school not swiped in
            training. The log was written by the engine, so it favors engine-like policies; the replay like rate
            (self-normalized IPS) is given with its number of matching swipes. Data: [replay.csv](replay.csv).

            | policy | \(metricNames.joined(separator: " | ")) | replay like rate (matches) |
            |---|\(metricNames.map { _ in "---|" }.joined())---|

            """
            for r in replay {
                md += "| \(r.policy) | " + metricNames.map { Self.f(r.mean($0), 3) }.joined(separator: " | ")
                    + " | \(r.ipsLikeRate.map { Self.f($0, 3) } ?? "—") (\(r.ipsMatches)) |\n"
            }
        }
        files["report.md"] = md
        return files
    }

    /// Writes the files into a folder (created if needed).
    ///
    /// - Parameter folder: The folder.
    /// - Throws: File system errors.
    public func write(to folder: URL) throws {
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        for (name, contents) in files() {
            try contents.write(to: folder.appendingPathComponent(name), atomically: true, encoding: .utf8)
        }
    }
}
