import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing

/// The real binary on a loopback port: an acknowledged swipe survives SIGKILL.
@Suite("swiperank serve, live", .serialized)
struct ServeLiveTests {
    /// A running `swiperank serve` and its port.
    final class Server {
        let process = Process()
        var port = 0

        init(database: String) throws {
            process.executableURL = CLI.binary
            process.arguments = ["serve", "--port", "0", "--database", database, "--log-level", "error"]
            process.currentDirectoryURL = CLI.root
            let out = Pipe()
            process.standardOutput = out
            process.standardError = FileHandle.nullDevice
            try process.run()
            // Wait (bounded) for the announcement line.
            var text = ""
            let deadline = Date().addingTimeInterval(60)
            while Date() < deadline, !text.contains("\n") {
                let chunk = out.fileHandleForReading.availableData
                if chunk.isEmpty { break }
                text += String(decoding: chunk, as: UTF8.self)
            }
            guard let line = text.split(separator: "\n").first(where: { $0.contains("listening on port") }),
                  let port = Int(line.split(separator: " ").last ?? "") else {
                process.terminate()
                throw CLIError("serve did not start: \(text)")
            }
            self.port = port
        }

        func kill() {
            Foundation.kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
    }

    struct CLIError: Error, CustomStringConvertible {
        let description: String
        init(_ d: String) { description = d }
    }

    static func call(_ port: Int, _ method: String, _ path: String, token: String, body: String? = nil) async throws -> (Int, [String: Any]) {
        var request = URLRequest(url: URL(string: "http://127.0.0.1:\(port)\(path)")!)
        request.httpMethod = method
        request.timeoutInterval = 30
        request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization")
        if let body {
            request.httpBody = Data(body.utf8)
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        }
        let (data, response) = try await URLSession.shared.data(for: request)
        let json = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] ?? [:]
        return ((response as? HTTPURLResponse)?.statusCode ?? 0, json)
    }

    @Test("every acknowledged swipe is there after kill -9 and a restart")
    func killAndRestart() async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("swiperank-live-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let database = dir.appendingPathComponent("live.sqlite").path
        let token = try CLI.run(["token", "--student", "live-student"]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(token.split(separator: ".").count == 3)
        let profile = try String(contentsOf: CLI.root.appendingPathComponent("datasets/sample-profile.json"), encoding: .utf8)

        let first = try Server(database: database)
        var acknowledged: [String] = []
        do {
            let (status, _) = try await Self.call(first.port, "PUT", "/student/profile", token: token, body: profile)
            #expect(status == 201)
            for round in 0..<3 {
                let (_, deck) = try await Self.call(first.port, "GET", "/student/recommendations?count=5&fields=minimal", token: token)
                for (i, card) in (deck["recommendations"] as? [[String: Any]] ?? []).enumerated() {
                    let id = "live-\(round)-\(i)"
                    let body = #"{"swipe_id":"\#(id)","school_id":"\#(card["school_id"] as! String)","action":"\#(i % 2 == 0 ? "like" : "dislike")","timestamp":\#(round * 10 + i)}"#
                    let (s, _) = try await Self.call(first.port, "POST", "/student/swipe", token: token, body: body)
                    if s == 201 { acknowledged.append(id) }
                }
            }
        }
        first.kill()
        #expect(acknowledged.count == 15)

        let second = try Server(database: database)
        defer { second.kill() }
        let (status, state) = try await Self.call(second.port, "GET", "/student/learning-state", token: token)
        #expect(status == 200)
        #expect(state["total_swipes"] as? Int == acknowledged.count)
        let (_, export) = try await Self.call(second.port, "GET", "/student/export", token: token)
        let swipes = (export["events"] as? [[String: Any]] ?? []).filter { $0["kind"] as? String == "swipe" }
        #expect(swipes.compactMap { ($0["data"] as? [String: Any])?["swipe_id"] as? String } == acknowledged)
        // The deck goes on: no card comes back.
        let (_, next) = try await Self.call(second.port, "GET", "/student/recommendations?count=5&fields=minimal", token: token)
        #expect((next["recommendations"] as? [[String: Any]])?.first?["position"] as? Int == 16)
    }
}
