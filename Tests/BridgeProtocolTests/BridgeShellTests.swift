import Testing
@testable import BridgeProtocol

/// The shell's duties at the pure level (Bridge+Shell.swift): dialogs answered by the session's
/// policy, crashed and unresponsive web views, file choosers, downloads, the tab limit, and a
/// controller hearing events while its request waits for the browser.
@Suite struct BridgeShellTests {
    /// A browser session created with `extra` params, its root tab open and W1's page claimed.
    static func session(_ h: inout BridgeHarness, _ extra: JSONObject = [:]) -> (ctl: ClientID, sid: String, page: PageHandle) {
        let ctl = h.controller()
        _ = h.take(ctl)
        var params: JSONObject = ["url": "http://h/a/", "browser": true]
        for (k, v) in extra { params[k] = v }
        h.request(ctl, "session.create", .object(params))
        guard case .openTab(let sid, _, _, let token, _, _)? = h.hostCalls.last else {
            Issue.record("no openTab: \(h.hostCalls)")
            return (ctl, "", PageHandle(client: ctl, session: "", webview: "", token: "", pageUrl: ""))
        }
        h.host(.tabOpened(session: sid, webview: .webview(1), targetId: "T1", browserContextId: "C1"))
        let page = h.claimed(sid, "W1", token, url: "http://h/a/")
        _ = h.take(ctl)
        return (ctl, sid, page)
    }

    static func dialog(_ type: DialogType, _ message: String = "hi", _ defaultValue: String = "") -> Dialog {
        Dialog(type: type, message: message, defaultValue: defaultValue, url: "http://h/a/")
    }

    struct PolicyCase: Sendable, CustomTestStringConvertible {
        var policy: String?
        var type: DialogType
        /// The answer the Bridge gives at once (nil: it waits for a controller).
        var accept: Bool?
        var text: String?
        var testDescription: String { "\(policy ?? "default") \(type)" }
    }

    @Test(arguments: [
        PolicyCase(policy: nil, type: .alert, accept: false),
        PolicyCase(policy: nil, type: .confirm, accept: false),
        PolicyCase(policy: "dismiss", type: .prompt, accept: false),
        PolicyCase(policy: "accept", type: .confirm, accept: true),
        PolicyCase(policy: "accept", type: .prompt, accept: true, text: "dflt"),
        PolicyCase(policy: nil, type: .beforeunload, accept: true),
        PolicyCase(policy: "controller", type: .beforeunload, accept: true),
        PolicyCase(policy: "controller", type: .confirm, accept: nil),
    ])
    func aDialogIsAnsweredByTheSessionsPolicy(_ c: PolicyCase) {
        var h = BridgeHarness()
        let (ctl, sid, _) = Self.session(&h, c.policy.map { ["dialogs": .string($0)] } ?? [:])
        let calls = h.hostCalls.count
        h.host(.shell(.dialogOpened(session: sid, webview: .webview(1), Self.dialog(c.type, "sure?", "dflt"))))
        let event = h.events(ctl, "webview.dialog").first?["params"]
        #expect(event?["webview"] == "W1" && event?["type"] == .string(c.type.rawValue) && event?["message"] == "sure?")
        #expect(event?["defaultValue"] == "dflt" && event?["url"] == "http://h/a/")
        let new = Array(h.hostCalls[calls...])
        if let accept = c.accept {
            #expect(new == [.shell(.answerDialog(session: sid, webview: .webview(1), accept: accept, text: c.text))])
            #expect(h.timers.isEmpty)
        } else {
            #expect(new.isEmpty)
            #expect(h.timers.count == 1, "a bounded wait for the controller")
        }
        // Chromium reports it closed: controllers hear how.
        h.host(.shell(.dialogClosed(session: sid, webview: .webview(1), accepted: c.accept ?? false, text: "")))
        let closed = h.events(ctl, "webview.dialog.closed").first?["params"]
        #expect(closed?["accepted"] == .bool(c.accept ?? false))
        #expect(closed?["by"] == .string(c.accept == nil ? "page" : "policy"))
        #expect(h.timers.isEmpty)
    }

    @Test func aControllerAnswersADialogOrItsTimeDoes() {
        var h = BridgeHarness()
        let (ctl, sid, _) = Self.session(&h, ["dialogs": "controller", "dialogTimeoutMs": 2000])
        h.host(.shell(.dialogOpened(session: sid, webview: .webview(1), Self.dialog(.prompt, "name?", "anon"))))
        #expect(h.events(ctl, "webview.dialog").first?["params"]?["policy"] == "controller")
        let state = h.request(ctl, "session.get", ["session": .string(sid)])["result"]?["webviews"]
        #expect(state?["W1"]?["state"] == "dialog" && state?["W1"]?["dialog"]?["message"] == "name?")
        // Answered: the answer goes, the timer is cancelled.
        let calls = h.hostCalls.count
        let r = h.request(ctl, "webview.dialog.answer", ["session": .string(sid), "webview": "W1", "accept": true, "text": "Ada"])
        #expect(r["result"] == .object([:]))
        #expect(Array(h.hostCalls[calls...]) == [.shell(.answerDialog(session: sid, webview: .webview(1), accept: true, text: "Ada"))])
        #expect(h.timers.isEmpty)
        h.host(.shell(.dialogClosed(session: sid, webview: .webview(1), accepted: true, text: "Ada")))
        #expect(h.events(ctl, "webview.dialog.closed").last?["params"]?["by"] == "controller")
        // No dialog open now: a second answer is a conflict and asks nothing of the browser.
        let again = h.request(ctl, "webview.dialog.answer", ["session": .string(sid), "webview": "W1", "accept": true])
        #expect(again["error"]?["code"] == "conflict")

        // Not answered in time: dismissed.
        h.host(.shell(.dialogOpened(session: sid, webview: .webview(1), Self.dialog(.confirm))))
        let before = h.hostCalls.count
        h.advance(ms: 1999)
        #expect(h.hostCalls.count == before)
        h.advance(ms: 1)
        #expect(Array(h.hostCalls[before...]) == [.shell(.answerDialog(session: sid, webview: .webview(1), accept: false, text: nil))])
        h.host(.shell(.dialogClosed(session: sid, webview: .webview(1), accepted: false, text: "")))
        #expect(h.events(ctl, "webview.dialog.closed").last?["params"]?["by"] == "timeout")
    }

    struct BadCreate: Sendable, CustomTestStringConvertible {
        var params: [String: String]
        var browser: Bool
        var testDescription: String { "\(params) browser=\(browser)" }
    }

    @Test(arguments: [
        BadCreate(params: ["dialogs": #""ask""#], browser: true),
        BadCreate(params: ["dialogs": "1"], browser: true),
        BadCreate(params: ["dialogTimeoutMs": "0"], browser: true),
        BadCreate(params: ["dialogTimeoutMs": "120001"], browser: true),
        BadCreate(params: ["permissions": #"{"geolocation": "yes"}"#], browser: true),
        BadCreate(params: ["permissions": #"{"teleport": "granted"}"#], browser: true),
        BadCreate(params: ["permissions": #"["camera"]"#], browser: true),
        BadCreate(params: ["geolocation": #"{"latitude": 91, "longitude": 0}"#], browser: true),
        BadCreate(params: ["geolocation": #"{"latitude": 1}"#], browser: true),
        BadCreate(params: ["dialogs": #""accept""#], browser: false),
    ])
    func badShellSettingsCreateNothing(_ c: BadCreate) throws {
        var h = BridgeHarness()
        let ctl = h.controller()
        var params: JSONObject = ["url": "http://h/a/", "browser": .bool(c.browser)]
        for (k, v) in c.params { params[k] = try JSONParser.parse(Array(v.utf8)) }
        let r = h.request(ctl, "session.create", .object(params))
        #expect(r["error"]?["code"] == "invalid-params", "\(r)")
        #expect(h.bridge.sessionCount == 0 && h.hostCalls.isEmpty)
    }

    @Test func settingsAtTheirLimitsAreKept() {
        var h = BridgeHarness()
        let (_, sid, _) = Self.session(&h, [
            "dialogs": "accept", "dialogTimeoutMs": .int(Int64(ShellSettings.maxDialogTimeoutMs)),
            "permissions": ["geolocation": "granted", "camera": "denied", "notifications": "prompt"],
            "geolocation": ["latitude": -90, "longitude": 180, "accuracy": 0],
        ])
        var expected = ShellSettings()
        expected.dialogs = .accept
        expected.dialogTimeoutMs = ShellSettings.maxDialogTimeoutMs
        expected.permissions = ["geolocation": .granted, "camera": .denied, "notifications": .prompt]
        expected.geolocation = Geolocation(latitude: -90, longitude: 180, accuracy: 0)
        #expect(h.bridge.shellSettings(session: sid) == expected)
    }

    @Test func aCrashedWebViewFailsAtOnceUntilReloaded() {
        var h = BridgeHarness()
        let (ctl, sid, _) = Self.session(&h)
        h.host(.shell(.crashed(session: sid, webview: .webview(1), reason: "killed")))
        let event = h.events(ctl, "webview.crashed").first?["params"]
        #expect(event == ["session": .string(sid), "webview": "W1", "url": "http://h/a/", "reason": "killed"])
        // Reported once.
        h.host(.shell(.crashed(session: sid, webview: .webview(1), reason: "killed")))
        #expect(h.events(ctl, "webview.crashed").count == 1)
        let calls = h.hostCalls.count
        for (method, extra) in [("webview.evaluate", ["expression": JSONValue.string("1")]), ("webview.click", ["selector": "a"]),
                                ("webview.type", ["selector": "a", "text": "x"])] {
            var params: JSONObject = ["session": .string(sid), "webview": "W1"]
            for (k, v) in extra { params[k] = v }
            #expect(h.request(ctl, method, .object(params))["error"]?["code"] == "webview-crashed")
        }
        #expect(h.request(ctl, "session.screenshot", ["session": .string(sid)])["error"]?["code"] == "webview-crashed")
        #expect(h.hostCalls.count == calls, "nothing asked of the browser")
        #expect(h.request(ctl, "session.get", ["session": .string(sid)])["result"]?["webviews"]?["W1"]?["state"] == "crashed")

        // Reloaded: the tab loads its url again and the web view is usable.
        let id = h.nextID
        #expect(h.request(ctl, "webview.reload", ["session": .string(sid), "webview": "W1"]) == .null)
        guard case .shell(.reload(let request, sid, .webview(1), "http://h/a/"))? = h.hostCalls.last else {
            Issue.record("no reload: \(h.hostCalls)")
            return
        }
        h.host(.answered(request, .done))
        #expect(h.take(ctl).first { $0["id"] == .int(id) }?["result"] == .object([:]))
        #expect(h.request(ctl, "session.get", ["session": .string(sid)])["result"]?["webviews"] == .object([:]))
        _ = h.request(ctl, "webview.evaluate", ["session": .string(sid), "webview": "W1", "expression": "1"])
        guard case .evaluate? = h.hostCalls.last else {
            Issue.record("no evaluate after the reload")
            return
        }
    }

    @Test func anUnresponsivePageIsSaidOnceAndItsCallFails() {
        var h = BridgeHarness()
        let (ctl, sid, _) = Self.session(&h)
        let id = h.nextID
        _ = h.request(ctl, "webview.evaluate", ["session": .string(sid), "webview": "W1", "expression": "1"])
        guard case .evaluate(let request, _, _, _)? = h.hostCalls.last else {
            Issue.record("no evaluate")
            return
        }
        h.host(.shell(.unresponsive(session: sid, webview: .webview(1), true)))
        h.host(.answered(request, .unresponsive("W1 did not answer in time")))
        let frames = h.take(ctl)
        #expect(frames.first { $0["id"] == .int(id) }?["error"]?["code"] == "page-unresponsive")
        #expect(frames.filter { $0["event"] == "webview.unresponsive" }.count == 1)
        h.host(.shell(.unresponsive(session: sid, webview: .webview(1), true)))
        #expect(h.take(ctl).isEmpty, "said once")
        #expect(h.request(ctl, "session.get", ["session": .string(sid)])["result"]?["webviews"]?["W1"]?["state"] == "unresponsive")
        h.host(.shell(.unresponsive(session: sid, webview: .webview(1), false)))
        #expect(h.events(ctl, "webview.responsive").count == 1)
        #expect(h.request(ctl, "session.get", ["session": .string(sid)])["result"]?["webviews"] == .object([:]))
    }

    /// A controller whose request waits for the browser still hears the session's events; its
    /// replies keep their order.
    @Test func eventsDoNotWaitBehindAPendingRequest() {
        var h = BridgeHarness()
        let (ctl, sid, _) = Self.session(&h)
        let id = h.nextID
        _ = h.request(ctl, "webview.evaluate", ["session": .string(sid), "webview": "W1", "expression": "slow()"])
        guard case .evaluate(let request, _, _, _)? = h.hostCalls.last else {
            Issue.record("no evaluate")
            return
        }
        // The controller's next request waits behind the first.
        h.raw(ctl, #"{"id":900,"method":"ping"}"#)
        // The page is pushed meanwhile: the controller hears it now.
        h.host(.navigationStopped(NavigationStop(session: sid, webview: .webview(1), url: "http://h/b")))
        var frames = h.take(ctl)
        #expect(frames.contains { $0["event"] == "stack.changed" }, "\(frames)")
        #expect(!frames.contains { $0["id"] != nil }, "no reply yet")
        h.host(.answered(request, .value(1)))
        frames = h.take(ctl)
        #expect(frames.compactMap { $0["id"] } == [.int(id), .int(900)])
    }

    @Test func theTabLimitRefusesNavigationsAndSaysSoOnce() {
        var configuration = BridgeConfiguration()
        configuration.maxTabsPerSession = 2
        var h = BridgeHarness(configuration: configuration)
        let (ctl, sid, _) = Self.session(&h)
        h.host(.navigationStopped(NavigationStop(session: sid, webview: .webview(1), url: "http://h/b")))
        #expect(h.stackIDs(sid) == "W1 W2")
        guard case .openTab(_, .webview(2), _, let token, _, _)? = h.hostCalls.last else { return }
        h.host(.tabOpened(session: sid, webview: .webview(2), targetId: "T2", browserContextId: "C1"))
        _ = h.claimed(sid, "W2", token, url: "http://h/b")
        _ = h.take(ctl)
        let calls = h.hostCalls.count
        for i in 0..<5 {
            h.host(.navigationStopped(NavigationStop(session: sid, webview: .webview(2), url: "http://h/c\(i)")))
        }
        h.host(.navigationStopped(NavigationStop(session: sid, webview: .webview(2), url: "http://h/w", disposition: .windowOpen)))
        #expect(h.stackIDs(sid) == "W1 W2")
        #expect(h.hostCalls.count == calls, "no tab asked for")
        let limit = h.events(ctl, "session.limit")
        #expect(limit.count == 1)
        #expect(limit.first?["params"] == ["session": .string(sid), "limit": "tabs", "max": 2, "webview": "W2", "url": "http://h/c0"])
        // Below the limit again (a back), then at it: said again.
        h.request(ctl, "navigation.back", ["session": .string(sid)])
        #expect(h.stackIDs(sid) == "W1")
        h.host(.navigationStopped(NavigationStop(session: sid, webview: .webview(1), url: "http://h/d")))
        #expect(h.stackIDs(sid) == "W1 W3")
        guard case .openTab(_, .webview(3), _, let token3, _, _)? = h.hostCalls.last else { return }
        _ = h.claimed(sid, "W3", token3, url: "http://h/d")
        h.host(.navigationStopped(NavigationStop(session: sid, webview: .webview(3), url: "http://h/e")))
        #expect(h.events(ctl, "session.limit").count == 2)
    }

    @Test(arguments: ["mailto:a@b.c", "tel:+123", "sms:+1", "intent://scan/#Intent;scheme=zxing;end", "whatsapp://send?text=x"])
    func otherSchemesOpenOutsideTheApp(_ url: String) {
        var h = BridgeHarness()
        let (ctl, sid, _) = Self.session(&h)
        let calls = h.hostCalls.count
        h.host(.navigationStopped(NavigationStop(session: sid, webview: .webview(1), url: url, disposition: .customScheme)))
        #expect(h.events(ctl, "external.open").first?["params"] == ["session": .string(sid), "url": .string(url), "webview": "W1"])
        #expect(h.stackIDs(sid) == "W1" && h.hostCalls.count == calls)
        // The app's own schemes are stacked as before.
        h.host(.navigationStopped(NavigationStop(session: sid, webview: .webview(1), url: "tt://settings", disposition: .customScheme)))
        #expect(h.stackIDs(sid) == "W1 W2")
    }

    @Test func theTabLimitIsSizedByMemory() {
        #expect(BridgeConfiguration.defaultMaxTabs(physicalMemory: 24 << 30) == 21)
        #expect(BridgeConfiguration.defaultMaxTabs(physicalMemory: 2 << 30) == 4)
        #expect(BridgeConfiguration.defaultMaxTabs(physicalMemory: 1 << 30) == 4)
        #expect(BridgeConfiguration.defaultMaxTabs(physicalMemory: 1 << 40) == 64)
    }

    @Test func aFileChooserIsAnsweredWithFiles() {
        var h = BridgeHarness()
        let (ctl, sid, _) = Self.session(&h)
        let early = h.request(ctl, "webview.setFiles", ["session": .string(sid), "webview": "W1", "files": ["/tmp/a.png"]])
        #expect(early["error"]?["code"] == "conflict")
        h.host(.shell(.fileChooser(session: sid, webview: .webview(1), multiple: true, accept: "image/*")))
        #expect(h.events(ctl, "webview.fileChooser").first?["params"] == ["session": .string(sid), "webview": "W1", "multiple": true, "accept": "image/*"])
        let relative = h.request(ctl, "webview.setFiles", ["session": .string(sid), "webview": "W1", "files": ["a.png"]])
        #expect(relative["error"]?["code"] == "invalid-params")
        _ = h.request(ctl, "webview.setFiles", ["session": .string(sid), "webview": "W1", "files": ["/tmp/a.png"]])
        guard case .shell(.setFiles(_, sid, .webview(1), ["/tmp/a.png"]))? = h.hostCalls.last else {
            Issue.record("no setFiles: \(h.hostCalls)")
            return
        }
    }

    @Test func downloadsAndPositionsAreTheShells() {
        var h = BridgeHarness()
        let (ctl, sid, _) = Self.session(&h)
        h.host(.shell(.download(session: sid, webview: .webview(1), url: "http://h/r.pdf", filename: "r.pdf")))
        #expect(h.events(ctl, "webview.download").first?["params"] == ["session": .string(sid), "webview": "W1", "url": "http://h/r.pdf", "filename": "r.pdf"])
        #expect(h.stackIDs(sid) == "W1")
        // A web view pushed for a link that turned out to be a download goes again.
        h.host(.navigationStopped(NavigationStop(session: sid, webview: .webview(1), url: "http://h/get?r=1")))
        #expect(h.stackIDs(sid) == "W1 W2")
        h.host(.shell(.download(session: sid, webview: .webview(2), url: "http://h/get?r=1", filename: "r.pdf")))
        #expect(h.stackIDs(sid) == "W1")
        let bad = h.request(ctl, "session.setGeolocation", ["session": .string(sid), "latitude": 10, "longitude": 200])
        #expect(bad["error"]?["code"] == "invalid-params")
        _ = h.request(ctl, "session.setGeolocation", ["session": .string(sid), "latitude": 52.5, "longitude": 13.4, "accuracy": 5])
        #expect(h.hostCalls.last?.request != nil)
        guard case .shell(.setGeolocation(_, sid, Geolocation(latitude: 52.5, longitude: 13.4, accuracy: 5)))? = h.hostCalls.last else {
            Issue.record("no setGeolocation: \(h.hostCalls)")
            return
        }
        #expect(h.bridge.shellSettings(session: sid)?.geolocation == Geolocation(latitude: 52.5, longitude: 13.4, accuracy: 5))
    }

    @Test func aPlainSessionHasNoShell() {
        var h = BridgeHarness()
        let ctl = h.controller()
        let sid = h.request(ctl, "session.create", ["url": "http://h/a/"])["result"]?["session"]?.stringValue ?? ""
        for method in ["webview.dialog.answer", "webview.reload", "webview.setFiles", "session.setGeolocation"] {
            let r = h.request(ctl, method, ["session": .string(sid), "webview": "W1", "accept": true, "files": [], "latitude": 0, "longitude": 0])
            #expect(r["error"]?["code"] == "invalid-params", "\(method)")
        }
    }
}
