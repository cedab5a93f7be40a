import Foundation
import SwipeRank
import SwipeRankColleges

// Each target exports `LLVMFuzzerTestOneInput`: built with `--sanitize=fuzzer`, SwiftPM
// compiles an executable target as a library and links libFuzzer's own `main`, which calls it
// for every input. The callback returns normally for any input the library rejects with an
// error: only a trap (a crash, a failed precondition, an AddressSanitizer report) or a broken
// property, reported by `FuzzProperty.require`, is a finding.

/// The bytes of one fuzz input.
///
/// - Parameters:
///   - pointer: libFuzzer's buffer (nil when empty).
///   - count: Its length.
/// - Returns: A copy of the bytes.
public func fuzzData(_ pointer: UnsafePointer<UInt8>?, _ count: Int) -> Data {
    guard let pointer, count > 0 else { return Data() }
    return Data(bytes: pointer, count: count)
}

/// A property every input must keep; a violation aborts so libFuzzer records the input.
public enum FuzzProperty {
    /// Aborts with `message` when `condition` is false.
    ///
    /// - Parameters:
    ///   - condition: The property.
    ///   - message: What broke, for the crash report.
    public static func require(_ condition: Bool, _ message: @autoclosure () -> String) {
        if !condition { fatalError("fuzz property violated: \(message())") }
    }
}

/// The repository's shipped data, found from this file's location.
public enum FuzzData {
    /// The repository root.
    public static let root = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()

    /// A path under the repository root.
    ///
    /// - Parameter relative: The path from the root.
    /// - Returns: The absolute path.
    public static func path(_ relative: String) -> String { root.appendingPathComponent(relative).path }

    /// The school catalog and an engine over it (loaded once per process).
    public static let schoolEngine: SwipeEngine<SchoolMatcher> = {
        do {
            let schools = try SchoolCatalog(schoolsPath: path("datasets/schools.csv"), majorsPath: path("datasets/school_majors.csv"))
            return SwipeEngine(matcher: SchoolMatcher(schools: schools))
        } catch { fatalError("the shipped schools must load: \(error)") }
    }()

    /// The restaurants CSV, parsed once.
    public static let restaurants: CSVTable = {
        do { return try CSVTable(contentsOfFile: path("datasets/restaurants/restaurants.csv")) }
        catch { fatalError("the shipped restaurants must load: \(error)") }
    }()

    /// The restaurants catalog with its shipped schema.
    public static let restaurantMatcher: ItemMatcher = {
        do {
            let schema = try ItemSchema.load(contentsOfFile: path("datasets/restaurants/restaurants.schema.json"))
            return ItemMatcher(catalog: try Catalog(table: restaurants, schema: schema), regionAttribute: "neighborhood")
        } catch { fatalError("the shipped restaurants must load: \(error)") }
    }()
}
