import Foundation
import SwipeRank
import Testing

/// `FeatureSpec.Kind.flag`: a 0/1 property of an item (a genre, "has parking"), read from
/// common spellings, unstandardized, and explained by its label.
@Suite struct FlagFeatureTests {
    static let schemaJSON = """
    {"id_column": "id", "name_column": "name", "numeric_attributes": ["year"], "features": [
      {"column": "g_comedy", "kind": "flag", "group": "genre", "label": "Comedy"},
      {"column": "g_drama", "kind": "flag", "group": "genre"},
      {"column": "year", "kind": "numeric", "group": "age", "missing": "reject"}]}
    """

    static func catalog(_ rows: [String]) throws -> Catalog {
        let schema = try ItemSchema.decode(json: Data(schemaJSON.utf8), source: "s.json")
        return try Catalog(table: Fixtures.table(["id,name,g_comedy,g_drama,year"] + rows), schema: schema)
    }

    @Test("every spelling reads as 0 or 1, unstandardized; an empty cell is 0 with its missing indicator")
    func values() throws {
        let catalog = try Self.catalog([
            "a,A,1,0,1990", "b,B,TRUE,no,1991", "c,C,yes,N,1992", "d,D,Y,false,1993", "e,E,0,Yes,1994", "f,F, ,1,1995",
        ])
        let comedy = catalog.columns.firstIndex { $0.name == "g_comedy" }!
        let drama = catalog.columns.firstIndex { $0.name == "g_drama" }!
        let missing = catalog.columns.firstIndex { $0.name == "g_comedy_missing" }!
        #expect((0..<6).map { catalog.features[$0, comedy] } == [1, 1, 1, 1, 0, 0])
        #expect((0..<6).map { catalog.features[$0, drama] } == [0, 0, 0, 0, 1, 1])
        #expect((0..<6).map { catalog.features[$0, missing] } == [0, 0, 0, 0, 0, 1])
        #expect(catalog.columns[comedy].role == .flag)
        #expect(catalog.columns[comedy].category == "Comedy")
        #expect(catalog.columns[drama].category == "g_drama")   // no label: the column's name
    }

    @Test("a cell that is not a flag is an error at file:line:column; a required empty one too")
    func badCells() throws {
        do {
            _ = try Self.catalog(["a,A,1,0,1990", "b,B,maybe,0,1991"])
            Issue.record("accepted \"maybe\"")
        } catch {
            #expect(String(describing: error).contains("test.csv:3:5"), "\(error)")
            #expect(String(describing: error).contains("not a 0/1 flag"), "\(error)")
        }
        let schema = ItemSchema(idColumn: "id", nameColumn: "name", coordinateColumns: nil, textAttributes: [], numericAttributes: [],
                                features: [FeatureSpec(column: "f", kind: .flag(label: nil), missing: .reject, group: "g")])
        do {
            _ = try Catalog(table: Fixtures.table(["id,name,f", "1,A,1", "2,B,"]), schema: schema)
            Issue.record("accepted an empty required flag")
        } catch {
            #expect(String(describing: error).contains("test.csv:3:5"), "\(error)")
        }
    }

    @Test("schema JSON: a label only on flags, never empty", arguments: [
        (#"{"column": "x", "kind": "numeric", "group": "g", "label": "X"}"#, "features[0].label"),
        (#"{"column": "x", "kind": "flag", "group": "g", "label": ""}"#, "features[0].label"),
        (#"{"column": "x", "kind": "flags", "group": "g"}"#, "features[0].kind"),
    ])
    func schemaErrors(feature: String, field: String) {
        let json = #"{"id_column": "id", "name_column": "name", "features": ["# + feature + "]}"
        do {
            _ = try ItemSchema.decode(json: Data(json.utf8), source: "s.json")
            Issue.record("accepted \(feature)")
        } catch {
            #expect(error.field == field, "\(error)")
        }
    }

    @Test("explanations name the flag an item has (\"Comedy\"), never one it lacks")
    func explanations() throws {
        var rows: [String] = []
        for i in 0..<40 { rows.append("i\(i),Item \(i),\(i % 3 == 0 ? "1" : "0"),\(i % 2),\(1980 + i)") }
        let matcher = ItemMatcher(catalog: try Self.catalog(rows))
        let user = try matcher.student(ItemProfile(preferences: ["g_comedy": 2]))
        let weights = matcher.coldStartWeights(for: user)
        var said = 0
        for row in 0..<40 {
            let sentences = matcher.explanations(row: row, student: user, weights: weights)
            #expect(sentences.contains("Comedy") == (row % 3 == 0), "item \(row): \(sentences)")
            #expect(!sentences.contains { $0.contains("g_comedy") }, "item \(row): \(sentences)")
            if sentences.contains("Comedy") { said += 1 }
        }
        #expect(said == 14)
        // Comedies rank first for a user who likes comedy.
        let top = try matcher.recommend(profile: ItemProfile(preferences: ["g_comedy": 2]), count: 14).recommendations
        #expect(top.allSatisfy { Int($0.item.id.dropFirst())! % 3 == 0 })
    }
}
