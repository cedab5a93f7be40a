import SwipeRankNumerics

/// Everything a `SwipeSession` needs to continue exactly where it stopped, as a Codable value
/// (store it as JSON in SQLite, PostgreSQL, a file…).
///
/// Versioned: `formatVersion` is 1; a snapshot of an unknown version is rejected rather than
/// misread. The catalog itself is not included: restore with an engine over the same catalog
/// (checked by its size and feature dimension). Generic over the matcher's profile type, which
/// is stored as given.
public struct SessionSnapshot<Profile: Sendable & Hashable & Codable>: Sendable, Codable, Equatable {
    /// The snapshot format version this library writes.
    public static var currentFormatVersion: Int { 1 }

    /// The format version.
    public var formatVersion: Int
    /// The student's id.
    public var studentID: String
    /// The profile.
    public var profile: Profile
    /// The catalog's item count when taken.
    public var catalogCount: Int
    /// The model.
    public var model: PreferenceModel
    /// The pools, one per band (one without a home).
    public var pools: [CardPool<Int, Float>]
    /// Served cards, in order.
    public var served: [ServedCard]
    /// Recorded swipes, sorted by swipe id.
    public var swipes: [Swipe]
    /// Swipes recorded.
    public var totalSwipes: Int
    /// Cards served per band.
    public var bandServed: [Int]
    /// Regions shown, sorted.
    public var shownRegions: [String]
    /// The swipe count when feedback was last asked.
    public var lastFeedbackSwipe: Int?
    /// Open feedback prompts: catalog row and offered options.
    public var pendingFeedback: [PendingFeedback]
    /// The random generator's state.
    public var generator: SplitMix64
    /// Model and pool versions (bulk re-score timestamps).
    public var modelVersion: Int64
    /// See `modelVersion`.
    public var poolsVersion: Int64

    /// An open feedback prompt.
    public struct PendingFeedback: Sendable, Codable, Equatable {
        /// The card's catalog row.
        public var row: Int
        /// The options offered.
        public var options: [FeedbackOption]
    }
}

extension SwipeSession {
    /// The session's state as a Codable value.
    ///
    /// - Returns: A snapshot; `SwipeEngine.restore(_:)` turns it back into an identical
    ///   session.
    /// - Complexity: O(N + swipes).
    @_specialize(where M == SchoolMatcher)
    @_specialize(where M == ItemMatcher)
    public func snapshot() -> SessionSnapshot<M.Profile> {
        SessionSnapshot(
            formatVersion: SessionSnapshot<M.Profile>.currentFormatVersion, studentID: studentID, profile: student.profile,
            catalogCount: engine.matcher.catalog.count, model: model, pools: pools, served: served,
            swipes: swipes.values.sorted { $0.swipeID < $1.swipeID }, totalSwipes: totalSwipes, bandServed: bandServed,
            shownRegions: regionNames.indices.filter { regionShown[$0] }.map { regionNames[$0] },
            lastFeedbackSwipe: lastFeedbackSwipe,
            pendingFeedback: pendingFeedback.sorted { $0.key < $1.key }.map { .init(row: $0.key, options: $0.value) },
            generator: rng, modelVersion: modelVersion, poolsVersion: poolsVersion)
    }
}

extension SwipeEngine {
    /// Restores a session from a snapshot.
    ///
    /// - Parameter snapshot: A snapshot from `SwipeSession.snapshot()`.
    /// - Returns: A session whose next recommendations, swipes and feedback behave exactly as
    ///   the original's would have.
    /// - Throws: `DataError` `.invalidValue` for an unknown format version or a snapshot that
    ///   does not fit this engine's catalog (size, dimension, rows, bands), or the profile's
    ///   own errors.
    @_specialize(where M == SchoolMatcher)
    @_specialize(where M == ItemMatcher)
    public func restore(_ snapshot: SessionSnapshot<M.Profile>) throws(DataError) -> SwipeSession<M> {
        func invalid(_ detail: String) -> DataError {
            DataError(.invalidValue, source: "session snapshot \(snapshot.studentID)", detail: detail)
        }
        guard snapshot.formatVersion == SessionSnapshot<M.Profile>.currentFormatVersion else {
            throw invalid("unknown snapshot format version \(snapshot.formatVersion) (this library reads \(SessionSnapshot<M.Profile>.currentFormatVersion))")
        }
        let catalog = matcher.catalog
        guard snapshot.catalogCount == catalog.count,
              snapshot.model.dimension == modelDimension else {
            throw invalid("taken over a different catalog (\(snapshot.catalogCount) items, model dimension \(snapshot.model.dimension))")
        }
        let student = try matcher.student(snapshot.profile)
        var session = SwipeSession(engine: self, studentID: snapshot.studentID, student: student, model: snapshot.model,
                                   rng: snapshot.generator)
        guard snapshot.pools.count == session.pools.count else { throw invalid("has \(snapshot.pools.count) pools, expected \(session.pools.count)") }
        for (p, pool) in snapshot.pools.enumerated() {
            for (row, _) in pool.unseen where !(0..<catalog.count).contains(row) || session.poolIndex(session.bandOfRow[row]) != p {
                throw invalid("pool \(p) holds row \(row), which does not belong to it")
            }
        }
        let rows = 0..<catalog.count
        guard snapshot.served.allSatisfy({ rows.contains($0.row) }), snapshot.pendingFeedback.allSatisfy({ rows.contains($0.row) }) else {
            throw invalid("refers to rows outside the catalog")
        }
        session.pools = snapshot.pools
        session.served = snapshot.served
        session.servedIndexByRow = Dictionary(uniqueKeysWithValues: snapshot.served.enumerated().map { ($1.row, $0) })
        session.swipes = Dictionary(uniqueKeysWithValues: snapshot.swipes.map { ($0.swipeID, $0) })
        session.totalSwipes = snapshot.totalSwipes
        session.bandServed = snapshot.bandServed
        for region in snapshot.shownRegions {
            guard let code = session.regionNames.firstIndex(of: region) else { throw invalid("unknown region \"\(region)\"") }
            session.regionShown[code] = true
        }
        session.lastFeedbackSwipe = snapshot.lastFeedbackSwipe
        session.pendingFeedback = Dictionary(uniqueKeysWithValues: snapshot.pendingFeedback.map { ($0.row, $0.options) })
        session.modelVersion = snapshot.modelVersion
        session.poolsVersion = snapshot.poolsVersion
        return session
    }
}
