/// What a migration did with a student's history: how much of it still teaches on the new
/// catalog or model, and how much could only be counted.
public struct MigrationReport: Sendable, Hashable, Codable {
    /// Served cards whose items are still in the catalog, kept in the served list.
    public var servedKept = 0
    /// Served cards dropped: the item left the catalog (or was already served or judged).
    public var servedDropped = 0
    /// Swipes replayed through the model.
    public var swipesReplayed = 0
    /// Judgements (saves, carried-over swipes, swipes on cards not in the served list) replayed.
    public var judgementsReplayed = 0
    /// Swipes and judgements on items no longer in the catalog: counted, teaching nothing.
    public var retired = 0
    /// Feedback answers dropped: the new model did not ask that question (a pattern break it
    /// no longer sees), or the card is gone.
    public var feedbackDropped = 0

    /// An empty report.
    public init() {}

    enum CodingKeys: String, CodingKey {
        case servedKept = "served_kept", servedDropped = "served_dropped", swipesReplayed = "swipes_replayed"
        case judgementsReplayed = "judgements_replayed", retired, feedbackDropped = "feedback_dropped"
    }
}

/// Carries a student's history onto a changed catalog, population model or configuration.
///
/// A snapshot restores only onto the engine it was taken on (`SwipeEngine.restore(_:)` checks
/// the catalog's fingerprint, the learning digest and the model digest): a new catalog row, a
/// changed value or a refitted prior changes what the same swipes teach. Migration re-derives
/// the state instead: a fresh session on the new engine, then the history fed in order —
///
/// - served cards are kept under their original positions (gaps where an item left, so the
///   probe schedule continues where the student was), their band recomputed on the new
///   catalog, their probe flag following the new engine's schedule (the logged propensity
///   kept where both agree on a probe, 1 otherwise); cards of items that left are dropped;
/// - swipes and judgements are replayed through the model with the items' current features;
///   on an item that left they are *retired*: still counted (swipe total, phase, idempotency
///   by id), teaching nothing, since its features are gone;
/// - feedback answers are applied if the new session asked the same question, else dropped.
///
/// The result is a normal session: its snapshot restores exactly on the new engine. Every step
/// is deterministic, so two instances migrating the same history reach the same state.
/// A service that keeps its own event log (as `swiperank serve` does) feeds it in through
/// `served(cardID:position:isProbe:propensity:predictedMatch:)`, `swipe(_:)`,
/// `judgement(_:weight:)` and `feedback(cardID:options:)`; a library user with only a snapshot
/// calls `SwipeEngine.migrate(_:)`.
public struct SessionMigration<M: Matcher>: Sendable {
    /// The session so far.
    public private(set) var session: SwipeSession<M>
    /// What happened to the history so far.
    public private(set) var report = MigrationReport()

    /// Starts from a session on the new engine (usually fresh: its profile's cold start).
    ///
    /// - Parameter session: The session the history is fed into.
    public init(session: SwipeSession<M>) { self.session = session }

    /// A card served before: kept if its item is still in the catalog and not yet served or
    /// judged in this session.
    ///
    /// - Parameters:
    ///   - cardID: The item id.
    ///   - position: Its logged 1-based position; a position not after the last kept card's
    ///     (an inconsistent log) becomes the next one.
    ///   - isProbe: Whether it was served as a probe.
    ///   - propensity: The logged probability it was chosen with.
    ///   - predictedMatch: The match score shown (clamped into 0…1; 0.5 when not finite).
    @discardableResult
    public mutating func served(cardID: String, position: Int, isProbe: Bool, propensity: Double, predictedMatch: Double) -> Bool {
        let engine = session.engine
        guard let row = engine.matcher.catalog.row(of: cardID), session.servedIndexByRow[row] == nil,
              !session.judgedRows.contains(row) else {
            report.servedDropped += 1
            return false
        }
        let position = max(position, session.nextPosition)
        let probe = engine.probes.isProbe(position: position)
        let logged = isProbe && propensity.isFinite && propensity > 0 && propensity <= 1
        let band: GeoBand? = session.isBanded ? GeoBand.byIndex[session.poolIndex(row: row)] : nil
        session.served.append(ServedCard(
            position: position, row: row, cardID: cardID, band: band, isProbe: probe,
            propensity: probe && logged ? propensity : 1,
            predictedMatch: predictedMatch.isFinite ? min(1, max(0, predictedMatch)) : 0.5, action: nil))
        session.servedIndexByRow[row] = session.served.count - 1
        if let band { session.bandServed[band.index] += 1 }
        session.markShown(row: row)
        report.servedKept += 1
        return true
    }

    /// A swipe from the history: replayed on its served card; a judgement (weight 1) when the
    /// card is in the catalog but not in the served list; retired when the item left or the
    /// card already has its evidence. A swipe id seen before changes nothing.
    ///
    /// - Parameter swipe: The swipe.
    /// - Throws: `SwipeError` `.invalidSwipe` (an overlong id) or `.numerical`: the history
    ///   cannot be carried over, the session is as before the call.
    public mutating func swipe(_ swipe: Swipe) throws(SwipeError) {
        guard !session.hasRecorded(swipeID: swipe.swipeID) else { return }
        guard let row = session.engine.matcher.catalog.row(of: swipe.cardID) else { return try retire(swipe) }
        if let index = session.servedIndexByRow[row] {
            guard session.served[index].action == nil else { return try retire(swipe) }
            _ = try session.recordSwipe(swipe)
            report.swipesReplayed += 1
        } else if session.judgedRows.contains(row) {
            try retire(swipe)
        } else {
            _ = try session.recordJudgement(swipe, weight: 1)
            report.judgementsReplayed += 1
        }
    }

    /// A judgement from the history (a save, a swipe carried over from an earlier profile):
    /// replayed with its weight, or retired when the item left. A swipe id seen before changes
    /// nothing.
    ///
    /// - Parameters:
    ///   - swipe: The judgement.
    ///   - weight: How many swipes it counts as, in (0, `SwipeSession.maxJudgementWeight`].
    /// - Throws: `SwipeError` `.invalidSwipe` or `.numerical`; the session is as before.
    public mutating func judgement(_ swipe: Swipe, weight: Double) throws(SwipeError) {
        guard !session.hasRecorded(swipeID: swipe.swipeID) else { return }
        guard session.engine.matcher.catalog.row(of: swipe.cardID) != nil else { return try retire(swipe) }
        _ = try session.recordJudgement(swipe, weight: weight)
        report.judgementsReplayed += 1
    }

    /// A feedback answer from the history: applied if this session has the same question open
    /// and offered every option chosen, else dropped.
    ///
    /// - Parameters:
    ///   - cardID: The card the question was about.
    ///   - options: The options chosen.
    public mutating func feedback(cardID: String, options: [FeedbackOption]) {
        do { try session.submitFeedback(cardID: cardID, options: options) } catch { report.feedbackDropped += 1 }
    }

    private mutating func retire(_ swipe: Swipe) throws(SwipeError) {
        try session.recordRetired(swipe)
        report.retired += 1
    }
}

extension SwipeSession {
    /// Counts a swipe whose evidence cannot be used (its item left the catalog): the swipe
    /// total, the phase and the id's idempotency go on; the model does not change.
    ///
    /// - Parameter swipe: The swipe.
    /// - Throws: `SwipeError` `.invalidSwipe` for an overlong id or an id already recorded.
    mutating func recordRetired(_ swipe: Swipe) throws(SwipeError) {
        guard swipe.swipeID.utf8.count <= SwipeSession.maxIDLength, swipe.cardID.utf8.count <= SwipeSession.maxIDLength else {
            throw SwipeError(.invalidSwipe, "swipe ids and card ids are at most \(SwipeSession.maxIDLength) bytes")
        }
        guard swipes[swipe.swipeID] == nil else {
            throw SwipeError(.invalidSwipe, "swipe id \(swipe.swipeID) appears twice")
        }
        swipes[swipe.swipeID] = swipe
        totalSwipes += 1
        events.append(.retired(swipe))
    }
}

extension SwipeEngine {
    /// Carries a snapshot taken on another catalog, population model or configuration over to
    /// this engine (see `SessionMigration`): where `restore(_:)` refuses such a snapshot, this
    /// re-derives the session from its served cards and events.
    ///
    /// On the engine the snapshot was taken on, the result equals `restore(_:)`'s (same model,
    /// same next cards).
    ///
    /// - Parameter snapshot: A snapshot from any catalog version.
    /// - Returns: The migration: the session and what happened to the history.
    /// - Throws: `DataError` when the profile does not fit this catalog (the matcher's own
    ///   error), the snapshot is larger than `maxSnapshotEvents`, or a swipe cannot be
    ///   learned from (numerical failure).
    /// - Complexity: O(N) to resolve the student, plus the replay of every event.
    @_specialize(where M == ItemMatcher)
    public func migrate(_ snapshot: SessionSnapshot<M.Profile>) throws(DataError) -> SessionMigration<M> {
        let source = "session snapshot \(snapshot.studentID.prefix(SwipeSession<M>.maxIDLength))"
        guard snapshot.studentID.utf8.count <= SwipeSession<M>.maxIDLength else {
            throw DataError(.invalidValue, source: source, field: "studentID",
                            detail: "studentID: longer than \(SwipeSession<M>.maxIDLength) bytes")
        }
        let events = snapshot.events.count + snapshot.served.count + (snapshot.checkpoint?.swipes.count ?? 0)
        guard events <= Self.maxSnapshotEvents else {
            throw DataError(.invalidValue, source: source, field: "events",
                            detail: "events: \(events) served cards and events exceed \(Self.maxSnapshotEvents)")
        }
        let student = try resolvedStudent(snapshot.profile)
        var migration = SessionMigration(session: SwipeSession(
            engine: self, studentID: snapshot.studentID, student: student, model: coldStartModel(for: student),
            rng: snapshot.generator))
        for card in snapshot.served {
            migration.served(cardID: card.cardID, position: card.position, isProbe: card.isProbe,
                             propensity: card.propensity, predictedMatch: card.predictedMatch)
        }
        do {
            // A converted version-1 snapshot's checkpoint: its swipes are replayed; the feedback
            // answers folded into its stored model cannot be separated out and are lost.
            for swipe in snapshot.checkpoint?.swipes ?? [] { try migration.swipe(swipe) }
            for event in snapshot.events {
                switch event {
                case let .swipe(swipe), let .retired(swipe): try migration.swipe(swipe)
                case let .judged(swipe, weight): try migration.judgement(swipe, weight: weight)
                case let .feedback(cardID, options): migration.feedback(cardID: cardID, options: options)
                }
            }
        } catch {
            throw DataError(.invalidValue, source: source, field: "events", detail: "events: \(error.message)")
        }
        return migration
    }
}
