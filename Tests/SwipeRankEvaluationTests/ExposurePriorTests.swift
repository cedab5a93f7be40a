import Foundation
import SwipeRankColleges
import Testing
import SwipeRank
import SwipeRankEvaluation
import SwipeRankNumerics

/// A population prior's exposure effects (`PopulationFit` with β > 0), how the engine uses them
/// (ranking only), and the procedure that chooses β.
@Suite("Population prior: exposure")
struct ExposurePriorTests {
    static let engine = EvaluationFixtures.engine

    /// A log of chosen swipes: each of `count` students swipes `swipes` distinct schools drawn
    /// with probability ∝ 1/(rank + 1) over a fixed random order of the catalog (a few schools
    /// are what most people pick), and likes each with probability `like`, in a shuffled time
    /// order.
    static func chosenLog(count: Int, swipes: Int, seed: UInt64, like: Double = 0.5)
    -> (students: [DatasetStudent<StudentProfile>], log: [Interaction]) {
        var rng = SplitMix64(seed: seed)
        let catalog = engine.matcher.catalog
        let order = Array((0..<catalog.count).shuffled(using: &rng))
        let weights = (0..<catalog.count).map { 1 / Double($0 + 1) }
        let total = weights.reduce(0, +)
        var students: [DatasetStudent<StudentProfile>] = [], log: [Interaction] = []
        for s in 0..<count {
            let student = DatasetStudent(id: "c\(s)", profile: SchoolSimulation.randomProfile(schools: EvaluationFixtures.schools, using: &rng))
            students.append(student)
            var rows: [Int] = [], picked = Set<Int>()
            while rows.count < swipes {
                var u = Double.random(in: 0..<total, using: &rng), r = 0
                while r < weights.count - 1 && u >= weights[r] { u -= weights[r]; r += 1 }
                if picked.insert(order[r]).inserted { rows.append(order[r]) }
            }
            for (t, row) in rows.shuffled(using: &rng).enumerated() {
                let liked = Double.random(in: 0..<1, using: &rng) < like
                log.append(Interaction(studentID: student.id, itemID: catalog.ids[row], action: liked ? .like : .dislike,
                                       timestamp: Int64(10 + t)))
            }
        }
        return (students, log)
    }

    @Test("exposure effects equal the reference formula; the rest of the fit is unchanged; β = 0 writes version 1", arguments: 0..<2)
    func reference(seed: UInt64) throws {
        let (students, log) = Self.chosenLog(count: 9, swipes: 15, seed: seed)
        let plain = try PopulationFit.fit(engine: Self.engine, students: students, interactions: log)
        let prior = try PopulationFit.fit(engine: Self.engine, students: students, interactions: log, exposureWeight: 1.5)
        #expect(plain.version == 1 && plain.exposureEffects == nil && plain.exposureWeight == 0)
        #expect(!String(decoding: plain.jsonData(), as: UTF8.self).contains("exposure"))
        #expect(prior.version == 2 && prior.exposureWeight == 1.5)
        #expect(prior.weightShift == plain.weightShift && prior.itemEffects == plain.itemEffects)
        let catalog = Self.engine.matcher.catalog
        var swipers = [Set<String>](repeating: [], count: catalog.count)
        for x in log { swipers[catalog.row(of: x.itemID)!].insert(x.studentID) }
        let share = swipers.map { Foundation.log((Double($0.count) + 0.5) / (9 + 1)) }
        let mean = share.reduce(0, +) / Double(share.count)
        let scale = Self.engine.matcher.calibration.scale
        let effects = try #require(prior.exposureEffects)
        #expect(effects.count == catalog.count)
        for row in 0..<catalog.count { #expect(abs(effects[row] - 1.5 * scale * (share[row] - mean)) < 1e-9, "row \(row)") }
        // Swiped by more students, a larger effect; an item nobody swiped has a finite one.
        let most = swipers.indices.max { swipers[$0].count < swipers[$1].count }!
        let none = swipers.indices.first { swipers[$0].isEmpty }!
        #expect(effects[most] > 0 && effects[none] < 0 && effects[none].isFinite)
        #expect(prior.digest != plain.digest)
    }

    @Test("a version 2 file round-trips; a field of the other version, a bad weight or count is an error naming it")
    func file() throws {
        let (students, log) = Self.chosenLog(count: 3, swipes: 8, seed: 5)
        let prior = try PopulationFit.fit(engine: Self.engine, students: students, interactions: log, exposureWeight: 2)
        let data = prior.jsonData()
        #expect(try PopulationPrior.decode(json: data, source: "p.json") == prior)
        let object = try JSONSerialization.jsonObject(with: data) as! [String: Any]
        func decodeError(_ change: ([String: Any]) -> [String: Any]) -> String {
            let bytes = try! JSONSerialization.data(withJSONObject: change(object))
            do { _ = try PopulationPrior.decode(json: bytes, source: "p.json"); return "" } catch { return error.description }
        }
        #expect(decodeError { var o = $0; o["version"] = 3; return o }.contains("version"))
        #expect(decodeError { var o = $0; o["version"] = 1; return o }.contains("exposure_weight"))
        #expect(decodeError { var o = $0; o["version"] = 1; o.removeValue(forKey: "exposure_weight"); return o }.contains("exposure_effects"))
        #expect(decodeError { var o = $0; o.removeValue(forKey: "exposure_effects"); return o }.contains("exposure_effects"))
        #expect(decodeError { var o = $0; o["exposure_weight"] = 0; return o }.contains("exposure_weight"))
        #expect(decodeError { var o = $0; o["exposure_weight"] = -1; return o }.contains("exposure_weight"))
        #expect(decodeError { var o = $0; o["exposure_effects"] = [0.5]; return o }.contains("exposure_effects"))
        // Built in code with the wrong count, the engine refuses it, naming the field.
        let short = PopulationPrior(catalogFingerprint: prior.catalogFingerprint, featureCount: prior.featureCount, termNames: prior.termNames,
                                    weightShift: prior.weightShift, itemEffects: prior.itemEffects, students: 3, swipes: 24,
                                    itemPrecision: 5, exposureWeight: 1, exposureEffects: [0, 1])
        do {
            _ = try Self.engine.withPopulation(short)
            Issue.record("a prior with 2 exposure effects loaded")
        } catch {
            #expect(error.field == "exposure_effects")
        }
    }

    @Test("the engine ranks by score + item effect + exposure effect; match scores and learning leave exposure out")
    func engine() throws {
        let (students, log) = Self.chosenLog(count: 30, swipes: 20, seed: 9)
        let prior = try PopulationFit.fit(engine: Self.engine, students: students, interactions: log, exposureWeight: 2)
        let plainPrior = try PopulationFit.fit(engine: Self.engine, students: students, interactions: log)
        let engine = try Self.engine.withPopulation(prior), plainEngine = try Self.engine.withPopulation(plainPrior)
        let catalog = engine.matcher.catalog, exposure = try #require(prior.exposureEffects)
        var rng = SplitMix64(seed: 10)
        let profile = SchoolSimulation.randomProfile(schools: EvaluationFixtures.schools, using: &rng)
        var session = try engine.session(studentID: "new", profile: profile, seed: 3)
        var plainSession = try plainEngine.session(studentID: "new", profile: profile, seed: 3)
        var raw: [Float] = []
        catalog.scores(weights: session.weights, terms: session.student.terms, into: &raw)
        let like = (0..<catalog.count).map { raw[$0] + Float(prior.itemEffects[$0]) }
        // The engine adds the two effects' sum (one Float per item, precomputed).
        let expected = (0..<catalog.count).map { raw[$0] + (Float(prior.itemEffects[$0]) + Float(exposure[$0])) }
        var scores: [Float] = []
        engine.rawScores(weights: session.weights, student: session.student, into: &scores)
        #expect(scores == expected)
        // The ranking follows exposure (it differs from the prior without it); each card's match
        // score is calibrated from the score without its exposure effect.
        let ranked = session.ranking(count: 10)
        let reference = (0..<catalog.count).sorted { (expected[$0], -$0) > (expected[$1], -$1) }.prefix(10)
        #expect(ranked.map { catalog.row(of: $0.item.id)! } == Array(reference))
        #expect(ranked.map(\.item.id) != plainSession.ranking(count: 10).map(\.item.id))
        let calibration = engine.matcher.calibration
        func rounded(_ x: Double) -> Double { (x * 10_000).rounded() / 10_000 }
        for card in ranked {
            let row = catalog.row(of: card.item.id)!
            #expect(card.matchScore == rounded(calibration.matchScore(raw: Double(engine.matchRaw(expected[row], row: row)))))
            #expect(abs(Double(engine.matchRaw(expected[row], row: row)) - Double(like[row])) < 1e-4)
        }
        let deck = session.recommendations(count: 10)
        for card in deck.recommendations {
            let row = catalog.row(of: card.item.id)!
            #expect(abs(card.matchScore - calibration.matchScore(raw: Double(like[row]))) < 2e-4, "\(card.item.id)")
        }
        // Learning is told the item effect only: the same swipes learned under the prior without
        // exposure give the same model, bit for bit (there judged outside a deck: the same update).
        for card in session.served {
            let swipe = Swipe(swipeID: "s\(card.position)", cardID: card.cardID, action: card.position % 3 == 0 ? .like : .dislike,
                              timestamp: Int64(card.position))
            _ = try session.recordSwipe(swipe)
            _ = try plainSession.recordJudgement(swipe, weight: 1)
        }
        #expect(session.model.digest == plainSession.model.digest)
        #expect(engine.modelVersion != plainEngine.modelVersion)
    }

    @Test("the procedure picks the best validation NDCG, prefers exposure on a log of chosen swipes, and is order-invariant")
    func choice() throws {
        let (students, log) = Self.chosenLog(count: 60, swipes: 20, seed: 21)
        let choice = try PopulationFit.chooseExposureWeight(engine: Self.engine, students: students, interactions: log,
                                                            candidates: [0, 1, 2, 4])
        #expect(choice.candidates.map(\.weight) == [0, 1, 2, 4])
        #expect(choice.students > 40 && choice.students <= 60)
        let best = choice.candidates.max { $0.ndcg < $1.ndcg }!
        #expect(choice.weight == best.weight && choice.weight > 0)
        #expect(choice.candidates[0].ndcg < best.ndcg - 0.02, "knowing what people pick is worth something here: \(choice.candidates)")
        var rng = SplitMix64(seed: 1)
        #expect(try PopulationFit.chooseExposureWeight(engine: Self.engine, students: students.shuffled(using: &rng),
                                                       interactions: log.shuffled(using: &rng), candidates: [0, 1, 2, 4]) == choice)
        // A tie goes to the smaller weight: on equal scores (no exposure signal at all: everyone
        // swipes the same schools, so every exposure effect is 0) β = 0, the first candidate.
        let same = Array(log.filter { $0.studentID == "c0" })
        let flat = students.prefix(20).flatMap { s in same.map { Interaction(studentID: s.id, itemID: $0.itemID, action: $0.action, timestamp: $0.timestamp) } }
        let tie = try PopulationFit.chooseExposureWeight(engine: Self.engine, students: Array(students.prefix(20)), interactions: flat,
                                                         candidates: [0, 1, 3])
        #expect(tie.weight == 0, "\(tie.candidates)")
    }

    @Test("the signals' choice: the plain candidate is the exposure choice's β = 0, the best NDCG wins, the plain prior on a tie")
    func signalChoice() throws {
        let (students, log) = Self.chosenLog(count: 60, swipes: 20, seed: 21)
        // Reactions on every like of the first half of the students: the weighed fit differs.
        let signals = log.filter { $0.action == .like && $0.studentID < "c3" }
            .map { EngagementSignal(studentID: $0.studentID, itemID: $0.itemID, kind: .reaction("♥")) }
        let boosts = PopulationFit.SignalBoosts(reaction: 3, dwell: 0)
        // With exposure (β = 1): on this log of chosen swipes the features alone rank nothing
        // into anyone's top 10 (every NDCG 0), knowing what people pick does.
        let choice = try PopulationFit.chooseSignalBoosts(engine: Self.engine, students: students, interactions: log, signals: signals,
                                                          candidates: [boosts], exposureWeight: 1)
        #expect(choice.candidates.map(\.boosts) == [.none, boosts])
        // The same procedure as the exposure choice: its plain candidate scores the same.
        let exposure = try PopulationFit.chooseExposureWeight(engine: Self.engine, students: students, interactions: log, candidates: [1])
        #expect(exposure.candidates[0].ndcg > 0.02)
        #expect(choice.students == exposure.students)
        #expect(abs(choice.candidates[0].ndcg - exposure.candidates[0].ndcg) < 1e-12, "\(choice.candidates) \(exposure.candidates)")
        #expect(choice.candidates[1].ndcg != choice.candidates[0].ndcg, "the reactions moved the prior")
        let best = choice.candidates.max { $0.ndcg < $1.ndcg }!
        #expect(choice.boosts == best.boosts)
        // No signals: the weighed fit is the plain fit, so a tie, and the plain prior wins it.
        let none = try PopulationFit.chooseSignalBoosts(engine: Self.engine, students: students, interactions: log, signals: [],
                                                        candidates: [boosts], exposureWeight: 1)
        #expect(none.candidates[0].ndcg == none.candidates[1].ndcg && none.boosts == .none)
    }

    @Test("a prior weighed by the signals: fixed boosts, or the log's choice between plain and weighed, fitted with what was chosen (fit-prior and the refit)")
    func fitWeighingSignals() throws {
        let (students, log) = Self.chosenLog(count: 60, swipes: 20, seed: 22)
        let signals = log.filter { $0.action == .like && $0.studentID < "c3" }
            .map { EngagementSignal(studentID: $0.studentID, itemID: $0.itemID, kind: .reaction("♥")) }
        func strengths(_ b: PopulationFit.SignalBoosts) -> AnswerStrengths {
            AnswerStrengths(signals: signals, interactions: log, reactionBoost: b.reaction, dwellBoost: b.dwell)
        }
        func plainFit(_ b: PopulationFit.SignalBoosts) throws -> PopulationPrior {
            try PopulationFit.fit(engine: Self.engine, students: students, interactions: log, exposureWeight: 1,
                                  strengths: b == .none ? nil : strengths(b))
        }
        let boosts = PopulationFit.SignalBoosts(reaction: 3, dwell: 0)
        // Not chosen: the setting given, plain or weighed, and no choice.
        for given in [PopulationFit.SignalBoosts.none, boosts] {
            let fitted = try PopulationFit.fitWeighingSignals(engine: Self.engine, students: students, interactions: log, signals: signals,
                                                              boosts: given, choose: false, exposureWeight: 1, strengths: strengths)
            let reference = try plainFit(given)
            #expect(fitted.boosts == given && fitted.choice == nil)
            #expect(fitted.prior == reference)
        }
        let (plain, weighed) = (try plainFit(.none), try plainFit(boosts))
        #expect(plain != weighed, "the reactions move the prior")
        // Chosen: between the plain fit and the given setting (the default candidate when none is
        // given), exactly chooseSignalBoosts' choice, and the prior fitted with it on the whole log.
        for (given, offered) in [(boosts, boosts), (PopulationFit.SignalBoosts.none, PopulationFit.SignalBoosts(reaction: 1, dwell: 0.5))] {
            let fitted = try PopulationFit.fitWeighingSignals(engine: Self.engine, students: students, interactions: log, signals: signals,
                                                              boosts: given, choose: true, exposureWeight: 1, strengths: strengths)
            let choice = try #require(fitted.choice)
            let reference = try PopulationFit.chooseSignalBoosts(engine: Self.engine, students: students, interactions: log, signals: signals,
                                                                 candidates: [offered], exposureWeight: 1)
            let refitted = try plainFit(choice.boosts)
            #expect(choice == reference)
            #expect(choice.candidates.map(\.boosts) == [.none, offered])
            #expect(fitted.boosts == choice.boosts && fitted.prior == refitted)
        }
        // No events at all: the weighed fit ties the plain one, and the plain prior is kept.
        let none = try PopulationFit.fitWeighingSignals(engine: Self.engine, students: students, interactions: log, signals: [],
                                                        boosts: boosts, choose: true, exposureWeight: 1) { _ in
            AnswerStrengths(signals: [], interactions: log, reactionBoost: 3, dwellBoost: 0)
        }
        #expect(none.boosts == .none && none.prior == plain)
    }

    @Test("the replay with a chosen weight: chosen on training swipes only, swipe AUC without exposure, learning keeps the prior's precision")
    func replay() throws {
        let (students, log) = Self.chosenLog(count: 80, swipes: 20, seed: 33)
        var chosen = ReplayEvaluator(engine: Self.engine)
        chosen.exposureWeight = .chosen
        let outcome = try chosen.replay(students: students, interactions: log, seed: 2)
        let choice = try #require(outcome.exposureChoice)
        #expect(outcome.exposureWeight == choice.weight && choice.weight > 0)
        let plain = try ReplayEvaluator(engine: Self.engine).replay(students: students, interactions: log, seed: 2)
        #expect(plain.exposureChoice == nil && plain.exposureWeight == 0)
        let a = Dictionary(uniqueKeysWithValues: outcome.results.map { ($0.policy, $0) })
        let b = Dictionary(uniqueKeysWithValues: plain.results.map { ($0.policy, $0) })
        // Exposure only orders: the swipe AUC (will the card shown be liked?) is the same.
        for name in ["population_prior", "engine_population_prior", "engine_population_prior_bias"] {
            #expect(a[name]!.metrics["swipe_auc"] == b[name]!.metrics["swipe_auc"], "\(name)")
        }
        #expect(a["engine"]!.metrics == b["engine"]!.metrics)
        #expect(a["population_prior"]!.mean("precision@10") > b["population_prior"]!.mean("precision@10"))
        #expect(a["engine_population_prior"]!.mean("precision@10") >= a["population_prior"]!.mean("precision@10") - 0.005)
        // Flipping every held-out answer changes neither the choice nor its table.
        let flipped = ReplayEvaluatorTests.flippingHeldOut(log)
        #expect(try chosen.replay(students: students, interactions: flipped, seed: 2).exposureChoice == choice)
    }
}
