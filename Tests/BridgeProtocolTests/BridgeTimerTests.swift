import Testing
@testable import BridgeProtocol

/// Section 5, foreground and timer: each foreground removed exactly once, for one reason, with
/// its latency; late `pwa-rendered` flagged until a new foreground is shown.
@Suite struct BridgeTimerTests {
    static func harness(timeoutMs: Int = 1000) -> BridgeHarness {
        BridgeHarness(configuration: BridgeConfiguration(engine: EngineConfiguration(foregroundTimeoutMs: timeoutMs)))
    }

    /// Checks the invariant over everything `ctl` heard for `session`: foreground.shown and
    /// foreground.removed alternate, starting with shown.
    static func expectShownRemovedAlternate(_ h: BridgeHarness, _ ctl: ClientID, sourceLocation: SourceLocation = #_sourceLocation) {
        var up = false
        for name in h.eventNames(ctl) {
            if name == "foreground.shown" {
                #expect(!up, "shown while one is up", sourceLocation: sourceLocation)
                up = true
            } else if name == "foreground.removed" {
                #expect(up, "removed while none is up", sourceLocation: sourceLocation)
                up = false
            }
        }
    }

    @Test(arguments: [1, 250, 1000])
    func timeoutAfterExactlyTheConfiguredMs(_ ms: Int) {
        var h = Self.harness(timeoutMs: ms)
        let ctl = h.controller(subscribeAll: true)
        let page = h.newPage()
        _ = h.take(ctl)
        _ = h.request(page.client, "pwa-navigate", ["url": "http://h/app/a"])
        #expect(h.eventParams(ctl, "foreground.shown") == [["session": .string(page.session), "webview": "W1", "kind": "blank",
                                                            "timeoutMs": .int(Int64(ms))]])
        #expect(h.timers.count == 1)
        h.advance(ms: Int64(ms) - 1)
        #expect(h.events(ctl, "foreground.removed").isEmpty)
        let fg = h.sessionGet(page.session)["result"]?["foreground"]
        #expect(fg?["webview"] == "W1" && fg?["kind"] == "blank" && fg?["sinceMs"] == .int(Int64(ms) - 1))
        h.advance(ms: 1)
        #expect(h.eventParams(ctl, "foreground.removed") == [["session": .string(page.session), "webview": "W1",
                                                              "reason": "timeout", "latencyMs": .int(Int64(ms))]])
        #expect(h.sessionGet(page.session)["result"]?["foreground"] == .null)
        #expect(h.timers.isEmpty)
        h.advance(ms: 10_000)
        #expect(h.events(ctl, "foreground.removed").count == 1)
        // The page heard nothing of it.
        #expect(h.eventNames(page.client).isEmpty)
        Self.expectShownRemovedAlternate(h, ctl)
    }

    /// `latencyMs` of a timeout is when the timer actually fired, not when it was due.
    @Test func timeoutLatencyIsWhenTheTimerFired() {
        var h = Self.harness(timeoutMs: 500)
        let ctl = h.controller(subscribeAll: true)
        let page = h.newPage()
        _ = h.request(page.client, "pwa-navigate")
        let key = h.timers.first!.key
        h.timers = [:]
        h.bridge.timerFired(key, at: h.now + 1_300_000)
        h.collect()
        #expect(h.eventParams(ctl, "foreground.removed").last?["latencyMs"] == 1300)
        #expect(h.eventParams(ctl, "foreground.removed").last?["reason"] == "timeout")
    }

    @Test func renderedAt200() {
        var h = Self.harness()
        let ctl = h.controller(subscribeAll: true)
        let page = h.newPage()
        _ = h.request(page.client, "pwa-navigate", ["url": "http://h/app/a"])
        let mark = h.inbox[ctl]!.count
        h.advance(ms: 200)
        let r = h.request(page.client, "pwa-rendered")
        #expect(r["result"] == ["removed": true, "reason": "rendered", "latencyMs": 200])
        #expect(h.eventNames(ctl, since: mark) == ["pwa-rendered", "foreground.removed"])
        #expect(h.eventParams(ctl, "pwa-rendered") == [["session": .string(page.session), "webview": "W1", "removed": true, "late": false]])
        #expect(h.eventParams(ctl, "foreground.removed") == [["session": .string(page.session), "webview": "W1",
                                                              "reason": "rendered", "latencyMs": 200]])
        #expect(h.timers.isEmpty)
        h.advance(ms: 5000)
        #expect(h.events(ctl, "foreground.removed").count == 1)
        // Another pwa-rendered: nothing is up; not an error, not late.
        #expect(h.request(page.client, "pwa-rendered")["result"] == ["removed": false])
        #expect(h.eventParams(ctl, "pwa-rendered").last?["late"] == false)
        #expect(h.eventParams(ctl, "pwa-rendered").last?["removed"] == false)
        Self.expectShownRemovedAlternate(h, ctl)
    }

    @Test func latePwaRenderedStaysLateUntilANewForeground() {
        var h = Self.harness(timeoutMs: 300)
        let ctl = h.controller(subscribeAll: true)
        let page = h.newPage()
        _ = h.request(page.client, "pwa-navigate")
        h.advance(ms: 300)
        #expect(h.eventParams(ctl, "foreground.removed").last?["reason"] == "timeout")
        h.advance(ms: 40)
        #expect(h.request(page.client, "pwa-rendered")["result"] == ["removed": false])
        #expect(h.eventParams(ctl, "pwa-rendered").map { $0["late"] } == [true])
        #expect(h.request(page.client, "pwa-rendered")["result"] == ["removed": false])
        h.event(page.client, "pwa-rendered")
        #expect(h.eventParams(ctl, "pwa-rendered").map { $0["late"] } == [true, true, true])

        // Timed out again, then the event form is the late one.
        _ = h.request(page.client, "pwa-navigate")
        h.advance(ms: 301)
        h.event(page.client, "pwa-rendered")
        #expect(h.eventParams(ctl, "pwa-rendered").map { $0["late"] } == [true, true, true, true])

        // Timed out, but a new foreground is up before the render: not late, it removes that one.
        _ = h.request(page.client, "pwa-navigate")
        h.advance(ms: 300)
        _ = h.request(page.client, "pwa-navigate")
        h.advance(ms: 10)
        #expect(h.request(page.client, "pwa-rendered")["result"] == ["removed": true, "reason": "rendered", "latencyMs": 10])
        #expect(h.eventParams(ctl, "pwa-rendered").last == ["session": .string(page.session), "webview": "W1", "removed": true, "late": false])
        #expect(h.request(page.client, "pwa-rendered")["result"] == ["removed": false])
        #expect(h.eventParams(ctl, "pwa-rendered").last?["late"] == false)
        Self.expectShownRemovedAlternate(h, ctl)
    }

    /// A new foreground replaces the one that is up: `superseded` with its latency, its timer
    /// cancelled, and only the new one times out.
    @Test func supersededByANewForeground() {
        var h = Self.harness(timeoutMs: 1000)
        let ctl = h.controller(subscribeAll: true)
        let page = h.newPage()
        _ = h.request(page.client, "pwa-navigate", ["url": "http://h/app/a"])
        h.advance(ms: 100)
        let mark = h.inbox[ctl]!.count
        _ = h.request(page.client, "pwa-navigate", ["url": "http://h/app/b"])
        #expect(h.eventNames(ctl, since: mark) == ["stack.changed", "foreground.removed", "foreground.shown"])
        #expect(h.eventParams(ctl, "foreground.removed") == [["session": .string(page.session), "webview": "W1",
                                                              "reason": "superseded", "latencyMs": 100]])
        #expect(h.timers.count == 1)
        h.advance(ms: 999)
        #expect(h.events(ctl, "foreground.removed").count == 1)
        h.advance(ms: 1)
        #expect(h.eventParams(ctl, "foreground.removed").map { $0["reason"] } == ["superseded", "timeout"])
        #expect(h.eventParams(ctl, "foreground.removed").last?["latencyMs"] == 1000)
        Self.expectShownRemovedAlternate(h, ctl)
    }

    /// A back swap while a foreground is up: `superseded`, then a `placeholder` foreground.
    @Test func supersededByABackSwap() {
        var h = Self.harness(timeoutMs: 800)
        let ctl = h.controller(subscribeAll: true)
        let page = h.newPage()
        _ = h.request(page.client, "pwa-navigate", ["url": "http://h/app/a"])
        h.advance(ms: 30)
        #expect(h.request(page.client, "back")["result"]?["action"] == "swap")
        #expect(h.eventParams(ctl, "foreground.removed").map { $0["reason"] } == ["superseded"])
        #expect(h.eventParams(ctl, "foreground.shown").last == ["session": .string(page.session), "webview": "W1",
                                                                "kind": "placeholder", "timeoutMs": 800])
        h.advance(ms: 120)
        #expect(h.request(page.client, "pwa-rendered")["result"] == ["removed": true, "reason": "rendered", "latencyMs": 120])
        Self.expectShownRemovedAlternate(h, ctl)
    }

    /// A navigateToUrl that covers the web view: `superseded`, in both tab modes.
    @Test(arguments: [false, true])
    func supersededByNavigateToUrl(_ tabs: Bool) {
        var h = Self.harness()
        let ctl = h.controller(handles: tabs ? ["webview.open"] : [], subscribeAll: true)
        let page = h.newPage()
        _ = h.request(page.client, "pwa-navigate", ["url": "http://h/app/a"])
        h.advance(ms: 70)
        _ = h.push(ctl, page.session, "http://h/classic")
        #expect(h.eventParams(ctl, "foreground.removed") == [["session": .string(page.session), "webview": "W1",
                                                              "reason": "superseded", "latencyMs": 70]])
        #expect(h.timers.isEmpty)
        #expect(h.sessionGet(page.session)["result"]?["foreground"] == .null)
        h.advance(ms: 5000)
        #expect(h.events(ctl, "foreground.removed").count == 1)
        if tabs {
            // The covered page is still there; its pwa-rendered removes nothing and is not late.
            #expect(h.request(page.client, "pwa-rendered")["result"] == ["removed": false])
            #expect(h.eventParams(ctl, "pwa-rendered").last?["late"] == false)
        } else {
            #expect(h.closed[page.client] == 1000)
        }
        Self.expectShownRemovedAlternate(h, ctl)
    }

    /// The page of the foreground's web view disconnects: `closed`, timer cancelled.
    @Test func closedByDisconnect() {
        var h = Self.harness()
        let ctl = h.controller(subscribeAll: true)
        let page = h.newPage()
        _ = h.request(page.client, "pwa-navigate", ["url": "http://h/app/a"])
        h.advance(ms: 50)
        h.disconnect(page.client)
        #expect(h.eventParams(ctl, "foreground.removed") == [["session": .string(page.session), "webview": "W1",
                                                              "reason": "closed", "latencyMs": 50]])
        #expect(h.timers.isEmpty)
        h.advance(ms: 5000)
        #expect(h.events(ctl, "foreground.removed").count == 1)
        Self.expectShownRemovedAlternate(h, ctl)
    }

    /// The foreground's web view is popped: `closed`.
    @Test func closedByPop() {
        var h = Self.harness()
        let ctl = h.controller(handles: ["webview.open"], subscribeAll: true)
        let a = h.newPage()
        let w2 = h.push(ctl, a.session, "http://h/app2/")
        let b = h.claimed(a.session, "W2", w2["token"]?.stringValue ?? "")
        _ = h.request(b.client, "pwa-navigate", ["url": "http://h/app2/x"])
        #expect(h.stackIDs(a.session) == "W1 P1 W2")
        h.advance(ms: 20)
        let r = h.request(ctl, "navigation.popToRoot", ["session": .string(a.session)])
        #expect(r["result"]?["removed"] == ["W2", "P1"])
        #expect(h.eventParams(ctl, "foreground.removed").map { $0["reason"] } == ["closed"])
        #expect(h.eventParams(ctl, "foreground.removed").last?["latencyMs"] == 20)
        #expect(h.timers.isEmpty)
        #expect(h.closed[b.client] == 1000)
        Self.expectShownRemovedAlternate(h, ctl)
    }

    /// The session is closed while a foreground is up: `closed`, then `session.closed`.
    @Test func closedBySessionClose() {
        var h = Self.harness()
        let ctl = h.controller(subscribeAll: true)
        let page = h.newPage()
        _ = h.request(page.client, "pwa-navigate")
        _ = h.take(ctl)
        _ = h.request(ctl, "session.close", ["session": .string(page.session)])
        #expect(h.eventNames(ctl) == ["foreground.removed", "session.closed"])
        #expect(h.eventParams(ctl, "foreground.removed").first?["reason"] == "closed")
        #expect(h.timers.isEmpty)
    }

    /// A timer that fires after its foreground is gone (the host raced a cancel) does nothing;
    /// so does one of a closed session.
    @Test func staleTimersDoNothing() {
        var h = Self.harness()
        let ctl = h.controller(subscribeAll: true)
        let page = h.newPage()
        _ = h.request(page.client, "pwa-navigate")
        let key = h.timers.first!.key
        _ = h.request(page.client, "pwa-rendered")
        let before = h.snapshot()
        h.bridge.timerFired(key, at: h.now + 2_000_000)
        #expect(h.bridge.drainEffects().isEmpty)
        #expect(h.snapshot() == before)

        _ = h.request(page.client, "pwa-navigate")
        let key2 = h.timers.first!.key
        _ = h.request(ctl, "session.close", ["session": .string(page.session)])
        h.bridge.timerFired(key2, at: h.now + 2_000_000)
        #expect(h.bridge.drainEffects().isEmpty)
        // A key of a session that never was.
        h.bridge.timerFired(TimerKey(session: 999, token: TimerToken(1)), at: h.now)
        #expect(h.bridge.drainEffects().isEmpty)
    }

    /// `pwa-navigate` as an event acts the same (stack, foreground, timer) with no reply, and is
    /// not forwarded as an app event.
    @Test func pwaNavigateEventActsTheSame() {
        var h = Self.harness(timeoutMs: 400)
        let ctl = h.controller(subscribeAll: true)
        let page = h.newPage()
        _ = h.take(ctl)
        _ = h.take(page.client)
        h.event(page.client, "pwa-navigate", ["url": "http://h/app/a", "title": "A"])
        #expect(h.take(page.client).isEmpty)
        #expect(h.stackIDs(page.session) == "P1 W1")
        #expect(h.bridge.engine(of: page.session)?.stack.last?.webview?.title == "A")
        #expect(h.bridge.engine(of: page.session)?.stack.last?.webview?.mode == .pwa)
        #expect(h.eventNames(ctl) == ["stack.changed", "foreground.shown"])
        #expect(h.eventParams(ctl, "stack.changed").first?["cause"] == "pwa-navigate")
        h.advance(ms: 400)
        #expect(h.eventParams(ctl, "foreground.removed").first?["reason"] == "timeout")
        h.event(page.client, "pwa-rendered")
        h.event(page.client, "back")
        #expect(h.stackIDs(page.session) == "W1")
        #expect(h.eventNames(page.client) == ["back"])
        #expect(h.events(ctl, "app.event").isEmpty)
        Self.expectShownRemovedAlternate(h, ctl)
    }
}
