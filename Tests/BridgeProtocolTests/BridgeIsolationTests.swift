import Testing
@testable import BridgeProtocol

/// Sessions side by side never touch each other; a page only ever acts on its own web view.
@Suite struct BridgeIsolationTests {
    @Test func twoSessionsSideBySide() {
        var h = BridgeHarness(configuration: BridgeConfiguration(engine: EngineConfiguration(foregroundTimeoutMs: 500)))
        let a = h.newPage(url: "http://h/a/")
        let b = h.newPage(url: "http://h/b/")
        let watchA = h.controller()
        _ = h.request(watchA, "session.subscribe", ["session": .string(a.session)])
        let watchB = h.controller()
        _ = h.request(watchB, "session.subscribe", ["session": .string(b.session)])
        #expect(a.session != b.session && a.token != b.token)

        // The same ids in both sessions, each counted on its own.
        #expect(h.request(a.client, "pwa-navigate", ["url": "http://h/a/1"])["result"]?["placeholder"] == "P1")
        #expect(h.request(b.client, "pwa-navigate", ["url": "http://h/b/1"])["result"]?["placeholder"] == "P1")
        #expect(h.request(a.client, "pwa-navigate", ["url": "http://h/a/2"])["result"]?["placeholder"] == "P2")
        // One foreground per session: B's is not superseded by A's.
        #expect(h.eventParams(watchB, "foreground.removed").isEmpty)
        #expect(h.eventParams(watchA, "foreground.removed").map { $0["reason"] } == ["superseded"])
        h.advance(ms: 100)
        #expect(h.request(b.client, "pwa-rendered")["result"]?["removed"] == true)
        #expect(h.timers.count == 1)
        h.advance(ms: 400)
        #expect(h.eventParams(watchA, "foreground.removed").map { $0["reason"] } == ["superseded", "timeout"])
        #expect(h.eventParams(watchB, "foreground.removed").map { $0["reason"] } == ["rendered"])
        #expect(h.stackIDs(a.session) == "P1 P2 W1")
        #expect(h.stackIDs(b.session) == "P1 W1")
        #expect(h.bridge.engine(of: b.session)?.stack.map(\.url) == ["http://h/b/", "http://h/b/1"])

        // Each watcher heard only its own session.
        for (w, sid) in [(watchA, a.session), (watchB, b.session)] {
            let heard = Set((h.inbox[w] ?? []).compactMap { $0["params"]?["session"]?.stringValue })
            #expect(heard == [sid])
        }

        // Backs and closes stay in their session.
        #expect(h.request(b.client, "back")["result"]?["action"] == "swap")
        #expect(h.stackIDs(a.session) == "P1 P2 W1")
        let ctl = h.controller()
        _ = h.request(ctl, "navigation.back", ["session": .string(a.session)])
        #expect(h.stackIDs(a.session) == "P1 W1")
        #expect(h.stackIDs(b.session) == "W1")
        _ = h.request(ctl, "session.close", ["session": .string(a.session)])
        #expect(h.closed[a.client] == 1000)
        #expect(h.closed[b.client] == nil)
        #expect(h.bridge.sessionIDs == [b.session])
        #expect(h.request(b.client, "pwa-navigate")["result"]?["placeholder"] == "P2")
        #expect(h.eventParams(watchB, "session.closed").isEmpty)
    }

    /// A token is good for its own web view of its own session only, whatever the ids.
    @Test func aTokenNeverClaimsAnotherSessionsWebView() {
        var h = BridgeHarness()
        let ctl = h.controller(handles: ["webview.open"])
        var sessions: [(sid: String, tokens: [String])] = []
        for n in 0..<3 {
            let created = h.request(ctl, "session.create", ["url": .string("http://h/\(n)/")])["result"]
            let sid = created?["session"]?.stringValue ?? ""
            let t1 = created?["token"]?.stringValue ?? ""
            let t2 = h.push(ctl, sid, "http://h/\(n)/two")["token"]?.stringValue ?? ""
            sessions.append((sid, [t1, t2]))
        }
        let allTokens = sessions.flatMap(\.tokens)
        #expect(Set(allTokens).count == allTokens.count)
        for (i, s) in sessions.enumerated() {
            for (j, other) in sessions.enumerated() where j != i {
                for (k, token) in other.tokens.enumerated() {
                    let c = h.connect()
                    let frame = #"{"id":1,"method":"hello","params":{"protocol":1,"role":"page","session":"\#(s.sid)","webview":"W\#(k + 1)","token":"\#(token)"}}"#
                    h.refused(c, frame, id: 1, code: "not-allowed")
                }
            }
            // Its own tokens claim its own web views, each only its own.
            #expect(h.claim(s.sid, "W1", s.tokens[1]).1["error"]?["code"] == "not-allowed")
            #expect(h.claim(s.sid, "W2", s.tokens[0]).1["error"]?["code"] == "not-allowed")
            #expect(h.claim(s.sid, "W1", s.tokens[0]).1["result"]?["session"] == .string(s.sid))
            #expect(h.claim(s.sid, "W2", s.tokens[1]).1["result"]?["session"] == .string(s.sid))
        }
    }

    /// Page requests and events name no web view: whatever their params say, they act on the
    /// sender's own web view of its own session.
    @Test func aPageActsOnlyOnItsOwnWebView() {
        var h = BridgeHarness()
        let ctl = h.controller(handles: ["webview.open"], subscribeAll: true)
        let a1 = h.newPage(url: "http://h/a/")
        let a2 = h.claimed(a1.session, "W2", h.push(ctl, a1.session, "http://h/a/two")["token"]?.stringValue ?? "")
        let b = h.newPage(url: "http://h/b/")
        let foreign: JSONValue = ["session": .string(b.session), "webview": "W2", "url": "http://h/b/x"]

        // The covered W1 of A may not act, even when it names the top web view or B.
        h.refused(a1.client, #"{"id":1,"method":"back","params":{"session":"\#(b.session)","webview":"W2"}}"#, id: 1, code: "conflict")
        h.refused(a1.client, #"{"id":2,"method":"pwa-navigate","params":{"session":"\#(b.session)","webview":"W1","url":"http://h/b/x"}}"#,
                  id: 2, code: "conflict")
        // B's page naming A acts on B.
        let before = h.bridge.engine(of: a1.session)
        #expect(h.request(b.client, "pwa-navigate", ["session": .string(a1.session), "webview": "W2", "url": "http://h/b/x"])["result"]?["placeholder"] == "P1")
        #expect(h.stackIDs(b.session) == "P1 W1")
        #expect(h.bridge.engine(of: b.session)?.stack.last?.url == "http://h/b/x")
        #expect(h.bridge.engine(of: a1.session) == before)
        // A's top page naming W1 or B acts on its own W2.
        #expect(h.request(a2.client, "pwa-navigate", foreign)["result"]?["placeholder"] == "P1")
        #expect(h.stackIDs(a1.session) == "W1 P1 W2")
        #expect(h.stackIDs(b.session) == "P1 W1")
        _ = h.request(a2.client, "pwa-rendered", foreign)
        #expect(h.sessionGet(b.session)["result"]?["foreground"]?["webview"] == "W1")
        // App events are the sender's, in the sender's session.
        h.event(a1.client, "custom", foreign)
        let app = h.eventParams(ctl, "app.event").last
        #expect(app?["session"] == .string(a1.session) && app?["webview"] == "W1")
        #expect(app?["params"] == foreign)
        // pwa-navigated from the covered W1 updates W1 only.
        h.event(a1.client, "pwa-navigated", ["url": "http://h/a/one-b", "webview": "W2"])
        #expect(h.bridge.engine(of: a1.session)?.stack.map(\.url) == ["http://h/a/one-b", "http://h/a/two", "http://h/b/x"])
        // A controller's back on B does not reach A's pages.
        _ = h.request(ctl, "navigation.back", ["session": .string(b.session)])
        #expect(h.eventNames(a2.client).isEmpty && h.eventNames(a1.client).isEmpty)
        #expect(h.eventNames(b.client) == ["back"])
    }
}
