import Testing
@testable import BridgeProtocol

@Suite struct BridgeTraceTests {
    @Test func traceLinesTellEveryTransitionInTheSeedNotation() {
        var config = BridgeConfiguration(engine: EngineConfiguration(foregroundTimeoutMs: 100))
        config.trace = true
        var h = BridgeHarness(configuration: config)
        let p = h.connect()
        let sid = h.request(p, "hello", ["protocol": 1, "role": "page", "url": "http://h/"])["result"]?["session"]?.stringValue ?? ""
        _ = h.request(p, "pwa-navigate", ["url": "http://h/#a"])
        h.advance(ms: 150)
        _ = h.request(p, "pwa-rendered")
        let lines = h.bridge.drainTrace()
        #expect(lines.contains("\(sid) pwa-navigate: P1 W1(*P)"))
        #expect(lines.contains("\(sid) foreground blank over W1 (fallback in 100 ms)"))
        #expect(lines.contains("\(sid) foreground over W1 removed: timeout after 100 ms"))
        #expect(lines.contains("\(sid) late pwa-rendered from W1: its foreground had already timed out"))
        #expect(h.bridge.drainTrace().isEmpty)
    }

    @Test func noTraceByDefault() {
        var h = BridgeHarness()
        let p = h.connect()
        _ = h.request(p, "hello", ["protocol": 1, "role": "page"])
        _ = h.request(p, "pwa-navigate")
        #expect(h.bridge.drainTrace().isEmpty)
    }
}
