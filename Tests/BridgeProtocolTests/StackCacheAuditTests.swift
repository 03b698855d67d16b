import Testing
@testable import BridgeProtocol

/// The speed steps of 2026-11-26 evening (c2e8aa4, 4c7b9ca, 2798972, a37757f) must change no
/// behaviour. Two checks that would fail if they did:
///
/// - the cheap hashes of daemon-numbered keys (`NumberHash`) agree with `==` for every field `==`
///   compares, and use the table's seed;
/// - a Bridge whose caches are kept (the placeholders at the bottom copied from the last
///   writing, the slot and serial hint of a page's session) answers every input of seeded random
///   sequences with the same effects, byte for byte, and ends in the same state as a Bridge whose
///   caches and hints are dropped before every input (every stack written from the engine's items, as
///   `writeStack` does); and at every step the stack `stackJSON` would send equals `writeStack`
///   of the engine's items. The sequences mix pages (pwa-navigate, back, navigate, history
///   claims of covered web views), controllers (`navigation.*`, `session.get`, sessions closed
///   and created, subscribed to and not: a session nobody watches writes no stack between two
///   replies) and, routed, router actions and tabs; and, on hotwire-native browser sessions
///   (the browser played by the test), Turbo's proposals, visits, redirects, failures, modals
///   and native screens.
@Suite struct StackCacheAuditTests {
    // MARK: Hashes of daemon-numbered keys

    static let seeds: [Int] = {
        var rng = SeededRandom(seed: 0x5EED)
        return [0, 1, -1, 2, Int.max, Int.min] + (0..<10).map { _ in Int(bitPattern: UInt(rng.next())) }
    }()

    /// Equal keys hash equal under every seed (each built two ways); a key hashes differently
    /// under different seeds (the seed is mixed in, not ignored); distinct keys of a sample
    /// (every field `==` compares varied) hash differently under one seed.
    @Test func numberHashesAgreeWithEquality() {
        func check<K: Hashable>(_ pairs: [(K, K)], _ name: String) {
            for (a, b) in pairs {
                #expect(a == b)
                for seed in Self.seeds {
                    #expect(a._rawHashValue(seed: seed) == b._rawHashValue(seed: seed), "\(name) \(a) seed \(seed)")
                }
                #expect(Set(Self.seeds.map { a._rawHashValue(seed: $0) }).count == Self.seeds.count, "\(name) \(a): the seed is not used")
            }
            let keys = pairs.map(\.0)
            for seed in Self.seeds.prefix(4) {
                #expect(Set(keys.map { $0._rawHashValue(seed: seed) }).count == Set(keys).count, "\(name): distinct keys collide under seed \(seed)")
            }
        }
        let raws: [UInt64] = [0, 1, 2, 3, 255, 256, 1 << 32, 1 << 40, 1 << 41, UInt64.max, UInt64.max - 1]
        check(raws.map { (ClientID($0), ClientID(UInt64("\($0)")!)) }, "ClientID")
        var items: [(ItemID, ItemID)] = []
        for kind in ItemID.Kind.allCases {
            for n in [1, 2, 3, 4, 5, 8, 12, 999, 123_456_789_012_345] {
                items.append((ItemID(kind, n), ItemID(parsing: "\(kind.letter)\(n)")!))
            }
        }
        check(items, "ItemID")
        var timers: [(TimerKey, TimerKey)] = []
        for session in [0, 1, 2, 3, 1000, UInt64.max] as [UInt64] {
            for token in [1, 2, 3, 4, 1 << 20] as [UInt64] {
                timers.append((TimerKey(session: session, token: TimerToken(token)),
                               TimerKey(session: UInt64("\(session)")!, token: TimerToken(UInt64("\(token)")!))))
            }
        }
        check(timers, "TimerKey")
        // Tables keyed by them still find every key (and no removed one) after growth and removal.
        var table: [ItemID: Int] = [:]
        for n in 1...5000 { for kind in ItemID.Kind.allCases { table[ItemID(kind, n)] = n } }
        for n in stride(from: 1, through: 5000, by: 2) { table[.placeholder(n)] = nil }
        for n in 1...5000 {
            #expect(table[.webview(n)] == n && table[.native(n)] == n)
            #expect(table[.placeholder(n)] == (n % 2 == 0 ? n : nil))
        }
    }

    // MARK: A page's session found by serial in the hinted slot

    /// A page waiting on a web view of an inactive tab keeps its role when its session closes
    /// (the engine closes the pages of its own stack only). Its next messages find the hinted
    /// slot holding another session, made after it: that session's serial is not the page's,
    /// so the page is answered `unknown-session` and the new session does not change (a hint
    /// taken on the slot alone would run its `pwa-navigate` on the new session's W1).
    @Test func aPageOfAClosedSessionNeverReachesTheNextSessionInItsSlot() throws {
        var h = BridgeHarness(router: BridgeFuzz.router)
        let ctl = h.controller(subscribeAll: true)
        let created = h.request(ctl, "session.create", ["url": "http://h/app/home"])["result"]
        let sid = try #require(created?["session"]?.stringValue)
        let token = try #require(created?["token"]?.stringValue)
        let first = h.claimed(sid, "W1", token, url: "http://h/app/home")
        #expect(h.request(first.client, "ping")["result"] != nil)  // the hint is taken
        #expect(h.request(ctl, "router.selectTab", ["session": .string(sid), "tab": "search"])["result"] != nil)
        let waiting = h.claimed(sid, "W1", token, url: "http://h/app/home")
        #expect(h.request(waiting.client, "ping")["result"] != nil)  // its hint: the session's slot and serial
        let slot = try #require(h.bridge.clients[waiting.client]?.sessionSlot)
        #expect(h.request(ctl, "session.close", ["session": .string(sid)])["result"] != nil)
        let next = try #require(h.request(ctl, "session.create", ["url": "http://h/app/home"])["result"]?["session"]?.stringValue)
        #expect(h.bridge.sessions.slot(of: next) == slot, "the new session takes the freed slot")
        #expect(h.bridge.clients[waiting.client]?.role == .detached(session: sid, webview: .webview(1), why: "its session was closed"))
        #expect(h.closed[waiting.client] == 1000)
        // `session.close` now closes such a page too; before, its role kept naming the closed
        // session. A page in that state (its hint still the slot and serial) is made by hand:
        // it must not reach the session now in that slot.
        h.bridge.clients[waiting.client]?.role = .page(session: sid, webview: .webview(1))
        h.closed[waiting.client] = nil
        let before = try #require(h.bridge.sessions[next])
        for method in ["ping", "pwa-navigate", "back", "navigate"] {
            let reply = h.request(waiting.client, method, ["url": "http://h/app/x"])
            #expect(reply["error"]?["code"] == "unknown-session", "\(method): \(reply)")
            #expect(reply["error"]?["message"] == .string("no session \"\(sid)\""))
        }
        h.event(waiting.client, "pwa-navigate", ["url": "http://h/app/y"])
        #expect(h.bridge.sessions[next] == before, "the session in the page's old slot changed")
    }

    /// `session.close`: every page of the session gets `closed` and is closed with 1000, the
    /// page of a web view in an inactive tab (not on the engine's stack) too.
    @Test func closingASessionClosesThePagesOfItsInactiveTabs() throws {
        var h = BridgeHarness(router: BridgeFuzz.router)
        let ctl = h.controller(subscribeAll: true)
        let created = h.request(ctl, "session.create", ["url": "http://h/app/home"])["result"]
        let sid = try #require(created?["session"]?.stringValue)
        let token = try #require(created?["token"]?.stringValue)
        let active = h.claimed(sid, "W1", token, url: "http://h/app/home")
        #expect(h.request(ctl, "router.selectTab", ["session": .string(sid), "tab": "search"])["result"] != nil)
        let inactive = h.claimed(sid, "W1", token, url: "http://h/app/home")
        #expect(h.bridge.sessions[sid]?.engine.webView(.webview(1)) == nil, "W1 is not on the active stack")
        #expect(h.closed[active.client] == 1000, "the older claim was replaced")
        h.inbox[inactive.client] = []
        #expect(h.request(ctl, "session.close", ["session": .string(sid)])["result"] != nil)
        let told = h.inbox[inactive.client, default: []].filter { $0["event"] == "closed" }
        #expect(told.map { $0["params"]?["reason"] } == [.string("session-closed")])
        #expect(h.closed[inactive.client] == 1000)
        #expect(h.bridge.clients[inactive.client]?.role == .detached(session: sid, webview: .webview(1), why: "its session was closed"))
    }

    // MARK: The cached stack against a fresh writing

    @Test(arguments: 1...8 as ClosedRange<UInt64>)
    func cachedStacksMatchAFreshWriting(_ seed: UInt64) {
        var run = Lockstep(seed: seed, routed: seed % 2 == 0)
        for _ in 0..<600 where !run.failed { run.step() }
        guard !run.failed else { return }
        #expect(run.stacksCarried > 100, "seed \(seed): \(run.stacksCarried) stacks carried")
        #expect(run.keptBottoms > 10, "seed \(seed): \(run.keptBottoms) stacks with placeholders at the bottom kept")
        #expect(run.historyCuts + run.swaps > 0, "seed \(seed): no swap and no history cut")
    }

    /// The same on hotwire-native browser sessions (the browser played by the test): their
    /// placeholders are drawn for the navigator's screens and kept for a screen while it stays
    /// covered (`HotwireState.items`), and their stacks are adopted whole from the navigator.
    @Test(arguments: 1...6 as ClosedRange<UInt64>)
    func hotwireStacksMatchAFreshWriting(_ seed: UInt64) {
        var run = Lockstep(seed: seed, routed: false, hotwire: true)
        for _ in 0..<600 where !run.failed { run.step() }
        guard !run.failed else { return }
        #expect(run.stacksCarried > 30, "seed \(seed): \(run.stacksCarried) stacks carried")
        #expect(run.keptBottoms > 10, "seed \(seed): \(run.keptBottoms) stacks with placeholders at the bottom")
    }
}

extension Bridge {
    /// Drops every session's cached stack (the bytes, their version, the kept placeholders):
    /// the next stack is written from the engine's items; and every page's hint of its
    /// session's slot and serial: the next message finds its session by the id its role names.
    mutating func forgetStackCaches() {
        for c in Array(clients.keys) {
            clients[c]?.sessionSlot = -1
            clients[c]?.sessionSerial = 0
        }
        for sid in sessionIDs {
            withSession(sid) { _, s in
                s.stackCache = []
                s.stackCacheVersion = .max
                s.stackCacheItems = []
            }
        }
    }
}

/// Two Bridges fed the same inputs: `bridge` as the daemon runs it, `reference` with its stack
/// caches dropped before every input.
private struct Lockstep {
    var bridge: Bridge<SeededRandom>
    var reference: Bridge<SeededRandom>
    var rng: SeededRandom
    let routed: Bool
    /// hotwire-native browser sessions; the test answers their host work.
    let hotwire: Bool
    var work: [HostWork] = []
    var now: Int64 = 1_000_000
    var nextClient: UInt64 = 1
    var pages: [ClientID] = []
    var controller = ClientID(1 << 40)
    var claims: [(session: String, webview: String, token: String)] = []
    /// Urls placeholders were made with (a history claim with one of them cuts the stack there).
    var urls: [String] = []
    var timers: [TimerKey: Int64] = [:]
    var nextID: Int64 = 1
    var stacksCarried = 0
    /// Steps after which a session's cached stack starts with a placeholder it kept or wrote.
    var keptBottoms = 0
    var historyCuts = 0
    var swaps = 0
    /// Set at the first difference (the run stops there, with one issue).
    var failed = false

    init(seed: UInt64, routed: Bool, hotwire: Bool = false) {
        self.routed = routed
        self.hotwire = hotwire
        rng = SeededRandom(seed: seed &* 7919)
        var configuration = BridgeConfiguration(engine: EngineConfiguration(foregroundTimeoutMs: 200, maxStackDepth: 24))
        configuration.maxSessions = 4
        let router = routed ? BridgeFuzz.router : nil
        bridge = Bridge(configuration: configuration, router: router, random: SeededRandom(seed: seed))
        reference = bridge
        apply(.connected(controller, isLoopback: true))
        send(controller, #"{"id":0,"method":"hello","params":{"protocol":1,"role":"controller"}}"#)
    }

    mutating func pick<T>(_ items: [T]) -> T { items[Int(rng.next() % UInt64(items.count))] }
    mutating func chance(_ n: UInt64) -> Bool { rng.next() % n == 0 }

    mutating func url() -> String {
        let n = rng.next() % 50
        if chance(3), !urls.isEmpty { return pick(urls) }
        if routed, chance(2) {
            return pick(["http://h/app/home", "http://h/app/search", "tt://products/\(n)", "tt://cart", "tt://settings",
                         "tt://account", "http://h/app/help/\(n)", "http://h/app/products/\(n)"])
        }
        return pick(["http://h/app/#/\(n)", "http://h/app/\"q\\\(n)\"", "http://h/é/\u{1}/\(n)", "tt://native/\(n % 3)",
                     "http://h/app/?x=\(n)&y=</script>", "http://h/other/\(n)"])
    }

    mutating func step() {
        if hotwire { return hotwireStep() }
        switch rng.next() % 20 {
        case 0:  // a new page that starts a session
            guard bridge.sessionCount < 3 else { return pageStep() }
            let c = connect()
            send(c, #"{"id":1,"method":"hello","params":{"protocol":1,"role":"page","url":"# + JSONValue.string(url()).jsonString + "}}")
        case 1, 2:  // a page claims a web view (sometimes coming back by the browser's history)
            guard !claims.isEmpty else { return pageStep() }
            let claim = pick(claims)
            let c = connect()
            var p: JSONObject = ["protocol": 1, "role": "page", "session": .string(claim.session),
                                 "webview": .string(claim.webview), "token": .string(claim.token)]
            if chance(2) { p["url"] = .string(url()) }
            if chance(2) { p["history"] = true }
            send(c, JSONValue.object(["id": 1, "method": "hello", "params": .object(p)]).jsonString)
        case 3:
            advance(ms: Int64(rng.next() % 300))
        case 4:
            guard !pages.isEmpty, chance(3) else { return pageStep() }
            let c = pick(pages)
            pages.removeAll { $0 == c }
            apply(.left(c))
        case 5, 6, 7, 8:
            controllerStep()
        default:
            pageStep()
        }
    }

    mutating func pageStep() {
        guard !pages.isEmpty else { return controllerStep() }
        let c = pick(pages)
        var params: JSONObject = [:]
        let method = pick(["pwa-navigate", "pwa-navigate", "pwa-navigate", "pwa-rendered", "back", "back", "navigate",
                           "pwa-navigated"] + (routed ? ["deeplink.open"] : []))
        switch method {
        case "pwa-navigate":
            if !chance(5) { params["url"] = .string(url()) }
            if chance(2) { params["title"] = .string(pick(["T", "t\"é\u{2028}", "", "\\"])) }
        case "navigate", "pwa-navigated", "deeplink.open":
            params["url"] = .string(url())
        default: break
        }
        if method != "pwa-navigated", chance(4) == false {
            nextID += 1
            send(c, JSONValue.object(["id": .int(nextID), "method": .string(method), "params": .object(params)]).jsonString)
        } else {
            send(c, JSONValue.object(["event": .string(method), "params": .object(params)]).jsonString)
        }
    }

    mutating func controllerStep() {
        let sessions = bridge.sessionIDs
        guard !sessions.isEmpty else {
            nextID += 1
            return send(controller, JSONValue.object(["id": .int(nextID), "method": "session.create",
                                                      "params": ["url": .string(url())]]).jsonString)
        }
        var params: JSONObject = ["session": .string(pick(sessions))]
        var methods = ["navigation.navigateToUrl", "navigation.navigateToUrl", "navigation.back", "navigation.back",
                       "navigation.popToRoot", "session.get", "session.create", "session.close", "session.subscribe",
                       "session.unsubscribe", "session.unsubscribe"]
        if routed { methods += ["router.perform", "router.perform", "router.perform", "router.selectTab", "router.get"] }
        let method = pick(methods)
        switch method {
        case "navigation.navigateToUrl":
            params["url"] = .string(url())
        case "session.create":
            params = chance(2) ? ["url": .string(url())] : [:]
        case "session.close":
            guard chance(4) else { return pageStep() }
        case "router.perform":
            let u = JSONValue.string(url())
            params["action"] = pick(["goBack", "popToTop", "resetHome", ["type": "push", "url": u], ["type": "navigate", "url": u],
                                     ["type": "replace", "url": u], ["type": "pop", "count": .int(Int64(rng.next() % 3))],
                                     ["type": "reset", "urls": [u, .string(url())]], ["type": "setParams", "params": ["k": "v"], "item": "P1"]])
        case "router.selectTab":
            params["tab"] = .string(pick(["home", "search", "account"]))
        default: break
        }
        nextID += 1
        send(controller, JSONValue.object(["id": .int(nextID), "method": .string(method), "params": .object(params)]).jsonString)
    }

    mutating func hotwireURL() -> String {
        let n = rng.next() % 12
        return pick(["http://h/\(n)", "http://h/\(n)", "http://h/items/new", "http://h/numbers", "http://h/\(n)?q=\"é\"",
                     "http://other.example/\(n)"])
    }

    mutating func hotwireStep() {
        switch rng.next() % 16 {
        case 0:
            guard bridge.sessionCount < 2 else { return hotwireStep() }
            nextID += 1
            send(controller, JSONValue.object(["id": .int(nextID), "method": "session.create", "params": [
                "url": "http://h/", "browser": true, "profile": "hotwire-native", "platform": .string(pick(["ios", "android"])),
                "pathConfiguration": ["rules": [
                    ["patterns": ["/new$"], "properties": ["context": "modal"]],
                    ["patterns": ["/numbers$"], "properties": ["view_controller": "numbers", "uri": "hotwire://fragment/numbers"]],
                ]],
            ]]).jsonString)
        case 1, 2, 3, 4:  // the browser answers
            guard !work.isEmpty else { return hotwirePage() }
            let w = work.remove(at: Int(rng.next() % UInt64(work.count)))
            switch w {
            case .openTab(let sid, let webview, _, let token, _, _):
                claims.append((sid, webview.description, token))
                apply(.host(.tabOpened(session: sid, webview: webview, targetId: "T\(webview.number)", browserContextId: "C")))
            case .takeSnapshot(let sid, let webview):
                apply(.host(.snapshotTaken(session: sid, webview: webview, image: chance(6) ? nil : [0xFF, UInt8(rng.next() % 256)])))
            case .fetchPathConfiguration(let sid, _, let url):
                apply(.host(.pathConfigurationFetched(session: sid, url: url, .failed("offline"))))
            default:
                break
            }
        case 5:  // a page claims a web view
            guard !claims.isEmpty else { return hotwirePage() }
            let claim = pick(claims)
            let c = connect()
            send(c, JSONValue.object(["id": 1, "method": "hello", "params": [
                "protocol": 1, "role": "page", "session": .string(claim.session), "webview": .string(claim.webview),
                "token": .string(claim.token), "url": .string(hotwireURL())]]).jsonString)
        case 6, 7:
            let sessions = bridge.sessionIDs
            guard !sessions.isEmpty else { return hotwirePage() }
            var params: JSONObject = ["session": .string(pick(sessions))]
            let method = pick(["navigation.back", "navigation.back", "navigation.navigateToUrl", "session.get", "session.subscribe",
                               "session.unsubscribe"])
            if method == "navigation.navigateToUrl" { params["url"] = .string(hotwireURL()) }
            nextID += 1
            send(controller, JSONValue.object(["id": .int(nextID), "method": .string(method), "params": .object(params)]).jsonString)
        case 8:
            advance(ms: Int64(rng.next() % 300))
        default:
            hotwirePage()
        }
    }

    mutating func hotwirePage() {
        guard !pages.isEmpty else { return advance(ms: 1) }
        let c = pick(pages)
        let name = pick(["visitProposed", "visitProposed", "visitProposed", "visitCompleted", "pageLoaded", "visitStarted",
                         "visitRendered", "visitRequestFailed", "formSubmissionFinished", "pageInvalidated"])
        var data: JSONObject = [:]
        switch name {
        case "visitProposed":
            data = ["location": .string(hotwireURL()), "options": ["action": .string(pick(["advance", "advance", "replace", "restore"]))]]
        case "visitCompleted", "pageLoaded":
            data = ["restorationIdentifier": .string("r\(rng.next() % 5)")]
        case "visitStarted":
            data = ["location": .string(hotwireURL()), "identifier": .string("v\(rng.next() % 5)")]
        case "visitRequestFailed":
            data = ["statusCode": 404]
        default:
            break
        }
        send(c, JSONValue.object(["event": "hotwire.message", "params": [
            "name": .string(name), "data": .object(data), "location": .string(hotwireURL())]]).jsonString)
    }

    mutating func connect() -> ClientID {
        let c = ClientID(nextClient)
        nextClient += 1
        apply(.connected(c, isLoopback: true))
        pages.append(c)
        return c
    }

    mutating func advance(ms: Int64) {
        now += ms * 1000
        while let (key, due) = timers.min(by: { $0.value < $1.value }), due <= now {
            timers[key] = nil
            apply(.timerFired(key), at: due)
        }
    }

    mutating func send(_ c: ClientID, _ text: String) {
        apply(.frame(c, text: Array(text.utf8)))
    }

    mutating func apply(_ input: BridgeInput, at time: Int64? = nil) {
        reference.forgetStackCaches()
        let before = bridge.sessionIDs.map { sid in (sid, bridge.sessions[sid]!.stackCacheItems.count) }
        bridge.apply(input, at: time ?? now)
        reference.apply(input, at: time ?? now)
        let effects = bridge.drainEffects()
        let expected = reference.drainEffects()
        if effects != expected {
            let i = effects.indices.first { $0 < expected.count && effects[$0] != expected[$0] } ?? min(effects.count, expected.count)
            failed = true
            Issue.record("\(input): effect \(i) differs:\n\(i < effects.count ? describe(effects[i]) : "none")\nexpected:\n\(i < expected.count ? describe(expected[i]) : "none")")
        }
        if bridge != reference {
            failed = true
            Issue.record("\(input): the state differs from the Bridge without stack caches")
        }
        for (sid, kept) in before where kept > 0 {
            if let s = bridge.sessions[sid], s.stackCacheItems.first?.id.kind == .placeholder { keptBottoms += 1 }
        }
        // What stackJSON would send now, on a copy: the engine's items written afresh.
        for sid in bridge.sessionIDs {
            var copy = bridge
            let sent = copy.withSession(sid) { b, s in b.stackJSON(&s) } ?? []
            var w = JSONWriter()
            Bridge<SeededRandom>.writeStack(bridge.engine(of: sid)!.stack, into: &w)
            if sent != w.bytes {
                failed = true
                Issue.record("\(input): \(sid): stackJSON gives \(String(decoding: sent, as: UTF8.self)), writeStack \(w.string)")
            }
        }
        // The host finishes the daemon's closes (a closed connection sends nothing more).
        for c in learn(effects) { apply(.left(c)) }
    }

    func describe(_ effect: BridgeEffect) -> String {
        if case .send(let c, let bytes) = effect { return "send \(c) \(String(decoding: bytes, as: UTF8.self))" }
        return "\(effect)"
    }

    /// Learns claims and placeholder urls from what was sent; returns the connections closed.
    mutating func learn(_ effects: [BridgeEffect]) -> [ClientID] {
        var closed: [ClientID] = []
        for effect in effects {
            switch effect {
            case .send(_, let bytes):
                guard let frame = try? JSONParser.parse(bytes) else { continue }
                if frame["result"]?["stack"] != nil || frame["params"]?["stack"] != nil { stacksCarried += 1 }
                if frame["result"]?["action"] == "swap" { swaps += 1 }
                if frame["params"]?["cause"] == "history" { historyCuts += 1 }
                for candidate in [frame["result"], frame["params"], frame["params"]?["load"]] {
                    guard let c = candidate, let sid = c["session"]?.stringValue, let w = c["webview"]?.stringValue,
                          let t = c["token"]?.stringValue else { continue }
                    claims.append((sid, w, t))
                }
                for item in frame["result"]?["stack"]?.arrayValue ?? frame["params"]?["stack"]?.arrayValue ?? [] {
                    if item["kind"] == "placeholder", let u = item["url"]?.stringValue { urls.append(u) }
                }
                if claims.count > 48 { claims.removeFirst(claims.count - 48) }
                if urls.count > 24 { urls.removeFirst(urls.count - 24) }
            case .close(let c, _, _):
                pages.removeAll { $0 == c }
                closed.append(c)
            case .schedule(let key, let ms):
                timers[key] = now + Int64(ms) * 1000
            case .cancel(let key):
                timers[key] = nil
            case .host(let w):
                work.append(w)
                if work.count > 32 { work.removeFirst() }
            }
        }
        return closed
    }
}
