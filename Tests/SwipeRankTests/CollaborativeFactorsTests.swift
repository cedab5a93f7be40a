import Foundation
import SwipeRank
import SwipeRankNumerics
import Testing

/// The collaborative part of a student's model: the factor file, its whitening against a
/// catalog, and the online posterior — each held to a plain dense reference.
@Suite struct CollaborativeFactorsTests {
    static let schemaJSON = """
    {"id_column": "id", "name_column": "name", "features": [
      {"column": "g_comedy", "kind": "flag", "group": "genre"},
      {"column": "g_drama", "kind": "flag", "group": "genre"},
      {"column": "year", "kind": "numeric", "group": "age"}]}
    """

    /// A catalog of `n` items with random genre flags and years.
    static func catalog(_ n: Int, using rng: inout SplitMix64) throws -> Catalog {
        let schema = try ItemSchema.decode(json: Data(schemaJSON.utf8), source: "s.json")
        let rows = (0..<n).map { i in
            "i\(i),Item \(i),\(Int.random(in: 0...1, using: &rng)),\(Int.random(in: 0...1, using: &rng)),\(Int.random(in: 1950...2020, using: &rng))"
        }
        return try Catalog(table: CSVTable(text: (["id,name,g_comedy,g_drama,year"] + rows).joined(separator: "\n") + "\n", source: "t.csv"),
                           schema: schema)
    }

    /// A file naming some of the catalog's items, with an embedding for the rest.
    static func file(_ catalog: Catalog, f: Int, named: Int, using rng: inout SplitMix64) -> FactorModelFile {
        FactorModelFile(dimension: f, confidence: 4, dislikeConfidence: 2, regularization: 0.5, weight: 3,
                        itemIDs: Array(catalog.ids.prefix(named)),
                        itemFactors: (0..<named).map { _ in (0..<f).map { _ in Double.random(in: -1...1, using: &rng) } },
                        featureNames: catalog.columns.map(\.name),
                        featureEmbedding: catalog.columns.map { _ in (0..<f).map { _ in Double.random(in: -0.5...0.5, using: &rng) } })
    }

    /// Solves a dense symmetric positive definite system by Gaussian elimination (the reference).
    static func denseSolve(_ a: [[Double]], _ b: [Double]) -> [Double] {
        var m = a, x = b
        let n = b.count
        for k in 0..<n {
            for i in (k + 1)..<n {
                let r = m[i][k] / m[k][k]
                for j in k..<n { m[i][j] -= r * m[k][j] }
                x[i] -= r * x[k]
            }
        }
        for i in stride(from: n - 1, through: 0, by: -1) {
            var s = x[i]
            for j in (i + 1)..<n { s -= m[i][j] * x[j] }
            x[i] = s / m[i][i]
        }
        return x
    }

    /// Every catalog row's unwhitened factor as the file defines it (named rows from the file,
    /// the rest from the embedding).
    static func rawFactors(_ file: FactorModelFile, _ catalog: Catalog) -> [[Double]] {
        (0..<catalog.count).map { row in
            if let i = file.itemIDs.firstIndex(of: catalog.ids[row]) { return file.itemFactors[i] }
            var v = [Double](repeating: 0, count: file.dimension)
            for (c, e) in file.featureEmbedding!.enumerated() {
                for j in 0..<file.dimension { v[j] += Double(catalog.features[row, c]) * e[j] }
            }
            return v
        }
    }

    @Test("after any swipes, in any order, the affinities are the implicit-ALS solve for that student", arguments: 0..<8)
    func posteriorIsTheFitSolve(seed: UInt64) throws {
        var rng = SplitMix64(seed: 500 + seed)
        let catalog = try Self.catalog(30, using: &rng)
        let f = Int.random(in: 2...6, using: &rng)
        let file = Self.file(catalog, f: f, named: 20, using: &rng)
        let factors = try CollaborativeFactors(file: file, catalog: catalog)
        #expect(factors.rowsFromFeatures == 10 && factors.unknownItems == 0)
        let swipes = (0..<Int.random(in: 1...15, using: &rng)).map { _ in (row: Int.random(in: 0..<30, using: &rng), liked: Bool.random(using: &rng)) }
        // Distinct rows: the fit takes one answer per item.
        var seen = Set<Int>()
        let distinct = swipes.filter { seen.insert($0.row).inserted }
        // Reference, in the raw space: (VᵀV + λI + Σ c vvᵀ) u = Σ (1 + α) v over likes.
        let v = Self.rawFactors(file, catalog)
        var a = (0..<f).map { i in (0..<f).map { j in (0..<catalog.count).reduce(0.0) { $0 + v[$1][i] * v[$1][j] } + (i == j ? file.regularization : 0) } }
        var b = [Double](repeating: 0, count: f)
        for s in distinct {
            let c = s.liked ? file.confidence : file.dislikeConfidence
            for i in 0..<f { for j in 0..<f { a[i][j] += c * v[s.row][i] * v[s.row][j] } }
            if s.liked { for j in 0..<f { b[j] += (1 + file.confidence) * v[s.row][j] } }
        }
        let u = Self.denseSolve(a, b)
        for order in [distinct, distinct.reversed(), distinct.shuffled(using: &rng)] {
            var posterior = FactorPosterior(dimension: f)
            for s in order {
                try posterior.observe(factors.vector(row: s.row), liked: s.liked, confidence: file.confidence,
                                      dislikeConfidence: file.dislikeConfidence)
            }
            let affinities = factors.affinities(of: posterior)
            for row in 0..<catalog.count {
                let expected = zip(v[row], u).reduce(0) { $0 + $1.0 * $1.1 }
                #expect(abs(Double(affinities[row]) - expected) <= 1e-4 * max(1, abs(expected)),
                        "seed \(seed) row \(row): \(affinities[row]) vs \(expected)")
            }
        }
    }

    @Test("affinities and terms from the by-factor copy are each row's sum in factor order, bit for bit; sgemv's agree to rounding (seeded)")
    func byFactorProducts() throws {
        for seed: UInt64 in 21...32 {
            var rng = SplitMix64(seed: seed)
            let n = 40 + Int(rng.next() % 90), f = [1, 3, 8, 17, 32, 40][Int(rng.next() % 6)]
            let catalog = try Self.catalog(n, using: &rng)
            let file = Self.file(catalog, f: f, named: n / 2, using: &rng)
            let ordered = try CollaborativeFactors(file: file, catalog: catalog)
            let blas = try CollaborativeFactors(file: file, catalog: catalog, byFactorLimit: 0)
            var posterior = FactorPosterior(dimension: f)
            #expect(ordered.terms(of: posterior) == nil && blas.terms(of: posterior) == nil)
            for _ in 0..<6 {
                let row = Int(rng.next() % UInt64(n))
                try posterior.observe(ordered.vector(row: row), liked: rng.next() % 3 != 0, confidence: file.confidence,
                                      dislikeConfidence: file.dislikeConfidence)
            }
            let u = posterior.mean.map(Float.init)
            let gamma = Float(file.weight)
            let affinities = ordered.affinities(of: posterior), terms = try #require(ordered.terms(of: posterior))
            let blasAffinities = blas.affinities(of: posterior), blasTerms = try #require(blas.terms(of: posterior))
            for row in 0..<n {
                // The reference: 0 + x₀ṽ₀ + x₁ṽ₁ + … in factor order, zero weights skipped.
                var affinity: Float = 0, term: Float = 0
                for j in 0..<f where u[j] != 0 { affinity = affinity + u[j] * ordered.whitened[row, j] }
                for j in 0..<f where gamma * u[j] != 0 { term = term + (gamma * u[j]) * ordered.whitened[row, j] }
                #expect(affinities[row].bitPattern == affinity.bitPattern, "seed \(seed) row \(row)")
                #expect(terms[row].bitPattern == term.bitPattern, "seed \(seed) row \(row)")
                #expect(abs(blasAffinities[row] - affinity) <= 1e-5 * max(1, abs(affinity)), "seed \(seed) row \(row)")
                #expect(abs(blasTerms[row] - term) <= 1e-5 * max(1, abs(term)), "seed \(seed) row \(row)")
            }
            // Added to scores: each score plus its term.
            let base = (0..<n).map { _ in Float.random(in: -2...2, using: &rng) }
            var scores = base
            ordered.addScores(of: posterior, to: &scores)
            #expect(scores == zip(base, terms).map { $0 + $1 })
        }
    }

    @Test("no swipes: every affinity is 0, so the engine ranks exactly as without factors")
    func coldStartUnchanged() throws {
        var rng = SplitMix64(seed: 9)
        let catalog = try Self.catalog(25, using: &rng)
        let factors = try CollaborativeFactors(file: Self.file(catalog, f: 3, named: 25, using: &rng), catalog: catalog)
        let posterior = FactorPosterior(dimension: 3)
        #expect(factors.affinities(of: posterior).allSatisfy { $0 == 0 })
        var scores = (0..<25).map { Float($0) }
        factors.addScores(of: posterior, to: &scores)
        #expect(scores == (0..<25).map { Float($0) })
    }

    @Test("a file of another catalog, with other feature columns, or a weight out of range, is refused naming the field")
    func wrongCatalog() throws {
        var rng = SplitMix64(seed: 3)
        let catalog = try Self.catalog(10, using: &rng)
        let other = FactorModelFile(dimension: 2, confidence: 1, dislikeConfidence: 0, regularization: 1, weight: 1,
                                    itemIDs: ["x1", "x2", "i0"], itemFactors: [[1, 0], [0, 1], [1, 1]])
        #expect { try CollaborativeFactors(file: other, catalog: catalog) } throws: { ($0 as? DataError)?.field == "item_ids" }
        let renamed = FactorModelFile(dimension: 2, confidence: 1, dislikeConfidence: 0, regularization: 1, weight: 1,
                                      itemIDs: ["i0"], itemFactors: [[1, 0]], featureNames: ["g_comedy", "g_drama", "age"],
                                      featureEmbedding: [[0, 0], [0, 0], [0, 0]])
        #expect { try CollaborativeFactors(file: renamed, catalog: catalog) } throws: { ($0 as? DataError)?.field == "feature_names" }
        // Finite factors whose squares overflow: refused, never NaN scores.
        let huge = FactorModelFile(dimension: 2, confidence: 1, dislikeConfidence: 0, regularization: 1, weight: 1,
                                   itemIDs: ["i0", "i1"], itemFactors: [[1e200, 0], [0, 1]])
        #expect { try CollaborativeFactors(file: huge, catalog: catalog) } throws: { ($0 as? DataError)?.field == "item_factors" }
        // A weight built in code (the decoder never saw it) past the Float range, or not a
        // number: refused naming it, as the decoder does. The largest allowed is accepted.
        for weight in [8.9e92, -1, .nan, .infinity, FactorModelFile.maximumWeight.nextUp] {
            let file = FactorModelFile(dimension: 2, confidence: 1, dislikeConfidence: 0, regularization: 1, weight: weight,
                                       itemIDs: ["i0", "i1"], itemFactors: [[1, 0], [0, 1]])
            #expect { try CollaborativeFactors(file: file, catalog: catalog) } throws: { ($0 as? DataError)?.field == "weight" }
        }
        let largest = FactorModelFile(dimension: 2, confidence: 1, dislikeConfidence: 0, regularization: 1, weight: FactorModelFile.maximumWeight,
                                      itemIDs: ["i0", "i1"], itemFactors: [[1, 0], [0, 1]])
        #expect(try CollaborativeFactors(file: largest, catalog: catalog).file.weight == FactorModelFile.maximumWeight)
        // A minority of removed items is a catalog that changed since the fit: accepted, counted.
        let changed = FactorModelFile(dimension: 2, confidence: 1, dislikeConfidence: 0, regularization: 1, weight: 1,
                                      itemIDs: ["i0", "i1", "gone"], itemFactors: [[1, 0], [0, 1], [1, 1]])
        #expect(try CollaborativeFactors(file: changed, catalog: catalog).unknownItems == 1)
    }

    @Test("a bad file is an error naming the field, never a crash", arguments: [
        (#"{"version":2,"dimension":1,"confidence":1,"dislike_confidence":0,"regularization":1,"weight":1,"item_ids":[],"item_factors":[]}"#, "version"),
        (#"{"version":1,"dimension":0,"confidence":1,"dislike_confidence":0,"regularization":1,"weight":1,"item_ids":[],"item_factors":[]}"#, "dimension"),
        (#"{"version":1,"dimension":1,"confidence":0,"dislike_confidence":0,"regularization":1,"weight":1,"item_ids":[],"item_factors":[]}"#, "confidence"),
        (#"{"version":1,"dimension":1,"confidence":1,"dislike_confidence":-1,"regularization":1,"weight":1,"item_ids":[],"item_factors":[]}"#, "dislike_confidence"),
        (#"{"version":1,"dimension":1,"confidence":1,"dislike_confidence":0,"regularization":0,"weight":1,"item_ids":[],"item_factors":[]}"#, "regularization"),
        (#"{"version":1,"dimension":1,"confidence":1,"dislike_confidence":0,"regularization":1,"weight":-1,"item_ids":[],"item_factors":[]}"#, "weight"),
        // Finite as a Double, infinite as the Float the scores are kept in (found by FuzzFactors:
        // every score became NaN and the deck trapped).
        (#"{"version":1,"dimension":1,"confidence":1,"dislike_confidence":0,"regularization":1,"weight":8.9e92,"item_ids":[],"item_factors":[]}"#, "weight"),
        (#"{"version":1,"dimension":1,"confidence":1,"dislike_confidence":0,"regularization":1,"weight":1000001,"item_ids":[],"item_factors":[]}"#, "weight"),
        (#"{"version":1,"dimension":2,"confidence":1,"dislike_confidence":0,"regularization":1,"weight":1,"item_ids":["a"],"item_factors":[[1]]}"#, "item_factors"),
        (#"{"version":1,"dimension":1,"confidence":1,"dislike_confidence":0,"regularization":1,"weight":1,"item_ids":["a","b"],"item_factors":[[1]]}"#, "item_factors"),
        (#"{"version":1,"dimension":1,"confidence":1,"dislike_confidence":0,"regularization":1,"weight":1,"item_ids":["a","a"],"item_factors":[[1],[2]]}"#, "item_ids"),
        (#"{"version":1,"dimension":1,"confidence":1,"dislike_confidence":0,"regularization":1,"weight":1,"item_ids":[],"item_factors":[],"feature_names":["x"]}"#, "feature_embedding"),
        (#"{"version":1,"dimension":1,"confidence":1,"dislike_confidence":0,"regularization":1,"weight":1,"item_ids":[],"item_factors":[],"feature_names":["x"],"feature_embedding":[[1,2]]}"#, "feature_embedding"),
        (#"{"version":1,"dimension":1,"confidence":1,"dislike_confidence":0,"regularization":1,"weight":1,"item_ids":[],"item_factors":[],"factors":[]}"#, "factors"),
        (#"{"version":1,"dimension":1,"confidence":1,"dislike_confidence":0,"regularization":1,"weight":1,"item_ids":[],"#, "line"),
    ])
    func badFiles(json: String, field: String) {
        do {
            _ = try FactorModelFile.decode(json: Data(json.utf8), source: "factors.json")
            Issue.record("accepted \(json)")
        } catch {
            #expect(error.source == "factors.json")
            #expect(field == "line" ? error.line != nil : "\(error)".contains(field), "\(error)")
        }
    }

    @Test("a file round-trips through its JSON bytes, and its digest changes with any value")
    func roundTrip() throws {
        var rng = SplitMix64(seed: 4)
        let catalog = try Self.catalog(12, using: &rng)
        let file = Self.file(catalog, f: 3, named: 8, using: &rng)
        let decoded = try FactorModelFile.decode(json: file.jsonData(), source: "f.json")
        #expect(decoded == file)
        let a = try CollaborativeFactors(file: file, catalog: catalog), b = try CollaborativeFactors(file: file.withWeight(3.5), catalog: catalog)
        #expect(a.digest != b.digest)
    }

    @Test("the engine's model version and learning digest name the factors")
    func engineDigest() throws {
        let engine = SwipeEngine(matcher: Fixtures.matcher)
        let catalog = engine.matcher.catalog
        var rng = SplitMix64(seed: 5)
        let file = FactorModelFile(dimension: 2, confidence: 2, dislikeConfidence: 1, regularization: 1, weight: 1,
                                   itemIDs: Array(catalog.ids.prefix(50)), itemFactors: (0..<50).map { _ in [Double.random(in: -1...1, using: &rng), 1] })
        let withFactors = try engine.withFactors(file)
        #expect(withFactors.modelVersion != engine.modelVersion)
        #expect(withFactors.factors?.rowsFromFeatures == catalog.count - 50)
        #expect(try engine.withFactors(file.withWeight(2)).modelVersion != withFactors.modelVersion)
    }
}

/// A factor file written by another implementation (`scripts/factors-numpy.py`, numpy alone):
/// the loader takes it, and a session's online update reaches numpy's closed-form solve.
@Suite struct ExternalFactorFileTests {
    static func path(_ name: String) -> String {
        Fixtures.root.appendingPathComponent(name).path
    }

    @Test("numpy's implicit-ALS file loads, and the online posterior gives numpy's affinities")
    func numpyFile() throws {
        let schema = try ItemSchema.load(contentsOfFile: Self.path("datasets/restaurants/restaurants.schema.json"))
        let catalog = try Catalog(table: CSVTable(contentsOfFile: Self.path("datasets/restaurants/restaurants.csv")), schema: schema)
        let fixture = "Tests/SwipeRankTests/Fixtures/restaurant-factors"
        let file = try FactorModelFile.decode(json: InputFile.read(Self.path(fixture + ".json"), what: "factors"), source: "fixture")
        let factors = try CollaborativeFactors(file: file, catalog: catalog)
        struct Expected: Decodable {
            struct Swipe: Decodable { var item_id: String; var liked: Bool }
            var swipes: [Swipe]
            var affinities: [String: Double]
        }
        let expected = try JSONDecoder().decode(Expected.self, from: InputFile.read(Self.path(fixture + ".expected.json"), what: "expected"))
        #expect(expected.swipes.count >= 3 && expected.affinities.count == catalog.count)
        var posterior = FactorPosterior(dimension: file.dimension)
        for s in expected.swipes {
            try posterior.observe(factors.vector(row: catalog.row(of: s.item_id)!), liked: s.liked,
                                  confidence: file.confidence, dislikeConfidence: file.dislikeConfidence)
        }
        let affinities = factors.affinities(of: posterior)
        var spread = 0.0
        for (id, value) in expected.affinities {
            let got = Double(affinities[catalog.row(of: id)!])
            #expect(abs(got - value) <= 1e-4 * max(1, abs(value)), "\(id): \(got) vs numpy \(value)")
            spread = max(spread, abs(value))
        }
        #expect(spread > 0.1, "the fixture's affinities must not all be ~0 (a test that cannot fail)")
    }
}
