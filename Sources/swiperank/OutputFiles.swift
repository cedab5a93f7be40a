import Foundation
import SwipeRank

/// Reads an input for a subcommand (`-`: standard input), as a `CLIError` naming the path.
func readInput(_ path: String, what: String) throws -> Data {
    do { return try InputFile.read(ShippedData.resolve(path), what: what, maxBytes: 64 << 20) } catch { throw CLIError(error.description) }
}

/// Creates `folder` (and its parents) or explains in one line why it cannot: Foundation's
/// errors print as `NSCocoaErrorDomain` dumps.
func createOutputFolder(_ folder: String) throws {
    var isDirectory: ObjCBool = false
    if FileManager.default.fileExists(atPath: folder, isDirectory: &isDirectory) {
        guard isDirectory.boolValue else { throw CLIError("\(folder): cannot write output there: it is a file, not a folder") }
        guard FileManager.default.isWritableFile(atPath: folder) else { throw CLIError("\(folder): cannot write output there: permission denied") }
        return
    }
    do {
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    } catch {
        var parent = (folder as NSString).deletingLastPathComponent
        while !parent.isEmpty, !FileManager.default.fileExists(atPath: parent) { parent = (parent as NSString).deletingLastPathComponent }
        var parentIsDirectory: ObjCBool = false
        let reason = parent.isEmpty || !FileManager.default.fileExists(atPath: parent, isDirectory: &parentIsDirectory)
            ? "cannot create the folder"
            : !parentIsDirectory.boolValue ? "\(parent) is a file, not a folder" : "permission denied in \(parent)"
        throw CLIError("\(folder): cannot create the output folder: \(reason)")
    }
}

/// Writes a text file atomically, or fails with one line naming the path and the reason.
func writeOutput(_ text: String, to path: String) throws {
    do {
        try text.write(toFile: path, atomically: true, encoding: .utf8)
    } catch {
        let folder = (path as NSString).deletingLastPathComponent
        let reason = FileManager.default.isWritableFile(atPath: folder.isEmpty ? "." : folder) ? "write failed" : "permission denied"
        throw CLIError("\(path): cannot write the file: \(reason)")
    }
}
