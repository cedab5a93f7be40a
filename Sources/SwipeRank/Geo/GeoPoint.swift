import Foundation

/// A point on the Earth's surface in degrees.
///
///     let mit = try GeoPoint(latitude: 42.3601, longitude: -71.0942)
///     let berkeley = try GeoPoint(latitude: 37.8719, longitude: -122.2585)
///     mit.distanceMiles(to: berkeley)      // ≈ 2,698
public struct GeoPoint: Sendable, Hashable, Codable {
    /// Latitude in degrees, in -90...90.
    public let latitude: Double
    /// Longitude in degrees, in -180...180.
    public let longitude: Double

    /// The mean Earth radius in miles (IUGG), used by every distance here.
    public static let earthRadiusMiles = 3958.7613

    /// Creates a point, checking the ranges.
    ///
    /// - Parameters:
    ///   - latitude: Degrees in -90...90.
    ///   - longitude: Degrees in -180...180.
    /// - Throws: `DataError` `.outOfRange` or `.nonFinite`, naming the coordinate.
    public init(latitude: Double, longitude: Double) throws(DataError) {
        guard latitude.isFinite, longitude.isFinite else {
            throw DataError(.nonFinite, source: "coordinates", detail: "latitude/longitude must be finite numbers")
        }
        guard (-90...90).contains(latitude) else {
            throw DataError(.outOfRange, source: "coordinates", field: "latitude",
                            detail: "latitude \(latitude) is outside -90...90")
        }
        guard (-180...180).contains(longitude) else {
            throw DataError(.outOfRange, source: "coordinates", field: "longitude",
                            detail: "longitude \(longitude) is outside -180...180")
        }
        self.latitude = latitude
        self.longitude = longitude
    }

    /// A point whose coordinates were checked already (`LocationColumn`, read from a cache
    /// whose every pair passed `init(latitude:longitude:)`).
    init(checkedLatitude latitude: Double, longitude: Double) {
        self.latitude = latitude
        self.longitude = longitude
    }

    /// The great-circle distance by the haversine formula, in miles.
    ///
    /// This scalar form is the reference; catalogs compute distances to all items at once with
    /// precomputed unit vectors (`Catalog.distancesMiles(from:into:)`).
    ///
    /// - Parameter other: The other point.
    /// - Returns: The distance in miles.
    /// - Complexity: O(1).
    public func distanceMiles(to other: GeoPoint) -> Double {
        let φ1 = latitude * .pi / 180, φ2 = other.latitude * .pi / 180
        let dφ = φ2 - φ1, dλ = (other.longitude - longitude) * .pi / 180
        let h = sin(dφ / 2) * sin(dφ / 2) + cos(φ1) * cos(φ2) * sin(dλ / 2) * sin(dλ / 2)
        return 2 * GeoPoint.earthRadiusMiles * asin(min(1, h.squareRoot()))
    }

    /// The point as a unit vector (x, y, z) on the sphere.
    var unitVector: (Double, Double, Double) {
        let φ = latitude * .pi / 180, λ = longitude * .pi / 180
        return (cos(φ) * cos(λ), cos(φ) * sin(λ), sin(φ))
    }
}
