import Foundation
import Synchronization
import SwipeRankNumerics

/// What a user of any catalog tells the engine: where they are (optional), how far they would
/// go, and stated preferences that seed the cold start.
///
/// JSON (snake_case, every field optional):
///
///     {"home": {"latitude": 40.7, "longitude": -74.0}, "max_distance_miles": 5,
///      "preferences": {"price": -1.0, "cuisine=thai": 0.8, "quality": 0.5}}
///
/// A preference key is a feature column name (`price`, `cuisine=thai`), an explanation group
/// (every value column of the group: `quality`), or `distance` (the distance term).
public struct ItemProfile: Sendable, Hashable, Codable {
    /// Home, if known: enables the distance term and the geographic bands.
    public var home: GeoPoint?
    /// The preferred maximum distance in miles (default 500).
    public var maxDistanceMiles: Double
    /// Stated preference weights, added to the cold start (finite, in −5…5).
    public var preferences: [String: Double]

    /// Creates a profile.
    ///
    /// - Parameters:
    ///   - home: Home location, or nil.
    ///   - maxDistanceMiles: Preferred maximum distance.
    ///   - preferences: Column, group or `distance` → weight.
    public init(home: GeoPoint? = nil, maxDistanceMiles: Double = 500, preferences: [String: Double] = [:]) {
        self.home = home
        self.maxDistanceMiles = maxDistanceMiles
        self.preferences = preferences
    }

    enum CodingKeys: String, CodingKey, CaseIterable { case home, maxDistanceMiles = "max_distance_miles", preferences }

    /// Decodes a profile, filling defaults for absent fields.
    ///
    /// - Parameter decoder: The decoder.
    /// - Throws: `DecodingError` for wrong types or unknown keys; `DataError` for a coordinate
    ///   out of range.
    public init(from decoder: any Decoder) throws {
        try decoder.rejectUnknownKeys(CodingKeys.self)
        let c = try decoder.container(keyedBy: CodingKeys.self)
        home = try c.decodeIfPresent(GeoPoint.self, forKey: .home)
        maxDistanceMiles = try c.decodeIfPresent(Double.self, forKey: .maxDistanceMiles) ?? 500
        preferences = try c.decodeIfPresent([String: Double].self, forKey: .preferences) ?? [:]
    }

    /// Parses and validates a profile from JSON.
    ///
    /// - Parameters:
    ///   - json: The JSON bytes.
    ///   - source: The name shown in errors (e.g. the file path).
    /// - Returns: A profile with valid ranges (keys are checked by `ItemMatcher.student(_:)`).
    /// - Throws: `DataError` naming the field: malformed JSON, a wrong type, a value out of range.
    public static func decode(json: Data, source: String) throws(DataError) -> ItemProfile {
        let profile = try DataError.decodeProfile(ItemProfile.self, json: json, source: source)
        try profile.validate(source: source)
        return profile
    }

    /// Checks ranges (the preference keys are checked against a catalog by `ItemMatcher`).
    ///
    /// - Parameter source: The name shown in errors.
    /// - Throws: `DataError` `.outOfRange` naming the field.
    public func validate(source: String = "profile") throws(DataError) {
        guard maxDistanceMiles.isFinite && maxDistanceMiles > 0 && maxDistanceMiles <= 25_000 else {
            throw DataError(.outOfRange, source: source, field: "max_distance_miles",
                            detail: "max_distance_miles: must be a number of miles in (0, 25000], got \(maxDistanceMiles)")
        }
        guard preferences.count <= 1_024 else {
            throw DataError(.outOfRange, source: source, field: "preferences",
                            detail: "preferences: at most 1024 keys, got \(preferences.count)")
        }
        for (key, value) in preferences.sorted(by: { $0.key < $1.key }) where !(value.isFinite && abs(value) <= 5) {
            let field = "preferences.\(DataError.truncated(key))"
            throw DataError(.outOfRange, source: source, field: field, detail: "\(field): must be a finite weight in -5...5, got \(value)")
        }
    }
}

/// An `ItemProfile` resolved against a catalog: the `distance` term over every item.
public struct ItemUser: MatchedStudent {
    /// The profile.
    public let profile: ItemProfile
    /// One term, `distance` (`GeoBand.distanceFit`; 0 without a home or for an item without a
    /// location).
    public let terms: RelativeTerms
    /// Miles to each item (NaN without an item location); empty without a home.
    public let distances: StudentDistances
    /// The preferred maximum distance when the user has a home.
    public var preferredDistanceMiles: Double? { profile.home == nil ? nil : profile.maxDistanceMiles }
}

/// The matcher for any catalog loaded through an `ItemSchema`: restaurants, flats, films.
///
/// The engine's learning, probes, geographic mixing (when items and users have locations),
/// pools, snapshots and the offline evaluation all work through it. What it does not have is
/// domain knowledge: no curated named weights (every column is reported by name), generic
/// explanations, and no feedback questions.
///
/// - Terms: one, `distance` (see `ItemUser`).
/// - Cold start: 0 everywhere, `distanceWeight` on the distance term for users with a home,
///   plus the profile's stated preferences.
/// - Calibration: offset 0, scale 1 by default, so an item with a neutral score is a 50% match.
///
///     let schema = try ItemSchema.load(contentsOfFile: "restaurants.schema.json")
///     let catalog = try Catalog(table: CSVTable(contentsOfFile: "restaurants.csv"), schema: schema)
///     let engine = SwipeEngine(matcher: ItemMatcher(catalog: catalog))
public struct ItemMatcher: Matcher {
    /// The items.
    public let catalog: Catalog
    /// Raw score → match score.
    public let calibration: MatchCalibration
    /// The cold-start weight of the distance term for users with a home.
    public let distanceWeight: Float
    /// A text attribute of regions for the discovery novelty bonus, or nil.
    public let regionAttribute: String?
    let columnIndex: [String: Int]
    /// Per feature column: the median of its value over items whose value was observed (not
    /// imputed); per numeric attribute: the median of its raw values. "Higher … than most" is
    /// stated against these.
    let columnMedians: [Float]
    let attributeMedians: [Double?]
    /// The named weights' names as JSON sorts them, and each one's source: a feature column
    /// j < d, or d for the distance term (which wins over a column of that name, as in
    /// `namedWeights(_:)`).
    let namedWeightOrder: (keys: NamedWeightKeys, sources: [Int])

    /// Creates a matcher.
    ///
    /// - Parameters:
    ///   - catalog: The items.
    ///   - calibration: Raw score → match score (default offset 0, scale 1).
    ///   - distanceWeight: Cold-start weight of closeness for users with a home.
    ///   - regionAttribute: A text attribute naming each item's region, or nil.
    public init(catalog: Catalog, calibration: MatchCalibration = MatchCalibration(offset: 0, scale: 1),
                distanceWeight: Float = 1, regionAttribute: String? = nil) {
        precondition(regionAttribute.map { catalog.textAttribute(named: $0) != nil } ?? true,
                     "regionAttribute must name a text attribute of the catalog")
        self.catalog = catalog
        self.calibration = calibration
        self.distanceWeight = distanceWeight
        self.regionAttribute = regionAttribute
        let columnIndex = Dictionary(uniqueKeysWithValues: catalog.columns.enumerated().map { ($1.name, $0) })
        self.columnIndex = columnIndex
        // Derived once per catalog (and stored by its cache), not per matcher.
        let medians = catalog.medians
        (columnMedians, attributeMedians) = (medians.columns, medians.attributes)
        var source = columnIndex
        source["distance"] = catalog.dimension
        let keys = NamedWeightKeys(source.keys)
        namedWeightOrder = (keys, keys.names.map { source[$0]! })
    }

    /// `["distance"]`.
    public var termNames: [String] { ["distance"] }

    /// The distance term alone, from the user's home (if any) and `maxDistanceMiles`: a large
    /// catalog's decks can retrieve candidates through the engine's index.
    ///
    /// - Parameter student: The user.
    /// - Returns: The shape of the user's `distance` term.
    public func distanceTermShape(of student: ItemUser) -> DistanceTermShape? {
        DistanceTermShape(home: student.profile.home, preferredMiles: student.profile.maxDistanceMiles)
    }

    /// Validates a profile (ranges, and that every preference key names a column, a group or
    /// `distance`) and computes the distance term.
    ///
    /// - Parameter profile: The profile.
    /// - Returns: The resolved user.
    /// - Throws: `DataError` `.outOfRange` or `.unknownReference` naming the field.
    /// - Complexity: O(N).
    public func student(_ profile: ItemProfile) throws(DataError) -> ItemUser {
        try student(profile, computingOnAccess: false)
    }

    /// Validates a profile and resolves it with its distances and distance term computed when
    /// read (`StudentDistances(computingFrom:over:)`), or all now.
    ///
    /// - Parameters:
    ///   - profile: The profile.
    ///   - computingOnAccess: Whether to compute each item's values when read.
    /// - Returns: The resolved user; the same values either way.
    /// - Throws: `DataError` `.outOfRange` or `.unknownReference` naming the field.
    /// - Complexity: O(1) computing on access (beyond the profile's keys), else O(N).
    public func student(_ profile: ItemProfile, computingOnAccess: Bool) throws(DataError) -> ItemUser {
        try profile.validate()
        for key in profile.preferences.keys.sorted() where columnIndex[key] == nil && key != "distance" && !catalog.groups.contains(key) {
            let field = "preferences.\(DataError.truncated(key))"
            throw DataError(.unknownReference, source: "profile", field: field,
                            detail: "\(field): not a feature column, group or \"distance\" of \(catalog.source)")
        }
        if computingOnAccess {
            guard let home = profile.home else {
                return ItemUser(profile: profile, terms: RelativeTerms(names: termNames, zeroOver: catalog.count), distances: .none)
            }
            let distances = StudentDistances(computingFrom: home, over: catalog)
            return ItemUser(profile: profile, terms: RelativeTerms(name: termNames[0], distanceFitOf: distances, preferred: Float(profile.maxDistanceMiles)),
                            distances: distances)
        }
        var values = Matrix(rows: 1, columns: catalog.count)
        var distances: [Float] = []
        if let home = profile.home {
            catalog.distancesMiles(from: home, into: &distances)
            let p = Float(profile.maxDistanceMiles)
            for i in 0..<catalog.count where !distances[i].isNaN {
                values[0, i] = GeoBand.distanceFit(miles: distances[i], preferred: p)
            }
        }
        return ItemUser(profile: profile, terms: RelativeTerms(names: termNames, values: values), distances: StudentDistances(distances))
    }

    /// The cold start: `distanceWeight` on the distance term for users with a home, plus each
    /// stated preference (a group's weight goes to each of its value and external columns).
    ///
    /// - Parameter student: The user.
    /// - Returns: d feature weights and the distance weight.
    public func coldStartWeights(for student: ItemUser) -> PreferenceWeights {
        var features = [Float](repeating: 0, count: catalog.dimension)
        var distance: Float = student.profile.home == nil ? 0 : distanceWeight
        for (key, value) in student.profile.preferences {
            if key == "distance" {
                distance += Float(value)
            } else if let j = columnIndex[key] {
                features[j] += Float(value)
            } else if let g = catalog.groups.firstIndex(of: key) {
                for j in 0..<catalog.dimension where catalog.groupOfColumn[j] == g
                    && (catalog.columns[j].role == .value || catalog.columns[j].role == .external) {
                    features[j] += Float(value)
                }
            }
        }
        return PreferenceWeights(features: features, terms: [distance])
    }

    /// The card: summary, match score, grade, up to three generic explanations, the distance.
    ///
    /// - Parameters:
    ///   - row: The item.
    ///   - raw: Its raw score.
    ///   - student: The user.
    ///   - weights: The weights that scored it.
    ///   - isProbe: Whether it is a probe.
    /// - Returns: The card (`matchedMajors` is empty: majors are a school notion).
    /// - Complexity: O(d).
    public func card(row: Int, raw: Float, student: ItemUser, weights: PreferenceWeights, isProbe: Bool = false) -> Recommendation {
        card(row: row, raw: raw, student: student, isProbe: isProbe,
             explanations: explanations(row: row, student: student, weights: weights))
    }

    /// The card and its best `ExplanationVariety.candidates` reasons, ranked once (the card
    /// shows the first three).
    ///
    /// - Parameters: As `card(row:raw:student:weights:isProbe:)`.
    /// - Returns: The card and its candidate reasons.
    /// - Complexity: O(d).
    public func cardWithCandidates(row: Int, raw: Float, student: ItemUser, weights: PreferenceWeights,
                                   isProbe: Bool) -> (card: Recommendation, candidates: [String]?) {
        let reasons = explanations(row: row, student: student, weights: weights, limit: ExplanationVariety.candidates)
        let shown = reasons.count <= 3 ? reasons : Array(reasons[..<3])
        return (card(row: row, raw: raw, student: student, isProbe: isProbe, explanations: shown), reasons)
    }

    /// The card without explanations, none ranked (a deck in a shape that shows none).
    ///
    /// - Parameters: As `card(row:raw:student:weights:isProbe:)`.
    /// - Returns: That card with no explanations.
    public func unexplainedCard(row: Int, raw: Float, student: ItemUser, weights: PreferenceWeights, isProbe: Bool) -> Recommendation {
        card(row: row, raw: raw, student: student, isProbe: isProbe, explanations: [])
    }

    /// The card's match score alone (`MatchCalibration.cardMatchScore(raw:)`, what `card` shows).
    ///
    /// - Parameters: As `card(row:raw:student:weights:isProbe:)`, without `isProbe`.
    /// - Returns: The rounded match score.
    public func cardMatchScore(row: Int, raw: Float, student: ItemUser, weights: PreferenceWeights) -> Double {
        calibration.cardMatchScore(raw: Double(raw))
    }

    private func card(row: Int, raw: Float, student: ItemUser, isProbe: Bool, explanations: [String]) -> Recommendation {
        let match = calibration.cardMatchScore(raw: Double(raw))
        let distance = row < student.distances.count && !student.distances[row].isNaN
            ? (Double(student.distances[row]) * 10).rounded() / 10 : nil
        return Recommendation(item: catalog.summary(row: row), matchScore: match, grade: Grade(matchScore: match),
                              explanations: explanations, isProbe: isProbe, matchedMajors: [], distance: distance)
    }

    /// Up to three reasons from the largest positive group contributions (≥ 0.05), each
    /// stating a fact of the item that pushed its score up:
    ///
    /// - a category column: `cuisine: thai`;
    /// - a flag the item has: its label (`Comedy`);
    /// - a value column: `Lower price than most (12)` / `Higher rating than most (4.7)`: the raw
    ///   value against the median of the observed raw values when the source column is a
    ///   numeric attribute, else the column's value against its median; only when the item
    ///   sits on the same side of the median as of the mean (the side its contribution comes
    ///   from), never for an imputed gap;
    /// - the distance term: `2.5 miles from home`, only within the preferred distance.
    ///
    /// Within a group the column with the largest positive contribution speaks.
    ///
    /// - Parameters:
    ///   - row: The item.
    ///   - student: The user.
    ///   - weights: The weights that scored it.
    /// - Returns: At most three sentences.
    /// - Complexity: O(d).
    public func explanations(row: Int, student: ItemUser, weights: PreferenceWeights) -> [String] {
        explanations(row: row, student: student, weights: weights, limit: 3)
    }

    /// The best `limit` reasons for an item, best first, by the rule of
    /// `explanations(row:student:weights:)` (a deck draws on the ones after the third when its
    /// first three repeat across the deck: `Matcher.varyExplanations`).
    ///
    /// - Parameters:
    ///   - row: The item.
    ///   - student: The user.
    ///   - weights: The weights that scored it.
    ///   - limit: The most sentences.
    /// - Returns: At most `limit` sentences.
    /// - Complexity: O(d).
    public func explanations(row: Int, student: ItemUser, weights: PreferenceWeights, limit: Int) -> [String] {
        let values = catalog.groupContributions(row: row, weights: weights, terms: student.terms)
        let names = catalog.groups + termNames
        let ranked = values.indices.filter { values[$0] >= 0.05 }
            .sorted { values[$0] > values[$1] || (values[$0] == values[$1] && names[$0] < names[$1]) }
        var result: [String] = []
        let features = catalog.featureRows
        for g in ranked where result.count < limit {
            if g >= catalog.groups.count {
                if let p = student.preferredDistanceMiles, row < student.distances.count, !student.distances[row].isNaN,
                   Double(student.distances[row]) <= p {
                    result.append("\(Self.format(Double(student.distances[row]))) miles from home")
                }
                continue
            }
            var best: Int?, bestValue: Float = 0
            for j in 0..<catalog.dimension where catalog.groupOfColumn[j] == g {
                let c = weights.features[j] * features[row, j]
                if c > bestValue { best = j; bestValue = c }
            }
            guard let j = best, let sentence = explanation(column: j, row: row) else { continue }
            result.append(sentence)
        }
        return result
    }

    func explanation(column j: Int, row: Int) -> String? {
        let column = catalog.columns[j]
        switch column.role {
        case .category:
            return "\(column.source): \(column.category ?? column.name)"
        case .value:
            if let indicator = columnIndex["\(column.name)_missing"], catalog.featureRows[row, indicator] == 1 { return nil }
            let x = catalog.featureRows[row, j], median = columnMedians[j]
            // Above the mean (x > 0) but below the median, or the reverse: "than most" would
            // not hold on the side the contribution comes from.
            guard x != 0, x != median, (x > 0) == (x > median) else { return nil }
            if let a = catalog.numericAttribute(named: column.source), let raw = catalog.numericValues[a][row],
               let rawMedian = attributeMedians[a] {
                guard raw != rawMedian else { return nil }
                return "\(raw > rawMedian ? "Higher" : "Lower") \(column.source) than most (\(Self.format(raw)))"
            }
            return "\(x > 0 ? "Higher" : "Lower") \(column.name) than most"
        case .external:
            return "\(catalog.featureRows[row, j] > 0 ? "High" : "Low") \(column.name)"
        case .flag:
            // Only a property the item has can be why it scored higher.
            return catalog.featureRows[row, j] == 1 ? column.category ?? column.name : nil
        case .missingIndicator:
            return nil
        }
    }

    /// Every weight by name: each feature column, then `distance`, rounded to 4 decimals.
    ///
    /// - Parameter weights: The model's weights.
    /// - Returns: Name → weight.
    public func namedWeights(_ weights: PreferenceWeights) -> [String: Double] {
        namedWeightList(weights).dictionary
    }

    /// The named weights listed, the names sorted once (no dictionary built): what
    /// `namedWeights(_:)` returns as a dictionary.
    ///
    /// - Parameter weights: The model's weights.
    /// - Returns: The same names and values.
    public func namedWeightList(_ weights: PreferenceWeights) -> NamedWeightList {
        let d = catalog.dimension
        return NamedWeightList(order: namedWeightOrder.keys, values: namedWeightOrder.sources.map { j in
            (Double(j < d ? weights.features[j] : weights.terms[0]) * 10_000).rounded() / 10_000
        })
    }

    /// None: feedback questions need domain knowledge (see `SchoolMatcher`).
    ///
    /// - Parameters:
    ///   - row: The item.
    ///   - action: The swipe.
    ///   - student: The user.
    /// - Returns: An empty list.
    public func feedbackOptions(row: Int, action: SwipeAction, student: ItemUser) -> [FeedbackOption] { [] }

    /// Zero: no option is ever offered.
    ///
    /// - Parameters:
    ///   - option: The answer.
    ///   - row: The item.
    /// - Returns: d + 1 zeros.
    public func feedbackAdjustment(for option: FeedbackOption, row: Int) -> [Double] {
        [Double](repeating: 0, count: catalog.dimension + 1)
    }

    static func format(_ x: Double) -> String {
        x == x.rounded() && abs(x) < 1e9 ? String(Int(x)) : String(format: "%.1f", x)
    }
}
