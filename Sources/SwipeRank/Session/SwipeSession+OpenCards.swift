/// A served card the student has not acted on yet, as it would be shown now.
public struct OpenCard: Sendable, Hashable {
    /// The card, scored with the student's current model.
    public var recommendation: Recommendation
    /// Its 1-based serving position (where it sits in the impression log).
    public var position: Int
}

extension SwipeSession {
    /// The served cards the student has neither swiped nor saved, oldest first, at most
    /// `limit`: a deck is what the student has been dealt and not yet played, so asking for it
    /// again (a retried request, a lost response, a pull-to-refresh, another device) returns
    /// the same cards instead of using up new ones. Each is re-scored with the current model:
    /// match score, grade and explanations follow what the student taught since; the probe
    /// flag is the one it was served with.
    ///
    /// - Parameter limit: The most cards.
    /// - Returns: The open cards, in serving order.
    /// - Complexity: O(N·D) for the scores when any card is open, plus O(swipes).
    public func openCards(limit: Int) -> [OpenCard] {
        let open = openServedCards(limit: limit)
        guard !open.isEmpty else { return [] }
        let scores = deckScores()
        return openCards(open, scores: scores, grades: scores.gradeScale(engine: engine))
    }

    /// The open served cards, oldest first, at most `limit`.
    private func openServedCards(limit: Int) -> [ServedCard] {
        guard limit > 0 else { return [] }
        // A served card saved from its detail page has a judgement but no swipe: it is played.
        // A plain loop over local copies: the lazy filter's closure captured the session, and
        // copying it (dozens of references) was about a seventh of a re-read's deck in the service.
        let (served, judged) = (self.served, judgedServedRows)
        var open: [ServedCard] = []
        for card in served where card.action == nil && !judged.contains(card.row) {
            open.append(card)
            if open.count == limit { break }
        }
        return open
    }

    private func openCards(_ open: [ServedCard], scores: DeckScores, grades: GradeScale, explained: Bool = true) -> [OpenCard] {
        let (weights, reasons) = (scores.weights, scores.reasons)
        let student = scores.student  // resolved with the scores: a second lookup takes the cache's lock again
        var placed: [(row: Int, raw: Float)] = []
        // Each card's candidate reasons ranked with it, as a fresh deal does: the variety pass
        // would otherwise rank most cards' reasons a second time (it asks for more of any card
        // whose reasons repeat across the deck), which cost more than building the cards.
        var candidates: [[String]?] = []
        candidates.reserveCapacity(open.count)
        var candidateKeys = CandidateKeys()
        if explained { candidateKeys.reserve(open.count) }
        var cards = open.map { served in
            let raw = scores.rawScore(row: served.row, engine: engine, student: student)
            placed.append((served.row, raw))
            let match = engine.matchRaw(raw, row: served.row)
            var card: Recommendation
            if explained {
                let more: [String]?, keys: [ExplanationVariety.Key]?
                (card, more, keys) = engine.matcher.cardWithKeyedCandidates(row: served.row, raw: match, student: student,
                                                                            weights: weights, isProbe: served.isProbe)
                candidates.append(more)
                candidateKeys.append(keys)
            } else {
                card = engine.matcher.unexplainedCard(row: served.row, raw: match, student: student, weights: weights, isProbe: served.isProbe)
            }
            card.grade(by: grades)
            return card
        }
        guard explained else { return OpenCard.list(cards, open) }
        if let reasons {
            for (i, reason) in reasons.reasons(for: placed, session: self).enumerated() {
                if let reason {
                    cards[i].explanations.insert(reason, at: 0)
                    candidateKeys.insertFirst(reason, card: i)
                }
            }
        }
        engine.matcher.varyExplanations(&cards, candidates: candidates, keys: candidateKeys, student: student, weights: weights)
        return OpenCard.list(cards, open)
    }
}

extension OpenCard {
    /// The cards with the positions they were served at, moved in: a zip of the two arrays
    /// copied every card and destroyed the pairs (about a tenth of a re-read's open cards).
    static func list(_ cards: consuming [Recommendation], _ open: [ServedCard]) -> [OpenCard] {
        var result: [OpenCard] = []
        result.reserveCapacity(cards.count)
        var cards = cards
        for i in cards.indices.reversed() { result.append(OpenCard(recommendation: cards.removeLast(), position: open[i].position)) }
        result.reverse()
        return result
    }
}

/// A deck: the cards dealt before and not played, then the ones dealt now.
public struct Deck: Sendable, Hashable {
    /// Open cards from earlier deals, oldest first.
    public var open: [OpenCard]
    /// The cards dealt by this call (served and logged now).
    public var dealt: RecommendationResponse

    /// Every card's item id, in the order to show them.
    public var ids: [String] { open.map(\.recommendation.item.id) + dealt.recommendations.map(\.item.id) }
}

extension SwipeSession {
    /// `count` cards to show: the open ones first (`openCards(limit:)`), then new ones dealt
    /// (`recommendations(count:)`) for the rest. Asking again without playing returns the same
    /// deck and deals nothing.
    ///
    /// - Parameters:
    ///   - count: The deck size.
    ///   - explained: Whether the cards carry their explanations. A client that shows none
    ///     (a service's short card shapes) passes false: the same cards, scores, grades, probes
    ///     and served log, with empty `explanations` and no reason ranked (on a re-read of the
    ///     2,294 schools in the service, about two fifths of the deck's time). The session ends in the same state either way.
    /// - Returns: The open cards and the newly dealt ones.
    public mutating func deck(count: Int, explained: Bool = true) -> Deck {
        let open = openServedCards(limit: count)
        let fresh = max(0, count - open.count)
        guard !open.isEmpty || min(fresh, unseenCount) > 0 else {
            return Deck(open: [], dealt: RecommendationResponse(recommendations: [], learningState: learningState, totalSwipes: totalSwipes))
        }
        // One scoring pass and one grade scale for both halves: the model does not change
        // between them (each half building its own scale computed it twice for a deck of open
        // and new cards, the common deck after a few swipes).
        let scores = deckScores()
        let grades = scores.gradeScale(engine: engine)
        let openCards = openCards(open, scores: scores, grades: grades, explained: explained)
        let dealt = deal(count: fresh, scores: scores, detail: explained ? .explained : .unexplained, grades: grades)
        return Deck(open: openCards, dealt: RecommendationResponse(recommendations: dealt.cards, learningState: dealt.learningState,
                                                                    totalSwipes: totalSwipes))
    }
}

/// A card in the shortest shape an app shows in its swipe stack: the item, its score, grade
/// and probe flag. A brief deck (`SwipeSession.briefDeck(count:)`) builds these instead of
/// whole `Recommendation`s, with no summary, majors, distance or reasons to copy.
public struct BriefCard: Sendable, Hashable {
    /// The item's catalog row (its id is `Catalog.ids[row]`, its name `Catalog.names[row]`,
    /// in the catalog of the session that dealt it).
    public var row: Int
    /// Its 1-based serving position (where it sits in the impression log).
    public var position: Int
    /// The calibrated match score, as the whole card shows it (`Recommendation.matchScore`).
    public var matchScore: Double
    /// The grade of the match score on the student's scale (`GradeScale`).
    public var grade: Grade
    /// Whether it was served as a probe.
    public var isProbe: Bool

    /// Creates a brief card.
    ///
    /// - Parameters:
    ///   - row: The catalog row.
    ///   - position: The serving position.
    ///   - matchScore: The match score.
    ///   - grade: The grade.
    ///   - isProbe: Whether it is a probe.
    public init(row: Int, position: Int, matchScore: Double, grade: Grade, isProbe: Bool) {
        self.row = row
        self.position = position
        self.matchScore = matchScore
        self.grade = grade
        self.isProbe = isProbe
    }
}

/// A deck of brief cards: `Deck` in the shortest shape.
public struct BriefDeck: Sendable, Hashable {
    /// Open cards from earlier deals, oldest first.
    public var open: [BriefCard]
    /// The cards dealt by this call (served and logged now).
    public var dealt: [BriefCard]
    /// What the engine has learned so far.
    public var learningState: LearningState
    /// Swipes recorded for this student.
    public var totalSwipes: Int

    /// Every card, in the order to show them.
    public var cards: [BriefCard] { open + dealt }
}

extension SwipeSession {
    /// `deck(count:explained:)` in the shortest shape: the same cards, positions, scores, grades,
    /// probes and served log, and the session ends in the same state, but each card is only its
    /// row, position, score, grade and probe flag (`BriefCard`). For a client that shows no
    /// more than that (the service's `fields=minimal`): building whole cards to copy five
    /// fields out of them was about a tenth of such a deck's time in the service.
    ///
    /// - Parameter count: The deck size.
    /// - Returns: The open cards and the newly dealt ones.
    public mutating func briefDeck(count: Int) -> BriefDeck {
        let open = openServedCards(limit: count)
        let fresh = max(0, count - open.count)
        guard !open.isEmpty || min(fresh, unseenCount) > 0 else {
            return BriefDeck(open: [], dealt: [], learningState: learningState, totalSwipes: totalSwipes)
        }
        // One scoring pass and one grade scale for both halves, as in `deck(count:explained:)`.
        let scores = deckScores()
        let grades = scores.gradeScale(engine: engine)
        let openCards = openBriefCards(open, scores: scores, grades: grades)
        let dealt = deal(count: fresh, scores: scores, detail: .brief, grades: grades)
        return BriefDeck(open: openCards, dealt: dealt.briefs, learningState: dealt.learningState, totalSwipes: totalSwipes)
    }

    /// The open cards as brief cards: `openCards(_:scores:grades:explained:)`'s scores, grades
    /// and probe flags, without the cards.
    private func openBriefCards(_ open: [ServedCard], scores: DeckScores, grades: GradeScale) -> [BriefCard] {
        let (weights, student) = (scores.weights, scores.student)
        var cards: [BriefCard] = []
        cards.reserveCapacity(open.count)
        for served in open {
            let raw = scores.rawScore(row: served.row, engine: engine, student: student)
            let matchScore = engine.matcher.cardMatchScore(row: served.row, raw: engine.matchRaw(raw, row: served.row),
                                                           student: student, weights: weights)
            cards.append(BriefCard(row: served.row, position: served.position, matchScore: matchScore,
                                   grade: grades.grade(matchScore: matchScore), isProbe: served.isProbe))
        }
        return cards
    }
}

/// An item the student liked: swiped right, saved, or both.
public struct LikedItem: Sendable, Hashable {
    /// The item id.
    public var cardID: String
    /// When (the latest of the like's and the save's timestamps, the app's clock).
    public var timestamp: Int64
    /// Swiped right (on a served card, or organically).
    public var swiped: Bool
    /// Saved from a card or a detail page.
    public var saved: Bool
}

extension SwipeSession {
    /// The items the student liked or saved, newest first (by when the engine recorded them):
    /// an app's matches screen. Items that left the catalog are not listed.
    ///
    /// - Parameter isSave: Which judgement ids are saves (the service's own convention).
    /// - Returns: One entry per item.
    /// - Complexity: O(events).
    public func likedItems(isSave: (String) -> Bool) -> [LikedItem] {
        // Each item with the position of its latest like in the history: newest first is that order reversed.
        var byID: [String: (item: LikedItem, latest: Int)] = [:]
        for (position, event) in events.enumerated() {
            let (swipe, saved): (Swipe, Bool)
            switch event {
            case let .swipe(s): (swipe, saved) = (s, false)
            case let .judged(s, _): (swipe, saved) = (s, isSave(s.swipeID))
            case .feedback, .retired: continue
            }
            guard swipe.action == .like, engine.matcher.catalog.row(of: swipe.cardID) != nil else { continue }
            var item = byID[swipe.cardID]?.item ?? LikedItem(cardID: swipe.cardID, timestamp: swipe.timestamp, swiped: false, saved: false)
            item.timestamp = max(item.timestamp, swipe.timestamp)
            if saved { item.saved = true } else { item.swiped = true }
            byID[swipe.cardID] = (item, position)
        }
        return byID.values.sorted { $0.latest > $1.latest }.map(\.item)
    }
}
