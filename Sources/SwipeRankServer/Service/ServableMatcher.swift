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
}
