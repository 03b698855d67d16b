import Testing
@testable import BridgeProtocol

/// The seed's whole scenario, step by step, with the effects of every step.
@Suite struct EngineSeedScenarioTests {
    let W1 = ItemID.webview(1), W2 = ItemID.webview(2), W3 = ItemID.webview(3)
    let P1 = ItemID.placeholder(1), P2 = ItemID.placeholder(2), P3 = ItemID.placeholder(3)

    @Test func seedScenario() {
        var e = SessionEngine()
        var t: Int64 = 0
        func step(_ input: SessionInput, advanceMs: Int64 = 10) -> [EngineOutput] {
            t += advanceMs * 1000
            return e.outputs(input, at: t)
        }

        // W1 loads.
        #expect(step(.createRoot(url: "http://app/", token: "t1", connected: true)) == [
            .reply(.created(webview: W1)), .observe(.stackChanged), .observe(.pageConnected(webview: W1)),
        ])
        #expect(e.ids == "W1")

        // A PWA navigation: P1 W1, blank foreground, timer.
        #expect(step(.pwaNavigate(from: W1, url: "http://app/a", title: "A")) == [
            .reply(.pwaNavigate(placeholder: P1)), .observe(.stackChanged),
            .scheduleTimer(TimerToken(1), afterMs: 1000),
            .observe(.foregroundShown(webview: W1, kind: .blank, timeoutMs: 1000)),
        ])
        #expect(e.ids == "P1 W1")
        #expect(e.rendering == "P1 W1(*P)")
        #expect(e.stack[0] == .placeholder(Placeholder(id: P1, of: W1, url: "http://app/")))
        #expect(step(.pwaRendered(from: W1), advanceMs: 200) == [
            .reply(.pwaRendered(removed: true, latencyMs: 200)),
            .observe(.pwaRendered(webview: W1, removed: true, late: false)),
            .cancelTimer(TimerToken(1)),
            .observe(.foregroundRemoved(webview: W1, reason: .rendered, latencyMs: 200)),
        ])

        // A classic navigation from W1 (single-tab: W1's page is sent to W2).
        #expect(step(.navigateToUrl(url: "http://app/classic", token: "t2", requester: W1, singleTab: true)) == [
            .reply(.navigateToUrl(webview: W2, token: "t2")), .observe(.stackChanged),
            .observe(.webviewOpen(webview: W2, url: "http://app/classic", token: "t2")),
            .sendToPage(W1, .load(LoadTarget(webview: W2, url: "http://app/classic", token: "t2"))),
            .closePage(W1, code: 1000), .observe(.pageDisconnected(webview: W1)),
        ])
        #expect(e.rendering == "P1 W1(*P)~ W2(*C)~")
        _ = step(.pageConnected(W2, url: nil))

        // Back into the PWA in a new web view.
        _ = step(.navigateToUrl(url: "http://app/b", token: "t3", requester: W2, singleTab: true))
        _ = step(.pageConnected(W3, url: nil))
        #expect(e.rendering == "P1 W1(*P)~ W2(*C)~ W3(*C)")

        // Two PWA navigations in W3.
        _ = step(.pwaNavigate(from: W3, url: "http://app/c", title: nil))
        _ = step(.pwaRendered(from: W3))
        _ = step(.pwaNavigate(from: W3, url: "http://app/d", title: nil))
        _ = step(.pwaRendered(from: W3))
        #expect(e.ids == "P1 W1 W2 P2 P3 W3")
        #expect(e.rendering == "P1 W1(*P)~ W2(*C)~ P2 P3 W3(*P)")

        // Back 1: swap W3 with P3; W3 goes back to P3's url, the placeholder's image covers it.
        #expect(step(.back(requester: nil, singleTab: true)) == [
            .reply(.back(action: .swap, removed: [P3])), .observe(.stackChanged),
            .sendToPage(W3, .back(placeholder: P3, url: "http://app/c")),
            .scheduleTimer(TimerToken(4), afterMs: 1000),
            .observe(.foregroundShown(webview: W3, kind: .placeholder, timeoutMs: 1000)),
        ])
        #expect(e.ids == "P1 W1 W2 P2 W3")
        #expect(e.webView(W3)?.url == "http://app/c")
        _ = step(.pwaRendered(from: W3))

        // Back 2: swap with P2.
        #expect(step(.back(requester: W3, singleTab: true)).first == .reply(.back(action: .swap, removed: [P2])))
        #expect(e.ids == "P1 W1 W2 W3")
        #expect(e.webView(W3)?.url == "http://app/b")

        // Back 3: pop W3 (its foreground is up: removed as closed). W2 has no page: W3's page goes there.
        #expect(step(.back(requester: nil, singleTab: true), advanceMs: 50) == [
            .reply(.back(action: .pop, removed: [W3])),
            .cancelTimer(TimerToken(5)),
            .observe(.foregroundRemoved(webview: W3, reason: .closed, latencyMs: 50)),
            .observe(.stackChanged),
            .sendToPage(W3, .closed(reason: "popped", load: LoadTarget(webview: W2, url: "http://app/classic", token: "t2"))),
            .closePage(W3, code: 1000),
            .observe(.webviewClosed(webview: W3)),
        ])
        #expect(e.ids == "P1 W1 W2")
        _ = step(.pageConnected(W2, url: nil))

        // Back 4: pop W2.
        #expect(step(.back(requester: nil, singleTab: true)) == [
            .reply(.back(action: .pop, removed: [W2])), .observe(.stackChanged),
            .sendToPage(W2, .closed(reason: "popped", load: LoadTarget(webview: W1, url: "http://app/a", token: "t1"))),
            .closePage(W2, code: 1000), .observe(.webviewClosed(webview: W2)),
        ])
        #expect(e.ids == "P1 W1")
        _ = step(.pageConnected(W1, url: nil))

        // Back 5: swap W1 with P1.
        #expect(step(.back(requester: nil, singleTab: true)).prefix(3) == [
            .reply(.back(action: .swap, removed: [P1])), .observe(.stackChanged),
            .sendToPage(W1, .back(placeholder: P1, url: "http://app/")),
        ])
        #expect(e.ids == "W1")

        // Back 6: nothing.
        #expect(step(.back(requester: nil, singleTab: true)) == [.reply(.back(action: .none, removed: []))])
        #expect(e.ids == "W1")
    }
}
