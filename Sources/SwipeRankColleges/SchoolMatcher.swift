import SwipeRank
import SwipeRankNumerics

/// Scores every school for a student and turns the best into cards: match score, grade,
/// explanations, matched majors and distance.
///
/// Immutable and `Sendable`: build one at start-up and share it between all requests.
///
///     let schools = try SchoolCatalog(schoolsPath: "datasets/schools.csv",
///                                     majorsPath: "datasets/school_majors.csv")
///     let matcher = SchoolMatcher(schools: schools)
///     let response = try matcher.recommend(profile: profile, count: 10)
public struct SchoolMatcher: Matcher {
    /// The catalog.
    public let schools: SchoolCatalog
    /// The items: `schools.catalog`.
    public var catalog: Catalog { schools.catalog }
    /// The student-relative terms of `termBasis` (`MatchStudent.termNames(_:)`).
    public var termNames: [String] { MatchStudent.termNames(termBasis) }
    /// Which student-relative terms students get.
    public let termBasis: SchoolTermBasis
    /// `terms=expanded` with the expanded basis (it changes the model), nil with the standard one.
    public var modelTag: String? { termBasis == .standard ? nil : "terms=\(termBasis.rawValue)" }
    /// `region`: discovery cards from a region not shown yet get a novelty bonus.
    public var regionAttribute: String? { "region" }
    /// How raw scores become match scores.
    public let calibration: MatchCalibration
    let columnIndex: [String: Int]
    /// The named weights resolved to column and term indices once: they are computed on every
    /// swipe, and looking names up (and building `locale=…` strings) then cost several µs.
    /// In the order JSON sorts their names (`namedWeightKeys`).
    let namedWeightPlan: [NamedWeight]
    /// The plan's names and their JSON keys.
    let namedWeightKeys: NamedWeightKeys
    /// Explanations resolved once (sentence kinds, attributes, per-school sentences): a deck
    /// explains every card it serves.
    let explanationPlan: ExplanationPlan

    /// Creates a matcher.
    ///
    /// - Parameters:
    ///   - schools: The catalog.
    ///   - calibration: Raw score → match score.
    ///   - termBasis: Which student-relative terms (the standard four unless told).
    public init(schools: SchoolCatalog, calibration: MatchCalibration = .default, termBasis: SchoolTermBasis = .standard) {
        self.schools = schools
        self.calibration = calibration
        self.termBasis = termBasis
        let columnIndex = Dictionary(uniqueKeysWithValues: schools.catalog.columns.enumerated().map { ($1.name, $0) })
        self.columnIndex = columnIndex
        let plan = NamedWeight.schoolPlan(columnIndex: columnIndex)
        let keys = NamedWeightKeys(plan.map(\.name))
        let entryOf = Dictionary(uniqueKeysWithValues: plan.map { ($0.name, $0) })  // the names are distinct
        self.namedWeightPlan = keys.names.map { entryOf[$0]! }
        self.namedWeightKeys = keys
        self.explanationPlan = ExplanationPlan(schools: schools, termNames: MatchStudent.termNames(termBasis))
    }

    /// Resolves a profile against the catalog (majors, relative terms).
    ///
    /// - Parameter profile: The profile.
    /// - Returns: The resolved student.
    /// - Throws: `DataError` for an invalid profile or an unknown major.
    /// - Complexity: O(N).
    public func student(_ profile: StudentProfile) throws(DataError) -> MatchStudent {
        try profile.validate()
        return try MatchStudent(profile: profile, schools: schools, basis: termBasis)
    }

    /// The card for one school.
    ///
    /// - Parameters:
    ///   - row: The school's row.
    ///   - raw: Its raw score.
    ///   - student: The student.
    ///   - weights: The weights that scored it.
    ///   - isProbe: Whether it is served as a probe.
    /// - Returns: The card.
    /// - Complexity: O(d + k + the student's majors).
    public func card(row: Int, raw: Float, student: MatchStudent, weights: PreferenceWeights,
                     isProbe: Bool = false) -> Recommendation {
        card(row: row, raw: raw, student: student, isProbe: isProbe,
             explanations: explanations(row: row, student: student, weights: weights))
    }

    /// Starts loading what these schools' cards read beyond their feature rows and summaries:
    /// their sentences, the student's major bits and distances, and the cost inputs of their
    /// budget reasons.
    ///
    /// - Parameters:
    ///   - rows: Schools.
    ///   - student: The student.
    public func prefetchCards(rows: [Int], student: MatchStudent) {
        explanationPlan.sentences.rows.prefetch(rows: rows)
        student.majorMatches.prefetch(rows: rows)
        student.distances.prefetch(items: rows)
        schools.baseCost.prefetch(rows: rows)
        schools.outOfStateSurcharge.prefetch(rows: rows)
        schools.states.prefetch(rows: rows)
    }

    /// The card and its best `ExplanationVariety.candidates` reasons, ranked once: the card
    /// shows the first three (`explanations(row:student:weights:)` is the first three of
    /// `explanations(row:student:weights:limit:)` for any larger limit).
    ///
    /// - Parameters: As `card(row:raw:student:weights:isProbe:)`.
    /// - Returns: The card and its candidate reasons.
    /// - Complexity: O(d + k + the student's majors).
    public func cardWithCandidates(row: Int, raw: Float, student: MatchStudent, weights: PreferenceWeights,
                                   isProbe: Bool) -> (card: Recommendation, candidates: [String]?) {
        let (card, candidates, _) = cardWithKeyedCandidates(row: row, raw: raw, student: student, weights: weights, isProbe: isProbe)
        return (card, candidates)
    }

    /// `cardWithCandidates(row:raw:student:weights:isProbe:)` with the candidates' variety keys,
    /// written with the sentences (`keyedExplanations`).
    ///
    /// - Parameters: As `card(row:raw:student:weights:isProbe:)`.
    /// - Returns: The card, its candidate reasons and their keys.
    public func cardWithKeyedCandidates(row: Int, raw: Float, student: MatchStudent, weights: PreferenceWeights,
                                        isProbe: Bool) -> (card: Recommendation, candidates: [String]?, keys: [ExplanationVariety.Key]?) {
        let (reasons, keys) = keyedExplanations(row: row, student: student, weights: weights, limit: ExplanationVariety.candidates)
        let shown = reasons.count <= 3 ? reasons : Array(reasons[..<3])
        return (card(row: row, raw: raw, student: student, isProbe: isProbe, explanations: shown), reasons, keys)
    }

    /// The card without explanations, none ranked (a deck in a shape that shows none).
    ///
    /// - Parameters: As `card(row:raw:student:weights:isProbe:)`.
    /// - Returns: That card with no explanations.
    public func unexplainedCard(row: Int, raw: Float, student: MatchStudent, weights: PreferenceWeights, isProbe: Bool) -> Recommendation {
        card(row: row, raw: raw, student: student, isProbe: isProbe, explanations: [])
    }

    /// The card's match score alone (`MatchCalibration.cardMatchScore(raw:)`, what `card` shows).
    ///
    /// - Parameters: As `card(row:raw:student:weights:isProbe:)`, without `isProbe`.
    /// - Returns: The rounded match score.
    public func cardMatchScore(row: Int, raw: Float, student: MatchStudent, weights: PreferenceWeights) -> Double {
        calibration.cardMatchScore(raw: Double(raw))
    }

    private func card(row: Int, raw: Float, student: MatchStudent, isProbe: Bool, explanations: [String]) -> Recommendation {
        // Four decimals for the score and 0.1 mi for the distance: more would be noise from Float.
        let match = calibration.cardMatchScore(raw: Double(raw))
        return Recommendation(
            item: summary(row: row), matchScore: match, grade: Grade(matchScore: match),
            explanations: explanations, isProbe: isProbe,
            matchedMajors: student.matchedMajors(row: row, schools: schools),
            distance: row < student.distances.count ? (Double(student.distances[row]) * 10).rounded() / 10 : nil)
    }

    /// Cold-start recommendations for many profiles, scored with one `cblas_sgemm`.
    ///
    /// Equal to calling `recommend(profile:count:)` for each profile, up to float rounding.
    ///
    /// - Parameters:
    ///   - profiles: The profiles.
    ///   - count: Cards per student; clamped to 0…N.
    /// - Returns: One response per profile, in order.
    /// - Throws: `DataError` for the first invalid profile.
    /// - Complexity: O(S × N × d + S × N log count).
    public func recommend(profiles: [StudentProfile], count: Int) throws(DataError) -> [RecommendationResponse] {
        var students: [MatchStudent] = []
        for profile in profiles { students.append(try student(profile)) }
        let weights = students.map(coldStartWeights(for:))
        let scores = schools.catalog.scores(batch: weights, terms: students.map(\.terms))
        var selector = TopKSelector()
        var top: [Int] = []
        var row = [Float](repeating: 0, count: schools.catalog.count)
        return students.indices.map { s in
            for i in 0..<row.count { row[i] = scores[s, i] }
            selector.select(k: max(0, min(count, row.count)), from: row, into: &top)
            let grades = gradeScale(raw: row, matchOffsets: nil)
            var cards = top.map {
                var made = card(row: $0, raw: row[$0], student: students[s], weights: weights[s])
                made.grade(by: grades)
                return made
            }
            varyExplanations(&cards, student: students[s], weights: weights[s])
            return RecommendationResponse(
                recommendations: cards,
                learningState: LearningState(totalSwipes: 0, weightList: namedWeightList(weights[s])),
                totalSwipes: 0)
        }
    }

    /// The item summary of a school: id, name and its display attributes (numbers as numbers,
    /// null for gaps).
    ///
    /// - Parameter row: The school.
    /// - Returns: The summary.
    public func summary(row: Int) -> ItemSummary { catalog.summary(row: row) }

    /// Named weights a person understands, derived from the model's weights:
    ///
    /// | name | from |
    /// |---|---|
    /// | `academic_selectivity` | `selectivity` + `sat_avg` weights |
    /// | `academic_fit` | `academic_fit` term |
    /// | `cost_weight` | `budget` term − `net_price` weight (both favour cheaper schools) |
    /// | `distance_weight` | `distance` term |
    /// | `major_weight` | `major_fit` term |
    /// | `size_preference` | `size=large` − `size=small` (positive: prefers large) |
    /// | `public_preference` | `control=public` − `control=private_nonprofit` |
    /// | `urban_preference` | mean of `locale=city_*` − mean of `locale=rural_*` |
    /// | `graduation_weight` | `completion_rate` |
    /// | `earnings_weight` | `earnings` |
    ///
    /// - Parameter weights: The model's weights.
    /// - Returns: Name → weight, rounded to 4 decimals.
    public func namedWeights(_ weights: PreferenceWeights) -> [String: Double] {
        namedWeightList(weights).dictionary
    }

    /// The named weights listed, the names sorted once (no dictionary built): what
    /// `namedWeights(_:)` returns as a dictionary.
    ///
    /// - Parameter weights: The model's weights.
    /// - Returns: The same names and values.
    public func namedWeightList(_ weights: PreferenceWeights) -> NamedWeightList {
        NamedWeightList(order: namedWeightKeys, values: namedWeightPlan.map { $0.value(weights) })
    }
}

/// A named weight as parts: Σ sign × (sum of the part's weights) / divisor.
struct NamedWeight: Sendable {
    struct Part: Sendable {
        let sign: Double
        let term: Int?
        let features: [Int]
        let divisor: Double
    }

    let name: String
    let parts: [Part]

    /// The named weight under `weights`, rounded to four decimals.
    func value(_ weights: PreferenceWeights) -> Double {
        var value = 0.0
        for part in parts {
            var sum = 0.0
            if let k = part.term { sum += Double(weights.terms[k]) }
            for j in part.features { sum += Double(weights.features[j]) }
            value += part.sign * (sum / part.divisor)
        }
        return (value * 10_000).rounded() / 10_000
    }

    /// The table on `SchoolMatcher.namedWeights(_:)`; absent columns count as 0.
    static func schoolPlan(columnIndex: [String: Int]) -> [NamedWeight] {
        func columns(_ names: [String], sign: Double = 1, divisor: Double = 1) -> Part {
            Part(sign: sign, term: nil, features: names.compactMap { columnIndex[$0] }, divisor: divisor)
        }
        func term(_ name: String, sign: Double = 1) -> Part {
            Part(sign: sign, term: MatchStudent.termNames.firstIndex(of: name)!, features: [], divisor: 1)
        }
        func localeMean(_ prefix: String, sign: Double) -> Part {
            let names = SchoolCatalog.locales.filter { $0.hasPrefix(prefix) }
            return columns(names.map { "locale=\($0)" }, sign: sign, divisor: Double(max(1, names.count)))
        }
        return [
            NamedWeight(name: "academic_selectivity", parts: [columns(["selectivity"]), columns(["sat_avg"])]),
            NamedWeight(name: "academic_fit", parts: [term("academic_fit")]),
            NamedWeight(name: "cost_weight", parts: [term("budget"), columns(["net_price"], sign: -1)]),
            NamedWeight(name: "distance_weight", parts: [term("distance")]),
            NamedWeight(name: "major_weight", parts: [term("major_fit")]),
            NamedWeight(name: "size_preference", parts: [columns(["size=large"]), columns(["size=small"], sign: -1)]),
            NamedWeight(name: "public_preference", parts: [columns(["control=public"]), columns(["control=private_nonprofit"], sign: -1)]),
            NamedWeight(name: "urban_preference", parts: [localeMean("city", sign: 1), localeMean("rural", sign: -1)]),
            NamedWeight(name: "graduation_weight", parts: [columns(["completion_rate"])]),
            NamedWeight(name: "earnings_weight", parts: [columns(["earnings"])]),
        ]
    }
}
