import Foundation
import Testing
@testable import SwipeRank
import SwipeRankNumerics

@Suite("Catalog import")
struct CatalogTests {
    let schema = ItemSchema(
        idColumn: "id", nameColumn: "name", coordinateColumns: (latitude: "lat", longitude: "lon"),
        textAttributes: ["kind"], numericAttributes: ["price"],
        features: [
            .numeric("price", transform: .log1p, group: "cost"),
            .categorical("kind", categories: ["a", "b"], group: "kind"),
            FeatureSpec(column: "size", kind: .bins(edges: [10, 100], labels: ["s", "m", "l"]), missing: .imputeWithIndicator, group: "size"),
        ])

    func load(_ rows: [String]) throws -> Catalog {
        try Catalog(table: Fixtures.table(["id,name,lat,lon,price,kind,size"] + rows), schema: schema)
    }

    @Test("transforms: log, z-score, median imputation with indicator, one-hot, bins")
    func transforms() throws {
        let catalog = try load(["1,One,40,-70,0,a,5", "2,Two,41,-71,,b,50", "3,Three,,,99,,500", "4,Four,42,-72,9,a,"])
        #expect(catalog.count == 4)
        #expect(catalog.columns.map(\.name) == ["price", "price_missing", "kind=a", "kind=b", "kind_missing",
                                                "size=s", "size=m", "size=l", "size_missing"])
        // log1p prices 0, ln 10, ln 100 observed; missing → median ln 10.
        let raw = [0, log(10.0), log(100.0), log(10.0)]
        let mean = raw.reduce(0, +) / 4
        let sd = (raw.map { ($0 - mean) * ($0 - mean) }.reduce(0, +) / 4).squareRoot()
        for r in 0..<4 { #expect(abs(Double(catalog.features[r, 0]) - (raw[r == 1 ? 3 : r] - mean) / sd) < 1e-5) }
        #expect((0..<4).map { catalog.features[$0, 1] } == [0, 1, 0, 0])
        #expect((0..<4).map { catalog.features[$0, 2] } == [1, 0, 0, 1])
        #expect((0..<4).map { catalog.features[$0, 4] } == [0, 0, 1, 0])
        #expect((0..<4).map { [catalog.features[$0, 5], catalog.features[$0, 6], catalog.features[$0, 7], catalog.features[$0, 8]] }
                == [[1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1]])
        #expect(catalog.locations[2] == nil && catalog.locations[0]?.latitude == 40)
        #expect(catalog.numericValues[0][1] == nil)
        #expect(catalog.row(of: "3") == 2)
    }

    @Test("bad input throws with file:line:column and the column name", arguments: [
        ("1,One,40,-70,abc,a,5", DataError.Kind.nonNumeric, "test.csv:2:14", "price"),
        ("1,One,40,-70,inf,a,5", .nonFinite, "test.csv:2:14", "price"),
        ("1,One,91,-70,1,a,5", .outOfRange, "test.csv:2:7", "lat"),
        ("1,One,40,-181,1,a,5", .outOfRange, "test.csv:2:10", "lon"),
        ("1,One,40,,1,a,5", .missingValue, "test.csv:2:10", "lon"),
        ("1,One,40,-70,1,c,5", .invalidValue, "test.csv:2:16", "kind"),
        (",One,40,-70,1,a,5", .missingValue, "test.csv:2:1", "id"),
        ("1,One,nan,-70,1,a,5", .nonFinite, "test.csv:2:7", "lat"),
    ])
    func badInput(row: String, kind: DataError.Kind, location: String, field: String) {
        do {
            _ = try load([row])
            Issue.record("accepted \(row)")
        } catch let error as DataError {
            #expect(error.kind == kind, "\(error)")
            #expect(error.description.hasPrefix(location + ":"), "\(error)")
            #expect(error.field == field)
        } catch { Issue.record("unexpected \(error)") }
    }

    @Test("a duplicate id names both lines")
    func duplicate() {
        do {
            _ = try load(["1,One,40,-70,1,a,5", "2,Two,40,-70,1,a,5", "1,Again,40,-70,1,a,5"])
            Issue.record("duplicate accepted")
        } catch let error as DataError {
            #expect(error.kind == .duplicateID)
            #expect(error.description == "test.csv:4:1: duplicate id \"1\" (first on line 2)")
        } catch { Issue.record("unexpected \(error)") }
    }

    @Test("a missing required column throws")
    func missingColumn() {
        #expect {
            _ = try Catalog(table: Fixtures.table(["id,name,lat,lon,price,kind", "1,x,1,1,1,a"]), schema: schema)
        } throws: { ($0 as? DataError)?.kind == .missingColumn && "\($0)".contains("\"size\"") }
    }

    @Test("the shipped schools load: 2,294 rows, 54 finite features, honest gaps")
    func shipped() {
        let catalog = Fixtures.schools.catalog
        #expect(catalog.count == 2294)
        #expect(catalog.dimension == 54)
        #expect(catalog.features.elements.allSatisfy { $0.isFinite })
        let satMissing = catalog.columns.firstIndex { $0.name == "sat_avg_missing" }!
        let share = (0..<catalog.count).map { catalog.features[$0, satMissing] }.reduce(0, +) / Float(catalog.count)
        #expect(abs(share - 0.524) < 0.005, "SAT is missing for 52.4% of schools, got \(share)")
        // z-scored columns have mean 0 and standard deviation 1.
        let sat = catalog.columns.firstIndex { $0.name == "sat_avg" }!
        let values = (0..<catalog.count).map { Double(catalog.features[$0, sat]) }
        let mean = values.reduce(0, +) / Double(values.count)
        let sd = (values.map { ($0 - mean) * ($0 - mean) }.reduce(0, +) / Double(values.count)).squareRoot()
        #expect(abs(mean) < 1e-4 && abs(sd - 1) < 1e-3)
        let harvard = catalog.row(of: "166027")!
        #expect(catalog.names[harvard] == "Harvard University")
        let baltimore = catalog.row(of: "163259")!
        #expect(catalog.names[baltimore] == "University of Maryland, Baltimore")
    }

    @Test("program shares sum to at most 1 and majors are bachelor's programs the school reports")
    func programs() throws {
        let schools = Fixtures.schools
        let shareColumns = schools.catalog.columns.indices.filter { schools.catalog.columns[$0].group == "programs" }
        for r in 0..<schools.catalog.count {
            let sum = shareColumns.map { schools.catalog.features[r, $0] }.reduce(0, +)
            #expect(sum <= 1.0001)
        }
        let mit = schools.catalog.row(of: "166683")!
        #expect(schools.majors.programs[mit].contains("11.07"))
        #expect(try schools.majors.resolve("computer science").cipCodes == ["11.07", "30.08", "30.16", "30.39", "30.48"])
        #expect(try schools.majors.resolve("Nursing").cipCodes == ["51.16", "51.38", "51.39"])
        #expect(try schools.majors.resolve("11").cipCodes.allSatisfy { $0.hasPrefix("11.") })
        #expect(try schools.majors.resolve("11.07").label == "Computer Science")
        #expect(try schools.majors.resolve("Business Administration").cipCodes == ["52.02"])
    }
}

@Suite("Item matcher medians")
struct ItemMatcherMedianTests {
    @Test("column and attribute medians equal sorted references (shipped restaurants; missing values and indicators)")
    func medians() throws {
        let dir = Fixtures.root.appendingPathComponent("datasets/restaurants")
        let catalog = try Catalog(table: try CSVTable(contentsOfFile: dir.appendingPathComponent("restaurants.csv").path),
                                  schema: ItemSchema.load(contentsOfFile: dir.appendingPathComponent("restaurants.schema.json").path))
        let matcher = ItemMatcher(catalog: catalog, regionAttribute: "neighborhood")
        let names = catalog.columns.map(\.name)
        var indicated = 0
        for (j, column) in catalog.columns.enumerated() {
            // The median over the rows whose value was observed (the column's `_missing` indicator is 0), upper middle.
            let indicator = names.firstIndex(of: column.name + "_missing")
            indicated += indicator == nil ? 0 : 1
            let observed = (0..<catalog.count).filter { indicator == nil || catalog.features[$0, indicator!] == 0 }
                .map { catalog.features[$0, j] }.sorted()
            #expect(matcher.columnMedians[j] == (observed.isEmpty ? 0 : observed[observed.count / 2]), "\(column.name)")
        }
        #expect(indicated > 0)  // the reference exercises the missing-value rule
        for (a, values) in catalog.numericValues.enumerated() {
            let present = values.compactMap { $0 }.sorted()
            #expect(matcher.attributeMedians[a] == (present.isEmpty ? nil : present[present.count / 2]))
        }
    }
}
