import Testing
@testable import BridgeProtocol

/// capacitor browser sessions at the pure level (docs/CAPACITOR.md): the page's calls in, the
/// controller's events and the page's results out, the controller's methods, native navigation.
@Suite struct CapacitorBridgeTests {
    static let plugins: JSONValue = ["App", "Preferences", "Device", "Network", "Browser"]

    /// A capacitor session whose W1 tab opened and whose page connected (and said capacitor.ready).
    static func session(_ h: inout BridgeHarness, platform: String = "android", extra: JSONObject = [:]) -> (ClientID, String, PageHandle) {
        let ctl = h.controller()
        _ = h.take(ctl)
        var capacitor: JSONObject = ["appId": "com.example.demo", "appName": "Demo", "version": "1.2.3", "build": "7",
                                     "plugins": plugins, "launchUrl": "myapp://item/7"]
        for (k, v) in extra { capacitor[k] = v }
        h.request(ctl, "session.create", [
            "url": "http://app.test/", "browser": true, "profile": "capacitor", "platform": .string(platform),
            "capacitor": .object(capacitor),
        ])
        guard case .openTab(let sid, _, _, let token, _, true)? = h.hostCalls.last else {
            Issue.record("no openTab in \(h.hostCalls)")
            return (ctl, "", PageHandle(client: ctl, session: "", webview: "", token: "", pageUrl: ""))
        }
        h.host(.tabOpened(session: sid, webview: .webview(1), targetId: "T1", browserContextId: "C1"))
        let reply = h.take(ctl).first
        #expect(reply?["result"]?["profile"] == "capacitor")
        let page = h.claimed(sid, "W1", token, url: "http://app.test/")
        h.event(page.client, "capacitor.ready", ["platform": .string(platform), "url": "http://app.test/"])
        _ = h.take(ctl)
        _ = h.take(page.client)
        return (ctl, sid, page)
    }

    static func call(_ h: inout BridgeHarness, _ page: PageHandle, _ id: String?, _ plugin: String, _ method: String,
                     _ options: JSONObject = [:], save: Bool = false, unavailable: Bool = false) {
        var p: JSONObject = ["callbackId": id.map(JSONValue.string) ?? .null, "plugin": .string(plugin), "method": .string(method),
                             "options": .object(options), "save": .bool(save)]
        if unavailable { p["unavailable"] = true }
        h.event(page.client, "capacitor.call", .object(p))
    }

    /// The page's `capacitor.result` params, in order, taken.
    static func results(_ h: inout BridgeHarness, _ page: PageHandle) -> [JSONValue] {
        h.take(page.client).filter { $0["event"] == "capacitor.result" }.map { $0["params"] ?? .null }
    }

    /// Everything the page was sent, as `name` or `name:eventName` (triggers), taken.
    static func pageEvents(_ h: inout BridgeHarness, _ page: PageHandle) -> [String] {
        h.take(page.client).map { f in
            let name = f["event"]?.stringValue ?? "?"
            if name == "capacitor.trigger" { return "trigger:\(f["params"]?["eventName"]?.stringValue ?? "")" }
            return "\(name):\(f["params"]?["callbackId"]?.stringValue ?? "")"
        }
    }

    @Test func sessionCreateTakesTheProfilesParamsAndRefusesBadOnes() {
        var h = BridgeHarness()
        let (_, sid, _) = Self.session(&h)
        let info = h.sessionGet(sid)["result"]
        #expect(info?["profile"] == "capacitor")
        #expect(info?["platform"] == "android")
        #expect(info?["plugins"] == Self.plugins)

        let ctl = h.controller()
        let before = h.bridge.sessionCount
        for (params, param) in [
            (["url": "http://a/", "browser": true, "profile": "capacitor", "platform": "windows"] as JSONValue, "platform"),
            (["url": "http://a/", "browser": true, "profile": "capacitor", "capacitor": "x"], "capacitor"),
            (["url": "http://a/", "browser": true, "profile": "capacitor", "capacitor": ["plugins": ["NoSuchPlugin"]]], "NoSuchPlugin"),
            (["url": "http://a/", "browser": true, "capacitor": ["appId": "x"]], "profile"),
            (["url": "http://a/", "profile": "capacitor"], "browser"),
        ] {
            let r = h.request(ctl, "session.create", params)
            #expect(r["error"]?["code"] == "invalid-params", "\(params): \(r)")
            #expect(r["error"]?["message"]?.stringValue?.contains(param) == true, "\(r)")
        }
        #expect(h.bridge.sessionCount == before)
        // A capacitor method on a plain session names the profile it needs.
        let plain = h.request(ctl, "session.create", ["url": "http://a/"])["result"]?["session"] ?? .null
        let r = h.request(ctl, "capacitor.emit", ["session": plain, "plugin": "App", "event": "pause"])
        #expect(r["error"]?["code"] == "invalid-params")
        #expect(r["error"]?["message"]?.stringValue?.contains("capacitor") == true)
    }

    @Test func aCallIsAnEventAndTheDevicesAnswerGoesToThePage() {
        var h = BridgeHarness()
        let (ctl, sid, page) = Self.session(&h)
        Self.call(&h, page, "1", "App", "getInfo")
        let call = h.eventParams(ctl, "capacitor.call").last
        #expect(call == ["session": .string(sid), "webview": "W1", "callbackId": "1", "plugin": "App", "method": "getInfo", "options": [:]])
        let result = Self.results(&h, page)
        #expect(result.count == 1)
        #expect(result.first?["success"] == true)
        #expect(result.first?["data"] == ["name": "Demo", "id": "com.example.demo", "build": "7", "version": "1.2.3"])
        let seen = h.eventParams(ctl, "capacitor.result").last
        #expect(seen?["session"] == .string(sid) && seen?["callbackId"] == "1" && seen?["plugin"] == "App" && seen?["success"] == true)
        #expect(seen?["mocked"] == nil)

        // A preference survives a new document (capacitor.ready again).
        Self.call(&h, page, "2", "Preferences", "set", ["key": "count", "value": "1"])
        h.event(page.client, "capacitor.ready", ["platform": "android", "url": "http://app.test/"])
        _ = h.take(page.client)
        Self.call(&h, page, "3", "Preferences", "get", ["key": "count"])
        #expect(Self.results(&h, page).first?["data"] == ["value": "1"])
        // The launch URL of a cold start.
        Self.call(&h, page, "4", "App", "getLaunchUrl")
        #expect(Self.results(&h, page).first?["data"] == ["url": "myapp://item/7"])
    }

    @Test func mocksAnswerInOrderTheirNumberOfTimes() {
        var h = BridgeHarness()
        let (ctl, sid, page) = Self.session(&h)
        let s = JSONValue.string(sid)
        #expect(h.request(ctl, "capacitor.mock", ["session": s, "plugin": "Device", "method": "getInfo", "result": ["model": "A"], "times": 2])["result"]?["queued"] == 1)
        #expect(h.request(ctl, "capacitor.mock", ["session": s, "plugin": "Device", "method": "getInfo", "error": ["message": "no", "code": "E1"]])["result"]?["queued"] == 2)
        for id in ["1", "2", "3", "4"] { Self.call(&h, page, id, "Device", "getInfo") }
        let r = Self.results(&h, page)
        #expect(r.map { $0["data"]?["model"] } == [.string("A"), .string("A"), nil, r.last?["data"]?["model"]])
        #expect(r[2]["success"] == false && r[2]["error"]?["message"] == "no" && r[2]["error"]?["code"] == "E1")
        #expect(r[3]["success"] == true && r[3]["data"]?["model"] != "A")
        #expect(h.eventParams(ctl, "capacitor.result").map { $0["mocked"] } == [true, true, true, nil])
        // Bad mocks change nothing.
        for bad in [["session": s, "plugin": "Device"] as JSONValue, ["session": s, "plugin": "Device", "method": "getInfo", "result": 1, "hold": true],
                    ["session": s, "plugin": "Device", "method": "getInfo", "result": 1, "times": 0]] {
            #expect(h.request(ctl, "capacitor.mock", bad)["error"]?["code"] == "invalid-params")
        }
        Self.call(&h, page, "5", "Device", "getInfo")
        #expect(h.eventParams(ctl, "capacitor.result").last?["mocked"] == nil)
    }

    @Test func aHeldCallWaitsForTheControllersReply() {
        var h = BridgeHarness()
        let (ctl, sid, page) = Self.session(&h)
        let s = JSONValue.string(sid)
        _ = h.request(ctl, "capacitor.mock", ["session": s, "plugin": "Device", "method": "getId", "hold": true])
        Self.call(&h, page, "9", "Device", "getId")
        #expect(Self.results(&h, page).isEmpty)
        #expect(h.eventParams(ctl, "capacitor.result").isEmpty)
        #expect(h.request(ctl, "capacitor.reply", ["session": s, "callbackId": "8", "data": [:]])["error"]?["code"] == "invalid-params")
        let reply = h.request(ctl, "capacitor.reply", ["session": s, "callbackId": "9", "data": ["identifier": "abc"]])
        #expect(reply["result"] == .object([:]))
        #expect(Self.results(&h, page).map { $0["data"] } == [["identifier": "abc"]])
        #expect(h.eventParams(ctl, "capacitor.result").last?["callbackId"] == "9")
        // Answered once.
        #expect(h.request(ctl, "capacitor.reply", ["session": s, "callbackId": "9", "data": [:]])["error"]?["code"] == "invalid-params")
    }

    @Test func aHeldCallDroppedByANewDocumentIsReportedThenTheNewDocument() {
        var h = BridgeHarness()
        let (ctl, sid, page) = Self.session(&h)
        let s = JSONValue.string(sid)
        _ = h.request(ctl, "capacitor.mock", ["session": s, "plugin": "Device", "method": "getId", "hold": true])
        _ = h.request(ctl, "capacitor.mock", ["session": s, "plugin": "Preferences", "method": "get", "hold": true])
        Self.call(&h, page, "21", "Preferences", "get", ["key": "k"])
        Self.call(&h, page, "20", "Device", "getId")
        _ = h.take(ctl)
        h.event(page.client, "capacitor.ready", ["platform": "ios", "url": "http://app.test/again"])
        let frames = h.take(ctl).filter { $0["event"]?.stringValue?.hasPrefix("capacitor.") == true }
        #expect(frames.map { $0["event"] } == ["capacitor.result", "capacitor.result", "capacitor.ready"])
        let dropped = frames.prefix(2).map { $0["params"] ?? .null }
        #expect(dropped.map { $0["callbackId"] } == ["20", "21"])
        for d in dropped {
            #expect(d["success"] == false && d["dropped"] == true && d["session"] == s)
            #expect(d["error"]?["code"] == "DROPPED")
        }
        // The platform is the session's, whatever the page says; the url is the page's.
        #expect(frames.last?["params"] == ["session": s, "webview": "W1", "platform": "android", "url": "http://app.test/again"])
        // Nothing waits any more, and the new page got no stale answer.
        #expect(h.request(ctl, "capacitor.reply", ["session": s, "callbackId": "20", "data": [:]])["error"]?["code"] == "invalid-params")
        #expect(Self.results(&h, page).isEmpty)
    }

    @Test func emitReachesTheListenersAndAnUnknownPluginIsRefused() {
        var h = BridgeHarness()
        let (ctl, sid, page) = Self.session(&h)
        let s = JSONValue.string(sid)
        Self.call(&h, page, "11", "Network", "addListener", ["eventName": "networkStatusChange"], save: true)
        #expect(Self.results(&h, page).isEmpty)
        let status: JSONValue = ["connected": false, "connectionType": "none"]
        let r = h.request(ctl, "capacitor.emit", ["session": s, "plugin": "Network", "event": "networkStatusChange", "data": status])
        #expect(r["result"]?["listeners"] == 1)
        let got = Self.results(&h, page)
        #expect(got.count == 1 && got[0]["callbackId"] == "11" && got[0]["data"] == status && got[0]["save"] == true)
        // What getStatus answers from then on.
        Self.call(&h, page, "12", "Network", "getStatus")
        #expect(Self.results(&h, page).first?["data"] == status)
        #expect(h.request(ctl, "capacitor.emit", ["session": s, "plugin": "Camera", "event": "x"])["error"]?["code"] == "invalid-params")
        #expect(h.take(page.client).isEmpty)
    }

    @Test func aPluginTheSessionLacksIsUnavailable() {
        var h = BridgeHarness()
        let (ctl, _, page) = Self.session(&h)
        Self.call(&h, page, nil, "Geolocation", "getCurrentPosition", unavailable: true)
        #expect(h.eventParams(ctl, "capacitor.call").last?["unavailable"] == true)
        #expect(Self.results(&h, page).isEmpty)
        // A call that reached native anyway is rejected as not implemented.
        Self.call(&h, page, "5", "Geolocation", "getCurrentPosition")
        #expect(h.eventParams(ctl, "capacitor.call").last?["unavailable"] == true)
        let r = Self.results(&h, page).first
        #expect(r?["success"] == false && r?["error"]?["code"] == "UNIMPLEMENTED")
        #expect(r?["error"]?["message"]?.stringValue?.contains("not implemented") == true)
    }

    @Test func backOnAndroidGoesToTheListenerOrTheHistory() {
        var h = BridgeHarness()
        let (ctl, sid, page) = Self.session(&h)
        let s = JSONValue.string(sid)
        // No listener: the web view's history decides (asked of the host first).
        h.hostCalls.removeAll()
        #expect(h.request(ctl, "navigation.back", ["session": s]) == .null)
        #expect(h.hostCalls == [.readHistory(session: sid, webview: .webview(1))])
        h.host(.historyRead(session: sid, webview: .webview(1), canGoBack: true))
        #expect(h.take(ctl).first { $0["result"] != nil }?["result"]?["action"] == "goBack")
        #expect(h.hostCalls.last == .goBackInHistory(session: sid, webview: .webview(1)))
        h.hostCalls.removeAll()
        _ = h.request(ctl, "navigation.back", ["session": s])
        h.host(.historyRead(session: sid, webview: .webview(1), canGoBack: false))
        #expect(h.take(ctl).first { $0["result"] != nil }?["result"]?["action"] == "none")
        #expect(h.hostCalls == [.readHistory(session: sid, webview: .webview(1))])

        // A backButton listener hears it, with canGoBack; the document's backbutton too.
        Self.call(&h, page, "20", "App", "addListener", ["eventName": "backButton"], save: true)
        _ = h.request(ctl, "navigation.back", ["session": s])
        h.host(.historyRead(session: sid, webview: .webview(1), canGoBack: true))
        #expect(h.take(ctl).first { $0["result"] != nil }?["result"]?["action"] == "backButton")
        let frames = h.take(page.client)
        #expect(frames.map { $0["event"] } == ["capacitor.result", "capacitor.trigger"])
        #expect(frames[0]["params"]?["callbackId"] == "20" && frames[0]["params"]?["data"] == ["canGoBack": true])
        #expect(frames[1]["params"]?["eventName"] == "backbutton")
        #expect(!h.hostCalls.contains(.goBackInHistory(session: sid, webview: .webview(1))))
    }

    @Test func aTraversalToAnotherDocumentStaysInTheWebView() {
        var h = BridgeHarness()
        let (ctl, sid, page) = Self.session(&h)
        _ = h.take(ctl)
        let stack = h.stackIDs(sid)
        // The page's history.back() to another document, stopped by the browser: the web view
        // goes back in its own history; the stack is as it was, no event.
        h.host(.historyTraversed(session: sid, webview: .webview(1)))
        #expect(h.hostCalls.last == .goBackInHistory(session: sid, webview: .webview(1)))
        #expect(h.stackIDs(sid) == stack)
        #expect(h.take(ctl).isEmpty)
        #expect(h.take(page.client).filter { $0["event"] == "back" }.isEmpty)
        // Another session's traversal (a plain one) is still a back of its stack.
        let calls = h.hostCalls.count
        h.host(.historyTraversed(session: sid, webview: .webview(9)))
        #expect(h.hostCalls.count == calls)
    }

    @Test func iOSHasNoBackButton() {
        var h = BridgeHarness()
        let (ctl, sid, page) = Self.session(&h, platform: "ios")
        Self.call(&h, page, "20", "App", "addListener", ["eventName": "backButton"], save: true)
        h.hostCalls.removeAll()
        let r = h.request(ctl, "navigation.back", ["session": .string(sid)])
        #expect(r["error"]?["code"] == "not-allowed")
        #expect(r["error"]?["message"]?.stringValue?.contains("back button") == true)
        #expect(h.hostCalls.isEmpty && h.take(page.client).isEmpty)
    }

    @Test func aDeepLinkReachesAppUrlOpenAndIsKeptForTheFirstListener() {
        var h = BridgeHarness()
        let (ctl, sid, page) = Self.session(&h)
        let s = JSONValue.string(sid)
        #expect(h.request(ctl, "navigation.openUrl", ["session": s, "url": "myapp://item/8"])["result"]?["delivered"] == false)
        // The cold start's launchUrl was kept too, before it.
        Self.call(&h, page, "30", "App", "addListener", ["eventName": "appUrlOpen"], save: true)
        #expect(Self.results(&h, page).map { $0["data"] } == [["url": "myapp://item/7"], ["url": "myapp://item/8"]])
        #expect(h.request(ctl, "navigation.openUrl", ["session": s, "url": "myapp://item/9"])["result"]?["delivered"] == true)
        #expect(Self.results(&h, page).map { $0["data"] } == [["url": "myapp://item/9"]])
        #expect(h.request(ctl, "navigation.openUrl", ["session": s, "url": "not a url"])["error"]?["code"] == "invalid-params")
        #expect(h.request(ctl, "navigation.openUrl", ["session": s])["error"]?["code"] == "invalid-params")
    }

    @Test func pauseAndResumeInTheirPlatformsOrder() {
        var h = BridgeHarness()
        let (ctl, sid, page) = Self.session(&h)
        let s = JSONValue.string(sid)
        Self.call(&h, page, "40", "App", "addListener", ["eventName": "appStateChange"], save: true)
        Self.call(&h, page, "41", "App", "addListener", ["eventName": "pause"], save: true)
        Self.call(&h, page, "42", "App", "addListener", ["eventName": "resume"], save: true)
        _ = h.take(page.client)
        #expect(h.request(ctl, "app.pause", ["session": s])["result"]?["active"] == false)
        #expect(Self.pageEvents(&h, page) == ["capacitor.result:41", "trigger:pause", "capacitor.result:40"])
        #expect(h.request(ctl, "app.pause", ["session": s])["result"]?["active"] == false)
        #expect(h.take(page.client).isEmpty)
        #expect(h.request(ctl, "app.resume", ["session": s])["result"]?["active"] == true)
        #expect(Self.pageEvents(&h, page) == ["capacitor.result:40", "capacitor.result:42", "trigger:resume"])
        #expect(h.sessionGet(sid)["result"]?["active"] == true)
    }

    @Test func theInAppBrowserIsAnItemWithItsOwnTab() {
        var h = BridgeHarness()
        let (ctl, sid, page) = Self.session(&h)
        Self.call(&h, page, "50", "Browser", "addListener", ["eventName": "browserFinished"], save: true)
        Self.call(&h, page, "49", "Browser", "addListener", ["eventName": "browserPageLoaded"], save: true)
        h.hostCalls.removeAll()
        Self.call(&h, page, "51", "Browser", "open", ["url": "https://example.com/"])
        #expect(Self.results(&h, page).map { $0["callbackId"] } == ["51"])
        // A new item with its own tab, which gets no Capacitor.
        guard case .openTab(sid, .webview(2), "https://example.com/", let token, nil, false)? = h.hostCalls.first(where: {
            if case .openTab = $0 { true } else { false } }) else {
            Issue.record("no tab for the in-app browser: \(h.hostCalls)")
            return
        }
        #expect(h.stackIDs(sid) == "W1 W2")
        #expect(!h.bridge.injectsProfileScript(session: sid, webview: .webview(2)))
        #expect(h.bridge.injectsProfileScript(session: sid, webview: .webview(1)))
        h.host(.tabOpened(session: sid, webview: .webview(2), targetId: "T2", browserContextId: "C1"))
        let inApp = h.claimed(sid, "W2", token, url: "https://example.com/")
        #expect(Self.results(&h, page).map { $0["callbackId"] } == ["49"])
        // Its own navigations go ahead in it, wherever they lead.
        h.hostCalls.removeAll()
        h.event(inApp.client, "navigate", ["url": "https://elsewhere.test/"])
        #expect(h.hostCalls == [.loadURL(session: sid, webview: .webview(2), url: "https://elsewhere.test/")])
        // The back closes it (no history needed): the item goes, browserFinished.
        h.hostCalls.removeAll()
        let back = h.request(ctl, "navigation.back", ["session": .string(sid)])
        #expect(back["result"]?["action"] == "closeBrowser")
        #expect(back["result"]?["removed"] == ["W2"])
        #expect(BridgeHarness.ids(back["result"]?["stack"]) == "W1")
        #expect(h.hostCalls.contains(.closeTab(session: sid, webview: .webview(2))))
        #expect(!h.hostCalls.contains(.readHistory(session: sid, webview: .webview(1))))
        #expect(Self.results(&h, page).map { $0["callbackId"] } == ["50"])
        // Browser.close closes it too.
        Self.call(&h, page, "52", "Browser", "open", ["url": "https://example.com/"])
        #expect(h.stackIDs(sid) == "W1 W3")
        Self.call(&h, page, "53", "Browser", "close")
        #expect(Self.results(&h, page).map { $0["callbackId"] } == ["52", "53", "50"])
        #expect(h.stackIDs(sid) == "W1")
    }

    @Test func exitAppEndsTheSession() {
        var h = BridgeHarness()
        let (ctl, sid, page) = Self.session(&h)
        Self.call(&h, page, "60", "App", "exitApp")
        #expect(h.eventParams(ctl, "session.closed").last?["reason"] == "exit-app")
        #expect(!h.bridge.sessionIDs.contains(sid))
        #expect(h.hostCalls.last == .closeSession(session: sid))
    }

    @Test func aNavigationOffTheAppOpensOutside() {
        var h = BridgeHarness()
        let (ctl, sid, _) = Self.session(&h, extra: ["allowNavigation": ["*.allowed.test"]])
        h.hostCalls.removeAll()
        for (url, stays) in [("http://app.test/next", true), ("https://a.allowed.test/", true), ("https://elsewhere.test/", false)] {
            let r = h.request(ctl, "navigation.navigateToUrl", ["session": .string(sid), "url": .string(url)])
            #expect(r["result"]?["stack"] != nil)
            if stays {
                #expect(h.hostCalls.last == .loadURL(session: sid, webview: .webview(1), url: url))
            } else {
                #expect(h.eventParams(ctl, "external.open").last?["url"] == .string(url))
            }
        }
        #expect(h.stackIDs(sid) == "W1")
    }

    /// Found by fuzz-bridge (Fuzz/corpus/bridge/seed-25): a controller's `navigation.navigateToUrl`
    /// off the app is answered before the `external.open` it caused, as every request's reply
    /// comes first (contract section 2).
    @Test func aNavigationOffTheAppIsAnsweredBeforeItsExternalOpen() {
        var h = BridgeHarness()
        let (ctl, sid, page) = Self.session(&h)
        _ = h.take(ctl)
        _ = h.request(ctl, "navigation.navigateToUrl", ["session": .string(sid), "url": "https://elsewhere.test/"])
        let frames = h.take(ctl)
        #expect(frames.first?["result"]?["stack"] != nil, "\(frames)")
        #expect(frames.dropFirst().contains { $0["event"] == "external.open" }, "\(frames)")
        // A page's `navigate` request off the app: its reply first too.
        _ = h.take(page.client)
        _ = h.request(page.client, "navigate", ["url": "https://elsewhere.test/b"])
        let pageFrames = h.take(page.client)
        #expect(pageFrames.first?["id"] != nil, "\(pageFrames)")
    }

    /// Found by fuzz-bridge (Fuzz/corpus/bridge/seed-27): a back waiting for the web view's
    /// history whose controller left meanwhile is decided, and answered to no one (nothing is
    /// sent to a connection after it left).
    @Test func aBackWhoseControllerLeftIsAnsweredToNoOne() {
        var h = BridgeHarness()
        let (ctl, sid, _) = Self.session(&h)
        let other = h.controller()
        h.hostCalls.removeAll()
        #expect(h.request(ctl, "navigation.back", ["session": .string(sid)]) == .null)
        #expect(h.hostCalls == [.readHistory(session: sid, webview: .webview(1))])
        h.disconnect(ctl)
        _ = h.take(ctl)
        h.host(.historyRead(session: sid, webview: .webview(1), canGoBack: true))
        #expect(h.take(ctl).isEmpty)
        #expect(h.hostCalls.last == .goBackInHistory(session: sid, webview: .webview(1)))
        // A refused back (iOS refuses every back; here: none waits) is not sent either.
        #expect(h.request(other, "navigation.back", ["session": .string(sid)]) == .null)
        h.host(.historyRead(session: sid, webview: .webview(1), canGoBack: false))
        #expect(h.take(other).contains { $0["result"]?["action"] == "none" })
    }

    /// Found by fuzz-bridge: a back waiting for the web view's history holds its connection
    /// (`Bridge.holdForHistory`): a later request of the same controller is answered after it
    /// (replies keep the order of the requests), and one of another controller at once.
    @Test func aBackWaitingForTheHistoryIsAnsweredBeforeLaterRequests() {
        var h = BridgeHarness()
        let (ctl, sid, _) = Self.session(&h)
        let other = h.controller()
        let backID = h.nextID
        _ = h.request(ctl, "navigation.back", ["session": .string(sid)])
        #expect(h.hostCalls.last == .readHistory(session: sid, webview: .webview(1)))
        let pingID = h.nextID
        #expect(h.request(ctl, "ping") == .null, "it waits behind the back")
        #expect(h.request(other, "ping")["result"] != nil, "another controller is not held up")
        h.host(.historyRead(session: sid, webview: .webview(1), canGoBack: true))
        let replies = h.take(ctl).compactMap { $0["id"] }
        #expect(replies.prefix(2) == [.int(backID), .int(pingID)], "\(replies)")
    }

    /// The same back when its session closes before the history is read: the request that
    /// waited hears why (`unknown-session`), then the later ones are answered.
    @Test func aBackWaitingForTheHistoryIsAnsweredWhenItsSessionCloses() {
        var h = BridgeHarness()
        let (ctl, sid, _) = Self.session(&h)
        let other = h.controller()
        let backID = h.nextID
        _ = h.request(ctl, "navigation.back", ["session": .string(sid)])
        let pingID = h.nextID
        _ = h.request(ctl, "ping")
        _ = h.request(other, "session.close", ["session": .string(sid)])
        h.host(.historyRead(session: sid, webview: .webview(1), canGoBack: false))
        let replies = h.take(ctl).filter { $0["id"] != nil }
        #expect(replies.map { $0["id"] } == [.int(backID), .int(pingID)], "\(replies)")
        #expect(replies.first?["error"]?["code"] == "unknown-session")
        #expect(!h.bridge.isHeld(ctl))
    }
}
