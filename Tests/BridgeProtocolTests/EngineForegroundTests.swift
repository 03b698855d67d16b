import Testing
@testable import BridgeProtocol

/// The foreground: each shown foreground is removed exactly once, for the right reason, with its
/// latency; its timer is cancelled unless it fired; a timer that fires later is stale.
@Suite struct EngineForegroundTests: EngineIDs {
    struct RemovalCase: Sendable, CustomTestStringConvertible {
        let name: String
        let fixture: EngineFixture
        /// Steps after the fixture, before the one that removes the foreground (10 ms apart).
        let prepare: [SessionInput]
        let input: SessionInput
        /// Microseconds between the previous step and `input`.
        let delay: Int64
        let webview: ItemID
        let timer: TimerToken
        let reason: RemovalReason
        let latencyMs: Int
        /// A new foreground replaces the removed one in the same step.
        let replacedBy: TimerToken?

        var testDescription: String { name }
    }

    static let removalCases: [RemovalCase] = [
        RemovalCase(name: "rendered", fixture: .pwaUp, prepare: [], input: .pwaRendered(from: W1),
                    delay: 150_000, webview: W1, timer: T1, reason: .rendered, latencyMs: 150, replacedBy: nil),
        RemovalCase(name: "timeout (latency is when the timer actually fired)", fixture: .pwaUp, prepare: [],
                    input: .timerFired(T1), delay: 1_003_400, webview: W1, timer: T1, reason: .timeout, latencyMs: 1003, replacedBy: nil),
        RemovalCase(name: "superseded by a new pwa-navigate", fixture: .pwaUp, prepare: [],
                    input: .pwaNavigate(from: W1, url: "http://app/b", title: nil), delay: 30_000,
                    webview: W1, timer: T1, reason: .superseded, latencyMs: 30, replacedBy: T2),
        RemovalCase(name: "superseded by a back-swap", fixture: .pwaUp, prepare: [],
                    input: .back(requester: nil, singleTab: false), delay: 40_000,
                    webview: W1, timer: T1, reason: .superseded, latencyMs: 40, replacedBy: T2),
        RemovalCase(name: "superseded by a back-swap the page asked for", fixture: .seedSwapUp, prepare: [],
                    input: .back(requester: W3, singleTab: true), delay: 5_000,
                    webview: W3, timer: T4, reason: .superseded, latencyMs: 5, replacedBy: T5),
        RemovalCase(name: "superseded by navigateToUrl from the page (covering it)", fixture: .pwaUp, prepare: [],
                    input: .navigateToUrl(url: "http://app/n", token: "tn", requester: W1, singleTab: false), delay: 60_000,
                    webview: W1, timer: T1, reason: .superseded, latencyMs: 60, replacedBy: nil),
        RemovalCase(name: "superseded by navigateToUrl from a controller, single-tab", fixture: .pwaUp, prepare: [],
                    input: .navigateToUrl(url: "http://app/n", token: "tn", requester: nil, singleTab: true), delay: 60_000,
                    webview: W1, timer: T1, reason: .superseded, latencyMs: 60, replacedBy: nil),
        RemovalCase(name: "superseded by pushNative", fixture: .pwaUp, prepare: [],
                    input: .pushNative(url: "tt://x", requester: W1), delay: 70_000,
                    webview: W1, timer: T1, reason: .superseded, latencyMs: 70, replacedBy: nil),
        RemovalCase(name: "closed by a pop", fixture: .twoViews,
                    prepare: [.pwaNavigate(from: W2, url: nil, title: nil), .pwaRendered(from: W2), .back(requester: nil, singleTab: false)],
                    input: .back(requester: W2, singleTab: false), delay: 80_000,
                    webview: W2, timer: T2, reason: .closed, latencyMs: 80, replacedBy: nil),
        RemovalCase(name: "closed by popToRoot", fixture: .seed, prepare: [.pwaNavigate(from: W3, url: nil, title: nil)],
                    input: .popToRoot(singleTab: false), delay: 90_000,
                    webview: W3, timer: T4, reason: .closed, latencyMs: 90, replacedBy: nil),
        RemovalCase(name: "closed by the page disconnecting", fixture: .pwaUp, prepare: [],
                    input: .pageDisconnected(W1), delay: 1_000,
                    webview: W1, timer: T1, reason: .closed, latencyMs: 1, replacedBy: nil),
        RemovalCase(name: "closed by the session closing", fixture: .seedSwapUp, prepare: [],
                    input: .close(reason: "closed"), delay: 2_000,
                    webview: W3, timer: T4, reason: .closed, latencyMs: 2, replacedBy: nil),
    ]

    @Test(arguments: removalCases)
    func removedExactlyOnce(_ c: RemovalCase) {
        var h = c.fixture.make()
        for input in c.prepare {
            let effects = h.step(input)
            #expect(effects.first.map { if case .reply = $0 { true } else { false } } == true, "\(input): \(effects)")
        }
        let up = h.engine.foreground
        #expect(up?.webview == c.webview && up?.timer == c.timer, "the foreground before: \(String(describing: up))")

        let effects = h.step(c.input, afterMicroseconds: c.delay)
        let removed = EngineCheck.removals(effects)
        #expect(removed.count == 1, "\(effects)")
        #expect(removed.first?.webview == c.webview)
        #expect(removed.first?.reason == c.reason)
        #expect(removed.first?.latencyMs == c.latencyMs)

        // The timer is cancelled unless it is the one that fired, before the removal is told.
        let cancels = effects.indices.filter { effects[$0] == .cancelTimer(c.timer) }
        let removalIndex = effects.firstIndex { if case .observe(.foregroundRemoved) = $0 { true } else { false } }
        if c.reason == .timeout {
            #expect(cancels.isEmpty)
        } else {
            #expect(cancels.count == 1)
            if let cancel = cancels.first, let removalIndex { #expect(cancel < removalIndex) }
        }
        #expect(!effects.contains { if case .cancelTimer(let t) = $0 { t != c.timer } else { false } })

        // A replacing foreground is shown after the old one is removed, with a fresh timer.
        let shown = effects.indices.filter { if case .observe(.foregroundShown) = effects[$0] { true } else { false } }
        if let next = c.replacedBy {
            #expect(shown.count == 1)
            #expect(h.engine.foreground?.timer == next)
            #expect(h.engine.foreground?.shownAt == h.now)
            if let s = shown.first, let removalIndex { #expect(removalIndex < s) }
            let scheduled = effects.firstIndex(of: .scheduleTimer(next, afterMs: 1000))
            #expect(scheduled != nil && scheduled! > cancels.first ?? -1)
        } else {
            #expect(shown.isEmpty)
            #expect(h.engine.foreground == nil)
        }
        #expect(EngineCheck.invariantViolations(h.engine) == [])

        // The removed foreground's timer is stale from now on and changes nothing.
        EngineCheck.expectFailure(&h, .timerFired(c.timer), h.engine.isClosed ? .closed : .staleTimer(c.timer))
        // The removal is never repeated: a second pwa-rendered removes nothing.
        if !h.engine.isClosed, h.engine.webView(c.webview) != nil, c.replacedBy == nil {
            let again = h.step(.pwaRendered(from: c.webview))
            #expect(EngineCheck.removals(again).isEmpty)
            #expect(again.first == .reply(.pwaRendered(removed: false, latencyMs: nil)))
        }
    }

    // MARK: Stale timers

    @Test func timerOfASupersededForegroundIsStaleWhileTheNewOneIsUp() {
        var h = EngineFixture.pwaUp.make()
        h.step(.pwaNavigate(from: W1, url: "http://app/b", title: nil))
        #expect(EngineCheck.foreground(h.engine) == "W1 blank T2")
        EngineCheck.expectFailure(&h, .timerFired(T1), .staleTimer(T1))
        #expect(EngineCheck.foreground(h.engine) == "W1 blank T2")
        // The live timer still works afterwards.
        #expect(h.step(.timerFired(T2)).first == .reply(.timerHandled))
    }

    @Test func timerFiredTwiceIsStaleTheSecondTime() {
        var h = EngineFixture.pwaUp.make()
        #expect(h.step(.timerFired(T1), afterMs: 1000) == [
            .reply(.timerHandled),
            .observe(.foregroundRemoved(webview: W1, reason: .timeout, latencyMs: 1000)),
        ])
        EngineCheck.expectFailure(&h, .timerFired(T1), .staleTimer(T1))
    }

    @Test func timerNeverIssuedIsStale() {
        var h = EngineFixture.pwaUp.make()
        EngineCheck.expectFailure(&h, .timerFired(TimerToken(0)), .staleTimer(TimerToken(0)))
        EngineCheck.expectFailure(&h, .timerFired(TimerToken(99)), .staleTimer(TimerToken(99)))
        EngineCheck.expectFailure(&h, .timerFired(TimerToken(.max)), .staleTimer(TimerToken(.max)))
    }

    @Test func timerOfAPoppedWebViewIsStale() {
        var h = EngineFixture.seed.make()
        h.step(.pwaNavigate(from: W3, url: nil, title: nil))  // T4 over W3
        h.step(.popToRoot(singleTab: false))
        h.step(.pwaNavigate(from: W1, url: nil, title: nil))  // T5 over W1
        EngineCheck.expectFailure(&h, .timerFired(T4), .staleTimer(T4))
        #expect(EngineCheck.foreground(h.engine) == "W1 blank T5")
    }

    @Test func timerTokensAreNeverReused() {
        var h = EngineFixture.root.make()
        var tokens: [TimerToken] = []
        for n in 0..<20 {
            let input: SessionInput =
                n % 3 == 2 ? .back(requester: W1, singleTab: false) : .pwaNavigate(from: W1, url: nil, title: nil)
            for case .scheduleTimer(let t, _) in h.step(input) { tokens.append(t) }
            if n % 2 == 0 { h.step(.pwaRendered(from: W1)) }
        }
        #expect(tokens.count == 20)
        #expect(Set(tokens).count == tokens.count)
        #expect(tokens == tokens.sorted { $0.raw < $1.raw })
    }

    // MARK: pwa-rendered

    @Test func secondPwaRenderedIsHarmless() {
        var h = EngineFixture.pwaUp.make()
        #expect(h.step(.pwaRendered(from: W1)).first == .reply(.pwaRendered(removed: true, latencyMs: 10)))
        let before = h.engine
        #expect(h.step(.pwaRendered(from: W1)) == [
            .reply(.pwaRendered(removed: false, latencyMs: nil)),
            .observe(.pwaRendered(webview: W1, removed: false, late: false)),
        ])
        #expect(h.engine == before)
    }

    @Test func pwaRenderedWithoutAnyForegroundIsHarmless() {
        var h = EngineFixture.root.make()
        let before = h.engine
        #expect(h.step(.pwaRendered(from: W1)) == [
            .reply(.pwaRendered(removed: false, latencyMs: nil)),
            .observe(.pwaRendered(webview: W1, removed: false, late: false)),
        ])
        #expect(h.engine == before)
    }

    @Test func pwaRenderedFromACoveredWebViewLeavesTheForegroundAlone() {
        var h = EngineFixture.seedSwapUp.make()
        let before = h.engine
        #expect(h.step(.pwaRendered(from: W2)) == [
            .reply(.pwaRendered(removed: false, latencyMs: nil)),
            .observe(.pwaRendered(webview: W2, removed: false, late: false)),
        ])
        #expect(h.engine == before)
    }

    @Test func latePwaRenderedStaysLateUntilANewForeground() {
        var h = EngineFixture.pwaTimedOut.make()
        #expect(h.step(.pwaRendered(from: W1), afterMs: 300) == [
            .reply(.pwaRendered(removed: false, latencyMs: nil)),
            .observe(.pwaRendered(webview: W1, removed: false, late: true)),
        ])
        // Contract §6: late while the last foreground was removed by timeout and none is up.
        let before = h.engine
        #expect(h.step(.pwaRendered(from: W1)) == [
            .reply(.pwaRendered(removed: false, latencyMs: nil)),
            .observe(.pwaRendered(webview: W1, removed: false, late: true)),
        ])
        #expect(h.engine == before)
        _ = h.step(.pwaNavigate(from: W1, url: nil, title: nil))
        _ = h.step(.pwaRendered(from: W1))
        #expect(h.step(.pwaRendered(from: W1)).last == .observe(.pwaRendered(webview: W1, removed: false, late: false)))
    }

    @Test func lateFlagFollowsTheWebViewWhoseForegroundTimedOut() {
        // W3's placeholder foreground times out; W2's pwa-rendered is not late, W3's is.
        var h = EngineFixture.seedSwapUp.make()
        h.step(.timerFired(T4), afterMs: 1000)
        #expect(h.step(.pwaRendered(from: W2)).last == .observe(.pwaRendered(webview: W2, removed: false, late: false)))
        #expect(h.step(.pwaRendered(from: W3)).last == .observe(.pwaRendered(webview: W3, removed: false, late: true)))
    }

    @Test func timedOutWebViewIsStillLateAfterBeingCovered() {
        var h = EngineFixture.pwaTimedOut.make()
        h.step(.navigateToUrl(url: "http://app/n", token: "tn", requester: W1, singleTab: false))
        #expect(h.step(.pwaRendered(from: W1)).last == .observe(.pwaRendered(webview: W1, removed: false, late: true)))
    }

    @Test func noLateFlagOnceANewForegroundIsUp() {
        var h = EngineFixture.pwaTimedOut.make()
        h.step(.pwaNavigate(from: W1, url: nil, title: nil))
        let effects = h.step(.pwaRendered(from: W1), afterMs: 25)
        #expect(effects.first == .reply(.pwaRendered(removed: true, latencyMs: 25)))
        #expect(effects.contains(.observe(.pwaRendered(webview: W1, removed: true, late: false))))
        // ... nor after that one was rendered.
        #expect(h.step(.pwaRendered(from: W1)).last == .observe(.pwaRendered(webview: W1, removed: false, late: false)))
    }

    @Test(arguments: [RemovalReason.rendered, .superseded, .closed])
    func noLateFlagAfterOtherRemovals(_ reason: RemovalReason) {
        var h = EngineFixture.pwaUp.make()
        switch reason {
        case .rendered: h.step(.pwaRendered(from: W1))
        case .superseded: h.step(.pushNative(url: "tt://x", requester: W1))
        case .closed: h.step(.pageDisconnected(W1))
        case .timeout: Issue.record("not a case of this test")
        }
        #expect(h.engine.webView(W1)?.lastRemoval == reason)
        #expect(h.step(.pwaRendered(from: W1)).last == .observe(.pwaRendered(webview: W1, removed: false, late: false)))
    }

    // MARK: Latency and timing values

    @Test(arguments: [
        (Int64(0), 0), (499, 0), (500, 1), (1_499, 1), (1_500, 2), (999_999, 1000), (1_000_000, 1000), (7_200_000, 7200),
    ])
    func latencyIsRoundedToMilliseconds(_ microseconds: Int64, _ ms: Int) {
        var h = EngineFixture.pwaUp.make()
        let effects = h.step(.pwaRendered(from: W1), afterMicroseconds: microseconds)
        #expect(effects.first == .reply(.pwaRendered(removed: true, latencyMs: ms)))
        #expect(EngineCheck.removals(effects).map(\.latencyMs) == [ms])
    }

    @Test func latencyNeverGoesNegativeWhenTheClockStepsBack() {
        var h = EngineFixture.pwaUp.make()
        let effects = h.step(.pwaRendered(from: W1), afterMicroseconds: -5_000)
        #expect(effects.first == .reply(.pwaRendered(removed: true, latencyMs: 0)))
    }

    @Test func timeoutLatencyIsTheMomentTheTimerFired() {
        for (firedAfter, ms): (Int64, Int) in [(1_000_000, 1000), (1_001_000, 1001), (1_250_600, 1251)] {
            var h = EngineFixture.pwaUp.make()
            let effects = h.step(.timerFired(T1), afterMicroseconds: firedAfter)
            #expect(EngineCheck.removals(effects).map(\.latencyMs) == [ms])
            #expect(EngineCheck.removals(effects).map(\.reason) == [.timeout])
        }
    }

    @Test func foregroundUsesTheConfiguredTimeout() {
        var h = EngineHarness(EngineConfiguration(foregroundTimeoutMs: 250, maxStackDepth: 10))
        h.step(.createRoot(url: "http://app/", token: "t", connected: true))
        let effects = h.step(.pwaNavigate(from: W1, url: nil, title: nil))
        #expect(effects.contains(.scheduleTimer(T1, afterMs: 250)))
        #expect(effects.contains(.observe(.foregroundShown(webview: W1, kind: .blank, timeoutMs: 250))))
        #expect(h.engine.foreground == Foreground(webview: W1, kind: .blank, shownAt: h.now, timeoutMs: 250, timer: T1))
        let swap = h.step(.back(requester: nil, singleTab: false))
        #expect(swap.contains(.scheduleTimer(T2, afterMs: 250)))
        #expect(swap.contains(.observe(.foregroundShown(webview: W1, kind: .placeholder, timeoutMs: 250))))
    }
}
