import Foundation
import SwipeRank
import SwipeRankStore
import Testing

/// Issue 29, part 6: `swiperank catalog diff` and `catalog import`.
@Suite("swiperank catalog", .serialized)
struct CatalogCommandTests {
    static let schema = ["--schema", "datasets/restaurants/restaurants.schema.json"]

    /// The restaurants with r001 removed, r002's reviews + 1 and one restaurant added.
    static func edited(in dir: URL) throws -> String {
        let lines = try String(contentsOf: CLI.root.appendingPathComponent("datasets/restaurants/restaurants.csv"), encoding: .utf8)
            .split(separator: "\n").map(String.init)
        var out: [String] = []
        for line in lines where !line.hasPrefix("r001,") {
            guard line.hasPrefix("r002,") else { out.append(line); continue }
            var fields = line.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
            fields[8] = "\(Int(fields[8])! + 1)"
            out.append(fields.joined(separator: ","))
        }
        out.append("r900,New Place,Old Town,40.0211,-74.9905,thai,2,4.5,12,40,yes")
        let path = dir.appendingPathComponent("edited.csv").path
        try (out.joined(separator: "\n") + "\n").write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    @Test("diff lists what changes; import appends it to the store once; bad files are refused naming the place")
    func diffAndImport() async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("swiperank-catalog-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let edited = try Self.edited(in: dir)
        let base = "datasets/restaurants/restaurants.csv"
        let diff = try CLI.run(["catalog", "diff", base, edited] + Self.schema)
        #expect(diff.status == 0, "\(diff.stderr)")
        #expect(diff.stdout.contains("1 added, 1 removed, 1 changed") && diff.stdout.contains("r002 (reviews)")
                && diff.stdout.contains("removed: r001") && diff.stdout.contains("added: r900"), "\(diff.stdout)")

        // A store whose students touched r001 and r002 (through the store API, as the service logs them).
        let db = dir.appendingPathComponent("db.sqlite").path
        let store = try SQLiteStore(path: db)
        for (id, card) in [("a", "r001"), ("b", "r050"), ("c", "r002")] {
            let served = Data(#"{"count": 1, "preload": false, "cards": [{"card_id": "\#(card)", "position": 1, "is_probe": false, "propensity": 1, "predicted_match": 0.5}]}"#.utf8)
            _ = try await store.append([StoredEvent(kind: .profile, payload: Data("{}".utf8), createdAt: 1),
                                        StoredEvent(kind: .served, payload: served, createdAt: 2)],
                                       to: id, expectedVersion: 0, update: StudentUpdate(profile: Data("{}".utf8)))
        }
        let affected = try CLI.run(["catalog", "diff", base, edited, "--database", db] + Self.schema)
        #expect(affected.status == 0 && affected.stdout.contains("students: 2 of 3") && affected.stdout.contains("(a, c)"), "\(affected.stdout) \(affected.stderr)")

        let imported = try CLI.run(["catalog", "import", edited, "--catalog", base, "--database", db] + Self.schema)
        #expect(imported.status == 0 && imported.stdout.contains("3 changes, catalog sequence 0 → 3"), "\(imported.stdout) \(imported.stderr)")
        let changes = try await store.catalogChanges(after: 0, limit: 10)
        #expect(Set(changes.map(\.itemID)) == ["r900", "r002", "r001"] && changes.first { $0.itemID == "r001" }?.fields == nil)
        #expect(changes.first { $0.itemID == "r002" }?.fields?["reviews"] != nil)
        let again = try CLI.run(["catalog", "import", edited, "--catalog", base, "--database", db] + Self.schema)
        #expect(again.status == 0 && again.stdout.contains("nothing to import"), "\(again.stdout)")
        // diff now compares against what the store serves.
        let served = try CLI.run(["catalog", "diff", base, edited, "--database", db] + Self.schema)
        #expect(served.stdout.contains("3 logged edits") && served.stdout.contains("0 added, 0 removed, 0 changed"), "\(served.stdout)")

        // A new file that does not build: refused before anything is written, naming line and column.
        let bad = dir.appendingPathComponent("bad.csv").path
        let text = try String(contentsOfFile: edited, encoding: .utf8).replacingOccurrences(of: "r900,New Place,Old Town,40.0211,-74.9905,thai,2,", with: "r900,New Place,Old Town,40.0211,-74.9905,thai,cheap,")
        try text.write(toFile: bad, atomically: true, encoding: .utf8)
        let refused = try CLI.run(["catalog", "import", bad, "--catalog", base, "--database", db] + Self.schema)
        #expect(refused.status != 0 && refused.stderr.contains("bad.csv:") && refused.stderr.contains("cheap"), "\(refused.stderr)")
        #expect(try await store.catalogSequence() == 3)
        #expect(try CLI.run(["catalog", "import", edited] + Self.schema).status != 0, "no store named")
    }

    @Test("export covers the default catalog: another catalog's students (prefixed keys) are not exported")
    func exportSkipsOtherCatalogs() async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("swiperank-export-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let db = dir.appendingPathComponent("db.sqlite").path
        let store = try SQLiteStore(path: db)
        let profile = try Data(contentsOf: CLI.root.appendingPathComponent("datasets/sample-profile.json"))
        for id in ["college-student", "\u{1}colleges2027\u{1}other-student"] {
            _ = try await store.append([StoredEvent(kind: .profile, payload: profile, createdAt: 1)], to: id, expectedVersion: 0,
                                       update: StudentUpdate(profile: profile))
        }
        let out = dir.appendingPathComponent("out").path
        let export = try CLI.run(["export", "--database", db, "--out", out])
        #expect(export.status == 0, "\(export.stderr)")
        let students = try String(contentsOfFile: out + "/students.csv", encoding: .utf8)
        #expect(students.contains("college-student") && !students.contains("other-student"))
    }
}
