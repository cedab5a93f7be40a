import Foundation
import Testing
import SwipeRank
import SwipeRankEvaluation
import SwipeRankNumerics

/// `FactorFit`: implicit ALS with a feature embedding, and the replay's collaborative policies.
@Suite("Collaborative factor fit")
struct FactorFitTests {
    /// A catalog of 40 items, half "comedy" (rows 0…19) and half not; the year is noise.
    static let catalog: Catalog = {
        let schema = """
        {"id_column": "id", "name_column": "name", "features": [
          {"column": "g_comedy", "kind": "flag", "group": "genre"},
          {"column": "year", "kind": "numeric", "group": "age"}]}
        """
        var rng = SplitMix64(seed: 1)
        let rows = (0..<40).map { "i\($0),Item \($0),\($0 < 20 ? 1 : 0),\(Int.random(in: 1950...2020, using: &rng))" }
        do {
            return try Catalog(table: CSVTable(text: (["id,name,g_comedy,year"] + rows).joined(separator: "\n") + "\n", source: "t.csv"),
                               schema: ItemSchema.decode(json: Data(schema.utf8), source: "s.json"))
        } catch { fatalError("\(error)") }
    }()

    /// Two taste groups that the features do not tell apart: group A likes the even rows, group B
    /// the odd ones; each student swipes a random half of the catalog, liking their group's
    /// items (with 10% noise). Items 36…39 are never swiped (new items).
    static func log(students: Int, seed: UInt64) -> [Interaction] {
        var rng = SplitMix64(seed: seed)
        var log: [Interaction] = []
        for s in 0..<students {
            let group = s % 2
            for (t, row) in (0..<36).shuffled(using: &rng).prefix(18).enumerated() {
                let liked = (row % 2 == group) != (Double.random(in: 0..<1, using: &rng) < 0.1)
                log.append(Interaction(studentID: "s\(s)", itemID: "i\(row)", action: liked ? .like : .dislike, timestamp: Int64(t)))
            }
        }
        return log
    }

    @Test("the same log and seed give the same file, byte for byte, in any log order")
    func deterministic() throws {
        let log = Self.log(students: 60, seed: 2)
        var options = FactorFit.Options()
        options.dimension = 4
        options.iterations = 5
        let a = try FactorFit.fit(catalog: Self.catalog, interactions: log, options: options)
        var rng = SplitMix64(seed: 3)
        let b = try FactorFit.fit(catalog: Self.catalog, interactions: log.shuffled(using: &rng), options: options)
        #expect(a.jsonData() == b.jsonData())
        options.seed = 99
        #expect(try FactorFit.fit(catalog: Self.catalog, interactions: log, options: options).jsonData() != a.jsonData())
    }

    @Test("a new student's likes rank their group's unswiped items first: the signal features cannot give", arguments: [false, true])
    func learnsGroups(featureInformed: Bool) throws {
        var options = FactorFit.Options()
        options.dimension = 4
        options.regularization = 1
        options.confidence = 5
        options.featureInformed = featureInformed
        let file = try FactorFit.fit(catalog: Self.catalog, interactions: Self.log(students: 80, seed: 4), options: options)
        // New items: not named without the feature prior (their factor comes from the embedding
        // at load); named with it (the shrunk feature prediction).
        #expect(file.itemIDs.contains("i37") == featureInformed)
        let factors = try CollaborativeFactors(file: file, catalog: Self.catalog)
        for group in 0..<2 {
            var posterior = FactorPosterior(dimension: 4)
            let swiped = [0, 1, 2, 3, 4, 5]
            for row in swiped {
                try posterior.observe(factors.vector(row: row), liked: row % 2 == group, confidence: file.confidence,
                                      dislikeConfidence: file.dislikeConfidence)
            }
            let affinity = factors.affinities(of: posterior)
            let candidates = (6..<36).filter { !swiped.contains($0) }
            let auc = RankingMetrics.tieAware(scores: candidates.map { affinity[$0] }, relevant: candidates.map { $0 % 2 == group }, k: 10).auc!
            #expect(auc > 0.9, "group \(group), feature-informed \(featureInformed): AUC \(auc)")
        }
    }

    @Test("cards served and never answered: weight α° as a dislike of that confidence would; α° = 0 or an answered pair changes nothing")
    func shownCards() throws {
        let log = Self.log(students: 40, seed: 7)
        var options = FactorFit.Options()
        options.dimension = 4
        options.iterations = 4
        options.dislikeConfidence = 3
        let plain = try FactorFit.fit(catalog: Self.catalog, interactions: log, options: options)
        // Every dislike as a card left unanswered instead, weighed with the dislike's confidence:
        // the same objective, so the same factors.
        let dislikes = log.filter { $0.action == .dislike }
        let asShown = dislikes.map { (studentID: $0.studentID, itemID: $0.itemID) }
        var shownOptions = options
        shownOptions.shownConfidence = 3
        let shown = try FactorFit.fit(catalog: Self.catalog, interactions: log.filter { $0.action == .like }, shown: asShown,
                                      options: shownOptions)
        #expect(shown.itemIDs == plain.itemIDs)
        #expect(shown.itemFactors == plain.itemFactors)
        #expect(shown.featureEmbedding == plain.featureEmbedding)
        // α° = 0: the served cards are ignored, byte for byte.
        let ignored = try FactorFit.fit(catalog: Self.catalog, interactions: log, shown: asShown + [("new-student", "i3")], options: options)
        #expect(ignored.jsonData() == plain.jsonData())
        // A pair the student answered counts as the answer, whatever α°.
        let answered = try FactorFit.fit(catalog: Self.catalog, interactions: log, shown: asShown, options: shownOptions)
        let answersOnly = try FactorFit.fit(catalog: Self.catalog, interactions: log, options: shownOptions)
        #expect(answered.itemFactors == answersOnly.itemFactors)
        // α° > 0 on cards nobody answered moves the factors.
        let unanswered = [(studentID: "s0", itemID: "i36"), (studentID: "s1", itemID: "i37")]
        let moved = try FactorFit.fit(catalog: Self.catalog, interactions: log, shown: unanswered, options: shownOptions)
        #expect(moved.itemFactors != answered.itemFactors)
        #expect { try FactorFit.fit(catalog: Self.catalog, interactions: log, shown: [("s0", "nope")], options: shownOptions) } throws: {
            "\($0)".contains("nope")
        }
    }

    @Test("an interaction naming an item the catalog lacks is an error naming it")
    func unknownItem() {
        let log = [Interaction(studentID: "s", itemID: "nope", action: .like, timestamp: 1)]
        #expect { try FactorFit.fit(catalog: Self.catalog, interactions: log) } throws: { "\($0)".contains("nope") }
    }

    @Test("the replay's collaborative policies: chosen on training swipes only, scored on the same students")
    func replay() throws {
        let engine = SwipeEngine(matcher: ItemMatcher(catalog: Self.catalog, regionAttribute: nil))
        let log = Self.log(students: 60, seed: 5)
        let students = DatasetStudent.everyone(in: log, profile: ItemProfile())
        var replayer = ReplayEvaluator(engine: engine)
        replayer.collaborative = true
        replayer.factorCandidates = [1.0, 10].map { regularization in
            var o = FactorFit.Options()
            o.dimension = 4
            o.regularization = regularization
            return o
        }
        let outcome = try replayer.replay(students: students, interactions: log, k: 5, trainFraction: 0.7, seed: 1)
        let byName = Dictionary(uniqueKeysWithValues: outcome.results.map { ($0.policy, $0) })
        let choice = try #require(outcome.factorChoice)
        #expect(choice.table.count == 2 * FactorFit.weightCandidates.count && choice.options.dimension == 4)
        let collaborative = try #require(byName["engine_collaborative"]), prior = try #require(byName["engine_population_prior"])
        #expect(collaborative.metrics["auc"]!.count == prior.metrics["auc"]!.count)
        // The groups are invisible to the features, so the collaborative term must add a lot.
        #expect(collaborative.mean("auc") > prior.mean("auc") + 0.15, "\(collaborative.mean("auc")) vs \(prior.mean("auc"))")
        // The match score (swipe AUC) is the prior engine's own: the affinity orders the deck only.
        #expect(collaborative.metrics["swipe_auc"]! == prior.metrics["swipe_auc"]!)
    }

    /// An engine over the planted catalog with factors fitted on `log(students:seed:)`.
    static func engines() throws -> (plain: SwipeEngine<ItemMatcher>, factors: SwipeEngine<ItemMatcher>) {
        let plain = SwipeEngine(matcher: ItemMatcher(catalog: Self.catalog, regionAttribute: nil))
        var options = FactorFit.Options()
        options.dimension = 4
        options.confidence = 5
        let file = try FactorFit.fit(catalog: Self.catalog, interactions: Self.log(students: 80, seed: 6), options: options, weight: 20)
        return (plain, try plain.withFactors(file))
    }

    /// Swipes every card of `count` decks of 4, liking the even rows.
    static func swipeDecks(_ session: inout SwipeSession<ItemMatcher>, count: Int) throws {
        for d in 0..<count {
            for (i, card) in session.recommendations(count: 4).recommendations.enumerated() {
                let row = Self.catalog.row(of: card.item.id)!
                _ = try session.recordSwipe(Swipe(swipeID: "d\(d)-\(i)", cardID: card.item.id, action: row % 2 == 0 ? .like : .dislike,
                                                  timestamp: Int64(d * 10 + i)))
            }
        }
    }

    @Test("a session learns its group from a few swipes: decks rank by it, match scores stay the features' own")
    func sessionRanks() throws {
        let (plain, factors) = try Self.engines()
        var with = try factors.session(studentID: "s", profile: ItemProfile(), seed: 1)
        var without = try plain.session(studentID: "s", profile: ItemProfile(), seed: 1)
        // No swipes yet: the same first deck.
        #expect(with.recommendations(count: 4) == without.recommendations(count: 4))
        for (i, card) in with.served.enumerated() {
            let row = Self.catalog.row(of: card.cardID)!
            _ = try with.recordSwipe(Swipe(swipeID: "w\(i)", cardID: card.cardID, action: row % 2 == 0 ? .like : .dislike, timestamp: Int64(i)))
        }
        try Self.swipeDecks(&with, count: 2)
        #expect(with.collaborative?.observations == 12)
        // The next cards: the student's group (even rows) first, which features alone cannot tell.
        let ranked = with.ranking(count: 10)
        func even(_ cards: [Recommendation]) -> Int { cards.filter { Self.catalog.row(of: $0.item.id)! % 2 == 0 }.count }
        // A match score is the feature model's alone: the same swipes taught to a session without
        // factors (as judgements of weight 1, the same update) give the same match scores.
        for card in with.served {
            _ = try without.recordJudgement(Swipe(swipeID: "j-\(card.cardID)", cardID: card.cardID, action: card.action!, timestamp: 0), weight: 1)
        }
        #expect(with.model == without.model)
        let plainRanked = without.ranking(count: 40)
        #expect(even(ranked) >= 8 && even(ranked) >= even(Array(plainRanked.prefix(10))) + 3,
                "\(ranked.map(\.item.id)) vs \(plainRanked.prefix(10).map(\.item.id))")
        let plainMatch = Dictionary(uniqueKeysWithValues: plainRanked.map { ($0.item.id, $0.matchScore) })
        for card in ranked { #expect(card.matchScore == plainMatch[card.item.id], "\(card.item.id)") }
        // Where the collaborative term places a card, it says so, naming an item the student liked.
        let liked = Set(with.served.filter { $0.action == .like }.map { Self.catalog.names[$0.row] })
        let deck = with.recommendations(count: 8).recommendations
        let reasons = deck.compactMap { $0.explanations.first { $0.hasPrefix("Students who liked ") } }
        #expect(!reasons.isEmpty, "\(deck.map(\.explanations))")
        for reason in reasons {
            let name = String(reason.dropFirst("Students who liked ".count).dropLast(" also liked this".count))
            #expect(liked.contains(name), "\(reason)")
        }
        #expect(without.recommendations(count: 8).recommendations.allSatisfy { !$0.explanations.contains { $0.hasPrefix("Students who liked") } })
    }

    @Test("a snapshot restores the collaborative posterior by replay; an engine without factors refuses it")
    func snapshots() throws {
        let (plain, factors) = try Self.engines()
        var session = try factors.session(studentID: "s", profile: ItemProfile(), seed: 2)
        try Self.swipeDecks(&session, count: 3)
        let data = try JSONEncoder().encode(session.snapshot())
        let snapshot = try JSONDecoder().decode(SessionSnapshot<ItemProfile>.self, from: data)
        var restored = try factors.restore(snapshot)
        #expect(restored.collaborative == session.collaborative && restored.collaborative?.observations == 12)
        #expect(restored.recommendations(count: 8) == session.recommendations(count: 8))
        #expect(throws: DataError.self) { try plain.restore(snapshot) }
        let refit = try factors.withFactors(factors.factors!.file.withWeight(3))
        #expect(throws: DataError.self) { try refit.restore(snapshot) }
    }
}


/// `ArmReport`: each arm's online metrics against hand-computed values, and its intervals.
@Suite("A/B arm report")
struct ArmReportTests {
    static func log(_ arm: String, _ swipes: [(Bool, Bool, Double?)], save: Int? = nil) -> ArmStudentLog {
        ArmStudentLog(arm: arm, swipes: swipes.map { .init(liked: $0.0, isProbe: $0.1, propensity: $0.2) }, swipesBeforeFirstSave: save)
    }

    @Test("metrics as defined: pooled like rates, the self-normalized IPS of probes, save share and swipes to a save")
    func metrics() throws {
        let logs = [
            Self.log("b", [(true, false, 1), (false, true, 0.5), (true, true, 0.25)], save: 2),
            Self.log("a", [(true, false, 1), (true, false, 1), (false, false, 1), (false, true, 0.2)]),
            Self.log("b", [(false, false, 1)], save: 0),
            Self.log("a", [(true, true, 0.5)], save: 3),
        ]
        let report = ArmReport(logs: logs, resamples: 200, seed: 3)
        #expect(report.rows.map(\.arm) == ["a", "b"])
        let a = report.rows[0], b = report.rows[1]
        #expect(a.students == 2 && a.swipes == 5 && b.students == 2 && b.swipes == 4)
        #expect(a.metrics["like_rate"]!.value == 3.0 / 5)
        #expect(a.metrics["organic_like_rate"]!.value == 2.0 / 3)
        // Probes of a: a dislike at p = 0.2 (weight 5), a like at p = 0.5 (weight 2): 2 / 7.
        #expect(abs(a.metrics["probe_like_rate_ips"]!.value - 2.0 / 7) < 1e-12)
        // Probes of b: a dislike at 0.5 (2), a like at 0.25 (4): 4 / 6.
        #expect(abs(b.metrics["probe_like_rate_ips"]!.value - 4.0 / 6) < 1e-12)
        #expect(a.metrics["saved_share"]!.value == 0.5 && b.metrics["saved_share"]!.value == 1)
        #expect(a.metrics["swipes_to_first_save"]!.value == 3 && b.metrics["swipes_to_first_save"]!.value == 1)
        #expect(abs(b.differences["like_rate"]!.value - (2.0 / 4 - 3.0 / 5)) < 1e-12 && a.differences.isEmpty)
        for row in report.rows {
            for name in ArmReport.metricNames {
                let e = row.metrics[name]!
                #expect(e.lower <= e.value + 1e-12 && e.value <= e.upper + 1e-12, "\(row.arm) \(name): \(e)")
            }
        }
        // The reference arm first when asked; the same seed, the same intervals.
        let ordered = ArmReport(logs: logs, order: ["b"], resamples: 200, seed: 3)
        #expect(ordered.rows.map(\.arm) == ["b", "a"])
        #expect(ArmReport(logs: logs, resamples: 200, seed: 3).rows[1].metrics == b.metrics)
        #expect(report.table.contains("difference from a") && report.table.contains("b − a"))
    }

    @Test("an arm without probes or savers reports no value rather than a number")
    func missing() {
        let report = ArmReport(logs: [Self.log("a", [(true, false, 1)]), Self.log("b", [(false, false, 1)])], resamples: 50, seed: 1)
        #expect(report.rows[0].metrics["probe_like_rate_ips"]!.value.isNaN)
        #expect(report.rows[0].metrics["swipes_to_first_save"]!.value.isNaN)
        #expect(report.rows[1].differences["probe_like_rate_ips"]!.value.isNaN)
        #expect(report.table.contains("—"))
    }
}
