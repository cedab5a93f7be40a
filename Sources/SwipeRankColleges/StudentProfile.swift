import Foundation
import SwipeRank

/// What a student tells the app about themselves; the source of the cold-start preferences and
/// of the student-relative terms (distance, budget, academic fit, major match).
///
/// JSON form (every field optional but `max_distance_miles`, which defaults to 500):
///
///     {"home": {"latitude": 42.36, "longitude": -71.06}, "home_state": "MA",
///      "max_distance_miles": 300, "annual_budget": 30000, "sat": 1350,
///      "intended_majors": ["Computer Science", "52.02"], "size_preference": "medium",
///      "control_preference": "public", "setting_preference": "city",
///      "academic_priority": 0.7, "earnings_priority": 0.5}
public struct StudentProfile: Sendable, Hashable, Codable {
    /// A preferred school size by undergraduate enrollment.
    public enum SizePreference: String, Sendable, Hashable, Codable, CaseIterable {
        /// Under 5,000 undergraduates.
        case small
        /// 5,000 to 15,000.
        case medium
        /// Over 15,000.
        case large
        /// No preference.
        case any
    }

    /// A preferred kind of institution.
    public enum ControlPreference: String, Sendable, Hashable, Codable, CaseIterable {
        /// Public institutions.
        case `public`
        /// Private nonprofit institutions.
        case `private`
        /// No preference.
        case any
    }

    /// A preferred campus setting (NCES locale group).
    public enum SettingPreference: String, Sendable, Hashable, Codable, CaseIterable {
        /// City (large, midsize, small).
        case city
        /// Suburb.
        case suburb
        /// Town.
        case town
        /// Rural.
        case rural
        /// No preference.
        case any
    }

    /// Where the student lives; nil disables the distance term and geographic mixing.
    public var home: GeoPoint?
    /// The student's state (two letters), for in-state tuition.
    public var homeState: String?
    /// How far from home the student would like to study, in miles.
    public var maxDistanceMiles: Double
    /// What the family can pay per year, in dollars; nil disables the budget term.
    public var annualBudget: Double?
    /// SAT total (400…1600); nil disables the academic-fit term.
    public var sat: Double?
    /// Intended majors: CIP codes (`"11.07"`), families (`"11"`) or names.
    public var intendedMajors: [String]
    /// Preferred size.
    public var sizePreference: SizePreference
    /// Preferred control.
    public var controlPreference: ControlPreference
    /// Preferred setting.
    public var settingPreference: SettingPreference
    /// How much selectivity and graduation rates matter, 0…1.
    public var academicPriority: Double
    /// How much graduates' earnings matter, 0…1.
    public var earningsPriority: Double

    /// Creates a profile.
    ///
    /// - Parameters:
    ///   - home: Where the student lives.
    ///   - homeState: Two-letter state.
    ///   - maxDistanceMiles: Preferred maximum distance, > 0.
    ///   - annualBudget: Yearly budget in dollars, > 0.
    ///   - sat: SAT total, 400…1600.
    ///   - intendedMajors: Majors by code or name.
    ///   - sizePreference: Preferred size.
    ///   - controlPreference: Preferred control.
    ///   - settingPreference: Preferred setting.
    ///   - academicPriority: 0…1.
    ///   - earningsPriority: 0…1.
    public init(home: GeoPoint? = nil, homeState: String? = nil, maxDistanceMiles: Double = 500,
                annualBudget: Double? = nil, sat: Double? = nil, intendedMajors: [String] = [],
                sizePreference: SizePreference = .any, controlPreference: ControlPreference = .any,
                settingPreference: SettingPreference = .any, academicPriority: Double = 0.5,
                earningsPriority: Double = 0.5) {
        self.home = home
        self.homeState = homeState
        self.maxDistanceMiles = maxDistanceMiles
        self.annualBudget = annualBudget
        self.sat = sat
        self.intendedMajors = intendedMajors
        self.sizePreference = sizePreference
        self.controlPreference = controlPreference
        self.settingPreference = settingPreference
        self.academicPriority = academicPriority
        self.earningsPriority = earningsPriority
    }

    enum CodingKeys: String, CodingKey, CaseIterable {
        case home, homeState = "home_state", maxDistanceMiles = "max_distance_miles"
        case annualBudget = "annual_budget", sat, intendedMajors = "intended_majors"
        case sizePreference = "size_preference", controlPreference = "control_preference"
        case settingPreference = "setting_preference", academicPriority = "academic_priority"
        case earningsPriority = "earnings_priority"
    }

    /// Decodes a profile, filling defaults for absent optional fields.
    ///
    /// - Parameter decoder: The decoder.
    /// - Throws: `DecodingError` for wrong types, unknown keys or unknown enum values.
    public init(from decoder: any Decoder) throws {
        try decoder.rejectUnknownKeys(CodingKeys.self)
        let c = try decoder.container(keyedBy: CodingKeys.self)
        home = try c.decodeIfPresent(GeoPoint.self, forKey: .home)
        homeState = try c.decodeIfPresent(String.self, forKey: .homeState)
        maxDistanceMiles = try c.decodeIfPresent(Double.self, forKey: .maxDistanceMiles) ?? 500
        annualBudget = try c.decodeIfPresent(Double.self, forKey: .annualBudget)
        sat = try c.decodeIfPresent(Double.self, forKey: .sat)
        intendedMajors = try c.decodeIfPresent([String].self, forKey: .intendedMajors) ?? []
        sizePreference = try c.decodeIfPresent(SizePreference.self, forKey: .sizePreference) ?? .any
        controlPreference = try c.decodeIfPresent(ControlPreference.self, forKey: .controlPreference) ?? .any
        settingPreference = try c.decodeIfPresent(SettingPreference.self, forKey: .settingPreference) ?? .any
        academicPriority = try c.decodeIfPresent(Double.self, forKey: .academicPriority) ?? 0.5
        earningsPriority = try c.decodeIfPresent(Double.self, forKey: .earningsPriority) ?? 0.5
    }

    /// Parses and validates a profile from JSON.
    ///
    /// - Parameters:
    ///   - json: The JSON bytes.
    ///   - source: The name shown in errors (e.g. the file path).
    /// - Returns: A valid profile.
    /// - Throws: `DataError` naming the field: malformed JSON, a wrong type, an unknown choice
    ///   (listing the allowed ones), or a value out of range.
    public static func decode(json: Data, source: String) throws(DataError) -> StudentProfile {
        let profile = try DataError.decodeProfile(StudentProfile.self, json: json, source: source, maxBytes: maxJSONBytes)
        try profile.validate(source: source)
        return profile
    }

    /// The most intended majors a profile may list: each costs a lookup in the majors index.
    public static var maxIntendedMajors: Int { 20 }
    /// The longest text a profile field may hold, in Unicode scalars (so at most 4× in UTF-8
    /// bytes); the unit JSON Schema's maxLength counts.
    public static var maxTextLength: Int { 200 }
    /// The largest profile JSON accepted, in bytes.
    public static var maxJSONBytes: Int { JSONInput.maxProfileBytes }

    /// Checks every range and size.
    ///
    /// Ranges keep every derived number finite and every conversion exact: a distance up to
    /// 25,000 miles (more than any two points on Earth), a budget of $1 to $10 million.
    ///
    /// - Parameter source: The name shown in errors.
    /// - Throws: `DataError` `.outOfRange` or `.invalidValue` naming the field.
    public func validate(source: String = "profile") throws(DataError) {
        func check(_ ok: Bool, _ field: String, _ detail: @autoclosure () -> String) throws(DataError) {
            if !ok { throw DataError(.outOfRange, source: source, field: field, detail: "\(field): \(detail())") }
        }
        try check(maxDistanceMiles.isFinite && maxDistanceMiles > 0 && maxDistanceMiles <= 25_000, "max_distance_miles",
                  "must be a number of miles in (0, 25000], got \(maxDistanceMiles)")
        if let annualBudget {
            try check(annualBudget.isFinite && (1...10_000_000).contains(annualBudget), "annual_budget",
                      "must be a number of dollars in 1...10000000, got \(annualBudget)")
        }
        try check(intendedMajors.count <= StudentProfile.maxIntendedMajors, "intended_majors",
                  "at most \(StudentProfile.maxIntendedMajors) majors, got \(intendedMajors.count)")
        for (i, major) in intendedMajors.enumerated() {
            // Counted in Unicode scalars (what JSON Schema's maxLength counts), so at most 4× in bytes.
            try check(major.unicodeScalars.count <= StudentProfile.maxTextLength, "intended_majors[\(i)]",
                      "at most \(StudentProfile.maxTextLength) characters, got \(major.unicodeScalars.count)")
        }
        if let sat { try check((400...1600).contains(sat), "sat", "must be in 400...1600, got \(sat)") }
        try check((0...1).contains(academicPriority), "academic_priority", "must be in 0...1, got \(academicPriority)")
        try check((0...1).contains(earningsPriority), "earnings_priority", "must be in 0...1, got \(earningsPriority)")
        if let homeState {
            try check(homeState.utf8.count == 2 && homeState.utf8.allSatisfy { (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains($0) },
                      "home_state", "must be a two-letter state code such as \"MA\", got \"\(DataError.truncated(homeState))\"")
        }
    }
}

extension StudentProfile: JSONChoiceFields {
    /// The allowed values of each choice field, for error messages.
    public static let choiceFields: [String: [String]] = [
        "size_preference": SizePreference.allCases.map(\.rawValue),
        "control_preference": ControlPreference.allCases.map(\.rawValue),
        "setting_preference": SettingPreference.allCases.map(\.rawValue),
    ]
}
