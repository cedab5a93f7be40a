import Foundation

/// Where group sessions live: one versioned record per group (its state is opaque bytes the
/// service encodes), findable by id, by invite code and by member. Writes are compare-and-set
/// on the version, so several writers (threads, later several instances) never lose an update:
/// a stale writer gets `.conflict`, re-reads and tries again.
public protocol GroupStore: Sendable {
    /// Stores a new group.
    ///
    /// - Parameter group: The group, version 1.
    /// - Returns: false when the id or the invite code is taken (nothing written).
    /// - Throws: `StoreError` when the store fails.
    func createGroup(_ group: GroupRecord) async throws(StoreError) -> Bool

    /// A group by id.
    ///
    /// - Parameter groupID: The id.
    /// - Returns: The record, or nil.
    /// - Throws: `StoreError` when the store fails.
    func group(_ groupID: String) async throws(StoreError) -> GroupRecord?

    /// A group by invite code.
    ///
    /// - Parameter inviteCode: A canonical code.
    /// - Returns: The record, or nil.
    /// - Throws: `StoreError` when the store fails.
    func group(inviteCode: String) async throws(StoreError) -> GroupRecord?

    /// Replaces a group's state, members and status if its version is still `expectedVersion`.
    ///
    /// - Parameters:
    ///   - group: The new record (its `version` is ignored: the stored one becomes
    ///     `expectedVersion + 1`).
    ///   - expectedVersion: The version the writer read.
    /// - Returns: `.appended(version:)` or `.conflict` (someone wrote first, or no such group).
    /// - Throws: `StoreError` when the store fails.
    func updateGroup(_ group: GroupRecord, expectedVersion: Int) async throws(StoreError) -> AppendOutcome

    /// The groups a student is a member of, newest first.
    ///
    /// - Parameters:
    ///   - studentID: The member.
    ///   - status: Only groups with this status (nil: all).
    ///   - limit: At most this many.
    /// - Throws: `StoreError` when the store fails.
    func groups(ofMember studentID: String, status: String?, limit: Int) async throws(StoreError) -> [GroupRecord]
}

/// A stored group session.
public struct GroupRecord: Sendable, Hashable {
    /// The id.
    public var groupID: String
    /// The canonical invite code (unique among all groups).
    public var inviteCode: String
    /// The creator's student id.
    public var creatorID: String
    /// `open`, `matched` or `closed` (for listing; the state is the truth).
    public var status: String
    /// Member student ids (read back sorted; the state keeps the joining order).
    public var members: [String]
    /// The session state, as the service encodes it.
    public var state: Data
    /// Incremented by every update; 1 when created.
    public var version: Int
    /// Creation time (milliseconds since 1970).
    public var createdAt: Int64
    /// Last update time.
    public var updatedAt: Int64

    /// Creates a record.
    ///
    /// - Parameters:
    ///   - groupID: The id.
    ///   - inviteCode: The code.
    ///   - creatorID: The creator.
    ///   - status: The status.
    ///   - members: The members.
    ///   - state: The encoded session.
    ///   - version: The version.
    ///   - createdAt: Created.
    ///   - updatedAt: Updated.
    public init(groupID: String, inviteCode: String, creatorID: String, status: String, members: [String], state: Data,
                version: Int, createdAt: Int64, updatedAt: Int64) {
        self.groupID = groupID
        self.inviteCode = inviteCode
        self.creatorID = creatorID
        self.status = status
        self.members = members
        self.state = state
        self.version = version
        self.createdAt = createdAt
        self.updatedAt = updatedAt
    }
}

/// Everything the service needs from a store: students, groups, the app's events, the catalog's
/// changes, the webhook outbox and the fitted models.
public typealias ServiceStore = StudentStore & GroupStore & AppEventLog & CatalogLog & WebhookOutbox & ModelRegistry
