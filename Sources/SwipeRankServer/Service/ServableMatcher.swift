import Foundation
import SwipeRank
import SwipeRankColleges

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

    /// The majors a profile can name (`GET /catalog/majors`, the app's picker), or nil when
    /// this catalog's profiles have no majors.
    var majorListing: [MajorListing]? { get }
}

/// One major students can pick: its title, CIP code and how many schools offer it.
public struct MajorListing: Sendable, Hashable, Encodable {
    /// The CIP title (a profile may name it as is).
    public let name: String
    /// The 4-digit CIP code (also accepted in a profile).
    public let cipCode: String
    /// Schools in the catalog offering it.
    public let schools: Int

    enum CodingKeys: String, CodingKey { case name, cipCode = "cip_code", schools }
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

    /// Every program some school offers, by title.
    public var majorListing: [MajorListing]? {
        let majors = schools.majors
        return majors.titles.map { code, title in
            MajorListing(name: title, cipCode: code, schools: majors.offerings[code]?.count ?? 0)
        }.filter { $0.schools > 0 }.sorted { ($0.name, $0.cipCode) < ($1.name, $1.cipCode) }
    }
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

    /// Generic profiles have no majors.
    public var majorListing: [MajorListing]? { nil }
}
