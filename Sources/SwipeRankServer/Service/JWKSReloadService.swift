import AsyncHTTPClient
import Foundation
import JWTKit
import Logging
import NIOCore
import ServiceLifecycle

/// Where a JWKS comes from: a file, or the identity provider's URL (`…/.well-known/jwks.json`).
public enum JWKSSource: Sendable, Hashable {
    /// A file on disk.
    case file(String)
    /// An `http(s)://` URL, fetched with a timeout (`read(timeout:)`); anything but a 200 is an error.
    case url(String)

    /// The source named by `text`: a URL when it starts with `http://` or `https://`, else a file.
    public init(_ text: String) {
        self = text.hasPrefix("http://") || text.hasPrefix("https://") ? .url(text) : .file(text)
    }

    /// The key set's text.
    ///
    /// - Parameter timeout: How long a URL's fetch may take (10 s unless told: an identity
    ///   provider that does not answer by then is down, and the keys in service stay).
    /// - Throws: `AuthSetupError` naming the file or URL and what failed.
    public func read(timeout: Duration = .seconds(10)) async throws -> String {
        switch self {
        case let .file(path):
            do { return try String(contentsOfFile: path, encoding: .utf8) } catch {
                throw AuthSetupError("\(path): cannot read the JWKS")
            }
        case let .url(url):
            do {
                let response = try await HTTPClient.shared.execute(HTTPClientRequest(url: url), timeout: .nanoseconds(Int64(timeout.components.seconds) * 1_000_000_000 + timeout.components.attoseconds / 1_000_000_000))
                let body = try await response.body.collect(upTo: 1 << 20)
                guard response.status == .ok else { throw AuthSetupError("\(url): the JWKS answered HTTP \(response.status.code)") }
                return String(buffer: body)
            } catch let error as AuthSetupError {
                throw error
            } catch {
                throw AuthSetupError("\(url): cannot fetch the JWKS: \(error)")
            }
        }
    }
}

/// Re-reads the JWKS on a schedule: an identity provider rotates its signing keys by
/// publishing a new set, and the service follows without a restart. A set that cannot be read
/// or does not parse is logged and the keys in service stay.
struct JWKSReloadService: Service {
    let source: JWKSSource
    let interval: Duration
    let ring: KeyRing
    let logger: Logger

    func run() async throws {
        await cancelWhenGracefulShutdown {
            // The set the service started with, not a fresh read: a set changed between the
            // start and this task's first step must still be picked up.
            var last = ring.auth.jwksJSON
            while !Task.isCancelled {
                try? await Task.sleep(for: interval)
                do {
                    let text = try await source.read()
                    guard text != last else { continue }
                    try await reload(text)
                    last = text
                    logger.info("reloaded the JWKS", metadata: ["source": "\(source)"])
                } catch {
                    logger.error("the JWKS could not be reloaded; keeping the keys in service",
                                 metadata: ["source": "\(source)", "error": "\(error)"])
                }
            }
        }
    }

    /// Puts the key set `text` (with the configured secret and public key) in service.
    func reload(_ text: String) async throws {
        var auth = ring.auth
        auth.jwksJSON = text
        ring.replace(try await auth.keys())
    }
}
