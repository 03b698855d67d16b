import Testing
@testable import BridgeProtocol

/// hotwire-native browser sessions at the pure level: page events in (the adapter's messages),
/// the tree, the page events and host work out.
@Suite struct HotwireBridgeTests {
    static let configuration: JSONValue = [
        "rules": [
            ["patterns": ["/new$"], "properties": ["context": "modal"]],
            ["patterns": ["/numbers$"], "properties": ["view_controller": "numbers", "uri": "hotwire://fragment/numbers"]],
        ],
    ]

    /// A hotwire-native session whose W1 tab opened and whose page connected.
    static func session(_ h: inout BridgeHarness, platform: String = "ios") -> (ClientID, String, PageHandle) {
        let ctl = h.controller()
        _ = h.take(ctl)
        h.request(ctl, "session.create", [
            "url": "http://h/", "browser": true, "profile": "hotwire-native", "platform": .string(platform),
            "pathConfiguration": configuration, "bridgeComponents": ["form"],
        ])
        guard case .openTab(let sid, _, _, let token, _, true)? = h.hostCalls.last else {
            Issue.record("no openTab in \(h.hostCalls)")
            return (ctl, "", PageHandle(client: ctl, session: "", webview: "", token: "", pageUrl: ""))
        }
        h.host(.tabOpened(session: sid, webview: .webview(1), targetId: "T1", browserContextId: "C1"))
        let reply = h.take(ctl).first
        #expect(reply?["result"]?["profile"] == "hotwire-native")
        let page = h.claimed(sid, "W1", token, url: "http://h/")
        _ = h.take(ctl)
        _ = h.take(page.client)
        return (ctl, sid, page)
    }

    static func message(_ h: inout BridgeHarness, _ page: PageHandle, _ name: String, _ data: JSONObject, location: String = "http://h/") {
        h.event(page.client, "hotwire.message", ["name": .string(name), "data": .object(data), "location": .string(location)])
    }

    static func mainStack(_ h: inout BridgeHarness, _ sid: String) -> [String] {
        let tree = h.sessionGet(sid)["result"]?["tree"]
        return (tree?["tabs"]?[0]?["stack"]?.arrayValue ?? []).map {
            "\($0["id"]?.stringValue ?? "?") \($0["url"]?.stringValue ?? "?")"
        }
    }

    @Test func proposalPushesAndTheVisitGoesToThePage() {
        var h = BridgeHarness()
        let (ctl, sid, page) = Self.session(&h)
        Self.message(&h, page, "pageLoaded", ["restorationIdentifier": "r1"])
        #expect(h.eventParams(ctl, "hotwire.message").last?["name"] == "pageLoaded")
        Self.message(&h, page, "visitProposed", ["location": "http://h/one", "options": ["action": "advance"]])
        // The push covers the shown screen: the page waits until the browser pictured it.
        #expect(h.hostCalls.last == .takeSnapshot(session: sid, webview: .webview(1)))
        #expect(h.take(page.client).isEmpty && h.stackIDs(sid) == "W1")
        h.host(.snapshotTaken(session: sid, webview: .webview(1), image: [1, 2, 3]))
        let visit = h.take(page.client).first { $0["event"] == "hotwire.visit" }
        #expect(visit?["params"] == ["location": "http://h/one", "options": ["action": "advance"], "restorationIdentifier": nil])
        #expect(h.stackIDs(sid) == "P1 W1")
        #expect(Self.mainStack(&h, sid) == ["P1 http://h/", "W1 http://h/one"])
        let changed = h.eventParams(ctl, "stack.changed").last
        #expect(changed?["cause"] == "hotwire:default:push")
        #expect(changed?["tree"]?["tabs"]?[0]?["stack"]?[0]?["restorationIdentifier"] == "r1")

        // Back: a pop, then a restore visit with the stored identifier; the reply comes first.
        _ = h.take(ctl)
        let back = h.request(ctl, "navigation.back", ["session": .string(sid)])
        #expect(back["result"]?["action"] == "pop")
        #expect(back["result"]?["removed"] == ["P1"])
        #expect(HotwireBridgeTests.ids(back["result"]?["stack"]) == "W1")
        let restore = h.take(page.client).first { $0["event"] == "hotwire.visit" }
        #expect(restore?["params"]?["options"] == ["action": "restore"])
        #expect(restore?["params"]?["restorationIdentifier"] == "r1")
        #expect(h.request(ctl, "navigation.back", ["session": .string(sid)])["result"]?["action"] == "none")
    }

    static func ids(_ v: JSONValue?) -> String { BridgeHarness.ids(v) }

    /// With or without `--config`, `router.perform goBack` on a hotwire-native session is its one back (the
    /// native pop and its restore visit, as `navigation.back`); the router's other actions are
    /// `conflict` and leave the whole Bridge as it was.
    @Test(arguments: [true, false]) func routerActionsOnAHotwireSession(configured: Bool) {
        var h = BridgeHarness(router: configured ? RouterFixture.router(nativeProduct: false) : nil)
        let (ctl, sid, page) = Self.session(&h)
        // Its trees are there with or without --config; router.resolve still needs one.
        #expect(h.request(ctl, "router.get", ["session": .string(sid)])["result"]?["tree"]?["tabs"]?[0]?["name"] == "main")
        let resolve = h.request(ctl, "router.resolve", ["url": "http://h/x"])
        #expect(configured ? resolve["error"]?["code"] != "unknown-method" : resolve["error"]?["code"] == "unknown-method")
        Self.message(&h, page, "pageLoaded", ["restorationIdentifier": "r1"])
        Self.message(&h, page, "visitProposed", ["location": "http://h/one", "options": ["action": "advance"]])
        h.host(.snapshotTaken(session: sid, webview: .webview(1), image: [1, 2, 3]))
        #expect(h.stackIDs(sid) == "P1 W1")
        _ = h.take(ctl)
        _ = h.take(page.client)
        let before = h.bridge
        for (method, params): (String, JSONObject) in [
            ("router.perform", ["session": .string(sid), "action": ["type": "push", "url": "tt://products/1"]]),
            ("router.perform", ["session": .string(sid), "action": "openDrawer"]),
            ("router.selectTab", ["session": .string(sid), "tab": "search"]),
            ("deeplink.open", ["session": .string(sid), "url": "tt://products/1"]),
        ] {
            let r = h.request(ctl, method, .object(params))
            #expect(r["error"]?["code"] == "conflict", "\(method) \(r)")
        }
        #expect(h.bridge == before)
        let back = h.request(ctl, "router.perform", ["session": .string(sid), "action": "goBack"])
        #expect(back["result"]?["action"] == "pop")
        #expect(back["result"]?["removed"] == ["P1"])
        #expect(h.stackIDs(sid) == "W1")
        let restore = h.take(page.client).first { $0["event"] == "hotwire.visit" }
        #expect(restore?["params"]?["options"] == ["action": "restore"])
        #expect(restore?["params"]?["restorationIdentifier"] == "r1")
    }


    @Test func modalOpensATabAndARedirectClosesIt() {
        var h = BridgeHarness()
        let (ctl, sid, page) = Self.session(&h)
        Self.message(&h, page, "visitProposed", ["location": "http://h/items/new", "options": ["action": "advance"]])
        guard case .openTab(sid, let w2, "http://h/items/new", let token, nil, false)? = h.hostCalls.last else {
            Issue.record("no modal tab: \(h.hostCalls)")
            return
        }
        #expect(w2 == .webview(2))
        #expect(h.stackIDs(sid) == "W2", "the engine's stack is the modal's")
        #expect(h.eventParams(ctl, "webview.open").last?["webview"] == "W2")
        let tree = h.sessionGet(sid)["result"]?["tree"]
        #expect(tree?["active"] == "modal" && tree?["modal"]?[0]?["url"] == "http://h/items/new")
        let modal = h.claimed(sid, "W2", token, url: "http://h/items/new")
        Self.message(&h, modal, "visitProposed", [
            "location": "http://h/items/1", "options": ["action": "advance", "response": ["statusCode": 200, "redirected": true]],
        ], location: "http://h/items/new")
        // The push on the main stack covers its screen: the main tab is pictured first.
        #expect(h.hostCalls.last == .takeSnapshot(session: sid, webview: .webview(1)))
        #expect(h.bridge.isHeld(modal.client) && h.stackIDs(sid) == "W2")
        h.host(.snapshotTaken(session: sid, webview: .webview(1), image: [7]))
        #expect(h.closed[modal.client] == 1000, "the modal's page goes with its tab")
        #expect(Array(h.hostCalls.suffix(2)) == [.keepTab(session: sid, webview: .webview(2)), .showTab(session: sid, webview: .webview(1))],
                "iOS keeps the modal's tab; the main tab comes to the front: it draws again")
        #expect(h.eventParams(ctl, "webview.closed").last?["webview"] == "W2", "the web view itself is gone")
        #expect(h.stackIDs(sid) == "P1 W1")
        #expect(h.eventParams(ctl, "stack.changed").last?["cause"] == "hotwire:default:redirect+dismiss+push")
        let visit = h.take(page.client).first { $0["event"] == "hotwire.visit" }
        #expect(visit?["params"]?["location"] == "http://h/items/1")
        #expect(visit?["params"]?["options"]?["response"]?["redirected"] == true)
    }

    /// iOS's modal `Session` keeps its one web view between presentations: the second modal is
    /// the first one's tab, handed to a new web view, whose page visits the screen (no cold
    /// boot). Android makes a new tab for each presentation.
    @Test(arguments: ["ios", "android"])
    func aModalPresentedAgainReusesTheKeptTabOnIOS(platform: String) {
        var h = BridgeHarness()
        let (ctl, sid, page) = Self.session(&h, platform: platform)
        Self.message(&h, page, "visitProposed", ["location": "http://h/items/new", "options": ["action": "advance"]])
        guard case .openTab(sid, .webview(2), "http://h/items/new", let token, nil, false)? = h.hostCalls.last else {
            Issue.record("no modal tab: \(h.hostCalls)")
            return
        }
        h.host(.tabOpened(session: sid, webview: .webview(2), targetId: "T2", browserContextId: "C1"))
        let modal = h.claimed(sid, "W2", token, url: "http://h/items/new")
        _ = h.request(ctl, "navigation.back", ["session": .string(sid)])
        #expect(h.closed[modal.client] == 1000 && h.stackIDs(sid) == "W1")
        #expect(h.eventParams(ctl, "webview.closed").last?["webview"] == "W2")
        #expect(h.hostCalls.contains(platform == "ios" ? .keepTab(session: sid, webview: .webview(2)) : .closeTab(session: sid, webview: .webview(2))))
        #expect(!h.hostCalls.contains(platform == "ios" ? .closeTab(session: sid, webview: .webview(2)) : .keepTab(session: sid, webview: .webview(2))))
        _ = h.take(ctl)

        Self.message(&h, page, "visitProposed", ["location": "http://h/things/new", "options": ["action": "advance"]])
        let opened = h.eventParams(ctl, "webview.open").last
        #expect(opened?["webview"] == "W3" && opened?["url"] == "http://h/things/new", "a new web view, as at any presentation")
        guard let token3 = opened?["token"]?.stringValue else {
            Issue.record("no webview.open: \(h.hostCalls)")
            return
        }
        if platform == "ios" {
            #expect(h.hostCalls.last == .reuseTab(session: sid, webview: .webview(3), kept: .webview(2), url: "http://h/things/new", token: token3))
            #expect(!h.hostCalls.contains { if case .openTab(_, .webview(3), _, _, _, _) = $0 { true } else { false } })
            #expect(h.bridge.sessions[sid]?.profile?.keepsTab(of: .webview(2)) == false, "the kept tab is W3's now")
            // The kept page claims W3 (its document stays: no cold boot), and then visits the screen.
            h.host(.tabOpened(session: sid, webview: .webview(3), targetId: "T2", browserContextId: "C1"))
            let again = h.claimed(sid, "W3", token3, url: "http://h/items/new")
            let visits = h.take(again.client).filter { $0["event"] == "hotwire.visit" }
            #expect(visits.count == 1 && visits.first?["params"]?["location"] == "http://h/things/new", "\(visits)")
            #expect(visits.first?["params"]?["options"]?["action"] == "advance")
            // (Until that visit, the page says where its document is; the visit's end says where it went.)
            Self.message(&h, again, "visitCompleted", ["location": "http://h/things/new", "restorationIdentifier": "r3"],
                         location: "http://h/things/new")
        } else {
            #expect(h.hostCalls.last == .openTab(session: sid, webview: .webview(3), url: "http://h/things/new", token: token3, post: nil, root: false))
            h.host(.tabOpened(session: sid, webview: .webview(3), targetId: "T3", browserContextId: "C1"))
            let fresh = h.claimed(sid, "W3", token3, url: "http://h/things/new")
            #expect(h.take(fresh.client).filter { $0["event"] == "hotwire.visit" }.isEmpty, "a new tab's first load is the cold boot")
        }
        #expect(h.stackIDs(sid) == "W3")
        let tree = h.sessionGet(sid)["result"]?["tree"]
        #expect(tree?["modal"]?[0]?["id"] == "W3" && tree?["modal"]?[0]?["url"] == "http://h/things/new")
    }

    /// With `keepsTabs` off (the daemon's `--devtools`: a DevTools client sees a web view's page
    /// close with it), an iOS modal's tab closes at its dismissal, and the next presentation
    /// opens a new one, as on Android.
    @Test func withoutKeptTabsAnIOSModalClosesItsTab() {
        var configuration = BridgeConfiguration()
        configuration.keepsTabs = false
        var h = BridgeHarness(configuration: configuration)
        let (ctl, sid, page) = Self.session(&h, platform: "ios")
        Self.message(&h, page, "visitProposed", ["location": "http://h/items/new", "options": ["action": "advance"]])
        _ = h.request(ctl, "navigation.back", ["session": .string(sid)])
        #expect(h.hostCalls.contains(.closeTab(session: sid, webview: .webview(2))))
        #expect(!h.hostCalls.contains { if case .keepTab = $0 { true } else { false } })
        Self.message(&h, page, "visitProposed", ["location": "http://h/things/new", "options": ["action": "advance"]])
        guard case .openTab(sid, .webview(3), "http://h/things/new", _, nil, false)? = h.hostCalls.last else {
            Issue.record("no new tab: \(h.hostCalls)")
            return
        }
    }

    @Test func nativeScreenFailuresAndExternalHosts() {
        var h = BridgeHarness()
        let (ctl, sid, page) = Self.session(&h)
        Self.message(&h, page, "visitProposed", ["location": "http://h/numbers", "options": ["action": "advance"]])
        #expect(h.stackIDs(sid) == "W1 N1", "the web view stays below the native screen")
        #expect(h.take(page.client).map { $0["event"] } == ["hotwire.cacheSnapshot"])
        // The native screen's item names its screen (the `view_controller`), in the stack as in the tree.
        let got = h.sessionGet(sid)["result"]
        #expect(got?["stack"]?[1]?["screen"] == "numbers" && got?["tree"]?["tabs"]?[0]?["stack"]?[1]?["screen"] == "numbers", "\(got ?? .null)")
        #expect(h.eventParams(ctl, "stack.changed").last?["stack"]?[1]?["screen"] == "numbers")
        _ = h.request(ctl, "navigation.back", ["session": .string(sid)])
        #expect(h.stackIDs(sid) == "W1")
        // iOS visits the uncovered web screen with `restore` (visitableViewWillAppear).
        #expect(h.take(page.client).map { $0["event"] } == ["hotwire.visit"])

        Self.message(&h, page, "visitProposed", ["location": "http://h/missing", "options": ["action": "advance"]])
        h.host(.snapshotTaken(session: sid, webview: .webview(1), image: nil))
        Self.message(&h, page, "visitRequestFailed", ["location": "http://h/missing", "identifier": "v", "statusCode": 404])
        let top = h.sessionGet(sid)["result"]?["tree"]?["tabs"]?[0]?["stack"]?[1]
        #expect(top?["error"] == ["statusCode": 404])

        _ = h.take(ctl)
        let before = h.stackIDs(sid)
        Self.message(&h, page, "visitProposed", ["location": "https://elsewhere.test/x", "options": ["action": "advance"]])
        #expect(h.eventParams(ctl, "external.open").last?["url"] == "https://elsewhere.test/x")
        #expect(h.stackIDs(sid) == before && h.eventParams(ctl, "stack.changed").isEmpty)
    }

    @Test func bridgeMessagesAndReplies() {
        var h = BridgeHarness()
        let (ctl, sid, page) = Self.session(&h, platform: "android")
        h.event(page.client, "bridge.message", [
            "id": "1", "component": "form", "event": "connect",
            "data": ["submitTitle": "Save", "metadata": ["url": "http://h/"]], "location": "http://h/",
        ])
        let m = h.eventParams(ctl, "bridge.message").last
        #expect(m?["component"] == "form" && m?["id"] == "1" && m?["ignored"] == nil)
        h.event(page.client, "bridge.message", [
            "id": "2", "component": "form", "event": "connect", "data": ["metadata": ["url": "http://h/old"]], "location": "http://h/",
        ])
        #expect(h.eventParams(ctl, "bridge.message").last?["ignored"] == true)
        let r = h.request(ctl, "bridge.reply", ["session": .string(sid), "webview": "W1", "id": "1", "component": "form",
                                                "event": "connect", "data": ["ok": true]])
        #expect(r["result"] == [:])
        let reply = h.take(page.client).first { $0["event"] == "bridge.reply" }
        #expect(reply?["params"] == ["id": "1", "component": "form", "event": "connect", "data": ["ok": true]])
        #expect(h.request(ctl, "bridge.reply", ["session": .string(sid), "webview": "W7", "id": "1", "component": "form",
                                                "event": "connect"])["error"]?["code"] == "unknown-webview")
        #expect(h.request(ctl, "bridge.reply", ["session": .string(sid), "webview": "W1", "id": "1", "component": "form",
                                                "event": "connect", "data": 3])["error"]?["code"] == "invalid-params")
        // A session without the profile has no bridge.reply, and its pages' events are app events.
        let plain = h.request(ctl, "session.create", ["url": "http://h/"])["result"]?["session"]?.stringValue ?? ""
        #expect(h.request(ctl, "bridge.reply", ["session": .string(plain), "webview": "W1", "id": "1", "component": "form",
                                                "event": "connect"])["error"]?["code"] == "invalid-params")
    }

    @Test func profileNeedsABrowserAndRefusalsChangeNothing() {
        var h = BridgeHarness()
        let ctl = h.controller()
        _ = h.take(ctl)
        let before = h.bridge
        for params: JSONValue in [
            ["url": "http://h/", "profile": "hotwire-native"],
            ["url": "http://h/", "browser": true, "profile": "hotwire-native", "platform": "web"],
            ["url": "http://h/", "browser": true, "profile": "other"],
            ["url": "http://h/", "browser": true, "profile": "astro", "bridgeComponents": ["form"]],
        ] {
            #expect(h.request(ctl, "session.create", params)["error"]?["code"] == "invalid-params")
        }
        #expect(h.bridge.sessionCount == before.sessionCount && h.hostCalls.isEmpty)
    }

    /// A session with `pathConfigurationUrl` http://h/pc.json whose W1 page connected: the host
    /// was asked to fetch it (once), nothing else.
    static func fetchingSession(_ h: inout BridgeHarness) -> (ClientID, String, PageHandle) {
        let ctl = h.controller()
        _ = h.take(ctl)
        h.request(ctl, "session.create", ["url": "http://h/", "browser": true, "profile": "hotwire-native",
                                          "pathConfigurationUrl": "http://h/pc.json"])
        guard case .openTab(let sid, _, _, let token, _, true)? = h.hostCalls.last else {
            Issue.record("no tab")
            return (ctl, "", PageHandle(client: ctl, session: "", webview: "", token: "", pageUrl: ""))
        }
        h.host(.tabOpened(session: sid, webview: .webview(1), targetId: "T1", browserContextId: "C1"))
        // Not before the main web view's page is there (the fetch runs in its frame).
        #expect(!h.hostCalls.contains { if case .fetchPathConfiguration = $0 { true } else { false } })
        let page = h.claimed(sid, "W1", token, url: "http://h/")
        #expect(h.hostCalls.last == .fetchPathConfiguration(session: sid, webview: .webview(1), url: "http://h/pc.json"))
        _ = h.take(ctl)
        _ = h.take(page.client)
        return (ctl, sid, page)
    }

    static func fetches(_ h: BridgeHarness) -> Int {
        h.hostCalls.filter { if case .fetchPathConfiguration = $0 { true } else { false } }.count
    }

    /// The daemon's answer to the fetch, typed: a document that is a path configuration replaces
    /// the rules (the next proposal uses them); a failed fetch or a refused document (not one,
    /// over a limit) keeps the rules the session had; either way controllers hear
    /// `hotwire.pathConfiguration` once, and a second answer, or one for another url, changes nothing.
    enum Answer: String, CaseIterable {
        case document, http404, notJSON, rulesNotAnArray, notAnObject, overTheRuleLimit

        var fetch: PathConfigurationFetch {
            switch self {
            case .document: .document(HotwireBridgeTests.configuration)
            case .http404: .failed("HTTP 404")
            case .notJSON: .failed("not JSON: unexpected end of input, expected a JSON value at offset 0")
            case .rulesNotAnArray: .document(["rules": "x"])
            case .notAnObject: .document(.array([]))
            case .overTheRuleLimit: .document(["rules": .array(Array(repeating: ["patterns": ["/x$"]] as JSONValue, count: 1001))])
            }
        }
        /// What the event says instead of the rule count.
        var error: String? {
            switch self {
            case .document: nil
            case .http404: "HTTP 404"
            case .notJSON: "not JSON: unexpected end of input, expected a JSON value at offset 0"
            case .rulesNotAnArray: "'rules' must be an array"
            case .notAnObject: "a path configuration is a JSON object"
            case .overTheRuleLimit: "1001 rules: at most 1000"
            }
        }
    }

    @Test(arguments: Answer.allCases)
    func theServerCopyOfThePathConfigurationIsFetchedByTheHost(answer: Answer) {
        let (fetch, error, active) = (answer.fetch, answer.error, answer == .document ? "modal" : "tab:main")
        var h = BridgeHarness()
        let (ctl, sid, page) = Self.fetchingSession(&h)
        // An answer for another url is not the session's.
        h.host(.pathConfigurationFetched(session: sid, url: "http://h/other.json", .document(Self.configuration)))
        #expect(h.eventParams(ctl, "hotwire.pathConfiguration").isEmpty)
        h.host(.pathConfigurationFetched(session: sid, url: "http://h/pc.json", fetch))
        let events = h.eventParams(ctl, "hotwire.pathConfiguration")
        #expect(events.count == 1)
        if let error {
            #expect(events.last == ["session": .string(sid), "webview": "W1", "url": "http://h/pc.json", "error": .string(error)])
        } else {
            #expect(events.last == ["session": .string(sid), "webview": "W1", "url": "http://h/pc.json", "rules": 2])
        }
        // A second answer is nobody's: the first one stands.
        h.host(.pathConfigurationFetched(session: sid, url: "http://h/pc.json", .document(["rules": [["patterns": ["/a/new$"], "properties": ["context": "default"]]]])))
        #expect(h.eventParams(ctl, "hotwire.pathConfiguration").count == 1)
        // The main page loading again does not fetch it again.
        h.disconnect(page.client)
        let again = h.claimed(sid, "W1", page.token, url: "http://h/")
        #expect(Self.fetches(h) == 1)
        Self.message(&h, again, "visitProposed", ["location": "http://h/a/new", "options": ["action": "advance"]])
        h.host(.snapshotTaken(session: sid, webview: .webview(1), image: [1]))
        #expect(h.sessionGet(sid)["result"]?["tree"]?["active"] == .string(active))
    }

    /// A page cannot set the app's path configuration: its `hotwire.pathConfiguration` is refused
    /// (`not-allowed`), changes nothing and reaches no controller, whether or not the session has a
    /// `pathConfigurationUrl` and whether or not the daemon's answer came.
    @Test(arguments: [false, true]) func aPageCannotSetThePathConfiguration(withURL: Bool) {
        var h = BridgeHarness()
        let (ctl, sid, page) = withURL ? Self.fetchingSession(&h) : Self.session(&h)
        let forged: JSONValue = ["url": "http://h/pc.json", "document": ["rules": [["patterns": [".*"], "properties": ["context": "modal"]]]]]
        for answered in [false, true] {
            if answered, withURL {
                h.host(.pathConfigurationFetched(session: sid, url: "http://h/pc.json", .failed("HTTP 500")))
                _ = h.take(ctl)
            }
            let before = h.bridge
            h.event(page.client, "hotwire.pathConfiguration", forged)
            let refusal = h.take(page.client)
            #expect(refusal.count == 1 && refusal.first?["error"]?["code"] == "not-allowed", "\(refusal)")
            #expect(refusal.first?["error"]?["message"]?.stringValue?.contains("the daemon fetches the session's pathConfigurationUrl") == true)
            #expect(h.take(ctl).isEmpty)
            #expect(h.bridge == before)
        }
        #expect(Self.fetches(h) == (withURL ? 1 : 0))
        Self.message(&h, page, "visitProposed", ["location": "http://h/somewhere", "options": ["action": "advance"]])
        h.host(.snapshotTaken(session: sid, webview: .webview(1), image: [1]))
        #expect(h.sessionGet(sid)["result"]?["tree"]?["active"] == "tab:main")
    }

    @Test func pageInvalidatedReloadsAndAModalFormClearsTheMainCache() {
        var h = BridgeHarness()
        let (ctl, sid, page) = Self.session(&h)
        Self.message(&h, page, "pageInvalidated", [:])
        #expect(h.take(page.client).map { $0["event"] } == ["hotwire.reload"])
        Self.message(&h, page, "visitProposed", ["location": "http://h/items/new", "options": ["action": "advance"]])
        guard case .openTab(sid, _, _, let token, _, _)? = h.hostCalls.last else { Issue.record("no modal tab"); return }
        let modal = h.claimed(sid, "W2", token, url: "http://h/items/new")
        Self.message(&h, modal, "formSubmissionFinished", ["location": "http://h/items"], location: "http://h/items/new")
        _ = h.take(page.client)
        let back = h.request(ctl, "navigation.back", ["session": .string(sid)])
        #expect(back["result"]?["action"] == "pop" && back["result"]?["removed"] == ["W2"])
        #expect(h.take(page.client).map { $0["event"] } == ["hotwire.clearSnapshotCache"])
        #expect(h.stackIDs(sid) == "W1")
    }

    /// Back from a native screen to the web screen its web view still shows: Android restores
    /// the current visit (the page's `native:restore`, on which bridge 1.x components connect
    /// again); iOS visits it with `restore` and its stored identifier.
    @Test(arguments: ["ios", "android"]) func backFromANativeScreenRestoresTheWebScreen(_ platform: String) {
        var h = BridgeHarness()
        let (ctl, sid, page) = Self.session(&h, platform: platform)
        Self.message(&h, page, "pageLoaded", ["restorationIdentifier": "r1"])
        Self.message(&h, page, "visitProposed", ["location": "http://h/numbers", "options": ["action": "advance"]])
        if case .takeSnapshot(sid, .webview(1))? = h.hostCalls.last {
            h.host(.snapshotTaken(session: sid, webview: .webview(1), image: [1]))
        }
        #expect(h.sessionGet(sid)["result"]?["tree"]?["tabs"]?[0]?["stack"]?[1]?["kind"] == "native")
        _ = h.take(page.client)
        let back = h.request(ctl, "navigation.back", ["session": .string(sid)])
        #expect(back["result"]?["action"] == "pop")
        let events = h.take(page.client)
        #expect(events.compactMap { $0["event"]?.stringValue } == [platform == "android" ? "hotwire.restoreCurrentVisit" : "hotwire.visit"])
        if platform == "ios" {
            #expect(events.first?["params"]?["options"] == ["action": "restore"])
            #expect(events.first?["params"]?["restorationIdentifier"] == "r1")
        }
    }

    static func snapshotOf(_ h: inout BridgeHarness, _ ctl: ClientID, _ sid: String, _ placeholder: String) -> JSONValue {
        h.request(ctl, "placeholder.snapshot", ["session": .string(sid), "placeholder": .string(placeholder)])
    }

    /// A screen covered by a visit keeps the browser's picture of it, taken before the visit
    /// (the page waits as a PWA's `pwa-navigate` does); a back shows it over the web view until
    /// the restore visit renders, and a picture survives a modal over its stack.
    @Test func coveredScreensKeepTheirSnapshotAndABackShowsItUntilRendered() {
        var h = BridgeHarness()
        let (ctl, sid, page) = Self.session(&h)
        Self.message(&h, page, "pageLoaded", ["restorationIdentifier": "r1"])
        Self.message(&h, page, "visitProposed", ["location": "http://h/one", "options": ["action": "advance"]])
        #expect(h.bridge.isHeld(page.client))
        // The page's later frames wait with it.
        Self.message(&h, page, "visitStarted", ["identifier": "v1", "location": "http://h/one"], location: "http://h/one")
        #expect(h.eventParams(ctl, "hotwire.message").last?["name"] == "visitProposed")
        let jpeg: [UInt8] = [0xFF, 0xD8, 0x42, 0xFF, 0xD9]
        h.host(.snapshotTaken(session: sid, webview: .webview(1), image: jpeg))
        #expect(!h.bridge.isHeld(page.client))
        #expect(h.eventParams(ctl, "hotwire.message").last?["name"] == "visitStarted")
        #expect(h.stackIDs(sid) == "P1 W1")
        #expect(Self.snapshotOf(&h, ctl, sid, "P1")["result"] == ["mimeType": "image/jpeg", "data": .string(Base64.encode(jpeg))])

        // A modal over the main stack: no picture needed (the main tab keeps its screen), and
        // the main stack's pictures stay.
        Self.message(&h, page, "visitProposed", ["location": "http://h/items/new", "options": ["action": "advance"]], location: "http://h/one")
        #expect(!h.bridge.isHeld(page.client) && h.stackIDs(sid) == "W2")
        #expect(Self.snapshotOf(&h, ctl, sid, "P1")["result"]?["data"] == .string(Base64.encode(jpeg)))
        _ = h.request(ctl, "navigation.back", ["session": .string(sid)])
        #expect(h.stackIDs(sid) == "P1 W1")

        // Back: the picture over the web view until the restore visit renders.
        _ = h.take(page.client)
        let calls = h.hostCalls.count
        _ = h.request(ctl, "navigation.back", ["session": .string(sid)])
        #expect(h.stackIDs(sid) == "W1")
        #expect(Array(h.hostCalls[calls...]).contains(.showOverlay(session: sid, webview: .webview(1), image: jpeg)))
        #expect(h.take(page.client).first { $0["event"] == "hotwire.visit" }?["params"]?["options"] == ["action": "restore"])
        let shown = h.hostCalls.count
        // Another visit's render does not lift it; the restore visit's does.
        Self.message(&h, page, "visitRendered", ["identifier": "v1"], location: "http://h/one")
        Self.message(&h, page, "visitStarted", ["identifier": "v2", "location": "http://h/"], location: "http://h/")
        #expect(h.hostCalls.count == shown)
        Self.message(&h, page, "visitRendered", ["identifier": "v2"])
        #expect(Array(h.hostCalls[shown...]) == [.removeOverlay(session: sid, webview: .webview(1))])
        // Its placeholder went: no snapshot to ask for.
        #expect(Self.snapshotOf(&h, ctl, sid, "P1")["error"]?["code"] == "invalid-params")
    }

    /// A picture the browser could not take: the placeholder has none (a clear error), and a
    /// back shows no overlay. A navigation Turbo did not make waits the same way; so does a
    /// controller's `navigation.navigateToUrl`, whose reply comes once it is decided.
    @Test func noPictureAndNonTurboNavigations() {
        var h = BridgeHarness()
        let (ctl, sid, page) = Self.session(&h)
        Self.message(&h, page, "visitProposed", ["location": "http://h/one", "options": ["action": "advance"]])
        h.host(.snapshotTaken(session: sid, webview: .webview(1), image: nil))
        #expect(h.stackIDs(sid) == "P1 W1")
        #expect(Self.snapshotOf(&h, ctl, sid, "P1")["error"]?["code"] == "browser-error")
        let calls = h.hostCalls.count
        _ = h.request(ctl, "navigation.back", ["session": .string(sid)])
        #expect(!h.hostCalls[calls...].contains { if case .showOverlay = $0 { return true } else { return false } })

        // A page's own navigation (a document load the browser stopped, as `navigate`).
        let navID = h.nextID
        #expect(h.request(page.client, "navigate", ["url": "http://h/plain"]) == .null)
        #expect(h.hostCalls.last == .takeSnapshot(session: sid, webview: .webview(1)))
        h.host(.snapshotTaken(session: sid, webview: .webview(1), image: [9]))
        #expect(h.take(page.client).contains { $0["id"] == .int(navID) && $0["result"]?["handledBy"] == "hotwire-native" })
        #expect(h.stackIDs(sid) == "P2 W1")
        #expect(Self.snapshotOf(&h, ctl, sid, "P2")["result"]?["data"] == .string(Base64.encode([9])))

        // A controller's navigateToUrl: held, answered with the new stack once decided.
        _ = h.take(ctl)
        let id = h.nextID
        #expect(h.request(ctl, "navigation.navigateToUrl", ["session": .string(sid), "url": "http://h/two"]) == .null)
        #expect(h.hostCalls.last == .takeSnapshot(session: sid, webview: .webview(1)))
        h.host(.snapshotTaken(session: sid, webview: .webview(1), image: [8]))
        let frames = h.take(ctl)
        let reply = frames.first { $0["id"] == .int(id) }
        #expect(Self.ids(reply?["result"]?["stack"]) == "P2 P3 W1")
        #expect(frames.firstIndex { $0["id"] == .int(id) } == 0, "the reply before the events it caused")
    }

    /// A web screen that disappears under a web push, or under a modal presented over its
    /// stack, has Turbo cache its snapshot first, before the web view's next visit.
    @Test func cacheSnapshotBeforeWebPushesAndModals() {
        var h = BridgeHarness()
        let (_, sid, page) = Self.session(&h)
        Self.message(&h, page, "visitProposed", ["location": "http://h/one", "options": ["action": "advance"]])
        h.host(.snapshotTaken(session: sid, webview: .webview(1), image: [1]))
        #expect(h.take(page.client).map { $0["event"] } == ["hotwire.cacheSnapshot", "hotwire.visit"])
        Self.message(&h, page, "visitProposed", ["location": "http://h/two", "options": ["action": "replace"]], location: "http://h/one")
        #expect(h.take(page.client).map { $0["event"] } == ["hotwire.visit"], "a replaced screen is gone: nothing to cache")
        Self.message(&h, page, "visitProposed", ["location": "http://h/items/new", "options": ["action": "advance"]], location: "http://h/two")
        #expect(h.stackIDs(sid) == "W2")
        #expect(h.take(page.client).map { $0["event"] } == ["hotwire.cacheSnapshot"])
    }

    /// `bridged open URL [--profile hotwire-native …]`: the daemon's own command.
    @Test func theOpenCommandWithAndWithoutAProfile() throws {
        var h = BridgeHarness()
        h.bridge.apply(.openBrowserSession(url: "http://h/a/"), at: h.now)
        h.collect()
        guard case .openTab(let plain, _, "http://h/a/", _, nil, true)? = h.hostCalls.last else { Issue.record("no tab: \(h.hostCalls)"); return }
        #expect(!h.bridge.isHotwireSession(plain))
        let profile = try SessionProfile.parse(["profile": "hotwire-native", "platform": "android"])
        h.bridge.apply(.openBrowserSession(url: "http://h/b/", profile: profile), at: h.now)
        h.collect()
        guard case .openTab(let hot, _, "http://h/b/", _, nil, true)? = h.hostCalls.last else { Issue.record("no tab: \(h.hostCalls)"); return }
        #expect(h.bridge.hotwireProfile(session: hot)?.platform == .android)
        #expect(h.bridge.sessionProfile(hot) == profile)
        // A profile that does not parse never becomes an input.
        #expect(throws: ProfileError("unknown profile \"nope\": \"astro\" (the default), \"hotwire-native\" or \"capacitor\"")) {
            try SessionProfile.parse(["profile": "nope"])
        }
    }

    /// Found by fuzz-bridge (Fuzz/corpus/bridge/seed-26): a page's `navigate` that is decided at
    /// once (no screen to picture) is answered before the events it caused, as every request's
    /// reply comes first (contract section 2).
    @Test func aPagesNavigateDecidedAtOnceIsAnsweredFirst() {
        for url in ["tt://account", "http://h/items/new", "https://elsewhere.example/"] {
            var h = BridgeHarness()
            let (_, _, page) = Self.session(&h)
            let id = h.nextID
            _ = h.request(page.client, "navigate", ["url": .string(url)])
            let frames = h.take(page.client)
            #expect(frames.first?["id"] == .int(id), "\(url): \(frames)")
            #expect(frames.first?["result"]?["handledBy"] == "hotwire-native", "\(url): \(frames)")
        }
    }

    /// Found by fuzz-bridge (Fuzz/corpus/bridge/seed-31): a controller's
    /// `navigation.navigateToUrl` waiting for the snapshot of the screen it covers is answered
    /// (`unknown-session`) when the session closes before the snapshot comes; nothing is decided.
    @Test func aProposalWaitingForItsSnapshotIsAnsweredWhenItsSessionCloses() {
        var h = BridgeHarness()
        let (ctl, sid, _) = Self.session(&h)
        let other = h.controller()
        let id = h.nextID
        #expect(h.request(ctl, "navigation.navigateToUrl", ["session": .string(sid), "url": "http://h/two"]) == .null)
        #expect(h.hostCalls.last == .takeSnapshot(session: sid, webview: .webview(1)))
        _ = h.request(other, "session.close", ["session": .string(sid)])
        #expect(!h.bridge.sessionIDs.contains(sid))
        h.host(.snapshotTaken(session: sid, webview: .webview(1), image: [1]))
        let replies = h.take(ctl).filter { $0["id"] == .int(id) }
        #expect(replies.count == 1 && replies.first?["error"]?["code"] == "unknown-session", "\(replies)")
    }

    /// Found by fuzz-bridge (Fuzz/corpus/bridge/seed-32): a page's `navigate` waiting for the
    /// snapshot of its screen goes with its page when another page claims the web view meanwhile
    /// (as a waiting `pwa-navigate` does): nothing is sent to the closed connection, nothing is
    /// proposed for it.
    @Test func aWaitingNavigateGoesWithItsReplacedPage() {
        var h = BridgeHarness()
        let (_, sid, page) = Self.session(&h)
        _ = h.request(page.client, "navigate", ["url": "http://h/plain"])
        #expect(h.hostCalls.last == .takeSnapshot(session: sid, webview: .webview(1)))
        _ = h.claimed(sid, "W1", page.token, url: "http://h/")
        h.bridge.apply(.host(.snapshotTaken(session: sid, webview: .webview(1), image: [1])), at: h.now)
        let effects = h.bridge.drainEffects()
        // Its close (held with it, after the `closed` event) goes; no reply, nothing after it.
        #expect(effects.contains { if case .close(page.client, _, _) = $0 { true } else { false } }, "\(effects)")
        let sent = effects.compactMap { e -> String? in if case .send(page.client, let b) = e { String(decoding: b, as: UTF8.self) } else { nil } }
        #expect(sent == [#"{"event":"closed","params":{"reason":"replaced"}}"#], "\(sent)")
        #expect(h.stackIDs(sid) == "W1")
    }
}
