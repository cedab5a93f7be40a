import Foundation
import Synchronization

/// A live update of a group session, as sent on `GET /groups/:id/events`.
struct GroupEvent: Sendable, Hashable {
    /// `status` (the first event), `joined`, `matched`, `closed`, or a keep-alive comment.
    var name: String
    /// The JSON data line.
    var data: Data
    /// The group's version after the change (the SSE event id).
    var version: Int

    /// Whether nothing can follow it (the stream ends).
    var isTerminal: Bool { name == "matched" || name == "closed" }

    /// The event in `text/event-stream` form.
    var wire: Data {
        if name == "keepalive" { return Data(": keep-alive\n\n".utf8) }
        return Data("id: \(version)\nevent: \(name)\ndata: ".utf8) + data + Data("\n\n".utf8)
    }
}

/// Fans group events out to the streams of one process. Each subscriber gets its own bounded
/// buffer (the newest 64 events), so a slow client never blocks the writer that publishes.
/// One process only: several instances (PostgreSQL) need a shared channel on top.
final class GroupEventHub: Sendable {
    private let subscribers = Mutex<[String: [UInt64: AsyncStream<GroupEvent>.Continuation]]>([:])
    private let nextID = Atomic<UInt64>(0)

    /// A new subscription to `group`'s events; call `unsubscribe` when done.
    func subscribe(_ group: String) -> (id: UInt64, stream: AsyncStream<GroupEvent>, continuation: AsyncStream<GroupEvent>.Continuation) {
        let id = nextID.wrappingAdd(1, ordering: .relaxed).newValue
        let (stream, continuation) = AsyncStream.makeStream(of: GroupEvent.self, bufferingPolicy: .bufferingNewest(64))
        subscribers.withLock { $0[group, default: [:]][id] = continuation }
        return (id, stream, continuation)
    }

    /// Ends a subscription.
    func unsubscribe(_ group: String, id: UInt64) {
        let continuation = subscribers.withLock { all -> AsyncStream<GroupEvent>.Continuation? in
            let removed = all[group]?.removeValue(forKey: id)
            if all[group]?.isEmpty == true { all[group] = nil }
            return removed
        }
        continuation?.finish()
    }

    /// Sends `event` to every subscriber of `group`.
    func publish(_ group: String, _ event: GroupEvent) {
        let targets = subscribers.withLock { Array(($0[group] ?? [:]).values) }
        for continuation in targets { continuation.yield(event) }
    }
}
