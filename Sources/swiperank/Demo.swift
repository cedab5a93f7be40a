import ArgumentParser
import Foundation
import SwipeRank
import SwipeRankColleges
import SwipeRankEvaluation
import SwipeRankNumerics

struct Demo: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Simulate one student with hidden preferences swiping through the engine's cards.")

    @Option(help: "Seed for the student, their swipes and the engine's probes.")
    var seed: UInt64 = 7

    @Option(help: "How many cards to swipe (1…200).")
    var swipes: Int = 40

    @Option(help: "Cards per batch (1…50).")
    var batch: Int = 10

    @Option(help: "A profile JSON (- reads standard input); default: a random profile from the seed.")
    var profile: String?

    @Option(help: "Write the session's final snapshot (JSON, format version 2) to this file.")
    var snapshot: String?

    @Option(help: "Students to simulate (1…20): the first swipe by swipe, each one summarised (seeds seed, seed+1, …).")
    var students: Int = 3

    @OptionGroup var catalogOptions: CatalogOptions

    func validate() throws {
        guard catalogOptions.schema == nil else { throw ValidationError("demo runs on the college catalog; --schema is not supported") }
        guard (1...200).contains(swipes) else { throw ValidationError("--swipes must be in 1…200") }
        guard (1...50).contains(batch) else { throw ValidationError("--batch must be in 1…50") }
        guard (1...20).contains(students) else { throw ValidationError("--students must be in 1…20") }
    }

    /// What one simulated student's run ended with.
    struct Outcome {
        var seed: UInt64
        var likes = 0, cards = 0
        var prior = 0.0, learned = 0.0
        var grades: [Grade: Int] = [:]
        var sentences: [String: Int] = [:]
    }

    func run() throws {
        let engine = SwipeEngine(matcher: try catalogOptions.schoolMatcher())
        guard engine.matcher.catalog.count > 0 else { throw CLIError("\(catalogOptions.catalog): the catalog has no schools to swipe") }
        var outcomes: [Outcome] = []
        for k in 0..<students {
            if k == 1 { print("\nThe other students, summarised:") }
            outcomes.append(try simulate(engine: engine, seed: seed &+ UInt64(k), verbose: k == 0))
        }
        report(outcomes)
    }

    /// The closing summary: cosine moves, grades and explanation variety, and why the cosine
    /// can fall.
    func report(_ outcomes: [Outcome]) {
        let f = { (x: Double) in String(format: "%.3f", x) }
        print("\nSummary over \(outcomes.count) student\(outcomes.count == 1 ? "" : "s") (seed, likes, cosine to the hidden weights: prior → learned):")
        for o in outcomes {
            let move = o.learned - o.prior
            let grades = Grade.allCases.compactMap { g in o.grades[g].map { "\(g.rawValue) \($0)" } }.joined(separator: ", ")
            print("  seed \(o.seed): \(o.likes)/\(o.cards) likes; cosine \(f(o.prior)) → \(f(o.learned)) (\(move >= 0 ? "+" : "")\(f(move))); grades \(grades)")
        }
        let falls = outcomes.filter { $0.learned < $0.prior }.count
        print("The cosine rose for \(outcomes.count - falls) of \(outcomes.count) students and fell for \(falls).", terminator: " ")
        print("It can fall: the prior is the profile's own cold start, and the hidden weights are drawn around it, so it already")
        print("encodes most of the taste (cosine ≈ 0.5–0.6); 40 swipes of noisy likes and dislikes, half of them on nearby cards the")
        print("band mix holds to, move ~60 weights, some away from the hidden ones. Cosine is over all weights; the decks are judged")
        print("by their ranking (NDCG@10 in the evaluation report), which learning improves on average even where the cosine falls.")
        print("Grades are quantiles of each student's match scores over a 1,024-row sample of the catalog (A top 2%, B the rest of")
        print("the top 10%, C of the top 25%, D of the top half, F the bottom half); no explanation sentence is on more than a third")
        print("of a deck unless it is the top reason.")
    }

    func simulate(engine: SwipeEngine<SchoolMatcher>, seed: UInt64, verbose: Bool) throws -> Outcome {
        var rng = SplitMix64(seed: seed)
        var outcome = Outcome(seed: seed)
        do {
            let studentProfile: StudentProfile
            if let profile {
                let data = try readInput(profile, what: "profile")
                studentProfile = try StudentProfile.decode(json: data, source: profile)
            } else {
                studentProfile = SchoolSimulation.randomProfile(schools: engine.matcher.schools, using: &rng)
            }
            let simulated = try SimulatedStudent(profile: studentProfile, engine: engine, deviation: 2.0,
                                                 opinionGroups: SchoolSimulation.opinionGroups, using: &rng)
            var session = try engine.session(studentID: "demo", profile: studentProfile, seed: seed)
            outcome.prior = VectorMath.cosine(simulated.priorWeights, simulated.hiddenWeights)
            if verbose {
                print(describe(studentProfile))
                print("pos  school                                    st  band            probe  match  grade  swipe    phase        progress")
            } else {
                print("seed \(seed): " + describe(studentProfile))
            }
            var likes = 0, pending: [Recommendation] = []
            for position in 1...swipes {
                if pending.isEmpty { pending = session.recommendations(count: min(batch, swipes - position + 1)).recommendations }
                guard !pending.isEmpty else { print("(the catalog ran out)"); break }
                let card = pending.removeFirst()
                let served = session.served[position - 1]
                let action = simulated.swipe(row: served.row, session: session, using: &rng)
                if action == .like { likes += 1 }
                let result = try session.recordSwipe(Swipe(swipeID: "demo-\(position)", cardID: card.item.id, action: action,
                                                           timestamp: Int64(position)))
                let state = result.learningState
                let name = card.item.name.count > 40 ? String(card.item.name.prefix(39)) + "…" : card.item.name
                let st: String = { if case let .text(s)? = card.item.attributes["state"] { return s }; return "" }()
                let match = String(format: "%.2f", card.matchScore), progress = String(format: "%.2f", state.progress)
                if verbose {
                print("\(pad(String(position), 3, left: true))  \(pad(name, 40))  \(pad(st, 2))  \(pad(served.band?.rawValue ?? "-", 15))  "
                      + "\(card.isProbe ? "PROBE" : "     ")  \(match)   \(card.grade.rawValue)      \(pad(action.rawValue, 7))  "
                      + "\(pad(state.phase.rawValue, 11))  \(progress)")
                if !card.explanations.isEmpty { print("       why: \(card.explanations.joined(separator: "; "))") }
                }
                outcome.cards += 1
                outcome.grades[card.grade, default: 0] += 1
                for sentence in card.explanations { outcome.sentences[ExplanationVariety.key(sentence), default: 0] += 1 }
                if let feedback = result.feedback {
                    let answer = simulated.answer(feedback, session: session)
                    if verbose {
                    print("       feedback? (\(feedback.reason.rawValue)) \(feedback.options.map(\.rawValue).joined(separator: " / "))"
                          + " → \(answer.isEmpty ? "no answer" : answer.map(\.rawValue).joined(separator: ", "))")
                    }
                    try session.submitFeedback(cardID: feedback.cardID, options: answer)
                }
                if verbose && position % 10 == 0 {
                    let cosine = VectorMath.cosine(session.model.mean, simulated.hiddenWeights)
                    let learned = String(format: "%.3f", cosine)
                    let prior = String(format: "%.3f", VectorMath.cosine(simulated.priorWeights, simulated.hiddenWeights))
                    print("       — after \(position) swipes: \(likes) likes, cosine(learned, hidden) \(learned) (prior \(prior)), "
                          + "bands \(session.servedPerBand.map(String.init).joined(separator: "/"))")
                }
            }
            outcome.likes = likes
            outcome.learned = VectorMath.cosine(session.model.mean, simulated.hiddenWeights)
            if verbose, let snapshot {
                try writeOutput(String(decoding: try session.snapshot().jsonData(), as: UTF8.self), to: snapshot)
            }
        } catch let error as DataError {
            throw CLIError(error.description)
        } catch let error as SwipeError {
            throw CLIError(error.description)
        }
        return outcome
    }

    func describe(_ p: StudentProfile) -> String {
        var parts: [String] = []
        if let home = p.home {
            parts.append("home \(String(format: "%.2f, %.2f", home.latitude, home.longitude)) (\(p.homeState ?? "?"))")
        }
        parts.append("within \(Int(p.maxDistanceMiles)) mi")
        if let b = p.annualBudget { parts.append("budget $\(Int(b))") }
        if let s = p.sat { parts.append("SAT \(Int(s))") }
        if !p.intendedMajors.isEmpty { parts.append("majors \(p.intendedMajors.joined(separator: ", "))") }
        parts.append("size \(p.sizePreference.rawValue), \(p.controlPreference.rawValue), \(p.settingPreference.rawValue)")
        return "Student: " + parts.joined(separator: "; ")
    }

    func pad(_ s: String, _ n: Int, left: Bool = false) -> String {
        let fill = String(repeating: " ", count: max(0, n - s.count))
        return left ? fill + s : s + fill
    }
}
