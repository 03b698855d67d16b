import BridgeBrowser
import BridgeProtocol
import BridgeTrace
import Logging

/// Everything the daemon is configured with; each part documents its own defaults.
public struct DaemonConfiguration: Sendable {
    public var transport: TransportConfiguration
    public var bridge: BridgeConfiguration
    /// Makes the router once the real port is known (a configuration's `web_base: /app/` is
    /// completed with the daemon's own origin); nil: no routing configuration.
    public var router: (@Sendable (_ origin: String) throws -> Router)?
    /// Browser sessions (Daemon+Browser.swift).
    public var browser = BrowserConfiguration()
    /// Serve `GET /metrics` (Prometheus text format); see Daemon+Metrics.swift.
    public var metricsEnabled = true

    public init(transport: TransportConfiguration = TransportConfiguration(), bridge: BridgeConfiguration = BridgeConfiguration(),
                router: (@Sendable (_ origin: String) throws -> Router)? = nil) {
        self.transport = transport
        self.bridge = bridge
        self.router = router
    }
}

/// The daemon: the protocol state machine (`Bridge`) driven by the libwebsockets transport.
///
/// Everything here runs on the transport's service thread: delegate callbacks feed the state
/// machine, and its effects (frames, closes, timers) are performed right away. Other threads
/// reach the daemon only through `remote`.
public final class Daemon: TransportDelegate {
    public let configuration: DaemonConfiguration
    let transport: Transport
    let logger: Logger
    /// What every message touches, kept behind a pointer: as stored properties of this class
    /// each use (a dozen per message) paid a dynamic exclusivity check. Only the service thread
    /// touches it, and never re-entrantly while a mutating call on it is running.
    struct HotState {
        var bridge: Bridge<RecordableRandom>
        /// Foreground timers (in deadline order) behind one transport timer; see DeadlineQueue.
        var deadlines = DeadlineQueue<TimerKey>()
        /// The effects being performed; its storage is reused from message to message.
        var effectBuffer: [BridgeEffect] = []
    }
    private let hot: UnsafeMutablePointer<HotState>
    var bridge: Bridge<RecordableRandom> {
        get { hot.pointee.bridge }
        _modify { yield &hot.pointee.bridge }
        set { hot.pointee.bridge = newValue }
    }
    var timers: [TimerKey: TimerHandle] = [:]
    var deadlineTimer: TimerHandle?
    var deadlineTimerAt: Int64 = .max
    var sweepTimer: TimerHandle?
    var startedAt: Int64 = 0
    /// Set by SIGTERM (`beginDraining`, Daemon+Health.swift).
    var draining = false
    lazy var metrics: DaemonMetrics? = configuration.metricsEnabled ? DaemonMetrics() : nil
    /// The random words the Bridge draws, kept only while recording (`Daemon+Record.swift`).
    let randomTape = RandomTape()
    /// Set by `record(to:)`: every input and effect goes into a trace.
    var recorder: TraceWriter?
    /// Called once on the service thread when the daemon accepts connections, with the real port.
    public var onStart: ((Int) -> Void)?
    /// The browser sessions' side, made with the first one (Daemon+Browser.swift).
    var browser: BrowserSide?

    public init(configuration: DaemonConfiguration, bridgeJS: [UInt8], logger: Logger) throws {
        self.configuration = configuration
        self.logger = logger
        self.transport = try Transport(configuration: configuration.transport, bridgeJS: bridgeJS, logger: logger)
        hot = .allocate(capacity: 1)
        hot.initialize(to: HotState(bridge: Bridge(configuration: configuration.bridge, random: RecordableRandom(tape: randomTape))))
        transport.delegate = self
    }

    deinit {
        hot.deinitialize(count: 1)
        hot.deallocate()
    }

    /// Serves until `remote.stop()`; the calling thread becomes the service thread.
    public func run() throws {
        defer { shutdownBrowser() }
        try transport.run()
    }

    /// For other threads (signal handlers, tests): `stop()` and `enqueue`.
    public var remote: TransportRemote { transport.remote }

    public var port: Int { transport.port }

    var now: Int64 { transport.monotonicMicroseconds }

    // MARK: TransportDelegate

    public func transportDidStart(port: Int) {
        startedAt = now
        if let makeRouter = configuration.router {
            let origin = configuration.transport.displayURL(port: port)
            do {
                bridge = Bridge(configuration: configuration.bridge, router: try makeRouter(origin), random: RecordableRandom(tape: randomTape))
            } catch {
                logger.critical("the routing configuration failed: \(error)")
                remote.stop()
                return
            }
        }
        if recorder != nil { writeTraceHeader() }
        scheduleSweep()
        onStart?(port)
    }

    public func transportDidOpen(_ id: ConnectionID, info: ConnectionInfo) {
        let t = now
        bridge.connected(ClientID(id.raw), isLoopback: info.isLoopbackPeer, origin: info.origin, at: t)
        noteOrigin(id, info)
        if recorder != nil { recordInput(.connect(client: id.raw, loopback: info.isLoopbackPeer), at: t) }
        perform()
    }

    public func transport(_ id: ConnectionID, didReceiveText message: UnsafeRawBufferPointer) {
        if browser != nil, browserIntercepts(id, message) { return }
        let t = now
        bridge.received(ClientID(id.raw), text: message, at: t)
        if recorder != nil { recordInput(.text(client: id.raw, bytes: Array(message)), at: t) }
        perform()
    }

    public func transportDidReceiveBinary(_ id: ConnectionID) {
        let t = now
        bridge.receivedBinary(ClientID(id.raw), at: t)
        if recorder != nil { recordInput(.binary(client: id.raw), at: t) }
        perform()
    }

    public func transportDidClose(_ id: ConnectionID) {
        if browser != nil { browserConnectionClosed(id) }
        let t = now
        bridge.disconnected(ClientID(id.raw), at: t)
        if recorder != nil { recordInput(.disconnect(client: id.raw), at: t) }
        perform()
    }

    public func transportHTTP(method: String, path: String, query: String) -> HTTPResponse? {
        switch path {
        case "/healthz", "/readyz":
            return healthResponse(path: path)
        case "/metrics":
            return metricsResponse()
        case "/api/sessions":
            return HTTPResponse(status: 200, contentType: "application/json", body: bridge.sessionListJSON(at: now))
        default:
            return Dashboard.response(for: path) ?? browserHTTP(path: path)
        }
    }

    // MARK: Effects

    func perform() {
        if configuration.bridge.trace {
            for line in bridge.drainTrace() { logger.debug("\(line)") }
        }
        var effects: [BridgeEffect] = []
        swap(&effects, &hot.pointee.effectBuffer)
        hot.pointee.bridge.drainEffects(into: &effects)
        defer { swap(&effects, &hot.pointee.effectBuffer) }
        if recorder != nil { recordEffects(effects) }
        for effect in effects {
            switch effect {
            case .send(let client, let bytes):
                if browser != nil {
                    if client == BrowserSide.hostClient { browserReceives(bytes); continue }
                    if browserHoldsOutgoing(client, bytes) { continue }
                }
                transport.send(ConnectionID(raw: client.raw), bytes)
            case .close(let client, let code, let reason):
                if client == BrowserSide.hostClient { continue }
                transport.close(ConnectionID(raw: client.raw), code: UInt16(clamping: code), reason: reason)
            case .host(let call):
                performHost(call)
            case .schedule(let key, let ms):
                if hot.pointee.deadlines.push(key, deadline: now + Int64(ms) * 1000) {
                    armDeadlineTimer()
                } else {
                    timers[key] = transport.schedule(afterMicroseconds: Int64(ms) * 1000) { [unowned self] in
                        self.timers[key] = nil
                        let t = self.now
                        self.bridge.timerFired(key, at: t)
                        if self.recorder != nil { self.recordInput(.timer(key), at: t) }
                        self.perform()
                    }
                }
            case .cancel(let key):
                if !hot.pointee.deadlines.cancel(key), let handle = timers.removeValue(forKey: key) { transport.cancel(handle) }
            }
        }
    }

    /// Keeps one transport timer armed for the earliest queued deadline.
    func armDeadlineTimer() {
        guard let next = hot.pointee.deadlines.nextDeadline() else { return }
        if deadlineTimer != nil {
            if deadlineTimerAt <= next { return }  // fires early enough; it re-arms then
            transport.cancel(deadlineTimer!)
        }
        deadlineTimerAt = next
        deadlineTimer = transport.schedule(afterMicroseconds: next - now) { [unowned self] in
            self.deadlineTimer = nil
            self.deadlineTimerAt = .max
            for key in self.hot.pointee.deadlines.popDue(now: self.now) {
                let t = self.now
                self.bridge.timerFired(key, at: t)
                if self.recorder != nil { self.recordInput(.timer(key), at: t) }
                self.perform()
            }
            self.armDeadlineTimer()
        }
    }

    func scheduleSweep() {
        sweepTimer = transport.schedule(afterMicroseconds: 1_000_000) { [unowned self] in
            let t = self.now
            self.bridge.sweep(at: t)
            if self.recorder != nil { self.recordInput(.sweep, at: t) }
            self.metricsTick()
            self.perform()
            self.scheduleSweep()
        }
    }
}
