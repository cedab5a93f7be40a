import Foundation

/// Reads an input file by path, where `-` means standard input and special files such as
/// `/dev/stdin` or a pipe work too (Foundation's `contents(atPath:)` reads neither).
public enum InputFile {
    /// Reads the whole input.
    ///
    /// - Parameters:
    ///   - path: A file path, or `-` for standard input.
    ///   - what: What the file is, for the error ("profile", "schema").
    ///   - maxBytes: The largest input accepted.
    /// - Returns: The bytes.
    /// - Throws: `DataError` `.unreadable` naming the path and the system's reason, or the size.
    public static func read(_ path: String, what: String, maxBytes: Int = 1 << 30) throws(DataError) -> Data {
        let source = path == "-" ? "<stdin>" : path
        let handle: FileHandle
        if path == "-" {
            handle = FileHandle.standardInput
        } else {
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue {
                throw DataError(.unreadable, source: source, detail: "cannot read the \(what): it is a directory")
            }
            guard let opened = FileHandle(forReadingAtPath: path) else {
                let reason = FileManager.default.fileExists(atPath: path) ? "permission denied" : "no such file"
                throw DataError(.unreadable, source: source, detail: "cannot read the \(what): \(reason)")
            }
            handle = opened
        }
        defer { if path != "-" { try? handle.close() } }
        var data = Data()
        while true {
            let chunk: Data?
            do { chunk = try handle.read(upToCount: 1 << 20) } catch {
                throw DataError(.unreadable, source: source, detail: "cannot read the \(what): \(error.localizedDescription)")
            }
            guard let chunk, !chunk.isEmpty else { break }
            data.append(chunk)
            if data.count > maxBytes {
                throw DataError(.unreadable, source: source, detail: "the \(what) is larger than \(maxBytes) bytes")
            }
        }
        return data
    }
}
