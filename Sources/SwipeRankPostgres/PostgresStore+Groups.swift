import Foundation
import Logging
import PostgresNIO
import SwipeRankStore

// Groups, their members and the webhook deliveries a group change enqueues in the same
// transaction.
extension PostgresStore: GroupStore {
    /// See `GroupStore.createGroup(_:)`.
    ///
    /// - Parameter group: The group.
    public func createGroup(_ group: GroupRecord) async throws(StoreError) -> Bool {
        do {
            return try await client.withTransaction(logger: logger) { db in
                    try await db.query("""
                        INSERT INTO groups (group_id, invite_code, creator_id, status, state, version, created_at, updated_at)
                        VALUES (\(group.groupID), \(group.inviteCode), \(group.creatorID), \(group.status), \(group.state), 1,
                                \(group.createdAt), \(group.updatedAt))
                        """, logger: self.logger)
                    try await Self.setMembers(group, db, self.logger)
                    return true
            }
        } catch where Self.isUniqueViolation(error) {
            return false  // the id or the invite code is taken
        } catch {
            throw Self.wrap("creating a group", error)
        }
    }

    /// See `GroupStore.group(_:)`.
    ///
    /// - Parameter groupID: The id.
    public func group(_ groupID: String) async throws(StoreError) -> GroupRecord? {
        try await call("reading a group") {
            try await groups(try await client.query("SELECT \(unescaped: Self.groupColumns) FROM groups g WHERE g.group_id = \(groupID)",
                                                    logger: logger)).first
        }
    }

    /// See `GroupStore.group(inviteCode:)`.
    ///
    /// - Parameter inviteCode: The code.
    public func group(inviteCode: String) async throws(StoreError) -> GroupRecord? {
        try await call("reading a group") {
            try await groups(try await client.query("SELECT \(unescaped: Self.groupColumns) FROM groups g WHERE g.invite_code = \(inviteCode)",
                                                    logger: logger)).first
        }
    }

    /// See `GroupStore.updateGroup(_:expectedVersion:)`.
    ///
    /// - Parameters:
    ///   - group: The new record.
    ///   - expectedVersion: The version read.
    public func updateGroup(_ group: GroupRecord, expectedVersion: Int) async throws(StoreError) -> AppendOutcome {
        try await updateGroup(group, expectedVersion: expectedVersion, enqueuing: [])
    }
}

extension PostgresStore: WebhookOutbox {
    /// See `WebhookOutbox.updateGroup(_:expectedVersion:enqueuing:)`.
    ///
    /// - Parameters:
    ///   - group: The new state.
    ///   - expectedVersion: The version read.
    ///   - deliveries: Stored in the same transaction.
    public func updateGroup(_ group: GroupRecord, expectedVersion: Int, enqueuing deliveries: [WebhookDelivery]) async throws(StoreError)
        -> AppendOutcome {
        try await call("updating a group") {
            try await client.withTransaction(logger: logger) { db in
                var updated = 0
                for try await _ in try await db.query("""
                    UPDATE groups SET status = \(group.status), state = \(group.state), version = version + 1,
                        updated_at = \(group.updatedAt)
                    WHERE group_id = \(group.groupID) AND version = \(expectedVersion) RETURNING 1
                    """, logger: self.logger).decode(Int.self) { updated += 1 }
                guard updated == 1 else { return AppendOutcome.conflict }
                try await Self.setMembers(group, db, self.logger)
                for d in deliveries {
                    try await db.query("""
                        INSERT INTO webhook_deliveries
                            (id, event, payload, status, attempts, next_attempt_at, last_status, last_error, created_at, delivered_at)
                        VALUES (\(d.id), \(d.event), \(d.payload), \(d.status.rawValue), \(d.attempts), \(d.nextAttemptAt),
                                \(d.lastStatus), \(d.lastError), \(d.createdAt), \(d.deliveredAt))
                        ON CONFLICT (id) DO NOTHING
                        """, logger: self.logger)
                }
                return .appended(version: expectedVersion + 1)
            }
        }
    }

    /// See `WebhookOutbox.claimWebhookDeliveries(now:leaseUntil:limit:)`: rows locked by another
    /// instance's claim are skipped, not waited for.
    ///
    /// - Parameters:
    ///   - now: The time.
    ///   - leaseUntil: The lease's end.
    ///   - limit: At most this many.
    public func claimWebhookDeliveries(now: Int64, leaseUntil: Int64, limit: Int) async throws(StoreError) -> [WebhookDelivery] {
        try await call("claiming webhook deliveries") {
            try await deliveries(try await client.query("""
                UPDATE webhook_deliveries SET next_attempt_at = \(leaseUntil)
                WHERE id IN (SELECT id FROM webhook_deliveries WHERE status = 'pending' AND next_attempt_at <= \(now)
                             ORDER BY next_attempt_at, id LIMIT \(max(0, limit)) FOR UPDATE SKIP LOCKED)
                RETURNING \(unescaped: Self.deliveryColumns)
                """, logger: logger)).sorted { ($0.createdAt, $0.id) < ($1.createdAt, $1.id) }
        }
    }

    /// See `WebhookOutbox.recordWebhookAttempt(_:)`.
    ///
    /// - Parameter d: The delivery as it now is.
    public func recordWebhookAttempt(_ d: WebhookDelivery) async throws(StoreError) {
        try await call("recording a webhook attempt") {
            try await client.query("""
                UPDATE webhook_deliveries SET status = \(d.status.rawValue), attempts = \(d.attempts), next_attempt_at = \(d.nextAttemptAt),
                    last_status = \(d.lastStatus), last_error = \(d.lastError), delivered_at = \(d.deliveredAt)
                WHERE id = \(d.id)
                """, logger: logger)
        }
    }

    /// See `WebhookOutbox.webhookDeliveries(status:limit:)`.
    ///
    /// - Parameters:
    ///   - status: A filter.
    ///   - limit: At most this many.
    public func webhookDeliveries(status: WebhookDelivery.Status?, limit: Int) async throws(StoreError) -> [WebhookDelivery] {
        try await call("listing webhook deliveries") {
            try await deliveries(try await client.query("""
                SELECT \(unescaped: Self.deliveryColumns) FROM webhook_deliveries
                WHERE \(status == nil) OR status = \(status?.rawValue ?? "")
                ORDER BY created_at DESC, id DESC LIMIT \(max(0, limit))
                """, logger: logger))
        }
    }

    static let deliveryColumns = "id, event, payload, status, attempts, next_attempt_at, last_status, last_error, created_at, delivered_at"

    private func deliveries(_ rows: PostgresRowSequence) async throws -> [WebhookDelivery] {
        var out: [WebhookDelivery] = []
        for try await (id, event, payload, status, attempts, next, lastStatus, lastError, created, delivered)
            in rows.decode((String, String, Data, String, Int, Int64, Int?, String?, Int64, Int64?).self) {
            out.append(WebhookDelivery(id: id, event: event, payload: payload, status: WebhookDelivery.Status(rawValue: status) ?? .failed,
                                       attempts: attempts, nextAttemptAt: next, lastStatus: lastStatus, lastError: lastError,
                                       createdAt: created, deliveredAt: delivered))
        }
        return out
    }

    /// See `GroupStore.groups(ofMember:status:limit:)`.
    ///
    /// - Parameters:
    ///   - studentID: The member.
    ///   - status: A status filter.
    ///   - limit: At most this many.
    public func groups(ofMember studentID: String, status: String?, limit: Int) async throws(StoreError) -> [GroupRecord] {
        try await call("listing groups") {
            try await groups(try await client.query("""
                SELECT \(unescaped: Self.groupColumns) FROM groups g
                WHERE g.group_id IN (SELECT group_id FROM group_members WHERE student_id = \(studentID))
                  AND (\(status == nil) OR g.status = \(status ?? ""))
                ORDER BY g.created_at DESC, g.group_id DESC LIMIT \(max(0, limit))
                """, logger: logger))
        }
    }

    private static let groupColumns = """
        g.group_id, g.invite_code, g.creator_id, g.status, g.state, g.version, g.created_at, g.updated_at,
        ARRAY(SELECT m.student_id FROM group_members m WHERE m.group_id = g.group_id ORDER BY m.student_id COLLATE "C")
        """

    private func groups(_ rows: PostgresRowSequence) async throws -> [GroupRecord] {
        var out: [GroupRecord] = []
        for try await (id, code, creator, status, state, version, created, updated, members)
            in rows.decode((String, String, String, String, Data, Int, Int64, Int64, [String]).self) {
            out.append(GroupRecord(groupID: id, inviteCode: code, creatorID: creator, status: status, members: members, state: state,
                                   version: version, createdAt: created, updatedAt: updated))
        }
        return out
    }

    private static func setMembers(_ group: GroupRecord, _ db: PostgresConnection, _ logger: Logger) async throws {
        try await db.query("DELETE FROM group_members WHERE group_id = \(group.groupID)", logger: logger)
        try await db.query("""
            INSERT INTO group_members (group_id, student_id) SELECT \(group.groupID), unnest(\(group.members)) ON CONFLICT DO NOTHING
            """, logger: logger)
    }
}
