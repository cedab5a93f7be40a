import Foundation
import HTTPTypes
import Hummingbird
import JWTKit
import Synchronization

/// The claims of a student token: `sub` is the student id; `exp` is required; `aud` and `iss`
/// are checked when the server is configured with them (`AuthConfiguration.audience`/`issuer`).
public struct StudentClaims: JWTPayload, Equatable {
    /// The student id.
    public var sub: SubjectClaim
    /// Expiry.
    public var exp: ExpirationClaim
    /// Issued at.
    public var iat: IssuedAtClaim?
    /// Who the token is for.
    public var aud: AudienceClaim?
    /// Who issued it.
    public var iss: IssuerClaim?
    /// Set on tokens `POST /auth/guest` issued: only those may be refreshed by the service.
    public var guest: Bool?

    /// Creates claims.
    ///
    /// - Parameters:
    ///   - studentID: The subject.
    ///   - expires: When the token expires.
    ///   - issued: When it was issued.
    ///   - audience: The `aud` claim, if any.
    ///   - issuer: The `iss` claim, if any.
    ///   - guest: Whether this is a guest token.
    public init(studentID: String, expires: Date, issued: Date = Date(), audience: String? = nil, issuer: String? = nil,
                guest: Bool? = nil) {
        sub = SubjectClaim(value: studentID)
        exp = ExpirationClaim(value: expires)
        iat = IssuedAtClaim(value: issued)
        aud = audience.map { AudienceClaim(value: [$0]) }
        iss = issuer.map { IssuerClaim(value: $0) }
        self.guest = guest
    }

    /// Rejects expired tokens and subjects that are not student ids (empty, over 256 bytes, or
    /// holding a control character).
    ///
    /// - Parameter algorithm: The verifying algorithm.
    public func verify(using algorithm: some JWTAlgorithm) async throws {
        try exp.verifyNotExpired()
        guard !sub.value.isEmpty, sub.value.utf8.count <= 256 else {
            throw JWTError.claimVerificationFailure(failedClaim: sub, reason: "sub must be 1…256 bytes")
        }
        // No control characters: they would be unreadable in logs, and the store keys other
        // catalogs' students under a control-character prefix (`NamespacedStore`).
        guard !sub.value.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
            throw JWTError.claimVerificationFailure(failedClaim: sub, reason: "sub must not hold control characters")
        }
    }
}

/// How tokens are verified (and, with a secret, minted).
public struct AuthConfiguration: Sendable {
    /// The HS256 shared secret (≥ 32 bytes), if tokens are HMAC-signed.
    public var hmacSecret: String?
    /// A PEM public key (ECDSA P-256 for ES256, or RSA for RS256), if tokens are signed
    /// elsewhere.
    public var publicKeyPEM: String?
    /// A JWKS document (RFC 7517): several keys, each named by `kid`, so an identity provider
    /// can rotate keys (`serve --jwks FILE` reloads it on a schedule).
    public var jwksJSON: String?
    /// When set, a token must name this audience in `aud` (a token for another app is refused).
    public var audience: String?
    /// When set, a token's `iss` must be exactly this.
    public var issuer: String?
    /// Whether `POST /auth/guest` issues tokens for fresh guest ids (needs `hmacSecret`).
    public var guestTokens = false
    /// How long a guest token lives; the app refreshes it (`POST /auth/guest/refresh`) before.
    public var guestLifetime: TimeInterval = 12 * 3_600
    /// Guest tokens per client address per hour.
    public var guestsPerHour = 30

    /// The development secret `swiperank serve` and `swiperank token` share when none is
    /// configured; the server refuses it on a non-loopback address.
    public static let developmentSecret = "swiperank-development-secret-do-not-deploy"

    /// Creates a configuration.
    ///
    /// - Parameters:
    ///   - hmacSecret: HS256 secret.
    ///   - publicKeyPEM: Public key.
    public init(hmacSecret: String? = nil, publicKeyPEM: String? = nil) {
        self.hmacSecret = hmacSecret
        self.publicKeyPEM = publicKeyPEM
    }

    /// The verifying keys.
    ///
    /// - Throws: `AuthSetupError` for a short secret, an unreadable key or key set, or none given.
    public func keys() async throws -> JWTKeyCollection {
        let keys = JWTKeyCollection()
        guard hmacSecret != nil || publicKeyPEM != nil || jwksJSON != nil else {
            throw AuthSetupError("give an HS256 secret, a public key or a JWKS")
        }
        if let jwksJSON {
            do {
                try await keys.add(jwksJSON: jwksJSON)
            } catch {
                throw AuthSetupError("the JWKS does not parse as a key set: \(error)")
            }
        }
        if let secret = hmacSecret {
            guard secret.utf8.count >= 32 else { throw AuthSetupError("the HS256 secret must be at least 32 bytes") }
            await keys.add(hmac: HMACKey(from: secret), digestAlgorithm: .sha256)
        }
        if let pem = publicKeyPEM {
            if let key = try? ES256PublicKey(pem: pem) {
                await keys.add(ecdsa: key, kid: nil)
            } else if let key = try? Insecure.RSA.PublicKey(pem: pem) {
                await keys.add(rsa: key, digestAlgorithm: .sha256, kid: nil)
            } else {
                throw AuthSetupError("the public key is neither an ECDSA P-256 nor an RSA PEM key")
            }
        }
        return keys
    }

    /// Mints a development token (HS256).
    ///
    /// - Parameters:
    ///   - studentID: The subject.
    ///   - lifetime: Seconds until expiry.
    /// - Returns: The compact JWT.
    /// - Throws: `AuthSetupError` without a secret.
    public func token(studentID: String, lifetime: TimeInterval) async throws -> String {
        guard let secret = hmacSecret else { throw AuthSetupError("minting needs the HS256 secret") }
        guard secret.utf8.count >= 32 else { throw AuthSetupError("the HS256 secret must be at least 32 bytes") }
        let keys = JWTKeyCollection()
        await keys.add(hmac: HMACKey(from: secret), digestAlgorithm: .sha256)
        return try await keys.sign(StudentClaims(studentID: studentID, expires: Date().addingTimeInterval(lifetime),
                                                 audience: audience, issuer: issuer))
    }

    /// Whether verified claims are for this service: `aud` includes `audience` and `iss` is
    /// `issuer`, each checked only when configured.
    ///
    /// - Parameter claims: Claims whose signature verified.
    /// - Returns: nil when accepted, else the reason for the error message.
    public func rejection(of claims: StudentClaims) -> String? {
        if let audience, !(claims.aud?.value.contains(audience) ?? false) { return "token is for another audience" }
        if let issuer, claims.iss?.value != issuer { return "token from another issuer" }
        return nil
    }
}

/// A bad auth setup (reported at start-up, never per request).
public struct AuthSetupError: Error, CustomStringConvertible {
    /// What is wrong.
    public let description: String
    init(_ description: String) { self.description = description }
}

/// Requires `Authorization: Bearer <JWT>` and puts the token's `sub` in the context: a
/// student reaches only their own state, because every `/student` route reads the id from
/// here, never from the request. A step of `StudentGateMiddleware`.
struct StudentAuthMiddleware: Sendable {
    typealias Context = SwipeRankRequestContext
    let keys: KeyRing
    /// Tokens already verified, shared by every route group of one server.
    let verified: VerifiedTokens

    /// Puts the token's student in the context. On the caller's executor
    /// (`nonisolated(nonsending)`): it suspends only to verify a token it has not seen.
    ///
    /// - Throws: `APIError` 401 without a valid token.
    nonisolated(nonsending) func authenticate(_ request: Request, context: inout Context) async throws {
        guard let header = request.headers.value(.authorization) else { throw APIError.authRequired }
        let parts = header.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
        guard parts.count == 2, parts[0].lowercased() == "bearer" else {
            throw APIError.authInvalid("expected \"Authorization: Bearer <token>\"")
        }
        let token = String(parts[1])
        if let subject = verified.subject(of: token, at: Date()) {
            context.studentID = subject
            return
        }
        // Only the one canonical spelling of a token is verified: JWTKit's base64url decoder
        // ignores a last character's unused bits and tolerates padding, so without this a
        // token has forgeries that verify too (and each would be cached as another entry).
        let claims = try await keys.verify(token)
        verified.insert(token, subject: claims.sub.value, expires: claims.exp.value)
        context.studentID = claims.sub.value
    }

    static func reason(_ error: JWTError) -> String {
        switch error.errorType {
        case .claimVerificationFailure:
            if error.failedClaim is ExpirationClaim { return "expired" }
            return "claim rejected"
        case .signatureVerificationFailed: return "bad signature"
        case .missingKIDHeader, .unknownKID: return "unknown key"
        default: return "malformed token"
        }
    }
}

/// The shape of a compact JWS (`header.payload.signature`) with every segment in canonical
/// unpadded base64url (RFC 7515 §2, RFC 4648 §5): only the 64 alphabet characters, no `=`, no
/// whitespace, no segment of length 1 mod 4, and a last character whose bits beyond the encoded
/// bytes are zero. Every byte string has exactly one such spelling, so a token that is not
/// canonical is a re-spelling of another one and is refused before any decoding.
enum CompactToken {
    /// Whether `token` is three canonical base64url segments separated by dots.
    static func isCanonical(_ token: String) -> Bool {
        var segments = 0
        var length = 0
        var last: UInt8 = 0
        for byte in token.utf8 {
            if byte == UInt8(ascii: ".") {
                guard segmentEnds(length: length, last: last) else { return false }
                segments += 1
                length = 0
                continue
            }
            guard let value = sextet(byte) else { return false }
            last = value
            length += 1
        }
        return segments == 2 && segmentEnds(length: length, last: last)
    }

    /// A segment of `length` characters whose last one has the 6-bit value `last` is canonical.
    private static func segmentEnds(length: Int, last: UInt8) -> Bool {
        switch length % 4 {
        case 0: return length > 0
        case 2: return last & 0x0F == 0   // 1 byte: 8 of 12 bits used
        case 3: return last & 0x03 == 0   // 2 bytes: 16 of 18 bits used
        default: return false             // 1 mod 4 encodes no whole byte
        }
    }

    /// The 6-bit value of a base64url character, or nil outside the alphabet.
    private static func sextet(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"): return byte - UInt8(ascii: "A")
        case UInt8(ascii: "a")...UInt8(ascii: "z"): return byte - UInt8(ascii: "a") + 26
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0") + 52
        case UInt8(ascii: "-"): return 62
        case UInt8(ascii: "_"): return 63
        default: return nil
        }
    }

    /// The base64url character of a 6-bit value.
    static func character(_ value: UInt8) -> Character {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
        return alphabet[Int(value & 0x3F)]
    }

    /// The 6-bit value of a base64url character (for tests that rewrite tokens bit by bit).
    static func value(_ character: Character) -> UInt8? {
        character.asciiValue.flatMap(sextet)
    }
}

/// Tokens that passed verification, with their subject and expiry: a client sends the same token
/// with every request until it expires, and verifying it again (parse, two JSON decodes, an
/// HMAC or a signature check, a hop onto the key collection's actor) was 4% of the server's CPU
/// under load. Keyed by the whole token string, so only a token that verified is ever found;
/// an entry is used only before its `exp`, so expiry is checked exactly as before. Bounded:
/// when full, expired entries go, and if none had expired, all of them.
final class VerifiedTokens: Sendable {
    fileprivate struct Entry: Sendable {
        var subject: String
        var expires: Date
    }

    fileprivate let entries = Mutex<[String: Entry]>([:])
    /// The most tokens kept.
    let capacity: Int

    /// - Parameter capacity: The most tokens kept (≥ 1).
    init(capacity: Int = 10_000) {
        precondition(capacity >= 1, "a token cache needs room for one token")
        self.capacity = capacity
    }

    /// The subject of `token` if it was verified and has not expired at `now`.
    func subject(of token: String, at now: Date) -> String? {
        entries.withLock { entries in
            guard let entry = entries[token] else { return nil }
            guard now < entry.expires else {
                entries[token] = nil
                return nil
            }
            return entry.subject
        }
    }

    /// Remembers a token that just verified.
    func insert(_ token: String, subject: String, expires: Date) {
        entries.withLock { entries in
            if entries.count >= capacity {
                let now = Date()
                entries = entries.filter { now < $0.value.expires }
                if entries.count >= capacity { entries.removeAll(keepingCapacity: true) }
            }
            entries[token] = Entry(subject: subject, expires: expires)
        }
    }
}

/// The verifying keys, replaceable while serving (a reloaded JWKS): a request verifies against
/// the set current when it arrives, and tokens cached as verified are forgotten on a swap so a
/// key taken out of the set stops working at once, not at its tokens' expiry.
final class KeyRing: Sendable {
    /// What is checked beyond the signature (`aud`, `iss`) and how guests are issued.
    let auth: AuthConfiguration
    private let current: Mutex<JWTKeyCollection>
    /// Signs guest tokens: only the HS256 secret, never a key from a JWKS.
    private let guestSigner: JWTKeyCollection?
    private let verified: VerifiedTokens

    init(auth: AuthConfiguration, verified: VerifiedTokens) async throws {
        self.auth = auth
        self.verified = verified
        current = Mutex(try await auth.keys())
        if let secret = auth.hmacSecret, secret.utf8.count >= 32 {
            let signer = JWTKeyCollection()
            await signer.add(hmac: HMACKey(from: secret), digestAlgorithm: .sha256)
            guestSigner = signer
        } else {
            guestSigner = nil
        }
    }

    /// Puts a new key set in service.
    func replace(_ keys: JWTKeyCollection) {
        current.withLock { $0 = keys }
        verified.removeAll()
    }

    /// The claims of a canonical token that verifies against the current keys and is meant
    /// for this service.
    ///
    /// - Throws: 401 `AUTH_INVALID` naming the reason.
    func verify(_ token: String) async throws(APIError) -> StudentClaims {
        // Only the one canonical spelling of a token is verified: JWTKit's base64url decoder
        // ignores a last character's unused bits and tolerates padding, so without this a
        // token has forgeries that verify too (and each would be cached as another entry).
        guard CompactToken.isCanonical(token) else { throw APIError.authInvalid("malformed token") }
        let keys = current.withLock { $0 }
        let claims: StudentClaims
        do {
            claims = try await keys.verify(token, as: StudentClaims.self)
        } catch let error as JWTError {
            throw APIError.authInvalid(StudentAuthMiddleware.reason(error))
        } catch {
            throw APIError.authInvalid("malformed token")
        }
        if let reason = auth.rejection(of: claims) { throw APIError.authInvalid(reason) }
        return claims
    }

    /// A guest token for `studentID`, or nil when this server cannot sign (no HS256 secret).
    func signGuest(_ studentID: String, now: Date) async throws -> (token: String, expires: Date)? {
        guard let guestSigner else { return nil }
        let expires = now.addingTimeInterval(auth.guestLifetime)
        let claims = StudentClaims(studentID: studentID, expires: expires, issued: now, audience: auth.audience,
                                   issuer: auth.issuer, guest: true)
        return (try await guestSigner.sign(claims), expires)
    }
}

extension VerifiedTokens {
    /// Forgets every verified token (the key set changed).
    func removeAll() {
        entries.withLock { $0.removeAll(keepingCapacity: true) }
    }
}
