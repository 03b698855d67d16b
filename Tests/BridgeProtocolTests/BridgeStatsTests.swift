import Testing
@testable import BridgeProtocol

/// The counters behind `/metrics` (BridgeStats): what each request, back and observation adds.
@Suite struct BridgeStatsTests {
    @Test func tablesAgree() {
        #expect(BridgeStats.codeCount == BridgeStats.codes.count)
        // Every method has its row, under its own name; then `other`.
        #expect(BridgeStats.methods.count == BridgeMethod.allCases.count + 1 && BridgeStats.methods.last == "other")
        for (i, m) in BridgeStats.methods.enumerated() where m != "other" {
            #expect(BridgeStats.index(of: BridgeMethod(name: m)) == i, "\(m)")
        }
        #expect(BridgeStats.index(of: BridgeMethod(name: "no.such")) == BridgeStats.methods.count - 1)
        #expect(BridgeStats.index(of: BridgeMethod(name: "pwa-navigatE")) == BridgeStats.methods.count - 1)
        // The browser's methods are counted by name (they were `other` once).
        for name in ["webview.evaluate", "webview.click", "webview.type", "session.screenshot", "placeholder.snapshot", "bridge.reply"] {
            #expect(BridgeStats.methods.contains(name), "\(name)")
        }
    }

    static func count(_ h: BridgeHarness, _ method: String, _ code: String) -> Int {
        let m = BridgeStats.methods.firstIndex(of: method)!, c = BridgeStats.codes.firstIndex(of: code)!
        return h.bridge.stats.requests[m * BridgeStats.codes.count + c]
    }

    @Test func requestsBacksNavigationsAndForegrounds() {
        var h = BridgeHarness(configuration: BridgeConfiguration(engine: EngineConfiguration(foregroundTimeoutMs: 100)))
        let page = h.connect()
        h.request(page, "hello", ["protocol": 1, "role": "page", "url": "http://h/a"])
        h.request(page, "pwa-navigate", ["url": "http://h/b"])
        h.request(page, "pwa-rendered")
        h.request(page, "pwa-navigate", ["url": "http://h/c"])
        h.advance(ms: 150)  // the fallback fires
        h.request(page, "pwa-rendered")  // late
        h.request(page, "back")  // a swap
        h.request(page, "session.list")  // not-allowed for a page
        h.raw(page, "{not json")
        #expect(Self.count(h, "hello", "ok") == 1)
        #expect(Self.count(h, "pwa-navigate", "ok") == 2)
        #expect(Self.count(h, "pwa-rendered", "ok") == 2)
        #expect(Self.count(h, "back", "ok") == 1)
        #expect(Self.count(h, "session.list", "not-allowed") == 1)
        #expect(h.bridge.stats.frameErrors[BridgeStats.codes.firstIndex(of: "parse-error")!] == 1)
        #expect(h.bridge.stats.pwaNavigations == 2)
        #expect(h.bridge.stats.backs == [1, 0, 0])
        #expect(h.bridge.stats.foregroundRemovals[0] == 1)  // rendered
        #expect(h.bridge.stats.foregroundRemovals[1] == 1)  // timeout
        #expect(h.bridge.stats.lateRenders == 1)
        var latencies: [Int] = []
        h.bridge.stats.takeRenderLatencies(into: &latencies)
        #expect(latencies.count == 1)
        h.bridge.stats.takeRenderLatencies(into: &latencies)
        #expect(latencies.isEmpty)
    }

    /// The browser's methods and `bridge.reply` have rows of their own (they were `other`).
    @Test func everyMethodIsCountedUnderItsName() {
        var h = BridgeHarness()
        let ctl = h.controller()
        let page = h.newPage()
        h.request(ctl, "webview.evaluate", ["session": .string(page.session), "webview": "W1", "expression": "1"])
        h.request(ctl, "bridge.reply", ["session": .string(page.session)])
        h.request(ctl, "no.such")
        #expect(Self.count(h, "webview.evaluate", "invalid-params") == 1)
        #expect(Self.count(h, "bridge.reply", "ok") + Self.count(h, "bridge.reply", "invalid-params") == 1)
        #expect(Self.count(h, "other", "unknown-method") == 1)
    }

    @Test func nothingIsCountedWhenOff() {
        var config = BridgeConfiguration()
        config.countStats = false
        var h = BridgeHarness(configuration: config)
        let page = h.connect()
        h.request(page, "hello", ["protocol": 1, "role": "page", "url": "http://h/a"])
        h.request(page, "pwa-navigate", ["url": "http://h/b"])
        h.request(page, "pwa-rendered")
        #expect(h.bridge.stats.requests.allSatisfy { $0 == 0 })
        #expect(h.bridge.stats.pwaNavigations == 0 && h.bridge.stats.foregroundRemovals == [0, 0, 0, 0])
    }
}
