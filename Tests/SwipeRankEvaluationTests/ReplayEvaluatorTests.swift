import Foundation
import Testing
import SwipeRank
import SwipeRankEvaluation
import SwipeRankNumerics

@Suite("Replay evaluation")
struct ReplayEvaluatorTests {
    @Test("on the shipped log: metrics in range, the learner beats random, random's AUC is near 0.5")
    func shipped() throws {
        let root = EvaluationFixtures.root.appendingPathComponent("datasets")
        let (students, _) = try StudentsFile.read(CSVTable(contentsOfFile: root.appendingPathComponent("students.csv").path))
        let (log, _) = try InteractionsFile.read(CSVTable(contentsOfFile: root.appendingPathComponent("swipes.csv").path))
        let subset = Array(students.prefix(40)), ids = Set(subset.map(\.id))
        let results = try ReplayEvaluator(engine: EvaluationFixtures.engine)
            .run(students: subset, interactions: log.filter { ids.contains($0.studentID) }, seed: 4)
        #expect(results.map(\.policy) == ["engine", "profile_only", "popularity", "random", "population_prior", "engine_population_prior"])
        for r in results {
            for name in ["precision@10", "recall@10", "ndcg@10", "map@10", "mrr", "auc"] {
                let m = r.mean(name)
                #expect(m >= 0 && m <= 1, "\(r.policy) \(name) \(m)")
            }
            if let ips = r.ipsLikeRate { #expect(ips >= 0 && ips <= 1 && r.ipsMatches > 0) }
        }
        #expect(results[0].mean("ndcg@10") > results[3].mean("ndcg@10") + 0.1)
        #expect(results[0].mean("auc") > results[1].mean("auc"))
        #expect(abs(results[3].mean("auc") - 0.5) < 0.1)
        // Learning on top of the population prior does not lose what the prior knew.
        #expect(results[5].mean("precision@10") >= results[4].mean("precision@10"))
        // The prior is fitted on training swipes only: flipping every held-out answer changes no
        // policy's picks (IPS matches depend on the scores and the logged cards, not the answers).
        var byStudent: [String: [Interaction]] = [:]
        for x in log where ids.contains(x.studentID) { byStudent[x.studentID, default: []].append(x) }
        var flipped: [Interaction] = []
        for (_, mine) in byStudent {
            let sorted = mine.sorted { ($0.timestamp, $0.itemID) < ($1.timestamp, $1.itemID) }
            let cut = Int((Double(sorted.count) * 0.7).rounded(.down))
            for (i, x) in sorted.enumerated() {
                var y = x
                if i >= cut { y.action = x.action == .like ? .dislike : .like }
                flipped.append(y)
            }
        }
        let again = try ReplayEvaluator(engine: EvaluationFixtures.engine).run(students: subset, interactions: flipped, seed: 4)
        #expect(again.map(\.ipsMatches) == results.map(\.ipsMatches))
        #expect(again[4].mean("precision@10") != results[4].mean("precision@10"), "the held-out answers do count in the metrics")
    }

    @Test("hand-checked split and metrics on a tiny log")
    func tiny() throws {
        let schools = EvaluationFixtures.schools.catalog
        let student = DatasetStudent(id: "x", profile: StudentProfile())
        // 10 swipes: the first 7 train, the last 3 are held out (two likes).
        let rows = Array(0..<10)
        let log = rows.map { r in
            Interaction(studentID: "x", itemID: schools.ids[r], action: r >= 8 ? .like : .dislike, timestamp: Int64(100 - r),
                        isProbe: false, propensity: 1)
        }
        // Timestamps run backwards, so rows 9, 8, 7 are the earliest (training) — 2, 1, 0 are held out, all dislikes.
        let results = try ReplayEvaluator(engine: EvaluationFixtures.engine).run(students: [student], interactions: log, seed: 1)
        #expect(results.allSatisfy { $0.metrics["ndcg@10"] == nil }, "no held-out likes, no ranking metrics")
        #expect(throws: DataError.self) {
            try ReplayEvaluator(engine: EvaluationFixtures.engine)
                .run(students: [student], interactions: [Interaction(studentID: "nobody", itemID: schools.ids[0], action: .like, timestamp: 1)], seed: 1)
        }
    }
}
