import Foundation
@testable import SwipeRankColleges
import Testing
@testable import SwipeRank
import SwipeRankNumerics

/// `EngineConfiguration.studentBias`: an intercept per student, learned beside the weights.
@Suite("Student bias")
struct StudentBiasTests {
    static let plain = SwipeEngine(matcher: Fixtures.matcher)
    static let biased = plain.reconfigured { $0.studentBias = true }

    @Test("the session learns exactly what a reference model fed [z, 1] learns", arguments: 0..<4)
    func reference(seed: UInt64) throws {
        let engine = Self.biased
        var session = try engine.session(studentID: "b", profile: Fixtures.bostonStudent, seed: seed)
        #expect(engine.modelDimension == Self.plain.modelDimension + 1 && session.model.dimension == engine.modelDimension)
        // Reference: the cold start with a zero bias, one Newton step per swipe on the vector with a trailing 1.
        var reference = PreferenceModel(priorMean: engine.matcher.coldStartWeights(for: session.student).combined + [0],
                                        priorPrecision: engine.configuration.priorPrecision, calibration: engine.matcher.calibration)
        var rng = SplitMix64(seed: 50 + seed)
        for position in 1...30 {
            if session.served.count < position { _ = session.recommendations(count: 10) }
            let card = session.served[position - 1]
            let liked = Double.random(in: 0..<1, using: &rng) < 0.2  // a picky student
            let result = try session.recordSwipe(Swipe(swipeID: "s\(position)", cardID: card.cardID, action: liked ? .like : .dislike,
                                                       timestamp: Int64(position)))
            // Prompts go unanswered (an empty answer shifts nothing), so the reference needs no feedback.
            if let prompt = result.feedback { try session.submitFeedback(cardID: prompt.cardID, options: []) }
            try reference.observe(engine.combinedVector(row: card.row, student: session.student) + [1], liked: liked)
        }
        #expect(session.model.digest == reference.digest)
        #expect(session.bias == reference.mean.last && session.bias! < 0, "mostly dislikes: the bias goes down")
        // The weights the cards are scored with leave the bias out.
        let d = engine.matcher.catalog.dimension, k = session.student.terms.names.count
        #expect(session.weights.features == reference.mean[..<d].map(Float.init))
        #expect(session.weights.terms == reference.mean[d..<(d + k)].map(Float.init))
        // The shown match score is the card's own: the calibrated raw score without the bias.
        let deck = session.recommendations(count: 5)
        var raw: [Float] = []
        engine.matcher.catalog.scores(weights: session.weights, terms: session.student.terms, into: &raw)
        for card in deck.recommendations {
            let row = engine.matcher.catalog.row(of: card.item.id)!
            // Shown to 4 decimals; the bias (below −0.1 here) would move it by far more.
            #expect(abs(card.matchScore - engine.matcher.calibration.matchScore(raw: Double(raw[row]))) <= 5.1e-5)
        }
        // Snapshots carry the bias and restore to the same model.
        let restored = try engine.restore(session.snapshot())
        #expect(restored.model.digest == session.model.digest && restored.bias == session.bias)
        #expect(try Self.plain.session(studentID: "p", profile: Fixtures.bostonStudent, seed: 1).bias == nil)
    }

    @Test("a picky student's dislikes lower the bias instead of the weights of what they like")
    func pickyStudent() throws {
        // The same stream of swipes — one like in five, the likes always the deck's first card —
        // with and without a bias: the bias absorbs the general dislike, so the weights move less.
        func run(_ engine: SwipeEngine<SchoolMatcher>) throws -> (moved: Double, session: SwipeSession<SchoolMatcher>) {
            var session = try engine.session(studentID: "p", profile: Fixtures.bostonStudent, seed: 3)
            let start = session.model.mean
            for position in 1...30 {
                if session.served.count < position { _ = session.recommendations(count: 10) }
                let card = session.served[position - 1]
                _ = try session.recordSwipe(Swipe(swipeID: "s\(position)", cardID: card.cardID,
                                                  action: position % 5 == 1 ? .like : .dislike, timestamp: Int64(position)))
            }
            let d = Self.plain.modelDimension
            let moved = zip(session.model.mean.prefix(d), start.prefix(d)).reduce(0) { $0 + ($1.0 - $1.1) * ($1.0 - $1.1) }.squareRoot()
            return (moved, session)
        }
        let without = try run(Self.plain), with = try run(Self.biased)
        #expect(with.moved < without.moved, "\(with.moved) vs \(without.moved)")
        #expect(with.session.bias! < -0.1)
    }

    @Test("the setting is decoded, encoded only when on, and part of the digest; the default's encoding is unchanged")
    func configuration() throws {
        let on = try EngineConfiguration.decode(json: Data(#"{"studentBias": true}"#.utf8), source: "c.json")
        #expect(on.studentBias)
        let off = EngineConfiguration()
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        #expect(!String(decoding: try encoder.encode(off), as: UTF8.self).contains("studentBias"))
        #expect(String(decoding: try encoder.encode(on), as: UTF8.self).contains(#""studentBias":true"#))
        #expect(try JSONDecoder().decode(EngineConfiguration.self, from: try encoder.encode(on)) == on)
        #expect(on.digest != off.digest)
        #expect(Self.biased.modelVersion != Self.plain.modelVersion)
        #expect(throws: DataError.self) { try EngineConfiguration.decode(json: Data(#"{"studentBias": "yes"}"#.utf8), source: "c.json") }
        // A session learned with a bias does not restore without one (and the reverse).
        var session = try Self.biased.session(studentID: "x", profile: Fixtures.bostonStudent, seed: 2)
        _ = session.recommendations(count: 3)
        #expect(throws: DataError.self) { try Self.plain.restore(session.snapshot()) }
    }
}
