import Foundation

/// Finds the shipped data (`datasets/…`) from any working directory: a relative path under
/// `datasets/` that is not there is looked for next to the binary and up to three folders
/// above it (the repository holding `.build/release/swiperank`), then under
/// `SWIPERANK_DATASETS` (a folder holding `datasets/`). So `swiperank serve` started elsewhere
/// finds the schools it ships with, and an explicit path is still read as given.
enum ShippedData {
    /// The path to read for `path`.
    ///
    /// - Parameters:
    ///   - path: As given (a default or the user's).
    ///   - executable: This binary's path (default: the running process's).
    ///   - environment: For `SWIPERANK_DATASETS`.
    ///   - exists: Whether a file exists (tests pass a fake file system).
    /// - Returns: `path` when it exists or is not a relative `datasets/` path, else the first
    ///   existing candidate, else `path` (whose read error then names it).
    static func resolve(_ path: String, executable: String? = ShippedData.executablePath,
                        environment: [String: String] = ProcessInfo.processInfo.environment,
                        exists: (String) -> Bool = { FileManager.default.fileExists(atPath: $0) }) -> String {
        guard path.hasPrefix("datasets/"), !exists(path) else { return path }
        var roots: [String] = []
        if let executable {
            var dir = URL(fileURLWithPath: executable).deletingLastPathComponent()
            for _ in 0..<4 {
                roots.append(dir.path)
                dir.deleteLastPathComponent()
            }
        }
        if let shipped = environment["SWIPERANK_DATASETS"], !shipped.isEmpty { roots.append(shipped) }
        return roots.lazy.map { URL(fileURLWithPath: $0).appendingPathComponent(path).path }.first(where: exists) ?? path
    }

    /// The running binary (`/proc/self/exe` resolves symlinks and a bare name found on PATH).
    static var executablePath: String? {
        (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? Bundle.main.executablePath
    }
}
