import Foundation

/// The operators' edits to the catalog (item API): an append-only log over the catalog file the
/// service starts from. The catalog an instance serves is that file with every change applied
/// in order, so every instance sharing a database serves the same items, and a restart loses
/// nothing. The log's last sequence number is the catalog's sequence (part of its version).
public protocol CatalogLog: Sendable {
    /// The last change's sequence number (0 when there is none).
    ///
    /// - Throws: `StoreError` when the store fails.
    func catalogSequence() async throws(StoreError) -> Int

    /// Changes with `seq > after`, ascending, at most `limit`.
    ///
    /// - Parameters:
    ///   - after: Exclusive lower bound (0: from the start).
    ///   - limit: The most returned (≥ 1).
    /// - Throws: `StoreError` when the store fails.
    func catalogChanges(after: Int, limit: Int) async throws(StoreError) -> [CatalogChange]

    /// Appends changes atomically, if the log still ends at `expectedSequence`.
    ///
    /// - Parameters:
    ///   - changes: One or more changes (their `seq` is ignored; they get expectedSequence + 1, + 2, …).
    ///   - expectedSequence: The sequence the caller built its catalog from.
    /// - Returns: The new sequence, or nil when another writer appended first (nothing written).
    /// - Throws: `StoreError` when the store fails (nothing written).
    func appendCatalogChanges(_ changes: [CatalogChange], expectedSequence: Int) async throws(StoreError) -> Int?
}

/// One edit of one item.
public struct CatalogChange: Sendable, Hashable {
    /// Position in the log, from 1 (assigned by the store).
    public var seq: Int
    /// The item's id.
    public var itemID: String
    /// The item's whole row, column name → text as a CSV cell would hold it ("" for missing);
    /// nil for a deletion.
    public var fields: [String: String]?
    /// When it was stored (Unix milliseconds).
    public var createdAt: Int64

    /// Creates a change.
    ///
    /// - Parameters:
    ///   - seq: Position (ignored by `appendCatalogChanges`).
    ///   - itemID: The item.
    ///   - fields: The whole row, or nil to delete the item.
    ///   - createdAt: Unix milliseconds.
    public init(seq: Int = 0, itemID: String, fields: [String: String]?, createdAt: Int64) {
        self.seq = seq
        self.itemID = itemID
        self.fields = fields
        self.createdAt = createdAt
    }

    /// `fields` as stored: a JSON object with sorted keys, or nil.
    public var fieldsJSON: Data? {
        guard let fields else { return nil }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return try? encoder.encode(fields)
    }

    /// Decodes stored fields.
    ///
    /// - Parameter data: The JSON object, or nil for a deletion.
    /// - Throws: `StoreError` when the stored JSON is not an object of strings.
    public static func fields(from data: Data?) throws(StoreError) -> [String: String]? {
        guard let data else { return nil }
        do { return try JSONDecoder().decode([String: String].self, from: data) } catch {
            throw StoreError("a stored catalog change is not a JSON object of strings: \(error)")
        }
    }
}
