import Foundation
import Testing
import SwipeRank
@testable import SwipeRankEvaluation
import SwipeRankNumerics

/// The evaluation's references: the linear oracle, the naive learner in the engine's serving
/// policy, and generalization on never-served items.
@Suite("Evaluation references")
struct ReferencePolicyTests {
    static func sigmoid(_ x: Double) -> Double { 1 / (1 + exp(-x)) }

    static func randomVectors(count: Int, dimension: Int, using rng: inout SplitMix64) -> [Double] {
        (0..<(count * dimension)).map { _ in Double.random(in: -1.5...1.5, using: &rng) }
    }

    @Test("the oracle recovers a taste that is linear in the vectors", arguments: 0..<4)
    func oracleRecoversLinearTaste(seed: UInt64) throws {
        var rng = SplitMix64(seed: 100 + seed)
        let n = 400, d = 5
        let x = Self.randomVectors(count: n, dimension: d, using: &rng)
        let w = (0..<d).map { _ in Double.random(in: -2...2, using: &rng) }, b = Double.random(in: -1...1, using: &rng)
        let targets = (0..<n).map { i in Self.sigmoid((0..<d).reduce(b) { $0 + x[i * d + $1] * w[$1] }) }
        let fit = try LinearOracle.fit(vectors: x, count: n, targets: targets, ridge: 1e-6)
        for j in 0..<d { #expect(abs(fit.weights[j] - w[j]) < 1e-3, "w[\(j)] \(fit.weights[j]) vs \(w[j])") }
        #expect(abs(fit.intercept - b) < 1e-3)
    }

    @Test("on a nonlinear taste the oracle is the optimum: zero gradient, and every nearby fit is worse", arguments: 0..<6)
    func oracleIsOptimal(seed: UInt64) throws {
        var rng = SplitMix64(seed: 200 + seed)
        let n = 300, d = 6
        let x = Self.randomVectors(count: n, dimension: d, using: &rng)
        // A cliff, a saturation and a private taste: nothing linear.
        let targets = (0..<n).map { i -> Double in
            let cliff = x[i * d] > 0.3 ? 0.05 : 0.8
            let saturating = tanh(3 * x[i * d + 1])
            return min(1, max(0, cliff * (0.6 + 0.4 * saturating) + Double.random(in: -0.05...0.05, using: &rng)))
        }
        let ridge = 1e-3
        let fit = try LinearOracle.fit(vectors: x, count: n, targets: targets, ridge: ridge)
        let gradient = LinearOracle.gradient(weights: fit.weights, intercept: fit.intercept, vectors: x, count: n, targets: targets, ridge: ridge)
        #expect(gradient.allSatisfy { abs($0) < 1e-6 }, "\(gradient)")
        let theta = fit.weights + [fit.intercept]
        let best = LinearOracle.objective(LinearOracle.margins(x, n, d, theta), targets, theta, d, ridge)
        for _ in 0..<20 {
            let nearby = theta.map { $0 + Double.random(in: -0.02...0.02, using: &rng) }
            let value = LinearOracle.objective(LinearOracle.margins(x, n, d, nearby), targets, nearby, d, ridge)
            #expect(value > best)
        }
        // Targets of exactly 0 and 1 only (separable data) still end in a finite fit.
        let hard = (0..<n).map { x[$0 * d] > 0 ? 1.0 : 0.0 }
        let separated = try LinearOracle.fit(vectors: x, count: n, targets: hard, ridge: ridge)
        #expect(separated.weights.allSatisfy(\.isFinite) && separated.weights[0] > 1)
    }

    @Test("a non-finite vector is an error, not a NaN fit")
    func oracleRejectsNonFinite() {
        #expect(throws: NumericsError.self) {
            try LinearOracle.fit(vectors: [1, .nan, 0, 1], count: 2, targets: [0.5, 0.5])
        }
    }

    @Test("generalization is NDCG@10 over the cards no policy served, against the best of them")
    func generalizationReference() throws {
        let engine = EvaluationFixtures.engine
        let catalog = engine.matcher.catalog
        let n = catalog.count
        var rng = SplitMix64(seed: 31)
        let students = (0..<5).map { DatasetStudent(id: "g\($0)", profile: SchoolSimulation.randomProfile(schools: EvaluationFixtures.schools, using: &rng)) }
        var evaluator = SimulationEvaluator(engine: engine)
        // A taste known in advance: a fixed pseudo-random probability per row.
        let truth = (0..<n).map { Double(($0 * 7_919) % 1_000) / 1_000 }
        evaluator.taste = { _, _ in truth }
        let results = try evaluator.run(students: students, swipes: 20, policies: [.profileOnly, .popularity], seed: 4)
        let popularity = SchoolSimulation.popularity(engine.matcher.schools).map(Float.init)
        for (s, student) in students.enumerated() {
            // Both policies are static: each served its own top 20 plus the next deck of 10.
            let resolved = try engine.matcher.student(student.profile)
            var cold: [Float] = []
            catalog.scores(weights: engine.matcher.coldStartWeights(for: resolved), terms: resolved.terms, into: &cold)
            let served = Set(cold.topIndices(30)).union(popularity.topIndices(30))
            let unserved = (0..<n).filter { !served.contains($0) }
            for (p, scores) in [cold, popularity].enumerated() {
                // Reference: sort the unserved rows by score (ties to the lower row), grade by the truth.
                let ranked = unserved.sorted { (scores[$0], -$0) > (scores[$1], -$1) }.prefix(10)
                let ideal = unserved.map { truth[$0] }.sorted(by: >).prefix(10)
                let dcg = ranked.enumerated().reduce(0.0) { $0 + truth[$1.element] / log2(Double($1.offset + 2)) }
                let idcg = ideal.enumerated().reduce(0.0) { $0 + $1.element / log2(Double($1.offset + 2)) }
                #expect(abs(results[p].generalization[s] - dcg / idcg) < 1e-9, "policy \(p), student \(s)")
            }
        }
    }

    @Test("the naive learner in the engine's serving policy learns exactly like naive_sgd and serves like the engine", arguments: 0..<3)
    func naiveLearnerInEngineServing(seed: UInt64) throws {
        let engine = EvaluationFixtures.engine
        var rng = SplitMix64(seed: 300 + seed)
        var profile = SchoolSimulation.randomProfile(schools: EvaluationFixtures.schools, using: &rng)
        if profile.home == nil { profile.home = try GeoPoint(latitude: 40.0, longitude: -75.2) }
        let student = DatasetStudent(id: "n\(seed)", profile: profile)
        let resolved = try engine.matcher.student(profile)
        var policy = try NaiveLearnerEngineServingPolicy(name: "x", engine: engine, student: student, resolved: resolved, seed: seed)
        var reference = NaiveSGDPolicy(name: "ref", engine: engine, student: resolved)
        var answers = SplitMix64(seed: 900 + seed)
        for _ in 0..<4 {
            let batch = try policy.serve(count: 10)
            #expect(batch.count == 10)
            for row in batch {
                let liked = Bool.random(using: &answers)
                try policy.observe(row: row, liked: liked)
                try reference.observe(row: row, liked: liked)
                // The learner is the naive one, and the session serves with its weights.
                #expect(policy.learnedWeights == reference.weights)
                #expect(policy.serving.session.model.mean == reference.weights)
            }
            // Its ranking is the naive learner's over the cards not yet served.
            let seen = Set(policy.serving.session.served.map(\.row))
            #expect(policy.ranking(limit: 10) == StaticPolicy.top(reference.scores, excluding: seen, limit: 10))
        }
        // Served as the engine serves: a probe at every 4th card, and the band plan of a plain
        // engine session for the same student (the plan depends only on the bands' sizes).
        let served = policy.serving.session.served
        #expect(served.allSatisfy { $0.isProbe == ($0.position % 4 == 0) })
        var twin = try engine.session(studentID: "twin", profile: profile, seed: seed)
        for _ in 0..<4 { _ = twin.recommendations(count: 10) }
        #expect(policy.serving.session.servedPerBand == twin.servedPerBand)
        // Per deck the same bands (their order within a deck is the weights' best-first order).
        func bandsPerDeck(_ cards: [ServedCard]) -> [[String]] {
            stride(from: 0, to: cards.count, by: 10).map { cards[$0..<min(cards.count, $0 + 10)].map { $0.band?.rawValue ?? "-" }.sorted() }
        }
        #expect(bandsPerDeck(served) == bandsPerDeck(twin.served))
    }

    @Test("the engine's serving without learning keeps the cold start: its ranking is profile_only's, its precision still grows")
    func engineWithoutLearning() throws {
        let engine = EvaluationFixtures.engine
        var rng = SplitMix64(seed: 41)
        let profile = SchoolSimulation.randomProfile(schools: EvaluationFixtures.schools, using: &rng)
        let student = DatasetStudent(id: "w", profile: profile)
        let resolved = try engine.matcher.student(profile)
        var policy = try EngineWithoutLearningPolicy(name: "x", engine: engine, student: student, seed: 41)
        let cold = engine.matcher.coldStartWeights(for: resolved)
        var coldScores: [Float] = []
        engine.matcher.catalog.scores(weights: cold, terms: resolved.terms, into: &coldScores)
        let prior = policy.serving.session.model.factor
        for _ in 0..<3 {
            for row in try policy.serve(count: 10) { try policy.observe(row: row, liked: Bool.random(using: &rng)) }
            #expect(policy.serving.session.model.mean == cold.combined.map(Double.init))
            let seen = Set(policy.serving.session.served.map(\.row))
            #expect(policy.ranking(limit: 10) == StaticPolicy.top(coldScores, excluding: seen, limit: 10))
        }
        #expect(policy.serving.session.model.factor != prior, "the swipes still sharpen the posterior the probes use")
        #expect(policy.serving.session.served.allSatisfy { $0.isProbe == ($0.position % 4 == 0) })
    }

    @Test("replacing the session's mean serves from it; the precision is the session's own")
    func replacePosteriorMean() throws {
        let engine = EvaluationFixtures.engine
        var rng = SplitMix64(seed: 5)
        let profile = SchoolSimulation.randomProfile(schools: EvaluationFixtures.schools, using: &rng)
        var session = try engine.session(studentID: "m", profile: profile, seed: 5)
        _ = session.recommendations(count: 10)
        for card in session.served {
            _ = try session.recordSwipe(Swipe(swipeID: "s\(card.position)", cardID: card.cardID, action: .like, timestamp: Int64(card.position)))
        }
        let factor = session.model.factor
        let mean = (0..<session.model.dimension).map { _ in Double.random(in: -1...1, using: &rng) }
        session.replacePosteriorMean(mean)
        #expect(session.model.mean == mean && session.model.factor == factor)
        let d = engine.matcher.catalog.dimension
        var scores: [Float] = []
        engine.matcher.catalog.scores(weights: PreferenceWeights(features: mean[..<d].map(Float.init), terms: mean[d...].map(Float.init)),
                                      terms: session.student.terms, into: &scores)
        let unseen = Set(session.served.map(\.row))
        let expected = (0..<scores.count).filter { !unseen.contains($0) }.sorted { (scores[$0], -$0) > (scores[$1], -$1) }.prefix(10)
        #expect(session.ranking(count: 10).map { engine.matcher.catalog.row(of: $0.item.id)! } == Array(expected))
    }
}

@Suite("Gap to the oracle")
struct GapClosedTests {
    static func result(_ policy: PolicyKind, _ generalization: [Double]) -> SimulationPolicyResult {
        var r = SimulationPolicyResult(policy: policy, checkpoints: [0], ndcg: [[]], precision: [[]], likeRate: [[]], cosine: [[]],
                                       coverage: 0, diversity: 0, novelty: 0, geoMixError: 0)
        r.generalization = generalization
        return r
    }

    @Test("the gap closed is (policy − cold start) / (oracle − cold start), NaN without both references or a gap")
    func gap() {
        let results = [Self.result(.engine, [0.6, 0.8]), Self.result(.profileOnly, [0.4, 0.6]), Self.result(.linearOracle, [0.9, 0.9]),
                       Self.result(.random, [0.1, 0.3])]
        #expect(abs(EvaluationReport.gapClosed(.engine, in: results) - 0.5) < 1e-12)
        #expect(abs(EvaluationReport.gapClosed(.random, in: results) - (-0.75)) < 1e-12)
        #expect(EvaluationReport.gapClosed(.profileOnly, in: results) == 0)
        #expect(EvaluationReport.gapClosed(.engine, in: Array(results.dropFirst(2))).isNaN, "no engine")
        #expect(EvaluationReport.gapClosed(.engine, in: Array(results.prefix(2))).isNaN, "no oracle")
        let noGap = [Self.result(.engine, [0.5]), Self.result(.profileOnly, [0.5]), Self.result(.linearOracle, [0.5])]
        #expect(EvaluationReport.gapClosed(.engine, in: noGap).isNaN)
    }
}
