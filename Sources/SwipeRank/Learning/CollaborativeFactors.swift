import Foundation
import SwipeRankNumerics

/// A fitted collaborative model as a file: an item factor per item id, a feature embedding that
/// gives a factor to items the fit never saw, and the settings the student's online update
/// needs (`swiperank fit-factors` writes it; `SwipeEngine.withFactors(_:)` loads it).
///
/// The model is implicit-feedback matrix factorization (Hu, Koren and Volinsky 2008, "iALS"):
/// a student's affinity for an item is `vᵢ·u`, fitted so that a liked item scores 1 and every
/// other item 0, with weight `1 + confidence` on a like, `1 + dislikeConfidence` on a
/// dislike and 1 on every item the student was never shown — so the fit learns both what people
/// like and what they engage with at all, which a ranking over a whole catalog rewards.
///
/// The format is plain JSON so that any trainer can write it (a numpy script, Spark MLlib's
/// ALS item factors): version 1, snake_case keys, `item_ids` and `item_factors` in parallel
/// (one row of `dimension` numbers per id), an optional `feature_embedding` (one row per
/// catalog feature column, named in `feature_names` in catalog order). Unknown keys are
/// rejected, so a typo never falls back to a default.
public struct FactorModelFile: Sendable, Hashable, Codable {
    /// The format version this build reads and writes.
    public static let currentVersion = 1
    /// The format's version.
    public let version: Int
    /// f, the number of factors.
    public let dimension: Int
    /// The confidence α of a like (the weight of its observation is `1 + α`; > 0).
    public let confidence: Double
    /// The confidence of a dislike (≥ 0; 0 treats a dislike as an item never shown).
    public let dislikeConfidence: Double
    /// λ, the ridge regularization of the fit (> 0): also in the student's prior.
    public let regularization: Double
    /// γ, raw-score units per unit of affinity: how much the collaborative term moves the
    /// ranking against the feature scores (≥ 0; chosen on held-out swipes by the fit).
    public let weight: Double

    /// The largest weight γ a file may hold (10⁶): a fitted γ is a few units of the feature
    /// scores' scale, and a larger one would only drown them (or overflow the Float scores).
    public static let maximumWeight = 1_000_000.0

    /// Why a weight is refused, or nil for one in 0…`maximumWeight`: the one rule the decoder
    /// and `CollaborativeFactors` (which also sees files built in code) both apply.
    static func weightProblem(_ weight: Double) -> String? {
        weight.isFinite && weight >= 0 && weight <= maximumWeight ? nil
            : "must be finite, not negative and at most \(Int(maximumWeight)), got \(weight)"
    }

    /// The item ids, in the order of `itemFactors`.
    public let itemIDs: [String]
    /// One row of f factors per item id.
    public let itemFactors: [[Double]]
    /// The catalog feature columns the embedding multiplies, in catalog order (nil: no
    /// embedding; items the file does not name then get a zero factor).
    public let featureNames: [String]?
    /// One row of f numbers per feature column: an item's factor from its features alone,
    /// `Σⱼ xⱼ Eⱼ`, for items the fit never saw.
    public let featureEmbedding: [[Double]]?
    /// Free text: what fitted it, on what (shown by `serve` at start).
    public let fittedOn: String?

    /// Creates a file's contents.
    ///
    /// - Parameters:
    ///   - dimension: f ≥ 1.
    ///   - confidence: α > 0.
    ///   - dislikeConfidence: ≥ 0.
    ///   - regularization: λ > 0.
    ///   - weight: 0 ≤ γ ≤ `maximumWeight` (checked when a file is decoded).
    ///   - itemIDs: Distinct ids.
    ///   - itemFactors: One row of f values per id.
    ///   - featureNames: The embedding's feature columns.
    ///   - featureEmbedding: One row of f values per feature name.
    ///   - fittedOn: A description.
    public init(dimension: Int, confidence: Double, dislikeConfidence: Double, regularization: Double, weight: Double,
                itemIDs: [String], itemFactors: [[Double]], featureNames: [String]? = nil, featureEmbedding: [[Double]]? = nil,
                fittedOn: String? = nil) {
        version = Self.currentVersion
        self.dimension = dimension
        self.confidence = confidence
        self.dislikeConfidence = dislikeConfidence
        self.regularization = regularization
        self.weight = weight
        self.itemIDs = itemIDs
        self.itemFactors = itemFactors
        self.featureNames = featureNames
        self.featureEmbedding = featureEmbedding
        self.fittedOn = fittedOn
    }

    /// The same model with another weight γ (the fit chooses it after the factors).
    ///
    /// - Parameter weight: γ ≥ 0.
    /// - Returns: The model.
    public func withWeight(_ weight: Double) -> FactorModelFile {
        FactorModelFile(dimension: dimension, confidence: confidence, dislikeConfidence: dislikeConfidence,
                        regularization: regularization, weight: weight, itemIDs: itemIDs, itemFactors: itemFactors,
                        featureNames: featureNames, featureEmbedding: featureEmbedding, fittedOn: fittedOn)
    }

    private enum CodingKeys: String, CodingKey, CaseIterable {
        case version, dimension, confidence, dislikeConfidence = "dislike_confidence", regularization, weight
        case itemIDs = "item_ids", itemFactors = "item_factors", featureNames = "feature_names"
        case featureEmbedding = "feature_embedding", fittedOn = "fitted_on"
    }

    /// Decodes and validates a file: a known version, positive settings, one finite row of f
    /// values per distinct id, the embedding's rows matching its names.
    ///
    /// - Parameter decoder: The decoder.
    /// - Throws: `DecodingError` naming the field (and the row).
    public init(from decoder: any Decoder) throws {
        try decoder.rejectUnknownKeys(CodingKeys.self)
        let c = try decoder.container(keyedBy: CodingKeys.self)
        func fail(_ key: CodingKeys, _ detail: String) -> DecodingError {
            DecodingError.dataCorruptedError(forKey: key, in: c, debugDescription: detail)
        }
        version = try c.decode(Int.self, forKey: .version)
        guard version == Self.currentVersion else {
            throw fail(.version, "unknown factor model version \(version) (this build reads \(Self.currentVersion))")
        }
        let dimension = try c.decode(Int.self, forKey: .dimension)
        guard (1...1_024).contains(dimension) else { throw fail(.dimension, "must be in 1...1024, got \(dimension)") }
        self.dimension = dimension
        confidence = try c.decode(Double.self, forKey: .confidence)
        guard confidence.isFinite, confidence > 0 else { throw fail(.confidence, "must be positive and finite") }
        dislikeConfidence = try c.decode(Double.self, forKey: .dislikeConfidence)
        guard dislikeConfidence.isFinite, dislikeConfidence >= 0 else { throw fail(.dislikeConfidence, "must be finite and not negative") }
        regularization = try c.decode(Double.self, forKey: .regularization)
        guard regularization.isFinite, regularization > 0 else { throw fail(.regularization, "must be positive and finite") }
        weight = try c.decode(Double.self, forKey: .weight)
        // γ scales the collaborative term in Float scores: beyond 10⁶ it drowns every other term,
        // and past Float's range (3.4e38) every score would be ±∞ or NaN.
        if let problem = FactorModelFile.weightProblem(weight) { throw fail(.weight, problem) }
        let itemIDs = try c.decode([String].self, forKey: .itemIDs)
        let itemFactors = try c.decode([[Double]].self, forKey: .itemFactors)
        self.itemIDs = itemIDs
        self.itemFactors = itemFactors
        guard itemFactors.count == itemIDs.count else {
            throw fail(.itemFactors, "has \(itemFactors.count) rows for \(itemIDs.count) item ids")
        }
        if let bad = itemFactors.firstIndex(where: { $0.count != dimension || !$0.allSatisfy(\.isFinite) }) {
            throw fail(.itemFactors, "row \(bad) (item \"\(DataError.truncated(itemIDs[bad]))\") must hold \(dimension) finite values, has \(itemFactors[bad].count)")
        }
        var seen = Set<String>()
        for (i, id) in itemIDs.enumerated() where !seen.insert(id).inserted {
            throw fail(.itemIDs, "item_ids[\(i)]: \"\(DataError.truncated(id))\" appears twice")
        }
        let featureNames = try c.decodeIfPresent([String].self, forKey: .featureNames)
        let featureEmbedding = try c.decodeIfPresent([[Double]].self, forKey: .featureEmbedding)
        self.featureNames = featureNames
        self.featureEmbedding = featureEmbedding
        guard (featureNames == nil) == (featureEmbedding == nil) else {
            throw fail(featureNames == nil ? .featureNames : .featureEmbedding, "feature_names and feature_embedding come together")
        }
        if let names = featureNames, let embedding = featureEmbedding {
            guard names.count == embedding.count else {
                throw fail(.featureEmbedding, "has \(embedding.count) rows for \(names.count) feature names")
            }
            if let bad = embedding.firstIndex(where: { $0.count != dimension || !$0.allSatisfy(\.isFinite) }) {
                throw fail(.featureEmbedding, "row \(bad) (feature \"\(names[bad])\") must hold \(dimension) finite values")
            }
        }
        fittedOn = try c.decodeIfPresent(String.self, forKey: .fittedOn)
    }

    /// Encodes the file (snake_case keys; absent optionals left out).
    ///
    /// - Parameter encoder: The encoder.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(version, forKey: .version)
        try c.encode(dimension, forKey: .dimension)
        try c.encode(confidence, forKey: .confidence)
        try c.encode(dislikeConfidence, forKey: .dislikeConfidence)
        try c.encode(regularization, forKey: .regularization)
        try c.encode(weight, forKey: .weight)
        try c.encode(itemIDs, forKey: .itemIDs)
        try c.encode(itemFactors, forKey: .itemFactors)
        try c.encodeIfPresent(featureNames, forKey: .featureNames)
        try c.encodeIfPresent(featureEmbedding, forKey: .featureEmbedding)
        try c.encodeIfPresent(fittedOn, forKey: .fittedOn)
    }

    /// Parses a factor file.
    ///
    /// - Parameters:
    ///   - json: The bytes (at most 1 GiB).
    ///   - source: The name shown in errors.
    /// - Returns: The file's contents.
    /// - Throws: `DataError` with line:column for malformed JSON, the field for a wrong value.
    public static func decode(json: Data, source: String) throws(DataError) -> FactorModelFile {
        try JSONInput.decode(FactorModelFile.self, from: json, source: source, maxBytes: 1 << 30)
    }

    /// The file as JSON (sorted keys: the same fit writes the same bytes).
    ///
    /// - Returns: The bytes.
    public func jsonData() -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        // Every value is finite (checked on decoding; the fit writes finite values).
        return (try? encoder.encode(self)) ?? Data()
    }
}

/// A factor model resolved against one catalog: a factor for every row, whitened so that a
/// student's prior over the collaborative part is the unit Gaussian.
///
/// The fit's background term (every item a 0 with weight 1) plus the ridge is, for a student
/// with no swipes, a Gaussian prior `u ~ N(0, G⁻¹)` with `G = Σᵢ vᵢvᵢᵀ + λI` over the catalog.
/// With `G = RRᵀ` (Cholesky), `ṽᵢ = R⁻¹vᵢ` and `u' = Rᵀu`, the affinity is `ṽᵢ·u'` and the
/// prior is `u' ~ N(0, I)`: each swipe is then one rank-1 update of an identity-started factor
/// (`FactorPosterior`), exactly the fit's solve for that student after every swipe.
public struct CollaborativeFactors: Sendable {
    /// The file it came from.
    public let file: FactorModelFile
    /// f.
    public var dimension: Int { file.dimension }
    /// Whitened factors ṽ, one row per catalog row (row-major N × f).
    public let whitened: Matrix
    /// The same factors by factor (f × N: row j holds every catalog row's ṽⱼ), on catalogs of
    /// at most `byFactorLimit` values, else nil. Every deck after a swipe scores the whole
    /// catalog's affinities: from this layout they are the in-order kernel's sums
    /// (`Matrix.multiplyTransposedInOrder`), the same bits on every CPU and about 0.6 of the
    /// instructions of OpenBLAS's sgemv over the rows (whose kernel differs between CPUs), with
    /// no zeroed output before it.
    let byFactor: Matrix?
    /// The most values (N × f) kept twice, once by factor: 16 MiB of Float (a 2,294-school
    /// catalog at f = 32 keeps 294 KiB). A larger catalog scores its affinities with sgemv.
    static let byFactorLimit = 1 << 22
    /// Catalog rows whose factor came from the feature embedding (or zero) because the file
    /// does not name them.
    public let rowsFromFeatures: Int
    /// File items not in the catalog (ignored: an item removed since the fit).
    public let unknownItems: Int
    /// A digest of the file's values, for snapshots and `SwipeEngine.modelVersion`.
    public let digest: String

    /// Resolves a file against a catalog.
    ///
    /// - Parameters:
    ///   - file: The fitted model.
    ///   - catalog: The catalog served.
    /// - Throws: `DataError` naming the field when the weight γ is not in
    ///   0…`FactorModelFile.maximumWeight` (a file built in code is not checked by the decoder,
    ///   and a γ past the Float range turns every score into NaN), when the embedding's features
    ///   are not the catalog's, or when fewer than half of the file's items are in the catalog (a model of
    ///   another catalog), or when the Gram matrix is not positive definite.
    /// - Complexity: O(N × f² + file size).
    public init(file: FactorModelFile, catalog: Catalog) throws(DataError) {
        try self.init(file: file, catalog: catalog, byFactorLimit: Self.byFactorLimit)
    }

    /// `init(file:catalog:)` keeping the by-factor copy up to `byFactorLimit` values (tests hold
    /// both ways of scoring to the same affinities).
    package init(file: FactorModelFile, catalog: Catalog, byFactorLimit: Int) throws(DataError) {
        func invalid(_ field: String, _ detail: String) -> DataError {
            DataError(.invalidValue, source: "factor model", field: field, detail: "\(field): \(detail)")
        }
        let f = file.dimension, n = catalog.count
        if let problem = FactorModelFile.weightProblem(file.weight) { throw invalid("weight", problem) }
        if let names = file.featureNames {
            let catalogNames = catalog.columns.map(\.name)
            guard names == catalogNames else {
                let first = (0..<min(names.count, catalogNames.count)).first { names[$0] != catalogNames[$0] } ?? min(names.count, catalogNames.count)
                throw invalid("feature_names", "are not this catalog's feature columns (first difference at \(first): file \(names.count) columns, catalog \(catalogNames.count))")
            }
        }
        var raw = [Double](repeating: 0, count: n * f)
        var named = [Bool](repeating: false, count: n)
        var unknown = 0
        for (id, factor) in zip(file.itemIDs, file.itemFactors) {
            guard let row = catalog.row(of: id) else { unknown += 1; continue }
            named[row] = true
            for j in 0..<f { raw[row * f + j] = factor[j] }
        }
        guard file.itemIDs.isEmpty || unknown * 2 <= file.itemIDs.count else {
            throw invalid("item_ids", "\(unknown) of \(file.itemIDs.count) items are not in this catalog (\(catalog.source)): fitted on another catalog")
        }
        var fromFeatures = 0
        let features = catalog.featureRows
        for row in 0..<n where !named[row] {
            fromFeatures += 1
            guard let embedding = file.featureEmbedding else { continue }
            for (c, e) in embedding.enumerated() {
                let x = Double(features[row, c])
                if x != 0 { for j in 0..<f { raw[row * f + j] += x * e[j] } }
            }
        }
        // G = VᵀV + λI over the catalog's rows, factored; then ṽ = R⁻¹v per row.
        var gram = gramMatrix(rows: raw, count: n, dimension: f)
        for j in 0..<f { gram[j * f + j] += file.regularization }
        let root: CholeskyFactor
        do { root = try CholeskyFactor(symmetric: gram, dimension: f) } catch {
            throw invalid("item_factors", "their Gram matrix is not positive definite (\(error.description))")
        }
        var whitened = [Float](repeating: 0, count: n * f)
        for row in 0..<n {
            let w = root.solveLower(Array(raw[(row * f)..<((row + 1) * f)]))
            for j in 0..<f { whitened[row * f + j] = Float(w[j]) }
        }
        // Finite inputs can still overflow (a factor of 1e200 squares to infinity): refuse the
        // file rather than serve NaN scores from it.
        guard whitened.allSatisfy(\.isFinite) else {
            throw invalid("item_factors", "values too large: the whitened factors overflow (keep factors within about ±1e15)")
        }
        self.file = file
        self.whitened = Matrix(rows: n, columns: f, elements: whitened)
        if n * f <= byFactorLimit {
            var transposed = [Float](repeating: 0, count: n * f)
            for row in 0..<n { for j in 0..<f { transposed[j * n + row] = whitened[row * f + j] } }
            byFactor = Matrix(rows: f, columns: n, elements: transposed)
        } else {
            byFactor = nil
        }
        rowsFromFeatures = fromFeatures
        unknownItems = unknown
        var hasher = FNV1a64()
        hasher.combine(String(decoding: file.jsonData(), as: UTF8.self))
        digest = hasher.hexDigest
    }

    /// The whitened factor of a row, in Double (what a swipe on it teaches).
    ///
    /// - Parameter row: A catalog row.
    /// - Returns: f values.
    public func vector(row: Int) -> [Double] { whitened.row(row).map(Double.init) }

    /// Every row's affinity for a student, `ṽᵢ·u'` (without the weight γ).
    ///
    /// - Parameter posterior: The student's collaborative posterior.
    /// - Returns: N affinities (all 0 before any swipe).
    /// - Complexity: O(N × f).
    public func affinities(of posterior: FactorPosterior) -> [Float] {
        precondition(posterior.dimension == dimension, "a posterior of \(posterior.dimension) factors, the model has \(dimension)")
        guard posterior.hasEvidence else { return [Float](repeating: 0, count: whitened.rows) }
        return products(posterior.mean.map(Float.init))
    }

    /// Every row's affinity for a student, `ṽᵢ·u'`, times the weight γ, added to `scores`: each
    /// score plus its `terms(of:)` value.
    ///
    /// - Parameters:
    ///   - posterior: The student's collaborative posterior.
    ///   - scores: N raw scores, incremented.
    /// - Complexity: O(N × f).
    public func addScores(of posterior: FactorPosterior, to scores: inout [Float]) {
        precondition(posterior.dimension == dimension && scores.count == whitened.rows, "scores for \(whitened.rows) rows, f = \(dimension)")
        guard let terms = terms(of: posterior) else { return }
        for i in scores.indices { scores[i] += terms[i] }
    }

    /// Every row's collaborative term, γ·(ṽᵢ·u') summed as Σⱼ (γu'ⱼ)·ṽᵢⱼ, or nil when it is 0
    /// everywhere (no swipe yet, or γ = 0).
    ///
    /// - Parameter posterior: The student's collaborative posterior.
    /// - Returns: N terms, or nil.
    /// - Complexity: O(N × f).
    package func terms(of posterior: FactorPosterior) -> [Float]? {
        precondition(posterior.dimension == dimension, "a posterior of \(posterior.dimension) factors, the model has \(dimension)")
        guard posterior.hasEvidence, file.weight > 0 else { return nil }
        let gamma = Float(file.weight)
        return products(posterior.mean.map { gamma * Float($0) })
    }

    /// `ṽᵢ·x` for every row: in order from the by-factor copy, else one `sgemv`.
    private func products(_ x: [Float]) -> [Float] {
        var y: [Float] = []
        if let byFactor {
            byFactor.multiplyTransposedInOrder(x, into: &y)
        } else {
            y = [Float](repeating: 0, count: whitened.rows)
            whitened.multiply(x, into: &y)
        }
        return y
    }
}
