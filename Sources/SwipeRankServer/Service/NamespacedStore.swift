import Foundation
import SwipeRankStore

/// One catalog's view of a store shared by several catalogs (`serve --catalogs`): a student has
/// one learned state per catalog, so each catalog's students, groups, app events and item edits
/// live under its own key prefix (`"\u{1}<name>\u{1}"`), added on the way in and removed on the
/// way out. The default catalog has no prefix — its data is where a one-catalog service keeps
/// it, so adding catalogs later changes nothing stored — and skips every prefixed key.
///
/// A student id never holds a control character (`StudentClaims.verify`), so no token can
/// name another catalog's key.
class NamespacedStore: @unchecked Sendable {
    let inner: any ServiceStore
    /// The key prefix, or nil for the default catalog.
    let prefix: String?
    /// The catalog's name (nil: the default catalog).
    let catalog: String?

    init(_ inner: any ServiceStore, catalog: String?) {
        self.inner = inner
        self.catalog = catalog
        prefix = catalog.map { "\u{1}\($0)\u{1}" }
    }

    /// The stored key of a service key.
    func key(_ id: String) -> String { (prefix ?? "") + id }

    /// The service key of a stored key, or nil when it belongs to another catalog.
    func unkey(_ stored: String) -> String? {
        if let prefix { return stored.hasPrefix(prefix) ? String(stored.dropFirst(prefix.count)) : nil }
        return stored.hasPrefix("\u{1}") ? nil : stored
    }

    /// A one-catalog store for `catalog` (the relay of group events kept when `inner` has one).
    static func make(_ inner: any ServiceStore, catalog: String?) -> any ServiceStore {
        inner is any StoreNotifications ? NotifyingNamespacedStore(inner, catalog: catalog) : NamespacedStore(inner, catalog: catalog)
    }

    fileprivate func stored(_ group: GroupRecord) -> GroupRecord {
        var g = group
        g.groupID = key(g.groupID)
        g.inviteCode = key(g.inviteCode)
        g.creatorID = key(g.creatorID)
        g.members = g.members.map(key)
        return g
    }

    private func served(_ group: GroupRecord?) -> GroupRecord? {
        guard var g = group, let id = unkey(g.groupID), let code = unkey(g.inviteCode) else { return nil }
        g.groupID = id
        g.inviteCode = code
        g.creatorID = unkey(g.creatorID) ?? g.creatorID
        g.members = g.members.compactMap(unkey)
        return g
    }
}

extension NamespacedStore: StudentStore {
    func student(_ studentID: String) async throws(StoreError) -> StudentRecord? {
        guard var record = try await inner.student(key(studentID)) else { return nil }
        record.studentID = studentID
        return record
    }

    func studentVersion(_ studentID: String) async throws(StoreError) -> Int? {
        try await inner.studentVersion(key(studentID))
    }

    func events(of studentID: String, after: Int, kinds: Set<EventKind>?, limit: Int) async throws(StoreError) -> [StoredEvent] {
        try await inner.events(of: key(studentID), after: after, kinds: kinds, limit: limit)
    }

    func event(of studentID: String, kind: EventKind, clientID: String) async throws(StoreError) -> StoredEvent? {
        try await inner.event(of: key(studentID), kind: kind, clientID: clientID)
    }

    func append(_ events: [StoredEvent], to studentID: String, expectedVersion: Int,
                update: StudentUpdate) async throws(StoreError) -> AppendOutcome {
        try await inner.append(events, to: key(studentID), expectedVersion: expectedVersion, update: update)
    }

    func saveSnapshot(_ data: Data, for studentID: String, version: Int, createdAt: Int64) async throws(StoreError) -> Bool {
        try await inner.saveSnapshot(data, for: key(studentID), version: version, createdAt: createdAt)
    }

    func deleteStudent(_ studentID: String) async throws(StoreError) -> Bool {
        try await inner.deleteStudent(key(studentID))
    }

    func studentIDs(after: String?, limit: Int) async throws(StoreError) -> [String] {
        var out: [String] = []
        // The default catalog's keys start at a printable character (a student id holds no
        // control character): everything before U+001F is other catalogs'.
        var cursor = after.map(key) ?? prefix ?? "\u{1F}"
        // Keys are in byte order: a catalog's keys are contiguous after its prefix; the default
        // catalog skips the (contiguous) block of prefixed keys.
        while out.count < limit {
            let page = try await inner.studentIDs(after: cursor, limit: limit)
            guard let last = page.last else { break }
            for id in page {
                if let prefix, !id.hasPrefix(prefix) { return out }
                if let own = unkey(id) { out.append(own) }
                if out.count == limit { return out }
            }
            cursor = last
        }
        return out
    }

    func ping() async throws(StoreError) { try await inner.ping() }
}

extension NamespacedStore: GroupStore {
    func createGroup(_ group: GroupRecord) async throws(StoreError) -> Bool { try await inner.createGroup(stored(group)) }

    func group(_ groupID: String) async throws(StoreError) -> GroupRecord? { served(try await inner.group(key(groupID))) }

    func group(inviteCode: String) async throws(StoreError) -> GroupRecord? { served(try await inner.group(inviteCode: key(inviteCode))) }

    func updateGroup(_ group: GroupRecord, expectedVersion: Int) async throws(StoreError) -> AppendOutcome {
        try await inner.updateGroup(stored(group), expectedVersion: expectedVersion)
    }

    func groups(ofMember studentID: String, status: String?, limit: Int) async throws(StoreError) -> [GroupRecord] {
        try await inner.groups(ofMember: key(studentID), status: status, limit: limit).compactMap(served)
    }
}

/// The outbox is one for the whole service (one dispatcher sends every catalog's deliveries):
/// a catalog's deliveries get its name in the id (`restaurants/…`) and a `"catalog"` member.
extension NamespacedStore: WebhookOutbox {
    func updateGroup(_ group: GroupRecord, expectedVersion: Int, enqueuing deliveries: [WebhookDelivery]) async throws(StoreError)
        -> AppendOutcome {
        let named = deliveries.map { delivery -> WebhookDelivery in
            guard let catalog else { return delivery }
            var d = delivery
            d.id = "\(catalog)/\(d.id)"
            if var object = (try? JSONSerialization.jsonObject(with: d.payload)) as? [String: Any] {
                object["catalog"] = catalog
                d.payload = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])) ?? d.payload
            }
            return d
        }
        return try await inner.updateGroup(stored(group), expectedVersion: expectedVersion, enqueuing: named)
    }

    func claimWebhookDeliveries(now: Int64, leaseUntil: Int64, limit: Int) async throws(StoreError) -> [WebhookDelivery] {
        try await inner.claimWebhookDeliveries(now: now, leaseUntil: leaseUntil, limit: limit)
    }

    func recordWebhookAttempt(_ delivery: WebhookDelivery) async throws(StoreError) { try await inner.recordWebhookAttempt(delivery) }

    func webhookDeliveries(status: WebhookDelivery.Status?, limit: Int) async throws(StoreError) -> [WebhookDelivery] {
        try await inner.webhookDeliveries(status: status, limit: limit)
    }
}

extension NamespacedStore: AppEventLog {
    func appendAppEvents(_ events: [AppEvent], for studentID: String) async throws(StoreError) -> Int {
        try await inner.appendAppEvents(events, for: key(studentID))
    }

    func appEvents(of studentID: String, after: Int, limit: Int) async throws(StoreError) -> [AppEvent] {
        try await inner.appEvents(of: key(studentID), after: after, limit: limit)
    }

    /// Retention is one setting for the deployment: every catalog's events.
    func purgeAppEvents(receivedBefore time: Int64) async throws(StoreError) -> Int {
        try await inner.purgeAppEvents(receivedBefore: time)
    }
}

extension NamespacedStore: CatalogLog {
    /// The shared log's sequence (every catalog's edits move it).
    func catalogSequence() async throws(StoreError) -> Int { try await inner.catalogSequence() }

    func catalogChanges(after: Int, limit: Int) async throws(StoreError) -> [CatalogChange] {
        var out: [CatalogChange] = []
        var cursor = after
        while out.count < limit {
            let page = try await inner.catalogChanges(after: cursor, limit: limit)
            guard let last = page.last else { break }
            for change in page {
                guard let id = unkey(change.itemID) else { continue }
                var own = change
                own.itemID = id
                out.append(own)
                if out.count == limit { break }
            }
            cursor = last.seq
            if page.count < limit { break }
        }
        return out
    }

    func appendCatalogChanges(_ changes: [CatalogChange], expectedSequence: Int) async throws(StoreError) -> Int? {
        try await inner.appendCatalogChanges(changes.map { var c = $0; c.itemID = key(c.itemID); return c },
                                             expectedSequence: expectedSequence)
    }
}

/// Each catalog's models and jobs under its prefix (a restaurant model is not a college one).
extension NamespacedStore: ModelRegistry {
    func latestModelVersion(kind: String) async throws(StoreError) -> Int { try await inner.latestModelVersion(kind: key(kind)) }

    func latestModel(kind: String) async throws(StoreError) -> StoredModel? {
        guard var model = try await inner.latestModel(kind: key(kind)) else { return nil }
        model.kind = kind
        return model
    }

    func putModel(kind: String, data: Data, createdAt: Int64) async throws(StoreError) -> Int {
        try await inner.putModel(kind: key(kind), data: data, createdAt: createdAt)
    }

    func withExclusiveJob<T: Sendable>(_ name: String, _ body: @Sendable () async throws -> T) async throws -> T? {
        try await inner.withExclusiveJob(key(name), body)
    }
}

/// `NamespacedStore` over a store that relays notifications (PostgreSQL).
final class NotifyingNamespacedStore: NamespacedStore, StoreNotifications, @unchecked Sendable {
    func notify(_ message: String) async throws(StoreError) { try await (inner as! any StoreNotifications).notify(message) }
    func listen(_ onMessage: @escaping @Sendable (String) -> Void) async throws {
        try await (inner as! any StoreNotifications).listen(onMessage)
    }
}
