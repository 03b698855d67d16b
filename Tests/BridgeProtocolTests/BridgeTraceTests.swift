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

/// Findings of a review against the contract, each pinned by a test.
@Suite struct BridgeReviewTests {
    @Test func aTokenWithTrailingNULsIsWrong() {
        var h = BridgeHarness()
        let p = h.connect()
        let hello = h.request(p, "hello", ["protocol": 1, "role": "page"])["result"]
        let sid = hello?["session"] ?? .null
        let token = hello?["token"]?.stringValue ?? ""
        let padded = token + String(repeating: "\u{0}", count: 256)
        let q = h.connect()
        let r = h.request(q, "hello", ["protocol": 1, "role": "page", "session": sid, "webview": "W1", "token": .string(padded)])
        #expect(r["error"]?["code"] == "not-allowed")

        var config = BridgeConfiguration()
        config.controllerToken = "sekret"
        var k = BridgeHarness(configuration: config)
        let c = k.connect()
        let bad = k.request(c, "hello", ["protocol": 1, "role": "controller", "token": .string("sekret" + String(repeating: "\u{0}", count: 256))])
        #expect(bad["error"]?["code"] == "not-allowed")
        #expect(k.request(c, "hello", ["protocol": 1, "role": "controller", "token": "sekret"])["result"] != nil)
    }

    @Test func malformedEventsBeforeHelloAreIgnored() {
        var h = BridgeHarness()
        let c = h.connect()
        h.raw(c, #"{"event":"x","params":5}"#)
        h.raw(c, #"{"event":7}"#)
        #expect(h.take(c).isEmpty)
    }

    @Test func theCreatorsFilterAppliesToTheSessionsItCreates() {
        var h = BridgeHarness()
        let ctl = h.connect()
        _ = h.request(ctl, "hello", ["protocol": 1, "role": "controller"])
        _ = h.request(ctl, "session.subscribe", ["events": ["stack.changed"]])
        let created = h.request(ctl, "session.create", ["url": "http://h/"])["result"]
        let p = h.connect()
        _ = h.request(p, "hello", ["protocol": 1, "role": "page", "session": created?["session"] ?? .null,
                                   "webview": "W1", "token": created?["token"] ?? .null])
        _ = h.request(p, "pwa-navigate")
        _ = h.request(p, "pwa-rendered")
        let names = Set(h.take(ctl).compactMap { $0["event"]?.stringValue })
        #expect(names == ["stack.changed"])
    }
}

@Suite struct BridgeReplacedPageTests {
    @Test func controllersSeeTheReplacedPageLeaveBeforeTheNewOneArrives() {
        var h = BridgeHarness()
        let ctl = h.connect()
        _ = h.request(ctl, "hello", ["protocol": 1, "role": "controller"])
        _ = h.request(ctl, "session.subscribe")
        let p = h.connect()
        let hello = h.request(p, "hello", ["protocol": 1, "role": "page"])["result"]
        _ = h.take(ctl)
        let q = h.connect()
        _ = h.request(q, "hello", ["protocol": 1, "role": "page", "session": hello?["session"] ?? .null,
                                   "webview": "W1", "token": hello?["token"] ?? .null])
        let names = h.take(ctl).compactMap { $0["event"]?.stringValue }
        #expect(names == ["page.disconnected", "page.connected"])
        #expect(h.closed[p] == 1000)
    }
}
