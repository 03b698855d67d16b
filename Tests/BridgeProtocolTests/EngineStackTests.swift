import Testing
@testable import BridgeProtocol

/// The stack: snapshots, the back algorithm, popToRoot, native screens, single-tab loads versus
/// multi-tab, closing, and ids.
@Suite struct EngineStackTests: EngineIDs {
    /// `P1 W1(*P)~ W2(*C)~ P2 P3 W3(*P)`: the seed built in single-tab mode, so only W3's page is
    /// connected (W1's and W2's pages were sent `load`).
    static func singleTabSeed() -> EngineHarness {
        var h = EngineHarness()
        h.step(.createRoot(url: "http://app/", token: "t1", connected: true))
        h.step(.pwaNavigate(from: W1, url: "http://app/a", title: nil))
        h.step(.pwaRendered(from: W1))
        h.step(.navigateToUrl(url: "http://app/classic", token: "t2", requester: W1, singleTab: true))
        h.step(.pageConnected(W2, url: nil))
        h.step(.navigateToUrl(url: "http://app/b", token: "t3", requester: W2, singleTab: true))
        h.step(.pageConnected(W3, url: nil))
        h.step(.pwaNavigate(from: W3, url: "http://app/c", title: nil))
        h.step(.pwaRendered(from: W3))
        h.step(.pwaNavigate(from: W3, url: "http://app/d", title: nil))
        h.step(.pwaRendered(from: W3))
        return h
    }

    @Test func singleTabSeedIsTheSeedDiagram() {
        let h = Self.singleTabSeed()
        #expect(h.rendering == "P1 W1(*P)~ W2(*C)~ P2 P3 W3(*P)")
        #expect(EngineCheck.invariantViolations(h.engine) == [])
    }

    // MARK: Snapshots

    @Test func pwaNavigateSnapshotsTheCurrentState() {
        var h = EngineFixture.root.make()
        h.step(.pwaNavigate(from: W1, url: "http://app/a", title: "A"))
        h.step(.pwaNavigate(from: W1, url: nil, title: nil))
        h.step(.pwaNavigate(from: W1, url: "http://app/b", title: "B"))
        #expect(h.ids == "P1 P2 P3 W1")
        #expect(h.engine.stack[0] == .placeholder(Placeholder(id: P1, of: W1, url: "http://app/", title: nil)))
        #expect(h.engine.stack[1] == .placeholder(Placeholder(id: P2, of: W1, url: "http://app/a", title: "A")))
        // An absent url or title leaves the web view's as they were.
        #expect(h.engine.stack[2] == .placeholder(Placeholder(id: P3, of: W1, url: "http://app/a", title: "A")))
        let w = h.engine.webView(W1)
        #expect(w?.url == "http://app/b" && w?.title == "B" && w?.mode == .pwa && w?.connected == true)
    }

    @Test func backSwapRestoresThePlaceholdersUrlAndTitle() {
        var h = EngineFixture.root.make()
        h.step(.pwaNavigate(from: W1, url: "http://app/a", title: "A"))
        h.step(.pwaNavigate(from: W1, url: "http://app/b", title: "B"))
        h.step(.pwaRendered(from: W1))
        #expect(h.step(.back(requester: W1, singleTab: false)) == [
            .reply(.back(action: .swap, removed: [P2])), .observe(.stackChanged),
            .sendToPage(W1, .back(placeholder: P2, url: "http://app/a")),
            .scheduleTimer(T3, afterMs: 1000),
            .observe(.foregroundShown(webview: W1, kind: .placeholder, timeoutMs: 1000)),
        ])
        #expect(h.engine.webView(W1)?.url == "http://app/a")
        #expect(h.engine.webView(W1)?.title == "A")
        h.step(.back(requester: nil, singleTab: false))
        #expect(h.engine.webView(W1)?.url == "http://app/")
        #expect(h.engine.webView(W1)?.title == nil)
        #expect(h.engine.webView(W1)?.mode == .pwa)
        #expect(h.rendering == "W1(*P)")
    }

    // MARK: The back algorithm

    @Test func sixBacksFromTheSeedDiagram() {
        var h = EngineFixture.seed.make()
        let expected: [(BackAction, [ItemID], String)] = [
            (.swap, [P3], "P1 W1 W2 P2 W3"),
            (.swap, [P2], "P1 W1 W2 W3"),
            (.pop, [W3], "P1 W1 W2"),
            (.pop, [W2], "P1 W1"),
            (.swap, [P1], "W1"),
            (.none, [], "W1"),
        ]
        for (action, removed, ids) in expected {
            let effects = h.step(.back(requester: nil, singleTab: false))
            #expect(effects.first == .reply(.back(action: action, removed: removed)))
            #expect(h.ids == ids)
            #expect(EngineCheck.invariantViolations(h.engine) == [])
        }
        #expect(!h.engine.canGoBack)
    }

    @Test func popOfAConnectedPageClosesItWithoutLoadInMultiTab() {
        var h = EngineFixture.twoViews.make()
        h.step(.pageDisconnected(W1))
        #expect(h.step(.back(requester: W2, singleTab: false)) == [
            .reply(.back(action: .pop, removed: [W2])), .observe(.stackChanged),
            .sendToPage(W2, .closed(reason: "popped", load: nil)), .closePage(W2, code: 1000),
            .observe(.webviewClosed(webview: W2)),
        ])
    }

    @Test func popOfAWebViewWithoutPageTellsNoPage() {
        var h = EngineFixture.root.make()
        h.step(.navigateToUrl(url: "http://app/n", token: "tn", requester: nil, singleTab: false))
        #expect(h.step(.back(requester: nil, singleTab: true)) == [
            .reply(.back(action: .pop, removed: [W2])), .observe(.stackChanged),
            .observe(.webviewClosed(webview: W2)),
        ])
        #expect(h.rendering == "W1(*C)")
    }

    @Test func backOnAStackOfOneChangesNothing() {
        var h = EngineFixture.pwaUp.make()
        h.step(.back(requester: nil, singleTab: false))  // swap: W1 alone, placeholder foreground
        let before = h.engine
        #expect(h.step(.back(requester: W1, singleTab: true)) == [.reply(.back(action: .none, removed: []))])
        #expect(h.engine == before)
    }

    // MARK: popToRoot

    @Test func popToRootRemovesTopFirstAndClosesTheForeground() {
        var h = EngineFixture.seed.make()
        h.step(.pwaNavigate(from: W3, url: nil, title: nil))  // T4 over W3
        #expect(h.step(.popToRoot(singleTab: false), afterMs: 40) == [
            .reply(.popToRoot(removed: [W3, P4, P3, P2, W2])),
            .cancelTimer(T4), .observe(.foregroundRemoved(webview: W3, reason: .closed, latencyMs: 40)),
            .observe(.stackChanged),
            .sendToPage(W3, .closed(reason: "popped", load: nil)), .closePage(W3, code: 1000),
            .observe(.webviewClosed(webview: W3)),
            .sendToPage(W2, .closed(reason: "popped", load: nil)), .closePage(W2, code: 1000),
            .observe(.webviewClosed(webview: W2)),
        ])
        #expect(h.ids == "P1 W1")
        #expect(h.engine.foreground == nil)
    }

    @Test func popToRootInSingleTabSendsTheTabToTheRoot() {
        var h = Self.singleTabSeed()
        #expect(h.step(.popToRoot(singleTab: true)) == [
            .reply(.popToRoot(removed: [W3, P3, P2, W2])), .observe(.stackChanged),
            .sendToPage(W3, .closed(reason: "popped", load: LoadTarget(webview: W1, url: "http://app/a", token: "t1"))),
            .closePage(W3, code: 1000), .observe(.webviewClosed(webview: W3)),
            .observe(.webviewClosed(webview: W2)),
        ])
        #expect(h.rendering == "P1 W1(*P)~")
    }

    @Test func popToRootInSingleTabUnderANativeScreenStillSendsTheTabToTheRoot() {
        // The tab shows W3 under a native screen; popToRoot must still send it to W1.
        var h = Self.singleTabSeed()
        h.step(.pushNative(url: "tt://settings", requester: W3))
        let effects = h.step(.popToRoot(singleTab: true))
        #expect(effects.first == .reply(.popToRoot(removed: [N1, W3, P3, P2, W2])))
        #expect(effects.contains(.sendToPage(W3, .closed(reason: "popped", load: LoadTarget(webview: W1, url: "http://app/a", token: "t1")))))
        #expect(effects.filter { if case .sendToPage = $0 { true } else { false } }.count == 1)
    }

    @Test func popToRootInMultiTabNeverLoads() {
        var h = Self.singleTabSeed()
        let effects = h.step(.popToRoot(singleTab: false))
        #expect(effects.contains(.sendToPage(W3, .closed(reason: "popped", load: nil))))
        #expect(!effects.contains { if case .sendToPage(_, .closed(_, let load)) = $0 { load != nil } else { false } })
    }

    @Test func popToRootKeepsTheRootsPlaceholders() {
        var h = EngineFixture.full.make()
        let before = h.engine
        #expect(h.step(.popToRoot(singleTab: true)) == [.reply(.popToRoot(removed: []))])
        #expect(h.engine == before)
    }

    // MARK: Native screens

    @Test func nativeScreensArePushedAndPoppedWithoutPages() {
        var h = EngineFixture.root.make()
        #expect(h.step(.pushNative(url: "tt://a", requester: W1)) == [.reply(.pushNative(screen: N1)), .observe(.stackChanged)])
        #expect(h.engine.top == .native(NativeScreen(id: N1, url: "tt://a")))
        #expect(h.step(.back(requester: nil, singleTab: true)) == [.reply(.back(action: .pop, removed: [N1])), .observe(.stackChanged)])
        #expect(h.step(.pushNative(url: "tt://b", requester: nil)).first == .reply(.pushNative(screen: N2)))
        #expect(h.rendering == "W1(*C) N2")
        #expect(h.engine.webView(W1)?.connected == true)
    }

    @Test func nativeScreenSupersedesTheForeground() {
        var h = EngineFixture.pwaUp.make()
        #expect(h.step(.pushNative(url: "tt://a", requester: nil), afterMs: 15) == [
            .reply(.pushNative(screen: N1)),
            .cancelTimer(T1), .observe(.foregroundRemoved(webview: W1, reason: .superseded, latencyMs: 15)),
            .observe(.stackChanged),
        ])
    }

    @Test func webViewUnderANativeScreenIsCovered() {
        var h = EngineFixture.native.make()
        EngineCheck.expectFailure(&h, .pwaNavigate(from: W1, url: nil, title: nil), .conflict)
        EngineCheck.expectFailure(&h, .back(requester: W1, singleTab: false), .conflict)
        EngineCheck.expectFailure(&h, .navigateToUrl(url: "http://app/n", token: "tn", requester: W1, singleTab: true), .conflict)
        EngineCheck.expectFailure(&h, .pushNative(url: "tt://b", requester: W1), .conflict)
        // What a covered page may still do.
        #expect(h.step(.pwaRendered(from: W1)).first == .reply(.pwaRendered(removed: false, latencyMs: nil)))
        #expect(h.step(.pwaNavigated(from: W1, url: "http://app/z")).first == .reply(.pwaNavigated))
    }

    // MARK: Single-tab loads versus multi-tab

    @Test func navigateInMultiTabLeavesThePageWhereItIs() {
        var h = EngineFixture.root.make()
        #expect(h.step(.navigateToUrl(url: "http://app/n", token: "tn", requester: W1, singleTab: false)) == [
            .reply(.navigateToUrl(webview: W2, token: "tn")), .observe(.stackChanged),
            .observe(.webviewOpen(webview: W2, url: "http://app/n", token: "tn")),
        ])
        #expect(h.rendering == "W1(*C) W2(*C)~")
        #expect(h.engine.webView(W2)?.token == "tn")
    }

    @Test func controllerNavigateInSingleTabMovesTheTabOnTop() {
        var h = EngineFixture.root.make()
        #expect(h.step(.navigateToUrl(url: "http://app/n", token: "tn", requester: nil, singleTab: true)) == [
            .reply(.navigateToUrl(webview: W2, token: "tn")), .observe(.stackChanged),
            .observe(.webviewOpen(webview: W2, url: "http://app/n", token: "tn")),
            .sendToPage(W1, .load(LoadTarget(webview: W2, url: "http://app/n", token: "tn"))),
            .closePage(W1, code: 1000), .observe(.pageDisconnected(webview: W1)),
        ])
    }

    @Test func singleTabNavigateWithNoPageOnTopSendsNoLoad() {
        var h = EngineFixture.rootNoPage.make()
        #expect(h.step(.navigateToUrl(url: "http://app/n", token: "tn", requester: nil, singleTab: true)) == [
            .reply(.navigateToUrl(webview: W2, token: "tn")), .observe(.stackChanged),
            .observe(.webviewOpen(webview: W2, url: "http://app/n", token: "tn")),
        ])
    }

    @Test func singleTabPopUncoveringAConnectedPageSendsNoLoad() {
        var h = EngineFixture.twoViews.make()
        #expect(h.step(.back(requester: W2, singleTab: true)) == [
            .reply(.back(action: .pop, removed: [W2])), .observe(.stackChanged),
            .sendToPage(W2, .closed(reason: "popped", load: nil)), .closePage(W2, code: 1000),
            .observe(.webviewClosed(webview: W2)),
        ])
    }

    @Test func multiTabPopUncoveringAWebViewWithoutPageSendsNoLoad() {
        var h = Self.singleTabSeed()
        h.step(.back(requester: nil, singleTab: false))
        h.step(.back(requester: nil, singleTab: false))
        let effects = h.step(.back(requester: nil, singleTab: false))
        #expect(effects.contains(.sendToPage(W3, .closed(reason: "popped", load: nil))))
    }

    @Test func singleTabRoundTripFollowsTheTab() {
        // W1 navigates to W2 (W1's page leaves), W2's page claims it, back: W2's page goes to W1.
        var h = EngineFixture.root.make()
        h.step(.navigateToUrl(url: "http://app/n", token: "tn", requester: W1, singleTab: true))
        #expect(h.rendering == "W1(*C)~ W2(*C)~")
        h.step(.pageConnected(W2, url: "http://app/n?x"))
        #expect(h.engine.webView(W2)?.url == "http://app/n?x")
        #expect(h.step(.back(requester: W2, singleTab: true)) == [
            .reply(.back(action: .pop, removed: [W2])), .observe(.stackChanged),
            .sendToPage(W2, .closed(reason: "popped", load: LoadTarget(webview: W1, url: "http://app/", token: "t1"))),
            .closePage(W2, code: 1000), .observe(.webviewClosed(webview: W2)),
        ])
        h.step(.pageConnected(W1, url: nil))
        #expect(h.rendering == "W1(*C)")
        #expect(h.engine.webView(W1)?.url == "http://app/")
    }

    // MARK: Closing

    @Test func closeTellsEveryConnectedPageTopFirst() {
        var h = EngineFixture.seedSwapUp.make()
        h.step(.pageDisconnected(W2))
        #expect(h.step(.close(reason: "idle"), afterMs: 7) == [
            .reply(.closed),
            .cancelTimer(T4), .observe(.foregroundRemoved(webview: W3, reason: .closed, latencyMs: 17)),
            .sendToPage(W3, .closed(reason: "idle", load: nil)), .closePage(W3, code: 1000),
            .sendToPage(W1, .closed(reason: "idle", load: nil)), .closePage(W1, code: 1000),
        ])
        #expect(h.engine.isClosed)
        #expect(h.engine.webViews.allSatisfy { !$0.connected })
        #expect(h.ids == "P1 W1 W2 P2 W3")
    }

    @Test func everyInputAfterCloseFails() {
        var h = EngineFixture.pwaUp.make()
        h.step(.close(reason: "closed"))
        let inputs: [SessionInput] = [
            .createRoot(url: "http://app/", token: "t", connected: true),
            .pageConnected(W1, url: nil), .pageDisconnected(W1),
            .pwaNavigate(from: W1, url: nil, title: nil), .pwaRendered(from: W1),
            .pwaNavigated(from: W1, url: "http://app/"),
            .navigateToUrl(url: "http://app/n", token: "tn", requester: nil, singleTab: false),
            .pushNative(url: "tt://a", requester: nil),
            .back(requester: nil, singleTab: false), .popToRoot(singleTab: false),
            .timerFired(T1), .timerFired(T2), .close(reason: "closed"),
        ]
        for input in inputs {
            EngineCheck.expectFailure(&h, input, .closed)
        }
    }

    // MARK: Ids

    @Test func idsAreNeverReused() {
        var h = EngineFixture.twoViews.make()
        h.step(.back(requester: nil, singleTab: false))  // W2 popped
        #expect(h.step(.navigateToUrl(url: "http://app/n", token: "tn", requester: W1, singleTab: false)).first
                == .reply(.navigateToUrl(webview: W3, token: "tn")))
        h.step(.pageConnected(W3, url: nil))
        h.step(.pwaNavigate(from: W3, url: nil, title: nil))
        h.step(.back(requester: nil, singleTab: false))  // P1 discarded
        #expect(h.step(.pwaNavigate(from: W3, url: nil, title: nil)).first == .reply(.pwaNavigate(placeholder: P2)))
        h.step(.pushNative(url: "tt://a", requester: nil))
        h.step(.back(requester: nil, singleTab: false))  // N1 popped
        #expect(h.step(.pushNative(url: "tt://b", requester: nil)).first == .reply(.pushNative(screen: N2)))
        // Popped ids stay unknown.
        EngineCheck.expectFailure(&h, .pageConnected(W2, url: nil), .unknownWebview(W2))
        EngineCheck.expectFailure(&h, .pwaRendered(from: P1), .unknownWebview(P1))
    }

    @Test func pageConnectedReplacesTheUrlOnlyWhenGiven() {
        var h = EngineFixture.rootNoPage.make()
        h.step(.pageConnected(W1, url: nil))
        #expect(h.engine.webView(W1)?.url == "http://app/")
        h.step(.pageConnected(W1, url: "http://app/reloaded"))
        #expect(h.engine.webView(W1)?.url == "http://app/reloaded")
        #expect(h.engine.webView(W1)?.connected == true)
    }

    @Test func queries() {
        let h = EngineFixture.seed.make()
        #expect(h.engine.top?.id == W3)
        #expect(h.engine.canGoBack)
        #expect(h.engine.index(of: W2) == 2)
        #expect(h.engine.index(of: P3) == 4)
        #expect(h.engine.index(of: W9) == nil)
        #expect(h.engine.webView(P1) == nil)
        #expect(h.engine.webViews.map(\.id) == [W1, W2, W3])
        #expect(EngineFixture.root.make().engine.canGoBack == false)
        #expect(EngineFixture.empty.make().engine.top == nil)
    }
}
