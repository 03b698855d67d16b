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

    /// The Bridge's settings as the daemon runs it: `bridge`, with no tab kept for a later web view
    /// (`BridgeConfiguration.keepsTabs`) when DevTools clients may watch the tabs (`--devtools`).
    public var bridgeSettings: BridgeConfiguration {
        var settings = bridge
        if browser.options.devtools { settings.keepsTabs = false }
        return settings
    }

    public init(transport: TransportConfiguration = TransportConfiguration(), bridge: BridgeConfiguration = BridgeConfiguration(),
                router: (@Sendable (_ origin: String) throws -> Router)? = nil) {
        self.transport = transport
        self.bridge = bridge
        self.router = router
    }

    /// Checks every setting, the transport's and the protocol's; throws a `ConfigurationError`
    /// naming the first bad one.
    public func validate() throws(ConfigurationError) {
        func check(_ ok: Bool, _ setting: ConfigurationError.Setting, _ problem: @autoclosure () -> String) throws(ConfigurationError) {
            if !ok { throw ConfigurationError(setting, problem()) }
        }
        try transport.validate()
        let timeout = bridge.engine.foregroundTimeoutMs
        try check((1...600_000).contains(timeout), .foregroundTimeout, "must be between 1 ms and 600000 ms (got \(timeout) ms)")
        try check((1...31_536_000).contains(bridge.sessionIdleSeconds), .sessionIdle,
                  "must be between 1 s and 31536000 s (got \(bridge.sessionIdleSeconds) s)")
        try check((1...10_000_000).contains(bridge.maxSessions), .maxSessions,
                  "must be between 1 and 10000000 (got \(bridge.maxSessions))")
        try check((1...1_000_000).contains(bridge.engine.maxStackDepth), .maxStackDepth,
                  "must be between 1 and 1000000 (got \(bridge.engine.maxStackDepth))")
    }
}

/// The daemon: the protocol state machine (`Bridge`) driven by a transport.
///
/// Everything here runs on the transport's service thread: delegate callbacks feed the state
/// machine (`TransportDelegate` below), and its effects (frames, closes, timers) are performed
/// right away (`perform`). Other threads reach the daemon only through `remote`.
///
/// Where things go: a new HTTP page is a case in `Daemon+HTTP.swift`; periodic work is a timer
/// started in `transportDidStart` (see `scheduleSweep`); a new kind of effect is a case in
/// `perform`.
public final class Daemon: TransportDelegate {
    public let configuration: DaemonConfiguration
    let transport: any ServerTransport
    let logger: Logger
    /// The protocol state machine. Each message reaches it a dozen times: the property opts out
    /// of dynamic exclusivity checks (only the service thread touches it, never re-entrantly).
    @exclusivity(unchecked) var bridge: Bridge<RecordableRandom>
    /// The effects being performed; its storage is reused from message to message.
    @exclusivity(unchecked) var effectBuffer: [BridgeEffect] = []
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
    /// The browser sessions the daemon opened itself (`openBrowserSession`) whose root tab has
    /// not failed.
    var ownSessions: Set<String> = []
    /// Called on the service thread when a browser session the daemon opened itself could not
    /// get its root tab (no Chromium, a page the browser refuses): the session and why.
    public var onOpenFailure: ((String, String) -> Void)?

    /// The daemon on libwebsockets. Validates the configuration (throws `ConfigurationError`).
    public convenience init(configuration: DaemonConfiguration, bridgeJS: [UInt8], logger: Logger) throws {
        try configuration.validate()
        let transport = try Transport(configuration: configuration.transport, bridgeJS: bridgeJS, logger: logger)
        self.init(configuration: configuration, transport: transport, logger: logger)
    }

    /// The daemon on any transport (tests drive it over a fake one).
    public init(configuration: DaemonConfiguration, transport: any ServerTransport, logger: Logger) {
        self.configuration = configuration
        self.logger = logger
        self.transport = transport
        bridge = Bridge(configuration: configuration.bridgeSettings, random: RecordableRandom(tape: randomTape))
        transport.delegate = self
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

    // MARK: TransportDelegate (input)

    public func transportDidStart(port: Int) {
        startedAt = now
        if let makeRouter = configuration.router {
            let origin = configuration.transport.displayURL(port: port)
            do {
                bridge = Bridge(configuration: configuration.bridgeSettings, router: try makeRouter(origin), random: RecordableRandom(tape: randomTape))
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
        let input = BridgeInput.connected(ClientID(id.raw), isLoopback: info.isLoopbackPeer, origin: info.origin)
        bridge.apply(input, at: t)
        noteOrigin(id, info)
        if recorder != nil { recordInput(input, at: t) }
        perform()
    }

    public func transport(_ id: ConnectionID, didReceiveText message: UnsafeRawBufferPointer) {
        let t = now
        // `.frame(client, text:)`, without copying the message.
        bridge.apply(frame: ClientID(id.raw), text: message, at: t)
        if recorder != nil { recordInput(.frame(ClientID(id.raw), text: Array(message)), at: t) }
        perform()
    }

    public func transportDidReceiveBinary(_ id: ConnectionID) {
        feed(.binaryFrame(ClientID(id.raw)))
    }

    public func transportDidClose(_ id: ConnectionID) {
        feed(.left(ClientID(id.raw)))
    }

    public func transportTimerFired(_ key: TimerKey) {
        feed(.timerFired(key))
    }

    /// Feeds one input to the Bridge (recorded when recording) and performs its effects.
    func feed(_ input: BridgeInput) {
        let t = now
        bridge.apply(input, at: t)
        if recorder != nil { recordInput(input, at: t) }
        perform()
    }

    // MARK: Effects (output)

    func perform() {
        if configuration.bridge.trace {
            for line in bridge.drainTrace() { logger.debug("\(line)") }
        }
        var effects: [BridgeEffect] = []
        swap(&effects, &effectBuffer)
        bridge.drainEffects(into: &effects)
        defer {
            // Emptied now, not at the next drain: the Bridge reuses a frame's array once nothing
            // else holds it (`Bridge.frameArray`), and the next frame is written before that drain.
            while !effects.isEmpty { effects.removeLast() }
            swap(&effects, &effectBuffer)
        }
        if recorder != nil { recordEffects(effects) }
        for effect in effects {
            switch effect {
            case .send(let client, let bytes):
                transport.send(ConnectionID(raw: client.raw), bytes)
            case .close(let client, let code, let reason):
                transport.close(ConnectionID(raw: client.raw), code: UInt16(clamping: code), reason: reason)
            case .host(let work):
                performHost(work)
            case .schedule(let key, let ms):
                transport.schedule(key, afterMicroseconds: Int64(ms) * 1000)
            case .cancel(let key):
                transport.cancel(key)
            }
        }
    }

    // MARK: Housekeeping

    /// Once a second: idle sessions expire (`Bridge.sweep`).
    func scheduleSweep() {
        _ = transport.schedule(afterMicroseconds: 1_000_000) { [unowned self] in
            let t = self.now
            self.bridge.apply(.sweep, at: t)
            if self.recorder != nil { self.recordInput(.sweep, at: t) }
            self.metricsTick()
            self.perform()
            self.scheduleSweep()
        }
    }
}
