import Foundation
import Testing
import SwipeRank
import SwipeRankColleges
import SwipeRankEvaluation
import SwipeRankNumerics

/// The app's other events as training signal: `AnswerStrengths` by its definition, the fit's
/// use of them against fits they must equal, and the simulated signals.
@Suite("Engagement signals in the population fit")
struct SignalTests {
    typealias Log = FactorFitTests

    @Test("answer strengths as defined: a reaction × (1 + β), dwell × exp(±β z) around the answered pairs' median, clamped; unanswered pairs ignored")
    func strengths() {
        let answers: [String: [String: Bool]] = ["a": ["x": true, "y": false, "z": true], "b": ["x": false, "w": true]]
        let signals = [
            EngagementSignal(studentID: "a", itemID: "x", kind: .reaction("CTFO")),
            EngagementSignal(studentID: "a", itemID: "x", kind: .dwell(milliseconds: 4_000)),
            EngagementSignal(studentID: "a", itemID: "y", kind: .dwell(milliseconds: 1_000)),
            EngagementSignal(studentID: "a", itemID: "y", kind: .dwell(milliseconds: 1_000)),  // two looks add up: 2,000
            EngagementSignal(studentID: "b", itemID: "x", kind: .dwell(milliseconds: 2_000)),
            EngagementSignal(studentID: "b", itemID: "w", kind: .dwell(milliseconds: 1_000_000)),  // clamped at z = 2
            EngagementSignal(studentID: "a", itemID: "q", kind: .reaction("TFU")),  // never answered: ignored
            EngagementSignal(studentID: "c", itemID: "x", kind: .dwell(milliseconds: 1)),  // nor a student without answers
        ]
        let s = AnswerStrengths(signals: signals, answers: answers, reactionBoost: 1, dwellBoost: 0.5)
        // Answered dwell totals: 4,000, 2,000, 2,000, 1,000,000 → median 3,000.
        #expect(s.medianDwell == 3_000)
        #expect(abs(s.factor(studentID: "a", itemID: "x") - 2 * exp(0.5 * log(4_000.0 / 3_000))) < 1e-12)
        #expect(abs(s.factor(studentID: "a", itemID: "y") - exp(-0.5 * log(2_000.0 / 3_000))) < 1e-12)  // a dislike: the other way
        #expect(abs(s.factor(studentID: "b", itemID: "x") - exp(-0.5 * log(2_000.0 / 3_000))) < 1e-12)
        #expect(abs(s.factor(studentID: "b", itemID: "w") - exp(0.5 * 2)) < 1e-12)
        #expect(s.factor(studentID: "a", itemID: "z") == 1)  // no signal
        #expect(s.factor(studentID: "a", itemID: "q") == 1)
        // No boost: no factor at all.
        #expect(AnswerStrengths(signals: signals, answers: answers, reactionBoost: 0, dwellBoost: 0).factors.isEmpty)
        // Only reactions.
        let r = AnswerStrengths(signals: signals, answers: answers, reactionBoost: 2, dwellBoost: 0)
        #expect(r.factors == ["a": ["x": 3]])
    }

    @Test("the fit: boosts 0 or no signals change no byte; every like reacted to equals a like confidence × (1 + β); signals move the factors")
    func fitEquivalences() throws {
        let log = Log.log(students: 40, seed: 11)
        var options = FactorFit.Options()
        options.dimension = 4
        options.iterations = 4
        options.confidence = 5
        options.dislikeConfidence = 3
        let plain = try FactorFit.fit(catalog: Log.catalog, interactions: log, options: options)
        let reactions = log.filter { $0.action == .like }.map { EngagementSignal(studentID: $0.studentID, itemID: $0.itemID, kind: .reaction("♥")) }
        var rng = SplitMix64(seed: 12)
        let dwell = log.map { EngagementSignal(studentID: $0.studentID, itemID: $0.itemID,
                                               kind: .dwell(milliseconds: Double(Int.random(in: 100...9_000, using: &rng)))) }
        // Signals with both boosts 0: ignored, byte for byte.
        #expect(try FactorFit.fit(catalog: Log.catalog, interactions: log, signals: reactions + dwell, options: options).jsonData() == plain.jsonData())
        // Every like reacted to, β = 1: the objective of α = 10, the same factors.
        var boosted = options
        boosted.reactionBoost = 1
        let reacted = try FactorFit.fit(catalog: Log.catalog, interactions: log, signals: reactions, options: boosted)
        var doubled = options
        doubled.confidence = 10
        let reference = try FactorFit.fit(catalog: Log.catalog, interactions: log, options: doubled)
        #expect(reacted.itemFactors == reference.itemFactors)
        #expect(reacted.featureEmbedding == reference.featureEmbedding)
        // Dwell that differs between answers moves them; the file says what it was fitted with.
        var withDwell = options
        withDwell.dwellBoost = 0.5
        let moved = try FactorFit.fit(catalog: Log.catalog, interactions: log, signals: dwell, options: withDwell)
        #expect(moved.itemFactors != plain.itemFactors)
        let fitted = moved.fittedOn ?? ""
        #expect(fitted.contains("\(dwell.count) signals") && fitted.contains("dwell^0.5"))
        // In any order, the same file.
        let shuffled = try FactorFit.fit(catalog: Log.catalog, interactions: log.shuffled(using: &rng), signals: dwell.shuffled(using: &rng),
                                         options: withDwell)
        #expect(shuffled.jsonData() == moved.jsonData())
    }

    @Test("simulated signals: informative dwell and reactions follow the taste, noise does not", arguments: SignalModel.allCases)
    func simulated(model: SignalModel) throws {
        // Dwell against the probability of a like, over many draws: rank correlation.
        var rng = SplitMix64(seed: 5)
        var pairs: [(Double, Double)] = []
        var strong = 0, mild = 0, strongReactions = 0, mildReactions = 0
        for i in 0..<4_000 {
            let gain = Double.random(in: 0..<1, using: &rng)
            let signals = model.draw(gain: gain, studentID: "s", itemID: "i\(i)", using: &rng)
            guard case let .dwell(ms) = signals[0].kind else { Issue.record("the first signal is the dwell"); return }
            #expect(ms >= 0 && ms.isFinite)
            pairs.append((gain, ms))
            let reacted = signals.count == 2
            if abs(2 * gain - 1) > 0.8 { strong += 1; if reacted { strongReactions += 1 } }
            if abs(2 * gain - 1) < 0.2 { mild += 1; if reacted { mildReactions += 1 } }
        }
        let rho = SignalTests.spearman(pairs)
        let reactionGap = Double(strongReactions) / Double(strong) - Double(mildReactions) / Double(mild)
        switch model {
        case .informative:
            #expect(rho > 0.4)
            #expect(reactionGap > 0.15)
        case .noise:
            #expect(abs(rho) < 0.05)
            #expect(abs(reactionGap) < 0.06)
        }
    }

    @Test("the simulated log with signals has exactly the swipes of the log without; one dwell per swipe, about answered cards only")
    func simulatedLog() throws {
        var evaluator = SimulationEvaluator(engine: EvaluationFixtures.engine)
        evaluator.taste = SimulationEvaluator<SchoolMatcher>.hiddenTaste(schools: EvaluationFixtures.schools)
        var rng = SplitMix64(seed: 8)
        let students = (0..<4).map { DatasetStudent(id: "g\($0)", profile: SchoolSimulation.randomProfile(schools: EvaluationFixtures.schools, using: &rng)) }
        let plain = try evaluator.simulateLog(students: students, swipes: 15, seed: 3)
        for model in SignalModel.allCases {
            let (log, signals) = try evaluator.simulateLog(students: students, swipes: 15, seed: 3, signals: model)
            #expect(log == plain)
            let dwell = signals.filter { if case .dwell = $0.kind { true } else { false } }
            #expect(dwell.count == log.count)
            #expect(Set(signals.map { "\($0.studentID)/\($0.itemID)" }).isSubset(of: Set(log.map { "\($0.studentID)/\($0.itemID)" })))
        }
    }

    static func spearman(_ pairs: [(Double, Double)]) -> Double {
        func ranks(_ v: [Double]) -> [Double] {
            var r = [Double](repeating: 0, count: v.count)
            for (rank, i) in v.indices.sorted(by: { v[$0] < v[$1] }).enumerated() { r[i] = Double(rank) }
            return r
        }
        let a = ranks(pairs.map(\.0)), b = ranks(pairs.map(\.1))
        let n = Double(pairs.count), mean = (n - 1) / 2
        var num = 0.0, da = 0.0, db = 0.0
        for i in a.indices { num += (a[i] - mean) * (b[i] - mean); da += (a[i] - mean) * (a[i] - mean); db += (b[i] - mean) * (b[i] - mean) }
        return num / (da * db).squareRoot()
    }
}

/// `SignalsFile`: the signals CSV read and written, bad rows located.
@Suite("Signals CSV")
struct SignalsFileTests {
    @Test("written then read: the same signals; bad rows name file:line:column; skipping reports them")
    func roundTrip() throws {
        var rng = SplitMix64(seed: 21)
        let signals = (0..<200).map { n in
            EngagementSignal(studentID: "s\(n % 7)", itemID: "i,\(n % 11)",  // a comma: quoted
                             kind: n % 3 == 0 ? .reaction(["♥", "CTFO", "so \"good\""][Int(rng.next() % 3)])
                                 : .dwell(milliseconds: Double(rng.next() % 100_000)))
        }
        let text = SignalsFile.write(signals)
        let (read, report) = try SignalsFile.read(CSVTable(text: text, source: "s.csv"))
        #expect(read == signals && report.skipped.isEmpty)
        let bad = """
            student_id,item_id,kind,value
            a,x,dwell_ms,120
            a,y,dwell_ms,-4
            b,x,glance,3
            b,,reaction,♥
            c,z,reaction,
            c,q,dwell_ms,7
            """ + "\n"
        #expect { try SignalsFile.read(CSVTable(text: bad, source: "s.csv")) } throws: { "\($0)".contains("s.csv:3:") && "\($0)".contains("dwell_ms") }
        #expect { try SignalsFile.read(CSVTable(text: bad, source: "s.csv"), itemIDs: ["x", "y", "z"]) } throws: { "\($0)".contains("s.csv:3:") }
        let (kept, skipped) = try SignalsFile.read(CSVTable(text: bad, source: "s.csv"), itemIDs: ["x", "y", "z"], policy: .skip)
        #expect(kept == [EngagementSignal(studentID: "a", itemID: "x", kind: .dwell(milliseconds: 120))])
        #expect(skipped.skipped.count == 5)  // negative dwell, unknown kind, empty item, empty reaction, unknown item q
        #expect { try SignalsFile.read(CSVTable(text: "student_id,item_id,value\n", source: "s.csv")) } throws: { "\($0)".contains("kind") }
    }
}
