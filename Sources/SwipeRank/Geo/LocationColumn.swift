import SwipeRankNumerics

/// Every item's location, `nil` where the item has none: a collection of `GeoPoint?` in row
/// order, stored as latitude and longitude doubles side by side with NaN for none.
///
/// That is the catalog cache's layout, so a large catalog reads its locations in place from
/// the file's mapping (`StoredValues`) instead of holding them (a `[GeoPoint?]` takes 24 bytes
/// an item: 24 MB at a million items); built from an array, it takes 16 bytes an item.
///
///     catalog.locations[row]                      // GeoPoint?
///     catalog.locations.contains { $0 != nil }    // any Collection algorithm
public struct LocationColumn: RandomAccessCollection, Sendable, Equatable {
    // Latitude and longitude of each row, side by side; NaN for both where none.
    let coordinates: StoredValues<Double>

    /// A column of these locations.
    ///
    /// - Parameter locations: One per row, nil where none.
    public init(_ locations: [GeoPoint?]) {
        coordinates = StoredValues(count: 2 * locations.count) { target in
            for (i, location) in locations.enumerated() {
                target[2 * i] = location?.latitude ?? .nan
                target[2 * i + 1] = location?.longitude ?? .nan
            }
        }
    }

    /// A column over stored coordinates whose every pair the caller has checked is a valid
    /// location or NaN for both (`problem(in:)`).
    init(checkedCoordinates coordinates: StoredValues<Double>) {
        precondition(coordinates.count % 2 == 0, "LocationColumn: an odd number of coordinates")
        self.coordinates = coordinates
    }

    /// The first row whose coordinates are not a location or NaN for both, and why; nil when
    /// every pair is one.
    ///
    /// - Complexity: O(N).
    static func problem(in coordinates: StoredValues<Double>) -> (row: Int, detail: String)? {
        guard coordinates.count % 2 == 0 else { return (coordinates.count / 2, "an odd number of coordinates") }
        for row in 0 ..< coordinates.count / 2 {
            let (lat, lon) = (coordinates[2 * row], coordinates[2 * row + 1])
            if lat.isNaN && lon.isNaN { continue }
            do { _ = try GeoPoint(latitude: lat, longitude: lon) } catch { return (row, error.detail) }
        }
        return nil
    }

    /// 0.
    public var startIndex: Int { 0 }
    /// The number of rows.
    public var endIndex: Int { coordinates.count / 2 }

    /// The location of a row, nil where none.
    public subscript(row: Int) -> GeoPoint? {
        let latitude = coordinates[2 * row]
        guard !latitude.isNaN else { return nil }
        return GeoPoint(checkedLatitude: latitude, longitude: coordinates[2 * row + 1])
    }

    /// Equal when every row has the same location or both none.
    public static func == (a: LocationColumn, b: LocationColumn) -> Bool {
        a.count == b.count && a.indices.allSatisfy { a[$0] == b[$0] }
    }
}
