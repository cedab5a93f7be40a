import Foundation
import SwipeRank

/// A matcher the service can serve: it can read a profile from a request body.
public protocol ServableMatcher: Matcher {
    /// Decodes and validates a profile (unknown keys rejected, ranges checked).
    ///
    /// - Parameters:
    ///   - json: The body.
    ///   - source: The name errors use.
    /// - Throws: `DataError` naming the position or the field.
    static func decodeProfile(json: Data, source: String) throws(DataError) -> Profile

    /// How the wire names this catalog's items: `school`/`school_id` for colleges (the seed
    /// app's contract), `item`/`item_id` for any other catalog.
    static var vocabulary: ItemVocabulary { get }
}

/// The names a catalog's items go by on the wire. Requests accept both id names on every
/// catalog (`school_id` stays a documented alias); answers use the catalog's own.
public struct ItemVocabulary: Sendable, Hashable {
    /// The card's item object key: `school` or `item`.
    public let item: String
    /// The id key: `school_id` or `item_id`.
    public let itemID: String
    /// Whether cards carry `matched_majors` (colleges only).
    public let hasMajors: Bool

    /// Colleges.
    public static let school = ItemVocabulary(item: "school", itemID: "school_id", hasMajors: true)
    /// Any other catalog.
    public static let generic = ItemVocabulary(item: "item", itemID: "item_id", hasMajors: false)
}

extension SchoolMatcher: ServableMatcher {
    /// Decodes a `StudentProfile`.
    ///
    /// - Parameters:
    ///   - json: The body.
    ///   - source: For errors.
    public static func decodeProfile(json: Data, source: String) throws(DataError) -> StudentProfile {
        try StudentProfile.decode(json: json, source: source)
    }

    /// `school`, `school_id`, `matched_majors`.
    public static var vocabulary: ItemVocabulary { .school }
}

extension ItemMatcher: ServableMatcher {
    /// Decodes an `ItemProfile`.
    ///
    /// - Parameters:
    ///   - json: The body.
    ///   - source: For errors.
    public static func decodeProfile(json: Data, source: String) throws(DataError) -> ItemProfile {
        try ItemProfile.decode(json: json, source: source)
    }

    /// `item`, `item_id`, no majors.
    public static var vocabulary: ItemVocabulary { .generic }
}
