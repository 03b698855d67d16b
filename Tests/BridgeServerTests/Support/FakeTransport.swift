@testable import BridgeServer
import BridgeBrowserFakes
import BridgeProtocol

/// A transport that records what the daemon asks of it and lets a test drive time by hand (the
/// NIOEmbedded idea): no sockets, no threads, no lws. Connections are opened, fed and closed by
/// the test through the delegate calls a real transport would make.
final class FakeTransport: ServerTransport {
    enum Event: Equatable {
        case send(ConnectionID, String)
        case close(ConnectionID, code: UInt16, reason: String)
    }

    /// Strong (unlike the real transport's): a test may keep only the fake.
    var delegate: TransportDelegate?
    var port = 0
    var stopping = false
    var monotonicMicroseconds: Int64 = 1_000_000
    let remote = TransportRemote()
    var counters = TransportCounters()
    /// Connections opened and not closed.
    var connectionCount: Int { opened.count }
    private var opened: Set<ConnectionID> = []
    /// Sends and closes, in order.
    var events: [Event] = []
    /// Pending keyed timers and their deadlines.
    var keyed: [TimerKey: Int64] = [:]
    var closures: [(serial: UInt64, deadline: Int64, body: () -> Void)] = []
    private var serial: UInt64 = 1
    private var nextConnection: UInt64 = 1
    /// One element per `remote.enqueue` from another thread.
    private let submitted = Inbox<Int>()

    init() {
        let submitted = self.submitted
        remote.state.withLock { $0.onSubmit = { submitted.append(1) } }
    }

    func run() throws {
        port = 4242
        delegate?.transportDidStart(port: port)
    }

    func send(_ id: ConnectionID, _ message: [UInt8]) {
        events.append(.send(id, String(decoding: message, as: UTF8.self)))
    }

    func close(_ id: ConnectionID, code: UInt16, reason: String) {
        events.append(.close(id, code: code, reason: reason))
    }

    func schedule(_ key: TimerKey, afterMicroseconds: Int64) {
        keyed[key] = monotonicMicroseconds + max(0, afterMicroseconds)
    }

    func cancel(_ key: TimerKey) { keyed[key] = nil }

    func schedule(afterMicroseconds: Int64, _ body: @escaping () -> Void) -> TimerHandle {
        serial += 1
        let deadline = monotonicMicroseconds + max(0, afterMicroseconds)
        closures.append((serial, deadline, body))
        return TimerHandle(serial: serial, deadlineMicroseconds: deadline)
    }

    func cancel(_ timer: TimerHandle) { closures.removeAll { $0.serial == timer.serial } }

    // MARK: driving it

    /// Opens a connection as a real transport would after a handshake.
    func open(origin: String? = nil, loopback: Bool = true) -> ConnectionID {
        let id = ConnectionID(raw: nextConnection)
        nextConnection += 1
        opened.insert(id)
        delegate?.transportDidOpen(id, info: ConnectionInfo(origin: origin, peerAddress: loopback ? "127.0.0.1" : "192.0.2.7",
                                                            isLoopbackPeer: loopback))
        return id
    }

    func receive(_ id: ConnectionID, _ text: String) {
        let bytes = Array(text.utf8)
        bytes.withUnsafeBytes { delegate?.transport(id, didReceiveText: $0) }
    }

    func peerClosed(_ id: ConnectionID) {
        opened.remove(id)
        delegate?.transportDidClose(id)
    }

    /// Moves the clock forward, firing every timer that comes due, in deadline order.
    func advance(microseconds: Int64) {
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
    func sent(to id: ConnectionID) -> [String] {
        events.compactMap { if case .send(id, let text) = $0 { text } else { nil } }
    }

    /// Runs what other threads queued for the service thread (the browser host's results),
    /// here, as the service thread would, until `done` holds; waits for each next piece of work
    /// (up to `timeout` seconds for one).
    func serviceRemote(timeout: Double = 30, until done: () -> Bool) async throws {
        while true {
            for work in remote.takeWork().work {
                if case .plain(let body) = work { body() }
            }
            if done() { return }
            _ = try await submitted.next(timeout: timeout) { _ in true }
        }
    }

    func takeEvents() -> [Event] {
        defer { events = [] }
        return events
    }
}
