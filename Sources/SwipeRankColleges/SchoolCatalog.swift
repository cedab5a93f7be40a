import SwipeRank

/// The college catalog: schools from `schools.csv` as a `Catalog`, plus their bachelor's
/// programs from `school_majors.csv`.
///
/// Feature columns (d = 54 for the shipped data), all documented in `SchoolCatalog.schema`:
///
/// | group | columns | transform |
/// |---|---|---|
/// | selectivity | `selectivity` = 1 − admission_rate | z-score; missing → median + indicator |
/// | academics | `sat_avg` | z-score; missing → median + indicator |
/// | size | `enrollment` = log(1 + undergrads); `size=small/medium/large` (< 5,000 / < 15,000 / more) | z-score; one-hot; missing → indicator |
/// | outcomes | `completion_rate` | z-score; missing → median + indicator |
/// | earnings | `earnings` = log(1 + median earnings) | z-score; missing → median + indicator |
/// | cost | `net_price` | z-score; missing → median + indicator |
/// | control | `control=public/private_nonprofit/private_for_profit` | one-hot, required |
/// | setting | `locale=<12 NCES labels>` | one-hot; missing → indicator |
/// | region | `region=<BEA region>` | one-hot, required |
/// | programs | `programs_<CIP family>` for the 12 largest families | share of the school's bachelor's completers in the family (0…1) |
public struct SchoolCatalog: Sendable {
    /// The schools as a generic catalog.
    public let catalog: Catalog
    /// The schools' bachelor's programs.
    public let majors: MajorsIndex

    // Per-school cost inputs (NaN where missing) and state codes, for the budget term.
    let baseCost: [Float]
    let outOfStateSurcharge: [Float]
    let isPublic: [Bool]
    let states: [String]
    let satAverage: [Float]

    /// The CIP families that get a `programs_<family>` feature column: the 12 with the most
    /// bachelor's completers nationally (business, health, social sciences, psychology,
    /// biology, engineering, computer science, visual arts, education, communication,
    /// security/law enforcement, interdisciplinary studies).
    public static let featuredFamilies = ["52", "51", "45", "42", "26", "14", "11", "50", "13", "09", "43", "30"]

    /// The 12 NCES locale labels, in column order.
    public static let locales = ["city_large", "city_midsize", "city_small", "suburb_large", "suburb_midsize",
                                 "suburb_small", "town_fringe", "town_distant", "town_remote",
                                 "rural_fringe", "rural_distant", "rural_remote"]

    /// How `schools.csv` becomes a catalog (see the table above).
    public static let schema = ItemSchema(
        idColumn: "unitid", nameColumn: "name",
        coordinateColumns: (latitude: "latitude", longitude: "longitude"),
        textAttributes: ["city", "state", "zip", "control", "locale", "region"],
        numericAttributes: ["admission_rate", "sat_avg", "tuition_in_state", "tuition_out_of_state",
                            "undergrad_enrollment", "completion_rate", "net_price", "cost_of_attendance",
                            "median_earnings"],
        features: [
            .numeric("admission_rate", transform: .oneMinus, group: "selectivity", name: "selectivity"),
            .numeric("sat_avg", group: "academics"),
            .numeric("undergrad_enrollment", transform: .log1p, group: "size", name: "enrollment"),
            FeatureSpec(column: "undergrad_enrollment", kind: .bins(edges: [5000, 15000], labels: ["small", "medium", "large"]),
                        missing: .imputeWithIndicator, group: "size", name: "size"),
            .numeric("completion_rate", group: "outcomes"),
            .numeric("median_earnings", transform: .log1p, group: "earnings", name: "earnings"),
            .numeric("net_price", group: "cost"),
            FeatureSpec(column: "control", kind: .categorical(categories: ["public", "private_nonprofit", "private_for_profit"]),
                        missing: .reject, group: "control"),
            .categorical("locale", categories: locales, group: "setting"),
            FeatureSpec(column: "region", kind: .categorical(categories: nil), missing: .reject, group: "region"),
        ])

    /// Loads the catalog.
    ///
    /// - Parameters:
    ///   - schoolsPath: Path of `schools.csv`.
    ///   - majorsPath: Path of `school_majors.csv` (bachelor's rows; other levels are skipped).
    /// - Throws: `DataError` naming file, line and column for any bad input.
    /// - Complexity: O(rows of both files).
    public init(schoolsPath: String, majorsPath: String) throws(DataError) {
        try self.init(schools: try CSVTable(contentsOfFile: schoolsPath),
                      majors: try CSVTable(contentsOfFile: majorsPath))
    }

    /// The rows of `majors` whose school is in `schools`: the programs of a catalog that
    /// operators edited (a deleted school's programs would otherwise be references to nothing).
    /// Rows keep their lines, so errors still name the file's.
    ///
    /// - Parameters:
    ///   - majors: The parsed `school_majors.csv`.
    ///   - schools: The schools table.
    /// - Returns: The filtered table.
    /// - Throws: `DataError` `.missingColumn` when either table has no `unitid`.
    public static func programs(_ majors: CSVTable, ofSchoolsIn schools: CSVTable) throws(DataError) -> CSVTable {
        let schoolID = try schools.column(named: "unitid"), majorSchool = try majors.column(named: "unitid")
        let ids = Set(schools.rows.map { $0[schoolID].trimmedSpaces })
        return majors.filtered { ids.contains($0[majorSchool].trimmedSpaces) }
    }

    /// Builds the catalog from parsed tables.
    ///
    /// - Parameters:
    ///   - schools: The parsed `schools.csv`.
    ///   - majors: The parsed `school_majors.csv`.
    /// - Throws: `DataError` for any bad input.
    public init(schools: CSVTable, majors: CSVTable) throws(DataError) {
        // Ids first (cheaply) so program shares can be attached as external features.
        let idColumn = try schools.column(named: "unitid")
        var rowOfID: [String: Int] = [:]
        for (r, row) in schools.rows.enumerated() where rowOfID[row[idColumn]] == nil {
            rowOfID[row[idColumn].trimmedSpaces] = r
        }
        let index = try MajorsIndex(table: majors, rowOfSchool: { rowOfID[$0] }, schoolCount: schools.rows.count)
        let ids = schools.rows.map { $0[idColumn].trimmedSpaces }
        let external = SchoolCatalog.featuredFamilies.map { family in
            let shares = index.familyShares[family] ?? []
            var values: [String: Float] = [:]
            for (r, share) in shares.enumerated() { values[ids[r]] = share }
            // A school with no program in the family has share 0: a real zero, not a gap.
            return ExternalFeature(name: "programs_\(family)", group: "programs", values: values, defaultValue: 0)
        }
        let catalog = try Catalog(table: schools, schema: SchoolCatalog.schema, external: external)
        self.catalog = catalog
        self.majors = index

        func numbers(_ name: String) -> [Double?] { Array(catalog.numericValues[catalog.numericAttribute(named: name)!]) }
        func texts(_ name: String) -> [String] { Array(catalog.textValues[catalog.textAttribute(named: name)!]) }
        let net = numbers("net_price"), coa = numbers("cost_of_attendance")
        let tIn = numbers("tuition_in_state"), tOut = numbers("tuition_out_of_state")
        let control = texts("control")
        var base = [Float](), surcharge = [Float](), isPublic = [Bool]()
        for r in 0..<catalog.count {
            // Net price (after average aid) is what a family pays; cost of attendance is the
            // sticker price; tuition alone is the last resort.
            let cost = net[r] ?? coa[r] ?? tIn[r]
            base.append(cost.map(Float.init) ?? .nan)
            let pub = control[r] == "public"
            isPublic.append(pub)
            // Net price and cost of attendance are in-state figures at public schools.
            if pub, let o = tOut[r], let i = tIn[r], o > i { surcharge.append(Float(o - i)) } else { surcharge.append(0) }
        }
        baseCost = base
        outOfStateSurcharge = surcharge
        self.isPublic = isPublic
        states = texts("state")
        satAverage = numbers("sat_avg").map { $0.map(Float.init) ?? .nan }
    }

    /// The estimated yearly cost of a school for a student from `homeState`.
    ///
    /// Net price, else cost of attendance, else in-state tuition; at public schools outside
    /// the student's home state (or when the home state is unknown) the out-of-state tuition
    /// surcharge is added.
    ///
    /// - Parameters:
    ///   - row: The school's row.
    ///   - homeState: The student's state, if known.
    /// - Returns: Dollars per year, or nil when the school reports no cost at all.
    public func estimatedCost(row: Int, homeState: String?) -> Double? {
        let base = baseCost[row]
        guard !base.isNaN else { return nil }
        return Double(base + (states[row] == homeState ? 0 : outOfStateSurcharge[row]))
    }
}
