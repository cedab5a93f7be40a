import Foundation

/// Wall-clock seconds that `body` takes (monotonic clock), for the plain benchmark executables.
public func seconds(_ body: () throws -> Void) rethrows -> Double {
    let start = DispatchTime.now().uptimeNanoseconds
    try body()
    return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
}

/// Wall-clock milliseconds that `body` takes.
public func milliseconds(_ body: () throws -> Void) rethrows -> Double { try seconds(body) * 1e3 }

/// The `p` quantile of `values` (0…1) by nearest rank over the sorted values; `values` must not
/// be empty.
public func percentile(_ values: [Double], _ p: Double) -> Double {
    let sorted = values.sorted()
    return sorted[min(sorted.count - 1, Int((p * Double(sorted.count - 1)).rounded()))]
}
