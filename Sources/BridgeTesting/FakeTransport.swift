import BridgeProtocol
import BridgeServer

/// A transport that records what the daemon asks of it and lets a test drive time by hand (the
/// NIOEmbedded idea): no sockets, no threads, no lws. Connections are opened, fed and closed by
/// the test through the delegate calls a real transport would make. Used on the test's thread,
/// which plays the service thread: `Daemon(configuration:transport:logger:)` with it, then
/// `open`, `receive`, `advance`, and `sent(to:)` / `takeEvents()` for what the daemon did.
public final class FakeTransport: ServerTransport {
    public enum Event: Equatable, Sendable {
        case send(ConnectionID, String)
        case close(ConnectionID, code: UInt16, reason: String)
    }

    /// Strong (unlike the real transport's): a test may keep only the fake.
    public var delegate: TransportDelegate?
    public var port = 0
    public var stopping = false
    public var monotonicMicroseconds: Int64 = 1_000_000
    public let remote = TransportRemote()
    public var counters = TransportCounters()
    /// Connections opened and not closed.
    public var connectionCount: Int { opened.count }
    private var opened: Set<ConnectionID> = []
    /// Sends and closes, in order.
    public var events: [Event] = []
    /// Pending keyed timers and their deadlines.
    public var keyed: [TimerKey: Int64] = [:]
    /// Pending one-shot timers (`schedule(afterMicroseconds:_:)`), in the order they were made.
    public var closures: [(serial: UInt64, deadline: Int64, body: () -> Void)] = []
    private var serial: UInt64 = 1
    private var nextConnection: UInt64 = 1
    /// One element per `remote.enqueue` from another thread.
    private let submitted = Inbox<Int>()

    public init() {
        let submitted = self.submitted
        remote.onSubmit { submitted.append(1) }
    }

    public func run() throws {
        port = 4242
        delegate?.transportDidStart(port: port)
    }

    public func send(_ id: ConnectionID, _ message: [UInt8]) {
        events.append(.send(id, String(decoding: message, as: UTF8.self)))
    }

    public func close(_ id: ConnectionID, code: UInt16, reason: String) {
        events.append(.close(id, code: code, reason: reason))
    }

    public func schedule(_ key: TimerKey, afterMicroseconds: Int64) {
        keyed[key] = monotonicMicroseconds + max(0, afterMicroseconds)
    }

    public func cancel(_ key: TimerKey) { keyed[key] = nil }

    public func schedule(afterMicroseconds: Int64, _ body: @escaping () -> Void) -> TimerHandle {
        serial += 1
        let deadline = monotonicMicroseconds + max(0, afterMicroseconds)
        closures.append((serial, deadline, body))
        return TimerHandle(serial: serial, deadlineMicroseconds: deadline)
    }

    public func cancel(_ timer: TimerHandle) {
        closures.removeAll { TimerHandle(serial: $0.serial, deadlineMicroseconds: $0.deadline) == timer }
    }

    // MARK: driving it

    /// Opens a connection as a real transport would after a handshake.
    public func open(origin: String? = nil, loopback: Bool = true) -> ConnectionID {
        let id = ConnectionID(raw: nextConnection)
        nextConnection += 1
        opened.insert(id)
        delegate?.transportDidOpen(id, info: ConnectionInfo(origin: origin, peerAddress: loopback ? "127.0.0.1" : "192.0.2.7",
                                                            isLoopbackPeer: loopback))
        return id
    }

    public func receive(_ id: ConnectionID, _ text: String) {
        let bytes = Array(text.utf8)
        bytes.withUnsafeBytes { delegate?.transport(id, didReceiveText: $0) }
    }

    public func peerClosed(_ id: ConnectionID) {
        opened.remove(id)
        delegate?.transportDidClose(id)
    }

    /// Moves the clock forward, firing every timer that comes due, in deadline order.
    public func advance(microseconds: Int64) {
        let end = monotonicMicroseconds + microseconds
        while true {
            let nextKeyed = keyed.min { $0.value < $1.value }
            let nextClosure = closures.min { $0.deadline < $1.deadline }
            let k = nextKeyed.map { $0.value } ?? .max
            let c = nextClosure.map { $0.deadline } ?? .max
            let due = min(k, c)
            guard due <= end else { break }
            monotonicMicroseconds = max(monotonicMicroseconds, due)
            if k <= c, let (key, _) = nextKeyed {
                keyed[key] = nil
                delegate?.transportTimerFired(key)
            } else if let entry = nextClosure {
                closures.removeAll { $0.serial == entry.serial }
                entry.body()
            }
        }
        monotonicMicroseconds = end
    }

    /// The messages sent to `id`, oldest first; clears them from `events` when `take`.
    public func sent(to id: ConnectionID) -> [String] {
        events.compactMap { if case .send(id, let text) = $0 { text } else { nil } }
    }

    /// Runs what other threads queued for the service thread (the browser host's results),
    /// here, as the service thread would, until `done` holds; waits for each next piece of work
    /// (up to `timeout` seconds for one).
    public func serviceRemote(timeout: Double = 30, until done: () -> Bool) async throws {
        while true {
            for body in remote.takeQueuedWork() { body() }
            if done() { return }
            _ = try await submitted.next(timeout: timeout) { _ in true }
        }
    }

    public func takeEvents() -> [Event] {
        defer { events = [] }
        return events
    }
}
