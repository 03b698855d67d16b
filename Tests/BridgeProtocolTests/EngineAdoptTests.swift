import Testing
@testable import BridgeProtocol

/// `.adopt`: the engine takes a stack a router action made.
@Suite struct EngineAdoptTests {
    let W1 = ItemID.webview(1), W2 = ItemID.webview(2), W3 = ItemID.webview(3), N1 = ItemID.native(1)

    func engine() -> SessionEngine {
        var e = SessionEngine()
        _ = e.outputs(.createRoot(url: "http://a/", token: "t1", connected: true), at: 0)
        return e
    }

    func web(_ id: ItemID, connected: Bool = false) -> StackItem {
        .webview(WebView(id: id, mode: .classic, url: "http://a/\(id)", connected: connected, token: "tok-\(id)"))
    }

    @Test func pushSendsTheTabsPageToTheNewWebView() {
        var e = engine()
        // The router draws from the engine's allocator: another tab's root W2, then W3 and N1.
        _ = e.itemIDs.next(.webview)
        #expect(e.itemIDs.next(.webview) == W3)
        #expect(e.itemIDs.next(.native) == N1)
        let stack = [e.stack[0], web(W3)]
        let effects = e.outputs(.adopt(stack: stack, removed: [], singleTab: true), at: 1000)
        #expect(effects == [
            .reply(.adopted), .observe(.stackChanged),
            .sendToPage(W1, .load(LoadTarget(webview: W3, url: "http://a/W3", token: "tok-W3"))),
            .closePage(W1, code: 1000), .observe(.pageDisconnected(webview: W1)),
        ])
        #expect(e.ids == "W1 W3")
        #expect(e.itemIDs.peek(.webview) == .webview(4) && e.itemIDs.peek(.native) == .native(2))
        // One allocator: the engine's next web view is W4, never an id the router drew.
        #expect(e.outputs(.navigateToUrl(url: "u", token: "t", requester: nil, singleTab: false), at: 2000).first
                == .reply(.navigateToUrl(webview: .webview(4), token: "t")))
    }

    @Test func multiTabPushLeavesPagesAlone() {
        var e = engine()
        #expect(e.itemIDs.next(.webview) == W2)
        let effects = e.outputs(.adopt(stack: [e.stack[0], web(W2)], removed: [], singleTab: false), at: 0)
        #expect(effects == [.reply(.adopted), .observe(.stackChanged)])
        #expect(e.webView(W1)?.connected == true)
    }

    @Test func removedWebViewsAreClosedAndTheirForegroundToo() {
        var e = engine()
        #expect(e.itemIDs.next(.webview) == W2)
        _ = e.outputs(.adopt(stack: [e.stack[0], web(W2, connected: true)], removed: [], singleTab: false), at: 0)
        _ = e.outputs(.pwaNavigate(from: W2, url: nil, title: nil), at: 0)
        let root = e.stack[0]
        #expect(e.itemIDs.next(.native) == N1)
        let effects = e.outputs(.adopt(stack: [root, .native(NativeScreen(id: N1, url: "tt://x"))], removed: [ItemID.placeholder(1), W2],
                                      singleTab: true), at: 5000)
        #expect(effects == [
            .reply(.adopted), .cancelTimer(TimerToken(1)),
            .observe(.foregroundRemoved(webview: W2, reason: .closed, latencyMs: 5)),
            .observe(.stackChanged),
            .sendToPage(W2, .closed(reason: "popped", load: nil)), .closePage(W2, code: 1000),
            .observe(.webviewClosed(webview: W2)),
        ])
    }

    @Test func aForegroundWhoseWebViewMovedAwayIsSuperseded() {
        var e = engine()
        _ = e.outputs(.pwaNavigate(from: W1, url: nil, title: nil), at: 0)
        #expect(e.itemIDs.next(.native) == N1)
        let effects = e.outputs(.adopt(stack: [.native(NativeScreen(id: N1, url: "tt://s"))], removed: [], singleTab: false), at: 1000)
        #expect(effects.contains(.observe(.foregroundRemoved(webview: W1, reason: .superseded, latencyMs: 1))))
        #expect(e.foreground == nil)
    }

    @Test func aStackEndingWithAPlaceholderIsRefusedAndChangesNothing() {
        var e = engine()
        let before = e
        let bad = [e.stack[0], .placeholder(Placeholder(id: .placeholder(1), of: W1, url: "u"))]
        #expect(e.outputs(.adopt(stack: bad, removed: [], singleTab: true), at: 0).count == 1)
        #expect(e.outputs(.adopt(stack: [], removed: [], singleTab: true), at: 0).count == 1)
        #expect(e == before)
    }
}
