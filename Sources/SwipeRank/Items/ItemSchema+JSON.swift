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
    /// than edges) or `flag` (a 0/1 property: `1`/`true`/`yes`/`y` or `0`/`false`/`no`/`n`;
    /// `label`: what explanations call it, e.g. "Comedy"). `missing`: `impute` (default: median or no category, plus a
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
        let file = try JSONInput.decode(SchemaFile.self, from: json, source: source)
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
            case "flag":
                if let label = f.label {
                    guard !label.isEmpty, label.unicodeScalars.count <= 200 else {
                        throw invalid("\(at).label", "must be 1 to 200 characters")
                    }
                }
                kind = .flag(label: f.label)
            case let other:
                throw invalid("\(at).kind", "\"\(other)\" is not one of numeric, categorical, bins, flag")
            }
            if f.label != nil, f.kind != "flag" {
                throw invalid("\(at).label", "applies to flag features only (categories and bins are named by their values)")
            }
            features.append(FeatureSpec(column: f.column, kind: kind, missing: missing, group: f.group, name: f.name))
        }
        let names = features.map(\.name)
        if let duplicate = names.first(where: { name in names.filter { $0 == name }.count > 1 }) {
            throw invalid("features", "two features are named \"\(duplicate)\" (set a distinct \"name\")")
        }
        // The matrix columns each feature derives (`x`, `x=a`, `x_missing`) must not collide:
        // `x_missing` as a feature's name next to an imputed `x` would make two columns one.
        var derivedBy: [String: Int] = [:]
        for (i, spec) in features.enumerated() {
            for column in spec.derivedColumnNames {
                if let other = derivedBy.updateValue(i, forKey: column), other != i {
                    throw invalid("features[\(i)].name", "derives the column \"\(column)\", which features[\(other)] also derives (set a distinct \"name\")")
                }
            }
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
        try decode(json: InputFile.read(path, what: "schema file", maxBytes: 16 << 20), source: path)
    }
}

extension FeatureSpec {
    /// The matrix column names this feature produces that are known before the data is read
    /// (the categories of a categorical feature without a list are found in the data).
    var derivedColumnNames: [String] {
        var names: [String] = []
        switch kind {
        case .numeric, .flag: names.append(name)
        case let .categorical(categories): names += (categories ?? []).map { "\(name)=\($0)" }
        case let .bins(_, labels): names += labels.map { "\(name)=\($0)" }
        }
        if missing == .imputeWithIndicator { names.append("\(name)_missing") }
        return names
    }
}

/// The JSON shape of a schema; every level rejects unknown keys.
private struct SchemaFile: Decodable {
    struct Coordinates: Decodable {
        var latitude: String
        var longitude: String
        enum CodingKeys: String, CodingKey, CaseIterable { case latitude, longitude }
        init(from decoder: any Decoder) throws {
            try decoder.rejectUnknownKeys(CodingKeys.self)
            let c = try decoder.container(keyedBy: CodingKeys.self)
            latitude = try c.decode(String.self, forKey: .latitude)
            longitude = try c.decode(String.self, forKey: .longitude)
        }
    }
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
        var label: String?
        enum CodingKeys: String, CodingKey, CaseIterable {
            case column, kind, group, name, transform, standardize, missing, categories, edges, labels, label
        }
        init(from decoder: any Decoder) throws {
            try decoder.rejectUnknownKeys(CodingKeys.self)
            let c = try decoder.container(keyedBy: CodingKeys.self)
            column = try c.decode(String.self, forKey: .column)
            kind = try c.decode(String.self, forKey: .kind)
            group = try c.decode(String.self, forKey: .group)
            name = try c.decodeIfPresent(String.self, forKey: .name)
            transform = try c.decodeIfPresent(String.self, forKey: .transform)
            standardize = try c.decodeIfPresent(Bool.self, forKey: .standardize)
            missing = try c.decodeIfPresent(String.self, forKey: .missing)
            categories = try c.decodeIfPresent([String].self, forKey: .categories)
            edges = try c.decodeIfPresent([Double].self, forKey: .edges)
            labels = try c.decodeIfPresent([String].self, forKey: .labels)
            label = try c.decodeIfPresent(String.self, forKey: .label)
        }
    }

    var idColumn: String
    var nameColumn: String
    var coordinates: Coordinates?
    var textAttributes: [String]?
    var numericAttributes: [String]?
    var features: [Feature]

    enum CodingKeys: String, CodingKey, CaseIterable {
        case idColumn = "id_column", nameColumn = "name_column", coordinates
        case textAttributes = "text_attributes", numericAttributes = "numeric_attributes", features
    }

    init(from decoder: any Decoder) throws {
        try decoder.rejectUnknownKeys(CodingKeys.self)
        let c = try decoder.container(keyedBy: CodingKeys.self)
        idColumn = try c.decode(String.self, forKey: .idColumn)
        nameColumn = try c.decode(String.self, forKey: .nameColumn)
        coordinates = try c.decodeIfPresent(Coordinates.self, forKey: .coordinates)
        textAttributes = try c.decodeIfPresent([String].self, forKey: .textAttributes)
        numericAttributes = try c.decodeIfPresent([String].self, forKey: .numericAttributes)
        features = try c.decode([Feature].self, forKey: .features)
    }
}
