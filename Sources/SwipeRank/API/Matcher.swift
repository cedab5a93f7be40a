import SwipeRankNumerics
/// A domain the learning engine can serve: a catalog, how a user's profile becomes terms and
/// cold-start weights, and how a scored item becomes a card.
///
/// `SwipeEngine`, `SwipeSession` and the offline evaluation are generic over it, so the same
/// learning, probes, geographic mixing, pools, snapshots and metrics work for colleges
/// (`SchoolMatcher`) and for any other catalog described by an `ItemSchema` (`ItemMatcher`).
///
/// The model's weights multiply the combined vector `[features (d), terms (k)]` of an item, so
/// `termNames` fixes k for every student of a matcher.
public protocol Matcher: Sendable {
    /// What the app sends about a user (persisted in session snapshots).
    associatedtype Profile: Sendable, Hashable, Codable
    /// A profile resolved against the catalog.
    associatedtype Student: MatchedStudent where Student.Profile == Profile

    /// The items.
    var catalog: Catalog { get }
    /// Raw score → match score; also the link of the preference model.
    var calibration: MatchCalibration { get }
    /// The names of the student-relative terms, in row order of every student's `terms`.
    var termNames: [String] { get }
    /// What else about this matcher changes the model (e.g. a term basis), for
    /// `SwipeEngine.modelVersion` and snapshot checks; nil when nothing does.
    var modelTag: String? { get }
    /// A text attribute whose values are regions: discovery cards from a region not shown yet
    /// get a novelty bonus. nil: no such bonus.
    var regionAttribute: String? { get }
    /// The student's relative terms as the distance term alone (`DistanceTermShape`), or nil
    /// when they are anything else: a large engine's decks retrieve candidates through its
    /// `CandidateIndex` only when the matcher declares this (the default is nil).
    ///
    /// - Parameter student: The resolved student.
    /// - Returns: The home and preferred distance the term is computed from, or nil.
    func distanceTermShape(of student: Student) -> DistanceTermShape?

    /// Validates and resolves a profile.
    ///
    /// - Parameter profile: The profile.
    /// - Returns: The resolved student, with terms over every item.
    /// - Throws: `DataError` naming the invalid field.
    /// - Complexity: O(N) for the terms.
    func student(_ profile: Profile) throws(DataError) -> Student

    /// Validates and resolves a profile for an engine whose decks read the per-item terms and
    /// distances of a few items only (it has a `CandidateIndex`): a matcher that can compute
    /// them when read does, so a new student costs O(1) instead of O(N) and holds no per-item
    /// array; the values read must equal `student(_:)`'s bit for bit.
    ///
    /// - Parameters:
    ///   - profile: The profile.
    ///   - computingOnAccess: Whether per-item values may be computed when read.
    /// - Returns: The resolved student.
    /// - Throws: `DataError` naming the invalid field.
    func student(_ profile: Profile, computingOnAccess: Bool) throws(DataError) -> Student

    /// The weights before any swipe, from the profile alone.
    ///
    /// - Parameter student: The resolved student.
    /// - Returns: d feature weights and k term weights.
    func coldStartWeights(for student: Student) -> PreferenceWeights

    /// The card for one item.
    ///
    /// - Parameters:
    ///   - row: The item's row.
    ///   - raw: Its raw score.
    ///   - student: The student.
    ///   - weights: The weights that scored it.
    ///   - isProbe: Whether it is served as a probe.
    /// - Returns: The card.
    func card(row: Int, raw: Float, student: Student, weights: PreferenceWeights, isProbe: Bool) -> Recommendation

    /// The card for one item and its best `ExplanationVariety.candidates` reasons, best first
    /// (the card shows the first three): a deck's explanation variety draws on the rest when the
    /// card's own reasons repeat across the deck, and writing them with the card ranks the
    /// item's reasons once instead of twice. The default returns no candidates (the variety then
    /// asks `explanations(row:student:weights:limit:)` where it needs more).
    ///
    /// - Parameters: As `card(row:raw:student:weights:isProbe:)`.
    /// - Returns: The card, exactly `card(row:raw:student:weights:isProbe:)`'s, and its candidate
    ///   reasons, or nil.
    func cardWithCandidates(row: Int, raw: Float, student: Student, weights: PreferenceWeights,
                            isProbe: Bool) -> (card: Recommendation, candidates: [String]?)

    /// `cardWithCandidates(row:raw:student:weights:isProbe:)` with the variety key of each
    /// candidate, for a matcher that has them without reading the text (it wrote its sentences
    /// ahead of time, and keyed them then): a deck keys its reasons from these instead of
    /// digesting every sentence (`ExplanationVariety`). The default gives no keys.
    ///
    /// When `keys` is not nil, `candidates` is not nil either, `keys[j]` is
    /// `ExplanationVariety.Key(candidates[j])`, and the card's explanations are the first of
    /// the candidates.
    ///
    /// - Parameters: As `card(row:raw:student:weights:isProbe:)`.
    /// - Returns: `cardWithCandidates(row:raw:student:weights:isProbe:)`'s card and candidates,
    ///   and their keys or nil.
    func cardWithKeyedCandidates(row: Int, raw: Float, student: Student, weights: PreferenceWeights,
                                 isProbe: Bool) -> (card: Recommendation, candidates: [String]?, keys: [ExplanationVariety.Key]?)

    /// The card without its explanations (empty): what a deck asked for in a shape that shows
    /// none (`SwipeSession.deck(count:explained:)`) builds, so no reason is ranked that nobody sees.
    /// The default builds the whole card and drops them.
    ///
    /// - Parameters: As `card(row:raw:student:weights:isProbe:)`.
    /// - Returns: `card(row:raw:student:weights:isProbe:)` with no explanations.
    func unexplainedCard(row: Int, raw: Float, student: Student, weights: PreferenceWeights, isProbe: Bool) -> Recommendation

    /// The match score `card(row:raw:student:weights:isProbe:)` shows, without the card: a
    /// brief deck (`SwipeSession.briefDeck(count:)`) shows only the score, the grade and the
    /// probe flag, and building whole cards (summary, majors, distance) only to read their
    /// scores was a tenth of such a deck's time in the service. The default builds the card.
    ///
    /// - Parameters: As `card(row:raw:student:weights:isProbe:)`, without `isProbe`.
    /// - Returns: `card(row:raw:student:weights:isProbe:).matchScore`, bit for bit.
    func cardMatchScore(row: Int, raw: Float, student: Student, weights: PreferenceWeights) -> Double

    /// The best `limit` reasons for an item, best first: a card shows the first three, and a
    /// deck whose cards repeat a reason draws on the rest (`varyExplanations`).
    ///
    /// - Parameters:
    ///   - row: The item.
    ///   - student: The student.
    ///   - weights: The weights that scored it.
    ///   - limit: The most sentences.
    /// - Returns: At most `limit` sentences.
    func explanations(row: Int, student: Student, weights: PreferenceWeights, limit: Int) -> [String]

    /// Weights a person can read, for the learning state.
    ///
    /// - Parameter weights: The model's weights.
    /// - Returns: Name → weight.
    func namedWeights(_ weights: PreferenceWeights) -> [String: Double]

    /// `namedWeights(_:)` as a list (the same names and values): the learning state of every
    /// answer is built from it. The default lists the dictionary; a matcher that sorts its
    /// names once (`SchoolMatcher`, `ItemMatcher`) builds no dictionary.
    ///
    /// - Parameter weights: The model's weights.
    /// - Returns: The named weights, listed.
    func namedWeightList(_ weights: PreferenceWeights) -> NamedWeightList

    /// The feedback options worth offering after a swipe, most salient first, at most five
    /// (empty: never ask).
    ///
    /// - Parameters:
    ///   - row: The swiped item.
    ///   - action: The swipe.
    ///   - student: The student.
    /// - Returns: The options.
    func feedbackOptions(row: Int, action: SwipeAction, student: Student) -> [FeedbackOption]

    /// The prior shift of one feedback answer, before `EngineConfiguration.feedbackStrength`.
    ///
    /// - Parameters:
    ///   - option: The answer.
    ///   - row: The item it was about.
    /// - Returns: d + k values.
    func feedbackAdjustment(for option: FeedbackOption, row: Int) -> [Double]

    /// Starts loading what this matcher's cards of these rows read beyond the catalog's feature
    /// rows and summaries (its own per-item arrays) into the caches, without waiting: a deck
    /// calls it with the rows it will most likely serve before building any card, so their
    /// cache misses overlap. A hint: the default does nothing, and it may not change a result.
    ///
    /// - Parameters:
    ///   - rows: Catalog rows.
    ///   - student: The student.
    func prefetchCards(rows: [Int], student: Student)
}

/// A profile resolved against a catalog: what a session needs from a student.
public protocol MatchedStudent: Sendable {
    /// The profile type it came from.
    associatedtype Profile
    /// The profile.
    var profile: Profile { get }
    /// The student-relative terms, k × N.
    var terms: RelativeTerms { get }
    /// Miles from the student's home to each item (NaN for items without a location); empty
    /// without a home.
    var distances: StudentDistances { get }
    /// The preferred maximum distance in miles when the student has a home (the geographic
    /// bands are drawn around it); nil without a home, which means one pool and no mixing.
    var preferredDistanceMiles: Double? { get }
    /// The bytes its per-item arrays hold, for `SwipeEngine`'s student cache budget.
    var byteCount: Int { get }
}

extension MatchedStudent {
    /// The terms and the distances (the per-item arrays; the rest is small).
    public var byteCount: Int { terms.byteCount + distances.byteCount + 256 }
}

/// A profile with its hash computed once: the key of the engine's student cache, which a
/// session looks up on every request (a profile hashes its strings and lists each time).
struct ProfileKey<P: Hashable & Sendable>: Hashable, Sendable {
    let profile: P
    let hash: Int

    init(_ profile: P) {
        self.profile = profile
        hash = profile.hashValue
    }

    static func == (a: ProfileKey, b: ProfileKey) -> Bool { a.hash == b.hash && a.profile == b.profile }

    func hash(into hasher: inout Hasher) { hasher.combine(hash) }
}

extension Matcher {
    /// `cardWithCandidates(row:raw:student:weights:isProbe:)`, with no keys: the deck keys the
    /// reasons from their text.
    ///
    /// - Returns: The card, its candidates and nil.
    public func cardWithKeyedCandidates(row: Int, raw: Float, student: Student, weights: PreferenceWeights,
                                        isProbe: Bool) -> (card: Recommendation, candidates: [String]?, keys: [ExplanationVariety.Key]?) {
        let (card, candidates) = cardWithCandidates(row: row, raw: raw, student: student, weights: weights, isProbe: isProbe)
        return (card, candidates, nil)
    }

    /// Nothing: a matcher without per-item arrays of its own has nothing more to load.
    public func prefetchCards(rows: [Int], student: Student) {}

    /// `namedWeights(_:)`'s dictionary, listed.
    ///
    /// - Parameter weights: The model's weights.
    /// - Returns: The named weights, listed.
    public func namedWeightList(_ weights: PreferenceWeights) -> NamedWeightList { NamedWeightList(namedWeights(weights)) }

    /// The card alone: a matcher that does not write its candidate reasons with the card.
    ///
    /// - Returns: `card(row:raw:student:weights:isProbe:)` and nil.
    public func cardWithCandidates(row: Int, raw: Float, student: Student, weights: PreferenceWeights,
                                   isProbe: Bool) -> (card: Recommendation, candidates: [String]?) {
        (card(row: row, raw: raw, student: student, weights: weights, isProbe: isProbe), nil)
    }

    /// The whole card, its explanations dropped: a matcher that cannot build a card without them.
    ///
    /// - Returns: `card(row:raw:student:weights:isProbe:)` with no explanations.
    public func unexplainedCard(row: Int, raw: Float, student: Student, weights: PreferenceWeights, isProbe: Bool) -> Recommendation {
        var card = card(row: row, raw: raw, student: student, weights: weights, isProbe: isProbe)
        card.explanations = []
        return card
    }

    /// The whole card's match score: a matcher whose cards cannot be scored without building them.
    ///
    /// - Returns: `card(row:raw:student:weights:isProbe:).matchScore`.
    public func cardMatchScore(row: Int, raw: Float, student: Student, weights: PreferenceWeights) -> Double {
        card(row: row, raw: raw, student: student, weights: weights, isProbe: false).matchScore
    }

    /// `student(_:)`: by default every item's values are computed when the student is resolved.
    ///
    /// - Parameters:
    ///   - profile: The profile.
    ///   - computingOnAccess: Ignored.
    /// - Returns: `student(profile)`.
    /// - Throws: `student(_:)`'s errors.
    public func student(_ profile: Profile, computingOnAccess: Bool) throws(DataError) -> Student { try student(profile) }

    /// nil: by default a matcher has nothing beyond its catalog and terms that changes the model.
    public var modelTag: String? { nil }

    /// nil: a matcher's terms are not known to be the distance term alone unless it says so.
    ///
    /// - Parameter student: The resolved student.
    /// - Returns: nil.
    public func distanceTermShape(of student: Student) -> DistanceTermShape? { nil }

    /// The best `count` items for a student under given weights, as cards.
    ///
    /// - Parameters:
    ///   - student: The student.
    ///   - weights: The weights (cold start or learned).
    ///   - count: How many cards.
    ///   - workspace: Reused buffers.
    /// - Returns: Cards, best first (ties to the lower row); `count` is clamped to 0…N.
    /// - Complexity: O(N × (d + k) + N log count).
    public func recommendations(for student: Student, weights: PreferenceWeights, count: Int,
                                workspace: inout ScoringWorkspace) -> [Recommendation] {
        catalog.topItems(k: max(0, min(count, catalog.count)), weights: weights, terms: student.terms, workspace: &workspace)
        let grades = gradeScale(raw: workspace.scores, matchOffsets: nil)
        var cards = workspace.top.map {
            var made = card(row: $0, raw: workspace.scores[$0], student: student, weights: weights, isProbe: false)
            made.grade(by: grades)
            return made
        }
        varyExplanations(&cards, student: student, weights: weights)
        return cards
    }

    /// Stateless recommendations for a profile with its cold-start weights: no session, no
    /// probes, no band mix — the plain top of the ranking.
    ///
    /// - Parameters:
    ///   - profile: The profile.
    ///   - count: How many cards; clamped to 0…N.
    /// - Returns: The response, with the cold-start learning state and zero swipes.
    /// - Throws: `DataError` for an invalid profile.
    /// - Complexity: O(N × (d + k) + N log count).
    public func recommend(profile: Profile, count: Int) throws(DataError) -> RecommendationResponse {
        let student = try student(profile)
        let weights = coldStartWeights(for: student)
        var workspace = ScoringWorkspace()
        return RecommendationResponse(
            recommendations: recommendations(for: student, weights: weights, count: count, workspace: &workspace),
            learningState: LearningState(totalSwipes: 0, weightList: namedWeightList(weights)),
            totalSwipes: 0)
    }

    /// Stateless recommendations for a profile, skipping items the caller has already shown
    /// (the plain top of the cold-start ranking among the rest).
    ///
    /// - Parameters:
    ///   - profile: The profile.
    ///   - count: How many cards; clamped to 0…(items not excluded).
    ///   - excluded: Item ids to leave out; ids the catalog does not have are ignored (a
    ///     client's list may name items a newer catalog dropped).
    /// - Returns: The response, with the cold-start learning state and zero swipes; equal to
    ///   `recommend(profile:count:)` with the excluded items removed.
    /// - Throws: `DataError` for an invalid profile.
    /// - Complexity: O(N × (d + k) + N log count + |excluded|).
    public func recommend(profile: Profile, count: Int, excluding excluded: Set<String>) throws(DataError) -> RecommendationResponse {
        let student = try student(profile)
        let weights = coldStartWeights(for: student)
        var skip = [Bool](repeating: false, count: catalog.count)
        for id in excluded { if let row = catalog.row(of: id) { skip[row] = true } }
        var raw: [Float] = []
        catalog.scores(weights: weights, terms: student.terms, into: &raw)
        return RecommendationResponse(
            recommendations: recommendations(for: student, weights: weights, raw: raw, count: count, skipping: skip),
            learningState: LearningState(totalSwipes: 0, weightList: namedWeightList(weights)),
            totalSwipes: 0)
    }

    /// The best `count` items by `raw` (every item's raw score, the caller's: the cold start's,
    /// or a session's with the population's item effects) whose `skip` flag is false, as cards
    /// (ties to the lower row): `recommendations(for:weights:count:workspace:)` over part of the
    /// catalog. `matchOffsets` (a population's exposure effects) are taken off `raw` for the
    /// cards' match scores: they order the cards but say nothing of a match.
    func recommendations(for student: Student, weights: PreferenceWeights, raw: [Float], count: Int,
                         skipping skip: [Bool], matchOffsets: [Float]? = nil) -> [Recommendation] {
        var rows: [Int] = [], scores: [Float] = []
        rows.reserveCapacity(catalog.count)
        scores.reserveCapacity(catalog.count)
        for row in 0..<catalog.count where !skip[row] {
            rows.append(row)
            scores.append(raw[row])
        }
        var selector = TopKSelector()
        var picked: [Int] = []
        selector.select(k: max(0, min(count, rows.count)), from: scores, into: &picked)
        let grades = gradeScale(raw: raw, matchOffsets: matchOffsets)
        var cards = picked.map {
            let row = rows[$0]
            var made = card(row: row, raw: raw[row] - (matchOffsets?[row] ?? 0), student: student, weights: weights, isProbe: false)
            made.grade(by: grades)
            return made
        }
        varyExplanations(&cards, student: student, weights: weights)
        return cards
    }
}
