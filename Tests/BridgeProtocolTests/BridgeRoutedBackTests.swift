import Testing
@testable import BridgeProtocol

/// One back under `--config`: `navigation.back`, a page's `back` (request or event) and
/// `router.perform goBack` are the same back — the drawer open: close it; a modal of one:
/// dismiss it; a tab's root: its `back_behavior`; else the contract's back algorithm on the
/// active stack. Each is checked from one state by whole-Bridge equality of what the ways of
/// asking leave behind.
@Suite struct BridgeRoutedBackTests {
    static let home = "https://shop.example/app/home"

    /// The ways of asking; `page` only when a page speaks for the top web view.
    enum Asker: CaseIterable { case navigationBack, goBack, pageRequest, pageEvent }

    struct Start {
        var h: BridgeHarness
        var ctl: ClientID
        var session: String
        /// The page of the top web view, if one is connected.
        var top: ClientID?
    }

    static func start(back: BackBehavior = .none, _ setUp: (inout BridgeHarness, ClientID, PageHandle) -> ClientID?) -> Start {
        var h = BridgeHarness(router: RouterFixture.router(nativeProduct: false, back: back))
        let ctl = h.controller(subscribeAll: true)
        let page = h.newPage(url: home)
        let top = setUp(&h, ctl, page)
        _ = h.take(ctl)
        return Start(h: h, ctl: ctl, session: page.session, top: top)
    }

    /// Asks for back one way; returns the reply's `action` (nil for an event) and the harness.
    static func ask(_ asker: Asker, _ start: Start) -> (action: JSONValue?, h: BridgeHarness) {
        var h = start.h
        let sid = JSONValue.string(start.session)
        switch asker {
        case .navigationBack:
            return (h.request(start.ctl, "navigation.back", ["session": sid])["result"]?["action"], h)
        case .goBack:
            return (h.request(start.ctl, "router.perform", ["session": sid, "action": "goBack"])["result"]?["action"], h)
        case .pageRequest:
            return (h.request(start.top!, "back")["result"]?["action"], h)
        case .pageEvent:
            h.event(start.top!, "back")
            return (nil, h)
        }
    }

    /// Every way of asking from `start` gives `action` and the same Bridge; returns it.
    static func sameBack(_ start: Start, action: String, sourceLocation: SourceLocation = #_sourceLocation) -> BridgeHarness {
        let askers = Asker.allCases.filter { start.top != nil || ($0 != .pageRequest && $0 != .pageEvent) }
        let reference = ask(.goBack, start)
        #expect(reference.action == .string(action), "router.perform goBack", sourceLocation: sourceLocation)
        #expect(reference.h.bridge != start.h.bridge || action == "none", "goBack changed nothing", sourceLocation: sourceLocation)
        for asker in askers {
            let (got, h) = ask(asker, start)
            if asker != .pageEvent { #expect(got == .string(action), "\(asker)", sourceLocation: sourceLocation) }
            #expect(h.bridge == reference.h.bridge, "\(asker) left another Bridge than goBack", sourceLocation: sourceLocation)
        }
        return reference.h
    }

    @Test func theDrawerOpenClosesIt() {
        let start = Self.start { h, ctl, page in
            _ = h.request(ctl, "router.perform", ["session": .string(page.session), "action": "openDrawer"])
            return page.client
        }
        #expect(start.h.bridge.sessions[start.session]?.tree?.drawerOpen == true)
        let after = Self.sameBack(start, action: "drawer")
        #expect(after.bridge.sessions[start.session]?.tree?.drawerOpen == false)
        #expect(after.stackIDs(start.session) == "W1")
    }

    @Test func aModalOfOneIsDismissed() {
        let start = Self.start { h, ctl, page in
            let r = h.request(ctl, "deeplink.open", ["session": .string(page.session), "url": "tt://cart"])
            #expect(r["result"]?["tree"]?["active"] == "modal", "\(r)")
            return nil  // the modal's screen is native
        }
        let after = Self.sameBack(start, action: "dismiss")
        #expect(after.bridge.sessions[start.session]?.tree?.modal == [])
        #expect(after.stackIDs(start.session) == "W1")
    }

    @Test func aTabRootFollowsBackBehavior() {
        // initial-tab: back on another tab's root selects the initial tab.
        let start = Self.start(back: .initialTab) { h, ctl, page in
            let r = h.request(ctl, "router.selectTab", ["session": .string(page.session), "tab": "search"])
            #expect(r["result"]?["tree"]?["active"] == "tab:search", "\(r)")
            return nil
        }
        let after = Self.sameBack(start, action: "selectTab")
        #expect(after.bridge.sessions[start.session]?.tree?.activeTabName == "home")
        #expect(after.stackIDs(start.session) == "W1")
        // none: back on a root changes nothing, whoever asks.
        let root = Self.start { _, _, page in page.client }
        var same = Self.sameBack(root, action: "none")
        #expect(same.stackIDs(root.session) == "W1")
        #expect(same.bridge.sessions[root.session]?.tree == root.h.bridge.sessions[root.session]?.tree)
        #expect(same.events(root.ctl, "stack.changed").map { $0["params"]?["cause"] ?? .null } == [], "\(same.take(root.ctl))")
    }

    @Test func roomOnTheActiveStackIsTheBackAlgorithm() {
        let start = Self.start { h, ctl, page in
            _ = h.request(ctl, "deeplink.open", ["session": .string(page.session), "url": "tt://products/7"])
            let opened = h.events(ctl, "webview.open").last?["params"]
            let (client, _) = h.claim(page.session, opened?["webview"]?.stringValue ?? "", opened?["token"]?.stringValue ?? "")
            return client
        }
        #expect(start.h.stackIDs(start.session) == "W1 W3")
        let after = Self.sameBack(start, action: "pop")
        #expect(after.stackIDs(start.session) == "W1")
    }

    /// A session whose url is no screen of the app has one tab, `main`: back on its root with
    /// `back_behavior: initial-tab` has no initial tab to select, and is `none` (it crashed on
    /// a force unwrap, found by fuzz-bridge's routed runs).
    @Test func aTabOfItsOwnHasNoInitialTabToGoBackTo() {
        var h = BridgeHarness(router: RouterFixture.router(nativeProduct: false, back: .initialTab))
        let ctl = h.controller(subscribeAll: true)
        let page = h.newPage(url: "https://elsewhere.example/x")
        #expect(h.bridge.sessions[page.session]?.tree?.activeTabName == "main")
        let before = h.bridge.sessions[page.session]?.tree
        let r = h.request(ctl, "router.perform", ["session": .string(page.session), "action": "goBack"])
        #expect(r["result"]?["action"] == "none", "\(r)")
        #expect(h.request(ctl, "navigation.back", ["session": .string(page.session)])["result"]?["action"] == "none")
        #expect(h.bridge.sessions[page.session]?.tree == before)
    }
}
