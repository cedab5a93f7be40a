import Foundation
import SwipeRankColleges
import Testing
import SwipeRank
import SwipeRankEvaluation
import SwipeRankNumerics

enum EvaluationFixtures {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()
    // One lazy static for both: a test run once hung with a thread inside `engine`'s initializer
    // waiting forever on `schools`'s (nested one-time initializers, contended by parallel tests).
    static let shared: (schools: SchoolCatalog, engine: SwipeEngine<SchoolMatcher>, expanded: SwipeEngine<SchoolMatcher>) = {
        do {
            let schools = try SchoolCatalog(schoolsPath: root.appendingPathComponent("datasets/schools.csv").path,
                                            majorsPath: root.appendingPathComponent("datasets/school_majors.csv").path)
            return (schools, SwipeEngine(matcher: SchoolMatcher(schools: schools)),
                    SwipeEngine(matcher: SchoolMatcher(schools: schools, termBasis: .expanded)))
        } catch { fatalError("The shipped dataset must load: \(error)") }
    }()
    static var schools: SchoolCatalog { shared.schools }
    static var engine: SwipeEngine<SchoolMatcher> { shared.engine }
    /// The engine with `SchoolTermBasis.expanded`.
    static var expandedEngine: SwipeEngine<SchoolMatcher> { shared.expanded }
}

@Suite("Learning from swipes")
struct LearningTests {
    /// cosine(learned, hidden) after 0, 10, 20, 30 swipes for one simulated student.
    func curve(seed: UInt64) throws -> [Double] {
        var rng = SplitMix64(seed: seed)
        let engine = EvaluationFixtures.engine
        let profile = SchoolSimulation.randomProfile(schools: engine.matcher.schools, using: &rng)
        let student = try SimulatedStudent(profile: profile, engine: engine, deviation: 2.0,
                                           opinionGroups: SchoolSimulation.opinionGroups, using: &rng)
        var session = try engine.session(studentID: "l\(seed)", profile: profile, seed: seed)
        var curve = [VectorMath.cosine(session.model.mean, student.hiddenWeights)]
        for position in 1...30 {
            if session.served.count < position { _ = session.recommendations(count: 10) }
            let card = session.served[position - 1]
            let action = student.swipe(row: card.row, session: session, using: &rng)
            _ = try session.recordSwipe(Swipe(swipeID: "\(position)", cardID: card.cardID, action: action, timestamp: Int64(position)))
            if position % 10 == 0 { curve.append(VectorMath.cosine(session.model.mean, student.hiddenWeights)) }
        }
        return curve
    }

    @Test("cosine(learned, hidden) rises with swipes and clearly beats the prior after 30, over 48 students")
    func learns() throws {
        let curves = try (0..<48).map { try curve(seed: UInt64(1000 + $0)) }
        let means = (0..<4).map { i in curves.map { $0[i] }.reduce(0, +) / Double(curves.count) }
        print("mean cosine at 0/10/20/30 swipes:", means)
        #expect(means[1] > means[0] && means[2] > means[1] && means[3] > means[2], "\(means)")
        #expect(means[3] > means[0] + 0.04, "\(means)")
        let improved = curves.filter { $0[3] > $0[0] }.count
        print("students whose cosine rose after 30 swipes:", improved, "of 48")
        #expect(improved >= 36, "\(improved) of 48 students learned")
    }
}
