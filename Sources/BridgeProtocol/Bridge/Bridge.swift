/// The whole protocol of the daemon as a state machine: connections, sessions, controllers,
/// subscriptions and every request and event of the contract, with no I/O of its own.
///
/// The host (the lws glue) calls `connected`, `received`, `receivedBinary`, `disconnected`,
/// `timerFired` and `sweep` on one thread, each with the current time in microseconds of a
/// monotonic clock, and then performs `drainEffects()` in order. Tokens and session ids come
/// from the injected random number generator, so a seeded generator makes a run replayable.
public struct Bridge<RNG: RandomNumberGenerator> {
    public let configuration: BridgeConfiguration
    /// The routing configuration (`--config`); nil: every session is one stack, as the contract.
    public let router: Router?
    var rng: RNG

    var clients: [ClientID: Client] = [:]
    var sessions = SessionTable()
    var sessionIDBySerial: [UInt64: String] = [:]
    var nextSessionSerial: UInt64 = 1
    var nextControllerNumber = 1
    /// Controllers subscribed to every session, in the order they subscribed.
    var allSubscribers: [(client: ClientID, filter: EventFilter)] = []

    var effects: [BridgeEffect] = []
    /// Scratch space for the frames being written (see `sendResult`); each frame leaves as an
    /// exact-size copy.
    var frameWriter = JSONWriter(capacity: 4096)
    var engineEffects: [SessionEffect] = []
    /// The transitions of the router action being flushed (its `stack.changed` carries them
    /// instead of a diff of the tree).
    var routerTransitions: [Transition]?
    /// Where the reply of the router action being performed goes (see `writeOutcome`).
    var replyMark: Int?
    /// Human-readable transitions since the last `drainTrace()` (with `configuration.trace`).
    var traceLines: [String] = []
    /// Sessions created with `browser: true` (see Bridge+Host.swift).
    var browserSessions: Set<String> = []

    public init(configuration: BridgeConfiguration = BridgeConfiguration(), router: Router? = nil, random: RNG) {
        self.configuration = configuration
        self.router = router
        self.rng = random
        effects.reserveCapacity(16)
        engineEffects.reserveCapacity(16)
    }

    // MARK: Host entry points

    /// The effects accumulated since the last call, in the order they must be performed.
    public mutating func drainEffects() -> [BridgeEffect] {
        let out = effects
        effects.removeAll(keepingCapacity: true)
        return out
    }

    /// Hands the accumulated effects over in `buffer` (whose old contents are dropped) and keeps
    /// `buffer`'s storage for the next ones: no allocation per message once both have grown,
    /// and the host may call back into the bridge while it performs them.
    @_specialize(exported: true, where RNG == SystemRandomNumberGenerator)
    public mutating func drainEffects(into buffer: inout [BridgeEffect]) {
        while !buffer.isEmpty { buffer.removeLast() }  // keeps the storage, cheaper than removeAll
        swap(&buffer, &effects)
    }

    /// Performs `body` for each accumulated effect and clears them, without copying the list.
    public mutating func drainEffects(_ body: (BridgeEffect) -> Void) {
        for e in effects { body(e) }
        effects.removeAll(keepingCapacity: true)
    }

    /// The trace lines accumulated since the last call (empty unless `configuration.trace`).
    public mutating func drainTrace() -> [String] {
        guard !traceLines.isEmpty else { return [] }
        defer { traceLines.removeAll(keepingCapacity: true) }
        return traceLines
    }

    @_specialize(exported: true, where RNG == SystemRandomNumberGenerator)
    public mutating func connected(_ client: ClientID, isLoopback: Bool, at now: Int64) {
        clients[client] = Client(isLoopback: isLoopback, role: .fresh)
    }

    @_specialize(exported: true, where RNG == SystemRandomNumberGenerator)
    public mutating func receivedBinary(_ client: ClientID, at now: Int64) {
        guard clients[client] != nil else { return }
        sendError(client, id: nil, ProtocolError(.invalidRequest, "binary frames are not supported; send one JSON object per text frame"))
    }

    public mutating func received(_ client: ClientID, text: [UInt8], at now: Int64) {
        text.withUnsafeBytes { received(client, text: $0, at: now) }
    }

    /// One whole text message from `client`.
    @_specialize(exported: true, where RNG == SystemRandomNumberGenerator)
    public mutating func received(_ client: ClientID, text: UnsafeRawBufferPointer, at now: Int64) {
        guard clients[client] != nil else { return }
        let frame: Frame
        switch Frame.classify(text) {
        case .success(let f): frame = f
        case .failure(let failure):
            if failure.isEvent, case .fresh? = clients[client]?.role { return }  // events before hello are ignored
            sendError(client, id: failure.id, failure.error)
            return
        }
        switch frame {
        case .request(let id, let method, let params):
            handleRequest(client, id: id, method: method, params: params, now: now)
        case .event(let name, let params):
            handleEvent(client, name: name, params: params, now: now)
        }
    }

    @_specialize(exported: true, where RNG == SystemRandomNumberGenerator)
    public mutating func disconnected(_ client: ClientID, at now: Int64) {
        guard let c = clients.removeValue(forKey: client) else { return }
        switch c.role {
        case .page(let sid, let webview):
            guard sessions[sid]?.pages[webview] == client else { return }
            sessions[sid]!.pages[webview] = nil
            _ = step(sid, .pageDisconnected(webview), now: now)
            flush(sid, cause: "disconnect", now: now)
            updateIdle(sid, now: now)
        case .controller(let info):
            allSubscribers.removeAll { $0.client == client }
            for sid in info.sessions {
                sessions[sid]?.subscribers.removeAll { $0.client == client }
                updateIdle(sid, now: now)
            }
        case .fresh, .detached:
            break
        }
    }

    /// A timer asked for by `.schedule` is due.
    @_specialize(exported: true, where RNG == SystemRandomNumberGenerator)
    public mutating func timerFired(_ key: TimerKey, at now: Int64) {
        guard let sid = sessionIDBySerial[key.session] else { return }
        if case .success = step(sid, .timerFired(key.token), now: now) {
            flush(sid, cause: "timer", now: now)
        } else {
            engineEffects.removeAll(keepingCapacity: true)
        }
    }

    /// Discards sessions that have had no connection for `sessionIdleSeconds`. Call it about
    /// once a second.
    @_specialize(exported: true, where RNG == SystemRandomNumberGenerator)
    public mutating func sweep(at now: Int64) {
        let limit = Int64(configuration.sessionIdleSeconds) * 1_000_000
        var expired: [(UInt64, String)] = []
        for (sid, s) in sessions {
            if let since = s.idleSince, now - since >= limit { expired.append((s.serial, sid)) }
        }
        for (_, sid) in expired.sorted(by: { $0.0 < $1.0 }) {
            closeSession(sid, reason: "idle", now: now)
        }
    }

    // MARK: Introspection (dashboard, tests)

    public var sessionCount: Int { sessions.count }
    public var clientCount: Int { clients.count }

    /// Session ids, oldest first.
    public var sessionIDs: [String] {
        sessions.values.sorted { $0.serial < $1.serial }.map(\.id)
    }

    public func engine(of session: String) -> SessionEngine? { sessions[session]?.engine }

    /// `{"sessions":[{"session","stack","foreground"}…]}` as bytes, for `GET /api/sessions`.
    public mutating func sessionListJSON(at now: Int64) -> [UInt8] {
        var w = JSONWriter(capacity: 256)
        writeSessionList(into: &w, now: now)
        return w.bytes
    }
}

/// What the daemon knows about one connection.
struct Client {
    var isLoopback: Bool
    var role: Role

    enum Role {
        /// No successful `hello` yet.
        case fresh
        case page(session: String, webview: ItemID)
        /// A page that no longer speaks for its web view (replaced, sent elsewhere, popped,
        /// session closed); its connection is being closed.
        case detached(session: String, webview: ItemID, why: String)
        case controller(ControllerInfo)
    }
}

struct ControllerInfo {
    var name: String
    /// Connection order: the earliest handler of a name wins.
    var number: Int
    var handles: Set<String>
    /// Sessions this controller is subscribed to one by one.
    var sessions: [String] = []
}

/// One session's state. A class: it is reached through `sessions[sid]` many times per request,
/// and a struct would be copied whole (every array and dictionary in it retained and released)
/// on each read.
final class SessionRecord {
    let id: String
    let serial: UInt64

    /// The mutable state, behind a pointer: a class's stored properties are reached through a
    /// dynamic exclusivity check on every use, several per request here. One thread only (the
    /// Bridge's).
    struct State {
        var engine: SessionEngine
        var pages: [ItemID: ClientID] = [:]
        var subscribers: [(client: ClientID, filter: EventFilter)] = []
        var idleSince: Int64?
        var stackCache: [UInt8] = []
        var stackCacheVersion: UInt64 = .max
        var route: RouteSession?
        var webTokens: [ItemID: String] = [:]
    }
    private let state: UnsafeMutablePointer<State>

    var engine: SessionEngine { get { state.pointee.engine } _modify { yield &state.pointee.engine } }
    /// The connected page of each web view.
    var pages: [ItemID: ClientID] { get { state.pointee.pages } _modify { yield &state.pointee.pages } }
    /// Controllers subscribed to this session by name, in subscription order.
    var subscribers: [(client: ClientID, filter: EventFilter)] {
        get { state.pointee.subscribers }
        _modify { yield &state.pointee.subscribers }
    }
    /// When the last connection left (microseconds); nil while one is there.
    var idleSince: Int64? { get { state.pointee.idleSince } _modify { yield &state.pointee.idleSince } }
    var stackCache: [UInt8] { get { state.pointee.stackCache } _modify { yield &state.pointee.stackCache } }
    var stackCacheVersion: UInt64 {
        get { state.pointee.stackCacheVersion }
        _modify { yield &state.pointee.stackCacheVersion }
    }
    /// With a routing configuration: the session's tree of stacks.
    var route: RouteSession? { get { state.pointee.route } _modify { yield &state.pointee.route } }
    /// Tokens of web views known to the tree (also those outside the active stack).
    var webTokens: [ItemID: String] { get { state.pointee.webTokens } _modify { yield &state.pointee.webTokens } }

    init(id: String, serial: UInt64, engine: SessionEngine) {
        self.id = id
        self.serial = serial
        state = .allocate(capacity: 1)
        state.initialize(to: State(engine: engine))
    }

    deinit {
        state.deinitialize(count: 1)
        state.deallocate()
    }
}
