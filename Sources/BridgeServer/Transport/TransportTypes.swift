import BridgeProtocol

/// Identifies one WebSocket connection for the lifetime of a `Transport`. Ids are never reused.
public struct ConnectionID: Hashable, Sendable, CustomStringConvertible {
    public let raw: UInt64
    public init(raw: UInt64) { self.raw = raw }
    public var description: String { "c\(raw)" }
}

/// What the transport knows about a connection when it opens.
public struct ConnectionInfo: Sendable {
    /// The `Origin` header of the upgrade request (nil for non-browser clients that send none).
    public var origin: String?
    /// The peer's numeric address (no reverse DNS), e.g. `127.0.0.1`.
    public var peerAddress: String
    /// True when the peer address is 127.0.0.0/8, ::1 or ::ffff:127.x.
    public var isLoopbackPeer: Bool
    /// The query string of the upgrade request (`/bridge?x=1` → `x=1`), empty when none.
    public var query: String

    public init(origin: String?, peerAddress: String, isLoopbackPeer: Bool, query: String = "") {
        self.origin = origin
        self.peerAddress = peerAddress
        self.isLoopbackPeer = isLoopbackPeer
        self.query = query
    }
}

/// A complete HTTP response produced by the delegate (or by the transport itself).
public struct HTTPResponse: Sendable {
    public var status: Int
    public var contentType: String
    public var body: [UInt8]
    /// Extra response headers, e.g. `("Cache-Control", "no-store")`.
    public var headers: [(String, String)]

    public init(status: Int, contentType: String, body: [UInt8], headers: [(String, String)] = []) {
        self.status = status
        self.contentType = contentType
        self.body = body
        self.headers = headers
    }

    public init(status: Int, contentType: String, text: String, headers: [(String, String)] = []) {
        self.init(status: status, contentType: contentType, body: Array(text.utf8), headers: headers)
    }

    /// `{"error":"…"}`-free plain-text error page used by the transport (404, 405, …).
    static func plain(_ status: Int, _ text: String, headers: [(String, String)] = []) -> HTTPResponse {
        HTTPResponse(status: status, contentType: "text/plain; charset=utf-8", text: text + "\n", headers: headers)
    }
}

/// Receives everything that happens on the transport. All calls happen on the service thread.
public protocol TransportDelegate: AnyObject {
    /// A WebSocket connection on `/bridge` completed its handshake.
    func transportDidOpen(_ id: ConnectionID, info: ConnectionInfo)
    /// One whole text message (fragments reassembled), valid UTF-8, at most `maxMessageBytes`.
    /// The buffer is valid only during the call.
    func transport(_ id: ConnectionID, didReceiveText message: UnsafeRawBufferPointer)
    /// A whole binary message arrived (its bytes are not kept); the delegate answers with an error.
    func transportDidReceiveBinary(_ id: ConnectionID)
    /// The connection is gone (closed by either side, or the transport is stopping). No further
    /// calls for this id; `send`/`close` on it are no-ops.
    func transportDidClose(_ id: ConnectionID)
    /// GET (and HEAD) requests other than `/bridge.js` and `/app/...`: `/`, `/healthz`, `/api/...`.
    /// `path` is percent-decoded; `query` is the decoded query arguments joined with `&` (empty
    /// when none). nil → 404. For HEAD the transport sends the headers only.
    func transportHTTP(method: String, path: String, query: String) -> HTTPResponse?
    /// The listener is accepting on `port`. First delegate call on the service thread.
    func transportDidStart(port: Int)
    /// A keyed timer (`schedule(_:afterMicroseconds:)`) is due.
    func transportTimerFired(_ key: TimerKey)
}

extension TransportDelegate {
    public func transportTimerFired(_ key: TimerKey) {}
}

/// A pending one-shot timer created by `Transport.schedule`. Cancelling a fired or cancelled
/// timer is a no-op.
public struct TimerHandle: Hashable, Sendable {
    let serial: UInt64
    /// When the timer is due, on `Transport.monotonicMicroseconds`' clock; it never fires
    /// before. (0 for a timer that could not be scheduled.)
    public let deadlineMicroseconds: Int64

    /// A handle of a transport's own numbering (`serial`, unique among its pending timers):
    /// for a `ServerTransport` other than `Transport`, e.g. a fake that fires timers by hand.
    public init(serial: UInt64, deadlineMicroseconds: Int64) {
        self.serial = serial
        self.deadlineMicroseconds = deadlineMicroseconds
    }
}

public enum TransportError: Error, Equatable, CustomStringConvertible {
    /// lws could not create the context or bind (port in use, bad address, …).
    case startFailed(String)
    /// `run()` was called on a transport that already ran.
    case alreadyRan

    public var description: String {
        switch self {
        case .startFailed(let why):
            return "could not start the listener: \(why)"
        case .alreadyRan:
            return "this transport has already run; create a new one"
        }
    }
}
