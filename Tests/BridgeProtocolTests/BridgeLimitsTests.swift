import Testing
@testable import BridgeProtocol

/// The caps on what one page or controller can make a session hold (`--max-url-bytes`,
/// `--max-session-bytes`), each at its limit, and the controller-origin rule.
@Suite struct BridgeLimitsTests {
    static func url(_ bytes: Int) -> String {
        let base = "http://h/app/#"
        return base + String(repeating: "a", count: bytes - base.utf8.count)
    }

    @Test func theDefaultsAreDocumented() {
        let c = BridgeConfiguration()
        #expect(c.maxURLBytes == 8192)
        #expect(c.maxSessionBytes == 1 << 20)
        #expect(c.controllerOrigins.isEmpty)
    }

    @Test func urlsAndTitlesUpToTheCap() {
        var configuration = BridgeConfiguration()
        configuration.maxURLBytes = 100
        var h = BridgeHarness(configuration: configuration)
        let page = h.newPage(url: Self.url(100))
        #expect(h.stackIDs(page.session) == "W1")
        // At the cap: taken. One byte over: invalid-params, nothing changed.
        let ok = h.request(page.client, "pwa-navigate", ["url": .string(Self.url(100)), "title": .string(String(repeating: "t", count: 100))])
        #expect(ok["result"]?["placeholder"] == "P1", "\(ok)")
        _ = h.request(page.client, "pwa-rendered")
        h.refused(page.client, #"{"id":90,"method":"pwa-navigate","params":{"url":"\#(Self.url(101))"}}"#, id: 90, code: "invalid-params")
        h.refused(page.client, #"{"id":91,"method":"pwa-navigate","params":{"title":"\#(String(repeating: "t", count: 101))"}}"#,
                  id: 91, code: "invalid-params")
        // A page's classic navigation: refused with navigate.failed.
        h.refused(page.client, #"{"id":92,"method":"navigate","params":{"url":"\#(Self.url(101))"}}"#, id: 92,
                  code: "invalid-params", thenEvents: ["navigate.failed"])
        // A new page's hello and a controller's session.create and navigateToUrl.
        let fresh = h.connect()
        h.refused(fresh, #"{"id":1,"method":"hello","params":{"protocol":1,"role":"page","url":"\#(Self.url(101))"}}"#, id: 1, code: "invalid-params")
        let ctl = h.controller()
        h.refused(ctl, #"{"id":93,"method":"session.create","params":{"url":"\#(Self.url(101))"}}"#, id: 93, code: "invalid-params")
        h.refused(ctl, #"{"id":94,"method":"navigation.navigateToUrl","params":{"session":"\#(page.session)","url":"\#(Self.url(101))"}}"#,
                  id: 94, code: "invalid-params")
        #expect(h.push(ctl, page.session, Self.url(100))["webview"] == "W2")
    }

    /// One session fills up to --max-session-bytes and no further: the refused step changes
    /// nothing, and what the session holds never exceeds the bound.
    @Test func aSessionHoldsAtMostMaxSessionBytes() {
        var configuration = BridgeConfiguration()
        configuration.maxURLBytes = 1000
        configuration.maxSessionBytes = 10_000
        var h = BridgeHarness(configuration: configuration)
        let page = h.newPage(url: Self.url(1000))
        var accepted = 0
        var refusedAt: Int?
        for i in 0..<20 {
            let before = h.bridge
            let r = h.request(page.client, "pwa-navigate", ["url": .string(Self.url(1000))])
            if let code = r["error"]?["code"] {
                #expect(code == "limit-exceeded", "\(r)")
                #expect(h.bridge == before, "a refused pwa-navigate changed the Bridge")
                refusedAt = i
                break
            }
            accepted += 1
            _ = h.request(page.client, "pwa-rendered")
            let held = h.bridge.sessions[page.session]!.heldBytes
            #expect(held <= configuration.maxSessionBytes, "\(held) bytes after \(accepted) navigations")
        }
        // W1 holds 1,064 bytes (1,000 + 64); each step adds a placeholder of 1,064 and is
        // counted generously at 2,128 beforehand: the 8th would reach 10,640.
        #expect(accepted == 7 && refusedAt == 7, "accepted \(accepted)")
        #expect(h.bridge.sessions[page.session]!.heldBytes == 8 * 1064)
        // Going back frees room again.
        _ = h.request(page.client, "back")
        _ = h.request(page.client, "pwa-rendered")
        #expect(h.request(page.client, "pwa-navigate", ["url": .string(Self.url(1000))])["result"] != nil)
    }

    /// A web view's url that grows (a page's `hello` with a longer `url`, `pwa-navigated`, the
    /// browser's report of a classic page's new address) counts too: up to --max-session-bytes
    /// exactly it is taken, one byte over it is `limit-exceeded` (the browser's report is left
    /// unheard) and nothing changes. (fuzz-bridge's seed-24: a hello's longer url took a
    /// session over.)
    @Test func aWebViewsURLGrowsOnlyWithinMaxSessionBytes() {
        var configuration = BridgeConfiguration()
        configuration.maxURLBytes = 3000
        // What the pwa-navigate below needs, counted generously (checkPush): 1,064 + 2,128.
        configuration.maxSessionBytes = 3 * 1064
        // W1 and the placeholder of one pwa-navigate, 1,064 bytes each: room for 1,064 more.
        func twoItems() -> (BridgeHarness, PageHandle) {
            var h = BridgeHarness(configuration: configuration)
            let page = h.newPage(url: Self.url(1000))
            #expect(h.request(page.client, "pwa-navigate", ["url": .string(Self.url(1000))])["result"] != nil)
            _ = h.request(page.client, "pwa-rendered")
            #expect(h.bridge.sessions[page.session]!.heldBytes == 2 * 1064)
            return (h, page)
        }

        var (h, page) = twoItems()
        let before = h.bridge
        h.event(page.client, "pwa-navigated", ["url": .string(Self.url(2065))])
        #expect(h.take(page.client).last?["error"]?["code"] == "limit-exceeded")
        #expect(h.bridge.sessions == before.sessions, "a refused pwa-navigated changed the session")
        h.event(page.client, "pwa-navigated", ["url": .string(Self.url(2064))])
        #expect(h.take(page.client).isEmpty)
        #expect(h.bridge.engine(of: page.session)?.webView(.webview(1))?.url == Self.url(2064))
        #expect(h.bridge.sessions[page.session]!.heldBytes == configuration.maxSessionBytes)

        // A page's hello that claims W1 again with a longer url: over the bound, then at it.
        var (k, p) = twoItems()
        k.disconnect(p.client)
        let snapshot = k.bridge
        let (c1, refused) = k.claim(p.session, "W1", p.token, url: Self.url(2065))
        #expect(refused["error"]?["code"] == "limit-exceeded", "\(refused)")
        #expect(k.bridge.sessions == snapshot.sessions, "a refused hello changed the session")
        k.disconnect(c1)
        let (_, taken) = k.claim(p.session, "W1", p.token, url: Self.url(2064))
        #expect(taken["result"]?["webview"] == "W1", "\(taken)")
        #expect(k.bridge.sessions[p.session]!.heldBytes == configuration.maxSessionBytes)
    }

    @Test func theEventFormIsRefusedToo() {
        var configuration = BridgeConfiguration()
        configuration.maxURLBytes = 100
        var h = BridgeHarness(configuration: configuration)
        let page = h.newPage()
        let before = h.bridge
        h.event(page.client, "pwa-navigate", ["url": .string(Self.url(101))])
        #expect(h.bridge.engine(of: page.session) == before.engine(of: page.session))
        #expect(h.take(page.client).last?["error"]?["code"] == "invalid-params")
    }

    // MARK: Controllers from browser pages

    @Test func aControllerFromABrowserPageNeedsTheTokenOrAnAllowedOrigin() {
        var h = BridgeHarness()
        // No Origin header (a test harness, a CLI): loopback is enough, as the contract says.
        _ = h.controller()
        // A page of another local app: refused, nothing changed.
        let browser = h.connect(origin: "http://localhost:5173")
        let r = h.refused(browser, #"{"id":1,"method":"hello","params":{"protocol":1,"role":"controller"}}"#, id: 1, code: "not-allowed")
        #expect(r?["error"]?["message"]?.stringValue?.contains("--allow-controller-origin") == true)
        // It may still be a page.
        #expect(h.request(browser, "hello", ["protocol": 1, "role": "page", "url": "http://localhost:5173/"])["result"] != nil)

        var allowed = BridgeConfiguration()
        allowed.controllerOrigins = ["http://localhost:5173"]
        var h2 = BridgeHarness(configuration: allowed)
        let ok = h2.connect(origin: "HTTP://localhost:5173/")
        #expect(h2.request(ok, "hello", ["protocol": 1, "role": "controller"])["result"]?["controller"] == "c1")
        let other = h2.connect(origin: "http://localhost:5174")
        #expect(h2.request(other, "hello", ["protocol": 1, "role": "controller"])["error"]?["code"] == "not-allowed")

        var withToken = BridgeConfiguration()
        withToken.controllerToken = "secret"
        var h3 = BridgeHarness(configuration: withToken)
        let tokened = h3.connect(origin: "http://localhost:5173")
        #expect(h3.request(tokened, "hello", ["protocol": 1, "role": "controller", "token": "secret"])["result"] != nil)
        let untokened = h3.connect(origin: "http://localhost:5173")
        #expect(h3.request(untokened, "hello", ["protocol": 1, "role": "controller"])["error"]?["code"] == "not-allowed")
    }
}
