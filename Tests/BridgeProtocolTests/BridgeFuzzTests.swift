import Testing
@testable import BridgeProtocol

/// Thousands of random and mutated frames from pages and controllers, with connections coming
/// and going, time passing and idle sweeps. After every step: each request got exactly one
/// reply (first, with its id), nobody was sent anything after its close or disconnect, and the
/// sessions are well formed. At the end a fresh `session.list` still answers.
@Suite struct BridgeFuzzTests {
    @Test(arguments: [1, 2, 3, 4] as [UInt64])
    func randomAndMutatedFrames(_ seed: UInt64) {
        var f = Fuzzer(seed: seed)
        f.run(steps: 1200)
        for v in f.violations.prefix(20) { Issue.record("seed \(seed): \(v)") }
        #expect(f.violations.isEmpty)

        // Enough of the protocol was reached for the run to mean something.
        #expect(f.requests > 500, "requests: \(f.requests)")
        #expect(f.results > f.requests / 5, "results \(f.results) of \(f.requests) requests")
        for method in ["hello", "pwa-navigate", "pwa-rendered", "back", "session.create", "session.get",
                       "navigation.navigateToUrl", "navigation.back"] {
            #expect(f.succeeded[method, default: 0] > 0, "no successful \(method) (seed \(seed)): \(f.succeeded)")
        }
        #expect(f.timeouts > 0, "no foreground timed out")

        // A fresh controller still gets an answer, and it matches the daemon's sessions.
        let c = ClientID(1_000_000)
        f.h.bridge.connected(c, isLoopback: true, at: f.h.now)
        f.send(c, #"{"id":1,"method":"hello","params":{"protocol":1,"role":"controller"}}"#)
        let list = f.sendAndReply(c, #"{"id":2,"method":"session.list"}"#)
        let listed = list?["result"]?["sessions"]?.arrayValue?.compactMap { $0["session"]?.stringValue }
        #expect(listed == f.h.bridge.sessionIDs)
        #expect(f.violations.isEmpty)
    }

    /// The same with a routing configuration: router methods, deep links and tabs mixed in.
    @Test(arguments: [11, 12, 13] as [UInt64])
    func randomFramesWithARouter(_ seed: UInt64) {
        var f = Fuzzer(seed: seed, router: RouterFixture.router(nativeProduct: false, maxDepth: 10))
        f.run(steps: 1200)
        for v in f.violations.prefix(20) { Issue.record("seed \(seed): \(v)") }
        #expect(f.violations.isEmpty)
        #expect(f.requests > 500, "requests: \(f.requests)")
        for method in ["hello", "pwa-navigate", "router.get", "router.perform", "deeplink.open"] {
            #expect(f.succeeded[method, default: 0] > 0, "no successful \(method) (seed \(seed)): \(f.succeeded), refused: \(f.refusedBy)")
        }
    }
}

/// What a frame must get back, judged from its bytes alone (section 2).
enum ReplyRule: Equatable {
    /// A request or a bad frame: exactly one reply with this id, before anything else.
    case one(JSONValue)
    /// An event: no reply; at most one error with id null (its params were bad).
    case event
}

struct Fuzzer {
    var h: BridgeHarness
    var rng: SeededRandom
    let configuration: BridgeConfiguration
    var observer: ClientID
    /// Connected and not closed: may send.
    var live: [ClientID] = []
    /// Closed by the daemon, not yet disconnected by the host.
    var closing: [ClientID] = []
    var gone: Set<ClientID> = []
    /// Every claim ever handed out, stale ones included.
    var claims: [(session: String, webview: String, token: String)] = []
    var knownSessions: [String] = []
    var nextID: Int64 = 1
    /// Per session: is a foreground up, as the observer heard it.
    var foregroundUp: [String: Bool] = [:]

    var violations: [String] = []
    var requests = 0
    var results = 0
    var timeouts = 0
    var succeeded: [String: Int] = [:]
    /// Refusals by method and error code (`router.selectTab invalid-params`).
    var refusedBy: [String: Int] = [:]

    let routed: Bool

    init(seed: UInt64, router: Router? = nil) {
        configuration = BridgeConfiguration(
            engine: EngineConfiguration(foregroundTimeoutMs: 150, maxStackDepth: 10),
            maxSessions: 6, sessionIdleSeconds: 2)
        h = BridgeHarness(configuration: configuration, router: router, seed: seed)
        routed = router != nil
        rng = SeededRandom(seed: seed &* 0x9E37_79B9 &+ 17)
        observer = ClientID(999_999)
        h.bridge.connected(observer, isLoopback: true, at: h.now)
        send(observer, #"{"id":1,"method":"hello","params":{"protocol":1,"role":"controller"}}"#)
        send(observer, #"{"id":2,"method":"session.subscribe"}"#)
        h.nextClient = 1
    }

    // MARK: Randomness

    mutating func below(_ n: Int) -> Int { Int(rng.next() % UInt64(max(n, 1))) }
    mutating func chance(_ percent: Int) -> Bool { below(100) < percent }
    mutating func pick<T>(_ items: [T]) -> T { items[below(items.count)] }

    // MARK: The run

    mutating func run(steps: Int) {
        for _ in 0..<steps {
            let roll = below(100)
            if roll < 6 || live.isEmpty {
                if live.count < 14 {
                    let c = ClientID(h.nextClient)
                    h.nextClient += 1
                    h.bridge.connected(c, isLoopback: chance(92), at: h.now)
                    check(h.bridge.drainEffects(), sender: nil, rule: nil)
                    live.append(c)
                }
            } else if roll < 9 {
                disconnect(live[below(live.count)])
            } else if roll < 16 {
                advance(ms: Int64(below(250)))
            } else if roll < 18 {
                h.bridge.sweep(at: h.now)
                check(h.bridge.drainEffects(), sender: nil, rule: nil)
            } else {
                // Pages speak more than controllers, as in a real app.
                let pages = live.filter { if case .page? = h.bridge.clients[$0]?.role { true } else { false } }
                let c = !pages.isEmpty && chance(60) ? pick(pages) : pick(live)
                let text = chance(65) ? generate(for: c) : mutate(generate(for: c))
                send(c, bytes: text)
            }
            // The host finishes closes some time later.
            for c in closing where chance(40) { disconnect(c) }
            checkStructure()
        }
    }

    mutating func disconnect(_ c: ClientID) {
        live.removeAll { $0 == c }
        closing.removeAll { $0 == c }
        h.bridge.disconnected(c, at: h.now)
        gone.insert(c)
        check(h.bridge.drainEffects(), sender: nil, rule: nil)
    }

    mutating func advance(ms: Int64) {
        h.now += ms * 1000
        while let (key, due) = h.timers.min(by: { $0.value < $1.value }), due <= h.now {
            h.timers[key] = nil
            h.bridge.timerFired(key, at: due)
            check(h.bridge.drainEffects(), sender: nil, rule: nil)
        }
    }

    mutating func send(_ c: ClientID, _ text: String) {
        send(c, bytes: Array(text.utf8))
    }

    @discardableResult
    mutating func sendAndReply(_ c: ClientID, _ text: String) -> JSONValue? {
        send(c, bytes: Array(text.utf8))
    }

    @discardableResult
    mutating func send(_ c: ClientID, bytes: [UInt8]) -> JSONValue? {
        let rule = Self.rule(for: bytes)
        let before = h.bridge
        h.bridge.received(c, text: bytes, at: h.now)
        let effects = h.bridge.drainEffects()
        let reply = check(effects, sender: c, rule: rule, frame: bytes)
        if case .one = rule, reply?["error"] != nil, h.bridge != before {
            violations.append("a refused frame changed the Bridge: \(String(decoding: bytes.prefix(160), as: UTF8.self)) -> \(reply!)")
        }
        return reply
    }

    static func rule(for bytes: [UInt8]) -> ReplyRule {
        guard let value = try? JSONParser.parse(bytes), case .object(let o) = value else { return .one(.null) }
        let id: JSONValue = if case .int(let n)? = o["id"] { .int(n) } else { .null }
        if o["method"] != nil { return .one(id) }
        if o["event"] != nil && o["id"] == nil { return .event }
        return .one(id)
    }

    // MARK: Checking effects

    /// Checks and applies one step's effects; returns the reply to `sender`, if any.
    @discardableResult
    mutating func check(_ effects: [BridgeEffect], sender: ClientID?, rule: ReplyRule?, frame: [UInt8] = []) -> JSONValue? {
        let what = String(decoding: frame.prefix(160), as: UTF8.self)
        var closedNow: Set<ClientID> = []
        var toSender: [JSONValue] = []
        for effect in effects {
            switch effect {
            case .send(let to, let bytes):
                if gone.contains(to) { violations.append("sent to \(to) after its disconnect: \(what)") }
                if closing.contains(to) || closedNow.contains(to) || h.closed[to] != nil {
                    violations.append("sent to \(to) after its close: \(what)")
                }
                guard let value = try? JSONParser.parse(bytes), case .object = value else {
                    violations.append("sent a frame that is not a JSON object: \(what)")
                    continue
                }
                if to == sender { toSender.append(value) }
                if value["id"] != nil && to != sender {
                    violations.append("a reply went to \(to), not the sender \(String(describing: sender)): \(what)")
                }
                observe(to, value)
            case .close(let to, let code, _):
                if code != 1000 { violations.append("closed \(to) with \(code)") }
                if closedNow.contains(to) || h.closed[to] != nil { violations.append("closed \(to) twice") }
                closedNow.insert(to)
                h.closed[to] = code
            case .schedule(let key, let ms):
                if h.timers[key] != nil { violations.append("timer \(key) scheduled twice") }
                h.timers[key] = h.now + Int64(ms) * 1000
            case .host:
                break  // browser sessions only; none here
            case .cancel(let key):
                h.timers[key] = nil
            }
        }
        for c in closedNow {
            live.removeAll { $0 == c }
            if !closing.contains(c) { closing.append(c) }
        }
        guard sender != nil, let rule else { return nil }
        let replies = toSender.filter { $0["id"] != nil }
        switch rule {
        case .one(let id):
            requests += 1
            if replies.count != 1 {
                violations.append("\(replies.count) replies to \(what)")
            } else if replies[0]["id"] != id {
                violations.append("reply id \(replies[0]["id"] ?? .null), expected \(id): \(what)")
            } else if toSender.first != replies[0] {
                violations.append("an event came before the reply: \(what)")
            }
            if let reply = replies.first, reply["result"] != nil {
                results += 1
                if let v = try? JSONParser.parse(frame), let m = v["method"]?.stringValue { succeeded[m, default: 0] += 1 }
            } else if let reply = replies.first {
                let code = reply["error"]?["code"]?.stringValue ?? ""
                if let v = try? JSONParser.parse(frame), let m = v["method"]?.stringValue { refusedBy[m + " " + code, default: 0] += 1 }
                if ErrorCode(rawValue: code) == nil || code == "internal" {
                    violations.append("error code \(code): \(what)")
                }
            }
            return replies.first
        case .event:
            if replies.contains(where: { $0["id"] != .null }) || replies.count > 1 {
                violations.append("an event got \(replies): \(what)")
            }
            return nil
        }
    }

    /// Learns sessions and claims from what clients are sent; checks controller events.
    mutating func observe(_ to: ClientID, _ value: JSONValue) {
        if let result = value["result"] {
            if let sid = result["session"]?.stringValue {
                knownSessions.append(sid)
                if let w = result["webview"]?.stringValue, let t = result["token"]?.stringValue { claims.append((sid, w, t)) }
            }
        }
        guard let name = value["event"]?.stringValue, let params = value["params"] else { return }
        let loadTarget: JSONValue? = name == "load" ? params : params["load"]
        if let load = loadTarget,
           let sid = load["session"]?.stringValue, let w = load["webview"]?.stringValue, let t = load["token"]?.stringValue {
            claims.append((sid, w, t))
        }
        if name == "webview.open", let sid = params["session"]?.stringValue, let w = params["webview"]?.stringValue,
           let t = params["token"]?.stringValue {
            claims.append((sid, w, t))
        }
        guard case .controller? = h.bridge.clients[to]?.role else { return }
        let controllerEvents: Set<String> = ["session.created", "session.closed", "stack.changed", "foreground.shown",
                                             "foreground.removed", "pwa-rendered", "webview.open", "webview.closed",
                                             "page.connected", "page.disconnected", "navigate", "pwa-navigated", "app.event", "external.open"]
        if !controllerEvents.contains(name) { violations.append("controller event \(name)") }
        guard let sid = params["session"]?.stringValue else {
            violations.append("controller event \(name) without session")
            return
        }
        guard to == observer else { return }
        switch name {
        case "session.created":
            if foregroundUp[sid] != nil { violations.append("session \(sid) created twice") }
            foregroundUp[sid] = false
        case "foreground.shown":
            if foregroundUp[sid] != false { violations.append("foreground shown over another in \(sid)") }
            foregroundUp[sid] = true
        case "foreground.removed":
            if foregroundUp[sid] != true { violations.append("foreground removed when none was up in \(sid)") }
            foregroundUp[sid] = false
            if params["reason"] == "timeout" { timeouts += 1 }
        case "session.closed":
            if foregroundUp[sid] != false { violations.append("session \(sid) closed with a foreground up") }
            foregroundUp[sid] = nil
        default:
            if foregroundUp[sid] == nil { violations.append("event \(name) of unknown session \(sid)") }
        }
    }

    /// The engines' and the bridge's invariants.
    mutating func checkStructure() {
        let b = h.bridge
        if b.sessionCount > configuration.maxSessions { violations.append("\(b.sessionCount) sessions") }
        if Set(b.sessionIDs) != Set(foregroundUp.keys) { violations.append("the observer's sessions differ from the daemon's") }
        var liveTimers: Set<TimerKey> = []
        for s in b.sessions.all {
            let sid = s.id
            let stack = s.engine.stack
            let ids = stack.map(\.id)
            if stack.isEmpty || stack.count > configuration.engine.maxStackDepth { violations.append("\(sid): \(stack.count) items") }
            if Set(ids).count != ids.count { violations.append("\(sid): duplicate ids \(ids)") }
            if stack.last?.isPlaceholder == true { violations.append("\(sid): a placeholder on top") }
            for (i, item) in stack.enumerated() {
                guard case .placeholder(let p) = item, i + 1 < stack.count else { continue }
                let above = stack[i + 1]
                let ok = above.id == p.of || { if case .placeholder(let q) = above { return q.of == p.of } else { return false } }()
                if !ok { violations.append("\(sid): \(p.id) of \(p.of) is under \(above.id)") }
            }
            if let fg = s.engine.foreground {
                if fg.webview != stack.last?.id { violations.append("\(sid): foreground over \(fg.webview), top \(String(describing: stack.last?.id))") }
                liveTimers.insert(TimerKey(session: s.serial, token: fg.timer))
                if foregroundUp[sid] != true { violations.append("\(sid): a foreground the observer never heard of") }
            } else if foregroundUp[sid] == true {
                violations.append("\(sid): the observer thinks a foreground is up")
            }
            for w in s.engine.webViews {
                let page = s.pages[w.id]
                if w.connected != (page != nil) { violations.append("\(sid): \(w.id) connected \(w.connected), page \(String(describing: page))") }
                if let page {
                    guard case .page(let psid, let pw)? = b.clients[page]?.role, psid == sid, pw == w.id else {
                        violations.append("\(sid): \(w.id)'s page \(page) does not speak for it")
                        continue
                    }
                }
            }
            // (With a routing configuration a page may wait on a web view of an inactive stack.)
            for (w, _) in s.pages where s.engine.webView(w) == nil && s.tree?.locate(w) == nil {
                violations.append("\(sid): a page for \(w), on no stack")
            }
        }
        if Set(h.timers.keys) != liveTimers { violations.append("timers \(h.timers.keys.sorted { $0.description < $1.description }) for foregrounds \(liveTimers)") }
    }

    // MARK: Frames

    mutating func someSession() -> String {
        let current = h.bridge.sessionIDs
        if !current.isEmpty && chance(85) { return pick(current) }
        if !knownSessions.isEmpty && chance(70) { return pick(knownSessions) }
        return pick(["s-0000000000000000", "", "W1", "s-"])
    }

    mutating func someURL() -> String {
        if routed && chance(60) {
            if chance(40) { return "https://shop.example/app/home" }  // a session with the app's tabs
            return pick(["https://shop.example/app/search", "tt://products/\(below(50))", "tt://cart", "tt://settings", "os://search", "tt://account",
                         "https://shop.example/app/products/\(below(9))/reviews", "https://elsewhere.example/", "tt://nope/x"])
        }
        return pick(["http://h/app/", "http://h/app/a", "http://h/app/b?x=1", "http://h/c.html#f", "tt://native/1", "",
              "http://h/app/?bridge_session=s-1&bridge_token=t", "http://h/ü/ẞ", "http://h/\(below(1000))"])
    }

    mutating func someEvents() -> JSONValue {
        let names: [JSONValue] = ["stack.changed", "foreground.shown", "foreground.removed", "pwa-rendered", "session.closed", "nope"]
        return .array((0..<below(4)).map { _ in pick(names) })
    }

    mutating func newID() -> Int64 {
        nextID += 1
        return chance(3) ? pick([0, -1, nextID - 1, 1 << 53]) : nextID
    }

    /// A well-formed frame that makes sense for `c`'s role most of the time.
    mutating func generate(for c: ClientID) -> [UInt8] {
        let role = h.bridge.clients[c]?.role
        var params: JSONObject = [:]
        var name: String
        var asEvent = false
        switch role {
        case .fresh?, nil:
            name = chance(85) ? "hello" : pick(["ping", "session.list", "pwa-navigate"])
            params = ["protocol": 1]
            if chance(75) {
                params["role"] = "page"
                if !claims.isEmpty && chance(60) {
                    let claim = chance(80) ? currentClaim() ?? pick(claims) : pick(claims)
                    params["session"] = .string(claim.session)
                    params["webview"] = .string(claim.webview)
                    params["token"] = .string(chance(90) ? claim.token : "bad")
                }
                if chance(70) { params["url"] = .string(someURL()) }
            } else {
                params["role"] = "controller"
                var handles: [JSONValue] = []
                if chance(25) { handles.append("navigate") }
                if chance(25) { handles.append("webview.open") }
                if !handles.isEmpty { params["handles"] = .array(handles) }
            }
            if chance(3) { asEvent = true }
        case .page?, .detached?:
            name = pick(["pwa-navigate", "pwa-navigate", "pwa-navigate", "pwa-rendered", "pwa-rendered", "pwa-rendered",
                         "back", "back", "navigate", "ping", "pwa-navigated", "cart.add", "hello", "session.list"]
                        + (routed ? ["deeplink.open"] : []))
            switch name {
            case "deeplink.open": params["url"] = .string(someURL())
            case "pwa-navigate":
                if chance(80) { params["url"] = .string(someURL()) }
                if chance(30) { params["title"] = .string("T\(below(9))") }
            case "navigate", "pwa-navigated": params["url"] = .string(someURL())
            case "cart.add": params["sku"] = .int(Int64(below(100)))
            case "hello": params = ["protocol": 1, "role": "page"]
            default: break
            }
            asEvent = name == "pwa-navigated" || name == "cart.add" || chance(30)
        case .controller?:
            name = pick(["session.create", "session.list", "session.get", "session.close", "session.subscribe",
                         "session.unsubscribe", "navigation.navigateToUrl", "navigation.navigateToUrl", "navigation.back",
                         "navigation.back", "navigation.canGoBack", "navigation.popToRoot", "ping", "pwa-navigate", "bogus"]
                        + (routed ? ["router.get", "router.perform", "router.perform", "router.selectTab", "deeplink.open",
                                     "router.resolve"] : []))
            switch name {
            case "router.get":
                params["session"] = .string(someSession())
            case "router.perform":
                params["session"] = .string(someSession())
                params["action"] = pick(["goBack", "popToTop", "resetHome", "toggleDrawer", "bogus",
                                         ["type": "push", "url": .string(someURL())],
                                         ["type": "navigate", "url": .string(someURL())],
                                         ["type": "replace", "url": .string(someURL())],
                                         ["type": "pop", "count": .int(Int64(below(3)))]])
            case "router.selectTab":
                params["session"] = .string(someSession())
                params["tab"] = .string(pick(["home", "search", "account", "nope"]))
            case "deeplink.open":
                params["session"] = .string(someSession())
                params["url"] = .string(someURL())
                if chance(30) { params["context"] = ["n": .int(Int64(below(9)))] }
            case "router.resolve":
                params["url"] = .string(someURL())
            case "session.create": if chance(70) { params["url"] = .string(someURL()) }
            case "session.close": if chance(25) { params["session"] = .string(someSession()) } else { name = "session.get"; fallthrough }
            case "session.get", "navigation.back", "navigation.canGoBack", "navigation.popToRoot":
                params["session"] = .string(someSession())
            case "session.subscribe", "session.unsubscribe":
                if chance(50) { params["session"] = .string(someSession()) }
                if chance(30) { params["events"] = someEvents() }
            case "navigation.navigateToUrl":
                params["session"] = .string(someSession())
                params["url"] = .string(someURL())
            default: break
            }
            asEvent = chance(3)
        }
        var frame: JSONObject = [:]
        if asEvent {
            frame["event"] = .string(name)
        } else {
            frame["id"] = .int(newID())
            frame["method"] = .string(name)
        }
        if !params.isEmpty || chance(50) { frame["params"] = .object(params) }
        return Array(JSONValue.object(frame).jsonString.utf8)
    }

    mutating func currentClaim() -> (session: String, webview: String, token: String)? {
        let sessions = h.bridge.sessions.all.sorted { $0.serial < $1.serial }
        guard !sessions.isEmpty else { return nil }
        let s = pick(sessions)
        guard !s.engine.webViews.isEmpty else { return nil }
        let w = pick(s.engine.webViews)
        return (s.id, w.id.description, w.token)
    }

    mutating func someValue() -> JSONValue {
        pick([.null, true, 0, -1, 1.5, 1e300, "", "x", "W1", [], [1, "a"], [:], ["a": [:]],
              .int(Int64.max), .int(Int64.min), .int(1 << 53 + 1), .string(String(repeating: "z", count: 300))])
    }

    /// A broken version of `bytes`: byte flips, truncations, insertions, or wrong types.
    mutating func mutate(_ bytes: [UInt8]) -> [UInt8] {
        var b = bytes
        switch below(9) {
        case 0:  // flip bytes
            for _ in 0...below(3) where !b.isEmpty { b[below(b.count)] = UInt8(truncatingIfNeeded: rng.next()) }
        case 1:  // truncate
            b = Array(b.prefix(below(b.count)))
        case 2:  // insert a byte
            b.insert(pick(Array("{}[]\",:0-e.\\ \u{0}".utf8) + [0xFF, 0xC3]), at: below(b.count + 1))
        case 3:  // delete a range
            if !b.isEmpty {
                let start = below(b.count)
                b.removeSubrange(start..<min(b.count, start + 1 + below(6)))
            }
        case 4:  // garbage
            b = (0..<below(40)).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
        default:  // wrong types and missing or extra members
            guard case .object(var o)? = try? JSONParser.parse(b) else { return b }
            switch below(7) {
            case 0: o["id"] = chance(30) ? nil : someValue()
            case 1: o["method"] = chance(30) ? nil : someValue()
            case 2: o["params"] = someValue()
            case 3: o["event"] = chance(50) ? .string("back") : someValue()
            default:
                if case .object(var p)? = o["params"], let key = p.keys.isEmpty ? nil : pick(p.keys) {
                    p[key] = someValue()
                    o["params"] = .object(p)
                } else {
                    var p = o["params"]?.objectValue ?? [:]
                    p[pick(["protocol", "role", "session", "webview", "token", "url", "handles", "events", "title"])] = someValue()
                    o["params"] = .object(p)
                }
            }
            b = Array(JSONValue.object(o).jsonString.utf8)
        }
        return b
    }
}
