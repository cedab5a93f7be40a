import Foundation
import Testing
import SwipeRank
import SwipeRankEvaluation
import SwipeRankNumerics

@Suite("Evaluation report")
struct EvaluationReportTests {
    @Test("the report has every chart and CSV, is deterministic, and its CSVs match the results")
    func report() throws {
        var rng = SplitMix64(seed: 8)
        let students = (0..<6).map { DatasetStudent(id: "r\($0)", profile: SchoolSimulation.randomProfile(schools: EvaluationFixtures.schools, using: &rng)) }
        let results = try SimulationEvaluator(engine: EvaluationFixtures.engine)
            .run(students: students, swipes: 20, policies: [.engine, .profileOnly, .random], seed: 2)
        let report = EvaluationReport(simulation: results, replay: [], students: 6, swipes: 20, seed: 2, loggedSwipes: 0)
        let files = report.files()
        #expect(Set(files.keys) == ["report.md", "learning_curves.csv", "learning_curves.svg", "final_metrics.csv",
                                    "final_ndcg.svg", "per_student_ndcg.csv", "geo_mix.csv", "geo_mix.svg", "generalization.csv"])
        #expect(files == report.files(), "same input, same bytes")
        for (name, text) in files where name.hasSuffix(".svg") {
            #expect(text.hasPrefix("<svg ") && text.hasSuffix("</svg>\n") && !text.contains("nan"), "\(name)")
        }
        for name in ["learning_curves.svg", "final_ndcg.svg", "learning_curves.csv", "final_metrics.csv"] {
            #expect(files["report.md"]!.contains("(\(name))"), "report links \(name)")
        }
        // The curve CSV holds the means of the results, checkpoint by checkpoint.
        let lines = files["learning_curves.csv"]!.split(separator: "\n").dropFirst()
        #expect(lines.count == 3 * 3)
        let engineAt20 = lines.first { $0.hasPrefix("engine,20,") }!.split(separator: ",")
        let expected = SimulationPolicyResult.means(results[0].ndcg)[2]
        #expect(abs(Double(engineAt20[2])! - expected) < 1e-4)
        #expect(files["per_student_ndcg.csv"]!.split(separator: "\n").count == 1 + 3 * 3 * 6)
        // Generalization: one line per policy, its mean the results'; no oracle here, so no gap.
        let general = files["generalization.csv"]!.split(separator: "\n").dropFirst()
        #expect(general.count == 3)
        let engineGeneral = general.first { $0.hasPrefix("engine,logistic,") }!.split(separator: ",", omittingEmptySubsequences: false)
        #expect(abs(Double(engineGeneral[2])! - results[0].generalization.reduce(0, +) / 6) < 1e-4)
        #expect(engineGeneral[5].isEmpty)
    }

    @Test("the committed notebooks-export report links every file it ships")
    func committed() throws {
        let folder = EvaluationFixtures.root.appendingPathComponent("notebooks-export")
        let report = try String(contentsOf: folder.appendingPathComponent("report.md"), encoding: .utf8)
        for name in ["learning_curves.svg", "final_ndcg.svg", "geo_mix.svg", "learning_curves.csv", "final_metrics.csv",
                     "per_student_ndcg.csv", "geo_mix.csv", "replay.csv", "generalization.csv", "outside_model.csv"] {
            #expect(report.contains("(\(name))"))
            #expect(FileManager.default.fileExists(atPath: folder.appendingPathComponent(name).path), "\(name)")
        }
        #expect(report.contains("200 simulated students"))
    }
}
