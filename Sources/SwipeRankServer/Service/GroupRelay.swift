import Foundation
import Logging
import ServiceLifecycle
import SwipeRankStore

/// Carries group events between instances that share a store: what one instance publishes is
/// sent through the store's notifications, and what the others sent is published to this
/// instance's subscribers. Each instance tags its messages with a random id and ignores its
/// own (its subscribers already have them).
final class GroupRelay: Sendable {
    let bus: any StoreNotifications
    let hub: GroupEventHub
    let origin: String
    let logger: Logger

    init(bus: any StoreNotifications, hub: GroupEventHub, origin: String, logger: Logger) {
        self.bus = bus
        self.hub = hub
        self.origin = origin
        self.logger = logger
    }

    struct Message: Codable {
        var origin: String
        var group: String
        var name: String
        var data: String
        var version: Int
    }

    /// Sends an event this instance published to the other instances.
    func send(_ group: String, _ event: GroupEvent) async {
        let message = Message(origin: origin, group: group, name: event.name, data: String(decoding: event.data, as: UTF8.self),
                              version: event.version)
        do {
            try await bus.notify(String(decoding: try JSONEncoder().encode(message), as: UTF8.self))
        } catch {
            // The write is committed; only other instances' live streams miss this event (a
            // client that reconnects reads the status).
            logger.error("group event not relayed", metadata: ["group": "\(group)", "error": "\(error)"])
        }
    }

    /// Publishes what other instances sent, until cancelled.
    func receive() async throws {
        try await bus.listen { [hub, origin, logger] text in
            guard let message = try? JSONDecoder().decode(Message.self, from: Data(text.utf8)) else {
                logger.warning("unreadable group notification ignored")
                return
            }
            guard message.origin != origin else { return }
            hub.publish(message.group, GroupEvent(name: message.name, data: Data(message.data.utf8), version: message.version))
        }
    }
}

/// Runs the relay's listener for the application's lifetime.
struct GroupRelayService: Service {
    let relay: GroupRelay

    func run() async throws {
        try await cancelWhenGracefulShutdown {
            // A lost connection ends one listen: listen again after a pause, until shutdown.
            while !Task.isCancelled {
                do {
                    try await relay.receive()
                } catch {
                    if Task.isCancelled { break }
                    relay.logger.error("group relay listener failed; retrying", metadata: ["error": "\(error)"])
                }
                try? await Task.sleep(for: .seconds(1))
            }
        }
    }
}
