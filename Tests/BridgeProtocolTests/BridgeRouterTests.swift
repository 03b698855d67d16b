import Testing
@testable import BridgeProtocol

/// The Bridge with a routing configuration (`--config`), at the pure level: router methods,
/// deep links, tabs, back through the engine, and refused actions that change nothing.
@Suite struct BridgeRouterTests {
    static let home = "https://shop.example/app/home"

    /// A controller, and a page whose session has the fixture's tabs (home, search, account).
    static func routed(_ configuration: BridgeConfiguration = BridgeConfiguration())
        -> (h: BridgeHarness, ctl: ClientID, page: PageHandle) {
        var h = BridgeHarness(configuration: configuration, router: RouterFixture.router(nativeProduct: false))
        let ctl = h.controller(subscribeAll: true)
        let page = h.newPage(url: home)
        return (h, ctl, page)
    }

    @Test func aSessionIsATreeOfStacks() {
        var (h, ctl, page) = Self.routed()
        let r = h.request(ctl, "router.get", ["session": .string(page.session)])
        let tree = r["result"]?["tree"]
        #expect(tree?["tabs"]?.arrayValue?.compactMap { $0["name"]?.stringValue } == ["home", "search", "account"])
        #expect(tree?["active"] == "tab:home")
        #expect(BridgeHarness.ids(r["result"]?["stack"]) == "W1")
        // A read writes no state.
        let before = h.bridge
        _ = h.request(ctl, "router.get", ["session": .string(page.session)])
        #expect(h.bridge == before)
    }

    @Test func aDeepLinkPushesAndTheReplyComesBeforeItsEvents() {
        var (h, ctl, page) = Self.routed()
        _ = h.take(ctl)
        let effects = h.frame(ctl, #"{"id":70,"method":"deeplink.open","params":{"session":"\#(page.session)","url":"tt://products/42","context":{"from":"test"}}}"#)
        let order = trace(effects, for: ctl)
        #expect(order.first == "reply 70", "\(order)")
        #expect(order.contains("event webview.open") && order.contains("event stack.changed"), "\(order)")
        let reply = h.inbox[ctl]!.first { $0["id"] == 70 }
        #expect(reply?["result"]?["action"] == "push")
        let stack = BridgeHarness.ids(reply?["result"]?["stack"])
        #expect(stack.hasPrefix("W1 ") && stack.split(separator: " ").count == 2, "\(stack)")
        let opened = h.events(ctl, "webview.open").first
        #expect(opened?["params"]?["context"] == ["from": "test"])
        // Single-tab mode: the page follows the new top.
        #expect(h.events(page.client, "load").count == 1)
        #expect(h.closed[page.client] == 1000)
    }

    @Test func tabsAndBackThroughTheEngine() {
        var (h, ctl, page) = Self.routed()
        let sid = JSONValue.string(page.session)
        let pushed = h.request(ctl, "deeplink.open", ["session": sid, "url": "tt://products/7"])
        let top = pushed["result"]?["stack"]?.arrayValue?.last?["id"]
        let search = h.request(ctl, "router.selectTab", ["session": sid, "tab": "search"])
        #expect(search["result"]?["tree"]?["active"] == "tab:search", "\(search)")
        #expect(h.request(ctl, "router.selectTab", ["session": sid, "tab": "nope"])["error"]?["code"] == "invalid-params")
        let back = h.request(ctl, "router.selectTab", ["session": sid, "tab": "home"])
        #expect(back["result"]?["stack"]?.arrayValue?.last?["id"] == top)
        // goBack on a web view stack with room: the engine's back algorithm pops the top.
        let popped = h.request(ctl, "router.perform", ["session": sid, "action": "goBack"])
        #expect(popped["result"]?["action"] == "pop", "\(popped)")
        #expect(popped["result"]?["removed"] == .array([top ?? .null]))
        #expect(h.stackIDs(page.session) == "W1")
    }

    /// A router action that fails after the router computed the new tree, drew tokens for its
    /// web views and had the engine adopt the stack (here: the session would hold more than
    /// --max-session-bytes) leaves the whole Bridge as it was: tree, tokens, generator.
    @Test func aFailedRouterActionChangesNothing() {
        var configuration = BridgeConfiguration()
        configuration.maxSessionBytes = 1500
        var (h, ctl, page) = Self.routed(configuration)
        _ = h.take(ctl)
        let long = "tt://products/" + String(repeating: "9", count: 1200)
        h.refused(ctl, #"{"id":9,"method":"deeplink.open","params":{"session":"\#(page.session)","url":"\#(long)"}}"#,
                  id: 9, code: "limit-exceeded")
        // An unknown route: refused by the router itself.
        h.refused(ctl, #"{"id":10,"method":"router.perform","params":{"session":"\#(page.session)","action":{"type":"push","route":"nope"}}}"#,
                  id: 10, code: "unknown-route")
        // The session still takes actions that fit.
        let ok = h.request(ctl, "deeplink.open", ["session": .string(page.session), "url": "tt://products/1"])
        #expect(ok["result"]?["action"] == "push", "\(ok)")
    }

    /// A web view the router makes has a real token, the one `webview.open` announces and a
    /// claim must present; the engine's item is never made without one (was `webTokens[id] ?? ""`:
    /// an empty token, which an empty claim would have matched).
    @Test func aWebViewTheRouterMakesHasARealToken() {
        var (h, ctl, page) = Self.routed()
        let sid = JSONValue.string(page.session)
        let pushed = h.request(ctl, "deeplink.open", ["session": sid, "url": "tt://products/7"])
        guard let web = pushed["result"]?["stack"]?.arrayValue?.last?["id"]?.stringValue, web.hasPrefix("W") else {
            Issue.record("no new web view: \(pushed)"); return
        }
        let announced = h.events(ctl, "webview.open").last?["params"]?["token"]?.stringValue ?? ""
        #expect(announced.count == 32 && announced.allSatisfy(\.isHexDigit), "\(announced)")
        #expect(h.bridge.engine(of: page.session)?.webView(ItemID(stringLiteral: web))?.token == announced)
        #expect(h.claim(page.session, web, "").1["error"]?["code"] == "not-allowed")
        _ = h.claimed(page.session, web, announced)

        // The engine's item of a web view nothing issued a token for yet gets one, kept.
        var s = h.bridge.sessions[page.session]!
        let fresh = RouteStackItem(id: "W77", url: "https://shop.example/app/help/x")
        #expect(s.webTokens["W77"] == nil)
        let items = h.bridge.engineStack([fresh], &s)
        guard case .webview(let w)? = items.first else { Issue.record("\(items)"); return }
        #expect(w.token.count == 32 && w.token == s.webTokens["W77"], "\(w.token)")
    }
}
