import Foundation
import FuzzSupport
import SwipeRank

// Schema JSON: a schema that decodes either loads the shipped restaurants CSV into a catalog of
// finite features or throws a DataError; a loaded catalog serves a profile.
let table = FuzzData.restaurants
// libFuzzer calls this for every input (its own main drives the run).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ pointer: UnsafePointer<UInt8>?, _ count: Int) -> Int32 {
    guard let schema = try? ItemSchema.decode(json: fuzzData(pointer, count), source: "fuzz.schema.json"),
          let catalog = try? Catalog(table: table, schema: schema) else { return 0 }
    FuzzProperty.require(catalog.features.elements.allSatisfy { $0.isFinite }, "a catalog with non-finite features loaded")
    FuzzProperty.require(Set(catalog.columns.map(\.name)).count == catalog.columns.count, "duplicate column names")
    let matcher = ItemMatcher(catalog: catalog)
    if let response = try? matcher.recommend(profile: ItemProfile(), count: 3) {
        FuzzProperty.require(response.recommendations.count == min(3, catalog.count), "wrong card count")
    }
    return 0
}
