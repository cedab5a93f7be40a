import Foundation

extension ItemSchema {
    /// Reads a schema from JSON, so any item CSV can be loaded without code.
    ///
    /// Format (snake_case keys; optional ones may be left out):
    ///
    ///     {"id_column": "id", "name_column": "name",
    ///      "coordinates": {"latitude": "lat", "longitude": "lon"},
    ///      "text_attributes": ["neighborhood"], "numeric_attributes": ["price"],
    ///      "features": [
    ///        {"column": "price", "kind": "numeric", "transform": "log1p", "group": "cost"},
    ///        {"column": "cuisine", "kind": "categorical", "categories": ["thai", "pizza"], "group": "cuisine"},
    ///        {"column": "rating", "kind": "bins", "edges": [4.0, 4.5], "labels": ["ok", "good", "great"],
    ///         "group": "quality", "missing": "reject"}]}
    ///
    /// Features: `kind` is `numeric` (`transform`: `identity` (default), `log1p` or
    /// `one_minus`; `standardize`: default true), `categorical` (`categories` in column order;
    /// left out: the sorted distinct values) or `bins` (sorted `edges`, one more `labels`
    /// than edges). `missing`: `impute` (default: median or no category, plus a
    /// `<name>_missing` indicator column) or `reject`. `name` prefixes the matrix columns
    /// (default: `column`). Every feature needs a `group` (explanations and named weights).
    ///
    /// - Parameters:
    ///   - json: The JSON bytes.
    ///   - source: The name shown in errors (e.g. the file path).
    /// - Returns: The schema.
    /// - Throws: `DataError` naming the JSON path of the bad field: malformed JSON, a missing
    ///   or mistyped field, an unknown kind/transform/missing policy, unsorted or non-finite
    ///   bin edges, a wrong label count, duplicate categories, or no features at all.
    public static func decode(json: Data, source: String) throws(DataError) -> ItemSchema {
        let file: SchemaFile
        do {
            file = try JSONDecoder().decode(SchemaFile.self, from: json)
        } catch let error as DecodingError {
            throw DataError.decoding(error, source: source)
        } catch {
            throw DataError(.unreadable, source: source, detail: "cannot decode schema: \(error)")
        }
        func invalid(_ field: String, _ detail: String) -> DataError {
            DataError(.invalidValue, source: source, field: field, detail: "\(field): \(detail)")
        }
        guard !file.features.isEmpty else { throw invalid("features", "a schema needs at least one feature") }
        var features: [FeatureSpec] = []
        for (i, f) in file.features.enumerated() {
            let at = "features[\(i)]"
            guard !f.group.isEmpty else { throw invalid("\(at).group", "must not be empty") }
            let missing: FeatureSpec.MissingPolicy
            switch f.missing ?? "impute" {
            case "impute": missing = .imputeWithIndicator
            case "reject": missing = .reject
            case let other: throw invalid("\(at).missing", "\"\(other)\" is not one of impute, reject")
            }
            let kind: FeatureSpec.Kind
            switch f.kind {
            case "numeric":
                let transform: FeatureSpec.Transform
                switch f.transform ?? "identity" {
                case "identity": transform = .identity
                case "log1p": transform = .log1p
                case "one_minus": transform = .oneMinus
                case let other: throw invalid("\(at).transform", "\"\(other)\" is not one of identity, log1p, one_minus")
                }
                kind = .numeric(transform: transform, standardize: f.standardize ?? true)
            case "categorical":
                if let categories = f.categories {
                    guard !categories.isEmpty else { throw invalid("\(at).categories", "must not be empty (leave it out to discover them)") }
                    guard Set(categories).count == categories.count else { throw invalid("\(at).categories", "lists a category twice") }
                }
                kind = .categorical(categories: f.categories)
            case "bins":
                guard let edges = f.edges, !edges.isEmpty else { throw invalid("\(at).edges", "bins need at least one edge") }
                guard edges.allSatisfy(\.isFinite), zip(edges, edges.dropFirst()).allSatisfy({ $0 < $1 }) else {
                    throw invalid("\(at).edges", "must be finite and strictly increasing, got \(edges)")
                }
                guard let labels = f.labels, labels.count == edges.count + 1 else {
                    throw invalid("\(at).labels", "needs \(edges.count + 1) labels for \(edges.count) edges")
                }
                guard Set(labels).count == labels.count else { throw invalid("\(at).labels", "lists a label twice") }
                kind = .bins(edges: edges, labels: labels)
            case let other:
                throw invalid("\(at).kind", "\"\(other)\" is not one of numeric, categorical, bins")
            }
            features.append(FeatureSpec(column: f.column, kind: kind, missing: missing, group: f.group, name: f.name))
        }
        let names = features.map(\.name)
        if let duplicate = names.first(where: { name in names.filter { $0 == name }.count > 1 }) {
            throw invalid("features", "two features are named \"\(duplicate)\" (set a distinct \"name\")")
        }
        return ItemSchema(idColumn: file.idColumn, nameColumn: file.nameColumn,
                          coordinateColumns: file.coordinates.map { ($0.latitude, $0.longitude) },
                          textAttributes: file.textAttributes ?? [], numericAttributes: file.numericAttributes ?? [],
                          features: features)
    }

    /// Reads a schema JSON file.
    ///
    /// - Parameter path: The file.
    /// - Returns: The schema.
    /// - Throws: `DataError` `.unreadable` when the file cannot be read, else as `decode(json:source:)`.
    public static func load(contentsOfFile path: String) throws(DataError) -> ItemSchema {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw DataError(.unreadable, source: path, detail: "cannot read the schema file")
        }
        return try decode(json: data, source: path)
    }
}

/// The JSON shape of a schema.
private struct SchemaFile: Decodable {
    struct Coordinates: Decodable { var latitude: String; var longitude: String }
    struct Feature: Decodable {
        var column: String
        var kind: String
        var group: String
        var name: String?
        var transform: String?
        var standardize: Bool?
        var missing: String?
        var categories: [String]?
        var edges: [Double]?
        var labels: [String]?
    }

    var idColumn: String
    var nameColumn: String
    var coordinates: Coordinates?
    var textAttributes: [String]?
    var numericAttributes: [String]?
    var features: [Feature]

    enum CodingKeys: String, CodingKey {
        case idColumn = "id_column", nameColumn = "name_column", coordinates
        case textAttributes = "text_attributes", numericAttributes = "numeric_attributes", features
    }
}
