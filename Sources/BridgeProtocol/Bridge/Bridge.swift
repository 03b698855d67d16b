/// The whole protocol of the daemon as a state machine: connections, sessions, controllers,
/// subscriptions and every request and event of the contract, with no I/O of its own.
///
/// The host (the lws glue) feeds every input through one entry point, `apply(_:at:)`
/// (BridgeInput.swift: a client connected, sent a frame, left; a timer fired; the sweep; what
/// the host's browser did), on one thread, each with the current time in microseconds of a
/// monotonic clock, and then performs `drainEffects()` in order. Tokens and session ids come
/// from the injected random number generator, so a seeded generator makes a run replayable.
///
/// Where things are: `Handshake.swift` (`hello`), `PageMethods.swift` (a page's requests and
/// events), `ControllerMethods.swift` (a controller's requests, by `Methods.swift`'s enums, to
/// `Sessions.swift` for `session.*`, `Navigation.swift` for `navigation.*` and a page's
/// `navigate`/`back`, `RouterMethods.swift` for `router.*` and `deeplink.open`),
/// `EngineSteps.swift` (running a session's engine and performing its effects), `Events.swift`
/// (controller events), `Frames.swift` (frames and JSON), `Tokens.swift` (ids and tokens).
///
/// A `Bridge` is a value: sessions are structs in its storage, so a copy is an independent
/// Bridge, and two Bridges compare equal when their whole protocol state (connections,
/// sessions with their engines and routing trees, subscriptions, counters, the generator, the
/// effects not yet drained) is equal.
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
    var allSubscribers: [Subscriber] = []

    var effects: [BridgeEffect] = []
    /// Human-readable transitions since the last `drainTrace()` (with `configuration.trace`).
    var traceLines: [String] = []
    /// Connections waiting for the browser, with the frames that wait with them (Bridge+Host.swift).
    var held: [ClientID: HeldConnection] = [:]
    /// While a `pwa-navigate` that waited for its snapshot is handled: the picture (empty: the
    /// browser could not take one). Set and cleared within one input.
    var snapshotInHand: [UInt8]?
    /// Counters for the daemon's metrics (see BridgeStats; not protocol state: not compared).
    public var stats = BridgeStats()

    /// Storage reused from request to request, empty between requests (not state): the frame
    /// being written (see `sendResult`), the array the last frame left in (see `frameArray`)
    /// and the list of a step's engine effects (see `run`).
    var frameWriter = JSONWriter(capacity: 4096)
    var spareFrame: [UInt8] = []
    var effectStorage: [SessionEffect] = []

    public init(configuration: BridgeConfiguration = BridgeConfiguration(), router: Router? = nil, random: RNG) {
        self.configuration = configuration
        self.router = router
        self.rng = random
        stats.enabled = configuration.countStats
        effects.reserveCapacity(16)
        effectStorage.reserveCapacity(16)
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
    @_specialize(exported: true, where RNG == RecordableRandom)
    public mutating func drainEffects(into buffer: inout [BridgeEffect]) {
        while !buffer.isEmpty { buffer.removeLast() }  // keeps the storage, cheaper than removeAll
        swap(&buffer, &effects)
    }

    /// The trace lines accumulated since the last call (empty unless `configuration.trace`).
    public mutating func drainTrace() -> [String] {
        guard !traceLines.isEmpty else { return [] }
        defer { traceLines.removeAll(keepingCapacity: true) }
        return traceLines
    }

    mutating func connected(_ client: ClientID, isLoopback: Bool, origin: String? = nil, at now: Int64) {
        clients[client] = Client(role: .fresh, isLoopback: isLoopback, origin: origin)
    }

    mutating func receivedBinary(_ client: ClientID, at now: Int64) {
        guard clients[client] != nil else { return }
        sendError(client, id: nil, ProtocolError(.invalidRequest, "binary frames are not supported; send one JSON object per text frame"))
    }

    mutating func received(_ client: ClientID, text: [UInt8], at now: Int64) {
        text.withUnsafeBytes { received(client, text: $0, at: now) }
    }

    /// One whole text message from `client`.
    mutating func received(_ client: ClientID, text: UnsafeRawBufferPointer, at now: Int64) {
        // One lookup of the client per frame, and only what the frame needs taken out of its
        // record (`Requester`; see `handleRequest`).
        guard let requester = clients[client]?.requester else { return }
        let frame: Frame
        // `Frame.classify`, without wrapping the usual frame (a request the fast path reads) in a
        // `Result` and taking it out again.
        if let request = FastRequest.parse(text) {
            frame = request
        } else {
            switch Frame.classifyGeneral(text) {
            case .success(let f): frame = f
            case .failure(let failure):
                if failure.isEvent, case .fresh = requester { return }  // events before hello are ignored
                sendError(client, id: failure.id, failure.error)
                return
            }
        }
        switch frame {
        case .request(let id, let method, let name, let params):
            // The name is matched once, when the frame is read; everything after switches over
            // the enum.
            stats.beginRequest(method)
            handleRequest(client, requester, id: id, method: method, name: name, params: params, now: now)
            stats.endRequest()
        case .event(let name, let params):
            handleEvent(client, requester, name: name, params: params, now: now)
        }
    }

    mutating func disconnected(_ client: ClientID, at now: Int64) {
        guard let c = clients.removeValue(forKey: client) else { return }
        switch c.role {
        case .page(let sid, let webview):
            withSession(sid) { b, s in
                guard s.pages[webview] == client else { return }
                s.pages[webview] = nil
                b.run(&s, .pageDisconnected(webview), cause: "disconnect", now: now)
            }
        case .controller(let info):
            allSubscribers.removeAll { $0.client == client }
            for sid in info.sessions {
                withSession(sid) { b, s in
                    s.subscribers.removeAll { $0.client == client }
                    b.updateIdle(&s, now: now)
                }
            }
        case .fresh, .detached:
            break
        }
    }

    /// A timer asked for by `.schedule` is due.
    mutating func timerFired(_ key: TimerKey, at now: Int64) {
        if shellTimerFired(key, now: now) { return }
        guard let sid = sessionIDBySerial[key.session] else { return }
        withSession(sid) { b, s in b.run(&s, .timerFired(key.token), cause: "timer", now: now) }
    }

    /// Discards sessions that have had no connection for `sessionIdleSeconds`. Call it about
    /// once a second.
    mutating func sweep(at now: Int64) {
        let limit = Int64(configuration.sessionIdleSeconds) * 1_000_000
        let expired = sessions.idle { since in now - since >= limit }
        for (_, sid) in expired.sorted(by: { $0.serial < $1.serial }) {
            closeSession(sid, reason: "idle", now: now)
        }
    }

    // MARK: Introspection (dashboard, tests)

    public var sessionCount: Int { sessions.count }
    public var clientCount: Int { clients.count }

    /// Session ids, oldest first.
    public var sessionIDs: [String] {
        sessions.all.sorted { $0.serial < $1.serial }.map(\.id)
    }

    public func engine(of session: String) -> SessionEngine? { sessions[session]?.engine }

    /// `{"sessions":[{"session","stack","foreground"}…]}` as bytes, for `GET /api/sessions`.
    public mutating func sessionListJSON(at now: Int64) -> [UInt8] {
        var w = JSONWriter(capacity: 256)
        writeSessionList(into: &w, now: now)
        return w.bytes
    }
}

// MARK: - Requests and events by the sender's role

extension Bridge {
    /// A request of `client`, whose role is `requester`; `method` is `name` matched (nil: no
    /// such method). Only what the request needs is taken out of the client's record: in
    /// particular a controller's request is handled without a copy of its record in scope: the
    /// record holds the set of sessions it subscribed to, and `session.create`/`session.close`
    /// change that set in place, which a live copy would turn into a copy of the whole set
    /// (O(sessions) per call).
    mutating func handleRequest(_ client: ClientID, _ requester: Requester, id: Int64, method: BridgeMethod?, name: String, params: JSONObject, now: Int64) {
        let p = Params(params)
        switch requester {
        case .page(let webview, let serial, let hint):
            do throws(ProtocolError) {
                let found: Void? = try withPageSession(of: client, serial: serial, hint: hint) { (b, s) throws(ProtocolError) in
                    try b.pageRequest(client, id: id, method: method, name: name, p, session: &s, webview: webview, now: now)
                }
                if found == nil { throw unknownSession(clients[client]?.pageSession ?? "") }
            } catch {
                sendError(client, id: id, error)
            }
        case .controller(let observer):
            do throws(ProtocolError) {
                if observer { try checkObserver(method, name: name) }
                try controllerRequest(client, id: id, method: method, name: name, p, now: now)
            } catch {
                sendError(client, id: id, error)
            }
        case .fresh:
            guard method == .hello else {
                sendError(client, id: id, ProtocolError(.notReady, "\"\(name)\" before \"hello\": the first request on a connection must be \"hello\""))
                return
            }
            guard let c = clients[client] else { return }
            do throws(ProtocolError) {
                try hello(client, id: id, p, c, now: now)
            } catch {
                sendError(client, id: id, error)
            }
        case .detached(let sid, let webview, let why):
            if method == .hello {
                sendError(client, id: id, ProtocolError(.conflict, "this connection already said hello"))
            } else if sessions[sid]?.engine.webView(webview) == nil {
                sendError(client, id: id, ProtocolError(.unknownWebview, "web view \(webview) is no longer on the stack"))
            } else {
                sendError(client, id: id, ProtocolError(.notAllowed, "this connection no longer speaks for \(webview) (\(why))"))
            }
        }
    }

    mutating func handleEvent(_ client: ClientID, _ requester: Requester, name: String, params: JSONObject, now: Int64) {
        guard case .page(let webview, let serial, let hint) = requester else {
            // Events before hello are ignored; controllers send none.
            return
        }
        do throws(ProtocolError) {
            try withPageSession(of: client, serial: serial, hint: hint) { (b, s) throws(ProtocolError) in
                try b.pageEvent(client, name: name, Params(params), session: &s, webview: webview, now: now)
            }
        } catch {
            sendError(client, id: nil, error)
        }
    }
}

/// What `handleRequest` takes out of a client's record: everything but a controller's record,
/// and for a page, instead of its session's id (a string, retained and released with every
/// copy), the slot its session was last found in and that session's serial
/// (`Client.sessionSlot`, `Client.sessionSerial`).
enum Requester {
    case fresh
    case page(webview: ItemID, serial: UInt64, slotHint: Int)
    case detached(session: String, webview: ItemID, why: String)
    case controller(observer: Bool)
}

extension Client {
    var requester: Requester {
        switch role {
        case .fresh: .fresh
        case .page(_, let webview): .page(webview: webview, serial: sessionSerial, slotHint: sessionSlot)
        case .detached(let sid, let webview, let why): .detached(session: sid, webview: webview, why: why)
        case .controller(let info): .controller(observer: info.observer)
        }
    }
}

// MARK: - Sessions, reached once per request

extension Bridge {
    /// Runs `body` with session `sid` and the rest of the Bridge, each as a value of its own
    /// (the session's slot is taken out of the table for the call and put back). Nil, without calling
    /// `body`, when there is no such session. `body` must not reach the same session again.
    @discardableResult
    mutating func withSession<R, E: Error>(_ sid: String, _ body: (inout Self, inout Session) throws(E) -> R) throws(E) -> R? {
        guard let i = sessions.slot(of: sid) else { return nil }
        // The session is changed where it lies, in its slot (a reference; see SessionTable).
        let slot = sessions.take(i)
        defer { sessions.put(slot, at: i) }
        return try body(&self, &slot.session)
    }

    /// `withSession` for the session of page `client`: looked for first in slot `hint` (where it
    /// was found for the page's last message), there when the slot holds the session of serial
    /// `serial` (serials are never reused), which spares hashing its id (≈ 440 instructions) and
    /// reading it; else found by the id its role names, and the slot and serial remembered for
    /// the next message.
    @discardableResult @inline(__always)
    mutating func withPageSession<R, E: Error>(of client: ClientID, serial: UInt64, hint: Int, _ body: (inout Self, inout Session) throws(E) -> R) throws(E) -> R? {
        let i: Int
        if sessions.holds(serial: serial, at: hint) {
            i = hint
        } else {
            guard let sid = clients[client]?.pageSession, let found = sessions.slot(of: sid) else { return nil }
            i = found
            clients[client]?.sessionSlot = found
            clients[client]?.sessionSerial = sessions.serial(at: found)
        }
        let slot = sessions.take(i)
        defer { sessions.put(slot, at: i) }
        return try body(&self, &slot.session)
    }
}

extension Bridge: Equatable where RNG: Equatable {
    /// The whole protocol state; the storage reused between requests and the metrics counters
    /// are not compared.
    public static func == (a: Bridge, b: Bridge) -> Bool {
        a.configuration == b.configuration && a.router == b.router && a.rng == b.rng && a.clients == b.clients
            && a.sessions == b.sessions && a.sessionIDBySerial == b.sessionIDBySerial
            && a.nextSessionSerial == b.nextSessionSerial && a.nextControllerNumber == b.nextControllerNumber
            && a.allSubscribers == b.allSubscribers && a.effects == b.effects && a.traceLines == b.traceLines
            && a.held == b.held
    }
}
