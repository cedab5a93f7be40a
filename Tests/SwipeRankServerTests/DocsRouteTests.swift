import Foundation
import HTTPTypes
@testable import SwipeRankServer
import Testing

/// `GET /openapi.json` and the rendered reference at `/docs`.
@Suite("The OpenAPI description as JSON, and the reference page")
struct DocsRouteTests {
    /// The YAML text's path keys (two-space-indented keys under `paths:`), read without a YAML
    /// parser so the JSON is checked against the file itself, not against the script's parse.
    static func yamlPaths(_ yaml: String) -> Set<String> {
        var inPaths = false
        var paths = Set<String>()
        for line in yaml.split(separator: "\n", omittingEmptySubsequences: false) {
            if line == "paths:" { inPaths = true; continue }
            guard inPaths else { continue }
            if let first = line.first, first != " " { inPaths = false; continue }
            if line.hasPrefix("  /"), !line.hasPrefix("   "), line.hasSuffix(":") { paths.insert(String(line.dropFirst(2).dropLast())) }
        }
        return paths
    }

    /// The YAML text's schema names (four-space-indented keys under `  schemas:`).
    static func yamlSchemas(_ yaml: String) -> Set<String> {
        var inSchemas = false
        var names = Set<String>()
        for line in yaml.split(separator: "\n", omittingEmptySubsequences: false) {
            if line == "  schemas:" { inSchemas = true; continue }
            guard inSchemas else { continue }
            if !line.hasPrefix("    ") { if !line.isEmpty { inSchemas = false }; continue }
            if !line.hasPrefix("     "), line.hasSuffix(":") { names.insert(String(line.dropFirst(4).dropLast())) }
        }
        return names
    }

    @Test("/openapi.json is openapi.yaml: the same version, paths, methods and schema names")
    func json() async throws {
        let yaml = try String(contentsOf: Fixtures.root.appendingPathComponent("Sources/SwipeRankServer/openapi.yaml"), encoding: .utf8)
        let paths = Self.yamlPaths(yaml)
        #expect(paths.contains("/student/swipe") && paths.contains("/openapi.json") && paths.contains("/docs"))
        try await Harness().run { c in
            let reply = try await c.call(.get, "/openapi.json")
            #expect(reply.status == .ok)
            #expect(reply.headers[.contentType]?.hasPrefix("application/json") == true)
            let doc = reply.json
            #expect(doc["openapi"] as? String == "3.0.3")
            let jsonPaths = try #require(doc["paths"] as? [String: [String: Any]])
            #expect(Set(jsonPaths.keys) == paths, "run bash scripts/embed-openapi after editing openapi.yaml")
            let schemas = try #require((doc["components"] as? [String: Any])?["schemas"] as? [String: Any])
            #expect(Set(schemas.keys) == Self.yamlSchemas(yaml))
            // A method under a path is a key of it in both forms.
            #expect(jsonPaths["/student/swipe"]?["post"] != nil && jsonPaths["/auth/guest"]?["post"] != nil)
            #expect(yaml.contains("  /student/swipe:\n    post:"))
        }
    }

    @Test("/docs is an HTML page whose script is /docs/docs.js (same origin, as the CSP demands)")
    func docs() async throws {
        try await Harness().run { c in
            let page = try await c.call(.get, "/docs")
            #expect(page.status == .ok)
            #expect(page.headers[.contentType]?.hasPrefix("text/html") == true)
            #expect(page.headers[.contentSecurityPolicy]?.contains("script-src 'self'") == true)
            let html = String(decoding: page.body, as: UTF8.self)
            #expect(html.contains(#"<script src="/docs/docs.js"></script>"#))
            #expect(!html.contains("http://") && !html.contains("https://"), "no external resources")
            let script = try await c.call(.get, "/docs/docs.js")
            #expect(script.status == .ok)
            #expect(script.headers[.contentType]?.hasPrefix("text/javascript") == true)
            #expect(String(decoding: script.body, as: UTF8.self).contains("/openapi.json"))
        }
    }
}
