import Testing
@testable import BridgeProtocol

@Suite struct BridgeSeedScenarioTests {
    @Test func seedScenarioOverTheProtocol() {
        var h = BridgeHarness()
        let ctl = h.connect()
        #expect(h.request(ctl, "hello", ["protocol": 1, "role": "controller"])["result"]?["protocol"] == 1)
        #expect(h.request(ctl, "session.subscribe")["result"] == .object([:]))

        // W1 loads.
        let p1 = h.connect()
        let hello = h.request(p1, "hello", ["protocol": 1, "role": "page", "url": "http://h/app/"])
        let sid = hello["result"]?["session"]?.stringValue ?? ""
        #expect(sid.hasPrefix("s-"))
        #expect(hello["result"]?["webview"] == "W1")
        let token1 = hello["result"]?["token"]?.stringValue ?? ""
        #expect(hello["result"]?["pageUrl"]?.stringValue == "http://h/app/?bridge_session=\(sid)&bridge_webview=W1&bridge_token=\(token1)")
        #expect(!h.events(ctl, "session.created").isEmpty)

        // PWA navigation.
        let nav = h.request(p1, "pwa-navigate", ["url": "http://h/app/a"])
        #expect(nav["result"]?["placeholder"] == "P1")
        #expect(BridgeHarness.ids(nav["result"]?["stack"]) == "P1 W1")
        #expect(h.events(ctl, "foreground.shown").last?["params"]?["kind"] == "blank")
        h.advance(ms: 200)
        let rendered = h.request(p1, "pwa-rendered")
        #expect(rendered["result"] == ["removed": true, "reason": "rendered", "latencyMs": 200])

        // Classic navigation, single-tab: W1's page gets `load` and is closed.
        _ = h.take(p1)
        h.event(p1, "navigate", ["url": "http://h/classic.html"])
        let load = h.take(p1).first { $0["event"] == "load" }
        #expect(load?["params"]?["webview"] == "W2")
        #expect(h.closed[p1] == 1000)
        let p2 = h.connect()
        let claim = h.request(p2, "hello", ["protocol": 1, "role": "page", "url": load?["params"]?["pageUrl"] ?? .null,
                                            "session": .string(sid), "webview": "W2", "token": load?["params"]?["token"] ?? .null])
        #expect(BridgeHarness.ids(claim["result"]?["stack"]) == "P1 W1 W2")
        #expect(claim["result"]?["stack"]?[2]?["url"] == "http://h/classic.html")

        // Back into the PWA in a new web view; two PWA navigations.
        h.event(p2, "navigate", ["url": "http://h/app/b"])
        let load3 = h.take(p2).first { $0["event"] == "load" }
        let p3 = h.connect()
        _ = h.request(p3, "hello", ["protocol": 1, "role": "page", "session": .string(sid), "webview": "W3",
                                    "token": load3?["params"]?["token"] ?? .null])
        _ = h.request(p3, "pwa-navigate", ["url": "http://h/app/c"])
        _ = h.request(p3, "pwa-rendered")
        let nav3 = h.request(p3, "pwa-navigate", ["url": "http://h/app/d"])
        _ = h.request(p3, "pwa-rendered")
        #expect(BridgeHarness.ids(nav3["result"]?["stack"]) == "P1 W1 W2 P2 P3 W3")

        // Six backs from the controller.
        let expected = ["P1 W1 W2 P2 W3", "P1 W1 W2 W3", "P1 W1 W2", "P1 W1", "W1", "W1"]
        let actions = ["swap", "swap", "pop", "pop", "swap", "none"]
        var pageOnTop = p3
        for (n, stack) in expected.enumerated() {
            _ = h.take(pageOnTop)
            let r = h.request(ctl, "navigation.back", ["session": .string(sid)])
            #expect(BridgeHarness.ids(r["result"]?["stack"]) == stack, "back \(n + 1)")
            #expect(r["result"]?["action"]?.stringValue == actions[n], "back \(n + 1)")
            let sent = h.take(pageOnTop)
            if actions[n] == "swap" {
                #expect(sent.contains { $0["event"] == "back" }, "back \(n + 1): the page is told to go back")
                _ = h.request(pageOnTop, "pwa-rendered")
            } else if actions[n] == "pop" {
                let closed = sent.first { $0["event"] == "closed" }
                #expect(closed != nil && h.closed[pageOnTop] == 1000, "back \(n + 1): the popped page is closed")
                // Single tab: the popped page is sent to the uncovered web view; a new page claims it.
                let target = closed?["params"]?["load"]
                #expect(target?["webview"] != nil, "back \(n + 1): closed carries load")
                let next = h.connect()
                let r = h.request(next, "hello", ["protocol": 1, "role": "page", "session": .string(sid),
                                                  "webview": target?["webview"] ?? .null, "token": target?["token"] ?? .null])
                #expect(r["result"] != nil)
                pageOnTop = next
            }
        }
    }
}
