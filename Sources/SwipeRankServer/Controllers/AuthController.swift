import Foundation
import HTTPTypes
import Hummingbird

/// `/auth/guest`: a signed, short-lived token for a fresh student id, so an app can let people
/// swipe before they have an account (the seed app's anonymous sign-in). Off unless configured
/// (`AuthConfiguration.guestTokens`); sign-ups are limited per client address, since each
/// creates an identity, and refreshes per guest.
struct AuthController: Sendable {
    typealias Context = SwipeRankRequestContext
    let keys: KeyRing
    let buckets: TokenBuckets
    let clock: @Sendable () -> Int64
    /// A fresh guest id (random; tests pass a deterministic one).
    let newGuestID: @Sendable () -> String
    /// Take the client's address from `X-Forwarded-For` (its last entry: the one the trusted
    /// proxy in front appended) instead of the connection's peer, which behind a proxy is the
    /// proxy for every guest.
    var trustForwardedFor = false

    /// The address sign-ups are counted by.
    func clientAddress(_ request: Request, _ context: Context) -> String {
        if trustForwardedFor, let header = request.headers[.xForwardedFor],
           let last = header.split(separator: ",").last?.trimmingCharacters(in: .whitespaces), !last.isEmpty {
            return String(last.prefix(64))
        }
        return context.clientAddress ?? "unknown"
    }

    func addRoutes(to router: Router<Context>, table: RouteTable) {
        router.post("auth/guest") { request, context in
            try guestsAllowed()
            try limit(key: "guest:" + clientAddress(request, context), what: "guest sign-ins", subject: "this address")
            return try await issue(newGuestID(), status: .created)
        }
        router.post("auth/guest/refresh") { request, context in
            try guestsAllowed()
            guard let header = request.headers[.authorization] else { throw APIError.authRequired }
            let parts = header.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
            guard parts.count == 2, parts[0].lowercased() == "bearer" else {
                throw APIError.authInvalid("expected \"Authorization: Bearer <token>\"")
            }
            // Only an unexpired guest token of this service is refreshed: an account's token is
            // the identity provider's to renew.
            let claims = try await keys.verify(String(parts[1]))
            guard claims.guest == true else { throw APIError.authInvalid("only a guest token can be refreshed here") }
            // Limited per guest, not per address: a classroom behind one address must not sign
            // its guests out, and sign-ups must not be starved by refreshes.
            try limit(key: "refresh:" + claims.sub.value, what: "token refreshes", subject: "this guest")
            return try await issue(claims.sub.value, status: .ok)
        }
        table.add(.post, "/auth/guest")
        table.add(.post, "/auth/guest/refresh")
    }

    private func guestsAllowed() throws(APIError) {
        guard keys.auth.guestTokens else {
            throw APIError(.notFound, code: "GUEST_DISABLED", message: "this service does not issue guest tokens; sign in with your app's token")
        }
    }

    private func limit(key: String, what: String, subject: String) throws(APIError) {
        if case let .failure(retry) = buckets.take(key) {
            throw APIError.rateLimited(retry, limit: Int(buckets.capacity), what: what, subject: subject)
        }
    }

    private func issue(_ studentID: String, status: HTTPResponse.Status) async throws -> Response {
        // Whole seconds: NumericDate claims are seconds, and a fraction only confuses readers.
        let now = Date(timeIntervalSince1970: Double(clock() / 1_000))
        guard let (token, expires) = try await keys.signGuest(studentID, now: now) else {
            throw APIError(.notFound, code: "GUEST_DISABLED", message: "guest tokens need the service's HS256 secret")
        }
        let body = GuestTokenBody(token: token, studentID: studentID, expiresAt: Int64(expires.timeIntervalSince1970))
        return .json(try WireJSON.encode(body), status: status, cache: CachePolicy.neverStore)
    }

    /// 128 random bits as `guest-` + 26 base32 characters (lower case, no padding).
    static func randomGuestID() -> String {
        var generator = SystemRandomNumberGenerator()
        return guestID(high: generator.next(), low: generator.next())
    }

    /// The guest id of 128 bits.
    static func guestID(high: UInt64, low: UInt64) -> String {
        let alphabet = Array("abcdefghijklmnopqrstuvwxyz234567")
        var out = "guest-"
        for i in 0..<26 {
            let bit = i * 5
            // 130 bits of room for 128: the top two bits of the first character are zero.
            let shift = 125 - bit
            let chunk: UInt64 = shift >= 64 ? (high >> UInt64(shift - 64)) & 31
                : shift > 59 ? ((high << UInt64(64 - shift)) | (low >> UInt64(shift))) & 31
                : (low >> UInt64(shift)) & 31
            out.append(alphabet[Int(chunk)])
        }
        return out
    }
}

/// `POST /auth/guest`'s answer.
struct GuestTokenBody: Encodable {
    var token: String
    var tokenType = "Bearer"
    var studentID: String
    /// Unix seconds.
    var expiresAt: Int64

    init(token: String, studentID: String, expiresAt: Int64) {
        self.token = token
        self.studentID = studentID
        self.expiresAt = expiresAt
    }

    enum CodingKeys: String, CodingKey { case token, tokenType = "token_type", studentID = "student_id", expiresAt = "expires_at" }
}

extension HTTPField.Name {
    static let xForwardedFor = Self("X-Forwarded-For")!
}
