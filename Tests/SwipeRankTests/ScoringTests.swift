import Foundation
import SwipeRankColleges
import Testing
import SwipeRank
import SwipeRankNumerics

@Suite("Scoring, top-k and cards on the shipped catalog")
struct ScoringTests {
    let schools = Fixtures.schools
    let matcher = Fixtures.matcher

    func randomWeights(_ rng: inout SplitMix64) -> PreferenceWeights {
        PreferenceWeights(features: (0..<schools.catalog.dimension).map { _ in Float.random(in: -1...1, using: &rng) },
                          terms: (0..<4).map { _ in Float.random(in: 0...2, using: &rng) })
    }

    func randomProfile(_ rng: inout SplitMix64) -> StudentProfile {
        let home = schools.catalog.locations[Int.random(in: 0..<schools.catalog.count, using: &rng)]!
        let majors = ["11.07", "Psychology", "Nursing", "52", "History"].filter { _ in Bool.random(using: &rng) }
        return StudentProfile(home: home, homeState: nil, maxDistanceMiles: Double.random(in: 50...1500, using: &rng),
                              annualBudget: Double.random(in: 5000...80000, using: &rng),
                              sat: Bool.random(using: &rng) ? Double(Int.random(in: 800...1600, using: &rng)) : nil,
                              intendedMajors: majors,
                              sizePreference: StudentProfile.SizePreference.allCases.randomElement(using: &rng)!)
    }

    @Test("scores equal a naive reference loop", arguments: 0..<8)
    func scoresMatchReference(seed: UInt64) throws {
        var rng = SplitMix64(seed: seed)
        let student = try matcher.student(randomProfile(&rng))
        let weights = randomWeights(&rng)
        var scores: [Float] = []
        schools.catalog.scores(weights: weights, terms: student.terms, into: &scores)
        let x = schools.catalog.features
        for i in 0..<schools.catalog.count {
            var expected: Float = 0, magnitude: Float = 0
            for j in 0..<x.columns { expected += x[i, j] * weights.features[j]; magnitude += abs(x[i, j] * weights.features[j]) }
            for k in 0..<4 { expected += student.terms[term: k, item: i] * weights.terms[k] }
            #expect(abs(scores[i] - expected) <= 1e-4 * max(1, magnitude), "seed \(seed) item \(i)")
            // Contributions by group add up to the score.
            if i % 97 == 0 {
                let total = schools.catalog.contributions(row: i, weights: weights, terms: student.terms).values.reduce(0, +)
                #expect(abs(total - expected) <= 1e-4 * max(1, magnitude))
            }
        }
    }

    @Test("the sgemm batch equals per-student sgemv")
    func batchEqualsSingle() throws {
        var rng = SplitMix64(seed: 11)
        let students = try (0..<9).map { _ in try matcher.student(randomProfile(&rng)) }
        let weights = students.map { _ in randomWeights(&rng) }
        let batch = schools.catalog.scores(batch: weights, terms: students.map(\.terms))
        for (s, student) in students.enumerated() {
            var single: [Float] = []
            schools.catalog.scores(weights: weights[s], terms: student.terms, into: &single)
            for i in 0..<single.count { #expect(abs(batch[s, i] - single[i]) <= 1e-4 * max(1, abs(single[i]))) }
        }
        // And batch recommendations equal one-by-one recommendations.
        let profiles = students.map(\.profile)
        let batched = try matcher.recommend(profiles: profiles, count: 10)
        for (p, profile) in profiles.enumerated() {
            let one = try matcher.recommend(profile: profile, count: 10)
            #expect(batched[p].recommendations.map(\.item.id) == one.recommendations.map(\.item.id))
        }
    }

    @Test("recommendations are the top of a full sort, best first")
    func topOfFullSort() throws {
        let student = try matcher.student(Fixtures.bostonStudent)
        let weights = matcher.coldStartWeights(for: student)
        var workspace = ScoringWorkspace()
        let cards = matcher.recommendations(for: student, weights: weights, count: 20, workspace: &workspace)
        let scores = workspace.scores
        let sorted = scores.indices.sorted { scores[$0] > scores[$1] || (scores[$0] == scores[$1] && $0 < $1) }
        #expect(cards.map(\.item.id) == sorted.prefix(20).map { schools.catalog.ids[$0] })
        #expect(cards.map(\.matchScore) == cards.map(\.matchScore).sorted(by: >))
    }

    @Test("cards: score in [0,1], grade by threshold, ≤ 3 explanations, real majors and distances")
    func cards() throws {
        var rng = SplitMix64(seed: 5)
        for _ in 0..<10 {
            let profile = randomProfile(&rng)
            let response = try matcher.recommend(profile: profile, count: 15)
            #expect(response.recommendations.count == 15)
            for card in response.recommendations {
                #expect((0...1).contains(card.matchScore))
                // The stateless path grades by the student's cold-start scale (`GradeScale`).
                let scale = matcher.gradeScale(student: try matcher.student(profile), weights: matcher.coldStartWeights(for: try matcher.student(profile)))
                #expect(card.grade == scale.grade(matchScore: card.matchScore))
                #expect(card.explanations.count <= 3)
                #expect(!card.isProbe)
                let row = schools.catalog.row(of: card.item.id)!
                let reference = profile.home!.distanceMiles(to: schools.catalog.locations[row]!)
                #expect(abs(card.distance! - reference) < 0.5 + reference * 1e-3)
                let student = try matcher.student(profile)
                for major in card.matchedMajors {
                    let resolved = student.majors.first { $0.label == major }!
                    #expect(resolved.cipCodes.contains { schools.majors.programs[row].contains($0) })
                }
            }
        }
    }

    @Test("no reason contradicts its facts, on every school")
    func explanationsHonest() throws {
        // A tight budget and a short range, weighted so budget and distance dominate.
        let profile = StudentProfile(home: try GeoPoint(latitude: 41.88, longitude: -87.63), homeState: "IL",
                                     maxDistanceMiles: 100, annualBudget: 9000, intendedMajors: ["Nursing"])
        let student = try matcher.student(profile)
        var weights = matcher.coldStartWeights(for: student)
        weights.terms = [3, 3, 0, 1]
        var budgetReasons = 0
        for row in 0..<schools.catalog.count {
            for reason in matcher.explanations(row: row, student: student, weights: weights) {
                if reason.hasPrefix("Within your budget") {
                    budgetReasons += 1
                    #expect(schools.estimatedCost(row: row, homeState: "IL")! <= 9000, "\(schools.catalog.names[row])")
                }
                if reason.hasPrefix("Close to home") { #expect(student.distances[row] <= 100) }
                if reason.hasPrefix("Strong Nursing") || reason.hasPrefix("Offers Nursing") {
                    #expect(!student.matchedMajors(row: row, schools: schools).isEmpty)
                }
            }
            if let cost = schools.estimatedCost(row: row, homeState: "IL"), cost > 9000 * 1.5 {
                #expect(!matcher.explanations(row: row, student: student, weights: weights).contains { $0.contains("budget") })
            }
        }
        #expect(budgetReasons > 0, "some schools are within a $9,000 budget")
    }

    @Test("explanations follow the largest positive contributions")
    func explanationsFollowContributions() throws {
        let student = try matcher.student(Fixtures.bostonStudent)
        let weights = matcher.coldStartWeights(for: student)
        let mit = schools.catalog.row(of: "166683")!
        let reasons = matcher.explanations(row: mit, student: student, weights: weights)
        let contributions = schools.catalog.contributions(row: mit, weights: weights, terms: student.terms)
        let top = contributions.max { $0.value < $1.value }!
        #expect(top.key == "selectivity" && reasons.first == "Selective: admits 7%", "\(contributions) \(reasons)")
        // Without an SAT the academic-fit reason can never appear.
        var noSAT = Fixtures.bostonStudent
        noSAT.sat = nil
        let other = try matcher.student(noSAT)
        for row in stride(from: 0, to: schools.catalog.count, by: 7) {
            #expect(!matcher.explanations(row: row, student: other, weights: matcher.coldStartWeights(for: other))
                .contains { $0.hasPrefix("Strong academic fit") })
        }
    }

    @Test("cold start: intended majors raise schools that offer them")
    func coldStartMajors() throws {
        var profile = StudentProfile(intendedMajors: ["Nursing"])
        let withMajor = try matcher.recommend(profile: profile, count: 50)
        profile.intendedMajors = []
        let without = try matcher.recommend(profile: profile, count: 50)
        let nursing = try schools.majors.resolve("Nursing").cipCodes
        func offering(_ r: RecommendationResponse) -> Int {
            r.recommendations.filter { card in
                nursing.contains { schools.majors.programs[schools.catalog.row(of: card.item.id)!].contains($0) }
            }.count
        }
        #expect(offering(withMajor) == 50)
        #expect(offering(without) < 50)
    }
}

@Suite("Distances")
struct GeoTests {
    @Test("MIT to UC Berkeley is about 2,700 miles")
    func mitBerkeley() throws {
        let mit = try GeoPoint(latitude: 42.3601, longitude: -71.0942)
        let berkeley = try GeoPoint(latitude: 37.8719, longitude: -122.2585)
        // Great-circle 2,680 mi on the mean-radius sphere: within 1% of the quoted 2,700.
        #expect(abs(mit.distanceMiles(to: berkeley) - 2700) < 27)
        // One degree of longitude on the equator is 2πR/360 = 69.09 mi.
        let degree = try GeoPoint(latitude: 0, longitude: 0).distanceMiles(to: GeoPoint(latitude: 0, longitude: 1))
        #expect(abs(degree - 69.09) < 0.01)
        #expect(mit.distanceMiles(to: mit) == 0)
    }

    @Test("the vectorized distances equal the haversine reference for every school")
    func vectorized() throws {
        let catalog = Fixtures.schools.catalog
        var rng = SplitMix64(seed: 1)
        for _ in 0..<5 {
            let home = try GeoPoint(latitude: Double.random(in: -60...70, using: &rng), longitude: Double.random(in: -180...180, using: &rng))
            var distances: [Float] = []
            catalog.distancesMiles(from: home, into: &distances)
            for i in 0..<catalog.count {
                let reference = home.distanceMiles(to: catalog.locations[i]!)
                #expect(abs(Double(distances[i]) - reference) < 0.05 + reference * 2e-4, "\(home) item \(i)")
            }
        }
    }

    @Test("coordinates out of range are rejected")
    func ranges() {
        #expect(throws: DataError.self) { try GeoPoint(latitude: 91, longitude: 0) }
        #expect(throws: DataError.self) { try GeoPoint(latitude: 0, longitude: -180.5) }
        #expect(throws: DataError.self) { try GeoPoint(latitude: .nan, longitude: 0) }
    }
}

@Suite("Grades, phases and calibration")
struct GradeTests {
    @Test("grade thresholds", arguments: [(0.85, Grade.A), (0.8499, .B), (0.70, .B), (0.55, .C), (0.5499, .D), (0.40, .D), (0.3999, .F), (0, .F), (1, .A)])
    func grades(score: Double, grade: Grade) { #expect(Grade(matchScore: score) == grade) }

    @Test("match score is a logistic of the raw score")
    func calibration() {
        let c = MatchCalibration.default
        #expect(c.matchScore(raw: c.offset) == 0.5)
        #expect(c.matchScore(raw: 100) > 0.999 && c.matchScore(raw: -100) < 0.001)
        #expect(c.matchScore(raw: 3) > c.matchScore(raw: 2.9))
    }

    @Test("phases: discovery 0–10, refinement 11–30, stable 31+")
    func phases() {
        #expect(LearningPhase(totalSwipes: 0) == .discovery)
        #expect(LearningPhase(totalSwipes: 10) == .discovery)
        #expect(LearningPhase(totalSwipes: 11) == .refinement)
        #expect(LearningPhase(totalSwipes: 30) == .refinement)
        #expect(LearningPhase(totalSwipes: 31) == .stable)
        #expect(LearningPhase.progress(totalSwipes: 4) == 0.4)
        #expect(LearningPhase.progress(totalSwipes: 20) == 0.5)
        #expect(LearningPhase.progress(totalSwipes: 31) == 1)
    }
}

@Suite("Named weights")
struct NamedWeightsTests {
    /// The table on `SchoolMatcher.namedWeights(_:)`, by name lookups.
    static func reference(_ weights: PreferenceWeights, catalog: Catalog) -> [String: Double] {
        func w(_ name: String) -> Double {
            catalog.columns.firstIndex { $0.name == name }.map { Double(weights.features[$0]) } ?? 0
        }
        func mean(_ prefix: String) -> Double {
            let names = SchoolCatalog.locales.filter { $0.hasPrefix(prefix) }
            return names.map { w("locale=\($0)") }.reduce(0, +) / Double(max(1, names.count))
        }
        let t = weights.terms.map(Double.init)
        let named: [String: Double] = [
            "academic_selectivity": w("selectivity") + w("sat_avg"), "academic_fit": t[2], "cost_weight": t[1] - w("net_price"),
            "distance_weight": t[0], "major_weight": t[3], "size_preference": w("size=large") - w("size=small"),
            "public_preference": w("control=public") - w("control=private_nonprofit"),
            "urban_preference": mean("city") - mean("rural"), "graduation_weight": w("completion_rate"), "earnings_weight": w("earnings"),
        ]
        return named.mapValues { ($0 * 10_000).rounded() / 10_000 }
    }

    @Test("the precomputed plan equals the table, on random weights", arguments: 0..<20)
    func matchesTable(seed: UInt64) {
        var rng = SplitMix64(seed: seed)
        let catalog = Fixtures.matcher.catalog
        let weights = PreferenceWeights(features: (0..<catalog.dimension).map { _ in Float.random(in: -3...3, using: &rng) },
                                        terms: (0..<4).map { _ in Float.random(in: -3...3, using: &rng) })
        #expect(Fixtures.matcher.namedWeights(weights) == Self.reference(weights, catalog: catalog))
        // The list a learning state is built from: the same entries, the names in JSON's order.
        let list = Fixtures.matcher.namedWeightList(weights)
        #expect(list.dictionary == Self.reference(weights, catalog: catalog))
        #expect(list.names == list.names.sorted { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) })
        #expect(list == NamedWeightList(Fixtures.matcher.namedWeights(weights)))
    }

    @Test("an item matcher's list equals its dictionary: every column, the distance term over a column of that name", arguments: 0..<12)
    func itemMatcherList(seed: UInt64) throws {
        var rng = SplitMix64(seed: seed &+ 70)
        // Half the seeds name a feature column "distance", which the term's weight overrides.
        let clash = seed % 2 == 0
        let schema = ItemSchema(idColumn: "id", nameColumn: "name", coordinateColumns: (latitude: "lat", longitude: "lon"),
                                textAttributes: ["kind"], numericAttributes: ["price"],
                                features: [.numeric("price", transform: .log1p, group: "cost"),
                                           .categorical("kind", categories: ["a", "b", "ß"], group: "kind")]
                                    + (clash ? [.numeric("distance", transform: .identity, group: "far")] : []))
        let rows = (0..<8).map { i in "\(i),n\(i),\(40 + i),-70,\(i * 3),\(["a", "b", "ß"][i % 3]),\(i)" }
        let catalog = try Catalog(table: Fixtures.table(["id,name,lat,lon,price,kind,distance"] + rows), schema: schema)
        let matcher = ItemMatcher(catalog: catalog)
        #expect(catalog.columns.contains { $0.name == "distance" } == clash)
        for _ in 0..<20 {
            let weights = PreferenceWeights(features: (0..<catalog.dimension).map { _ in Float.random(in: -3...3, using: &rng) },
                                            terms: [Float.random(in: -3...3, using: &rng)])
            // The reference: every column by name, then the distance term, rounded to 4 decimals.
            var reference: [String: Double] = [:]
            for (j, column) in catalog.columns.enumerated() { reference[column.name] = Double(weights.features[j]) }
            reference["distance"] = Double(weights.terms[0])
            reference = reference.mapValues { ($0 * 10_000).rounded() / 10_000 }
            let named = matcher.namedWeights(weights), list = matcher.namedWeightList(weights)
            #expect(named == reference && list.dictionary == reference && list == NamedWeightList(reference))
            #expect(list.names == list.names.sorted { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) })
        }
    }
}
