extension SwipeSession {
    /// Warm-starts the session from swipes logged elsewhere — on cards this session did not
    /// serve (an earlier app, another device, a system the integrator is moving from).
    ///
    /// Each swipe is evidence like a swipe in the deck (`recordJudgement(_:weight:)` with
    /// weight 1), applied in (timestamp, swipe id) order as `sync(_:)` applies an offline
    /// queue, and its card is never served afterwards. A swipe on a card this session served
    /// and nobody has swiped yet is that card's swipe (`recordSwipe(_:)`).
    ///
    /// - Idempotent by swipe id: importing the same history again answers `.duplicate` for
    ///   each swipe and changes nothing.
    /// - One piece of evidence per card: a swipe on a card already swiped or imported under
    ///   another id is rejected with `.alreadySwiped`.
    /// - A rejected swipe (unknown card, overlong id, already swiped) changes nothing; the
    ///   others are applied.
    ///
    /// - Parameter swipes: The logged swipes, in any order.
    /// - Returns: One result per swipe, in the order given.
    /// - Complexity: O(n log n) to order them, then O(D²) per swipe (O(D³) in the stable phase).
    @_specialize(where M == ItemMatcher)
    public mutating func importHistory(_ swipes: [Swipe]) -> [Result<SwipeResult, SwipeError>] {
        applyInOrder(swipes) { session, swipe throws(SwipeError) in try session.importSwipe(swipe) }
    }

    mutating func importSwipe(_ swipe: Swipe) throws(SwipeError) -> SwipeResult {
        // A known id is a duplicate whatever its card (`recordJudgement` answers it).
        guard self.swipes[swipe.swipeID] == nil, let row = engine.matcher.catalog.row(of: swipe.cardID) else {
            return try recordJudgement(swipe, weight: 1)
        }
        if let index = servedIndexByRow[row] {
            guard served[index].action == nil else {
                throw SwipeError(.alreadySwiped, "swipe \(swipe.swipeID): card \(swipe.cardID) was already swiped")
            }
            return try recordSwipe(swipe)
        }
        guard !judgedRows.contains(row) else {
            throw SwipeError(.alreadySwiped, "swipe \(swipe.swipeID): card \(swipe.cardID) was already judged")
        }
        return try recordJudgement(swipe, weight: 1)
    }

    /// The unseen cards in the model's order right now, best first: the posterior ranking,
    /// without serving anything — no bands, no probes, no random draw, nothing recorded, so
    /// `recommendations(count:)` afterwards serves exactly what it would have.
    ///
    /// - Parameter count: How many; clamped to 0…`unseenCount`.
    /// - Returns: Cards by raw score (ties to the lower catalog row), none a probe.
    /// - Complexity: O(N × D) to score the catalog, O(N log count) to select.
    @_specialize(where M == ItemMatcher)
    public func ranking(count: Int) -> [Recommendation] {
        var seen = [Bool](repeating: false, count: engine.matcher.catalog.count)
        for card in served { seen[card.row] = true }
        for row in judgedRows { seen[row] = true }
        let weights = self.weights
        var raw: [Float] = []
        engine.rawScores(weights: weights, student: student, into: &raw)
        // Ranked with the collaborative term, which the match score leaves out as it does exposure.
        var offsets = engine.exposureOffsets
        if let terms = collaborativeTerms {
            for i in raw.indices { raw[i] += terms[i] }
            offsets = offsets.map { zip($0, terms).map { $0 + $1 } } ?? terms
        }
        return engine.matcher.recommendations(for: student, weights: weights, raw: raw, count: count, skipping: seen,
                                              matchOffsets: offsets)
    }
}
