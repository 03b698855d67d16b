import Testing
@testable import BridgeProtocol

/// Section 3: hello for pages (new sessions, claims, re-claims, the newest claim winning) and the
/// `pageUrl` / stored-url rules.
@Suite struct BridgeHandshakeTests {
    struct URLCase: Sendable, CustomTestStringConvertible {
        var given: String
        var stored: String
        /// `$CLAIM` stands for `bridge_session=S&bridge_webview=W1&bridge_token=T`.
        var pageUrl: String
        var testDescription: String { given }
    }

    static let urlCases: [URLCase] = [
        .init(given: "http://h/app/", stored: "http://h/app/", pageUrl: "http://h/app/?$CLAIM"),
        .init(given: "http://h/app/?x=1", stored: "http://h/app/?x=1", pageUrl: "http://h/app/?x=1&$CLAIM"),
        .init(given: "http://h/app/#top", stored: "http://h/app/#top", pageUrl: "http://h/app/?$CLAIM#top"),
        .init(given: "http://h/app/?x=1&y=2#top", stored: "http://h/app/?x=1&y=2#top", pageUrl: "http://h/app/?x=1&y=2&$CLAIM#top"),
        .init(given: "http://h/app/#/route?q=1", stored: "http://h/app/#/route?q=1", pageUrl: "http://h/app/?$CLAIM#/route?q=1"),
        .init(given: "http://h/app/?bridge_session=s-old&x=1&bridge_webview=W9&bridge_token=zz#f",
              stored: "http://h/app/?x=1#f", pageUrl: "http://h/app/?x=1&$CLAIM#f"),
        .init(given: "http://h/app/?bridge_token=zz", stored: "http://h/app/", pageUrl: "http://h/app/?$CLAIM"),
        .init(given: "http://h/app/?bridge_session=a&bridge_webview=W1&bridge_token=b", stored: "http://h/app/", pageUrl: "http://h/app/?$CLAIM"),
        .init(given: "http://h/app/?a=1&bridge_tokenx=2", stored: "http://h/app/?a=1&bridge_tokenx=2",
              pageUrl: "http://h/app/?a=1&bridge_tokenx=2&$CLAIM"),
    ]

    /// A page's hello: the claim is added to its url's query before any fragment; the stored
    /// url never carries `bridge_*`.
    @Test(arguments: urlCases)
    func pageUrlAddsTheClaimAndStoredUrlHasNone(_ c: URLCase) {
        var h = BridgeHarness()
        let page = h.newPage(url: c.given)
        let claim = "bridge_session=\(page.session)&bridge_webview=W1&bridge_token=\(page.token)"
        #expect(page.pageUrl == c.pageUrl.replacingOccurrences(of: "$CLAIM", with: claim))
        #expect(h.bridge.engine(of: page.session)?.stack.first?.url == c.stored)
        // The session id and token are plain enough to need no escaping.
        #expect(page.session.allSatisfy { $0.isLetter || $0.isNumber || $0 == "-" })
        #expect(page.token.count >= 32 && page.token.allSatisfy(\.isHexDigit))
    }

    /// The same rules for urls given by controllers and by pages after hello.
    @Test func storedUrlsNeverCarryTheClaim() {
        var h = BridgeHarness()
        let ctl = h.controller(handles: ["webview.open"], subscribeAll: true)
        let created = h.request(ctl, "session.create", ["url": "http://h/a/?bridge_session=x&k=v"])["result"]
        let sid = created?["session"]?.stringValue ?? ""
        let token = created?["token"]?.stringValue ?? ""
        #expect(h.bridge.engine(of: sid)?.stack.first?.url == "http://h/a/?k=v")
        #expect(created?["pageUrl"]?.stringValue == "http://h/a/?k=v&bridge_session=\(sid)&bridge_webview=W1&bridge_token=\(token)")
        let page = h.claimed(sid, "W1", token, url: created?["pageUrl"]?.stringValue)
        #expect(h.bridge.engine(of: sid)?.stack.first?.url == "http://h/a/?k=v")

        _ = h.request(page.client, "pwa-navigate", ["url": "http://h/a/b?bridge_token=T&z=1"])
        #expect(h.bridge.engine(of: sid)?.stack.map(\.url) == ["http://h/a/?k=v", "http://h/a/b?z=1"])

        h.event(page.client, "pwa-navigated", ["url": "http://h/a/c?bridge_webview=W1"])
        #expect(h.bridge.engine(of: sid)?.stack.last?.url == "http://h/a/c")
        #expect(h.eventParams(ctl, "pwa-navigated").last?["url"] == "http://h/a/c")

        let pushed = h.push(ctl, sid, "http://h/d?bridge_session=\(sid)&bridge_webview=W1&bridge_token=\(token)")
        let w2 = pushed["token"]?.stringValue ?? ""
        #expect(h.bridge.engine(of: sid)?.stack.last?.url == "http://h/d")
        #expect(pushed["pageUrl"]?.stringValue == "http://h/d?bridge_session=\(sid)&bridge_webview=W2&bridge_token=\(w2)")
        let open = h.eventParams(ctl, "webview.open").last
        #expect(open?["url"] == "http://h/d" && open?["pageUrl"] == pushed["pageUrl"])

        let p2 = h.claimed(sid, "W2", w2)
        h.event(p2.client, "navigate", ["url": "http://h/e?bridge_token=zz#x"])
        #expect(h.bridge.engine(of: sid)?.stack.last?.url == "http://h/e#x")
        #expect(!(h.bridge.engine(of: sid)?.stack.contains { $0.url.contains("bridge_") } ?? true))
    }

    /// A page's hello result: what the contract lists, the stack with the connected root.
    @Test func newPageHelloResult() {
        var h = BridgeHarness()
        let ctl = h.controller(subscribeAll: true)
        let c = h.connect()
        let r = h.request(c, "hello", ["protocol": 1, "role": "page", "url": "http://h/app/"])["result"]
        #expect(r?["protocol"] == 1)
        #expect(r?["webview"] == "W1")
        #expect(r?["stack"] == [["id": "W1", "kind": "webview", "mode": "classic", "url": "http://h/app/",
                                 "title": nil, "connected": true]])
        let sid = r?["session"]?.stringValue ?? ""
        #expect(h.eventNames(ctl) == ["session.created", "stack.changed", "page.connected"])
        #expect(h.eventParams(ctl, "page.connected") == [["session": .string(sid), "webview": "W1"]])
    }

    /// A web view created by session.create is claimed with its token and its pageUrl.
    @Test func claimWithTokenFromSessionCreate() {
        var h = BridgeHarness()
        let ctl = h.controller()
        let created = h.request(ctl, "session.create", ["url": "http://h/app/start?x=1#top"])["result"]
        let sid = created?["session"]?.stringValue ?? ""
        let token = created?["token"]?.stringValue ?? ""
        #expect(created?["webview"] == "W1")
        #expect(created?["pageUrl"]?.stringValue == "http://h/app/start?x=1&bridge_session=\(sid)&bridge_webview=W1&bridge_token=\(token)#top")
        #expect(h.sessionGet(sid)["result"]?["stack"]?[0]?["connected"] == false)
        _ = h.take(ctl)

        let (p, r) = h.claim(sid, "W1", token, url: created?["pageUrl"]?.stringValue)
        #expect(r["result"]?["session"] == .string(sid))
        #expect(r["result"]?["token"] == .string(token))
        #expect(r["result"]?["pageUrl"] == created?["pageUrl"])
        #expect(r["result"]?["stack"] == [["id": "W1", "kind": "webview", "mode": "classic", "url": "http://h/app/start?x=1#top",
                                           "title": nil, "connected": true]])
        #expect(h.eventParams(ctl, "page.connected") == [["session": .string(sid), "webview": "W1"]])
        #expect(h.request(p, "pwa-navigate", ["url": "http://h/app/a"])["result"]?["placeholder"] == "P1")
    }

    /// A page that disconnects leaves its web view (connected:false); the same token claims it
    /// again, with the stack and pageUrl as they were.
    @Test func reclaimAfterDisconnect() {
        var h = BridgeHarness()
        let ctl = h.controller(subscribeAll: true)
        let first = h.newPage(url: "http://h/app/")
        _ = h.request(first.client, "pwa-navigate", ["url": "http://h/app/a", "title": "A"])
        _ = h.request(first.client, "pwa-rendered")
        _ = h.take(ctl)
        h.disconnect(first.client)
        #expect(h.eventNames(ctl) == ["page.disconnected"])
        #expect(h.bridge.engine(of: first.session)?.webView(.webview(1))?.connected == false)
        #expect(h.stackIDs(first.session) == "P1 W1")

        // The page reloads from its pageUrl (without sending a url: the stored one stays).
        let (again, r) = h.claim(first.session, "W1", first.token)
        #expect(r["result"]?["webview"] == "W1")
        #expect(r["result"]?["mode"] == "pwa")
        #expect(BridgeHarness.ids(r["result"]?["stack"]) == "P1 W1")
        #expect(r["result"]?["stack"]?[1]?["url"] == "http://h/app/a")
        #expect(r["result"]?["stack"]?[1]?["title"] == "A")
        #expect(r["result"]?["stack"]?[1]?["mode"] == "pwa")
        #expect(r["result"]?["stack"]?[1]?["connected"] == true)
        #expect(r["result"]?["pageUrl"]?.stringValue?.hasPrefix("http://h/app/a?bridge_session=") == true)
        #expect(h.eventNames(ctl).last == "page.connected")
        #expect(h.request(again, "back")["result"]?["action"] == "swap")

        // Many times over.
        for _ in 0..<3 {
            h.disconnect(h.bridge.sessions[first.session]!.pages[.webview(1)]!)
            let (p, r2) = h.claim(first.session, "W1", first.token, url: "http://h/app/?bridge_session=\(first.session)")
            #expect(r2["result"]?["webview"] == "W1")
            #expect(h.bridge.sessions[first.session]?.pages[.webview(1)] == p)
        }
        #expect(h.bridge.engine(of: first.session)?.stack.last?.url == "http://h/app/")
    }

    /// The newest claim wins: the old page gets `closed {reason:"replaced"}` and the 1000 close;
    /// its later requests are refused and its disconnect does not disconnect the web view.
    @Test func newestClaimWins() {
        var h = BridgeHarness()
        let ctl = h.controller(subscribeAll: true)
        let old = h.newPage()
        _ = h.take(ctl)
        let newer = h.connect()
        let id = h.nextID
        h.nextID += 1
        let frame = #"{"id":\#(id),"method":"hello","params":{"protocol":1,"role":"page","session":"\#(old.session)","webview":"W1","token":"\#(old.token)"}}"#
        let effects = h.frame(newer, frame)
        #expect(trace(effects, for: old.client) == ["event closed", "close 1000"])
        #expect(h.eventParams(old.client, "closed") == [["reason": "replaced"]])
        #expect(trace(effects, for: newer) == ["reply \(id)"])
        #expect(h.bridge.sessions[old.session]?.pages[.webview(1)] == newer)
        #expect(h.eventNames(ctl) == ["page.disconnected", "page.connected"])

        h.refused(old.client, #"{"id":99,"method":"pwa-navigate"}"#, id: 99, code: "not-allowed")
        _ = h.take(ctl)
        h.disconnect(old.client)
        #expect(h.bridge.engine(of: old.session)?.webView(.webview(1))?.connected == true)
        #expect(h.take(ctl).isEmpty)
        #expect(h.request(newer, "pwa-navigate", ["url": "http://h/app/a"])["result"]?["placeholder"] == "P1")

        // A third claim replaces the second the same way.
        let (third, r) = h.claim(old.session, "W1", old.token)
        #expect(r["result"]?["webview"] == "W1")
        #expect(h.closed[newer] == 1000)
        #expect(h.eventParams(newer, "closed") == [["reason": "replaced"]])
        #expect(h.bridge.sessions[old.session]?.pages[.webview(1)] == third)
    }

    /// A claim of a covered web view is allowed (a fast back reloads it).
    @Test func claimOfACoveredWebView() {
        var h = BridgeHarness()
        let a = h.newPage()
        h.event(a.client, "navigate", ["url": "http://h/two"])
        let load = h.eventParams(a.client, "load").first
        #expect(load?["webview"] == "W2")
        #expect(load?["session"] == .string(a.session))
        #expect(load?["url"] == "http://h/two")
        let token2 = load?["token"]?.stringValue ?? ""
        #expect(load?["pageUrl"]?.stringValue == "http://h/two?bridge_session=\(a.session)&bridge_webview=W2&bridge_token=\(token2)")
        #expect(h.bridge.engine(of: a.session)?.webView(.webview(1))?.connected == false)
        let (w1, r) = h.claim(a.session, "W1", a.token)
        #expect(r["result"]?["webview"] == "W1")
        // Covered: it may not push or go back.
        h.refused(w1, #"{"id":1,"method":"back"}"#, id: 1, code: "conflict")
        // The token of W2 claims W2 only.
        let (_, wrong) = h.claim(a.session, "W1", token2)
        #expect(wrong["error"]?["code"] == "not-allowed")
        let (_, right) = h.claim(a.session, "W2", token2)
        #expect(right["result"]?["webview"] == "W2")
    }
}
