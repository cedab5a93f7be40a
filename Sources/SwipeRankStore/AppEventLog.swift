import Foundation

/// The app's own events (identify, focus, swipe reactions, free dictionary events): an
/// append-only log per student with a cursor, idempotent by the client's event id, so a
/// fire-and-forget client may resend a batch. Kept apart from the learning log (`StoredEvent`):
/// these never change a session.
public protocol AppEventLog: Sendable {
    /// Appends a student's events; an event whose id the student already used is skipped.
    ///
    /// - Parameters:
    ///   - events: The events (their `seq` is ignored; the store assigns increasing ones).
    ///   - studentID: The student.
    /// - Returns: How many were new.
    /// - Throws: `StoreError` when the store fails (nothing of the batch is written).
    func appendAppEvents(_ events: [AppEvent], for studentID: String) async throws(StoreError) -> Int

    /// A student's events after a cursor, in order.
    ///
    /// - Parameters:
    ///   - studentID: The student.
    ///   - after: Exclusive lower bound on `seq` (0: from the start).
    ///   - limit: At most this many.
    /// - Throws: `StoreError` when the store fails.
    func appEvents(of studentID: String, after: Int, limit: Int) async throws(StoreError) -> [AppEvent]

    /// Deletes every event received before a time (the retention setting).
    ///
    /// - Parameter time: Milliseconds since 1970.
    /// - Returns: How many were deleted.
    /// - Throws: `StoreError` when the store fails.
    func purgeAppEvents(receivedBefore time: Int64) async throws(StoreError) -> Int
}

/// One app event as stored.
public struct AppEvent: Sendable, Hashable {
    /// The position in the student's log (assigned by the store; increasing).
    public var seq: Int
    /// The client's id, unique per student.
    public var eventID: String
    /// `identify`, `focus`, `swipe_reaction` or `custom`.
    public var type: String
    /// The event as the client sent it (a JSON object, canonical form).
    public var payload: String
    /// When it happened on the device (milliseconds since 1970).
    public var occurredAt: Int64
    /// When the service received it.
    public var receivedAt: Int64

    /// Creates an event.
    ///
    /// - Parameters:
    ///   - seq: The position (0 before it is stored).
    ///   - eventID: The client's id.
    ///   - type: The type.
    ///   - payload: The JSON object.
    ///   - occurredAt: Device time.
    ///   - receivedAt: Service time.
    public init(seq: Int = 0, eventID: String, type: String, payload: String, occurredAt: Int64, receivedAt: Int64) {
        self.seq = seq
        self.eventID = eventID
        self.type = type
        self.payload = payload
        self.occurredAt = occurredAt
        self.receivedAt = receivedAt
    }
}
