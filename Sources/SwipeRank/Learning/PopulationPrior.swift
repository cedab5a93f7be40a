import Foundation
import SwipeRankNumerics

/// What the population taught, for students who have not swiped yet: a shift of the cold-start
/// weights and an effect per item, fitted from an interaction log (`swiperank fit-prior`) and
/// loaded by the engine (`SwipeEngine.withPopulation(_:)`).
///
/// - **Weight shift** (empirical Bayes): the average over the log's students of how far their
///   posterior mean moved from their cold start. A new student's prior mean is the cold start
///   plus this shift. Each student's own shift is already shrunk toward the cold start, so the
///   average is a conservative estimate of the population's.
/// - **Item effects**: per item, in raw-score units, the part of its like rate that the
///   students' own models did not explain — one Newton step of a per-item intercept from 0 with
///   a Gaussian prior (`itemPrecision` pseudo-observations), so an item seen a few times gets
///   an effect near 0. Added to the item's raw score for every student (ranking, match score,
///   and the prediction each swipe is learned against).
/// - **Exposure effects** (optional, format version 2): per item, how often the population
///   chose to swipe it at all — `β × scale × (log((n + ½)/(S + 1)) − its mean over items)` for an
///   item swiped by n of the log's S students. Only for logs where people chose what to swipe
///   (ratings, visits), never for logs the engine served (there exposure is the engine's own
///   choice, and ranking by it would feed back on itself). Added to the ranking only: the match
///   score and the prediction each swipe is learned against stay "will this student like the
///   card shown", which exposure does not answer.
///
/// The file is versioned JSON and names the catalog it was fitted on (its fingerprint) and the
/// model's layout, so it is never applied to another catalog. Sessions learned under one prior
/// are restored only under the same one (snapshots carry its digest).
public struct PopulationPrior: Sendable, Hashable, Codable {
    /// The newest file format version this code writes and reads: 1 without exposure effects
    /// (the first format, still written so earlier priors keep their digests), 2 with them.
    public static let currentVersion = 2
    /// The format's version of this prior: 2 when it has exposure effects, else 1.
    public let version: Int
    /// `Catalog.fingerprint` of the catalog it was fitted on.
    public let catalogFingerprint: String
    /// The number of feature weights d.
    public let featureCount: Int
    /// The student terms' names, in order (k of them).
    public let termNames: [String]
    /// The shift of the prior mean over `[features, terms]` (d + k values).
    public let weightShift: [Double]
    /// One effect per catalog row, in raw-score units.
    public let itemEffects: [Double]
    /// Students in the log it was fitted on.
    public let students: Int
    /// Swipes in that log.
    public let swipes: Int
    /// The prior precision of an item effect, in swipes (the shrinkage).
    public let itemPrecision: Double
    /// β, the weight of the exposure term (0: none; then `exposureEffects` is nil).
    public let exposureWeight: Double
    /// One exposure effect per catalog row, in raw-score units, added to the ranking only; nil
    /// without an exposure term.
    public let exposureEffects: [Double]?

    /// Creates a prior (normally through the fit).
    ///
    /// - Parameters:
    ///   - catalogFingerprint: The catalog's fingerprint.
    ///   - featureCount: d.
    ///   - termNames: The k term names.
    ///   - weightShift: d + k values.
    ///   - itemEffects: One per catalog row.
    ///   - students: Students fitted on.
    ///   - swipes: Swipes fitted on.
    ///   - itemPrecision: The item effects' shrinkage, > 0.
    ///   - exposureWeight: β ≥ 0; 0 means no exposure term.
    ///   - exposureEffects: One per item when β > 0, else nil.
    public init(catalogFingerprint: String, featureCount: Int, termNames: [String], weightShift: [Double], itemEffects: [Double],
                students: Int, swipes: Int, itemPrecision: Double, exposureWeight: Double = 0, exposureEffects: [Double]? = nil) {
        precondition(exposureWeight >= 0 && exposureWeight.isFinite && (exposureWeight > 0) == (exposureEffects != nil),
                     "exposure effects exactly when the exposure weight is positive")
        version = exposureEffects == nil ? 1 : 2
        self.catalogFingerprint = catalogFingerprint
        self.featureCount = featureCount
        self.termNames = termNames
        self.weightShift = weightShift
        self.itemEffects = itemEffects
        self.students = students
        self.swipes = swipes
        self.itemPrecision = itemPrecision
        self.exposureWeight = exposureWeight
        self.exposureEffects = exposureEffects
    }

    private enum CodingKeys: String, CodingKey, CaseIterable {
        case version, catalogFingerprint = "catalog_fingerprint", featureCount = "feature_count", termNames = "term_names"
        case weightShift = "weight_shift", itemEffects = "item_effects", students, swipes, itemPrecision = "item_precision"
        case exposureWeight = "exposure_weight", exposureEffects = "exposure_effects"
    }

    /// Decodes a prior and checks it is one: a known version, d + k finite shifts, finite
    /// effects, non-negative counts, exposure effects (one per item effect, β > 0) exactly in
    /// version 2. Whether it fits a catalog is checked when an engine loads it.
    ///
    /// - Parameter decoder: The decoder.
    /// - Throws: `DecodingError` naming the field.
    public init(from decoder: any Decoder) throws {
        try decoder.rejectUnknownKeys(CodingKeys.self)
        let c = try decoder.container(keyedBy: CodingKeys.self)
        func fail(_ key: CodingKeys, _ detail: String) -> DecodingError {
            DecodingError.dataCorruptedError(forKey: key, in: c, debugDescription: detail)
        }
        version = try c.decode(Int.self, forKey: .version)
        guard (1...Self.currentVersion).contains(version) else {
            throw fail(.version, "unknown population prior version \(version) (this build reads 1…\(Self.currentVersion))")
        }
        catalogFingerprint = try c.decode(String.self, forKey: .catalogFingerprint)
        featureCount = try c.decode(Int.self, forKey: .featureCount)
        termNames = try c.decode([String].self, forKey: .termNames)
        weightShift = try c.decode([Double].self, forKey: .weightShift)
        itemEffects = try c.decode([Double].self, forKey: .itemEffects)
        students = try c.decode(Int.self, forKey: .students)
        swipes = try c.decode(Int.self, forKey: .swipes)
        itemPrecision = try c.decode(Double.self, forKey: .itemPrecision)
        guard (0...4_096).contains(featureCount) else { throw fail(.featureCount, "must be in 0...4096, got \(featureCount)") }
        guard weightShift.count == featureCount + termNames.count, weightShift.allSatisfy(\.isFinite) else {
            throw fail(.weightShift, "must hold \(featureCount + termNames.count) finite values (features + terms), has \(weightShift.count)")
        }
        guard itemEffects.allSatisfy(\.isFinite) else { throw fail(.itemEffects, "must be finite") }
        guard students >= 0, swipes >= 0 else { throw fail(.students, "counts must not be negative") }
        guard itemPrecision.isFinite, itemPrecision > 0 else { throw fail(.itemPrecision, "must be positive and finite") }
        if version == 1 {
            // Version 1 has no exposure term; a file that mixes the two is not one the fit wrote.
            for key in [CodingKeys.exposureWeight, .exposureEffects] where c.contains(key) {
                throw fail(key, "is a version 2 field (this file says version 1)")
            }
            exposureWeight = 0
            exposureEffects = nil
        } else {
            exposureWeight = try c.decode(Double.self, forKey: .exposureWeight)
            guard exposureWeight.isFinite, exposureWeight > 0 else { throw fail(.exposureWeight, "must be positive and finite") }
            let effects = try c.decode([Double].self, forKey: .exposureEffects)
            guard effects.count == itemEffects.count, effects.allSatisfy(\.isFinite) else {
                throw fail(.exposureEffects, "must hold \(itemEffects.count) finite values (one per item effect), has \(effects.count)")
            }
            exposureEffects = effects
        }
    }

    /// Encodes the prior (snake_case keys).
    ///
    /// - Parameter encoder: The encoder.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(version, forKey: .version)
        try c.encode(catalogFingerprint, forKey: .catalogFingerprint)
        try c.encode(featureCount, forKey: .featureCount)
        try c.encode(termNames, forKey: .termNames)
        try c.encode(weightShift, forKey: .weightShift)
        try c.encode(itemEffects, forKey: .itemEffects)
        try c.encode(students, forKey: .students)
        try c.encode(swipes, forKey: .swipes)
        try c.encode(itemPrecision, forKey: .itemPrecision)
        if let exposureEffects {
            try c.encode(exposureWeight, forKey: .exposureWeight)
            try c.encode(exposureEffects, forKey: .exposureEffects)
        }
    }

    /// Parses a prior file.
    ///
    /// - Parameters:
    ///   - json: The bytes.
    ///   - source: The name shown in errors.
    /// - Returns: The prior.
    /// - Throws: `DataError` with line:column for malformed JSON, the field for a wrong or
    ///   invalid value.
    public static func decode(json: Data, source: String) throws(DataError) -> PopulationPrior {
        try JSONInput.decode(PopulationPrior.self, from: json, source: source)
    }

    /// The prior as JSON (sorted keys, so the same fit writes the same bytes).
    ///
    /// - Returns: The bytes.
    public func jsonData() -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        // Every value is finite (checked on creation and decoding), so encoding cannot fail.
        return (try? encoder.encode(self)) ?? Data()
    }

    /// A digest of every value (bit patterns), for snapshots and `SwipeEngine.modelVersion`.
    ///
    /// - Complexity: O(N + D).
    public var digest: String {
        var hasher = FNV1a64()
        hasher.combine(UInt64(version))
        hasher.combine(catalogFingerprint)
        hasher.combine(UInt64(featureCount))
        for name in termNames { hasher.combine(name + "|") }
        for v in weightShift { hasher.combine(v.bitPattern) }
        for v in itemEffects { hasher.combine(v.bitPattern) }
        hasher.combine(itemPrecision.bitPattern)
        // Nothing more for version 1, so priors written before version 2 keep their digests.
        if let exposureEffects {
            hasher.combine(exposureWeight.bitPattern)
            for v in exposureEffects { hasher.combine(v.bitPattern) }
        }
        return hasher.hexDigest
    }
}
