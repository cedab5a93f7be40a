import Foundation
import Testing
import SwipeRank
import SwipeRankEvaluation
import SwipeRankNumerics

/// The second catalog (not schools): datasets/restaurants, loaded through a JSON schema.
enum RestaurantFixtures {
    static func path(_ name: String) -> String {
        EvaluationFixtures.root.appendingPathComponent("datasets/restaurants/\(name)").path
    }
    static let schema: ItemSchema = {
        do { return try ItemSchema.load(contentsOfFile: path("restaurants.schema.json")) } catch { fatalError("\(error)") }
    }()
    static let catalog: Catalog = {
        do { return try Catalog(table: CSVTable(contentsOfFile: path("restaurants.csv")), schema: schema) } catch { fatalError("\(error)") }
    }()
    static let matcher = ItemMatcher(catalog: catalog, regionAttribute: "neighborhood")
    static let engine = SwipeEngine(matcher: matcher)
    static let users: [DatasetStudent<ItemProfile>] = {
        do { return try ItemUsersFile.read(CSVTable(contentsOfFile: path("users.csv")), matcher: matcher).0 } catch { fatalError("\(error)") }
    }()
    static let popularity = catalog.numericValues[catalog.numericAttribute(named: "reviews")!].map { max(1, $0 ?? 1) }
}

@Suite("Item schema JSON")
struct ItemSchemaTests {
    @Test("the restaurant schema loads the catalog with the columns it describes")
    func loads() {
        let catalog = RestaurantFixtures.catalog
        #expect(catalog.count == 80)
        let names = catalog.columns.map(\.name)
        #expect(names.contains("price_level") && names.contains("rating") && names.contains("rating_missing"))
        #expect(names.contains("rating_band=great") && names.contains("cuisine=thai") && names.contains("outdoor=yes"))
        #expect(!names.contains("price_level_missing"), "missing: reject adds no indicator")
        #expect(catalog.groups.prefix(3) == ["cost", "quality", "popularity"])
        #expect(catalog.locations.allSatisfy { $0 != nil })
        // reviews is log1p then z-scored: the transformed column has mean 0.
        let j = names.firstIndex(of: "reviews")!
        let mean = (0..<catalog.count).map { Double(catalog.features[$0, j]) }.reduce(0, +) / Double(catalog.count)
        #expect(abs(mean) < 1e-4)
    }

    @Test("schema errors name the JSON path", arguments: [
        (#"{"id_column": "id", "name_column": "name", "features": []}"#, "features: a schema needs at least one feature"),
        (#"{"id_column": "id", "features": [{"column": "a", "kind": "numeric", "group": "g"}]}"#, "name_column: required field is missing"),
        (#"{"id_column": "id", "name_column": "n", "features": [{"column": "a", "kind": "vector", "group": "g"}]}"#,
         #"features[0].kind: "vector" is not one of numeric, categorical, bins"#),
        (#"{"id_column": "id", "name_column": "n", "features": [{"column": "a", "kind": "numeric", "transform": "sqrt", "group": "g"}]}"#,
         #"features[0].transform: "sqrt" is not one of identity, log1p, one_minus"#),
        (#"{"id_column": "id", "name_column": "n", "features": [{"column": "a", "kind": "bins", "edges": [2, 1], "labels": ["x", "y", "z"], "group": "g"}]}"#,
         "features[0].edges: must be finite and strictly increasing"),
        (#"{"id_column": "id", "name_column": "n", "features": [{"column": "a", "kind": "bins", "edges": [1], "labels": ["x"], "group": "g"}]}"#,
         "features[0].labels: needs 2 labels for 1 edges"),
        (#"{"id_column": "id", "name_column": "n", "features": [{"column": "a", "kind": "numeric", "group": "g"}, {"column": "a", "kind": "numeric", "group": "h"}]}"#,
         #"two features are named "a""#),
        (#"{"id_column": "id", "name_column": "n", "features": [{"column": "a", "kind": "numeric", "group": 3}]}"#, "features[0].group"),
        (#"{"id_column": "id", "#, "malformed JSON"),
    ])
    func errors(json: String, message: String) {
        #expect {
            try ItemSchema.decode(json: Data(json.utf8), source: "s.json")
        } throws: { error in
            (error as? DataError)?.description.contains(message) == true
        }
    }
}

@Suite("Generic item matcher")
struct ItemMatcherTests {
    let matcher = RestaurantFixtures.matcher
    let home = try! GeoPoint(latitude: 40.0, longitude: -75.0)

    @Test("cold start: columns, groups and distance from stated preferences; unknown keys are errors")
    func coldStart() throws {
        let catalog = matcher.catalog
        let user = try matcher.student(ItemProfile(home: home, maxDistanceMiles: 3,
                                                   preferences: ["price_level": -0.8, "quality": 0.5, "cuisine=thai": 1, "distance": 0.5]))
        let w = matcher.coldStartWeights(for: user)
        func weight(_ name: String) -> Float { w.features[catalog.columns.firstIndex { $0.name == name }!] }
        #expect(weight("price_level") == -0.8 && weight("cuisine=thai") == 1)
        // A group's weight goes to its value columns, not to its bins or indicators.
        #expect(weight("rating") == 0.5 && weight("rating_band=great") == 0 && weight("rating_missing") == 0)
        #expect(w.terms == [1.5])
        #expect(matcher.coldStartWeights(for: try matcher.student(ItemProfile())).terms == [0], "no home, no distance weight")
        #expect {
            try matcher.student(ItemProfile(preferences: ["cuisine=pizza": 1]))
        } throws: { ($0 as? DataError)?.field == "preferences.cuisine=pizza" }
        #expect {
            try matcher.student(ItemProfile(maxDistanceMiles: -1))
        } throws: { ($0 as? DataError)?.field == "max_distance_miles" }
    }

    @Test("scores equal a naive loop over [features, distance term]")
    func scores() throws {
        let user = try matcher.student(ItemProfile(home: home, maxDistanceMiles: 3, preferences: ["price_level": -1, "cuisine=vegan": 2]))
        let w = matcher.coldStartWeights(for: user)
        var scores: [Float] = []
        matcher.catalog.scores(weights: w, terms: user.terms, into: &scores)
        for row in 0..<matcher.catalog.count {
            var expected: Float = 0
            for j in 0..<matcher.catalog.dimension { expected += w.features[j] * matcher.catalog.features[row, j] }
            let d = matcher.catalog.locations[row]!.distanceMiles(to: home)
            let fit: Double = d <= 3 ? 1 - d / 6 : max(-1, 0.5 - (d - 3) / 3)
            expected += w.terms[0] * Float(fit)
            #expect(abs(scores[row] - expected) < 1e-3, "row \(row)")
        }
    }

    @Test("explanations never contradict the item's facts, on every item")
    func explanations() throws {
        let catalog = matcher.catalog
        var rng = SplitMix64(seed: 5)
        var kinds = [0, 0, 0]
        for _ in 0..<10 {
            var preferences: [String: Double] = [:]
            for column in catalog.columns where Bool.random(using: &rng) { preferences[column.name] = Double.random(in: -2...2, using: &rng) }
            let user = try matcher.student(ItemProfile(home: home, maxDistanceMiles: 3, preferences: preferences))
            let w = matcher.coldStartWeights(for: user)
            var scores: [Float] = []
            catalog.scores(weights: w, terms: user.terms, into: &scores)
            for row in 0..<catalog.count {
                let card = matcher.card(row: row, raw: scores[row], student: user, weights: w, isProbe: false)
                #expect(card.explanations.count <= 3)
                #expect(abs(card.matchScore - 1 / (1 + exp(-Double(scores[row])))) < 1e-4)
                for sentence in card.explanations {
                    kinds[sentence.hasSuffix("miles from home") ? 0 : sentence.contains(":") ? 1 : 2] += 1
                    if sentence.hasSuffix("miles from home") {
                        #expect(card.distance! <= 3.05, "\(sentence) beyond the preferred 3 miles")
                    } else if let colon = sentence.firstIndex(of: ":") {
                        // "source: category": the item is in that category (or bin).
                        let source = String(sentence[..<colon]), value = String(sentence[sentence.index(colon, offsetBy: 2)...])
                        let j = try #require(catalog.columns.firstIndex { $0.source == source && $0.category == value }, "\(sentence)")
                        #expect(catalog.features[row, j] == 1, "\(sentence) for \(card.item.id)")
                    } else {
                        // "Higher/Lower source than most (raw)": the raw value against the observed median.
                        let higher = sentence.hasPrefix("Higher ")
                        let source = String(sentence.dropFirst(higher ? 7 : 6).prefix { $0 != " " })
                        let a = try #require(catalog.numericAttribute(named: source), "\(sentence)")
                        let observed = catalog.numericValues[a].compactMap { $0 }.sorted()
                        let median = observed[observed.count / 2]
                        let value = try #require(catalog.numericValues[a][row], "no explanation for an imputed gap")
                        #expect(higher ? value > median : value < median, "\(sentence): \(value) vs median \(median)")
                        #expect(sentence.hasSuffix("(\(value == value.rounded() ? String(Int(value)) : String(format: "%.1f", value)))"))
                    }
                }
            }
        }
        #expect(kinds.allSatisfy { $0 > 20 }, "every kind of sentence was checked: \(kinds)")
    }
}

@Suite("Sessions and evaluation on a second catalog (restaurants)")
struct ItemEvaluationTests {
    @Test("a session mixes bands 50/30/20, probes every 4th card, and restores from a JSON snapshot")
    func session() throws {
        let engine = RestaurantFixtures.engine
        // Home in Riverside, 4 miles: every band holds more than 5 restaurants.
        let profile = ItemProfile(home: try GeoPoint(latitude: 40.0, longitude: -75.0), maxDistanceMiles: 4,
                                  preferences: ["price_level": -0.5])
        let user = try engine.matcher.student(profile)
        let bands = (0..<engine.matcher.catalog.count).map { GeoBand.band(distance: user.distances[$0], preferred: 4, expansion: 1.5) }
        #expect(GeoBand.allCases.allSatisfy { band in bands.filter { $0 == band }.count > 5 })
        var session = try engine.session(studentID: "riverside", profile: profile, seed: 4)
        let first = session.recommendations(count: 10)
        #expect(first.recommendations.map(\.isProbe) == (1...10).map { $0 % 4 == 0 })
        #expect(session.servedPerBand == [5, 3, 2])
        for (i, card) in first.recommendations.enumerated() {
            _ = try session.recordSwipe(Swipe(swipeID: "w\(i)", cardID: card.item.id, action: i % 3 == 0 ? .like : .dislike,
                                              timestamp: Int64(i)))
        }
        let data = try JSONEncoder().encode(session.snapshot())
        var restored = try engine.restore(JSONDecoder().decode(SessionSnapshot<ItemProfile>.self, from: data))
        #expect(restored.recommendations(count: 10) == session.recommendations(count: 10))
        #expect(Set(session.served.map(\.row)).count == 20, "no card is served twice")
    }

    /// Every policy but the expanded term basis, which only colleges have.
    static let itemPolicies = PolicyKind.allCases.filter { $0 != .engineExpandedTerms && $0 != .engineCollaborative }

    @Test("simulation: the engine learns on restaurants and beats the baselines; deterministic")
    func simulation() throws {
        var evaluator = SimulationEvaluator(engine: RestaurantFixtures.engine, popularity: RestaurantFixtures.popularity,
                                            opinionGroups: nil)
        // A population: the same profiles with other hidden weights (another seed).
        evaluator.population = try PopulationFit.fit(engine: RestaurantFixtures.engine, students: RestaurantFixtures.users,
                                                     interactions: evaluator.simulateLog(students: RestaurantFixtures.users, swipes: 20, seed: 99))
        let results = try evaluator.run(students: RestaurantFixtures.users, swipes: 30, policies: Self.itemPolicies, seed: 2)
        let byPolicy = Dictionary(uniqueKeysWithValues: results.map { ($0.policy, $0) })
        func final(_ p: PolicyKind, _ metric: KeyPath<SimulationPolicyResult, [[Double]]>) -> Double {
            SimulationPolicyResult.means(byPolicy[p]![keyPath: metric]).last!
        }
        #expect(final(.engine, \.ndcg) > final(.profileOnly, \.ndcg) + 0.1)
        #expect(final(.engine, \.ndcg) > final(.popularity, \.ndcg) && final(.engine, \.ndcg) > final(.random, \.ndcg))
        let cosine = SimulationPolicyResult.means(byPolicy[.engine]!.cosine)
        #expect(cosine.last! > cosine.first!, "learned weights move towards the hidden ones: \(cosine)")
        #expect(byPolicy[.engineNoGeoMix]!.geoMixError > byPolicy[.engine]!.geoMixError)
        #expect(byPolicy[.engine]!.novelty.isFinite && byPolicy[.engine]!.coverage > 0)
        #expect(SimulationEvaluator<ItemMatcher>.relevantCount(catalogSize: 80) == 10)
        let again = try evaluator.run(students: RestaurantFixtures.users, swipes: 30, policies: Self.itemPolicies, seed: 2)
        #expect(again.map(\.ndcg) == results.map(\.ndcg))
        // Without a popularity there is no novelty (and the popularity policy is not allowed).
        let bare = try SimulationEvaluator(engine: RestaurantFixtures.engine, popularity: nil, opinionGroups: nil)
            .run(students: Array(RestaurantFixtures.users.prefix(3)), swipes: 5, policies: [.engine], seed: 2)
        #expect(bare[0].novelty.isNaN)
    }

    @Test("replay of the shipped restaurant swipes: the engine's learner ranks held-out likes best")
    func replay() throws {
        let (log, report) = try InteractionsFile.read(CSVTable(contentsOfFile: RestaurantFixtures.path("swipes.csv")),
                                                      itemIDs: Set(RestaurantFixtures.catalog.ids),
                                                      studentIDs: Set(RestaurantFixtures.users.map(\.id)))
        #expect(report.skipped.isEmpty && log.count == 1200)
        let results = try ReplayEvaluator(engine: RestaurantFixtures.engine).run(students: RestaurantFixtures.users, interactions: log, seed: 1)
        let byName = Dictionary(uniqueKeysWithValues: results.map { ($0.policy, $0) })
        #expect(byName["engine"]!.mean("auc") > byName["random"]!.mean("auc") + 0.1)
        #expect(byName["engine"]!.mean("ndcg@10") > byName["profile_only"]!.mean("ndcg@10"))
        #expect(byName["engine"]!.ipsMatches > 0 && byName["engine"]!.ipsLikeRate != nil)
    }

    @Test("the shipped swipes are what the generator writes for the shipped users (seed 7, 20 swipes)")
    func shippedSwipesAreCurrent() throws {
        let log = try DatasetGenerator(engine: RestaurantFixtures.engine, opinionGroups: nil)
            .generate(seed: 7, students: RestaurantFixtures.users, swipesPerStudent: 20)
        let shipped = try String(contentsOfFile: RestaurantFixtures.path("swipes.csv"), encoding: .utf8)
        #expect(InteractionsFile.write(log) == shipped)
    }
}

@Suite("Users CSV of a generic catalog")
struct ItemUsersFileTests {
    func read(_ text: String, policy: BadRowPolicy = .fail) throws(DataError) -> ([DatasetStudent<ItemProfile>], LoadReport) {
        try ItemUsersFile.read(CSVTable(text: text, source: "users.csv"), matcher: RestaurantFixtures.matcher, policy: policy)
    }

    @Test("reads homes, distances and pref: columns; empty cells are not given")
    func reads() throws {
        let (users, _) = try read("student_id,home_latitude,home_longitude,max_distance_miles,pref:price_level,pref:cuisine=thai\n"
                                  + "a,40,-75,3,-0.5,\nb,,,,,1\n")
        #expect(users.count == 2)
        #expect(users[0].profile == ItemProfile(home: try GeoPoint(latitude: 40, longitude: -75), maxDistanceMiles: 3,
                                                preferences: ["price_level": -0.5]))
        #expect(users[1].profile == ItemProfile(preferences: ["cuisine=thai": 1]))
    }

    @Test("errors name file:line:column", arguments: [
        ("student_id,pref:spiciness\na,1\n", "users.csv:1:12: \"spiciness\" is not a feature column"),
        ("student_id,favourite\na,1\n", "users.csv:1:12: unknown column \"favourite\""),
        ("student_id,home_latitude,home_longitude\na,95,0\n", "users.csv:2:3: home_latitude 95.0 is outside -90...90"),
        ("student_id,pref:price_level\na,9\n", "users.csv:2:3: preferences.price_level: must be a finite weight in -5...5"),
        ("student_id,pref:price_level\na,x\n", "users.csv:2:3:"),
        ("student_id\na\na\n", "users.csv:3:1: duplicate student_id \"a\" (first on line 2)"),
        ("student_id,home_latitude\na,1\n", "home_latitude and home_longitude must both be columns"),
    ])
    func errors(text: String, message: String) {
        #expect {
            try read(text)
        } throws: { error in
            (error as? DataError)?.description.contains(message) == true
        }
    }

    @Test("skipping bad rows reports each one")
    func skip() throws {
        let (users, report) = try read("student_id,pref:price_level\na,1\nb,99\nc,\n", policy: .skip)
        #expect(users.map(\.id) == ["a", "c"])
        #expect(report.skipped.count == 1 && report.summary.contains("users.csv:3"))
    }
}
