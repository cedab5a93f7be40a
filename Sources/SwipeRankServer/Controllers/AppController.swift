import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import SwipeRank
import Synchronization

/// What an app asks before a student exists: which catalog this is (`GET /catalog`) and the
/// majors a profile can name (`GET /catalog/majors`, the picker). No token: catalog data only.
struct CatalogInfoController<M: ServableMatcher>: Sendable {
    typealias Context = SwipeRankRequestContext
    let service: StudentService<M>
    /// Encoded once per catalog version (a few hundred titles, asked by every new app install).
    let majors: Data?
    /// `GET /catalog/attributes`, encoded once per catalog version: in the background from the
    /// start (counting every text value of ten million items took seconds, and the server
    /// would not listen until it was done), or by the first request that needs it first.
    let attributes: LazyAttributes

    init(service: StudentService<M>) {
        self.service = service
        majors = service.engine.matcher.majorListing.flatMap { try? WireJSON.encode(MajorsBody(majors: $0)) }
        let attributes = LazyAttributes(catalog: service.engine.matcher.catalog)
        self.attributes = attributes
        // On a Dispatch queue, not the concurrency pool, whose few threads serve the requests.
        // That pass (and the start's index over every location) read every page of a large
        // catalog's mapped cache file: released after it, an idle server holds none of them.
        let catalog = service.engine.matcher.catalog
        DispatchQueue.global(qos: .utility).async {
            _ = attributes.data
            catalog.releaseMappedPages()
        }
    }

    func addRoutes(to router: Router<Context>, table: RouteTable) {
        router.get("catalog") { _, _ -> Response in
            let vocabulary = M.vocabulary
            let body = CatalogBody(kind: vocabulary.hasMajors ? "schools" : "items", item: vocabulary.item, itemIDKey: vocabulary.itemID,
                                   items: service.engine.matcher.catalog.count, fingerprint: service.engine.catalogFingerprint,
                                   sequence: service.catalogSequence, hasMajors: majors != nil)
            return .json(try WireJSON.encode(body), cache: CachePolicy.neverStore)
        }
        router.get("catalog/majors") { _, _ -> Response in
            guard let majors else {
                throw APIError.notFound("this catalog's profiles have no majors", details: ["resource": .string("majors")])
            }
            return .json(majors, cache: CachePolicy.publicCatalog)
        }
        router.get("catalog/attributes") { _, _ -> Response in
            .json(attributes.data, cache: CachePolicy.publicCatalog)
        }
        table.add(.get, "/catalog")
        table.add(.get, "/catalog/majors")
        table.add(.get, "/catalog/attributes")
    }
}

/// The encoded `GET /catalog/attributes` body of one catalog, built once, by whichever asks
/// first (a request waits for a build under way rather than starting a second).
final class LazyAttributes: Sendable {
    private let catalog: Catalog
    private let encoded = Mutex<Data?>(nil)

    init(catalog: Catalog) { self.catalog = catalog }

    /// The body (`{}` if it could not be encoded).
    var data: Data {
        encoded.withLock { data in
            if let data { return data }
            let built = (try? WireJSON.encode(AttributesBody(catalog: catalog))) ?? Data("{}".utf8)
            data = built
            return built
        }
    }
}

/// `GET /catalog`.
struct CatalogBody: Encodable {
    var kind: String
    var item: String
    var itemIDKey: String
    var items: Int
    var fingerprint: String
    var sequence: Int
    var hasMajors: Bool
    enum CodingKeys: String, CodingKey {
        case kind, item, itemIDKey = "item_id_key", items, fingerprint, sequence, hasMajors = "has_majors"
    }
}

/// `GET /catalog/attributes`: what an app needs to build a profile form for any catalog — each
/// attribute with its values (text: the most frequent first; numbers: the range) and the keys a
/// profile's `preferences` may name (feature columns, their groups, `distance`).
struct AttributesBody: Encodable {
    /// The most values listed per text attribute (the rest are counted in `distinct`).
    static let maxValues = 200

    struct Attribute: Encodable {
        var name: String
        var kind: String
        var values: [String]?
        var distinct: Int?
        var min: Double?
        var max: Double?
    }

    var attributes: [Attribute]
    var preferenceKeys: [String]

    enum CodingKeys: String, CodingKey { case attributes, preferenceKeys = "preference_keys" }

    init(catalog: Catalog) {
        var out: [Attribute] = []
        for (i, name) in catalog.textAttributeNames.enumerated() {
            var counts: [String: Int] = [:]
            for value in catalog.textValues[i] where !value.isEmpty { counts[value, default: 0] += 1 }
            let ranked = counts.sorted { ($1.value, $0.key) < ($0.value, $1.key) }.prefix(Self.maxValues).map(\.key)
            out.append(Attribute(name: name, kind: "text", values: ranked, distinct: counts.count))
        }
        for (i, name) in catalog.numericAttributeNames.enumerated() {
            let present = catalog.numericValues[i].compactMap { $0 }
            out.append(Attribute(name: name, kind: "number", min: present.min(), max: present.max()))
        }
        attributes = out.sorted { $0.name < $1.name }
        var keys = catalog.columns.map(\.name) + catalog.groups
        if catalog.locations.contains(where: { $0 != nil }) { keys.append("distance") }
        var seen = Set<String>()
        preferenceKeys = keys.filter { seen.insert($0).inserted }
    }
}

/// `GET /catalog/majors`.
struct MajorsBody: Encodable {
    var majors: [MajorListing]
}

/// The web app at `/app/`: plain files (HTML, CSS, ES modules) compiled into the binary
/// (`WebAssets`, written by `scripts/embed-web`), or read from a folder on disk when the
/// service is started with `--app-dir` (editing the app without rebuilding). Each file has a
/// content ETag and `no-cache`, so a browser revalidates and an upgrade shows at once.
struct WebAppController: Sendable {
    typealias Context = SwipeRankRequestContext
    /// A folder to serve instead of the compiled-in copy.
    let directory: String?

    /// Content types of the files an app ships.
    static let types = [
        "html": "text/html; charset=utf-8", "css": "text/css; charset=utf-8", "js": "text/javascript; charset=utf-8",
        "json": "application/json; charset=utf-8", "svg": "image/svg+xml", "webmanifest": "application/manifest+json",
        "txt": "text/plain; charset=utf-8",
    ]
    /// The app talks to this origin, or (development) to one named in the URL; inline script never.
    static let securityPolicy = "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; "
        + "connect-src 'self' http://127.0.0.1:* http://localhost:*; frame-ancestors 'none'; base-uri 'none'; form-action 'none'"

    func addRoutes(to router: Router<Context>, table: RouteTable) {
        // The router matches `/app` and `/app/` alike; the page's relative links need the slash.
        router.get("app") { request, _ in
            request.uri.path.hasSuffix("/") ? try serve("index.html", request)
                : Response(status: .permanentRedirect, headers: [.location: "/app/"])
        }
        router.get("app/**") { request, context in
            try serve(context.parameters.getCatchAll().joined(separator: "/"), request)
        }
        table.add(.get, "/app")
        table.add(.get, "/app/**")
    }

    private func serve(_ path: String, _ request: Request) throws -> Response {
        let name = path.isEmpty ? "index.html" : path
        guard let (bytes, type) = try file(name) else {
            throw APIError.notFound("no app file \"\(name.prefix(128))\"", details: ["resource": .string("app file")])
        }
        let etag = "\"" + SHA256.hash(data: bytes).prefix(12).map { String(format: "%02x", $0) }.joined() + "\""
        var headers: HTTPFields = [.eTag: etag, .cacheControl: "no-cache", .xContentTypeOptions: "nosniff"]
        if type.hasPrefix("text/html") {
            headers[.contentSecurityPolicy] = Self.securityPolicy
            headers[.referrerPolicy] = "no-referrer"
        }
        if request.ifNoneMatch(etag) { return Response(status: .notModified, headers: headers) }
        headers[.contentType] = type
        return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: bytes)))
    }

    /// The bytes and type of an app file, or nil when there is none by that name.
    private func file(_ name: String) throws -> (Data, String)? {
        let parts = name.split(separator: "/", omittingEmptySubsequences: false)
        // Names are plain relative paths: nothing climbs out of the app folder or hides.
        guard !parts.contains(where: { $0.isEmpty || $0.hasPrefix(".") }),
              let ext = parts.last?.split(separator: ".").last.map(String.init), let type = Self.types[ext] else { return nil }
        guard let directory else {
            return WebAssets.files[name].map { (Data($0.utf8), type) }
        }
        let url = URL(fileURLWithPath: directory).appendingPathComponent(name)
        guard let data = try? Data(contentsOf: url) else { return nil }
        return (data, type)
    }
}

extension HTTPField.Name {
    static let xContentTypeOptions = Self("X-Content-Type-Options")!
    static let referrerPolicy = Self("Referrer-Policy")!
}
