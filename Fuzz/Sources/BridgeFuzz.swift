// The replay tests (Tests/BridgeProtocolTests/BridgeFuzzReplayTests.swift) compile this file
// too, through a link, as part of the test target; the fuzz binary compiles it in one module
// with BridgeProtocol's sources.
#if canImport(BridgeProtocol)
@testable import BridgeProtocol
#endif

/// `fuzz-bridge`: the whole `Bridge` state machine driven by a script decoded from the input.
///
/// Each step of the script (one byte picks what, the next ones how) connects or disconnects a
/// client, lets time pass (due timers fire in deadline order), sweeps idle sessions, or sends a
/// frame: one built from templates that make sense for the protocol (hello as page or controller,
/// with claims learned from earlier replies and events; page requests and events; controller
/// requests on known sessions), or raw bytes taken from the input, so that libFuzzer's mutations
/// reach the parser and the envelope checks through the Bridge.
///
/// Invariants, after every step:
/// - every request gets exactly one reply, with its id, before anything else sent to its sender;
///   an event gets no reply (at most one error with id null); a frame that is not valid JSON or not
///   an object gets one error with id null;
/// - a refused frame (a request answered with an error, an event or a malformed frame answered
///   with an error with id null) changes nothing: the whole Bridge after it (`Bridge` is
///   `Equatable`: connections and roles, every session with its engine, pages, subscribers,
///   tokens and routing tree, the counters, the random generator) equals a copy taken before it;
/// - nothing is sent to a client after its close or its disconnect; every frame sent is one JSON
///   object; a timer is never scheduled twice;
/// - browser sessions (no browser here: the script plays it, answering the `HostWork` the
///   Bridge asks for with `HostResult`s): the snapshot rule holds: a browser session (without
///   a profile) never has
///   more placeholders than snapshots the script handed back (a `pwa-navigate` is run only
///   after its tab is pictured); replies to each connection come in the order of its requests,
///   also when the browser answers them later (and the error with id null of an event it sent
///   meanwhile comes in its turn); a connection the browser does not hold owes no reply;
/// - memory stays bounded: at most `maxSessions` sessions, at most `maxStackDepth` items per stack,
///   no url or title over `maxURLBytes`, every session's held bytes (`Session.heldBytes`: its urls
///   and titles plus 64 per item) at most `maxSessionBytes`, and its cached stack JSON at most
///   `jsonBound` (the documented worst case: the held strings again, escaped);
/// - stacks are well formed: no duplicate ids, never a placeholder on top, a placeholder lies
///   under its web view (or under another placeholder of it), the foreground (if any) is over the
///   top item and its timer is the only one scheduled for the session; a web view is `connected`
///   exactly when a page speaks for it, and that page's role names it; no page waits on a web
///   view that is on no stack (with a router: in no stack of the tree; with a profile: nor
///   held by the profile, `ProfileState.hasWebView`);
/// - the stack as JSON is the engine's stack: the bytes `stackJSON` would send for every session
///   now (on a copy of the Bridge) equal `writeStack` of its engine's items; a cache valid for
///   the engine's version holds those bytes; and every placeholder the cache keeps the bytes of
///   (`Session.stackCacheItems`) that lies in the same place of the stack now is written as it
///   was (`stackJSON` copies those bytes instead of writing them again);
/// - what a subscribed observer hears is consistent: only controller events, each with its
///   session; `session.created` once; `foreground.shown` and `foreground.removed` alternate;
///   no session closes with a foreground up; its sessions are the daemon's;
/// - every close is 1000; every error code is one of the contract's, never `internal`;
/// - at the end a fresh controller's `session.list` answers and lists the daemon's sessions.
///
/// Browser sessions may have a profile (BridgeFuzz+Profiles.swift): `hotwire-native` (platform,
/// a path configuration given or fetched, tabs, bridge components) or `capacitor` (platform,
/// plugins, allowed hosts). Their pages send the profile's page events (hotwire.js's
/// `hotwire.message`, `bridge.message`, `bridge.ready`; capacitor.js's `capacitor.ready` and
/// `capacitor.call`), controllers its methods (`router.selectTab` by tab title, `bridge.reply`,
/// `capacitor.*`, `navigation.openUrl`, `app.pause`/`app.resume`), and the script playing the
/// browser answers its host work (`fetchPathConfiguration`, `readHistory`; a `reuseTab` as an
/// open); the invariants above hold for them as for any session.
///
/// An input whose first byte is odd runs with a routing configuration (`router`): router
/// methods, deep links, tabs, drawer and modal, and the one back, mixed in. One whose first byte
/// has bit 1 set (`quiet`) has an observer that hears every event but `stack.changed`: a session
/// nobody else watches then writes its stack only for replies that carry it, so the placeholders
/// `stackJSON` keeps from its last writing meet stacks changed several times in between.
enum BridgeFuzz {
    /// Limits small enough for the scripts to reach: `someURL` makes urls of up to 4 KiB, so
    /// some are over `maxURLBytes`, and a few long ones fill a session to `maxSessionBytes`
    /// before `maxStackDepth` stops it.
    static let configuration: BridgeConfiguration = {
        var c = BridgeConfiguration(
            engine: EngineConfiguration(foregroundTimeoutMs: 150, maxStackDepth: 8),
            maxSessions: 4, sessionIdleSeconds: 2)
        c.maxURLBytes = 2048
        c.maxSessionBytes = 6144
        return c
    }()

    /// The most bytes a session's stack JSON may take: every held byte escaped as `\u00XX` (six
    /// bytes each; the worst case of the JSON writer) plus the fields around each item.
    static let jsonBound = 6 * configuration.maxSessionBytes + configuration.engine.maxStackDepth * 256 + 64

    /// The app of routed runs: three tabs, a native modal cart, a native-only screen, a web
    /// product screen, the initial tab on back.
    static let router: Router = {
        let config = RouterConfig(
            webBase: "http://h/app/", ownOrigins: ["http://h"], externalLinks: .open, backBehavior: .initialTab,
            tabs: [TabConfig(name: "home", url: "os://home"), TabConfig(name: "search", url: "os://search"),
                   TabConfig(name: "account", url: "tt://account")],
            routes: [
                RouteConfig(name: "home", template: "home", tab: "home"),
                RouteConfig(name: "search", template: "search", tab: "search"),
                RouteConfig(name: "account", template: "account", native: "AccountScreen", tab: "account"),
                RouteConfig(name: "product", template: "products/:product_id", tab: "home"),
                RouteConfig(name: "cart", template: "cart", native: "CartScreen", modal: true),
                RouteConfig(name: "settings", template: "settings", native: "SettingsScreen", nativeOnly: true),
                RouteConfig(name: "help", template: "help/*topic"),
            ],
            nativeScreens: ["CartScreen", "SettingsScreen", "AccountScreen"],
            maxStackDepth: configuration.engine.maxStackDepth)
        do { return try Router(config: config) } catch { fuzzFailure("the fuzz router does not load: \(error)") }
    }()

    /// What a run reached (for the replay tests: enough of the protocol for the checks to mean
    /// something).
    struct Reach {
        var steps = 0
        /// Requests answered with a result, by method.
        var succeeded: [String: Int] = [:]
        /// Foregrounds removed by their fallback timer.
        var timeouts = 0
        /// Events the observer heard, by name (a profile's: its sessions were played).
        var heard: [String: Int] = [:]
    }

    /// Runs the script of `bytes` and checks everything after each step.
    @discardableResult
    static func run(_ bytes: UnsafeRawBufferPointer) -> Reach {
        var script = Script(bytes: bytes)
        var driver = Driver(seed: UInt64(bytes.count), routed: (bytes.first ?? 0) & 1 == 1, quiet: (bytes.first ?? 0) & 2 == 2)
        while !script.atEnd && driver.reach.steps < 400 {
            driver.step(&script)
            driver.reach.steps += 1
        }
        driver.finish()
        return driver.reach
    }
}

/// The input, read byte by byte (zeros once it runs out).
struct Script {
    let bytes: UnsafeRawBufferPointer
    var offset = 0

    var atEnd: Bool { offset >= bytes.count }

    mutating func byte() -> Int {
        guard offset < bytes.count else { return 0 }
        defer { offset += 1 }
        return Int(bytes[offset])
    }

    mutating func pick<T>(_ items: [T]) -> T { items[byte() % items.count] }

    /// A length-prefixed chunk of the input (raw frame bytes).
    mutating func chunk() -> [UInt8] {
        let n = min(byte() * 4 + byte() % 4, bytes.count - min(offset, bytes.count))
        defer { offset += n }
        return Array(bytes[offset..<(offset + n)])
    }
}

struct Driver {
    var bridge: Bridge<SeededRandom>
    var now: Int64 = 1_000_000
    var nextClient: UInt64 = 1
    var live: [ClientID] = []
    var closed: Set<ClientID> = []
    /// What the last step did (the frame, or the host's result), for the bounds' failures.
    var lastStep = ""
    var gone: Set<ClientID> = []
    var roles: [ClientID: String] = [:]
    var timers: [TimerKey: Int64] = [:]
    var nextID: Int64 = 1
    var sessions: [String] = []
    var claims: [(session: String, webview: String, token: String)] = []
    var buffer: [BridgeEffect] = []
    /// Browser sessions, the work the Bridge asked of their browser and not answered yet, the
    /// snapshots handed back per session, the most placeholders each ever had.
    var browserSessions: Set<String> = []
    var work: [HostWork] = []
    var snapshotsGiven: [String: Int] = [:]
    var placeholdersMade: [String: Int] = [:]
    /// Per connection, what its frames not answered yet are owed, in order.
    var owed: [ClientID: [Owed]] = [:]
    /// With a routing configuration.
    let routed: Bool
    /// A controller subscribed to every session from the start (never driven by the script).
    let observer = ClientID(1 << 40)
    /// Per session: is a foreground up, as the observer heard it.
    var foregroundUp: [String: Bool] = [:]
    var reach = BridgeFuzz.Reach()

    init(seed: UInt64, routed: Bool, quiet: Bool = false) {
        self.routed = routed
        bridge = Bridge(configuration: BridgeFuzz.configuration, router: routed ? BridgeFuzz.router : nil,
                        random: SeededRandom(seed: seed &+ 1))
        bridge.apply(.connected(observer, isLoopback: true), at: now)
        perform(sender: nil, frame: [])
        let events = Self.controllerEvents.subtracting(["stack.changed"]).sorted().map { JSONValue.string($0) }
        let subscribe = quiet ? JSONValue.object(["id": 2, "method": "session.subscribe", "params": ["events": .array(events)]]).jsonString
            : #"{"id":2,"method":"session.subscribe"}"#
        for (id, text) in [(1, #"{"id":1,"method":"hello","params":{"protocol":1,"role":"controller"}}"#),
                           (2, subscribe)] {
            owed[observer, default: []].append(.reply(.int(Int64(id))))
            bridge.apply(.frame(observer, text: Array(text.utf8)), at: now)
            let (reply, _) = perform(sender: observer, frame: Array(text.utf8))
            if reply?["result"] == nil { fuzzFailure("the observer's \(text) was refused: \(reply?.jsonString ?? "no reply")") }
        }
    }

    /// The end of a run: a fresh controller still gets an answer, and it lists the daemon's
    /// sessions.
    mutating func finish() {
        let c = ClientID(1 << 41)
        bridge.apply(.connected(c, isLoopback: true), at: now)
        perform(sender: nil, frame: [])
        var listed: JSONValue?
        for (id, text) in [(1, #"{"id":1,"method":"hello","params":{"protocol":1,"role":"controller"}}"#),
                           (2, #"{"id":2,"method":"session.list"}"#)] {
            owed[c, default: []].append(.reply(.int(Int64(id))))
            bridge.apply(.frame(c, text: Array(text.utf8)), at: now)
            let wasHeld = bridge.isHeld(c)
            listed = perform(sender: c, frame: Array(text.utf8), deferred: wasHeld).reply
        }
        let ids = listed?["result"]?["sessions"]?.arrayValue?.compactMap { $0["session"]?.stringValue }
        if ids != bridge.sessionIDs { fuzzFailure("a fresh session.list lists \(String(describing: ids)), the daemon has \(bridge.sessionIDs)") }
    }

    mutating func step(_ s: inout Script) {
        lastStep = "a step of the clock, the sweep, a connection or a disconnection"
        defer {
            // The host finishes the daemon's closes (a closed client sends nothing more).
            for c in live where closed.contains(c) { disconnect(c) }
            checkBounds()
        }
        let op = s.byte()
        switch op % 16 {
        case 0, 1:
            guard live.count < 12 else { return send(&s) }
            let c = ClientID(nextClient)
            nextClient += 1
            bridge.apply(.connected(c, isLoopback: s.byte() % 8 != 0), at: now)
            live.append(c)
            perform(sender: nil, frame: [])
        case 2:
            guard !live.isEmpty else { return }
            disconnect(s.pick(live))
        case 3:
            advance(ms: Int64(s.byte()) * 4)
        case 4:
            bridge.apply(.sweep, at: now)
            perform(sender: nil, frame: [])
        case 5, 6:
            host(&s)
        default:
            send(&s)
        }
    }

    /// The script plays the browser: answers one piece of work the Bridge asked for.
    mutating func host(_ s: inout Script) {
        guard !work.isEmpty else { return send(&s) }
        let w = work.remove(at: s.byte() % work.count)
        let fail = s.byte() % 8 == 0
        let result: HostResult
        switch w {
        case .openTab(let sid, let webview, let url, _, _, _), .reuseTab(let sid, let webview, _, let url, _):
            result = fail ? .tabFailed(session: sid, webview: webview, url: url, reason: "net::ERR_CONNECTION_REFUSED")
                : .tabOpened(session: sid, webview: webview, targetId: "T\(webview.number)", browserContextId: "C")
        case .takeSnapshot(let sid, let webview):
            snapshotsGiven[sid, default: 0] += 1
            result = .snapshotTaken(session: sid, webview: webview, image: fail ? nil : [0xFF, 0xD8, UInt8(s.byte()), 0xFF, 0xD9])
        case .evaluate(let r, _, _, _): result = .answered(r, fail ? .failed("boom") : .value(.int(Int64(s.byte()))))
        case .click(let r, _, _, _), .type(let r, _, _, _, _): result = .answered(r, fail ? .failed("no element") : .done)
        case .screenshot(let r, _, _): result = .answered(r, fail ? .failed("no tab") : .image([1, 2, 3]))
        default:
            // The profiles' (BridgeFuzz+Profiles.swift); keepTab, showTab, loadURL and the
            // like need no answer.
            guard let answer = profileHostResult(w, fail: fail, &s) else { return }
            result = answer
        }
        lastStep = "the host's \(result)"
        bridge.apply(.host(result), at: now)
        perform(sender: nil, frame: [])
        if s.byte() % 16 == 0 {
            // Things the browser reports by itself, on any session it may know.
            let sid = someSession(&s)
            let webview = ItemID.webview(s.byte() % 4 + 1)
            let unasked: HostResult = s.pick([
                .navigationStopped(NavigationStop(session: sid, webview: webview, url: someURL(&s))),
                .historyTraversed(session: sid, webview: webview),
                .urlChanged(session: sid, webview: webview, url: someURL(&s)),
                .browserCrashed(sessions: [sid]),
                // Answers nobody asked for (ignored).
                .historyRead(session: sid, webview: webview, canGoBack: true),
                .pathConfigurationFetched(session: sid, url: "http://h/config.json", .document(Self.hotwirePathConfiguration)),
            ])
            lastStep = "the host's \(unasked)"
            bridge.apply(.host(unasked), at: now)
            perform(sender: nil, frame: [])
        }
    }

    mutating func disconnect(_ c: ClientID) {
        owed[c] = nil
        live.removeAll { $0 == c }
        gone.insert(c)
        bridge.apply(.left(c), at: now)
        perform(sender: nil, frame: [])
    }

    mutating func advance(ms: Int64) {
        now += ms * 1000
        while let (key, due) = timers.min(by: { $0.value < $1.value }), due <= now {
            timers[key] = nil
            bridge.apply(.timerFired(key), at: due)
            perform(sender: nil, frame: [])
        }
    }

    mutating func send(_ s: inout Script) {
        guard !live.isEmpty else { return }
        let c = s.pick(live)
        let frame: [UInt8]
        switch s.byte() % 10 {
        case 0, 1: frame = s.chunk()
        case 2: frame = mistype(build(for: c, &s), &s)
        default: frame = build(for: c, &s)
        }
        // The whole Bridge before the frame (a value: the copy is independent; its effects were
        // drained by the last step, so a Bridge that only answered compares equal).
        let before = bridge
        let wasHeld = bridge.isHeld(c)
        // Answered in order: now, or once the browser is done with this connection.
        switch Self.rule(for: frame) {
        case .request(let id): owed[c, default: []].append(.reply(id))
        case .event: owed[c, default: []].append(.errorMaybe)
        case .ignoredBeforeHello: break
        }
        lastStep = "\(c)'s " + String(decoding: frame.prefix(300), as: UTF8.self).debugDescription
        bridge.apply(.frame(c, text: frame), at: now)
        let (reply, refused) = perform(sender: c, frame: frame,
                                       deferred: wasHeld || bridge.isHeld(c))
        if let reply, reply["result"] != nil, let sent = try? JSONParser.parse(frame), let method = sent["method"]?.stringValue {
            reach.succeeded[method, default: 0] += 1

            // A successful hello gives the client the role it asked for.
            if method == "hello", let role = sent["params"]?["role"]?.stringValue { roles[c] = role }
        }
        if let refused, bridge != before {
            fuzzFailure("a refused frame changed the daemon: \(String(decoding: frame.prefix(600), as: UTF8.self).debugDescription)\nreply: \(refused.jsonString)\n\(Self.difference(before, bridge, now: now))")
        }
    }

    /// What differs between two Bridges, for the failure message.
    static func difference(_ a: Bridge<SeededRandom>, _ b: Bridge<SeededRandom>, now: Int64) -> String {
        var a = a, b = b
        var parts: [String] = []
        if a.clients != b.clients { parts.append("clients: \(a.clients) -> \(b.clients)") }
        if a.sessions != b.sessions {
            parts.append("sessions: \(String(decoding: a.sessionListJSON(at: now), as: UTF8.self)) -> \(String(decoding: b.sessionListJSON(at: now), as: UTF8.self))")
            for sid in Set(a.sessionIDs).union(b.sessionIDs) where a.sessions[sid] != b.sessions[sid] {
                parts.append("session \(sid): \(String(describing: a.sessions[sid])) -> \(String(describing: b.sessions[sid]))")
            }
        }
        if a.rng != b.rng { parts.append("the random generator advanced") }
        if a.nextSessionSerial != b.nextSessionSerial || a.nextControllerNumber != b.nextControllerNumber {
            parts.append("counters: \(a.nextSessionSerial)/\(a.nextControllerNumber) -> \(b.nextSessionSerial)/\(b.nextControllerNumber)")
        }
        if a.sessionIDBySerial != b.sessionIDBySerial { parts.append("serials: \(a.sessionIDBySerial) -> \(b.sessionIDBySerial)") }
        if a.allSubscribers != b.allSubscribers { parts.append("subscribers to all: \(a.allSubscribers) -> \(b.allSubscribers)") }
        if a.effects != b.effects { parts.append("undrained effects: \(a.effects) -> \(b.effects)") }
        if a.held != b.held { parts.append("waiting connections: \(a.held) -> \(b.held)") }
        return parts.isEmpty ? "(no field differs: check Bridge ==)" : parts.joined(separator: "\n")
    }

    // MARK: Effects and the reply rule

    /// Performs one step's effects, checking them; returns the reply to `sender`, if any, and
    /// the error that refused the frame, if any (the reply of a request, or the error with id
    /// null that answers an event or a malformed frame).
    @discardableResult
    mutating func perform(sender: ClientID?, frame: [UInt8], deferred: Bool = false) -> (reply: JSONValue?, refused: JSONValue?) {
        bridge.drainEffects(into: &buffer)
        let what = String(decoding: frame.prefix(200), as: UTF8.self).debugDescription
        var toSender: [JSONValue] = []
        for effect in buffer {
            switch effect {
            case .send(let to, let bytes):
                if gone.contains(to) { fuzzFailure("sent to \(to) after its disconnect: \(what)") }
                if closed.contains(to) { fuzzFailure("sent to \(to) after its close: \(String(decoding: bytes.prefix(300), as: UTF8.self)) (in the step of \(what))") }
                guard let value = try? JSONParser.parse(bytes), case .object = value else {
                    fuzzFailure("sent a frame that is not a JSON object: \(String(decoding: bytes, as: UTF8.self))")
                }
                if let id = value["id"], !settle(to, id, what), to != sender {
                    fuzzFailure("a reply went to \(to), not to the sender: \(what)")
                }
                if to == sender { toSender.append(value) }
                if let error = value["error"] {
                    let code = error["code"]?.stringValue ?? ""
                    if ErrorCode(rawValue: code) == nil || code == "internal" { fuzzFailure("error code \(code.debugDescription): \(what)") }
                }
                learn(to, value)
                if to == observer { hear(value, what) }
            case .close(let to, let code, _):
                if closed.contains(to) { fuzzFailure("closed \(to) twice") }
                if code != 1000 { fuzzFailure("closed \(to) with \(code): \(what)") }
                if to == observer { fuzzFailure("closed the observer: \(what)") }
                closed.insert(to)
            case .schedule(let key, let ms):
                if timers[key] != nil { fuzzFailure("timer \(key) scheduled twice") }
                timers[key] = now + Int64(ms) * 1000
            case .cancel(let key):
                timers[key] = nil
            case .host(let w):
                work.append(w)
                if work.count > 64 { work.removeFirst() }
            }
        }
        checkBrowserRules(what)
        checkStructure(what)
        guard sender != nil, !deferred else { return (nil, nil) }
        let replies = toSender.filter { $0["id"] != nil }
        switch Self.rule(for: frame) {
        case .request(let id):
            if replies.count != 1 { fuzzFailure("\(replies.count) replies to \(what)") }
            if replies[0]["id"] != id { fuzzFailure("reply id \(replies[0]["id"]!.jsonString), expected \(id.jsonString): \(what)") }
            if toSender.first != replies[0] { fuzzFailure("something came before the reply: \(what)") }
            // (JSONValue is ExpressibleByNilLiteral: spell out the Optional's none.)
            let refused: JSONValue? = replies[0]["error"] != nil ? replies[0] : Optional<JSONValue>.none
            return (replies[0], refused)
        case .event:
            if replies.count > 1 || replies.contains(where: { $0["id"] != .null }) {
                fuzzFailure("an event got \(replies.map(\.jsonString)): \(what)")
            }
            return (nil, replies.first)
        case .ignoredBeforeHello:
            return (nil, nil)
        }
    }

    /// The events the observer hears (see the type's comment).
    mutating func hear(_ value: JSONValue, _ what: String) {
        guard let name = value["event"]?.stringValue else { return }
        if !Self.controllerEvents.contains(name) { fuzzFailure("controller event \(name): \(what)") }
        reach.heard[name, default: 0] += 1
        guard let sid = value["params"]?["session"]?.stringValue else { fuzzFailure("controller event \(name) without session: \(what)") }
        switch name {
        case "session.created":
            if foregroundUp[sid] != nil { fuzzFailure("session \(sid) created twice: \(what)") }
            if let kind = profileKind(of: sid) { reach.heard["session.created " + kind, default: 0] += 1 }
            foregroundUp[sid] = false
        case "foreground.shown":
            if foregroundUp[sid] != false { fuzzFailure("foreground shown over another in \(sid): \(what)") }
            foregroundUp[sid] = true
        case "foreground.removed":
            if foregroundUp[sid] != true { fuzzFailure("foreground removed when none was up in \(sid): \(what)") }
            foregroundUp[sid] = false
            if value["params"]?["reason"] == "timeout" { reach.timeouts += 1 }
        case "session.closed":
            if foregroundUp[sid] != false { fuzzFailure("session \(sid) closed with a foreground up: \(what)") }
            foregroundUp[sid] = nil
        default:
            if foregroundUp[sid] == nil { fuzzFailure("event \(name) of unknown session \(sid): \(what)") }
        }
    }

    /// The events the observer may hear: the Bridge's own `ControllerEventName`s, a capacitor
    /// session's (plugin calls and their answers, docs/CAPACITOR.md), a hotwire-native
    /// session's (docs/HOTWIRE.md), and `navigate`, which a navigation handler gets
    /// (`sendEvent`: no `ControllerEventName`).
    static let controllerEvents: Set<String> = Set([
        ControllerEventName.sessionCreated, .sessionClosed, .sessionLimit,
        .stackChanged, .webviewOpen, .webviewClosed, .webviewFailed, .externalOpen,
        .pageConnected, .pageDisconnected, .pwaNavigated, .pwaRendered, .foregroundShown, .foregroundRemoved, .appEvent,
        // The shell's duties (Bridge+Shell.swift).
        .webviewDialog, .webviewDialogClosed, .webviewCrashed, .webviewUnresponsive, .webviewResponsive,
        .webviewFileChooser, .webviewDownload, .browserCrashed,
        .capacitorCall, .capacitorResult, .capacitorReady,
        .hotwireMessage, .hotwirePathConfiguration, .bridgeMessage, .bridgeReady,
    ].map(\.name) + ["navigate"])

    /// Takes the frame `id` sent to `c` off what `c` is owed; false when `c` is owed nothing it
    /// answers. Replies keep the order of the frames: a reply with an id answers the first
    /// request owed (the events before it got nothing); an error with id null answers the first
    /// frame owed one with id null, or else an event before the first request owed. (Of events
    /// before a frame owed an error with id null either may be the one answered: the frame's
    /// error is taken, the events stay owed nothing or one error each.)
    mutating func settle(_ c: ClientID, _ id: JSONValue, _ what: String) -> Bool {
        guard var queue = owed[c] else { return false }
        defer { owed[c] = queue }
        let first = queue.firstIndex { $0 != .errorMaybe }
        if id != .null {
            guard let first else { return false }
            if queue[first] != .reply(id) { fuzzFailure("reply \(id.jsonString) to \(c) out of order: \(queue) owed: \(what)") }
            queue.removeSubrange(...first)
        } else if let first, queue[first] == .reply(.null) {
            queue.remove(at: first)
        } else if queue.first == .errorMaybe {
            queue.removeFirst()
        } else {
            return false
        }
        return true
    }

    /// The snapshot rule and the replies owed (see the type's comment).
    mutating func checkBrowserRules(_ what: String) {
        // (Plain sessions only: a profile's placeholders are its own. A hotwire-native session's
        // proposal goes ahead unpictured when nobody waits for it, and its tree's items, in
        // every tab and the modal, take placeholder ids from the engine's allocator.)
        for sid in browserSessions where bridge.sessions[sid]?.profile == nil {
            guard let engine = bridge.engine(of: sid) else { continue }
            let made = engine.stack.compactMap { item -> Int? in
                if case .placeholder(let p) = item { return Int(p.id.number) } else { return nil }
            }.max() ?? 0
            placeholdersMade[sid] = max(placeholdersMade[sid] ?? 0, made)
            if placeholdersMade[sid]! > snapshotsGiven[sid] ?? 0 {
                fuzzFailure("snapshot rule broken: browser session \(sid) made P\(placeholdersMade[sid]!) with \(snapshotsGiven[sid] ?? 0) snapshot(s) taken: \(what)")
            }
        }
        for c in live where !bridge.isHeld(c) {
            // Its frames are all handled: an event that got no error gets none.
            owed[c]?.removeAll { $0 == .errorMaybe }
            if !(owed[c] ?? []).isEmpty && !closed.contains(c) {
                fuzzFailure("\(c) waits for nothing but owes replies to \(owed[c]!): \(what)")
            }
        }
    }

    enum Rule {
        case request(JSONValue)
        case event
        case ignoredBeforeHello
    }

    /// What a frame must get back, judged from its bytes alone (contract section 2).
    static func rule(for bytes: [UInt8]) -> Rule {
        guard let value = try? JSONParser.parse(bytes), case .object(let o) = value else { return .request(.null) }
        let id: JSONValue = if case .int(let n)? = o["id"] { .int(n) } else { .null }
        if o["method"] != nil { return .request(id) }
        if o["event"] != nil && o["id"] == nil { return .event }
        return .request(id)
    }

    /// Learns sessions, claims and roles from what clients are sent.
    mutating func learn(_ to: ClientID, _ value: JSONValue) {
        if let result = value["result"] {
            if let role = result["role"]?.stringValue { roles[to] = role }
            if let sid = result["session"]?.stringValue {
                if !sessions.contains(sid) { sessions.append(sid) }
                if result["browser"] == true { browserSessions.insert(sid) }
                if let w = result["webview"]?.stringValue, let t = result["token"]?.stringValue { claims.append((sid, w, t)) }
            }
        }
        guard let params = value["params"] else { return }
        for candidate in [params, params["load"] ?? .null] {
            if let sid = candidate["session"]?.stringValue, let w = candidate["webview"]?.stringValue,
               let t = candidate["token"]?.stringValue {
                claims.append((sid, w, t))
            }
        }
        if claims.count > 64 { claims.removeFirst(claims.count - 64) }
        if sessions.count > 32 { sessions.removeFirst(sessions.count - 32) }
    }

}
