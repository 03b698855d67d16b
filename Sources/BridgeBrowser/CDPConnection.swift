import BridgeProtocol
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// What went wrong on the browser side; `description` is the message controllers see.
public enum BrowserError: Error, Sendable, CustomStringConvertible, Equatable {
    /// No Chromium executable at that name or path.
    case notInstalled(String)
    case launchFailed(String)
    /// A DevTools call got no answer in time.
    case timeout(String)
    /// The browser answered with an error (its own message).
    case browser(String)
    /// The browser went away (crashed, killed, or shut down).
    case disconnected
    /// No such session or tab on the browser side.
    case unknownTarget(String)
    /// A tab's page could not be loaded: the url and the browser's reason
    /// (`net::ERR_CONNECTION_REFUSED`).
    case loadFailed(url: String, reason: String)
    /// The web view (`session webview`) was closed while its tab was being opened: it has none.
    case closedWhileOpening(String)

    public var description: String {
        switch self {
        case .notInstalled(let name):
            return "Chromium is not installed ('\(name)' not found): install the Debian package 'chromium' (apt-get install chromium) or pass --chromium PATH"
        case .launchFailed(let message): return "Chromium could not be started: \(message)"
        case .timeout(let method): return "the browser did not answer \(method) in time"
        case .browser(let message): return message
        case .disconnected: return "the browser is gone (it crashed or was stopped)"
        case .unknownTarget(let what): return "no such tab or session in the browser: \(what)"
        case .loadFailed(let url, let reason): return "\(url): \(reason)"
        case .closedWhileOpening(let what): return "\(what) was closed while its tab was being opened"
        }
    }
}

/// One DevTools event: its method, its params and, for a page's events, the attached session.
struct CDPEvent: Sendable {
    var method: String
    var params: JSONValue
    var sessionId: String?
}

/// The seam between the browser host and Chromium: whole DevTools messages both ways, the way
/// puppeteer's `ConnectionTransport` is. `CDPPipe` is Chromium's `--remote-debugging-pipe`;
/// tests put a fake in its place that plays Chromium's side by script (`Tests/BridgeBrowserFakes`,
/// docs/ARCHITECTURE.md "Testing the browser layer without Chromium").
///
/// The transport knows no ids and no methods: `CDPConnection` above it matches replies to
/// calls, applies timeouts and turns the rest into events.
public protocol CDPTransport: AnyObject, Sendable {
    /// Starts delivery, once, before the first `send`: `receive` gets each message the browser
    /// writes (one JSON object's text, no framing), in the order written, one at a time;
    /// `closed` is called once when the browser's side is gone (it exited, crashed or closed
    /// its end), after the last `receive`. From then on `send` returns false.
    func start(receive: @escaping @Sendable ([UInt8]) -> Void, closed: @escaping @Sendable () -> Void)
    /// Sends one message (a JSON object's text, no framing). False when the browser's side is
    /// gone and the message was not sent.
    func send(_ message: consuming [UInt8]) -> Bool
}

/// The DevTools protocol over a `CDPTransport`.
///
/// Replies resume their caller (matched by `id`), events go to `events` in arrival order with
/// their `sessionId`. Every call has a timeout. Sends happen on the caller's thread; the caller
/// is never the WebSocket service thread.
final class CDPConnection: @unchecked Sendable {
    private let transport: any CDPTransport
    private let lock = NSLock()
    private var nextId: Int64 = 1
    private var pending: [Int64: CheckedContinuation<JSONValue, any Error>] = [:]
    private var closed = false
    let events: AsyncStream<CDPEvent>
    private let eventSink: AsyncStream<CDPEvent>.Continuation
    /// Called once when the transport closes (Chromium exited or crashed).
    private let onClose: @Sendable () -> Void

    init(transport: any CDPTransport, onClose: @escaping @Sendable () -> Void) {
        self.transport = transport
        self.onClose = onClose
        (events, eventSink) = AsyncStream.makeStream(of: CDPEvent.self)
        transport.start(receive: { [self] in dispatch($0) }, closed: { [self] in transportClosed() })
    }

    /// Sends `method` and waits for its reply's `result`; throws `BrowserError.browser` with the
    /// browser's message on an error reply, `.timeout` after `timeout` seconds,
    /// `.disconnected` when the browser is gone.
    func call(_ method: String, _ params: JSONObject = [:], session: String? = nil, timeout: Double = 10) async throws -> JSONValue {
        var message = JSONObject()
        let id: Int64 = lock.withLock {
            defer { nextId += 1 }
            return nextId
        }
        message["id"] = .int(id)
        message["method"] = .string(method)
        message["params"] = .object(params)
        if let session { message["sessionId"] = .string(session) }
        let bytes = JSONValue.object(message).serialized()
        return try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<JSONValue, any Error>) in
            let accepted: Bool = lock.withLock {
                if closed { return false }
                pending[id] = continuation
                return true
            }
            guard accepted else {
                continuation.resume(throwing: BrowserError.disconnected)
                return
            }
            DispatchQueue.global().asyncAfter(deadline: .now() + timeout) { [weak self] in
                self?.fail(id, with: .timeout(method))
            }
            if !transport.send(bytes) { fail(id, with: .disconnected) }
        }
    }

    private func fail(_ id: Int64, with error: BrowserError) {
        let continuation = lock.withLock { pending.removeValue(forKey: id) }
        continuation?.resume(throwing: error)
    }

    var isClosed: Bool { lock.withLock { closed } }

    private func transportClosed() {
        let waiting: [CheckedContinuation<JSONValue, any Error>] = lock.withLock {
            closed = true
            let all = Array(pending.values)
            pending.removeAll()
            return all
        }
        waiting.forEach { $0.resume(throwing: BrowserError.disconnected) }
        eventSink.finish()
        onClose()
    }

    private func dispatch(_ bytes: [UInt8]) {
        guard let value = try? JSONParser.parse(bytes, maxDepth: 200), case .object(let object) = value else { return }
        if let id = object["id"]?.intValue {
            guard let continuation = lock.withLock({ pending.removeValue(forKey: id) }) else { return }
            if let error = object["error"] {
                continuation.resume(throwing: BrowserError.browser(error["message"]?.stringValue ?? "\(error)"))
            } else {
                continuation.resume(returning: object["result"] ?? .object([:]))
            }
        } else if let method = object["method"]?.stringValue {
            eventSink.yield(CDPEvent(method: method, params: object["params"] ?? .object([:]), sessionId: object["sessionId"]?.stringValue))
        }
    }
}
