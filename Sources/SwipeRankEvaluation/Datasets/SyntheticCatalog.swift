import Foundation
import SwipeRank
import SwipeRankNumerics

/// Restaurants-schema catalogs of any size, generated from a seed: what the scale benchmarks
/// (`Benchmarks/Scale`, `Benchmarks/Retrieval`) and the candidate-index tests run on, so that
/// all of them measure the same items.
///
/// Items cluster around 200 city centres spread over the continental US, with the columns and
/// value ranges of `datasets/restaurants` (cuisine, price level, a rating missing for one item
/// in ten, reviews, seats, outdoor seating, a neighbourhood as the region attribute).
///
///     let catalog = try SyntheticCatalog.catalog(items: 100_000, seed: 30)
public enum SyntheticCatalog {
    /// The schema of the generated CSV (the shipped restaurants schema's features).
    public static let schemaJSON = """
    {"id_column": "id", "name_column": "name", "coordinates": {"latitude": "latitude", "longitude": "longitude"},
     "text_attributes": ["neighborhood", "cuisine"], "numeric_attributes": ["price_level", "rating", "reviews", "seats"],
     "features": [
      {"column": "price_level", "kind": "numeric", "group": "cost", "missing": "reject"},
      {"column": "rating", "kind": "numeric", "group": "quality"},
      {"column": "rating", "kind": "bins", "name": "rating_band", "edges": [4.0, 4.5], "labels": ["ok", "good", "great"], "group": "quality"},
      {"column": "reviews", "kind": "numeric", "transform": "log1p", "group": "popularity"},
      {"column": "seats", "kind": "numeric", "transform": "log1p", "group": "size"},
      {"column": "cuisine", "kind": "categorical", "group": "cuisine"},
      {"column": "outdoor", "kind": "categorical", "categories": ["yes", "no"], "group": "setting", "missing": "reject"}]}
    """

    /// The schema, decoded.
    public static var schema: ItemSchema {
        // A constant of this file: it decodes, or the build is broken.
        do { return try ItemSchema.decode(json: Data(schemaJSON.utf8), source: "SyntheticCatalog.schemaJSON") } catch {
            preconditionFailure("SyntheticCatalog.schemaJSON does not decode: \(error)")
        }
    }

    /// The CSV text of `items` generated items.
    ///
    /// - Parameters:
    ///   - n: How many items (ids `r0` … `r<n−1>`).
    ///   - seed: The generator's seed: the same seed writes the same text.
    ///   - unlocatedEvery: One item in this many has no location (0: every item has one).
    /// - Returns: A CSV with a header line.
    /// - Complexity: O(n).
    public static func csv(items n: Int, seed: UInt64, unlocatedEvery: UInt64 = 0) -> String {
        var rng = SplitMix64(seed: seed)
        func uniform() -> Double { Double(rng.next() >> 11) / Double(1 << 53) }
        func gauss() -> Double { (-2 * log(max(uniform(), 1e-300))).squareRoot() * cos(2 * .pi * uniform()) }
        let cities = (0..<200).map { _ in (25 + 24 * uniform(), -124 + 57 * uniform()) }
        let cuisines = ["italian", "thai", "mexican", "japanese", "indian", "american", "vegan", "french"]
        let hoods = ["Riverside", "Old Town", "Harbor", "University", "Northgate", "Eastfield", "Westbrook", "Lakeshore"]
        var text = "id,name,neighborhood,latitude,longitude,cuisine,price_level,rating,reviews,seats,outdoor\n"
        text.reserveCapacity(n * 90)
        for i in 0..<n {
            let city = cities[Int(rng.next() % 200)]
            let price = 1 + Int(rng.next() % 4)
            let rating = uniform() < 0.1 ? "" : String(format: "%.1f", min(5, max(2.5, 3.6 + 0.2 * Double(price) + 0.45 * gauss())))
            text += "r\(i),Place \(i),\(hoods[Int(rng.next() % 8)]),"
            if unlocatedEvery > 0, rng.next() % unlocatedEvery == 0 {
                // The same draws as a located item, so the other items do not depend on the setting.
                _ = gauss(); _ = gauss()
                text += ",,"
            } else {
                text += String(format: "%.5f,%.5f,", min(89, max(-89, city.0 + 0.15 * gauss())), min(179, max(-179, city.1 + 0.15 * gauss())))
            }
            text += "\(cuisines[Int(rng.next() % 8)]),\(price),\(rating),\(Int(exp(4.5 + 1.1 * gauss()))),\(12 + Int(rng.next() % 209)),"
            text += rng.next() % 2 == 0 ? "yes\n" : "no\n"
        }
        return text
    }

    /// A generated catalog, built as `Catalog(table:schema:)` builds any CSV.
    ///
    /// - Parameters: as `csv(items:seed:unlocatedEvery:)`.
    /// - Returns: The catalog.
    /// - Throws: `DataError` (never for generated text; kept for the signature of the loader).
    public static func catalog(items n: Int, seed: UInt64, unlocatedEvery: UInt64 = 0) throws(DataError) -> Catalog {
        try Catalog(table: CSVTable(text: csv(items: n, seed: seed, unlocatedEvery: unlocatedEvery), source: "synthetic-\(n).csv"), schema: schema)
    }
}
