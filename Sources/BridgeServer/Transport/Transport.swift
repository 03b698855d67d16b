#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import BridgeProtocol
import CWebsockets
import CWireCheck
import Logging

/// The libwebsockets transport: one port serving the WebSocket endpoint `/bridge`, `/healthz`
/// and other delegate pages, `/bridge.js` and `/app/...` static files.
///
/// Threading: `run()` turns the calling thread into the service thread; every other member is
/// for that thread only (delegate callbacks, `send`, `close`, `schedule`, `cancel`, `port`).
/// Other threads use `remote` (a Sendable handle) to enqueue work or to stop.
///
/// permessage-deflate is deliberately NOT offered: with context takeover zlib keeps hundreds of
/// KiB of state per connection, and the daemon must hold 10,000 mostly idle pages cheaply; the
/// messages are small JSON objects that gain little from compression on loopback. (Clients that
/// offer the extension simply get an uncompressed connection.)
public final class Transport {
    public let configuration: TransportConfiguration
    /// Unowned, not weak: the delegate (the daemon) owns the transport and outlives its `run()`,
    /// the only time it is called. (A weak reference gives the daemon a side table, and every
    /// message paid for it: loading the reference and releasing the object after the call,
    /// ≈ 80 instructions; docs/PERFORMANCE.md.) Without dynamic exclusivity checks, like the
    /// connections' state: it is read for every message, on the service thread only.
    @exclusivity(unchecked) public unowned var delegate: TransportDelegate?
    /// The real listening port once started (0 before).
    public private(set) var port: Int = 0
    /// The thread-safe handle for other threads.
    public let remote = TransportRemote()

    let logger: Logger
    let bridgeJS: [UInt8]
    let originPolicy: OriginPolicy
    let hostPolicy: HostHeaderPolicy
    var httpAuth: HTTPAuth
    /// Requests with a body, answered once it is drained (LWS_CALLBACK_HTTP_BODY_COMPLETION).
    var httpAwaitingBody: [OpaquePointer: () -> Int32] = [:]
    /// Accepted sockets whose descriptor is at or above this are closed at once (see `admit`).
    var descriptorCap = Int.max
    var refusedSinceLog = 0
    var lastCapLog: Int64 = 0
    let staticFiles: StaticFiles?
    let bindPlan: BindPlan

    /// Largest payload handed to one lws_write (a WebSocket fragment or an HTTP body chunk).
    static let chunkSize = 16384
    /// lws's per-connection receive buffer (RECEIVE delivers at most this much per call).
    static let receiveBufferSize = 4096
    let pre = Int(bridged_lws_pre())

    // Service-thread state.
    var context: OpaquePointer?
    /// The libuv loop lws runs on (`EventLoop.epoll`), nil with `.poll`.
    var uvLoop: UnsafeMutableRawPointer?
    /// The timer behind every transport timer on that loop (instead of `timerNode`).
    var uvTimer: UnsafeMutablePointer<bridged_uv_timer_t>?
    private let foreignLoopSlot = UnsafeMutablePointer<UnsafeMutableRawPointer?>.allocate(capacity: 1)
    @exclusivity(unchecked) var connections: [UInt64: Connection] = [:]
    var nextConnectionID: UInt64 = 1
    /// Connections given messages during the current callback (see `flushPendingWrites`).
    @exclusivity(unchecked) var pendingFlush: [Connection] = []
    /// See `sendTarget`.
    @exclusivity(unchecked) var lastSendTarget: Connection?
    var httpResponses: [OpaquePointer: PendingHTTP] = [:]
    var timerHeap = TimerHeap()
    var timerBodies: [UInt64: (deadline: Int64, body: () -> Void)] = [:]
    /// The one lws sul behind every timer, armed for the earliest deadline.
    let timerNode: UnsafeMutablePointer<bridged_timer_t>
    var armedDeadline: Int64?
    /// True while `timersDue` runs (see `arm`).
    var firingTimers = false
    /// An lws timeout was set since the last timer round ended (see `timersDue`).
    var lwsTimeoutsSet = false
    var nextTimerSerial: UInt64 = 1
    // Keyed timers (see Transport+Timers.swift): in-order deadlines in a FIFO behind one heap
    // timer, the others with a heap timer each.
    @exclusivity(unchecked) var keyedQueue = DeadlineQueue<TimerKey>()
    var keyedOutOfOrder: [TimerKey: TimerHandle] = [:]
    var keyedQueueTimer: TimerHandle?
    var keyedQueueTimerAt: Int64 = .max
    public internal(set) var stopping = false
    var destroying = false
    var ran = false
    var shutdownDeadline: Int64 = .max
    /// LWS_PRE headroom + one chunk, reused for every write.
    let scratch: UnsafeMutableRawPointer

    // C storage lws points into for the whole life of the context.
    private var cStrings: [UnsafeMutablePointer<CChar>] = []
    private let protocols: UnsafeMutablePointer<lws_protocols>
    private let pvoDefault: UnsafeMutablePointer<lws_protocol_vhost_options>
    private let pvo: UnsafeMutablePointer<lws_protocol_vhost_options>
    private let retryPolicy: UnsafeMutablePointer<lws_retry_bo_t>

    static let protocolName = "bridge"

    /// Validates the configuration (throws `ConfigurationError`, e.g. a non-loopback host without
    /// a token) but does not bind yet: `run()` does.
    public init(configuration: TransportConfiguration, bridgeJS: [UInt8], logger: Logger) throws {
        try configuration.validate()  // ConfigurationError
        self.configuration = configuration
        self.bridgeJS = bridgeJS
        self.logger = logger
        originPolicy = OriginPolicy(allowedOrigins: configuration.allowedOrigins)
        hostPolicy = HostHeaderPolicy(bindHost: configuration.host, allowedOrigins: configuration.allowedOrigins,
                                      allowedHosts: configuration.allowedHosts)
        httpAuth = HTTPAuth(token: configuration.token)
        if let dir = configuration.staticDirectory {
            guard let files = StaticFiles(directory: dir) else {
                throw ConfigurationError(.staticDirectory, "'\(dir)' does not resolve")
            }
            staticFiles = files
        } else {
            staticFiles = nil
        }
        bindPlan = HostPolicy.bindPlan(for: configuration.host)
        scratch = .allocate(byteCount: Int(bridged_lws_pre()) + Transport.chunkSize, alignment: 16)
        timerNode = .allocate(capacity: 1)
        timerNode.initialize(to: bridged_timer_t())
        protocols = .allocate(capacity: 2)
        pvoDefault = .allocate(capacity: 1)
        pvo = .allocate(capacity: 1)
        retryPolicy = .allocate(capacity: 1)

        let name = strdup(Transport.protocolName)!
        let defaultKey = strdup("default")!
        let defaultValue = strdup("1")!
        let empty = strdup("")!
        cStrings = [name, defaultKey, defaultValue, empty]

        protocols.initialize(to: lws_protocols())
        protocols[0].name = UnsafePointer(name)
        protocols[0].callback = { wsi, reason, user, input, len in
            Transport.dispatch(wsi, reason, user, input, len)
        }
        protocols[0].per_session_data_size = 0  // the connection is the wsi's opaque pointer: see `connection(_:)`
        // lws allocates the receive buffer per connection: small keeps 10,000 idle pages cheap
        // (messages are mostly a few hundred bytes; larger ones arrive in several callbacks).
        protocols[0].rx_buffer_size = Transport.receiveBufferSize
        protocols[0].tx_packet_size = Transport.chunkSize + Int(bridged_lws_pre())
        (protocols + 1).initialize(to: lws_protocols())  // terminator

        // The "default" pvo routes upgrades without Sec-WebSocket-Protocol, and plain HTTP, to us.
        pvoDefault.initialize(to: lws_protocol_vhost_options())
        pvoDefault.pointee.name = UnsafePointer(defaultKey)
        pvoDefault.pointee.value = UnsafePointer(defaultValue)
        pvo.initialize(to: lws_protocol_vhost_options())
        pvo.pointee.options = UnsafePointer(pvoDefault)
        pvo.pointee.name = UnsafePointer(name)
        pvo.pointee.value = UnsafePointer(empty)

        retryPolicy.initialize(to: lws_retry_bo_t())
        retryPolicy.pointee.secs_since_valid_ping = UInt16(configuration.pingInterval.wholeSeconds)
        retryPolicy.pointee.secs_since_valid_hangup = UInt16(configuration.pingTimeout.wholeSeconds)
    }

    deinit {
        precondition(context == nil, "Transport released while its context is alive")
        scratch.deallocate()
        timerNode.deallocate()
        foreignLoopSlot.deallocate()
        protocols.deinitialize(count: 2)
        protocols.deallocate()
        pvoDefault.deallocate()
        pvo.deallocate()
        retryPolicy.deallocate()
        for s in cStrings { free(s) }
    }

    /// A `malloc_trim` is scheduled (see `noteFreeing`).
    var trimScheduled = false
    /// `malloc_trim`s done (tests).
    var memoryTrims = 0

    /// The descriptor of lws's wake-up pipe on the libuv loop (-1: none, or `.poll`).
    private var wakeDescriptor: Int32 = -1

    /// Before `lws_context_destroy` on a libuv loop: lws 4.1.6 closes its wake-up descriptor
    /// there and closes the same number again when the loop finishes the watcher's close; in a
    /// process with other threads (several transports, the Swift tests) the number can be
    /// reused in between, and the second close would close someone else's descriptor (a new
    /// transport's listener or event loop). The first close leaves a placeholder in its place
    /// (`bridged_wire_hold_on_close`), so the number is never free until lws is done with it.
    private func holdWakeDescriptor() {
        if wakeDescriptor >= 0 { bridged_wire_hold_on_close(wakeDescriptor) }
    }

    /// After the loop finished: the hold ends (a placeholder lws did not close is closed).
    private func releaseWakeDescriptor() {
        if wakeDescriptor >= 0 { bridged_wire_release_held(wakeDescriptor) }
        wakeDescriptor = -1
    }

    /// Why the listener could not be created, as the operator needs it: the address and the
    /// error of binding it (`BindFailure`), found by binding it again the way lws does.
    private func bindFailure() -> String {
        BindFailure.describe(host: configuration.host, plan: bindPlan, port: configuration.port)
    }

    /// After a failed start: the loop is never run again (see `bridged_uv_loop_abandon`).
    private func abandonLoop() {
        if let uvTimer { bridged_uv_timer_close(uvTimer) }
        uvTimer = nil
        if let loop = uvLoop { bridged_uv_loop_abandon(loop) }
        uvLoop = nil
    }

    /// After the context is destroyed: lets lws close its libuv handles, then frees the loop.
    private func finishLoop(_ ctx: OpaquePointer) {
        if let uvTimer { bridged_uv_timer_close(uvTimer) }
        uvTimer = nil
        guard let loop = uvLoop else { return }
        uvLoop = nil
        if bridged_uv_loop_finish(loop, 1000, ctx) != 0 {
            logger.warning("the event loop still had open handles after the context was destroyed; it is left allocated")
        }
    }

    /// The clock the timers use (lws_now_usecs: CLOCK_MONOTONIC in this build), in microseconds.
    public var monotonicMicroseconds: Int64 { Int64(lws_now_usecs()) }

    /// Number of open WebSocket connections.
    public var connectionCount: Int { connections.count }

    /// Close frames sent by code, and send-queue overflows (for `/metrics`).
    public internal(set) var counters = TransportCounters()

    /// True while `id` is open and accepts messages (not closed, not closing).
    public func isOpen(_ id: ConnectionID) -> Bool { connections[id.raw]?.acceptsMessages ?? false }

    /// Bytes queued for `id` and not yet handed to the socket (nil for an unknown id).
    public func queuedBytes(_ id: ConnectionID) -> Int? { connections[id.raw]?.queuedBytes }

    // MARK: - Lifecycle

    /// Creates the context, binds, calls `transportDidStart(port:)`, and serves until
    /// `remote.stop()`. Blocks the calling thread, which becomes the service thread. On return
    /// every connection is closed (with 1001 when the peer could still receive it) and the
    /// context is destroyed.
    public func run() throws {
        guard !ran else { throw TransportError.alreadyRan }
        ran = true
        LWSLog.install(logger)
        raiseDescriptorLimit()

        var info = lws_context_creation_info()
        info.port = Int32(configuration.port)
        info.protocols = UnsafePointer(protocols)
        info.pvo = UnsafePointer(pvo)
        info.gid = -1
        info.uid = -1
        info.retry_and_idle_policy = UnsafePointer(retryPolicy)
        // Room for heads up to 8 KiB, so that those over maxRequestHeadBytes get a 431 from us;
        // longer ones are answered 431 before lws parses them (Transport+Wire.swift).
        info.max_http_header_data = UInt16(BRIDGED_WIRE_MAX_HEAD)
        _ = Transport.wireHookInstalled
        info.user = Unmanaged.passUnretained(self).toOpaque()
        timerNode.pointee.owner = Unmanaged.passUnretained(self).toOpaque()
        var options = UInt64(LWS_SERVER_OPTION_VALIDATE_UTF8) | UInt64(LWS_SERVER_OPTION_FAIL_UPON_UNABLE_TO_BIND)
        if bindPlan.disableIPv6 { options |= UInt64(LWS_SERVER_OPTION_DISABLE_IPV6) }
        var eventLoop = configuration.eventLoop
        if eventLoop == .epoll && bridged_uv_glue_load() != 0 {
            logger.warning("libwebsockets' libuv support (libwebsockets-evlib_uv.so, Debian package libwebsockets-evlib-uv) is missing; waiting in poll() instead")
            eventLoop = .poll
        }
        if eventLoop == .epoll {
            guard let loop = bridged_uv_loop_new() else {
                throw TransportError.startFailed("could not create the event loop (libuv)")
            }
            uvLoop = loop
            options |= bridged_option_libuv()
            bridged_info_set_foreign_loop(&info, foreignLoopSlot, loop)
            uvTimer = bridged_uv_timer_new(loop, Unmanaged.passUnretained(self).toOpaque()) { owner in
                guard let owner else { return }
                Unmanaged<Transport>.fromOpaque(owner).takeUnretainedValue().timersDue()
            }
            if uvTimer == nil { throw TransportError.startFailed("could not create the event loop's timer (libuv)") }
        }
        info.options = options
        let serverName = strdup("bridged")!
        defer { free(serverName) }
        info.server_string = UnsafePointer(serverName)
        let iface = bindPlan.iface.map { strdup($0)! }
        defer { if let iface { free(iface) } }
        info.iface = iface.map { UnsafePointer($0) }

        guard let ctx = lws_create_context(&info) else {
            abandonLoop()
            throw TransportError.startFailed(bindFailure())
        }
        context = ctx
        if let uvLoop { wakeDescriptor = bridged_uv_pipe_fd(uvLoop) }
        if let vhost = lws_get_vhost_by_name(ctx, "default") {
            port = Int(lws_get_vhost_listen_port(vhost))
        }
        if port <= 0 {
            // lws 4.1.6 on a libuv loop creates the context even when the listener could not
            // bind (it logs "Failed to create default vhost").
            port = 0
            context = nil
            holdWakeDescriptor()
            lws_context_destroy(ctx)
            abandonLoop()
            releaseWakeDescriptor()
            throw TransportError.startFailed(bindFailure())
        }
        remote.attach(ctx)
        logger.info("listening", metadata: ["host": "\(configuration.host)", "port": "\(port)"])
        if let code = httpAuth.loginCode {
            logger.notice("dashboard (one-time link; sets a cookie): \(configuration.displayURL(port: port))/?token=\(code)")
        }
        delegate?.transportDidStart(port: port)
        drainRemote()
        if !pendingFlush.isEmpty { flushPendingWrites() }

        // (The condition is checked first: a stop requested before run() ends it at once.)
        while !(stopping && (connections.isEmpty || monotonicMicroseconds >= shutdownDeadline)) {
            if let uvLoop {
                _ = bridged_uv_run_once(uvLoop)
            } else if lws_service(ctx, 0) < 0 {
                logger.error("lws_service failed; stopping")
                break
            }
        }
        if !connections.isEmpty {
            logger.warning("shutdown deadline passed with connections still open",
                           metadata: ["open": "\(connections.count)"])
        }
        teardown(ctx)
    }

    private func teardown(_ ctx: OpaquePointer) {
        remote.detach()
        destroying = true
        bridged_timer_cancel(timerNode)
        if let uvTimer { bridged_uv_timer_close(uvTimer) }
        uvTimer = nil
        armedDeadline = nil
        // Connections still open get CLOSED callbacks from the destroy (delegate told there).
        holdWakeDescriptor()
        lws_context_destroy(ctx)
        finishLoop(ctx)
        releaseWakeDescriptor()
        context = nil
        timerBodies.removeAll()
        timerHeap = TimerHeap()
        keyedQueue = DeadlineQueue()
        keyedOutOfOrder.removeAll()
        keyedQueueTimer = nil
        pendingFlush.removeAll()
        lastSendTarget = nil
        for (_, pending) in httpResponses { pending.release() }
        httpResponses.removeAll()
        for conn in connections.values { conn.closed = true }
        connections.removeAll()
        logger.info("transport stopped")
    }

    /// Starts the shutdown: no new upgrades, every connection gets a 1001 close (unsent messages
    /// are dropped), the loop ends when they are gone or at the deadline. Idempotent.
    func beginShutdown() {
        guard !stopping else { return }
        stopping = true
        shutdownDeadline = monotonicMicroseconds + configuration.shutdownTimeout.microseconds
        logger.info("stopping", metadata: ["open": "\(connections.count)"])
        // Unsent messages are dropped (a close frame may interleave with a half-written
        // fragmented message); a close already pending keeps its code.
        for conn in connections.values where conn.closeRequest == nil {
            abort(conn, code: 1001, reason: "server shutting down")
        }
        // Wake the loop at the deadline even if no socket does anything.
        _ = schedule(afterMicroseconds: configuration.shutdownTimeout.microseconds) {}
    }

    func drainRemote() {
        let (work, stop) = remote.takeWork()
        for item in work {
            switch item {
            case .plain(let body): body()
            case .withTransport(let body): body(self)
            }
        }
        // A stop requested by the work itself (a drain of 0 ms) counts now: its wake-up may be
        // consumed by this very round.
        if stop || (!work.isEmpty && remote.isStopRequested) { beginShutdown() }
    }
}
