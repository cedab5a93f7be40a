import SwipeRank

/// Which schools offer which bachelor's programs, by 4-digit CIP code.
///
/// Built from `school_majors.csv` (credential level 3 rows). Lookups go both ways: the
/// programs of a school, and the schools (rows of the catalog) offering a program, so the
/// major-match term of a request touches only the postings of the student's majors.
public struct MajorsIndex: Sendable {
    /// One program offered by one school.
    public struct Offering: Sendable, Hashable {
        /// The catalog row of the school.
        public let row: Int
        /// Bachelor's completers per year, if reported.
        public let completers: Int?
    }

    /// A major a student asked for, resolved to CIP codes.
    public struct ResolvedMajor: Sendable, Hashable, Codable {
        /// The name shown to the student (their own words for a name, the CIP title for a code).
        public let label: String
        /// The CIP codes that count as this major.
        public let cipCodes: [String]
    }

    /// CIP title by code, e.g. `"11.07"` → `"Computer Science"`.
    public let titles: [String: String]
    /// Schools offering each CIP code, in row order.
    public let offerings: [String: [Offering]]
    /// The 75th percentile of completers among schools offering each CIP code; a school at or
    /// above it (and with at least 20 completers) has a "strong" program.
    public let strongThreshold: [String: Int]
    /// Share of each school's bachelor's completers by 2-digit CIP family, for the catalog's
    /// family features: `familyShares[family][row]`.
    public let familyShares: [String: [Float]]
    /// The CIP codes each school offers: `programs[row]`.
    public let programs: [Set<String>]
    /// The 2-digit CIP families each school offers: `families[row]`.
    public let families: [Set<String>]
    /// The CIP codes in which each school has a strong program (`strongThreshold`, its first
    /// offering of the code): `strongPrograms[row]`, so explaining a card never scans the
    /// thousands of offerings of a common major.
    public let strongPrograms: [Set<String>]
    /// Every CIP code some school offers, numbered in byte order: a card asks "does this school
    /// offer the student's major?" for each of its majors, and comparing small integers in a
    /// short sorted list costs a fraction of hashing the code into a `Set<String>`.
    let codeNumbers: [String: Int32]
    /// `programs[row]` as code numbers, ascending.
    let programNumbers: [[Int32]]
    /// `strongPrograms[row]` as code numbers, ascending.
    let strongProgramNumbers: [[Int32]]

    /// Builds the index.
    ///
    /// - Parameters:
    ///   - table: The parsed majors CSV (`unitid`, `cip_code`, `cip_family`, `major_name`,
    ///     `credential_level`, `completers`).
    ///   - rowOfSchool: Maps a `unitid` to its catalog row.
    ///   - schoolCount: The number of catalog rows.
    /// - Throws: `DataError` for a missing column, a bad number, or a `unitid` not in the
    ///   catalog.
    /// - Complexity: O(rows).
    public init(table: CSVTable, rowOfSchool: (String) -> Int?, schoolCount: Int) throws(DataError) {
        let unitid = try table.column(named: "unitid"), cip = try table.column(named: "cip_code")
        let family = try table.column(named: "cip_family"), name = try table.column(named: "major_name")
        let level = try table.column(named: "credential_level"), completers = try table.column(named: "completers")
        var titles: [String: String] = [:]
        var offerings: [String: [Offering]] = [:]
        var programs = [Set<String>](repeating: [], count: schoolCount)
        // Per school: completers and program counts by family.
        var familyCompleters = [[String: Double]](repeating: [:], count: schoolCount)
        var familyPrograms = [[String: Double]](repeating: [:], count: schoolCount)
        var totalCompleters = [Double](repeating: 0, count: schoolCount)
        var totalPrograms = [Double](repeating: 0, count: schoolCount)
        for row in table.rows {
            // Only bachelor's programs count; other credential levels may be present and are skipped.
            guard try table.requiredNumber(row: row, column: level) == 3 else { continue }
            let id = row[unitid].trimmedSpaces
            guard let r = rowOfSchool(id) else {
                throw table.error(.unknownReference, row: row, column: unitid,
                                  detail: "unitid \"\(id)\" is not in the school catalog")
            }
            let code = row[cip].trimmedSpaces
            guard !code.isEmpty else {
                throw table.error(.missingValue, row: row, column: cip, detail: "empty cip_code")
            }
            var count: Int?
            if let value = try table.number(row: row, column: completers) {
                // A count of people: a whole number no larger than any school could graduate.
                guard value >= 0, value <= 10_000_000, value == value.rounded() else {
                    throw table.error(.outOfRange, row: row, column: completers,
                                      detail: "completers must be a whole number in 0...10000000, got \(value)")
                }
                count = Int(value)
            }
            titles[code] = row[name]
            offerings[code, default: []].append(Offering(row: r, completers: count))
            programs[r].insert(code)
            let fam = row[family]
            familyCompleters[r][fam, default: 0] += Double(count ?? 0)
            familyPrograms[r][fam, default: 0] += 1
            totalCompleters[r] += Double(count ?? 0)
            totalPrograms[r] += 1
        }
        var thresholds: [String: Int] = [:]
        for (code, list) in offerings {
            let counts = list.compactMap(\.completers).sorted()
            let p75 = counts.isEmpty ? Int.max : counts[(counts.count * 3) / 4]
            thresholds[code] = max(20, p75)
        }
        // A school whose completer counts are all unreported gets shares by program count.
        var shares: [String: [Float]] = [:]
        for r in 0..<schoolCount {
            for (fam, programCount) in familyPrograms[r] {
                let share = totalCompleters[r] > 0 ? familyCompleters[r][fam, default: 0] / totalCompleters[r]
                    : programCount / totalPrograms[r]
                shares[fam, default: [Float](repeating: 0, count: schoolCount)][r] = Float(share)
            }
        }
        self.titles = titles
        self.offerings = offerings
        self.strongThreshold = thresholds
        self.familyShares = shares
        self.programs = programs
        self.families = programs.map { Set($0.map { String($0.prefix(2)) }) }
        var strong = [Set<String>](repeating: [], count: schoolCount)
        for (code, list) in offerings {
            var seen = Set<Int>()
            for offering in list where seen.insert(offering.row).inserted
                && (offering.completers ?? 0) >= thresholds[code] ?? .max { strong[offering.row].insert(code) }
        }
        self.strongPrograms = strong
        let codeNumbers = Dictionary(uniqueKeysWithValues: Set(programs.joined()).sorted().enumerated().map { ($1, Int32($0)) })
        self.codeNumbers = codeNumbers
        programNumbers = programs.map { $0.map { codeNumbers[$0]! }.sorted() }
        strongProgramNumbers = strong.map { $0.compactMap { codeNumbers[$0] }.sorted() }
        self.normalizedTitles = titles.map { (code: $0.key, padded: Array(" \(MajorsIndex.normalize($0.value)) ".utf8)) }
            .sorted { $0.code < $1.code }
    }

    /// Every title normalized once (lowercased, punctuation to spaces, padded with spaces) as
    /// UTF-8 bytes, by code: resolving a name is then one byte-substring test per title, not a
    /// re-normalization of every title (nor Foundation's `contains`, 40% of a restore) per request.
    let normalizedTitles: [(code: String, padded: [UInt8])]

    /// Whether `needle` occurs in `haystack` (both short: titles and a student's words).
    static func occurs(_ needle: [UInt8], in haystack: [UInt8]) -> Bool {
        guard needle.count <= haystack.count else { return false }
        guard let first = needle.first else { return true }
        var i = 0
        let last = haystack.count - needle.count
        while i <= last {
            if haystack[i] == first, haystack[i..<(i + needle.count)].elementsEqual(needle) { return true }
            i += 1
        }
        return false
    }

    /// Resolves what a student typed to CIP codes.
    ///
    /// Accepted: a 4-digit CIP code (`"11.07"`), a 2-digit family (`"11"`, all its codes), or a
    /// name, matched without regard to case and punctuation: every title containing the name's
    /// words as a phrase (`"Business Administration"` → 52.02 "Business Administration,
    /// Management and Operations"; `"Nursing"` → 51.16, 51.38, 51.39).
    ///
    /// - Parameter text: The student's words.
    /// - Returns: The resolved major.
    /// - Throws: `DataError` `.unknownReference` with suggestions when nothing matches.
    public func resolve(_ text: String) throws(DataError) -> ResolvedMajor {
        let query = text.trimmedSpaces
        if let title = titles[query] { return ResolvedMajor(label: title, cipCodes: [query]) }
        if query.count == 2, query.allSatisfy(\.isNumber) {
            let codes = titles.keys.filter { $0.hasPrefix(query + ".") }.sorted()
            if !codes.isEmpty { return ResolvedMajor(label: "CIP family \(query)", cipCodes: codes) }
        }
        let key = MajorsIndex.normalize(query)
        guard !key.isEmpty else {
            throw DataError(.unknownReference, source: "profile", field: "intended_majors",
                            detail: "empty major name")
        }
        // Every title that contains the words as a phrase: "Nursing" is 51.16 "Nursing" and
        // 51.38 "Registered Nursing, …", "Psychology" every psychology field.
        let phrase = Array(" \(key) ".utf8)
        let codes = normalizedTitles.filter { MajorsIndex.occurs(phrase, in: $0.padded) }.map(\.code)
        if !codes.isEmpty { return ResolvedMajor(label: query, cipCodes: codes) }
        let words = key.split(separator: " ").filter { $0.count > 3 }.prefix(8).map { Array($0.utf8) }
        let suggestions = normalizedTitles.filter { title in words.contains { MajorsIndex.occurs($0, in: title.padded) } }
            .compactMap { titles[$0.code] }.sorted().prefix(5)
        throw DataError(.unknownReference, source: "profile", field: "intended_majors",
                        detail: "unknown major \"\(DataError.truncated(query))\"" + (suggestions.isEmpty ? "" : "; did you mean: \(suggestions.joined(separator: "; "))?"))
    }

    /// Whether the ascending `numbers` hold `number` (binary search).
    static func contains(_ numbers: [Int32], _ number: Int32) -> Bool {
        var low = 0, high = numbers.count
        while low < high {
            let mid = (low + high) / 2
            if numbers[mid] < number { low = mid + 1 } else { high = mid }
        }
        return low < numbers.count && numbers[low] == number
    }

    static func normalize(_ text: String) -> String {
        String(text.lowercased().map { $0.isLetter || $0.isNumber ? $0 : " " })
            .split(separator: " ").joined(separator: " ")
    }
}
