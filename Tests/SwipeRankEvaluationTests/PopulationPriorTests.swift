import Foundation
import SwipeRankColleges
import Testing
import SwipeRank
import SwipeRankEvaluation
import SwipeRankNumerics

/// `PopulationPrior`, `PopulationFit` and an engine that starts from a population.
@Suite("Population prior")
struct PopulationPriorTests {
    static let engine = EvaluationFixtures.engine

    /// A random log: `count` students, `swipes` swipes each on random schools, likes with the
    /// probability `like(row)`, timestamps shuffled within each student.
    static func log(count: Int, swipes: Int, seed: UInt64, like: (Int) -> Double)
    -> (students: [DatasetStudent<StudentProfile>], log: [Interaction]) {
        var rng = SplitMix64(seed: seed)
        let catalog = engine.matcher.catalog
        var students: [DatasetStudent<StudentProfile>] = [], log: [Interaction] = []
        for s in 0..<count {
            let student = DatasetStudent(id: "p\(s)", profile: SchoolSimulation.randomProfile(schools: EvaluationFixtures.schools, using: &rng))
            students.append(student)
            var rows = Set<Int>()
            while rows.count < swipes { rows.insert(Int.random(in: 0..<catalog.count, using: &rng)) }
            for (t, row) in rows.sorted().shuffled(using: &rng).enumerated() {
                let liked = Double.random(in: 0..<1, using: &rng) < like(row)
                log.append(Interaction(studentID: student.id, itemID: catalog.ids[row], action: liked ? .like : .dislike,
                                       timestamp: Int64(1_000 + t)))
            }
        }
        return (students, log.shuffled(using: &rng))
    }

    @Test("the fit equals a plainly written reference: the average posterior shift, one Newton step per item", arguments: 0..<3)
    func reference(seed: UInt64) throws {
        let (students, log) = Self.log(count: 6, swipes: 25, seed: seed, like: { $0 % 3 == 0 ? 0.8 : 0.3 })
        let prior = try PopulationFit.fit(engine: Self.engine, students: students, interactions: log, itemPrecision: 5)
        let catalog = Self.engine.matcher.catalog
        let d = catalog.dimension, k = Self.engine.matcher.termNames.count
        var shift = [Double](repeating: 0, count: d + k)
        var residual = [Double](repeating: 0, count: catalog.count), curvature = residual
        for student in students {
            let resolved = try Self.engine.matcher.student(student.profile)
            let mine = log.filter { $0.studentID == student.id }.sorted { $0.timestamp < $1.timestamp }
            var model = Self.engine.coldStartModel(for: resolved)
            for x in mine {  // 25 swipes: never the stable phase, so no forgetting
                try model.observe(Self.engine.combinedVector(row: catalog.row(of: x.itemID)!, student: resolved), liked: x.action == .like)
            }
            for i in 0..<(d + k) { shift[i] += (model.mean[i] - model.priorMean[i]) / Double(students.count) }
            for x in mine {
                let row = catalog.row(of: x.itemID)!
                let p = model.likeProbability(Self.engine.combinedVector(row: row, student: resolved))
                residual[row] += (x.action == .like ? 1 : 0) - p
                curvature[row] += p * (1 - p)
            }
        }
        for i in shift.indices { #expect(abs(prior.weightShift[i] - shift[i]) < 1e-9, "shift[\(i)]") }
        let scale = Self.engine.matcher.calibration.scale
        for row in 0..<catalog.count {
            let expected = scale * residual[row] / (curvature[row] + 5.0 / 4)
            #expect(abs(prior.itemEffects[row] - expected) < 1e-9, "effect of row \(row)")
        }
        #expect(prior.students == 6 && prior.swipes == 150 && prior.catalogFingerprint == catalog.fingerprint)
        // Unswiped items have no effect; the same log in another order fits the same prior.
        let swiped = Set(log.map { catalog.row(of: $0.itemID)! })
        #expect((0..<catalog.count).filter { !swiped.contains($0) }.allSatisfy { prior.itemEffects[$0] == 0 })
        #expect(try PopulationFit.fit(engine: Self.engine, students: Array(students.reversed()), interactions: Array(log.reversed()), itemPrecision: 5) == prior)
    }

    @Test("answer strengths weigh each swipe in its model and its item's effect, as a weighted reference does; strengths of 1 change nothing", arguments: 0..<2)
    func weighted(seed: UInt64) throws {
        let (students, log) = Self.log(count: 5, swipes: 20, seed: 40 + seed, like: { $0 % 4 == 0 ? 0.7 : 0.4 })
        var answers: [String: [String: Bool]] = [:]
        for x in log { answers[x.studentID, default: [:]][x.itemID] = x.action == .like }
        // Reactions on every third answer, in a fixed order.
        let reacted = log.sorted { ($0.studentID, $0.itemID) < ($1.studentID, $1.itemID) }.enumerated().filter { $0.offset % 3 == 0 }.map(\.element)
        let signals = reacted.map { EngagementSignal(studentID: $0.studentID, itemID: $0.itemID, kind: .reaction("CTFO")) }
        let strengths = AnswerStrengths(signals: signals, answers: answers, reactionBoost: 1.5, dwellBoost: 0)
        let prior = try PopulationFit.fit(engine: Self.engine, students: students, interactions: log, itemPrecision: 5, strengths: strengths)
        let catalog = Self.engine.matcher.catalog
        let d = catalog.dimension, k = Self.engine.matcher.termNames.count
        var shift = [Double](repeating: 0, count: d + k)
        var residual = [Double](repeating: 0, count: catalog.count), curvature = residual
        for student in students {
            let resolved = try Self.engine.matcher.student(student.profile)
            let mine = log.filter { $0.studentID == student.id }.sorted { $0.timestamp < $1.timestamp }
            func weight(_ x: Interaction) -> Double { reacted.contains(x) ? 2.5 : 1 }
            var model = Self.engine.coldStartModel(for: resolved)
            for x in mine {
                try model.observe(Self.engine.combinedVector(row: catalog.row(of: x.itemID)!, student: resolved), liked: x.action == .like,
                                  weight: weight(x))
            }
            for i in 0..<(d + k) { shift[i] += (model.mean[i] - model.priorMean[i]) / Double(students.count) }
            for x in mine {
                let row = catalog.row(of: x.itemID)!
                let p = model.likeProbability(Self.engine.combinedVector(row: row, student: resolved))
                residual[row] += weight(x) * ((x.action == .like ? 1 : 0) - p)
                curvature[row] += weight(x) * p * (1 - p)
            }
        }
        for i in shift.indices { #expect(abs(prior.weightShift[i] - shift[i]) < 1e-9, "shift[\(i)]") }
        let scale = Self.engine.matcher.calibration.scale
        for row in 0..<catalog.count {
            #expect(abs(prior.itemEffects[row] - scale * residual[row] / (curvature[row] + 5.0 / 4)) < 1e-9, "effect of row \(row)")
        }
        let plain = try PopulationFit.fit(engine: Self.engine, students: students, interactions: log, itemPrecision: 5)
        #expect(plain != prior, "the reactions moved the fit")
        // Boosts without signals weigh every answer 1: the plain fit, bit for bit.
        let ones = AnswerStrengths(signals: [], answers: answers, reactionBoost: 1.5, dwellBoost: 1)
        #expect(try PopulationFit.fit(engine: Self.engine, students: students, interactions: log, itemPrecision: 5, strengths: ones) == plain)
    }

    @Test("a population that likes an item more than its features predict gives it a positive effect; shrinkage pulls rare items to 0")
    func itemEffects() throws {
        let catalog = Self.engine.matcher.catalog
        // Everyone swipes the same 30 schools; the first is always liked, the second never.
        var rng = SplitMix64(seed: 12)
        let rows = Array((0..<catalog.count).shuffled(using: &rng).prefix(30))
        var students: [DatasetStudent<StudentProfile>] = [], log: [Interaction] = []
        for s in 0..<40 {
            let student = DatasetStudent(id: "q\(s)", profile: SchoolSimulation.randomProfile(schools: EvaluationFixtures.schools, using: &rng))
            students.append(student)
            for (t, row) in rows.enumerated() {
                let liked = t == 0 ? true : t == 1 ? false : Bool.random(using: &rng)
                log.append(Interaction(studentID: student.id, itemID: catalog.ids[row], action: liked ? .like : .dislike, timestamp: Int64(t)))
            }
        }
        let prior = try PopulationFit.fit(engine: Self.engine, students: students, interactions: log)
        #expect(prior.itemEffects[rows[0]] > 0.1 && prior.itemEffects[rows[1]] < -0.1)
        // With only 4 students the same pattern is shrunk more.
        let few = try PopulationFit.fit(engine: Self.engine, students: Array(students.prefix(4)),
                                        interactions: log.filter { ["q0", "q1", "q2", "q3"].contains($0.studentID) })
        #expect(abs(few.itemEffects[rows[0]]) < abs(prior.itemEffects[rows[0]]))
        // An unknown student or item is an error naming it.
        #expect(throws: DataError.self) {
            try PopulationFit.fit(engine: Self.engine, students: students, interactions: [Interaction(studentID: "nobody", itemID: catalog.ids[0], action: .like, timestamp: 1)])
        }
    }

    @Test("an engine with a prior starts from the shifted cold start, ranks by score plus effect, and learns against the effect")
    func engineWithPrior() throws {
        let (students, log) = Self.log(count: 20, swipes: 30, seed: 7, like: { $0 % 5 == 0 ? 0.9 : 0.2 })
        let prior = try PopulationFit.fit(engine: Self.engine, students: students, interactions: log)
        let engine = try Self.engine.withPopulation(prior)
        let catalog = engine.matcher.catalog
        var rng = SplitMix64(seed: 8)
        let profile = SchoolSimulation.randomProfile(schools: EvaluationFixtures.schools, using: &rng)
        var session = try engine.session(studentID: "new", profile: profile, seed: 3)
        let cold = engine.matcher.coldStartWeights(for: session.student).combined
        #expect(session.model.priorMean == zip(cold, prior.weightShift).map { Double($0 + Float($1)) })
        // The ranking before any swipe: (shifted weights)·z + effect, ties to the lower row.
        var raw: [Float] = []
        catalog.scores(weights: session.weights, terms: session.student.terms, into: &raw)
        let expected = (0..<catalog.count).map { raw[$0] + Float(prior.itemEffects[$0]) }
        let reference = (0..<catalog.count).sorted { (expected[$0], -$0) > (expected[$1], -$1) }.prefix(10)
        #expect(session.ranking(count: 10).map { catalog.row(of: $0.item.id)! } == Array(reference))
        var scores: [Float] = []
        engine.rawScores(weights: session.weights, student: session.student, into: &scores)
        #expect(scores == expected)
        // Learning: the same Newton steps as a reference model told each card's effect.
        var model = session.model
        _ = session.recommendations(count: 10)
        for card in session.served {
            let liked = card.position % 2 == 0
            _ = try session.recordSwipe(Swipe(swipeID: "s\(card.position)", cardID: card.cardID, action: liked ? .like : .dislike,
                                              timestamp: Int64(card.position)))
            try model.observe(engine.combinedVector(row: card.row, student: session.student), liked: liked,
                              itemOffset: Double(Float(prior.itemEffects[card.row])))
        }
        #expect(session.model.digest == model.digest)
        // Snapshots restore under the same prior only; the model version names the prior.
        let snapshot = session.snapshot()
        #expect(try engine.restore(snapshot).model.digest == session.model.digest)
        #expect(throws: DataError.self) { try Self.engine.restore(snapshot) }
        #expect(engine.modelVersion != Self.engine.modelVersion)
    }

    @Test("the file round-trips; a wrong version, layout or catalog is an error naming the field")
    func file() throws {
        let (students, log) = Self.log(count: 3, swipes: 10, seed: 2, like: { _ in 0.5 })
        let prior = try PopulationFit.fit(engine: Self.engine, students: students, interactions: log)
        let data = prior.jsonData()
        #expect(try PopulationPrior.decode(json: data, source: "p.json") == prior)
        #expect(prior.jsonData() == data, "same prior, same bytes")
        var object = try JSONSerialization.jsonObject(with: data) as! [String: Any]
        func decodeError(_ change: ([String: Any]) -> [String: Any]) -> String {
            let bytes = try! JSONSerialization.data(withJSONObject: change(object))
            do { _ = try PopulationPrior.decode(json: bytes, source: "p.json"); return "" } catch { return error.description }
        }
        #expect(decodeError { var o = $0; o["version"] = 3; return o }.contains("version"))
        #expect(decodeError { var o = $0; o["version"] = 2; return o }.contains("exposure_weight"), "version 2 has an exposure term")
        #expect(decodeError { var o = $0; o["weight_shift"] = [1.0]; return o }.contains("weight_shift"))
        #expect(decodeError { var o = $0; o["item_precision"] = 0; return o }.contains("item_precision"))
        #expect(decodeError { var o = $0; o["surprise"] = 1; return o }.contains("surprise"))
        #expect(decodeError { var o = $0; o.removeValue(forKey: "item_effects"); return o }.contains("item_effects"))
        #expect((try? PopulationPrior.decode(json: Data("{".utf8), source: "p.json")) == nil)
        // Another catalog (fingerprint) or another item count is refused by the engine.
        object["catalog_fingerprint"] = "0000"
        let other = try PopulationPrior.decode(json: JSONSerialization.data(withJSONObject: object), source: "p.json")
        #expect(throws: DataError.self) { try Self.engine.withPopulation(other) }
        object["catalog_fingerprint"] = prior.catalogFingerprint
        object["item_effects"] = [0.0, 1.0]
        let short = try PopulationPrior.decode(json: JSONSerialization.data(withJSONObject: object), source: "p.json")
        do {
            _ = try Self.engine.withPopulation(short)
            Issue.record("a prior with 2 effects loaded on a catalog of \(Self.engine.matcher.catalog.count)")
        } catch {
            #expect(error.field == "item_effects")
        }
    }

    @Test("the evaluator's population log is deterministic and follows the student model")
    func simulatedLog() throws {
        var evaluator = SimulationEvaluator(engine: Self.engine)
        var rng = SplitMix64(seed: 4)
        let students = (0..<3).map { DatasetStudent(id: "l\($0)", profile: SchoolSimulation.randomProfile(schools: EvaluationFixtures.schools, using: &rng)) }
        let n = Self.engine.matcher.catalog.count
        evaluator.taste = { _, _ in [Double](repeating: 1, count: n) }
        let all = try evaluator.simulateLog(students: students, swipes: 12, seed: 1)
        #expect(all.count == 36 && all.allSatisfy { $0.action == .like })
        #expect(Set(all.map(\.studentID)) == ["l0", "l1", "l2"])
        evaluator.taste = SimulationEvaluator<SchoolMatcher>.hiddenTaste(schools: EvaluationFixtures.schools)
        #expect(try evaluator.simulateLog(students: students, swipes: 12, seed: 1) == evaluator.simulateLog(students: students, swipes: 12, seed: 1))
    }
}

@Suite("Hyperparameter search")
struct HyperparameterSearchTests {
    @Test("each candidate's objective is its served NDCG after the first checkpoint, compared paired with the current configuration")
    func procedure() throws {
        let engine = EvaluationFixtures.engine
        var rng = SplitMix64(seed: 21)
        let students = (0..<6).map { DatasetStudent(id: "h\($0)", profile: SchoolSimulation.randomProfile(schools: EvaluationFixtures.schools, using: &rng)) }
        let taste = SimulationEvaluator<SchoolMatcher>.hiddenTaste(schools: EvaluationFixtures.schools)
        let search = HyperparameterSearch(engine: engine, taste: taste)
        let grid = HyperparameterSearch<SchoolMatcher>.grid(priorPrecisions: [1, 10], forgettings: [0.97], biases: [false, true])
        #expect(grid.count == 4)
        let outcomes = try search.run(candidates: grid, students: students, swipes: 20, replay: nil, seed: 3)
        // The current configuration is added to the grid and differs from itself by nothing.
        let current = HyperparameterSearch<SchoolMatcher>.Candidate(engine.configuration)
        #expect(outcomes.count == 5 && outcomes.contains { $0.candidate == current })
        let base = outcomes.first { $0.candidate == current }!
        #expect(base.difference.mean == 0 && base.replayAUC.isNaN)
        #expect(zip(outcomes, outcomes.dropFirst()).allSatisfy { $0.objective >= $1.objective }, "best first")
        // Reference: the simulation of that configuration, averaged by hand.
        for outcome in outcomes {
            var evaluator = SimulationEvaluator(engine: engine.reconfigured { $0 = outcome.candidate.applied(to: $0) }, popularity: nil, opinionGroups: nil)
            evaluator.taste = taste
            let served = try evaluator.run(students: students, swipes: 20, policies: [.engine], seed: 3)[0].servedNDCG
            for s in students.indices {
                #expect(abs(outcome.perStudent[s] - (served[1][s] + served[2][s]) / 2) < 1e-12)
            }
            let differences = zip(outcome.perStudent, base.perStudent).map { $0 - $1 }
            #expect(abs(outcome.difference.mean - differences.reduce(0, +) / 6) < 1e-12)
            #expect(outcome.difference.lower <= outcome.difference.mean && outcome.difference.mean <= outcome.difference.upper)
        }
        // Deterministic.
        let again = try search.run(candidates: grid, students: students, swipes: 20, replay: nil, seed: 3)
        #expect(again.map(\.perStudent) == outcomes.map(\.perStudent) && again.map(\.candidate) == outcomes.map(\.candidate))
    }
}
