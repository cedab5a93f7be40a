import Foundation
@testable import SwipeRankColleges
import Testing
@testable import SwipeRank
import SwipeRankNumerics

/// The school explanations are written from sentences prepared once per catalog and per student,
/// and the reasons are picked one at a time instead of sorted. Here they must equal, on every
/// school, a plain reference that ranks all groups and formats every sentence from the catalog's
/// values (the way cards were explained before), for students with and without a home, budget,
/// SAT, majors and size preference, under cold-start, random and the expanded basis's weights.
@Suite("Explanations against a plain reference")
struct ExplanationReferenceTests {
    static let schools = Fixtures.schools

    @Test("every school, varied students and weights", arguments: 0..<6)
    func everySchool(seed: UInt64) throws {
        var rng = SplitMix64(seed: 4_200 + seed)
        let basis: SchoolTermBasis = seed % 3 == 2 ? .expanded : .standard
        let matcher = SchoolMatcher(schools: Self.schools, termBasis: basis)
        let student = try matcher.student(Self.randomProfile(&rng))
        let k = MatchStudent.termNames(basis).count
        var weights = matcher.coldStartWeights(for: student)
        if seed % 2 == 1 {
            weights = PreferenceWeights(features: (0..<Self.schools.catalog.dimension).map { _ in Float.random(in: -1...1.5, using: &rng) },
                                        terms: (0..<k).map { _ in Float.random(in: -0.5...2, using: &rng) })
        }
        var explained = 0
        for row in 0..<Self.schools.catalog.count {
            let got = matcher.explanations(row: row, student: student, weights: weights)
            let want = Self.reference(row: row, student: student, weights: weights, basis: basis)
            #expect(got == want, "seed \(seed) row \(row)")
            explained += got.count
            #expect(student.matchedMajors(row: row, schools: Self.schools)
                    == student.majors.filter { $0.cipCodes.contains { Self.schools.majors.programs[row].contains($0) } }.map(\.label))
        }
        #expect(explained > Self.schools.catalog.count, "seed \(seed): most schools get reasons")
    }

    @Test("the major bits equal the schools' program lists, from no major to the most allowed", arguments: 0..<5)
    func majorBits(seed: UInt64) throws {
        var rng = SplitMix64(seed: 4_300 + seed)
        let codes = Self.schools.majors.titles.keys.sorted()
        // 0, 1, 8, 9 and 20 majors: one byte a mask, then two (a 9th major), then three.
        let count = [0, 1, 8, 9, StudentProfile.maxIntendedMajors][Int(seed)]
        let majors = Array(codes.shuffled(using: &rng).prefix(count))
        let student = try SchoolMatcher(schools: Self.schools).student(StudentProfile(intendedMajors: majors))
        #expect(student.majors.count == count)
        var offered = 0, strong = 0
        for row in 0..<Self.schools.catalog.count {
            for m in student.majors.indices {
                let offers = student.offers(major: m, row: row, schools: Self.schools)
                #expect(student.majorMatches.offers(major: m, row: row) == offers, "seed \(seed) row \(row) major \(m)")
                #expect(student.majorMatches.isStrong(major: m, row: row) == student.isStrong(major: m, row: row, schools: Self.schools),
                        "seed \(seed) row \(row) major \(m)")
                offered += offers ? 1 : 0
                strong += student.majorMatches.isStrong(major: m, row: row) ? 1 : 0
            }
            #expect(student.majorMatches.offersAny(row: row) == student.majors.indices.contains { student.offers(major: $0, row: row, schools: Self.schools) })
        }
        if count >= 8 { #expect(offered > 0 && strong > 0, "seed \(seed): some school offers, and is strong in, one of \(count) majors") }
    }

    static func randomProfile(_ rng: inout SplitMix64) -> StudentProfile {
        let catalog = schools.catalog
        let row = Int.random(in: 0..<catalog.count, using: &rng)
        let state = catalog.textValues[catalog.textAttribute(named: "state")!][row]
        let majors = ["11.07", "Psychology", "Nursing", "52", "History", "Computer Science"].filter { _ in Bool.random(using: &rng) }
        return StudentProfile(home: Bool.random(using: &rng) ? catalog.locations[row] : nil,
                              homeState: Bool.random(using: &rng) ? state : nil,
                              maxDistanceMiles: Double.random(in: 50...1500, using: &rng),
                              annualBudget: Bool.random(using: &rng) ? Double.random(in: 5000...80000, using: &rng) : nil,
                              sat: Bool.random(using: &rng) ? Double(Int.random(in: 800...1600, using: &rng)) : nil,
                              intendedMajors: majors,
                              sizePreference: StudentProfile.SizePreference.allCases.randomElement(using: &rng)!)
    }

    // MARK: The reference

    static func reference(row: Int, student: MatchStudent, weights: PreferenceWeights, basis: SchoolTermBasis) -> [String] {
        let catalog = schools.catalog
        let names = catalog.groups + MatchStudent.termNames(basis)
        var values = catalog.groupContributions(row: row, weights: weights, terms: student.terms)
        for (extra, base) in [("budget_over", "budget"), ("distance_near", "distance")] {
            guard let e = names.firstIndex(of: extra), let b = names.firstIndex(of: base) else { continue }
            values[b] += values[e]
            values[e] = -.infinity
        }
        let ranked = values.indices.filter { values[$0] >= 0.05 }
            .sorted { values[$0] > values[$1] || (values[$0] == values[$1] && names[$0] < names[$1]) }
        var result: [String] = []
        for group in ranked where result.count < 3 {
            if let sentence = sentence(names[group], row: row, student: student, weights: weights) { result.append(sentence) }
        }
        return result
    }

    static func number(_ name: String, _ row: Int) -> Double? {
        schools.catalog.numericAttribute(named: name).flatMap { schools.catalog.numericValues[$0][row] }
    }

    static func text(_ name: String, _ row: Int) -> String {
        schools.catalog.textAttribute(named: name).map { schools.catalog.textValues[$0][row] } ?? ""
    }

    static func whole(_ x: Double) -> String { abs(x) < 1e15 ? String(Int(x.rounded())) : String(format: "%.3g", x) }
    static func percent(_ x: Double) -> String { "\(whole(x * 100))%" }
    static func dollars(_ x: Double) -> String { "$" + grouped(x) }
    static func grouped(_ x: Double) -> String {
        let digits = Array(String(Int(x.rounded()).magnitude))
        var out = ""
        for (i, digit) in digits.enumerated() {
            if i > 0 && (digits.count - i) % 3 == 0 { out += "," }
            out.append(digit)
        }
        return (x.rounded() < 0 ? "-" : "") + out
    }

    static func sentence(_ group: String, row: Int, student: MatchStudent, weights: PreferenceWeights) -> String? {
        let profile = student.profile
        switch group {
        case "major_fit":
            let offered = student.majors.filter { $0.cipCodes.contains { schools.majors.programs[row].contains($0) } }
            guard let first = offered.first else { return nil }
            if let strong = offered.first(where: { $0.cipCodes.contains { schools.majors.strongPrograms[row].contains($0) } }) {
                return "Strong \(strong.label) program"
            }
            return offered.count > 1 ? "Offers \(first.label) and \(offered.count - 1) more of your majors" : "Offers \(first.label)"
        case "budget":
            guard let budget = profile.annualBudget, let cost = schools.estimatedCost(row: row, homeState: profile.homeState) else { return nil }
            return cost <= budget ? "Within your budget (\(dollars(cost))/yr)" : "Close to your budget (\(dollars(cost))/yr)"
        case "distance":
            guard row < student.distances.count else { return nil }
            let d = Double(student.distances[row])
            return d <= profile.maxDistanceMiles ? "Close to home (\(whole(d)) mi)" : "Just beyond your range (\(whole(d)) mi)"
        case "academic_fit":
            guard let sat = profile.sat, let s = number("sat_avg", row) else { return nil }
            return "Strong academic fit (average SAT \(whole(s)), yours \(whole(sat)))"
        case "selectivity":
            return number("admission_rate", row).map { "Selective: admits \(percent($0))" }
        case "academics":
            return number("sat_avg", row).map { "Academically strong (average SAT \(whole($0)))" }
        case "size":
            guard let n = number("undergrad_enrollment", row) else { return nil }
            let band = n < 5000 ? StudentProfile.SizePreference.small : n < 15000 ? .medium : .large
            if band == profile.sizePreference { return "Perfect size match (\(grouped(n)) undergrads)" }
            return ["small": "Small school", "medium": "Mid-sized school", "large": "Large school"][band.rawValue]! + " (\(grouped(n)) undergrads)"
        case "outcomes":
            return number("completion_rate", row).map { "High graduation rate (\(percent($0)))" }
        case "earnings":
            return number("median_earnings", row).map { "Strong graduate earnings (\(dollars($0)) median)" }
        case "cost":
            return number("net_price", row).map { "Low net price (\(dollars($0))/yr)" }
        case "control":
            return ["public": "Public university", "private_nonprofit": "Private nonprofit college"][text("control", row)]
        case "setting":
            let locale = text("locale", row)
            guard !locale.isEmpty else { return nil }
            let parts = locale.split(separator: "_")
            return "\(parts[0].capitalized) setting (\(parts.dropFirst().joined(separator: " ")))"
        case "region":
            return "In the \(text("region", row).split(separator: "_").map(\.capitalized).joined(separator: " ")) region"
        case "programs":
            let catalog = schools.catalog
            let columns = catalog.columns.indices.filter { catalog.columns[$0].group == "programs" }
            var best = -1
            var bestValue: Float = 0
            for (i, column) in columns.enumerated() {
                let value = weights.features[column] * catalog.features[row, column]
                if best < 0 || bestValue < value { (best, bestValue) = (i, value) }
            }
            guard best >= 0, bestValue > 0 else { return nil }
            let family = String(catalog.columns[columns[best]].name.dropFirst("programs_".count))
            let name = SchoolMatcher.familyNames[family] ?? "CIP \(family)"
            return "Big \(name) department (\(percent(Double(catalog.features[row, columns[best]]))) of graduates)"
        default:
            return nil
        }
    }
}
