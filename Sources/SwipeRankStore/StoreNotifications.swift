/// A channel between the processes that share one store (several service instances on one
/// database): a message one of them sends reaches every listener, the sender's own included.
/// Group sessions use it so a live event stream on one instance sees joins and matches made on
/// another. Stores that one process owns (SQLite, memory) do not need it.
public protocol StoreNotifications: Sendable {
    /// Sends a message to every listener.
    ///
    /// - Parameter message: At most 7,000 bytes of UTF-8.
    /// - Throws: `StoreError` when the store fails.
    func notify(_ message: String) async throws(StoreError)

    /// Delivers every message sent from now on to `onMessage`, until the task is cancelled.
    ///
    /// - Parameter onMessage: Called once per message, in the order they were sent.
    /// - Throws: `StoreError` when listening fails (the connection is lost).
    func listen(_ onMessage: @escaping @Sendable (String) -> Void) async throws
}
