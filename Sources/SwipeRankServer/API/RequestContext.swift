import Hummingbird
import NIOCore

/// The per-request context: Hummingbird's core storage, plus the request id and, behind the
/// auth middleware, the authenticated student.
public struct SwipeRankRequestContext: RequestContext {
    /// Hummingbird's storage (parameters, logger, endpoint path).
    public var coreContext: CoreRequestContextStorage
    /// The request id (the client's `X-Request-ID` if well-formed, else generated).
    public var requestID = ""
    /// The student the bearer token names (`sub`), set by `StudentAuthMiddleware`.
    public var studentID: String?
    /// The client's IP address (the peer of the connection; a proxy's address behind one), used
    /// to limit guest sign-ups per client.
    public var clientAddress: String?
    /// The largest request body accepted (413 beyond).
    public var maxUploadSize: Int { 1 << 20 }

    /// Creates the context of a request.
    ///
    /// - Parameter source: The channel and logger.
    public init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        clientAddress = source.channel.remoteAddress?.ipAddress
    }
}
