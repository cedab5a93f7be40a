import SwipeRankNumerics

/// The cards of one student: unseen cards in a max-heap by score whose scores can be updated,
/// and the seen cards as a history with fixed indexes.
///
/// The protocol the app was designed around:
/// - **promote** takes the unseen card with the top score out of the pool and appends it to
///   the history, where it keeps its index (0, 1, 2, …) for good;
/// - scores of unseen cards change by **updates** stamped with a timestamp; the update with
///   the largest timestamp wins, so an older update that arrives late never overwrites a newer
///   one; updates of seen cards are ignored.
///
///     var pool = CardPool<String, Float>()
///     try pool.insert("mit", score: 0.8, timestamp: 1)
///     try pool.insert("bu", score: 0.6, timestamp: 1)
///     try pool.update("bu", score: 0.9, timestamp: 3)     // .updated
///     try pool.update("bu", score: 0.1, timestamp: 2)     // .stale: 3 is newer
///     pool.popMax()                                       // ("bu", 0.9, history index 0)
///     try pool.update("bu", score: 1.0, timestamp: 9)     // .alreadySeen
///
/// Rules:
/// - **Order**: higher score first; equal scores go first-in, first-out (by first insertion).
/// - **Equal timestamps**: of two updates with the same timestamp the higher score is kept, so
///   the result does not depend on the order in which they arrive.
/// - **Unknown ids**: `update` of a card never inserted (or removed) changes nothing and
///   returns `.unknown`; `insert` of a card already in the pool is an update; `insert` of a
///   seen card is ignored (`.alreadySeen`).
/// - **Bad scores**: NaN or infinite scores are data errors and throw `DataError`
///   (`.nonFinite`) before anything changes.
///
/// A value type: copies are independent, and it is `Sendable` and (for `Codable` ids and
/// scores) `Codable`, restoring exactly, timestamps and tie order included.
public struct CardPool<ID: Hashable & Sendable, Score: BinaryFloatingPoint & Sendable>: Sendable {
    /// A card leaving the pool for the history.
    public struct Promotion: Sendable {
        /// The card.
        public let id: ID
        /// Its score when promoted.
        public let score: Score
        /// Its index in the history.
        public let historyIndex: Int

        @inlinable init(id: ID, score: Score, historyIndex: Int) {
            self.id = id
            self.score = score
            self.historyIndex = historyIndex
        }
    }

    /// What an insert or update did.
    public enum UpdateOutcome: Sendable, Hashable {
        /// A new card entered the pool.
        case inserted
        /// The card's score and timestamp were replaced.
        case updated
        /// The card has a newer timestamp (or an equal one with a higher score); nothing changed.
        case stale
        /// The card is in the history; nothing changed.
        case alreadySeen
        /// No such card in the pool or history; nothing changed.
        case unknown
    }

    // Cards get dense handles in first-insertion order: the heap breaks ties by handle, and
    // per-card data lives in arrays indexed by handle, so the hot path hashes an id once.
    @usableFromInline var heap = IndexedMaxHeap<Score>()
    @usableFromInline var handles = HandleMap<ID>()
    // Per-card data by handle, in separate arrays: a promotion touches only `ids` and
    // `historyIndexes` (12 bytes a card), so those stay in cache for large pools.
    @usableFromInline var ids: ContiguousArray<ID> = []
    /// The timestamp of the update that set each card's current score.
    @usableFromInline var timestamps: ContiguousArray<Int64> = []
    /// The history index of each card; -1 while unseen (or removed).
    @usableFromInline var historyIndexes: ContiguousArray<Int32> = []
    /// Seen handles in order.
    @usableFromInline var historyHandles: ContiguousArray<Int32> = []

    /// Creates an empty pool.
    public init() {}

    /// Creates an empty pool with room for `capacity` cards.
    ///
    /// - Parameter capacity: The expected number of cards.
    /// - Complexity: O(capacity).
    public init(capacity: Int) {
        heap.reserveCapacity(capacity)
        handles.reserveCapacity(capacity)
        ids.reserveCapacity(capacity)
        timestamps.reserveCapacity(capacity)
        historyIndexes.reserveCapacity(capacity)
        historyHandles.reserveCapacity(capacity)
    }

    // MARK: Queries

    /// The number of unseen cards.
    ///
    /// - Complexity: O(1).
    @inlinable public var count: Int { heap.count }

    /// Whether no unseen card is left.
    ///
    /// - Complexity: O(1).
    @inlinable public var isEmpty: Bool { heap.isEmpty }

    /// The number of seen cards.
    ///
    /// - Complexity: O(1).
    @inlinable public var historyCount: Int { historyHandles.count }

    /// Whether `id` is an unseen card in the pool.
    ///
    /// - Parameter id: A card id.
    /// - Complexity: O(1) on average.
    @inlinable
    public func contains(_ id: ID) -> Bool {
        guard let h = handles[id] else { return false }
        return heap.contains(handle: Int(h))
    }

    /// Whether `id` has been promoted into the history.
    ///
    /// - Parameter id: A card id.
    /// - Complexity: O(1) on average.
    @inlinable
    public func isSeen(_ id: ID) -> Bool {
        guard let h = handles[id] else { return false }
        return historyIndexes[Int(h)] >= 0
    }

    /// The current score of an unseen card.
    ///
    /// - Parameter id: A card id.
    /// - Returns: Its score, or nil if it is not in the pool.
    /// - Complexity: O(1) on average.
    public func score(of id: ID) -> Score? {
        handles[id].flatMap { heap.score(of: Int($0)) }
    }

    /// The timestamp of the update that set an unseen card's current score.
    ///
    /// - Parameter id: A card id.
    /// - Returns: The timestamp, or nil if the card is not in the pool.
    /// - Complexity: O(1) on average.
    public func timestamp(of id: ID) -> Int64? {
        guard let h = handles[id], heap.contains(handle: Int(h)) else { return nil }
        return timestamps[Int(h)]
    }

    /// The unseen card with the top score, without removing it.
    ///
    /// - Complexity: O(1).
    public var max: (id: ID, score: Score)? {
        heap.max.map { (ids[$0.handle], $0.score) }
    }

    /// The `k` unseen cards with the top scores, best first, without removing them.
    ///
    /// - Parameter k: How many, ≥ 0.
    /// - Returns: At most `k` cards.
    /// - Complexity: O(k log k).
    public func top(_ k: Int) -> [(id: ID, score: Score)] {
        heap.top(k).map { (ids[$0.handle], $0.score) }
    }

    /// Every unseen card with its score, in no particular order.
    ///
    /// - Complexity: O(n).
    public var unseen: [(id: ID, score: Score)] {
        heap.unordered.map { (ids[$0.handle], $0.score) }
    }

    /// The ids of the unseen cards, in no particular order.
    ///
    /// - Complexity: O(n).
    @inlinable
    public var unseenIDs: [ID] { heap.unordered.map { ids[$0.handle] } }

    /// The seen cards, in the order they were promoted.
    ///
    /// - Complexity: O(history count).
    public var history: [ID] { historyHandles.map { ids[Int($0)] } }

    /// The seen card at a history index.
    ///
    /// - Parameter index: An index in `0..<historyCount`.
    /// - Returns: The card id.
    /// - Complexity: O(1).
    public func historyCard(at index: Int) -> ID {
        precondition(index >= 0 && index < historyHandles.count, "History index \(index) out of range 0..<\(historyHandles.count)")
        return ids[Int(historyHandles[index])]
    }

    /// The history index of a seen card.
    ///
    /// - Parameter id: A card id.
    /// - Returns: Its fixed index in the history, or nil if it has not been seen.
    /// - Complexity: O(1) on average.
    public func historyIndex(of id: ID) -> Int? {
        guard let h = handles[id] else { return nil }
        let index = historyIndexes[Int(h)]
        return index >= 0 ? Int(index) : nil
    }

    // MARK: Mutations

    /// Adds an unseen card, or updates it if it is already in the pool.
    ///
    /// - Parameters:
    ///   - id: The card id.
    ///   - score: A finite score.
    ///   - timestamp: When the score was computed (any monotonic clock, e.g. Unix milliseconds).
    /// - Returns: `.inserted`, or for a card already known `.updated`, `.stale` or `.alreadySeen`.
    /// - Throws: `DataError` `.nonFinite` for a NaN or infinite score; nothing changes.
    /// - Complexity: O(log n).
    @inlinable
    @discardableResult
    public mutating func insert(_ id: ID, score: Score, timestamp: Int64) throws(DataError) -> UpdateOutcome {
        try Self.check(score, id)
        let h = ids.count
        precondition(h < Int(Int32.max), "CardPool holds at most \(Int32.max) cards")
        // One lookup for the common case, a new card; a known one is updated.
        if let existing = handles.insertIfAbsent(id, handle: Int32(h)) {
            return apply(handle: Int(existing), score: score, timestamp: timestamp)
        }
        ids.append(id)
        timestamps.append(timestamp)
        historyIndexes.append(-1)
        heap.insert(handle: h, score: score)
        return .inserted
    }

    /// Updates the score of an unseen card if this update is the newest.
    ///
    /// - Parameters:
    ///   - id: The card id.
    ///   - score: A finite score.
    ///   - timestamp: When the score was computed.
    /// - Returns: `.updated`, `.stale`, `.alreadySeen` or `.unknown` (see the type's rules).
    /// - Throws: `DataError` `.nonFinite` for a NaN or infinite score; nothing changes.
    /// - Complexity: O(log n).
    @inlinable
    @discardableResult
    public mutating func update(_ id: ID, score: Score, timestamp: Int64) throws(DataError) -> UpdateOutcome {
        try Self.check(score, id)
        guard let h = handles[id] else { return .unknown }
        return apply(handle: Int(h), score: score, timestamp: timestamp)
    }

    @inlinable
    mutating func apply(handle h: Int, score: Score, timestamp: Int64) -> UpdateOutcome {
        if historyIndexes[h] >= 0 { return .alreadySeen }
        guard let current = heap.score(of: h) else { return .unknown }
        let stored = timestamps[h]
        guard timestamp > stored || (timestamp == stored && score > current) else { return .stale }
        timestamps[h] = timestamp
        heap.update(handle: h, score: score)
        return .updated
    }

    /// Re-scores every unseen card at one timestamp, restoring the heap order in O(n).
    ///
    /// Each card whose stored timestamp is older than `timestamp` takes its new score (equal
    /// timestamps keep the higher score; newer ones keep theirs, as with `update`).
    ///
    /// - Parameters:
    ///   - timestamp: When the scores were computed.
    ///   - score: The new score of a card.
    /// - Throws: `DataError` `.nonFinite` if any new score is NaN or infinite, or what `score`
    ///   throws; in both cases nothing changes.
    /// - Complexity: O(n) plus n calls of `score`.
    public mutating func rescoreAll(timestamp: Int64, _ score: (ID) throws(DataError) -> Score) throws(DataError) {
        // Compute and check everything first (in heap order), so a failure leaves the pool
        // untouched; then decide per card, and one O(n) pass applies the scores and
        // re-heapifies. Slots are read in place: copying the entries out cost as much again.
        let n = heap.count
        var fresh = ContiguousArray<Score>()
        fresh.reserveCapacity(n)
        for slot in 0..<n {
            let id = ids[heap.entry(atSlot: slot).handle]
            let s = try score(id)
            try Self.check(s, id)
            fresh.append(s)
        }
        for slot in 0..<n {
            let (h, old) = heap.entry(atSlot: slot)
            let s = fresh[slot]
            if timestamp > timestamps[h] || (timestamp == timestamps[h] && s > old) {
                timestamps[h] = timestamp
            } else {
                fresh[slot] = old
            }
        }
        var next = 0
        heap.rescoreAll { _, _ in
            defer { next += 1 }
            return fresh[next]
        }
        _checkInvariants()
    }

    /// Takes the unseen card with the top score into the history, or returns nil when the pool
    /// is empty.
    ///
    /// - Returns: The card, its score and its history index.
    /// - Complexity: O(log n).
    @inlinable
    public mutating func popMax() -> Promotion? {
        isEmpty ? nil : removeMax()
    }

    /// Takes the unseen card with the top score into the history; the pool must not be empty.
    ///
    /// - Returns: The card, its score and its history index.
    /// - Complexity: O(log n).
    @inlinable
    @discardableResult
    public mutating func removeMax() -> Promotion {
        precondition(!isEmpty, "CardPool.removeMax() on an empty pool")
        let (h, score) = heap.removeMax()
        return markSeen(handle: h, score: score)
    }

    /// Takes a specific unseen card into the history (e.g. a probe chosen off the top).
    ///
    /// - Parameter id: A card id.
    /// - Returns: The promotion, or nil if the card is not in the pool.
    /// - Complexity: O(log n).
    @discardableResult
    public mutating func promote(_ id: ID) -> Promotion? {
        guard let h = handles[id], let score = heap.remove(handle: Int(h)) else { return nil }
        return markSeen(handle: Int(h), score: score)
    }

    @inlinable
    mutating func markSeen(handle h: Int, score: Score) -> Promotion {
        let index = historyHandles.count
        historyIndexes[h] = Int32(index)
        historyHandles.append(Int32(h))
        _checkInvariants()
        return Promotion(id: ids[h], score: score, historyIndex: index)
    }

    /// Removes an unseen card from the pool without showing it; afterwards the id is unknown
    /// (a later insert adds it anew, at the back of the tie order).
    ///
    /// - Parameter id: A card id.
    /// - Returns: Its score, or nil if it was not in the pool (seen cards stay in the history).
    /// - Complexity: O(log n).
    @discardableResult
    public mutating func remove(_ id: ID) -> Score? {
        guard let h = handles[id], let score = heap.remove(handle: Int(h)) else { return nil }
        handles.remove(id)
        _checkInvariants()
        return score
    }

    @inlinable
    static func check(_ score: Score, _ id: ID) throws(DataError) {
        guard score.isFinite else {
            throw DataError(.nonFinite, source: "card pool", field: "\(id)",
                            detail: "card \(id): score \(score) is not a finite number")
        }
    }
}
