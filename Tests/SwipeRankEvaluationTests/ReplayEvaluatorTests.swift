import Foundation
import SwipeRankColleges
import Testing
import SwipeRank
import SwipeRankEvaluation
import SwipeRankNumerics

@Suite("Replay evaluation")
struct ReplayEvaluatorTests {
    /// The log with every held-out answer flipped (each student's swipes after the first
    /// `trainFraction` in time, the replay's split).
    static func flippingHeldOut(_ log: [Interaction], trainFraction: Double = 0.7) -> [Interaction] {
        var byStudent: [String: [Interaction]] = [:]
        for x in log { byStudent[x.studentID, default: []].append(x) }
        var flipped: [Interaction] = []
        for (_, mine) in byStudent {
            let sorted = mine.sorted { ($0.timestamp, $0.itemID) < ($1.timestamp, $1.itemID) }
            let cut = Int((Double(sorted.count) * trainFraction).rounded(.down))
            for (i, x) in sorted.enumerated() {
                var y = x
                if i >= cut { y.action = x.action == .like ? .dislike : .like }
                flipped.append(y)
            }
        }
        return flipped
    }

    @Test("on the shipped log: metrics in range, the learner beats random, random's AUC is near 0.5")
    func shipped() throws {
        let root = EvaluationFixtures.root.appendingPathComponent("datasets")
        let (students, _) = try StudentsFile.read(CSVTable(contentsOfFile: root.appendingPathComponent("students.csv").path))
        let (log, _) = try InteractionsFile.read(CSVTable(contentsOfFile: root.appendingPathComponent("swipes.csv").path))
        let subset = Array(students.prefix(40)), ids = Set(subset.map(\.id))
        let results = try ReplayEvaluator(engine: EvaluationFixtures.engine)
            .run(students: subset, interactions: log.filter { ids.contains($0.studentID) }, seed: 4)
        #expect(results.map(\.policy) == ["engine", "profile_only", "popularity", "random", "population_prior", "engine_population_prior",
                                            "engine_student_bias", "engine_population_prior_bias"])
        for r in results {
            for name in ["precision@10", "recall@10", "ndcg@10", "map@10", "mrr", "auc", "swipe_auc"] {
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
        let flipped = Self.flippingHeldOut(log.filter { ids.contains($0.studentID) })
        let again = try ReplayEvaluator(engine: EvaluationFixtures.engine).run(students: subset, interactions: flipped, seed: 4)
        #expect(again.map(\.ipsMatches) == results.map(\.ipsMatches))
        #expect(again[4].mean("precision@10") != results[4].mean("precision@10"), "the held-out answers do count in the metrics")
    }

    @Test("swipe_auc against a pair count: popularity and the learner with a bias, recomputed here", arguments: [3, 11] as [UInt64])
    func swipeAUC(seed: UInt64) throws {
        let root = EvaluationFixtures.root.appendingPathComponent("datasets")
        let (students, _) = try StudentsFile.read(CSVTable(contentsOfFile: root.appendingPathComponent("students.csv").path))
        let (log, _) = try InteractionsFile.read(CSVTable(contentsOfFile: root.appendingPathComponent("swipes.csv").path))
        // A random subset of students, and their answers shuffled so held-out swipes mix likes and dislikes.
        var rng = SplitMix64(seed: seed)
        let subset = Array(students.shuffled(using: &rng).prefix(12)), ids = Set(subset.map(\.id))
        let mine = log.filter { ids.contains($0.studentID) }.map { x -> Interaction in
            var y = x
            y.action = Bool.random(using: &rng) ? .like : .dislike
            return y
        }
        let engine = EvaluationFixtures.engine, catalog = engine.matcher.catalog
        let results = try ReplayEvaluator(engine: engine).run(students: subset, interactions: mine, seed: seed)
        // The split, as documented: each student's swipes by time, the first 70% to learn from.
        var splits: [(DatasetStudent<StudentProfile>, [Interaction], [Interaction])] = []
        for student in subset {
            let sorted = mine.filter { $0.studentID == student.id }.sorted { ($0.timestamp, $0.itemID) < ($1.timestamp, $1.itemID) }
            let cut = Int((Double(sorted.count) * 0.7).rounded(.down))
            splits.append((student, Array(sorted[..<cut]), Array(sorted[cut...])))
        }
        var likes = [Float](repeating: 0, count: catalog.count)
        for (_, train, _) in splits { for x in train where x.action == .like { likes[catalog.row(of: x.itemID)!] += 1 } }
        // AUC by counting every (liked, disliked) pair of held-out swipes, a tie ½.
        func pairAUC(_ scores: [Float], _ test: [Interaction]) -> Double? {
            let pos = test.filter { $0.action == .like }.map { scores[catalog.row(of: $0.itemID)!] }
            let neg = test.filter { $0.action == .dislike }.map { scores[catalog.row(of: $0.itemID)!] }
            guard !pos.isEmpty, !neg.isEmpty else { return nil }
            var sum = 0.0
            for p in pos { for n in neg { sum += p > n ? 1 : p == n ? 0.5 : 0 } }
            return sum / Double(pos.count * neg.count)
        }
        let biased = engine.reconfigured { $0.studentBias = true }
        var popularity: [Double] = [], bias: [Double] = []
        for (student, train, test) in splits {
            let resolved = try engine.matcher.student(student.profile)
            var model = biased.coldStartModel(for: resolved)
            for x in train {
                try model.observe(biased.learningVector(row: catalog.row(of: x.itemID)!, student: resolved), liked: x.action == .like)
            }
            var scores: [Float] = []
            biased.rawScores(weights: model.weights(featureCount: catalog.dimension, termCount: resolved.terms.names.count),
                             student: resolved, into: &scores)
            if let a = pairAUC(likes, test) { popularity.append(a) }
            if let a = pairAUC(scores, test) { bias.append(a) }
        }
        let byName = Dictionary(uniqueKeysWithValues: results.map { ($0.policy, $0) })
        #expect(!popularity.isEmpty && byName["popularity"]!.metrics["swipe_auc"]!.count == popularity.count)
        for (got, want) in zip(byName["popularity"]!.metrics["swipe_auc"]!, popularity) { #expect(abs(got - want) < 1e-12) }
        #expect(byName["engine_student_bias"]!.metrics["swipe_auc"]!.count == bias.count)
        for (got, want) in zip(byName["engine_student_bias"]!.metrics["swipe_auc"]!, bias) { #expect(abs(got - want) < 1e-9) }
        // Answers drawn at random: nothing can predict them, random scores read chance.
        #expect(abs(byName["random"]!.mean("swipe_auc") - 0.5) < 0.2)
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
        #expect(results.allSatisfy { $0.metrics["swipe_auc"] == nil }, "no held-out like against a dislike")
        #expect(throws: DataError.self) {
            try ReplayEvaluator(engine: EvaluationFixtures.engine)
                .run(students: [student], interactions: [Interaction(studentID: "nobody", itemID: schools.ids[0], action: .like, timestamp: 1)], seed: 1)
        }
    }
}
