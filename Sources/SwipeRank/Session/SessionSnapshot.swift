import Foundation
import SwipeRankNumerics

/// Everything a `SwipeSession` needs to continue exactly where it stopped, as a Codable value
/// (store it as JSON in SQLite, PostgreSQL, a file…).
///
/// Format version 2 is an event log, O(swipes) plus the profile, never O(catalog): the cards
/// served (in order), the ordered model events (swipes and feedback answers), the random
/// generator's state, and digests of the catalog, the configuration and the model the events
/// lead to. `SwipeEngine.restore(_:)` rebuilds the session from the profile and replays the
/// events through the same code a live session runs; every per-request computation is
/// bit-identical on any machine and BLAS thread count, so the replay reaches the exact model,
/// which the model digest proves. After 40 swipes on the school catalog it is about 9 KiB of
/// JSON.
///
/// Version 1 snapshots (which stored every unseen card's pool entry and the model itself)
/// still decode: they become a version-2 value whose `checkpoint` holds the stored model and
/// the swipes applied before it.
///
/// Generic over the matcher's profile type, which is stored as given.
public struct SessionSnapshot<Profile: Sendable & Hashable & Codable>: Sendable, Codable, Equatable {
    /// The snapshot format version this library writes.
    public static var currentFormatVersion: Int { 2 }

    /// The format version (2; version-1 input is converted when decoded).
    public var formatVersion: Int
    /// The student's id.
    public var studentID: String
    /// The profile.
    public var profile: Profile
    /// The catalog's item count when taken.
    public var catalogCount: Int
    /// `Catalog.fingerprint` of the catalog it was taken over (nil in converted version-1
    /// snapshots, which only recorded the count).
    public var catalogFingerprint: String?
    /// The engine configuration's digest (nil in converted version-1 snapshots).
    public var configurationDigest: String?
    /// Served cards, in order, with the swipe on each.
    public var served: [ServedCard]
    /// Where the event replay starts, when not from the cold start (converted version-1
    /// snapshots).
    public var checkpoint: SessionCheckpoint?
    /// The model-changing events since the checkpoint (or the cold start), in order.
    public var events: [SessionEvent]
    /// The random generator's state.
    public var generator: SplitMix64
    /// `PreferenceModel.digest` of the model after the events.
    public var modelDigest: String

    enum CodingKeys: String, CodingKey, CaseIterable {
        case formatVersion, studentID, profile, catalogCount, catalogFingerprint, configurationDigest, served
        case checkpoint, events, generator, modelDigest
    }

    /// Decodes a snapshot of version 2, or converts one of version 1.
    ///
    /// - Parameter decoder: The decoder.
    /// - Throws: `DecodingError` for an unknown version, a wrong type or an unknown key, or an
    ///   inconsistent version-1 snapshot (a card both served and unseen, a duplicate card).
    public init(from decoder: any Decoder) throws {
        let versionContainer = try decoder.container(keyedBy: VersionKey.self)
        let version = try versionContainer.decode(Int.self, forKey: .formatVersion)
        switch version {
        case 1:
            self = try SessionSnapshotV1<Profile>(from: decoder).converted()
        case 2:
            try decoder.rejectUnknownKeys(CodingKeys.self)
            let c = try decoder.container(keyedBy: CodingKeys.self)
            formatVersion = version
            studentID = try c.decode(String.self, forKey: .studentID)
            profile = try c.decode(Profile.self, forKey: .profile)
            catalogCount = try c.decode(Int.self, forKey: .catalogCount)
            catalogFingerprint = try c.decodeIfPresent(String.self, forKey: .catalogFingerprint)
            configurationDigest = try c.decodeIfPresent(String.self, forKey: .configurationDigest)
            served = try c.decode([ServedCard].self, forKey: .served)
            checkpoint = try c.decodeIfPresent(SessionCheckpoint.self, forKey: .checkpoint)
            events = try c.decode([SessionEvent].self, forKey: .events)
            generator = try c.decode(SplitMix64.self, forKey: .generator)
            modelDigest = try c.decode(String.self, forKey: .modelDigest)
        default:
            throw DecodingError.dataCorruptedError(
                forKey: .formatVersion, in: versionContainer,
                debugDescription: "unknown snapshot format version \(version) (this library reads 1 and 2)")
        }
    }

    init(formatVersion: Int, studentID: String, profile: Profile, catalogCount: Int, catalogFingerprint: String?,
         configurationDigest: String?, served: [ServedCard], checkpoint: SessionCheckpoint?, events: [SessionEvent],
         generator: SplitMix64, modelDigest: String) {
        self.formatVersion = formatVersion
        self.studentID = studentID
        self.profile = profile
        self.catalogCount = catalogCount
        self.catalogFingerprint = catalogFingerprint
        self.configurationDigest = configurationDigest
        self.served = served
        self.checkpoint = checkpoint
        self.events = events
        self.generator = generator
        self.modelDigest = modelDigest
    }

    private enum VersionKey: String, CodingKey { case formatVersion }

    /// The largest snapshot JSON accepted, in bytes (a version-2 snapshot is ~200 bytes per
    /// card; version 1 stored the whole catalog's pools).
    public static var maxJSONBytes: Int { 8 << 20 }

    /// Parses a snapshot from JSON (strict: line:column for malformed JSON, duplicate and
    /// unknown keys rejected), ready for `SwipeEngine.restore(_:)`.
    ///
    /// - Parameters:
    ///   - json: The JSON bytes.
    ///   - source: The name shown in errors.
    /// - Returns: The snapshot.
    /// - Throws: `DataError` naming the field.
    public static func decode(json: Data, source: String) throws(DataError) -> SessionSnapshot {
        try JSONInput.decode(SessionSnapshot.self, from: json, source: source, maxBytes: maxJSONBytes)
    }

    /// The snapshot as compact JSON with sorted keys (deterministic bytes for equal snapshots).
    ///
    /// The bytes are `JSONEncoder`'s (sorted keys, slashes unescaped), but the served cards —
    /// most of a snapshot, and a service writes one every few dozen events — are written
    /// directly (`JSONWriter`): `JSONEncoder` spent about 4 µs a card on them.
    ///
    /// - Returns: The JSON.
    /// - Throws: `EncodingError` if the profile holds a value JSON cannot carry (NaN).
    /// - Complexity: O(served cards + events).
    public func jsonData() throws -> Data {
        let encoder = Self.encoder
        var rest = self
        rest.served = []
        let data = try encoder.encode(rest)
        return try Self.splice(served, into: data, studentID: encoder.encode([studentID])) ?? encoder.encode(self)
    }

    /// Puts `cards` into `data`, the encoding of the same snapshot with no served cards.
    ///
    /// With sorted keys `served` and `studentID` are a snapshot's last two keys, so that
    /// encoding ends with `,"served":[],"studentID":<id>}`; the cards go between the brackets.
    ///
    /// - Parameters:
    ///   - cards: The served cards.
    ///   - data: The snapshot's encoding without them.
    ///   - studentID: `[studentID]` as `JSONEncoder` encodes it (the id's exact bytes).
    /// - Returns: The whole encoding, or nil when `data` does not end as expected (the caller
    ///   then encodes everything with `JSONEncoder`).
    static func splice(_ cards: [ServedCard], into data: Data, studentID: Data) throws -> Data? {
        guard studentID.count >= 2 else { return nil }
        var tail = Array(#","served":[],"studentID":"#.utf8)
        tail += studentID.dropFirst().dropLast()
        tail.append(UInt8(ascii: "}"))
        guard data.count >= tail.count, data.suffix(tail.count).elementsEqual(tail) else { return nil }
        var w = JSONWriter(capacity: data.count + cards.count * 150)
        w.raw(Array(data.prefix(data.count - tail.count)))
        w.raw(#","served":"#)
        try w.array(cards)
        w.raw(#","studentID":"#)
        w.raw(Array(studentID.dropFirst().dropLast()))
        w.raw("}")
        return Data(w.bytes)
    }

    /// The encoder `jsonData()` matches.
    static var encoder: JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }
}

/// A model-changing event of a session, in the order it happened.
public enum SessionEvent: Sendable, Hashable, Codable {
    /// A recorded swipe.
    case swipe(Swipe)
    /// An answer to a feedback prompt (no options: dismissed).
    case feedback(cardID: String, options: [FeedbackOption])
    /// A judgement outside the deck (`SwipeSession.recordJudgement(_:weight:)`).
    case judged(Swipe, weight: Double)
    /// A swipe or judgement on an item that had left the catalog when the session was migrated
    /// (`SessionMigration`): it still counts (swipe total, phase, idempotency by id) but
    /// teaches nothing, because the item's features are gone.
    case retired(Swipe)

    private enum CodingKeys: String, CodingKey, CaseIterable { case swipe, feedback, judged, retired }
    private enum FeedbackKeys: String, CodingKey, CaseIterable { case cardID = "card_id", options }
    private enum JudgedKeys: String, CodingKey, CaseIterable { case swipe, weight }

    /// Encodes `{"swipe": {…}}`, `{"feedback": {"card_id", "options"}}`,
    /// `{"judged": {"swipe", "weight"}}` or `{"retired": {…}}`.
    ///
    /// - Parameter encoder: The encoder.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        switch self {
        case let .swipe(swipe): try c.encode(swipe, forKey: .swipe)
        case let .feedback(cardID, options):
            var f = c.nestedContainer(keyedBy: FeedbackKeys.self, forKey: .feedback)
            try f.encode(cardID, forKey: .cardID)
            try f.encode(options, forKey: .options)
        case let .judged(swipe, weight):
            var j = c.nestedContainer(keyedBy: JudgedKeys.self, forKey: .judged)
            try j.encode(swipe, forKey: .swipe)
            try j.encode(weight, forKey: .weight)
        case let .retired(swipe): try c.encode(swipe, forKey: .retired)
        }
    }

    /// Decodes one event: exactly one of `swipe`, `feedback`, `judged` or `retired`.
    ///
    /// - Parameter decoder: The decoder.
    /// - Throws: `DecodingError` for anything else.
    public init(from decoder: any Decoder) throws {
        try decoder.rejectUnknownKeys(CodingKeys.self)
        let c = try decoder.container(keyedBy: CodingKeys.self)
        guard c.allKeys.count == 1, let key = c.allKeys.first else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath,
                                                    debugDescription: "an event holds exactly one of \"swipe\", \"feedback\", \"judged\" or \"retired\""))
        }
        switch key {
        case .swipe: self = .swipe(try c.decode(Swipe.self, forKey: .swipe))
        case .feedback:
            let f = try c.nestedContainer(keyedBy: FeedbackKeys.self, forKey: .feedback)
            self = .feedback(cardID: try f.decode(String.self, forKey: .cardID),
                             options: try f.decode([FeedbackOption].self, forKey: .options))
        case .judged:
            let j = try c.nestedContainer(keyedBy: JudgedKeys.self, forKey: .judged)
            self = .judged(try j.decode(Swipe.self, forKey: .swipe), weight: try j.decode(Double.self, forKey: .weight))
        case .retired: self = .retired(try c.decode(Swipe.self, forKey: .retired))
        }
    }
}

/// The state a restored version-1 snapshot starts from: its stored model, the swipes applied
/// before it, and the feedback bookkeeping at that point.
public struct SessionCheckpoint: Sendable, Equatable, Codable {
    /// The model at the checkpoint.
    public var model: PreferenceModel
    /// Swipes applied before the checkpoint (their cards' `action`s are set).
    public var swipes: [Swipe]
    /// The swipe count when feedback was last asked.
    public var lastFeedbackSwipe: Int?
    /// Open feedback prompts at the checkpoint.
    public var pendingFeedback: [PendingFeedback]

    /// An open feedback prompt.
    public struct PendingFeedback: Sendable, Hashable, Codable {
        /// The card's catalog row.
        public var row: Int
        /// The options offered.
        public var options: [FeedbackOption]
    }
}

/// The version-1 layout, read only to convert it.
private struct SessionSnapshotV1<Profile: Sendable & Hashable & Codable>: Decodable {
    var studentID: String
    var profile: Profile
    var catalogCount: Int
    var model: PreferenceModel
    var pools: [CardPool<Int, Float>]
    var served: [ServedCard]
    var swipes: [Swipe]
    var totalSwipes: Int
    var bandServed: [Int]
    var shownRegions: [String]
    var lastFeedbackSwipe: Int?
    var pendingFeedback: [SessionCheckpoint.PendingFeedback]
    var generator: SplitMix64

    /// The pools are derived data (unseen = not served); they are checked for consistency with
    /// the served cards and dropped. Counters are re-derived and checked on restore.
    func converted() throws -> SessionSnapshot<Profile> {
        let servedRows = Set(served.map(\.row))
        var seen = Set<Int>()
        for pool in pools {
            for (row, _) in pool.unseen {
                guard !servedRows.contains(row) else {
                    throw DecodingError.dataCorrupted(.init(codingPath: [], debugDescription: "card row \(row) is both served and unseen"))
                }
                guard seen.insert(row).inserted else {
                    throw DecodingError.dataCorrupted(.init(codingPath: [], debugDescription: "card row \(row) is in two pools"))
                }
            }
        }
        guard seen.count + servedRows.count == catalogCount, served.count == servedRows.count else {
            throw DecodingError.dataCorrupted(.init(codingPath: [], debugDescription:
                "the pools and served cards hold \(seen.count + served.count) cards, the catalog \(catalogCount)"))
        }
        guard bandServed.count == 3, bandServed.allSatisfy({ (0...catalogCount).contains($0) }) else {
            throw DecodingError.dataCorrupted(.init(codingPath: [], debugDescription: "bandServed must hold 3 counts in 0...\(catalogCount)"))
        }
        guard totalSwipes == swipes.count else {
            throw DecodingError.dataCorrupted(.init(codingPath: [], debugDescription:
                "totalSwipes is \(totalSwipes) but \(swipes.count) swipes are stored"))
        }
        return SessionSnapshot(
            formatVersion: 2, studentID: studentID, profile: profile, catalogCount: catalogCount, catalogFingerprint: nil,
            configurationDigest: nil, served: served,
            checkpoint: SessionCheckpoint(model: model, swipes: swipes, lastFeedbackSwipe: lastFeedbackSwipe,
                                          pendingFeedback: pendingFeedback),
            events: [], generator: generator, modelDigest: model.digest)
    }
}

extension SwipeSession {
    /// The session's state as a Codable value.
    ///
    /// - Returns: A snapshot; `SwipeEngine.restore(_:)` turns it back into an identical
    ///   session.
    /// - Complexity: O(served + events + D²).
    @_specialize(where M == ItemMatcher)
    public func snapshot() -> SessionSnapshot<M.Profile> {
        SessionSnapshot(
            formatVersion: SessionSnapshot<M.Profile>.currentFormatVersion, studentID: studentID, profile: profile,
            catalogCount: engine.matcher.catalog.count, catalogFingerprint: engine.catalogFingerprint,
            configurationDigest: engine.learningDigest, served: served, checkpoint: checkpoint, events: events,
            generator: rng, modelDigest: model.digest)
    }
}

extension SwipeEngine {
    /// The most cards or events a snapshot may hold: a restore replays every event, so an
    /// unbounded log would cost unbounded time.
    public static var maxSnapshotEvents: Int { 100_000 }

    /// Restores a session from a snapshot, validating everything in it.
    ///
    /// Rebuilds the student from the profile, checks every served card against the catalog and
    /// the engine's rules (position, id, band, probe schedule, propensity, predicted match),
    /// then replays the events through `recordSwipe(_:)` and `submitFeedback(cardID:options:)`.
    /// A tampered, truncated or foreign snapshot is a `DataError`; it never traps and never
    /// restores into an inconsistent session.
    ///
    /// - Parameter snapshot: A snapshot from `SwipeSession.snapshot()` (or a converted version 1).
    /// - Returns: A session whose next recommendations, swipes and feedback behave exactly as
    ///   the original's would have.
    /// - Throws: `DataError` `.invalidValue` naming what does not fit (the field in `details`),
    ///   or the profile's own errors.
    /// - Complexity: O(N) to resolve the student, plus O(events × D²) (O(D³) per stable-phase
    ///   swipe) to replay.
    @_specialize(where M == ItemMatcher)
    public func restore(_ snapshot: SessionSnapshot<M.Profile>) throws(DataError) -> SwipeSession<M> {
        let source = "session snapshot \(snapshot.studentID.prefix(SwipeSession<M>.maxIDLength))"
        func invalid(_ field: String, _ detail: String) -> DataError {
            DataError(.invalidValue, source: source, field: field, detail: "\(field): \(detail)")
        }
        guard snapshot.formatVersion == SessionSnapshot<M.Profile>.currentFormatVersion else {
            throw invalid("formatVersion", "unknown snapshot format version \(snapshot.formatVersion)")
        }
        let catalog = matcher.catalog
        guard snapshot.catalogCount == catalog.count else {
            throw invalid("catalogCount", "taken over a catalog of \(snapshot.catalogCount) items, this one has \(catalog.count)")
        }
        if let fingerprint = snapshot.catalogFingerprint, fingerprint != catalogFingerprint {
            throw invalid("catalogFingerprint", "taken over another catalog (fingerprint \(fingerprint.prefix(32)), this one \(catalogFingerprint))")
        }
        if let digest = snapshot.configurationDigest, digest != learningDigest {
            throw invalid("configurationDigest", "taken under another engine configuration or population prior")
        }
        guard snapshot.studentID.utf8.count <= SwipeSession<M>.maxIDLength else {
            throw invalid("studentID", "longer than \(SwipeSession<M>.maxIDLength) bytes")
        }
        guard snapshot.served.count <= catalog.count, snapshot.events.count <= Self.maxSnapshotEvents else {
            throw invalid("events", "\(snapshot.served.count) served cards and \(snapshot.events.count) events exceed the catalog or \(Self.maxSnapshotEvents)")
        }
        let student = try resolvedStudent(snapshot.profile)
        var session = SwipeSession(engine: self, studentID: snapshot.studentID, student: student,
                                   model: coldStartModel(for: student), rng: snapshot.generator)

        // Served cards: each must be what this engine could have served at that position.
        for (i, card) in snapshot.served.enumerated() {
            let field = "served[\(i)]"
            // Consecutive from 1, except in a migrated session, which keeps its cards' original
            // positions with gaps where items left the catalog: increasing either way.
            guard card.position >= i + 1, card.position > (i == 0 ? 0 : snapshot.served[i - 1].position) else {
                throw invalid("\(field).position", "is \(card.position), expected more than \(i == 0 ? 0 : snapshot.served[i - 1].position)")
            }
            guard card.row >= 0, card.row < catalog.count else { throw invalid("\(field).row", "\(card.row) is not a catalog row") }
            guard catalog.ids[card.row] == card.cardID else {
                throw invalid("\(field).card_id", "\"\(card.cardID.prefix(64))\" is not the card at row \(card.row)")
            }
            guard session.servedIndexByRow.updateValue(i, forKey: card.row) == nil else {
                throw invalid("\(field).row", "card \(card.cardID) is served twice")
            }
            let band: GeoBand? = session.isBanded ? GeoBand.allCases[session.poolIndex(row: card.row, distances: student.distances)] : nil
            // A band that ran out is backfilled, so a card may come from a later band than
            // planned but is always recorded under the band it belongs to.
            guard card.band == band else { throw invalid("\(field).band", "is \(card.band?.rawValue ?? "null"), the card belongs to \(band?.rawValue ?? "null")") }
            guard card.isProbe == probes.isProbe(position: card.position) else {
                throw invalid("\(field).is_probe", "does not follow the probe schedule (every \(configuration.probeInterval) cards)")
            }
            guard card.propensity.isFinite, card.propensity > 0, card.propensity <= 1, card.isProbe || card.propensity == 1 else {
                throw invalid("\(field).propensity", "must be in (0, 1] (1 for a card that is not a probe), got \(card.propensity)")
            }
            guard card.predictedMatch.isFinite, (0...1).contains(card.predictedMatch) else {
                throw invalid("\(field).predicted_match", "must be in 0...1, got \(card.predictedMatch)")
            }
            var stored = card
            stored.action = nil
            session.served.append(stored)
            if let band { session.bandServed[band.index] += 1 }
            session.markShown(row: card.row)
        }

        // The checkpoint of a converted version-1 snapshot.
        if let checkpoint = snapshot.checkpoint {
            let model = checkpoint.model
            guard model.dimension == modelDimension else {
                throw invalid("checkpoint.model.dimension", "is \(model.dimension), this engine's model has \(modelDimension)")
            }
            guard model.offset == matcher.calibration.offset, model.scale == matcher.calibration.scale else {
                throw invalid("checkpoint.model", "uses another calibration (offset \(model.offset), scale \(model.scale))")
            }
            session.model = model
            for (i, swipe) in checkpoint.swipes.enumerated() {
                let field = "checkpoint.swipes[\(i)]"
                guard swipe.swipeID.utf8.count <= SwipeSession<M>.maxIDLength, session.swipes[swipe.swipeID] == nil else {
                    throw invalid(field, "duplicate or overlong swipe id")
                }
                guard let row = catalog.row(of: swipe.cardID), let index = session.servedIndexByRow[row] else {
                    throw invalid(field, "card \"\(swipe.cardID.prefix(64))\" was not served")
                }
                guard session.served[index].action == nil else { throw invalid(field, "card \(swipe.cardID) is swiped twice") }
                session.served[index].action = swipe.action
                session.swipes[swipe.swipeID] = swipe
                if swipe.action == .like { session.likedRows.insert(row) }
            }
            session.totalSwipes = checkpoint.swipes.count
            if let last = checkpoint.lastFeedbackSwipe {
                guard (1...max(1, session.totalSwipes)).contains(last), session.totalSwipes > 0 else {
                    throw invalid("checkpoint.lastFeedbackSwipe", "\(last) is not a swipe of this session")
                }
            }
            session.lastFeedbackSwipe = checkpoint.lastFeedbackSwipe
            for (i, pending) in checkpoint.pendingFeedback.enumerated() {
                let field = "checkpoint.pendingFeedback[\(i)]"
                guard pending.row >= 0, pending.row < catalog.count, let index = session.servedIndexByRow[pending.row],
                      let action = session.served[index].action else {
                    throw invalid(field, "row \(pending.row) is not a swiped card")
                }
                let offerable = matcher.feedbackOptions(row: pending.row, action: action, student: student)
                guard !pending.options.isEmpty, Set(pending.options).count == pending.options.count,
                      pending.options.allSatisfy(offerable.contains) else {
                    throw invalid(field, "options are not ones this card could be asked about")
                }
                guard session.pendingFeedback.updateValue(pending.options, forKey: pending.row) == nil else {
                    throw invalid(field, "row \(pending.row) is open twice")
                }
            }
            session.checkpoint = checkpoint
        }

        // Replay: the live code paths validate every reference and rebuild the model.
        for (i, event) in snapshot.events.enumerated() {
            switch event {
            case let .swipe(swipe):
                let result: SwipeResult
                do { result = try session.recordSwipe(swipe) } catch { throw invalid("events[\(i)].swipe", error.message) }
                guard result.outcome == .recorded else {
                    throw invalid("events[\(i)].swipe", "swipe id \(DataError.truncated(swipe.swipeID)) appears twice")
                }
            case let .feedback(cardID, options):
                do { try session.submitFeedback(cardID: cardID, options: options) } catch {
                    throw invalid("events[\(i)].feedback", error.message)
                }
            case let .judged(swipe, weight):
                let result: SwipeResult
                do { result = try session.recordJudgement(swipe, weight: weight) } catch {
                    throw invalid("events[\(i)].judged", error.message)
                }
                guard result.outcome == .recorded else {
                    throw invalid("events[\(i)].judged", "swipe id \(DataError.truncated(swipe.swipeID)) appears twice")
                }
            case let .retired(swipe):
                do { try session.recordRetired(swipe) } catch { throw invalid("events[\(i)].retired", error.message) }
            }
        }
        for (i, card) in snapshot.served.enumerated() where card.action != session.served[i].action {
            throw invalid("served[\(i)].action", "is \(card.action?.rawValue ?? "null") but the events say \(session.served[i].action?.rawValue ?? "null")")
        }
        guard session.model.digest == snapshot.modelDigest else {
            throw invalid("modelDigest", "the events do not lead to the stored model (tampered events, or another catalog or configuration)")
        }
        return session
    }
}
