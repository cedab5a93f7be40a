import Foundation
import Logging
import PostgresNIO
import SwipeRankStore

// The app-event log, the catalog change log and LISTEN/NOTIFY between instances.
extension PostgresStore: AppEventLog {
    /// See `AppEventLog.appendAppEvents(_:for:)`: one statement for the whole batch, under a
    /// per-student advisory lock so positions only grow in commit order (a reader's cursor
    /// never skips an event committed later with a smaller position).
    ///
    /// - Parameters:
    ///   - events: The events.
    ///   - studentID: The student.
    public func appendAppEvents(_ events: [AppEvent], for studentID: String) async throws(StoreError) -> Int {
        guard !events.isEmpty else { return 0 }
        return try await call("appending app events") {
            try await client.withTransaction(logger: logger) { db in
                try await db.query("SELECT pg_advisory_xact_lock(hashtext('app_events:' || \(studentID)))", logger: self.logger)
                var base = 0
                for try await last in try await db.query(
                    "SELECT COALESCE(MAX(seq), 0) FROM app_events WHERE student_id = \(studentID)", logger: self.logger).decode(Int.self) {
                    base = last
                }
                var added = 0
                for try await _ in try await db.query("""
                    INSERT INTO app_events (student_id, seq, event_id, type, payload, occurred_at, received_at)
                    SELECT \(studentID), \(base) + e.ord, e.id, e.type, e.payload, e.occurred, e.received
                    FROM unnest(\(events.map(\.eventID)), \(events.map(\.type)), \(events.map(\.payload)),
                                \(events.map(\.occurredAt)), \(events.map(\.receivedAt)))
                         WITH ORDINALITY AS e(id, type, payload, occurred, received, ord)
                    ON CONFLICT (student_id, event_id) DO NOTHING RETURNING 1
                    """, logger: self.logger).decode(Int.self) { added += 1 }
                return added
            }
        }
    }

    /// See `AppEventLog.appEvents(of:after:limit:)`.
    ///
    /// - Parameters:
    ///   - studentID: The student.
    ///   - after: The cursor.
    ///   - limit: At most this many.
    public func appEvents(of studentID: String, after: Int, limit: Int) async throws(StoreError) -> [AppEvent] {
        try await call("reading app events") {
            var out: [AppEvent] = []
            for try await (seq, id, type, payload, occurred, received) in try await client.query("""
                SELECT seq, event_id, type, payload, occurred_at, received_at FROM app_events
                WHERE student_id = \(studentID) AND seq > \(after) ORDER BY seq LIMIT \(max(0, limit))
                """, logger: logger).decode((Int, String, String, String, Int64, Int64).self) {
                out.append(AppEvent(seq: seq, eventID: id, type: type, payload: payload, occurredAt: occurred, receivedAt: received))
            }
            return out
        }
    }

    /// See `AppEventLog.purgeAppEvents(receivedBefore:)`.
    ///
    /// - Parameter time: The cut-off.
    public func purgeAppEvents(receivedBefore time: Int64) async throws(StoreError) -> Int {
        try await call("purging app events") {
            var removed = 0
            for try await _ in try await client.query("DELETE FROM app_events WHERE received_at < \(time) RETURNING 1",
                                                      logger: logger).decode(Int.self) { removed += 1 }
            return removed
        }
    }
}

extension PostgresStore: CatalogLog {
    /// See `CatalogLog.catalogSequence()`.
    public func catalogSequence() async throws(StoreError) -> Int {
        try await call("reading the catalog sequence") {
            var last = 0
            for try await seq in try await client.query("SELECT COALESCE(MAX(seq), 0) FROM catalog_changes", logger: logger)
                .decode(Int.self) { last = seq }
            return last
        }
    }

    /// See `CatalogLog.catalogChanges(after:limit:)`.
    ///
    /// - Parameters:
    ///   - after: Exclusive lower bound.
    ///   - limit: At most this many.
    public func catalogChanges(after: Int, limit: Int) async throws(StoreError) -> [CatalogChange] {
        let rows = try await call("reading catalog changes") {
            var out: [(Int, String, String, Int64)] = []
            for try await row in try await client.query("""
                SELECT seq, item_id, fields, created_at FROM catalog_changes WHERE seq > \(after) ORDER BY seq LIMIT \(max(1, limit))
                """, logger: logger).decode((Int, String, String, Int64).self) { out.append(row) }
            return out
        }
        var out: [CatalogChange] = []
        out.reserveCapacity(rows.count)
        for (seq, id, fields, createdAt) in rows {
            // A deletion is stored as the JSON literal null.
            out.append(CatalogChange(seq: seq, itemID: id, fields: fields == "null" ? nil : try CatalogChange.fields(from: Data(fields.utf8)),
                                     createdAt: createdAt))
        }
        return out
    }

    /// See `CatalogLog.appendCatalogChanges(_:expectedSequence:)`: one statement for the whole
    /// batch, under an advisory lock that serializes writers of the catalog.
    ///
    /// - Parameters:
    ///   - changes: The changes.
    ///   - expectedSequence: The sequence the caller read.
    public func appendCatalogChanges(_ changes: [CatalogChange], expectedSequence: Int) async throws(StoreError) -> Int? {
        let ids = changes.map(\.itemID)
        let fields = changes.map { $0.fieldsJSON.map { String(decoding: $0, as: UTF8.self) } ?? "null" }
        let times = changes.map(\.createdAt)
        return try await call("appending catalog changes") {
            try await client.withTransaction(logger: logger) { db -> Int? in
                try await db.query("SELECT pg_advisory_xact_lock(hashtext('catalog_changes:' || \(self.schema)))", logger: self.logger)
                var last = 0
                for try await seq in try await db.query("SELECT COALESCE(MAX(seq), 0) FROM catalog_changes", logger: self.logger)
                    .decode(Int.self) { last = seq }
                guard last == expectedSequence else { return nil }
                try await db.query("""
                    INSERT INTO catalog_changes (seq, item_id, fields, created_at)
                    SELECT \(last) + c.ord, c.id, c.fields, c.created
                    FROM unnest(\(ids), \(fields), \(times)) WITH ORDINALITY AS c(id, fields, created, ord)
                    """, logger: self.logger)
                return last + changes.count
            }
        }
    }
}

extension PostgresStore: StoreNotifications {
    /// The channel: one per schema, so stores in separate schemas do not hear each other.
    private var channel: String { "swiperank_" + schema.lowercased() }

    /// See `StoreNotifications.notify(_:)`: `pg_notify`, delivered to listeners when the
    /// sending transaction commits.
    ///
    /// - Parameter message: The message.
    public func notify(_ message: String) async throws(StoreError) {
        _ = try await call("notifying") { try await client.query("SELECT pg_notify(\(channel), \(message))", logger: logger) }
    }

    /// See `StoreNotifications.listen(_:)`: `LISTEN` on a connection of the pool held for as
    /// long as it listens.
    ///
    /// - Parameter onMessage: Called per message.
    public func listen(_ onMessage: @escaping @Sendable (String) -> Void) async throws {
        try await client.withConnection { connection in
            try await connection.listen(on: channel) { notifications in
                for try await notification in notifications { onMessage(notification.payload) }
            }
        }
    }
}
