import Testing
@testable import BridgeProtocol

/// The counters behind `/metrics` (BridgeStats): what each request, back and observation adds.
@Suite struct BridgeStatsTests {
    @Test func tablesAgree() {
        #expect(BridgeStats.codeCount == BridgeStats.codes.count)
        for (i, m) in BridgeStats.methods.enumerated() where m != "other" {
            #expect(BridgeStats.index(of: m) == i, "\(m)")
        }
        #expect(BridgeStats.index(of: "no.such") == BridgeStats.methods.count - 1)
        #expect(BridgeStats.index(of: "pwa-navigatE") == BridgeStats.methods.count - 1)
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
