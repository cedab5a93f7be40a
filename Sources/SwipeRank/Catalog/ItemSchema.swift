/// How to turn the columns of an item CSV into a catalog: identity, location, display
/// attributes and the feature columns of the matrix.
///
/// Any item CSV loads through a schema; `SchoolCatalog.schema` is the one for colleges.
///
///     let schema = ItemSchema(
///         idColumn: "id", nameColumn: "title",
///         features: [
///             .numeric("price", transform: .log1p, group: "cost"),
///             .categorical("genre", categories: ["rock", "jazz"], group: "genre"),
///         ])
public struct ItemSchema: Sendable {
    /// The column holding a unique, non-empty id.
    public var idColumn: String
    /// The column holding the display name.
    public var nameColumn: String
    /// The latitude and longitude columns, if items have a location.
    public var coordinateColumns: (latitude: String, longitude: String)?
    /// Columns copied as text into each item's summary (e.g. city, state).
    public var textAttributes: [String]
    /// Numeric columns parsed, validated and kept raw for display and student-relative terms.
    /// Empty cells are kept as missing.
    public var numericAttributes: [String]
    /// The feature columns, in matrix order.
    public var features: [FeatureSpec]

    /// Creates a schema.
    ///
    /// - Parameters:
    ///   - idColumn: The id column.
    ///   - nameColumn: The name column.
    ///   - coordinateColumns: Latitude and longitude columns, or `nil`.
    ///   - textAttributes: Columns kept as text.
    ///   - numericAttributes: Columns kept as raw numbers.
    ///   - features: The feature columns.
    public init(idColumn: String, nameColumn: String,
                coordinateColumns: (latitude: String, longitude: String)? = nil,
                textAttributes: [String] = [], numericAttributes: [String] = [],
                features: [FeatureSpec]) {
        self.idColumn = idColumn
        self.nameColumn = nameColumn
        self.coordinateColumns = coordinateColumns
        self.textAttributes = textAttributes
        self.numericAttributes = numericAttributes
        self.features = features
    }
}

/// One source column and how it becomes one or more matrix columns.
public struct FeatureSpec: Sendable {
    /// How a numeric value is transformed before standardization.
    public enum Transform: Sendable, Hashable {
        /// The value as is.
        case identity
        /// `log(1 + max(0, x))`, for counts and money with long right tails.
        case log1p
        /// `1 − x`, e.g. admission rate → selectivity.
        case oneMinus
    }

    /// What an empty cell means.
    public enum MissingPolicy: Sendable, Hashable {
        /// An empty cell is a data error.
        case reject
        /// Impute (the median of the observed transformed values for numeric columns, no
        /// category for categorical ones) and add a 0/1 indicator column `<name>_missing`, so
        /// the model can learn what missingness itself says.
        case imputeWithIndicator
    }

    /// The kinds of feature.
    public enum Kind: Sendable, Hashable {
        /// One column: the transformed value, z-scored over the catalog when `standardize`.
        case numeric(transform: Transform, standardize: Bool)
        /// One 0/1 column per category. `nil` categories: the sorted distinct values found.
        case categorical(categories: [String]?)
        /// One 0/1 column per interval `[edges[i-1], edges[i])` of the raw value; `labels` has
        /// `edges.count + 1` names (below the first edge … at or above the last).
        case bins(edges: [Double], labels: [String])
        /// One 0/1 column: 1 when the item has the property. Cells read `1`, `true`, `yes`, `y`
        /// or `0`, `false`, `no`, `n` (any case). Not standardized, so its weight reads as how
        /// much the property itself is liked; explanations say `label` ("Comedy"), or the
        /// column's name without one.
        case flag(label: String?)
    }

    /// The source column.
    public var column: String
    /// The kind.
    public var kind: Kind
    /// What an empty cell means.
    public var missing: MissingPolicy
    /// The explanation/weight group this feature belongs to (several features may share one).
    public var group: String
    /// The prefix of the matrix column names (defaults to `column`).
    public var name: String

    /// Creates a feature.
    ///
    /// - Parameters:
    ///   - column: The source column.
    ///   - kind: The kind.
    ///   - missing: What an empty cell means.
    ///   - group: The explanation group.
    ///   - name: The matrix column name prefix; `nil` uses `column`.
    public init(column: String, kind: Kind, missing: MissingPolicy, group: String, name: String? = nil) {
        self.column = column
        self.kind = kind
        self.missing = missing
        self.group = group
        self.name = name ?? column
    }

    /// A numeric feature, z-scored, missing values imputed with an indicator.
    ///
    /// - Parameters:
    ///   - column: The source column.
    ///   - transform: The transform before z-scoring.
    ///   - group: The explanation group.
    ///   - name: The matrix column name; `nil` uses `column`.
    /// - Returns: The spec.
    public static func numeric(_ column: String, transform: Transform = .identity, group: String,
                               name: String? = nil) -> FeatureSpec {
        FeatureSpec(column: column, kind: .numeric(transform: transform, standardize: true),
                    missing: .imputeWithIndicator, group: group, name: name)
    }

    /// A one-hot categorical feature, empty cells allowed (with an indicator).
    ///
    /// - Parameters:
    ///   - column: The source column.
    ///   - categories: The allowed categories in column order; `nil` discovers them.
    ///   - group: The explanation group.
    /// - Returns: The spec.
    public static func categorical(_ column: String, categories: [String]? = nil, group: String) -> FeatureSpec {
        FeatureSpec(column: column, kind: .categorical(categories: categories),
                    missing: .imputeWithIndicator, group: group)
    }
}

/// What one column of the feature matrix means.
public struct FeatureColumn: Sendable, Hashable, Codable {
    /// What produced the column.
    public enum Role: String, Sendable, Hashable, Codable {
        /// A (transformed, standardized) numeric value.
        case value
        /// 1 when the item belongs to the category or bin named in `category`.
        case category
        /// 1 when the source value was missing.
        case missingIndicator
        /// Supplied from outside the item CSV (e.g. program shares from a second file).
        case external
        /// A 0/1 property of the item (`FeatureSpec.Kind.flag`); `category` holds its label.
        case flag
    }

    /// The unique column name, e.g. `sat_avg`, `control=public`, `sat_avg_missing`.
    public let name: String
    /// The explanation/weight group.
    public let group: String
    /// The source column (empty for external columns).
    public let source: String
    /// What produced the column.
    public let role: Role
    /// The category or bin label for `.category` columns, the label for `.flag` columns.
    public let category: String?
    /// For standardized values: the mean and standard deviation used, so a raw value maps
    /// back and forth.
    public let center: Double
    /// See `center`.
    public let scale: Double

    /// Creates a column description.
    ///
    /// - Parameters:
    ///   - name: The unique column name.
    ///   - group: The explanation group.
    ///   - source: The source column.
    ///   - role: What produced it.
    ///   - category: The category label, for category columns.
    ///   - center: The mean subtracted, for standardized values.
    ///   - scale: The standard deviation divided by, for standardized values.
    public init(name: String, group: String, source: String, role: Role, category: String? = nil,
                center: Double = 0, scale: Double = 1) {
        self.name = name
        self.group = group
        self.source = source
        self.role = role
        self.category = category
        self.center = center
        self.scale = scale
    }
}

/// Feature values supplied from outside the item CSV, keyed by item id.
public struct ExternalFeature: Sendable {
    /// The column description (role `.external`).
    public let column: FeatureColumn
    /// Values by item id.
    public let values: [String: Float]
    /// The value for an item absent from `values` (documented by whoever supplies it).
    public let defaultValue: Float

    /// Creates an external feature.
    ///
    /// - Parameters:
    ///   - name: The column name.
    ///   - group: The explanation group.
    ///   - values: Values by item id.
    ///   - defaultValue: The value for items not in `values`.
    public init(name: String, group: String, values: [String: Float], defaultValue: Float) {
        self.column = FeatureColumn(name: name, group: group, source: "", role: .external)
        self.values = values
        self.defaultValue = defaultValue
    }
}
