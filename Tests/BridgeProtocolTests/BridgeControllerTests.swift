import Testing
@testable import BridgeProtocol

/// Section 6: controller methods, subscriptions, events, handlers, idle sessions.
@Suite struct BridgeControllerTests {
    /// A controller's name as its hello reported it (what `session.get` lists as a handler).
    static func controllerNamed(_ h: inout BridgeHarness, handles: [String] = [], subscribeAll: Bool = false) -> (ClientID, String) {
        let c = h.controller(handles: handles, subscribeAll: subscribeAll)
        let hello = h.inbox[c]?.first { $0["result"]?["protocol"] != nil }
        return (c, hello?["result"]?["controller"]?.stringValue ?? "?")
    }

    @Test func sessionCreateListGet() {
        var h = BridgeHarness()
        let ctl = h.controller()
        #expect(h.request(ctl, "session.list")["result"] == ["sessions": []])
        let a = h.request(ctl, "session.create", ["url": "http://h/a/"])["result"]
        let sidA = a?["session"]?.stringValue ?? ""
        #expect(a?["webview"] == "W1")
        #expect(h.eventParams(ctl, "session.created") == [["session": .string(sidA)]])
        let b = h.request(ctl, "session.create")["result"]
        let sidB = b?["session"]?.stringValue ?? ""
        #expect(sidA != sidB && sidA.hasPrefix("s-") && sidB.hasPrefix("s-"))
        #expect(a?["token"] != b?["token"])

        let pageB = h.claimed(sidB, "W1", b?["token"]?.stringValue ?? "", url: "http://h/b/")
        _ = h.request(pageB.client, "pwa-navigate", ["url": "http://h/b/1"])
        h.advance(ms: 42)
        let list = h.request(ctl, "session.list")["result"]?["sessions"]
        #expect(list?.arrayValue?.count == 2)
        #expect(list?[0] == ["session": .string(sidA),
                             "stack": [["id": "W1", "kind": "webview", "mode": "classic", "url": "http://h/a/", "title": nil, "connected": false]],
                             "foreground": nil])
        #expect(list?[1]?["session"] == .string(sidB))
        #expect(BridgeHarness.ids(list?[1]?["stack"]) == "P1 W1")
        #expect(list?[1]?["foreground"]?["webview"] == "W1")
        #expect(list?[1]?["foreground"]?["kind"] == "blank")
        #expect(list?[1]?["foreground"]?["sinceMs"] == 42)

        let getA = h.request(ctl, "session.get", ["session": .string(sidA)])["result"]
        #expect(getA?["session"] == .string(sidA))
        #expect(getA?["stack"] == list?[0]?["stack"])
        #expect(getA?["foreground"] == .null)
        #expect(getA?["handlers"] == ["navigate": nil, "webview.open": nil])
        let getB = h.request(ctl, "session.get", ["session": .string(sidB)])["result"]
        #expect(getB?["foreground"]?["sinceMs"] == 42)
        #expect(getB?["stack"] == list?[1]?["stack"])

        #expect(h.request(ctl, "navigation.canGoBack", ["session": .string(sidA)])["result"] == ["canGoBack": false])
        #expect(h.request(ctl, "navigation.canGoBack", ["session": .string(sidB)])["result"] == ["canGoBack": true])
        // Bad requests in between did not disturb anything.
        #expect(h.bridge.sessionIDs == [sidA, sidB])
    }

    /// session.close: every page gets `closed` and the 1000 close; subscribers hear
    /// `session.closed {reason:"closed"}`; the session is gone.
    @Test func sessionCloseClosesEveryPage() {
        var h = BridgeHarness()
        let ctl = h.controller(handles: ["webview.open"])
        let other = h.controller(subscribeAll: true)
        let created = h.request(ctl, "session.create", ["url": "http://h/a/"])["result"]
        let sid = created?["session"]?.stringValue ?? ""
        let p1 = h.claimed(sid, "W1", created?["token"]?.stringValue ?? "")
        let p2 = h.claimed(sid, "W2", h.push(ctl, sid, "http://h/b")["token"]?.stringValue ?? "")
        let p3 = h.claimed(sid, "W3", h.push(ctl, sid, "http://h/c")["token"]?.stringValue ?? "")
        _ = h.request(p3.client, "pwa-navigate")
        let unrelated = h.newPage()
        #expect(h.bridge.sessions[sid]?.pages.count == 3)

        let id = h.nextID
        h.nextID += 1
        let effects = h.frame(ctl, #"{"id":\#(id),"method":"session.close","params":{"session":"\#(sid)"}}"#)
        #expect(trace(effects, for: ctl).first == "reply \(id)")
        for p in [p1, p2, p3] {
            #expect(trace(effects, for: p.client) == ["event closed", "close 1000"], "\(p.webview)")
            #expect(h.eventParams(p.client, "closed").count == 1)
        }
        #expect(h.eventParams(ctl, "session.closed") == [["session": .string(sid), "reason": "closed"]])
        #expect(h.eventParams(other, "session.closed") == [["session": .string(sid), "reason": "closed"]])
        #expect(h.closed[unrelated.client] == nil)
        #expect(h.bridge.sessionIDs == [unrelated.session])
        #expect(h.timers.isEmpty)
        #expect(h.request(ctl, "session.get", ["session": .string(sid)])["error"]?["code"] == "unknown-session")
        #expect(h.request(ctl, "session.close", ["session": .string(sid)])["error"]?["code"] == "unknown-session")
        let (_, claim) = h.claim(sid, "W1", created?["token"]?.stringValue ?? "")
        #expect(claim["error"]?["code"] == "unknown-session")
        // A closed page's frame that still arrives gets one error reply and changes nothing.
        h.refused(p1.client, #"{"id":5,"method":"pwa-navigate"}"#, id: 5, code: "unknown-webview")
        // The controller is no longer bound to the closed session.
        guard case .controller(let info)? = h.bridge.clients[ctl]?.role else {
            Issue.record("the controller lost its role: \(String(describing: h.bridge.clients[ctl]?.role))")
            return
        }
        #expect(info.sessions.isEmpty)
        #expect(h.request(ctl, "session.list")["result"]?["sessions"]?.arrayValue?.count == 1)
    }

    /// session.subscribe without a session: every session, present and future.
    @Test func subscribeToAllSessions() {
        var h = BridgeHarness()
        let a = h.newPage()
        let ctl = h.controller(subscribeAll: true)
        _ = h.request(a.client, "pwa-navigate")
        #expect(h.eventParams(ctl, "stack.changed").map { $0["session"] } == [.string(a.session)])
        let b = h.newPage()
        #expect(h.eventParams(ctl, "session.created") == [["session": .string(b.session)]])
        _ = h.request(b.client, "pwa-navigate")
        #expect(h.eventParams(ctl, "stack.changed").map { $0["session"] } == [.string(a.session), .string(b.session), .string(b.session)])
        // Subscribing twice does not double the events.
        #expect(h.request(ctl, "session.subscribe")["result"] == .object([:]))
        _ = h.take(ctl)
        _ = h.request(a.client, "pwa-rendered")
        #expect(h.eventNames(ctl) == ["pwa-rendered", "foreground.removed"])
    }

    /// session.subscribe with a session: that session only.
    @Test func subscribeToOneSession() {
        var h = BridgeHarness()
        let a = h.newPage()
        let b = h.newPage()
        let ctl = h.controller()
        #expect(h.request(ctl, "session.subscribe", ["session": .string(a.session)])["result"] == .object([:]))
        _ = h.request(a.client, "pwa-navigate")
        _ = h.request(b.client, "pwa-navigate")
        let c = h.newPage()
        let sessions = Set((h.inbox[ctl] ?? []).compactMap { $0["params"]?["session"]?.stringValue })
        #expect(sessions == [a.session])
        #expect(h.eventNames(ctl) == ["stack.changed", "foreground.shown"])
        _ = c
    }

    /// `events` filters by name; subscribing again replaces the filter; an empty list hears
    /// nothing; every controller gets each event once whatever its subscriptions.
    @Test func eventFilter() {
        var h = BridgeHarness()
        let a = h.newPage()
        let ctl = h.controller()
        #expect(h.request(ctl, "session.subscribe", ["session": .string(a.session), "events": ["stack.changed"]])["result"] == .object([:]))
        _ = h.request(a.client, "pwa-navigate")
        _ = h.request(a.client, "pwa-rendered")
        #expect(h.eventNames(ctl) == ["stack.changed"])

        _ = h.request(ctl, "session.subscribe", ["session": .string(a.session), "events": ["pwa-rendered", "foreground.removed"]])
        _ = h.take(ctl)
        _ = h.request(a.client, "pwa-navigate")
        _ = h.request(a.client, "pwa-rendered")
        #expect(h.eventNames(ctl) == ["pwa-rendered", "foreground.removed"])

        _ = h.request(ctl, "session.subscribe", ["session": .string(a.session), "events": []])
        _ = h.take(ctl)
        _ = h.request(a.client, "pwa-navigate")
        _ = h.request(a.client, "pwa-rendered")
        #expect(h.eventNames(ctl).isEmpty)

        // Subscribed to the session (all events) and to every session (a filter): each event once.
        _ = h.request(ctl, "session.subscribe", ["session": .string(a.session)])
        _ = h.request(ctl, "session.subscribe", ["events": ["stack.changed"]])
        _ = h.take(ctl)
        _ = h.request(a.client, "pwa-navigate")
        #expect(h.eventNames(ctl) == ["stack.changed", "foreground.shown"])
        // A new session: only the all-sessions filter applies.
        let b = h.newPage()
        _ = h.take(ctl)
        _ = h.request(b.client, "pwa-navigate")
        #expect(h.eventNames(ctl) == ["stack.changed"])
    }

    /// Every event of section 6 carries `session`; `stack.changed` names its cause; `navigate`
    /// goes to the handler only.
    @Test func everyEventCarriesSession() {
        var h = BridgeHarness()
        let obs = h.controller(subscribeAll: true)
        let nav = h.controller(handles: ["navigate"])
        let p = h.newPage(url: "http://h/app/")
        let sid = p.session
        _ = h.request(nav, "session.subscribe", ["session": .string(sid)])
        _ = h.request(p.client, "pwa-navigate", ["url": "http://h/app/a"])
        _ = h.request(p.client, "pwa-rendered")
        _ = h.request(p.client, "pwa-navigate", ["url": "http://h/app/b"])
        h.advance(ms: 2000)  // timeout
        _ = h.request(p.client, "pwa-rendered")  // late
        _ = h.request(p.client, "back")  // swap
        h.event(p.client, "pwa-navigated", ["url": "http://h/app/a?tab=2", "source": "replaceState"])
        h.event(p.client, "cart.add", ["sku": 7, "qty": [1, 2]])
        h.event(p.client, "navigate", ["url": "http://h/elsewhere"])
        #expect(h.eventParams(nav, "navigate") == [["session": .string(sid), "webview": "W1", "url": "http://h/elsewhere"]])
        _ = h.push(obs, sid, "http://h/classic")  // single tab: the page leaves
        let w2 = h.bridge.engine(of: sid)?.webView(.webview(2))?.token ?? ""
        let p2 = h.claimed(sid, "W2", w2)
        _ = h.request(p2.client, "back")  // pops W2
        let p3 = h.claimed(sid, "W1", p.token)
        _ = h.request(obs, "navigation.popToRoot", ["session": .string(sid)])
        _ = h.request(obs, "navigation.back", ["session": .string(sid)])
        h.disconnect(p3.client)
        _ = h.request(obs, "session.close", ["session": .string(sid)])

        let all = (h.inbox[obs] ?? []).filter { $0["event"] != nil }
        let names = Set(all.compactMap { $0["event"]?.stringValue })
        let expected: Set<String> = ["session.created", "session.closed", "stack.changed", "foreground.shown", "foreground.removed",
                                     "pwa-rendered", "webview.open", "webview.closed", "page.connected", "page.disconnected",
                                     "pwa-navigated", "app.event"]
        #expect(names == expected)
        for e in all + h.events(nav, "navigate") {
            #expect(e["params"]?["session"] == .string(sid), "\(e)")
        }
        #expect(h.events(obs, "navigate").isEmpty)
        #expect(h.eventParams(obs, "app.event") == [["session": .string(sid), "webview": "W1", "name": "cart.add",
                                                     "params": ["sku": 7, "qty": [1, 2]]]])
        #expect(h.eventParams(obs, "pwa-navigated") == [["session": .string(sid), "webview": "W1", "url": "http://h/app/a?tab=2",
                                                         "source": "replaceState"]])
        #expect(h.eventParams(obs, "pwa-rendered").map { $0["late"] } == [false, true])
        let causes = h.eventParams(obs, "stack.changed").compactMap { $0["cause"]?.stringValue }
        // popToRoot had nothing to remove above P1 W1; the controller's back swapped P1 away.
        #expect(causes == ["hello", "pwa-navigate", "pwa-navigate", "back", "navigation.navigateToUrl", "back", "navigation.back"])
        let open = h.eventParams(obs, "webview.open").first
        #expect(open?["webview"] == "W2" && open?["url"] == "http://h/classic" && open?["token"] == .string(w2))
        #expect(h.eventParams(obs, "webview.closed") == [["session": .string(sid), "webview": "W2"]])
        #expect(h.eventParams(obs, "session.closed") == [["session": .string(sid), "reason": "closed"]])
    }

    /// stack.changed causes for the controller's own methods and a page's navigate.
    @Test func stackChangedCauses() {
        var h = BridgeHarness()
        let obs = h.controller(subscribeAll: true)
        let p = h.newPage()
        h.event(p.client, "navigate", ["url": "http://h/two"])
        _ = h.push(obs, p.session, "http://h/three")
        _ = h.request(obs, "navigation.back", ["session": .string(p.session)])
        _ = h.push(obs, p.session, "http://h/four")
        _ = h.request(obs, "navigation.popToRoot", ["session": .string(p.session)])
        let causes = h.eventParams(obs, "stack.changed").compactMap { $0["cause"]?.stringValue }
        #expect(causes == ["hello", "navigate", "navigation.navigateToUrl", "navigation.back", "navigation.navigateToUrl",
                           "navigation.popToRoot"])
        #expect(h.eventParams(obs, "stack.changed").last?["stack"] == h.sessionGet(p.session)["result"]?["stack"])
    }

    /// The `navigate` handler gets the page's classic navigations and decides; the earliest
    /// connected subscribed handler wins; without one, the built-in policy pushes.
    @Test func navigateHandler() {
        var h = BridgeHarness()
        let (c1, name1) = Self.controllerNamed(&h, handles: ["navigate"])
        let (c2, name2) = Self.controllerNamed(&h, handles: ["navigate"])
        let (c3, name3) = Self.controllerNamed(&h, handles: ["navigate"], subscribeAll: true)
        let (_, _) = Self.controllerNamed(&h, handles: ["webview.open"])  // not subscribed: no handler
        let p = h.newPage()
        _ = h.request(c2, "session.subscribe", ["session": .string(p.session)])
        #expect(h.sessionGet(p.session)["result"]?["handlers"] == ["navigate": .string(name2), "webview.open": nil])

        func navigate(_ url: String) {
            h.event(p.client, "navigate", ["url": .string(url)])
        }
        navigate("http://h/1")
        #expect(h.eventParams(c2, "navigate") == [["session": .string(p.session), "webview": "W1", "url": "http://h/1"]])
        #expect(h.events(c1, "navigate").isEmpty && h.events(c3, "navigate").isEmpty)
        #expect(h.stackIDs(p.session) == "W1")
        #expect(h.eventNames(p.client).isEmpty)
        // The request form is answered, and still only handed over.
        let r = h.request(p.client, "navigate", ["url": "http://h/1b"])
        #expect(r["result"] != nil)
        #expect(h.events(c2, "navigate").count == 2)
        #expect(h.stackIDs(p.session) == "W1")

        // The earliest connected wins once it subscribes.
        _ = h.request(c1, "session.subscribe", ["session": .string(p.session)])
        #expect(h.sessionGet(p.session)["result"]?["handlers"]?["navigate"] == .string(name1))
        navigate("http://h/2")
        #expect(h.eventParams(c1, "navigate").map { $0["url"] } == ["http://h/2"])
        #expect(h.events(c2, "navigate").count == 2)
        h.disconnect(c1)
        navigate("http://h/3")
        #expect(h.eventParams(c2, "navigate").last?["url"] == "http://h/3")
        h.disconnect(c2)
        #expect(h.sessionGet(p.session)["result"]?["handlers"]?["navigate"] == .string(name3))
        navigate("http://h/4")
        #expect(h.eventParams(c3, "navigate").map { $0["url"] } == ["http://h/4"])

        // The handler decides: it pushes; the page (single tab) is sent there.
        _ = h.push(c3, p.session, "http://h/4")
        #expect(h.eventParams(p.client, "load").first?["webview"] == "W2")
        #expect(h.closed[p.client] == 1000)

        // No handler left: the built-in policy pushes a classic web view.
        h.disconnect(c3)
        let w2 = h.claimed(p.session, "W2", h.bridge.engine(of: p.session)?.webView(.webview(2))?.token ?? "")
        h.event(w2.client, "navigate", ["url": "http://h/5"])
        #expect(h.stackIDs(p.session) == "W1 W2 W3")
        #expect(h.eventParams(w2.client, "load").first?["webview"] == "W3")
    }

    /// Single-tab mode (no `webview.open` handler): the navigating page gets `load` and is
    /// closed. With a subscribed `webview.open` handler it gets nothing and stays.
    @Test(arguments: [false, true])
    func webviewOpenHandlerDecidesTheTabMode(_ withHandler: Bool) {
        var h = BridgeHarness()
        let (handler, name) = Self.controllerNamed(&h, handles: withHandler ? ["webview.open"] : [], subscribeAll: true)
        let p = h.newPage()
        #expect(h.sessionGet(p.session)["result"]?["handlers"]?["webview.open"] == (withHandler ? .string(name) : .null))
        h.event(p.client, "navigate", ["url": "http://h/two"])
        #expect(h.stackIDs(p.session) == "W1 W2")
        let open = h.eventParams(handler, "webview.open").first
        let token = h.bridge.engine(of: p.session)?.webView(.webview(2))?.token ?? ""
        #expect(open == ["session": .string(p.session), "webview": "W2", "url": "http://h/two", "token": .string(token),
                         "pageUrl": .string("http://h/two?bridge_session=\(p.session)&bridge_webview=W2&bridge_token=\(token)")])
        if withHandler {
            #expect(h.eventNames(p.client).isEmpty)
            #expect(h.closed[p.client] == nil)
            #expect(h.bridge.engine(of: p.session)?.webView(.webview(1))?.connected == true)
        } else {
            #expect(h.eventParams(p.client, "load") == [["session": .string(p.session), "webview": "W2", "url": "http://h/two",
                                                         "token": .string(token), "pageUrl": open?["pageUrl"] ?? .null]])
            #expect(h.closed[p.client] == 1000)
            #expect(h.bridge.engine(of: p.session)?.webView(.webview(1))?.connected == false)
            #expect(h.eventParams(handler, "page.disconnected").last?["webview"] == "W1")
        }
    }

    /// A `webview.open` handler subscribed to another session only does not make this one
    /// multi-tab.
    @Test func webviewOpenHandlerMustBeSubscribed() {
        var h = BridgeHarness()
        let other = h.newPage()
        let handler = h.controller(handles: ["webview.open"])
        _ = h.request(handler, "session.subscribe", ["session": .string(other.session)])
        let p = h.newPage()
        h.event(p.client, "navigate", ["url": "http://h/two"])
        #expect(h.closed[p.client] == 1000)
        h.event(other.client, "navigate", ["url": "http://h/two"])
        #expect(h.closed[other.client] == nil)
    }

    /// popToRoot keeps the bottom web view and its placeholders; `removed` is top first.
    @Test func popToRootOfTheSeedStack() {
        var h = BridgeHarness()
        let obs = h.controller(subscribeAll: true)
        let p1 = h.newPage()
        let sid = p1.session
        _ = h.request(p1.client, "pwa-navigate")
        _ = h.request(p1.client, "navigate", ["url": "http://h/two"])
        let p2 = h.claimed(sid, "W2", h.eventParams(p1.client, "load").first?["token"]?.stringValue ?? "")
        _ = h.request(p2.client, "navigate", ["url": "http://h/app/b"])
        let p3 = h.claimed(sid, "W3", h.eventParams(p2.client, "load").first?["token"]?.stringValue ?? "")
        _ = h.request(p3.client, "pwa-navigate")
        _ = h.request(p3.client, "pwa-navigate")
        #expect(h.stackIDs(sid) == "P1 W1 W2 P2 P3 W3")
        let r = h.request(obs, "navigation.popToRoot", ["session": .string(sid)])["result"]
        #expect(r?["removed"] == ["W3", "P3", "P2", "W2"])
        #expect(BridgeHarness.ids(r?["stack"]) == "P1 W1")
        #expect(h.eventParams(obs, "webview.closed").map { $0["webview"] } == ["W3", "W2"])
        // The page on top is sent to the uncovered W1.
        #expect(h.eventParams(p3.client, "closed").first?["load"]?["webview"] == "W1")
        #expect(h.closed[p3.client] == 1000)
        #expect(h.request(obs, "navigation.canGoBack", ["session": .string(sid)])["result"] == ["canGoBack": true])
        #expect(h.request(obs, "navigation.popToRoot", ["session": .string(sid)])["result"]?["removed"] == [])
    }

    /// A session with no connection for `sessionIdleSeconds` is discarded by `sweep`.
    @Test func idleSessionsAreDiscarded() {
        var h = BridgeHarness(configuration: BridgeConfiguration(sessionIdleSeconds: 5))
        let obs = h.controller(subscribeAll: true)
        let idle = h.newPage()
        let busy = h.newPage()
        let creator = h.controller()
        let created = h.request(creator, "session.create")["result"]
        let sidC = created?["session"]?.stringValue ?? ""
        h.disconnect(idle.client)
        h.advance(ms: 4999)
        h.bridge.sweep(at: h.now)
        h.collect()
        #expect(h.bridge.sessionCount == 3)
        h.advance(ms: 1)
        h.bridge.sweep(at: h.now)
        h.collect()
        #expect(h.bridge.sessionIDs == [busy.session, sidC])
        #expect(h.eventParams(obs, "session.closed") == [["session": .string(idle.session), "reason": "idle"]])
        let (_, claim) = h.claim(idle.session, "W1", idle.token)
        #expect(claim["error"]?["code"] == "unknown-session")

        // A creator's subscription keeps its session; once it leaves, the clock starts.
        h.advance(ms: 60_000)
        h.bridge.sweep(at: h.now)
        h.collect()
        #expect(h.bridge.sessionCount == 2)
        h.disconnect(creator)
        h.advance(ms: 3000)
        // A page claims it before the time is up: the clock stops; it leaves: it starts again.
        let page = h.claimed(sidC, "W1", created?["token"]?.stringValue ?? "")
        h.advance(ms: 3000)
        h.disconnect(page.client)
        h.advance(ms: 3000)
        h.bridge.sweep(at: h.now)
        h.collect()
        #expect(h.bridge.sessionCount == 2)
        h.advance(ms: 2000)
        h.bridge.sweep(at: h.now)
        h.collect()
        #expect(h.bridge.sessionIDs == [busy.session])
        #expect(h.eventParams(obs, "session.closed").last == ["session": .string(sidC), "reason": "idle"])
        // An all-sessions subscriber does not keep a session alive; a connected page does.
        h.advance(ms: 3_600_000)
        h.bridge.sweep(at: h.now)
        h.collect()
        #expect(h.bridge.sessionIDs == [busy.session])
    }
}
