import Foundation

/// Notifications to the app's backend (a group matched), kept as a transactional outbox: a
/// delivery is stored in the same transaction as the change it announces, so a change that is
/// stored is announced, whatever dies when. Deliveries are attempted at least once; receivers
/// deduplicate by `id`.
public protocol WebhookOutbox: Sendable {
    /// Updates a group (as `GroupStore.updateGroup(_:expectedVersion:)`) and, in the same
    /// transaction, stores `deliveries` (an id already stored is kept as it is).
    ///
    /// - Parameters:
    ///   - group: The new state.
    ///   - expectedVersion: The version the caller read.
    ///   - deliveries: Notifications of this change.
    /// - Returns: The new version, or `.conflict` (nothing written).
    /// - Throws: `StoreError` when the store fails (nothing written).
    func updateGroup(_ group: GroupRecord, expectedVersion: Int, enqueuing deliveries: [WebhookDelivery]) async throws(StoreError)
        -> AppendOutcome

    /// Pending deliveries due at `now`, oldest due first, at most `limit`, each leased until
    /// `leaseUntil` (its `nextAttemptAt` moves there, so another instance polling meanwhile
    /// does not send it too; a sender that dies leaves it due again when the lease ends).
    ///
    /// - Throws: `StoreError` when the store fails.
    func claimWebhookDeliveries(now: Int64, leaseUntil: Int64, limit: Int) async throws(StoreError) -> [WebhookDelivery]

    /// Records an attempt's outcome: `delivery` as it now is (status, attempts, next attempt,
    /// last HTTP status and error, delivery time).
    ///
    /// - Throws: `StoreError` when the store fails.
    func recordWebhookAttempt(_ delivery: WebhookDelivery) async throws(StoreError)

    /// The delivery log, newest first: all, or those with `status`.
    ///
    /// - Throws: `StoreError` when the store fails.
    func webhookDeliveries(status: WebhookDelivery.Status?, limit: Int) async throws(StoreError) -> [WebhookDelivery]
}

/// One notification and its delivery state.
public struct WebhookDelivery: Sendable, Hashable {
    /// Where a delivery is.
    public enum Status: String, Sendable, Hashable, CaseIterable {
        /// Not delivered yet; attempted again at `nextAttemptAt`.
        case pending
        /// The receiver answered 2xx.
        case delivered
        /// Every attempt failed; no more are made.
        case failed
    }

    /// Unique and stable (the receiver's deduplication key).
    public var id: String
    /// What happened (`group.matched`).
    public var event: String
    /// The JSON body sent.
    public var payload: Data
    /// Where it is.
    public var status: Status
    /// Attempts made.
    public var attempts: Int
    /// When it is due (Unix milliseconds).
    public var nextAttemptAt: Int64
    /// The receiver's last HTTP status, if it answered.
    public var lastStatus: Int?
    /// Why the last attempt failed.
    public var lastError: String?
    /// When it was stored (Unix milliseconds).
    public var createdAt: Int64
    /// When the receiver accepted it.
    public var deliveredAt: Int64?

    /// Creates a delivery.
    ///
    /// - Parameters:
    ///   - id: Unique id.
    ///   - event: Event name.
    ///   - payload: JSON body.
    ///   - status: State.
    ///   - attempts: Attempts so far.
    ///   - nextAttemptAt: When due.
    ///   - lastStatus: Last HTTP status.
    ///   - lastError: Last failure.
    ///   - createdAt: When stored.
    ///   - deliveredAt: When delivered.
    public init(id: String, event: String, payload: Data, status: Status = .pending, attempts: Int = 0, nextAttemptAt: Int64,
                lastStatus: Int? = nil, lastError: String? = nil, createdAt: Int64, deliveredAt: Int64? = nil) {
        self.id = id
        self.event = event
        self.payload = payload
        self.status = status
        self.attempts = attempts
        self.nextAttemptAt = nextAttemptAt
        self.lastStatus = lastStatus
        self.lastError = lastError
        self.createdAt = createdAt
        self.deliveredAt = deliveredAt
    }
}
