import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing

/// `swiperank catalog build` and `serve --catalog-cache`, on the real binary.
@Suite("catalog cache, CLI and serve", .serialized)
struct CatalogCacheCLITests {
    static let operatorKey = "operator-key-operator-key-operator-key-0123"

    /// A folder with a copy of the restaurants catalog and its schema.
    static func folder() throws -> (dir: URL, csv: String, schema: String, cache: String) {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("swiperank-catcache-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let csv = dir.appendingPathComponent("restaurants.csv").path, schema = dir.appendingPathComponent("restaurants.schema.json").path
        try FileManager.default.copyItem(atPath: CLI.root.appendingPathComponent("datasets/restaurants/restaurants.csv").path, toPath: csv)
        try FileManager.default.copyItem(atPath: CLI.root.appendingPathComponent("datasets/restaurants/restaurants.schema.json").path, toPath: schema)
        return (dir, csv, schema, dir.appendingPathComponent("restaurants.cache").path)
    }

    @Test("catalog build writes a cache; errors name the file")
    func build() throws {
        let (dir, csv, schema, cache) = try Self.folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        let result = try CLI.run(["catalog", "build", "--catalog", csv, "--schema", schema, "--output", cache])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("80 items"))
        let bytes = try Data(contentsOf: URL(fileURLWithPath: cache))
        #expect(bytes.prefix(8) == Data("SWRKCAT\n".utf8))
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path).filter { $0.hasSuffix(".tmp") }.isEmpty)
        // The same bytes every time.
        let again = try CLI.run(["catalog", "build", "--catalog", csv, "--schema", schema, "--output", cache])
        #expect(again.status == 0)
        #expect(try Data(contentsOf: URL(fileURLWithPath: cache)) == bytes)

        let missing = try CLI.run(["catalog", "build", "--catalog", dir.appendingPathComponent("none.csv").path, "--schema", schema, "--output", cache])
        #expect(missing.status != 0 && missing.stderr.contains("none.csv"))
        let unwritable = try CLI.run(["catalog", "build", "--catalog", csv, "--schema", schema, "--output", dir.appendingPathComponent("no/such/dir.cache").path])
        #expect(unwritable.status != 0 && unwritable.stderr.contains("no/such/dir.cache"))
    }

    @Test("catalog synthesize: the same seed writes the same bytes, the schema reads them, a cache is built from them; bad sizes are refused")
    func synthesize() throws {
        let (dir, _, schema, cache) = try Self.folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        let a = dir.appendingPathComponent("a.csv").path, b = dir.appendingPathComponent("b.csv").path
        let c = dir.appendingPathComponent("c.csv").path
        for (path, seed) in [(a, "7"), (b, "7"), (c, "8")] {
            let result = try CLI.run(["catalog", "synthesize", "--items", "1500", "--seed", seed, "--output", path])
            #expect(result.status == 0, "\(result.stderr)")
        }
        let bytes = try Data(contentsOf: URL(fileURLWithPath: a))
        #expect(bytes == (try Data(contentsOf: URL(fileURLWithPath: b))))
        #expect(bytes != (try Data(contentsOf: URL(fileURLWithPath: c))))
        #expect(String(decoding: bytes, as: UTF8.self).split(separator: "\n").count == 1501)
        let built = try CLI.run(["catalog", "build", "--catalog", a, "--schema", schema, "--output", cache])
        #expect(built.status == 0, "\(built.stderr)")
        #expect(built.stdout.contains("1500 items"), "\(built.stdout)")
        let zero = try CLI.run(["catalog", "synthesize", "--items", "0", "--output", a])
        #expect(zero.status != 0 && zero.stderr.contains("--items"))
        let unwritable = try CLI.run(["catalog", "synthesize", "--items", "5", "--output", dir.appendingPathComponent("no/such/x.csv").path])
        #expect(unwritable.status != 0 && unwritable.stderr.contains("no/such/x.csv"))
    }

    /// `serve` over the folder's catalog with the cache: its output until it listens (or exits).
    final class Server {
        let process: Process
        let port: Int
        let output: String

        init(_ folder: (dir: URL, csv: String, schema: String, cache: String)) throws {
            (process, port, output) = try ServeLiveTests.start(
                ["serve", "--port", "0", "--log-level", "info", "--schema", folder.schema, "--catalog", folder.csv,
                 "--catalog-cache", folder.cache, "--database", folder.dir.appendingPathComponent("db.sqlite").path],
                environment: ["SWIPERANK_OPERATOR_KEY": CatalogCacheCLITests.operatorKey])
            if port == 0 { process.waitUntilExit() }
        }

        func stop() {
            if process.isRunning { process.terminate() }
            process.waitUntilExit()
        }
    }

    /// A request with the operator key (`ServeLiveTests.call`).
    static func call(_ port: Int, _ method: String, _ path: String, body: String? = nil) async throws -> (Int, [String: Any]) {
        try await ServeLiveTests.call(port, method, path, token: operatorKey, body: body)
    }

    @Test("serve --catalog-cache: written on the first start, read on the next, rebuilt when the CSV changes, an error when damaged")
    func serve() async throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder.dir) }

        let first = try Server(folder)
        first.stop()
        #expect(first.port > 0, "\(first.output)")
        #expect(first.output.contains("catalog built from its CSV, cache written") && first.output.contains("no cache file"))
        #expect(FileManager.default.fileExists(atPath: folder.cache))

        let second = try Server(folder)
        #expect(second.port > 0, "\(second.output)")
        #expect(second.output.contains("catalog loaded from its cache"))
        // The item API reads the CSV on its first use.
        let (status, fields) = try await Self.call(second.port, "GET", "/items/r002/fields")
        #expect(status == 200, "\(fields)")
        let (patched, answer) = try await Self.call(second.port, "PATCH", "/items/r002", body: #"{"name": "Green Grill Renamed"}"#)
        #expect(patched == 200, "\(answer)")
        let (after, renamed) = try await Self.call(second.port, "GET", "/items/r002/fields")
        #expect(after == 200 && "\(renamed)".contains("Green Grill Renamed"))
        second.stop()

        // Restarted over the stored edit: the cache is still this CSV's; the edit is applied on top.
        let third = try Server(folder)
        #expect(third.port > 0, "\(third.output)")
        #expect(third.output.contains("catalog loaded from its cache"))
        let (_, kept) = try await Self.call(third.port, "GET", "/items/r002/fields")
        #expect("\(kept)".contains("Green Grill Renamed"))
        third.stop()

        // Another CSV: rebuilt.
        var text = try String(contentsOfFile: folder.csv, encoding: .utf8)
        text = text.replacingOccurrences(of: "Red Table 1,", with: "Red Table 9,")
        try text.write(toFile: folder.csv, atomically: true, encoding: .utf8)
        try FileManager.default.removeItem(at: folder.dir.appendingPathComponent("db.sqlite"))
        let fourth = try Server(folder)
        fourth.stop()
        #expect(fourth.port > 0, "\(fourth.output)")
        #expect(fourth.output.contains("the cache was built from another CSV or schema"))

        // Damaged: the start stops, naming the file.
        var bytes = try Data(contentsOf: URL(fileURLWithPath: folder.cache))
        bytes[bytes.count / 2] ^= 0x40
        try bytes.write(to: URL(fileURLWithPath: folder.cache))
        let fifth = try Server(folder)
        fifth.stop()
        #expect(fifth.port == 0)
        #expect(fifth.process.terminationStatus != 0)
        #expect(fifth.output.contains(folder.cache) && fifth.output.contains("checksum mismatch"), "\(fifth.output)")
    }

    @Test("--catalogs: catalog_cache per schema catalog; refused without a schema")
    func catalogsFile() throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder.dir) }
        let spec = folder.dir.appendingPathComponent("catalogs.json").path
        try #"{"rest": {"schema": "\#(folder.schema)", "catalog": "\#(folder.csv)", "catalog_cache": "\#(folder.cache)"}}"#
            .write(toFile: spec, atomically: true, encoding: .utf8)
        // ServeLiveTests.Server throws unless the server announces its port.
        let server = try ServeLiveTests.Server(arguments: ["--catalogs", spec, "--database", folder.dir.appendingPathComponent("db.sqlite").path])
        #expect(server.port > 0)
        server.kill()
        #expect(FileManager.default.fileExists(atPath: folder.cache))

        try #"{"schools": {"catalog": "datasets/schools.csv", "catalog_cache": "x.cache"}}"#.write(toFile: spec, atomically: true, encoding: .utf8)
        let refused = try CLI.run(["serve", "--port", "0", "--catalogs", spec, "--database", "/nonexistent/x.sqlite"])
        #expect(refused.status != 0 && refused.stderr.contains("catalog_cache needs a schema"), "\(refused.stderr)")
    }

    @Test("--catalog-cache needs --schema")
    func needsSchema() throws {
        let result = try CLI.run(["serve", "--port", "0", "--catalog-cache", "/tmp/x.cache", "--database", "/nonexistent/x.sqlite"])
        #expect(result.status != 0 && result.stderr.contains("--catalog-cache needs --schema"))
    }
}
