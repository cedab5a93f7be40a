import Foundation
import SwipeRank
import SwipeRankNumerics

/// A student resolved against a school catalog: the profile, the majors as CIP codes, and the
/// four student-relative terms over every school.
///
/// Terms (rows of `terms`, each about −1…1, 0 where the student or the school lacks the input):
///
/// | term | value for a school at distance d, cost c, SAT S |
/// |---|---|
/// | `distance` | d ≤ p: 1 − d/(2p) (1 at home, ½ at the preferred maximum p); beyond: max(−1, ½ − (d − p)/p) |
/// | `budget` | r = c / budget; r ≤ 1: 1 − r/2; beyond: max(−1, ½ − 2(r − 1)) |
/// | `academic_fit` | 2·exp(−½((sat − S)/150)²) − 1 |
/// | `major_fit` | k of m majors offered: ½ + ½·k/m; none but one in the same CIP family: 0; none at all: −1 |
///
/// `SchoolTermBasis.expanded` adds two shapes these four cannot bend into (a linear weight only
/// scales a term's curve; with a second basis function beside it the learner can sharpen a
/// cliff or flatten a tail):
///
/// | term | value |
/// |---|---|
/// | `budget_over` | r = c / budget: 0 within the budget, (r − 1)/0.2 beyond, 1 from 120% on (a cliff) |
/// | `distance_near` | e^(−d/p): 1 at home, 0.37 at the preferred maximum, ~0 far away (saturation) |
public struct MatchStudent: MatchedStudent {
    /// The term names of the standard basis, in row order.
    public static let termNames = ["distance", "budget", "academic_fit", "major_fit"]

    /// The term names of a basis, in row order (the standard four first).
    ///
    /// - Parameter basis: The basis.
    /// - Returns: 4 or 6 names.
    public static func termNames(_ basis: SchoolTermBasis) -> [String] {
        switch basis {
        case .standard: termNames
        case .expanded: termNames + ["budget_over", "distance_near"]
        }
    }

    /// The profile.
    public let profile: StudentProfile
    /// The intended majors, resolved.
    public let majors: [MajorsIndex.ResolvedMajor]
    /// The terms, k × N (k = 4, or 6 with the expanded basis).
    public let terms: RelativeTerms
    /// Miles from home to each school; empty without a home.
    public let distances: StudentDistances
    /// Per major, "Strong <label> program" and "Offers <label>": written once per student, not
    /// per card.
    /// With their variety keys, and the key of "Offers <label> and N more of your majors" (the
    /// same for every N).
    let majorSentences: [(strong: KeyedText, offers: KeyedText, moreKey: ExplanationVariety.Key)]
    /// Per major, its CIP codes as `MajorsIndex` code numbers (codes no school offers left out).
    let majorNumbers: [[Int32]]
    /// Per school, which of the majors it offers and in which it is strong, as bits: what a
    /// card's major reason and matched majors read (`offers`/`isStrong` are the reference).
    let majorMatches: MajorMatches

    /// The bytes its per-school arrays hold (terms, distances and the major bits), for the
    /// engine's student cache budget.
    public var byteCount: Int { terms.byteCount + distances.byteCount + majorMatches.byteCount + 256 }

    /// The preferred maximum distance when the student has a home.
    public var preferredDistanceMiles: Double? { profile.home == nil ? nil : profile.maxDistanceMiles }

    /// Resolves a profile and computes its terms over all schools.
    ///
    /// - Parameters:
    ///   - profile: A validated profile.
    ///   - schools: The catalog.
    ///   - basis: Which terms (the standard four unless told).
    /// - Throws: `DataError` `.unknownReference` for a major that matches nothing.
    /// - Complexity: O(N + postings of the student's majors).
    public init(profile: StudentProfile, schools: SchoolCatalog, basis: SchoolTermBasis = .standard) throws(DataError) {
        self.profile = profile
        var majors: [MajorsIndex.ResolvedMajor] = []
        for text in profile.intendedMajors { majors.append(try schools.majors.resolve(text)) }
        self.majors = majors
        majorSentences = majors.map {
            (KeyedText("Strong \($0.label) program"), KeyedText("Offers \($0.label)"),
             ExplanationVariety.Key("Offers \($0.label) and 1 more of your majors"))
        }
        majorNumbers = majors.map { $0.cipCodes.compactMap { schools.majors.codeNumbers[$0] } }
        let n = schools.catalog.count
        let names = MatchStudent.termNames(basis)
        let expanded = basis == .expanded
        var values = Matrix(rows: names.count, columns: n)
        var distances: [Float] = []
        if let home = profile.home {
            schools.catalog.distancesMiles(from: home, into: &distances)
            let p = Float(profile.maxDistanceMiles)
            for i in 0..<n where !distances[i].isNaN {
                let d = distances[i]
                values[0, i] = GeoBand.distanceFit(miles: d, preferred: p)
                if expanded { values[5, i] = expf(-d / p) }
            }
        }
        if let budget = profile.annualBudget {
            let b = Float(budget)
            for i in 0..<n {
                guard let cost = schools.estimatedCost(row: i, homeState: profile.homeState) else { continue }
                let r = Float(cost) / b
                values[1, i] = r <= 1 ? 1 - r / 2 : max(-1, 0.5 - 2 * (r - 1))
                if expanded { values[4, i] = min(1, max(0, (r - 1) / 0.2)) }
            }
        }
        if let sat = profile.sat {
            let s = Float(sat)
            for i in 0..<n where !schools.satAverage[i].isNaN {
                let z = (s - schools.satAverage[i]) / 150
                values[2, i] = 2 * expf(-0.5 * z * z) - 1
            }
        }
        var matches = MajorMatches(majors: majors.count, schoolCount: n)
        if !majors.isEmpty {
            var offered = [Int](repeating: 0, count: n)
            var stamp = [Int](repeating: -1, count: n)
            for (m, major) in majors.enumerated() {
                for code in major.cipCodes {
                    for offering in schools.majors.offerings[code] ?? [] where stamp[offering.row] != m {
                        stamp[offering.row] = m
                        offered[offering.row] += 1
                        matches.setOffered(major: m, row: offering.row)
                    }
                }
            }
            let families = Set(majors.flatMap { $0.cipCodes.map { String($0.prefix(2)) } })
            let m = Float(majors.count)
            for i in 0..<n {
                values[3, i] = offered[i] > 0 ? 0.5 + 0.5 * Float(offered[i]) / m : (schools.majors.families[i].isDisjoint(with: families) ? -1 : 0)
            }
        }
        terms = RelativeTerms(names: names, values: values)
        self.distances = StudentDistances(distances)
        // As `isStrong(major:row:schools:)`; a strong program is one the school offers, so
        // only the offered majors are asked.
        let numbers = majorNumbers
        for row in 0..<n where matches.offersAny(row: row) {
            let strong = schools.majors.strongProgramNumbers[row]
            for m in majors.indices where matches.offers(major: m, row: row) && numbers[m].contains(where: { MajorsIndex.contains(strong, $0) }) {
                matches.setStrong(major: m, row: row)
            }
        }
        majorMatches = matches
    }

    /// The student's majors that school `row` offers, by label, in the student's order.
    ///
    /// - Parameters:
    ///   - row: The school.
    ///   - schools: The catalog.
    /// - Returns: Labels of offered majors.
    public func matchedMajors(row: Int, schools: SchoolCatalog) -> [String] {
        guard !majors.isEmpty, majorMatches.offersAny(row: row) else { return [] }
        var labels: [String] = []
        for m in majors.indices where majorMatches.offers(major: m, row: row) { labels.append(majors[m].label) }
        return labels
    }

    /// Whether school `row` offers the student's major `m` (one of its CIP codes), from the
    /// school's own programs: the reference `majorMatches` is written from and tested against.
    func offers(major m: Int, row: Int, schools: SchoolCatalog) -> Bool {
        let offered = schools.majors.programNumbers[row]
        return majorNumbers[m].contains { MajorsIndex.contains(offered, $0) }
    }

    /// Whether one of major `m`'s programs is among school `row`'s strong ones.
    func isStrong(major m: Int, row: Int, schools: SchoolCatalog) -> Bool {
        let strong = schools.majors.strongProgramNumbers[row]
        return majorNumbers[m].contains { MajorsIndex.contains(strong, $0) }
    }
}

/// Which student-relative terms a `SchoolMatcher` computes (`MatchStudent`'s tables).
public enum SchoolTermBasis: String, Sendable, Hashable, Codable, CaseIterable {
    /// `distance`, `budget`, `academic_fit`, `major_fit`.
    case standard
    /// The standard four plus `budget_over` (a cliff beyond the budget) and `distance_near`
    /// (closeness that saturates): opt-in, since it changes the model's dimension and so every
    /// stored session's layout.
    case expanded
}

/// Which of a student's majors each school offers, and in which it has a strong program: one
/// bit per major and school, the offered bytes of a school beside its strong ones.
///
/// Why: a card's major reason and its matched majors asked, for each of the student's majors,
/// whether the school offers it, by a binary search in the school's own lists of programs,
/// separate arrays per school: two or three cache misses a card (`perf`: a third of the school
/// explanation's own time). Written once per resolved student from its majors' postings, so a
/// card reads one or two adjacent bytes (2 bytes a school for up to 8 majors).
struct MajorMatches: Sendable {
    /// Bytes of one mask of one school: ⌈majors / 8⌉.
    private let width: Int
    /// Per school, `width` bytes of offered majors, then `width` of strong ones.
    private var bits: [UInt8]

    /// No major offered anywhere.
    ///
    /// - Parameters:
    ///   - majors: The student's majors (none: no bytes at all).
    ///   - schoolCount: Schools in the catalog.
    init(majors: Int, schoolCount: Int) {
        width = (majors + 7) / 8
        bits = [UInt8](repeating: 0, count: 2 * width * schoolCount)
    }

    /// The bytes held.
    var byteCount: Int { bits.count }

    /// Starts loading these schools' bytes into the caches.
    func prefetch(rows: [Int]) { bits.prefetch(rows: rows, width: 2 * width) }

    /// Marks major `m` offered by school `row`.
    mutating func setOffered(major m: Int, row: Int) { bits[2 * width * row + m / 8] |= 1 << UInt8(m % 8) }

    /// Marks school `row` strong in major `m`.
    mutating func setStrong(major m: Int, row: Int) { bits[2 * width * row + width + m / 8] |= 1 << UInt8(m % 8) }

    /// Whether school `row` offers major `m`.
    @inline(__always)
    func offers(major m: Int, row: Int) -> Bool { bits[2 * width * row + m / 8] & (1 << UInt8(m % 8)) != 0 }

    /// Whether school `row` has a strong program in major `m` (it then offers it).
    @inline(__always)
    func isStrong(major m: Int, row: Int) -> Bool { bits[2 * width * row + width + m / 8] & (1 << UInt8(m % 8)) != 0 }

    /// Whether school `row` offers any of the majors.
    func offersAny(row: Int) -> Bool {
        guard width > 0 else { return false }
        let start = 2 * width * row
        for b in start..<(start + width) where bits[b] != 0 { return true }
        return false
    }
}
