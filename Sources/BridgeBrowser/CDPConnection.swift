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
    /// The web view (`session webview`) was closed while its tab was being opened: it has none;
    /// or the session (`session`) was closed while its browser context was being made.
    case closedWhileOpening(String)
    /// A paused request the call named is not paused any more (`Fetch.continueRequest` and the
    /// like: a newer navigation of its frame cancelled it). Chromium says "Invalid InterceptionId".
    case requestGone(String)

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
        case .requestGone(let message): return message
        }
    }
}

/// One DevTools event, decoded (DevTools.swift), and, for a page's events, the attached session.
struct CDPEvent: Sendable {
    var event: DevToolsEvent
    var sessionId: CDPSessionID?
}

/// The seam between the browser host and Chromium: whole DevTools messages both ways, the way
/// puppeteer's `ConnectionTransport` is. `CDPPipe` is Chromium's `--remote-debugging-pipe`;
/// tests put a fake in its place that plays Chromium's side by script (BridgeTesting's `FakeChromium`,
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
    /// Calls sent and not answered: each takes its reply (or its failure) once.
    private var pending: [Int64: Pending] = [:]

    private struct Pending {
        /// The DevTools session it was sent on (nil: the browser's own).
        var session: CDPSessionID?
        var method: String
        var answer: @Sendable (Result<JSONValue, any Error>) -> Void
    }
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
    func call(_ call: DevToolsCall, session: CDPSessionID? = nil, timeout: Double = 10) async throws -> JSONValue {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<JSONValue, any Error>) in
            send(call, session: session, timeout: timeout) { continuation.resume(with: $0) }
        }
    }

    /// Sends `method` now, before this returns, and gives its reply to wait for later (as
    /// `call` would): a call sent before another on the same session is handled by Chromium
    /// before it, whichever of the two is waited for first.
    func start(_ call: DevToolsCall, session: CDPSessionID? = nil, timeout: Double = 10) -> CDPPendingReply {
        let reply = CDPPendingReply()
        send(call, session: session, timeout: timeout) { reply.fulfill($0) }
        return reply
    }

    /// Sends `call` now; `answer` gets its reply (or its failure) once, on whatever thread it
    /// comes: for a call nobody waits for, whose failure is only reported.
    func send(_ call: DevToolsCall, session: CDPSessionID? = nil, timeout: Double,
              then answer: @escaping @Sendable (Result<JSONValue, any Error>) -> Void) {
        let method = call.method.rawValue, params = call.params
        var message = JSONObject()
        let id: Int64 = lock.withLock {
            defer { nextId += 1 }
            return nextId
        }
        message["id"] = .int(id)
        message["method"] = .string(method)
        message["params"] = .object(params)
        if let session { message["sessionId"] = .string(session.rawValue) }
        let bytes = JSONValue.object(message).serialized()
        let accepted: Bool = lock.withLock {
            if closed { return false }
            pending[id] = Pending(session: session, method: method, answer: answer)
            return true
        }
        guard accepted else {
            answer(.failure(BrowserError.disconnected))
            return
        }
        DispatchQueue.global().asyncAfter(deadline: .now() + timeout) { [weak self] in
            self?.fail(id, with: .timeout(method))
        }
        if !transport.send(bytes) { fail(id, with: .disconnected) }
    }

    private func fail(_ id: Int64, with error: BrowserError) {
        let entry = lock.withLock { pending.removeValue(forKey: id) }
        entry?.answer(.failure(error))
    }

    /// The calls sent on `session`, a DevTools session Chromium detached (its tab closed, its
    /// browser context disposed): Chromium answers none of them, so they fail now, as the tab's
    /// absence (`unknownTarget`), instead of waiting for their timeout. (A click whose page closed
    /// its own session, `App.exitApp`, waited 15 s for the check that follows the release.)
    private func failCalls(on session: CDPSessionID) {
        let gone: [Pending] = lock.withLock {
            let ids = pending.compactMap { $0.value.session == session ? $0.key : nil }
            return ids.compactMap { pending.removeValue(forKey: $0) }
        }
        for call in gone {
            call.answer(.failure(BrowserError.unknownTarget("its tab closed before it answered \(call.method)")))
        }
    }

    var isClosed: Bool { lock.withLock { closed } }

    private func transportClosed() {
        let waiting: [@Sendable (Result<JSONValue, any Error>) -> Void] = lock.withLock {
            closed = true
            let all = pending.values.map(\.answer)
            pending.removeAll()
            return all
        }
        waiting.forEach { $0(.failure(BrowserError.disconnected)) }
        eventSink.finish()
        onClose()
    }

    private func dispatch(_ bytes: [UInt8]) {
        guard let value = try? JSONParser.parse(bytes, maxDepth: 200), case .object(let object) = value else { return }
        if let id = object["id"]?.intValue {
            guard let answer = lock.withLock({ pending.removeValue(forKey: id)?.answer }) else { return }
            if let error = object["error"] {
                let message = error["message"]?.stringValue ?? "\(error)"
                answer(.failure(message.contains("Invalid InterceptionId") ? BrowserError.requestGone(message) : BrowserError.browser(message)))
            } else {
                answer(.success(object["result"] ?? .object([:])))
            }
        } else if let method = object["method"]?.stringValue {
            if method == DevToolsEvent.detachedFromTargetMethod,
               let gone = object["params"]?["sessionId"]?.stringValue.map(CDPSessionID.init(_:)) {
                failCalls(on: gone)
            }
            eventSink.yield(CDPEvent(event: DevToolsEvent(method: method, params: object["params"] ?? .object([:])),
                                     sessionId: object["sessionId"]?.stringValue.map(CDPSessionID.init(_:))))
        }
    }
}

/// The reply to a call sent with `CDPConnection.start`: waited for by any number of tasks, at any
/// time (before or after it came).
final class CDPPendingReply: @unchecked Sendable {
    private let lock = NSLock()
    private var result: Result<JSONValue, any Error>?
    private var waiting: [CheckedContinuation<JSONValue, any Error>] = []

    func fulfill(_ result: Result<JSONValue, any Error>) {
        let waiters: [CheckedContinuation<JSONValue, any Error>] = lock.withLock {
            guard self.result == nil else { return [] }
            self.result = result
            defer { waiting.removeAll() }
            return waiting
        }
        waiters.forEach { $0.resume(with: result) }
    }

    /// The reply's `result`; throws as `CDPConnection.call` does.
    var value: JSONValue {
        get async throws {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<JSONValue, any Error>) in
                let done: Result<JSONValue, any Error>? = lock.withLock {
                    if let result { return result }
                    waiting.append(continuation)
                    return nil
                }
                if let done { continuation.resume(with: done) }
            }
        }
    }

    /// Whether it came as an error (or the call failed: timeout, browser gone); false while it
    /// has not come.
    var failed: Bool {
        lock.withLock { if case .failure = result { return true } else { return false } }
    }
}
