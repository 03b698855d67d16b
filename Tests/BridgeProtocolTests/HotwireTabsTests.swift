import Testing
@testable import BridgeProtocol

/// A hotwire-native session with `tabs` (Hotwire Native's tab bar): a navigator per tab, each
/// tab's web view started when it is first selected, `router.selectTab` selecting one, and each
/// page's messages deciding in its own tab's navigator.
@Suite struct HotwireTabsTests {
    static let tabs: JSONValue = [["title": "Home"], ["title": "Search", "url": "http://h/search"], ["title": "Me", "url": "http://h/me"]]

    static let elevenTabs: [JSONValue] = (0..<11).map { i -> JSONValue in
        let tab: JSONObject = ["title": .string("T\(i)"), "url": "http://h/"]
        return .object(tab)
    }

    /// A session with three tabs whose W1 tab opened and whose page connected.
    static func session(_ h: inout BridgeHarness) -> (ClientID, String, PageHandle) {
        let ctl = h.controller()
        _ = h.take(ctl)
        h.request(ctl, "session.create", [
            "url": "http://h/", "browser": true, "profile": "hotwire-native", "platform": "ios", "tabs": tabs,
            "pathConfiguration": HotwireBridgeTests.configuration,
        ])
        guard case .openTab(let sid, _, _, let token, _, true)? = h.hostCalls.last else {
            Issue.record("no openTab in \(h.hostCalls)")
            return (ctl, "", PageHandle(client: ctl, session: "", webview: "", token: "", pageUrl: ""))
        }
        h.host(.tabOpened(session: sid, webview: .webview(1), targetId: "T1", browserContextId: "C1"))
        #expect(h.take(ctl).first?["result"]?["profile"] == "hotwire-native")
        let page = h.claimed(sid, "W1", token, url: "http://h/")
        _ = h.take(ctl)
        _ = h.take(page.client)
        return (ctl, sid, page)
    }

    /// Each tab's stack in the session's tree, as `name: id url, …`.
    static func tree(_ h: inout BridgeHarness, _ sid: String) -> [String] {
        let tree = h.sessionGet(sid)["result"]?["tree"]
        return (tree?["tabs"]?.arrayValue ?? []).map { tab in
            let items = (tab["stack"]?.arrayValue ?? []).map { "\($0["id"]?.stringValue ?? "?") \($0["url"]?.stringValue ?? "?")" }
            return "\(tab["name"]?.stringValue ?? "?"): \(items.joined(separator: ", "))"
        }
    }

    @Test func eachTabHasItsWebViewAndOnlyTheFirstStarts() {
        var h = BridgeHarness()
        let (_, sid, _) = Self.session(&h)
        #expect(Self.tree(&h, sid) == ["Home: W1 http://h/", "Search: W2 http://h/search", "Me: W3 http://h/me"])
        #expect(h.sessionGet(sid)["result"]?["tree"]?["active"] == "tab:Home")
        #expect(h.stackIDs(sid) == "W1")
        // No tab but the first one's was opened.
        #expect(h.hostCalls.filter { if case .openTab = $0 { return true } else { return false } }.count == 1)
    }

    @Test func selectingATabStartsItThenBringsItBack() {
        var h = BridgeHarness()
        let (ctl, sid, page) = Self.session(&h)
        let s = JSONValue.string(sid)
        let r = h.request(ctl, "router.selectTab", ["session": s, "tab": "Search"])
        #expect(r["result"]?["action"] == "selectTab" && r["result"]?["tab"] == "Search")
        #expect(r["result"]?["stack"]?[0]?["id"] == "W2")
        #expect(r["result"]?["tree"]?["active"] == "tab:Search")
        guard case .openTab(sid, .webview(2), "http://h/search", let token, nil, false)? = h.hostCalls.last else {
            Issue.record("no openTab of W2 in \(h.hostCalls)")
            return
        }
        let events = h.take(ctl)
        // The reply first, then what the selection caused.
        #expect(events.first?["id"] != nil)
        let open = events.first { $0["event"] == "webview.open" }?["params"]
        #expect(open?["webview"] == "W2" && open?["url"] == "http://h/search" && open?["token"] == .string(token))
        #expect(events.contains { $0["event"] == "stack.changed" && $0["params"]?["cause"] == "hotwire:none:selectTab" })
        #expect(h.stackIDs(sid) == "W2")
        let search = h.claimed(sid, "W2", token, url: "http://h/search")
        _ = h.take(search.client)
        // Back on Home: its web view comes to the front, nothing opens.
        let calls = h.hostCalls.count
        _ = h.request(ctl, "router.perform", ["session": s, "action": ["type": "selectTab", "tab": "Home"]])
        #expect(Array(h.hostCalls.dropFirst(calls)) == [.showTab(session: sid, webview: .webview(1))])
        #expect(h.stackIDs(sid) == "W1")
        // The selected tab again changes nothing; an unknown tab is refused and changes nothing.
        let before = h.bridge
        #expect(h.request(ctl, "router.selectTab", ["session": s, "tab": "Home"])["result"]?["tab"] == "Home")
        let bad = h.request(ctl, "router.selectTab", ["session": s, "tab": "Cart"])
        #expect(bad["error"]?["code"] == "invalid-params")
        #expect(bad["error"]?["message"]?.stringValue?.contains("Home, Search, Me") == true)
        #expect(h.bridge.sessions[sid]?.tree == before.sessions[sid]?.tree)
        _ = page
    }

    @Test func aPageDecidesInItsOwnTabsNavigator() {
        var h = BridgeHarness()
        let (ctl, sid, home) = Self.session(&h)
        let s = JSONValue.string(sid)
        _ = h.request(ctl, "router.selectTab", ["session": s, "tab": "Search"])
        guard case .openTab(_, .webview(2), _, let token, _, _)? = h.hostCalls.last else { return }
        let search = h.claimed(sid, "W2", token, url: "http://h/search")
        // Home's page (in the background) proposes a visit: Home's stack grows, the selected
        // tab's does not.
        HotwireBridgeTests.message(&h, home, "visitProposed", ["location": "http://h/one", "options": ["action": "advance"]])
        if case .takeSnapshot(sid, .webview(1))? = h.hostCalls.last {
            h.host(.snapshotTaken(session: sid, webview: .webview(1), image: [1]))
        }
        let tree = Self.tree(&h, sid)
        #expect(tree.first?.hasPrefix("Home: P") == true && tree.first?.hasSuffix("W1 http://h/one") == true, "\(tree)")
        #expect(tree[1] == "Search: W2 http://h/search")
        #expect(h.stackIDs(sid) == "W2")
        #expect(h.take(home.client).contains { $0["event"] == "hotwire.visit" })
        // Search's page proposes: Search's stack grows and the engine's stack (Search's) too.
        HotwireBridgeTests.message(&h, search, "visitProposed", ["location": "http://h/search?q=a", "options": ["action": "advance"]],
                                   location: "http://h/search")
        if case .takeSnapshot(sid, .webview(2))? = h.hostCalls.last {
            h.host(.snapshotTaken(session: sid, webview: .webview(2), image: [2]))
        }
        #expect(h.stackIDs(sid).hasSuffix("W2") && h.stackIDs(sid).hasPrefix("P"), "\(h.stackIDs(sid))")
        // navigation.back pops the selected tab's screen, not Home's.
        let back = h.request(ctl, "navigation.back", ["session": s])
        #expect(back["result"]?["action"] == "pop")
        #expect(h.stackIDs(sid) == "W2")
        #expect(Self.tree(&h, sid).first?.hasSuffix("W1 http://h/one") == true)
        // At the tab's root, back does nothing (it does not switch tabs).
        #expect(h.request(ctl, "navigation.back", ["session": s])["result"]?["action"] == "none")
        #expect(h.sessionGet(sid)["result"]?["tree"]?["active"] == "tab:Search")
    }

    static let badTabs: [(JSONValue, String)] = [
        ("x", "non-empty array"),
        ([], "non-empty array"),
        ([["title": ""]], "title of 1 to 64 bytes"),
        ([["title": "A"], ["title": "A", "url": "http://h/a"]], "given twice"),
        ([["title": "A"], ["title": "B"]], "needs the url"),
        ([["title": "A"], ["title": "B", "url": "ftp://h/"]], "http(s) URL"),
        ([["title": "A", "url": "http://h/other"]], "session's url"),
        (.array(elevenTabs), "at most 10"),
    ]

    @Test(arguments: badTabs)
    func badTabsAreRefused(_ tabs: JSONValue, _ message: String) {
        var h = BridgeHarness()
        let ctl = h.controller()
        var params: JSONObject = ["url": "http://h/", "browser": true, "profile": "hotwire-native"]
        params["tabs"] = tabs
        let r = h.request(ctl, "session.create", .object(params))
        #expect(r["error"]?["code"] == "invalid-params", "\(r)")
        #expect(r["error"]?["message"]?.stringValue?.contains(message) == true, "\(r)")
        #expect(h.bridge.sessionCount == 0)
        // Without the profile, tabs is refused as another profile's param.
        let plain = h.request(ctl, "session.create", ["url": "http://h/", "tabs": [["title": "A"]]])
        #expect(plain["error"]?["message"]?.stringValue?.contains("hotwire-native") == true)
    }

    @Test func tenTabsAreAccepted() {
        var h = BridgeHarness()
        let ctl = h.controller()
        var list: [JSONValue] = [["title": "T0"]]
        for i in 1..<10 {
            let tab: JSONObject = ["title": .string("T\(i)"), "url": .string("http://h/\(i)")]
            list.append(.object(tab))
        }
        let tabs = JSONValue.array(list)
        let r = h.request(ctl, "session.create", ["url": "http://h/", "browser": true, "profile": "hotwire-native", "tabs": tabs])
        #expect(r["error"] == nil)
        #expect(h.bridge.sessionCount == 1)
    }
}
