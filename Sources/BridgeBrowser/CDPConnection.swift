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
        }
    }
}

/// One DevTools event: its method, its params and, for a page's events, the attached session.
struct CDPEvent: Sendable {
    var method: String
    var params: JSONValue
    var sessionId: String?
}

/// The DevTools protocol over Chromium's pipe: NUL-framed JSON both ways.
///
/// One reader thread parses what Chromium writes: replies resume their caller (matched by
/// `id`), events go to `events` in arrival order with their `sessionId`. Every call has a
/// timeout. Writes happen on the caller's thread under a lock; the caller is never the
/// WebSocket service thread.
final class CDPConnection: @unchecked Sendable {
    private let writeFD: Int32
    private let readFD: Int32
    private let lock = NSLock()
    private var nextId: Int64 = 1
    private var pending: [Int64: CheckedContinuation<JSONValue, any Error>] = [:]
    private var closed = false
    private let writeLock = NSLock()
    let events: AsyncStream<CDPEvent>
    private let eventSink: AsyncStream<CDPEvent>.Continuation
    /// Called once on the reader thread when Chromium closes its end (exit or crash).
    private let onClose: @Sendable () -> Void

    init(writeFD: Int32, readFD: Int32, onClose: @escaping @Sendable () -> Void) {
        self.writeFD = writeFD
        self.readFD = readFD
        self.onClose = onClose
        (events, eventSink) = AsyncStream.makeStream(of: CDPEvent.self)
        let thread = Thread { [self] in readLoop() }
        thread.name = "bridged-cdp-reader"
        thread.start()
    }

    /// Sends `method` and waits for its reply's `result`; throws `BrowserError.browser` with the
    /// browser's message on an error reply, `.timeout` after `timeout` seconds.
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
        var bytes = JSONValue.object(message).serialized()
        bytes.append(0)
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
            if !writeAll(bytes) { fail(id, with: .disconnected) }
        }
    }

    private func fail(_ id: Int64, with error: BrowserError) {
        let continuation = lock.withLock { pending.removeValue(forKey: id) }
        continuation?.resume(throwing: error)
    }

    private func writeAll(_ bytes: [UInt8]) -> Bool {
        writeLock.lock(); defer { writeLock.unlock() }
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeBytes { write(writeFD, $0.baseAddress! + offset, $0.count - offset) }
            if n < 0 {
                if errno == EINTR { continue }
                return false
            }
            offset += n
        }
        return true
    }

    var isClosed: Bool { lock.withLock { closed } }

    private func readLoop() {
        var buffer: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let n = chunk.withUnsafeMutableBytes { read(readFD, $0.baseAddress!, $0.count) }
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { break }
            var start = buffer.count
            buffer.append(contentsOf: chunk[0..<n])
            var consumed = 0
            // Every NUL ends one message.
            while let nul = buffer[start...].firstIndex(of: 0) {
                dispatch(buffer[consumed..<nul])
                consumed = nul + 1
                start = consumed
            }
            if consumed > 0 { buffer.removeFirst(consumed) }
        }
        close(readFD)
        let waiting: [CheckedContinuation<JSONValue, any Error>] = lock.withLock {
            closed = true
            let all = Array(pending.values)
            pending.removeAll()
            return all
        }
        // The write end stays open until now so that no descriptor number is reused meanwhile.
        writeLock.withLock { _ = close(writeFD) }
        waiting.forEach { $0.resume(throwing: BrowserError.disconnected) }
        eventSink.finish()
        onClose()
    }

    private func dispatch(_ bytes: ArraySlice<UInt8>) {
        guard let value = try? JSONParser.parse(Array(bytes), maxDepth: 200), case .object(let object) = value else { return }
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
