extension CardPool: Codable where ID: Codable, Score: Codable {
    private enum CodingKeys: String, CodingKey { case unseen, history, version }

    /// An unseen card as persisted.
    private struct StoredCard: Codable {
        let id: ID
        let score: Score
        let timestamp: Int64
    }

    /// Encodes the pool: unseen cards in first-insertion order (which is the tie order) with
    /// scores and timestamps, and the history in order.
    ///
    /// - Parameter encoder: The encoder.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(1, forKey: .version)
        let unseen = heap.unordered.sorted { $0.handle < $1.handle }
            .map { StoredCard(id: ids[$0.handle], score: $0.score, timestamp: timestamps[$0.handle]) }
        try c.encode(unseen, forKey: .unseen)
        try c.encode(history, forKey: .history)
    }

    /// Decodes a pool, checking that no card appears twice and every score is finite.
    ///
    /// Handles are renumbered densely, history first, then unseen cards in stored order, so
    /// the restored pool behaves exactly like the original.
    ///
    /// - Parameter decoder: The decoder.
    /// - Throws: `DecodingError.dataCorrupted` for an unknown version, a duplicate card or a
    ///   non-finite score.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        let version = try c.decode(Int.self, forKey: .version)
        guard version == 1 else {
            throw DecodingError.dataCorruptedError(forKey: .version, in: c, debugDescription: "unknown card pool format version \(version)")
        }
        let history = try c.decode([ID].self, forKey: .history)
        let unseen = try c.decode([StoredCard].self, forKey: .unseen)
        self.init(capacity: history.count + unseen.count)
        for id in history {
            let h = ids.count
            guard handles.insertIfAbsent(id, handle: Int32(h)) == nil else {
                throw DecodingError.dataCorruptedError(forKey: .history, in: c, debugDescription: "card \(id) appears twice")
            }
            ids.append(id)
            timestamps.append(0)
            historyIndexes.append(Int32(historyHandles.count))
            historyHandles.append(Int32(h))
        }
        for card in unseen {
            guard handles[card.id] == nil else {
                throw DecodingError.dataCorruptedError(forKey: .unseen, in: c, debugDescription: "card \(card.id) appears twice")
            }
            do { try insert(card.id, score: card.score, timestamp: card.timestamp) } catch {
                throw DecodingError.dataCorruptedError(forKey: .unseen, in: c, debugDescription: error.description)
            }
        }
        _checkInvariants()
    }
}

extension CardPool: Equatable {
    /// Two pools are equal when they hold the same unseen cards with the same scores,
    /// timestamps and tie order, and the same history.
    ///
    /// - Complexity: O(n log n).
    public static func == (lhs: CardPool, rhs: CardPool) -> Bool {
        func unseen(_ pool: CardPool) -> [(ID, Score, Int64)] {
            pool.heap.unordered.sorted { $0.handle < $1.handle }.map { (pool.ids[$0.handle], $0.score, pool.timestamps[$0.handle]) }
        }
        let a = unseen(lhs), b = unseen(rhs)
        return lhs.history == rhs.history && a.count == b.count
            && zip(a, b).allSatisfy { $0.0 == $1.0 && $0.1 == $1.1 && $0.2 == $1.2 }
    }
}
