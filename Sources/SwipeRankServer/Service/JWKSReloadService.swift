import Foundation
import JWTKit
import Logging
import ServiceLifecycle

/// Re-reads the JWKS file on a schedule: an identity provider rotates its signing keys by
/// publishing a new set (fetch it into the file with any tool), and the service follows
/// without a restart. A set that does not parse is logged and the keys in service stay.
struct JWKSReloadService: Service {
    let path: String
    let interval: Duration
    let ring: KeyRing
    let logger: Logger

    func run() async throws {
        await cancelWhenGracefulShutdown {
            // The set the service started with, not a fresh read: a file changed between the
            // start and this task's first step must still be picked up.
            var last = ring.auth.jwksJSON
            while !Task.isCancelled {
                try? await Task.sleep(for: interval)
                guard let text = try? String(contentsOfFile: path, encoding: .utf8), text != last else { continue }
                do {
                    try await reload(text)
                    last = text
                    logger.info("reloaded the JWKS", metadata: ["file": "\(path)"])
                } catch {
                    logger.error("the JWKS file changed but does not load; keeping the keys in service",
                                 metadata: ["file": "\(path)", "error": "\(error)"])
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
