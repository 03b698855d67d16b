import BridgeBrowser
import BridgeTesting
import BridgeProtocol
import Foundation
import Testing

/// The browser host against a fake Chromium (`FakeChromium`): what it sends for each call, and
/// what it makes of what the browser reports. No Chromium needed; the real-Chromium tests are in
/// BrowserHostTests.
@Suite struct BrowserHostFakeTests {
    let chromium = FakeChromium()
    let events = Inbox<BrowserEvent>()

    func makeHost(_ configure: (inout BrowserOptions) -> Void = { _ in }) -> BrowserHost {
        var options = BrowserOptions()
        configure(&options)
        let events = self.events
        return BrowserHost(options: options, launcher: chromium.launcher) { events.append($0) }
    }

    /// A session `s1` with its root web view `W1` on `url` (tab `T1`, attached as `S-T1`).
    func rootTab(_ host: BrowserHost, url: String = "http://app.test/a") async throws {
        try await host.createSession("s1")
        let target = try await host.openTab(session: "s1", webview: .webview(1), url: url, script: "window.injected = 1", root: true)
        #expect(target == "T1")
    }

    @Test func aTabPerWebViewDressedAsThePhonesWebView() async throws {
        let host = makeHost()
        let context = try await host.createSession("s1")
        #expect(context == "C1")
        #expect(chromium.methods() == ["Browser.getVersion", "Target.setDiscoverTargets", "Target.createBrowserContext"])
        let target = try await host.openTab(session: "s1", webview: .webview(1), url: "http://app.test/a", script: "window.injected = 1", root: true)
        #expect(target == "T1")
        let created = try await chromium.next("Target.createTarget")
        #expect(created.params == ["url": "about:blank", "browserContextId": "C1"])
        let attached = try await chromium.next("Target.attachToTarget")
        #expect(attached.params == ["targetId": "T1", "flatten": true])
        // The tab's setup, all on its own session, before its page loads.
        let setup = chromium.methods(session: "S-T1")
        #expect(Set(setup.prefix(8)) == ["Page.enable", "Fetch.enable", "Emulation.setUserAgentOverride", "Emulation.setDeviceMetricsOverride",
                                         "Emulation.setTouchEmulationEnabled", "Network.setBypassServiceWorker", "Page.setLifecycleEventsEnabled",
                                         "Page.setInterceptFileChooserDialog"])
        // The root's first load is watched with the Network domain (why it fails, if it does).
        #expect(Array(setup.dropFirst(8)) == ["Page.addScriptToEvaluateOnNewDocument", "Network.enable", "Runtime.evaluate"])
        let fetch = try await chromium.next("Fetch.enable")
        #expect(fetch.params["patterns"] == [["urlPattern": "*", "resourceType": "Document", "requestStage": "Request"]])
        let ua = try await chromium.next("Emulation.setUserAgentOverride")
        let userAgent = try #require(ua.params["userAgent"]?.stringValue)
        #expect(userAgent.hasSuffix("(KHTML, like Gecko) Chrome/156.0.7000.1 Mobile Safari/537.36 Astro App/1.0"), "\(userAgent)")
        #expect(ua.params["userAgentMetadata"]?["mobile"] == true)
        let metrics = try await chromium.next("Emulation.setDeviceMetricsOverride")
        #expect(metrics.params == ["width": 390, "height": 844, "deviceScaleFactor": 1, "mobile": true])
        let script = try await chromium.next("Page.addScriptToEvaluateOnNewDocument")
        #expect(script.params == ["source": "window.injected = 1", "runImmediately": true])
        // The root replaces the tab's about:blank entry: nothing is below it.
        let replace = try await chromium.next("Runtime.evaluate")
        #expect(replace.params["expression"] == #"location.replace("http://app.test/a"); true"#)

        // A second web view: a second tab in the same context, navigated (about:blank stays below).
        let second = try await host.openTab(session: "s1", webview: .webview(2), url: "http://app.test/b", script: nil)
        #expect(second == "T2")
        let navigate = try await chromium.next("Page.navigate")
        #expect(navigate.sessionId == "S-T2" && navigate.params == ["url": "http://app.test/b"])
        #expect(!chromium.methods(session: "S-T2").contains("Page.addScriptToEvaluateOnNewDocument"))
        #expect(await host.tabCount == 2)
        #expect(await host.targetId(session: "s1", webview: .webview(2)) == "T2")

        await host.closeTab(session: "s1", webview: .webview(2))
        let close = try await chromium.next("Target.closeTarget")
        #expect(close.params == ["targetId": "T2"])
        #expect(await host.tabCount == 1)
        await host.closeSession("s1")
        let dispose = try await chromium.next("Target.disposeBrowserContext")
        #expect(dispose.params == ["browserContextId": "C1"])
        let (tabs, sessions) = (await host.tabCount, await host.sessionCount)
        #expect(tabs == 0 && sessions == 0)
        await host.shutdown()
        #expect(chromium.methods().last == "Browser.close")
    }

    /// `rootTab`, its own load let through the interception (`r1`).
    func rootTabLoading(_ host: BrowserHost) async throws {
        try await rootTab(host)
        chromium.emit("Fetch.requestPaused", ["requestId": "r1", "frameId": "T1", "request": ["url": "http://app.test/a", "method": "GET"]], session: "S-T1")
        _ = try await chromium.next("Fetch.continueRequest")
    }

    /// The navigations of `events` so far.
    func navigations() -> [NavigationRequest] {
        events.all.compactMap { if case .navigationRequested(_, _, let request) = $0 { request } else { nil } }
    }

    /// The page asks for `url` (`Page.frameRequestedNavigation` of `T1`, the main frame).
    func pageAsks(_ url: String, reason: String, disposition: String = "currentTab") {
        chromium.emit("Page.frameRequestedNavigation", ["frameId": "T1", "url": .string(url), "reason": .string(reason), "disposition": .string(disposition)], session: "S-T1")
    }

    /// `T1`'s main-frame document request for `url` reaches the interception as `id`; returns
    /// what the host answered it (`Fetch.failRequest` or `Fetch.continueRequest`).
    func requestArrives(_ id: String, _ url: String, method: String = "GET") async throws -> CDPCommand {
        chromium.emit("Fetch.requestPaused", ["requestId": .string(id), "frameId": "T1", "request": ["url": .string(url), "method": .string(method), "headers": ["Accept": "text/html"]]], session: "S-T1")
        return try await chromium.next("Fetch.failRequest", where: { $0.params["requestId"]?.stringValue == id })
    }

    @Test func aPlainNavigationIsHandedOverWhenThePageAsksForItAndItsRequestIsAbortedSilently() async throws {
        let host = makeHost()
        try await rootTabLoading(host)
        // A link: handed over before any request exists (the next web view's tab can load meanwhile).
        pageAsks("http://app.test/b", reason: "anchorClick")
        let early = try await events.next { if case .navigationRequested = $0 { true } else { false } }
        #expect(early == .navigationRequested(session: "s1", webview: .webview(1), request: NavigationRequest(url: "http://app.test/b")))
        #expect(!chromium.methods(session: "S-T1").contains("Fetch.failRequest"))
        // Its request, when it comes, is aborted and not reported again.
        let aborted = try await requestArrives("r2", "http://app.test/b")
        #expect(aborted.params == ["requestId": "r2", "errorReason": "Aborted"])
        // Every other kind the page can ask for, each handed over once (a GET form, a `location`
        // assignment, a meta refresh, a Refresh header).
        for (n, reason) in ["formSubmissionGet", "scriptInitiated", "metaTagRefresh", "httpHeaderRefresh"].enumerated() {
            pageAsks("http://app.test/c\(n)?q=1", reason: reason)
            _ = try await requestArrives("r\(n + 3)", "http://app.test/c\(n)?q=1")
        }
        // A request with no navigation handed over before it is reported as ever (a link with a
        // fragment: the request has none).
        pageAsks("http://app.test/z#f", reason: "anchorClick")
        _ = try await requestArrives("r9", "http://app.test/z")
        _ = try await events.next { if case .navigationRequested(_, _, let r) = $0 { r.url == "http://app.test/z" } else { false } }
        #expect(navigations().map(\.url) == ["http://app.test/b", "http://app.test/c0?q=1", "http://app.test/c1?q=1", "http://app.test/c2?q=1",
                                             "http://app.test/c3?q=1", "http://app.test/z"])
        // The one reported at its request carries what the request said (its headers).
        #expect(navigations().last?.headers == ["Accept": "text/html"])
    }

    @Test func navigationsThatMayNotReachTheNetworkAsAskedAreDecidedAtTheirRequest() async throws {
        let host = makeHost()
        try await rootTabLoading(host)
        // A url with a fragment (may be the same document), a new tab, a download, a reason that
        // is not a plain navigation, no reason at all: nothing until the request comes.
        pageAsks("http://app.test/b#top", reason: "anchorClick")
        pageAsks("http://app.test/c", reason: "anchorClick", disposition: "newTab")
        pageAsks("http://app.test/d", reason: "anchorClick", disposition: "download")
        pageAsks("http://app.test/e", reason: "other")
        pageAsks("http://app.test/f", reason: "initialFrameNavigation")
        chromium.emit("Page.frameRequestedNavigation", ["frameId": "T1", "url": "http://app.test/g"], session: "S-T1")
        // A frame inside the page: not the tab's navigation.
        chromium.emit("Page.frameRequestedNavigation", ["frameId": "F9", "url": "http://app.test/h", "reason": "anchorClick", "disposition": "currentTab"], session: "S-T1")
        // (A marker the host reports in order after the events above.)
        chromium.emit("Page.navigatedWithinDocument", ["frameId": "T1", "url": "http://app.test/a#x"], session: "S-T1")
        _ = try await events.next { if case .urlChanged = $0 { true } else { false } }
        #expect(navigations().isEmpty)
        // The url with a fragment is reported at its request, as before.
        _ = try await requestArrives("r2", "http://app.test/b")
        _ = try await events.next { if case .navigationRequested = $0 { true } else { false } }
        #expect(navigations().map(\.url) == ["http://app.test/b"])
    }

    /// A navigation handed over whose request does not come within
    /// `decidedNavigationSeconds` (it never reached the network) is forgotten: a later request
    /// for the same url is a navigation of its own. (A window of 0: forgotten at once; the
    /// default keeps it, as the tests above show.)
    @Test func aNavigationHandedOverIsForgottenWhenItsRequestDoesNotComeInTime() async throws {
        let host = makeHost { $0.decidedNavigationSeconds = 0 }
        try await rootTabLoading(host)
        pageAsks("http://app.test/b", reason: "anchorClick")
        _ = try await events.next { if case .navigationRequested = $0 { true } else { false } }
        // (A link to it with a fragment, much later: its request has no fragment.)
        pageAsks("http://app.test/b#part", reason: "anchorClick")
        _ = try await requestArrives("r2", "http://app.test/b")
        let again = try await events.next { if case .navigationRequested = $0 { true } else { false } }
        #expect(again == .navigationRequested(session: "s1", webview: .webview(1), request: NavigationRequest(url: "http://app.test/b", headers: ["Accept": "text/html"])))
        #expect(BrowserOptions().decidedNavigationSeconds == 10)
    }

    /// With `devtools`, another DevTools client's interception comes before bridged's and may
    /// answer a document request itself (a Playwright route that fulfils it): every navigation
    /// is decided at its request, as one that reaches bridged.
    @Test func withDevToolsEveryNavigationIsDecidedAtItsRequest() async throws {
        let host = makeHost { $0.devtools = true }
        try await rootTabLoading(host)
        pageAsks("http://app.test/b", reason: "anchorClick")
        chromium.emit("Page.navigatedWithinDocument", ["frameId": "T1", "url": "http://app.test/a#x"], session: "S-T1")
        _ = try await events.next { if case .urlChanged = $0 { true } else { false } }
        #expect(navigations().isEmpty)
        _ = try await requestArrives("r2", "http://app.test/b")
        _ = try await events.next { if case .navigationRequested = $0 { true } else { false } }
        #expect(navigations().map(\.url) == ["http://app.test/b"] && navigations()[0].headers == ["Accept": "text/html"])
    }

    @Test func aPageThatAsksForMoreNavigationsThanTheLimitBeforeAnyRequestHasTheOldestDecidedAgain() async throws {
        let host = makeHost()
        try await rootTabLoading(host)
        let limit = BrowserHost.decidedNavigationsLimit
        for n in 0...limit { pageAsks("http://app.test/p\(n)", reason: "scriptInitiated") }
        _ = try await events.next { if case .navigationRequested(_, _, let r) = $0 { r.url == "http://app.test/p\(limit)" } else { false } }
        #expect(navigations().count == limit + 1)
        // The newest `limit` are remembered: their requests are aborted silently...
        for n in 1...limit { _ = try await requestArrives("r\(n)x", "http://app.test/p\(n)") }
        // ...the oldest one's request is a navigation of its own again.
        _ = try await requestArrives("r0x", "http://app.test/p0")
        // (Reported at its request: with the request's headers.)
        _ = try await events.next { if case .navigationRequested(_, _, let r) = $0 { !r.headers.isEmpty } else { false } }
        #expect(navigations().map(\.url) == (0...limit).map { "http://app.test/p\($0)" } + ["http://app.test/p0"])
    }

    @Test func aNavigationThePageStartsIsStoppedAndReported() async throws {
        let host = makeHost()
        try await rootTab(host)
        // The tab's own load passes.
        chromium.emit("Fetch.requestPaused", ["requestId": "r1", "frameId": "T1", "request": ["url": "http://app.test/a", "method": "GET", "headers": [:]]], session: "S-T1")
        let passed = try await chromium.next("Fetch.continueRequest")
        #expect(passed.params == ["requestId": "r1"] && passed.sessionId == "S-T1")

        // A form's POST: stopped before it leaves the browser, and handed to the owner.
        chromium.emit("Page.frameRequestedNavigation", ["frameId": "T1", "url": "http://app.test/submit", "reason": "formSubmissionPost"], session: "S-T1")
        chromium.emit("Page.frameStartedNavigating", ["frameId": "T1", "url": "http://app.test/submit", "navigationType": "differentDocument"], session: "S-T1")
        chromium.emit("Fetch.requestPaused", ["requestId": "r2", "frameId": "T1", "request": [
            "url": "http://app.test/submit", "method": "POST", "hasPostData": true, "postData": "name=a+b",
            "headers": ["Content-Type": "application/x-www-form-urlencoded"],
        ]], session: "S-T1")
        let stopped = try await chromium.next("Fetch.failRequest")
        #expect(stopped.params == ["requestId": "r2", "errorReason": "Aborted"])
        let post = try await events.next { if case .navigationRequested = $0 { true } else { false } }
        #expect(post == .navigationRequested(session: "s1", webview: .webview(1), request: NavigationRequest(
            url: "http://app.test/submit", method: "POST", postData: Array("name=a+b".utf8),
            headers: ["Content-Type": "application/x-www-form-urlencoded"])))

        // A frame inside the page loads as it likes.
        chromium.emit("Fetch.requestPaused", ["requestId": "r3", "frameId": "F9", "request": ["url": "http://ads.test/", "method": "GET"]], session: "S-T1")
        let frame = try await chromium.next("Fetch.continueRequest")
        #expect(frame.params == ["requestId": "r3"])

        // A url of a scheme the browser cannot load.
        chromium.emit("Page.frameRequestedNavigation", ["frameId": "T1", "url": "tt://settings"], session: "S-T1")
        let custom = try await events.next { if case .navigationRequested = $0 { true } else { false } }
        #expect(custom == .navigationRequested(session: "s1", webview: .webview(1), request: NavigationRequest(url: "tt://settings", kind: .customScheme)))

        // window.open: the popup is closed once it names its url.
        chromium.emit("Target.targetCreated", ["targetInfo": ["targetId": "T9", "type": "page", "openerId": "T1", "url": ""]])
        chromium.emit("Target.targetInfoChanged", ["targetInfo": ["targetId": "T9", "type": "page", "url": "http://app.test/popup"]])
        let popup = try await chromium.next("Target.closeTarget")
        #expect(popup.params == ["targetId": "T9"])
        let opened = try await events.next { if case .navigationRequested = $0 { true } else { false } }
        #expect(opened == .navigationRequested(session: "s1", webview: .webview(1), request: NavigationRequest(url: "http://app.test/popup", kind: .windowOpen)))

        // The page's own history.back() to the about:blank below it: a back of the host.
        chromium.emit("Page.frameStartedNavigating", ["frameId": "T1", "url": "about:blank", "navigationType": "historyDifferentDocument"], session: "S-T1")
        try await chromium.next("Page.stopLoading")
        let back = try await events.next { if case .historyBack = $0 { true } else { false } }
        #expect(back == .historyBack(session: "s1", webview: .webview(1)))

        // Within the document: the url follows.
        chromium.emit("Page.navigatedWithinDocument", ["frameId": "T1", "url": "http://app.test/a#x"], session: "S-T1")
        let moved = try await events.next { if case .urlChanged = $0 { true } else { false } }
        #expect(moved == .urlChanged(session: "s1", webview: .webview(1), url: "http://app.test/a#x"))
        #expect(events.untaken.isEmpty, "\(events.untaken)")
        await host.shutdown()
    }

    /// The page answers the click's scripts: the actionability check a point (and it arms the
    /// press watcher), the check after the release `lost` as `lostAnswers` says, one per press.
    func scriptClick(lostAnswers: [Bool]) {
        let answers = NSLock(), remaining = Box(lostAnswers)
        chromium.on("Runtime.evaluate") { command in
            let expression = command.params["expression"]?.stringValue ?? ""
            if expression == BrowserHost.clickLost {
                let lost = answers.withLock { remaining.value.isEmpty ? false : remaining.value.removeFirst() }
                return .result(["result": ["type": "boolean", "value": .bool(lost)]])
            }
            if expression.contains(BrowserHost.watchPress) {
                return .result(["result": ["type": "object", "value": ["x": 10, "y": 20]]])
            }
            return .result(["result": ["type": "boolean", "value": true]])
        }
    }

    /// What the click sent after the tab's setup: the press watcher's check (`point`), the two
    /// mouse events (`press`, `release`), the lost check (`lost?`).
    func clickSteps() -> [String] {
        chromium.commands.all.filter { $0.sessionId == "S-T1" }.compactMap { c -> String? in
            let expression = c.params["expression"]?.stringValue ?? ""
            switch c.method {
            case "Runtime.evaluate" where expression == BrowserHost.clickLost: return "lost?"
            case "Runtime.evaluate" where expression.contains(BrowserHost.watchPress): return "point"
            case "Input.dispatchMouseEvent": return c.params["type"] == "mousePressed" ? "press" : "release"
            default: return nil
            }
        }
    }

    @Test func aClickThePageLostBetweenPressAndReleaseIsPressedAgain() async throws {
        // The page removed the pressed element before the release (Turbo rendering the response
        // over its cached snapshot): Chromium dispatched no click; a tap would have clicked.
        let host = makeHost()
        try await rootTab(host)
        scriptClick(lostAnswers: [true])
        try await host.click(session: "s1", webview: .webview(1), selector: "#to-external")
        #expect(clickSteps() == ["point", "press", "release", "lost?", "point", "press", "release", "lost?"])
        let presses = chromium.commands.all.filter { $0.method == "Input.dispatchMouseEvent" }
        #expect(presses.allSatisfy { $0.params["x"]?.doubleValue == 10 && $0.params["y"]?.doubleValue == 20 && $0.params["button"] == "left" })
        await host.shutdown()
    }

    @Test func aClickNotLostIsPressedOnce() async throws {
        let host = makeHost()
        try await rootTab(host)
        scriptClick(lostAnswers: [false])
        try await host.click(session: "s1", webview: .webview(1), selector: "#to-one")
        #expect(clickSteps() == ["point", "press", "release", "lost?"])
        await host.shutdown()
    }

    /// The click's handler ends its own page's session (Capacitor's `App.exitApp`): Chromium
    /// detaches the tab's DevTools session before it answers the release. The click is done (a
    /// loaded run answered it "no tab", and the test that clicked `#exit` failed).
    @Test func aClickWhosePageGoesBeforeTheReleaseIsAnsweredIsDone() async throws {
        let host = makeHost()
        try await rootTab(host)
        scriptClick(lostAnswers: [false])
        chromium.on("Input.dispatchMouseEvent") { $0.params["type"] == "mouseReleased" ? .later : .result([:]) }
        let click = Task { try await host.click(session: "s1", webview: .webview(1), selector: "#exit") }
        _ = try await chromium.next("Input.dispatchMouseEvent") { $0.params["type"] == "mouseReleased" }
        chromium.emit("Target.detachedFromTarget", ["sessionId": "S-T1", "targetId": "T1"])
        try await click.value
        #expect(clickSteps() == ["point", "press", "release"], "no check after a release its page did not answer")
        await host.shutdown()
    }

    /// A tab gone before the press is no click.
    @Test func aClickWhosePageWentBeforeThePressFails() async throws {
        let host = makeHost()
        try await rootTab(host)
        scriptClick(lostAnswers: [false])
        chromium.on("Input.dispatchMouseEvent") { $0.params["type"] == "mousePressed" ? .later : .result([:]) }
        let click = Task { try await host.click(session: "s1", webview: .webview(1), selector: "#exit") }
        _ = try await chromium.next("Input.dispatchMouseEvent") { $0.params["type"] == "mousePressed" }
        chromium.emit("Target.detachedFromTarget", ["sessionId": "S-T1", "targetId": "T1"])
        await #expect(throws: BrowserError.self) { try await click.value }
        #expect(clickSteps() == ["point", "press"])
        await host.shutdown()
    }

    @Test func aClickLostAtEveryPressFailsAfterTheLastOne() async throws {
        let host = makeHost()
        try await rootTab(host)
        scriptClick(lostAnswers: Array(repeating: true, count: BrowserHost.clickPresses + 1))
        await #expect(throws: BrowserError.browser("#moving: the click was lost 3 times (the page removed the pressed element before the release)")) {
            try await host.click(session: "s1", webview: .webview(1), selector: "#moving")
        }
        #expect(BrowserHost.clickPresses == 3)
        #expect(clickSteps() == Array(repeating: ["point", "press", "release", "lost?"], count: 3).flatMap { $0 })
        await host.shutdown()
    }

    @Test func aPageThatCannotLoadFailsItsTab() async throws {
        let host = makeHost()
        try await rootTab(host)
        chromium.on("Page.navigate") { _ in .result(["frameId": "T2", "loaderId": "L1", "errorText": "net::ERR_CONNECTION_REFUSED"]) }
        await #expect(throws: BrowserError.loadFailed(url: "http://127.0.0.1:9/down", reason: "net::ERR_CONNECTION_REFUSED")) {
            try await host.openTab(session: "s1", webview: .webview(2), url: "http://127.0.0.1:9/down", script: nil)
        }
        // Its tab is closed and forgotten.
        let close = try await chromium.next("Target.closeTarget")
        #expect(close.params == ["targetId": "T2"])
        #expect(await !host.hasTab(session: "s1", webview: .webview(2)))
        #expect(await host.tabCount == 1)
        // The browser refusing a call is a failure too, with its words.
        chromium.on("Target.createTarget") { _ in .error("Failed to create target") }
        await #expect(throws: BrowserError.browser("Failed to create target")) {
            try await host.openTab(session: "s1", webview: .webview(3), url: "http://app.test/c", script: nil)
        }
        await #expect(throws: BrowserError.unknownTarget("session s2")) {
            try await host.openTab(session: "s2", webview: .webview(1), url: "http://app.test/c", script: nil)
        }
        await host.shutdown()
    }

    /// A load that fails after it started (the root's, started by `location.replace`, or any
    /// later one): Chromium commits its error page; once it has loaded, the tab's failure is
    /// reported with the page's net error.
    @Test func aLoadThatFailsAfterItStartedIsReportedWithItsNetError() async throws {
        let host = makeHost()
        try await rootTab(host)
        chromium.on("Runtime.evaluate") { c in
            (c.params["expression"]?.stringValue ?? "").contains(".error-code") ? .result(["result": ["type": "string", "value": "ERR_CONNECTION_REFUSED"]])
                : .result(["result": ["type": "boolean", "value": true]])
        }
        chromium.emit("Page.frameNavigated", ["frame": ["id": "T1", "loaderId": "L9", "url": "chrome-error://chromewebdata/",
                                                         "unreachableUrl": "http://127.0.0.1:9/down"]], session: "S-T1")
        chromium.emit("Page.loadEventFired", ["timestamp": 1], session: "S-T1")
        let failed = try await events.next { _ in true }
        #expect(failed == .loadFailed(session: "s1", webview: .webview(1), url: "http://127.0.0.1:9/down", reason: "net::ERR_CONNECTION_REFUSED"))
        // A load that works after it: its url, no failure.
        chromium.emit("Page.frameNavigated", ["frame": ["id": "T1", "loaderId": "L10", "url": "http://app.test/a"]], session: "S-T1")
        chromium.emit("Page.loadEventFired", ["timestamp": 2], session: "S-T1")
        #expect(try await events.next { _ in true } == .urlChanged(session: "s1", webview: .webview(1), url: "http://app.test/a"))
        await host.shutdown()
        #expect(events.untaken.isEmpty, "\(events.untaken)")
    }

    /// The root's first load is watched with the Network domain: when the main frame's document
    /// request fails, the reason is `Network.loadingFailed`'s `errorText` (no look at the error
    /// page); the domain is off once the page has loaded. A later load is not watched: the error
    /// page's code names it.
    @Test func theRootsFailedLoadIsNamedByNetworkLoadingFailed() async throws {
        let host = makeHost()
        try await rootTab(host)
        #expect(Array(chromium.methods(session: "S-T1").suffix(2)) == ["Network.enable", "Runtime.evaluate"])
        // A document of another frame fails, then the main frame's (redirected first).
        chromium.emit("Network.requestWillBeSent", ["requestId": "R7", "loaderId": "R7", "frameId": "F2", "type": "Document",
                                                    "request": ["url": "http://ads.test/"]], session: "S-T1")
        chromium.emit("Network.loadingFailed", ["requestId": "R7", "type": "Document", "errorText": "net::ERR_BLOCKED_BY_CLIENT"], session: "S-T1")
        for url in ["http://app.test/a", "http://down.test/"] {
            chromium.emit("Network.requestWillBeSent", ["requestId": "L8", "loaderId": "L8", "frameId": "T1", "type": "Document",
                                                        "request": ["url": .string(url)]], session: "S-T1")
        }
        chromium.emit("Network.loadingFailed", ["requestId": "L8", "type": "Document", "errorText": "net::ERR_NAME_NOT_RESOLVED", "canceled": false],
                      session: "S-T1")
        chromium.emit("Page.frameNavigated", ["frame": ["id": "T1", "loaderId": "L8", "url": "chrome-error://chromewebdata/",
                                                         "unreachableUrl": "http://down.test/"]], session: "S-T1")
        chromium.emit("Page.loadEventFired", ["timestamp": 1], session: "S-T1")
        #expect(try await events.next { _ in true } == .loadFailed(session: "s1", webview: .webview(1), url: "http://down.test/", reason: "net::ERR_NAME_NOT_RESOLVED"))
        #expect(try await chromium.next("Network.disable").sessionId == "S-T1")
        #expect(chromium.methods(session: "S-T1").filter { $0 == "Runtime.evaluate" }.count == 1, "the error page was not read")

        // A later load that fails: the error page's code.
        chromium.on("Runtime.evaluate") { c in
            (c.params["expression"]?.stringValue ?? "").contains(".error-code") ? .result(["result": ["type": "string", "value": "ERR_CONNECTION_RESET"]])
                : .result(["result": ["type": "boolean", "value": true]])
        }
        chromium.emit("Network.loadingFailed", ["requestId": "L8", "type": "Document", "errorText": "net::ERR_NAME_NOT_RESOLVED"], session: "S-T1")
        chromium.emit("Page.frameNavigated", ["frame": ["id": "T1", "loaderId": "L9", "url": "chrome-error://chromewebdata/",
                                                         "unreachableUrl": "http://app.test/b"]], session: "S-T1")
        chromium.emit("Page.loadEventFired", ["timestamp": 2], session: "S-T1")
        #expect(try await events.next { _ in true } == .loadFailed(session: "s1", webview: .webview(1), url: "http://app.test/b", reason: "net::ERR_CONNECTION_RESET"))
        #expect(chromium.methods(session: "S-T1").filter { $0.hasPrefix("Network.") && $0 != "Network.setBypassServiceWorker" } == ["Network.enable", "Network.disable"])
        await host.shutdown()
        #expect(events.untaken.isEmpty, "\(events.untaken)")
    }

    /// A root page that loads: the Network domain is off once it has loaded (and only then).
    @Test func theRootsNetworkWatchEndsWithItsLoad() async throws {
        let host = makeHost()
        try await rootTab(host)
        chromium.emit("Page.loadEventFired", ["timestamp": 1], session: "S-T1")  // about:blank's, before the page's request
        chromium.emit("Network.requestWillBeSent", ["requestId": "L2", "loaderId": "L2", "frameId": "T1", "type": "Document",
                                                    "request": ["url": "http://app.test/a"]], session: "S-T1")
        chromium.emit("Page.frameNavigated", ["frame": ["id": "T1", "loaderId": "L2", "url": "http://app.test/a"]], session: "S-T1")
        #expect(try await events.next { _ in true } == .urlChanged(session: "s1", webview: .webview(1), url: "http://app.test/a"))
        #expect(!chromium.methods(session: "S-T1").contains("Network.disable"))
        chromium.emit("Page.loadEventFired", ["timestamp": 2], session: "S-T1")
        #expect(try await chromium.next("Network.disable").sessionId == "S-T1")
        await host.shutdown()
        #expect(events.untaken.isEmpty, "\(events.untaken)")
    }

    @Test func crashesAreReported() async throws {
        let host = makeHost()
        try await rootTab(host)
        // A tab's renderer: reported either way Chromium says it, once per death (Chromium says
        // it both ways), again after the tab committed a document (a reload).
        chromium.emit("Inspector.targetCrashed", session: "S-T1")
        let tab = try await events.next { _ in true }
        #expect(tab == .shell(.crashed(session: "s1", webview: .webview(1), reason: "the page's renderer process died")))
        chromium.emit("Target.targetCrashed", ["targetId": "T1", "status": "crashed", "errorCode": 9])
        chromium.emit("Page.frameNavigated", ["frame": ["id": "T1", "loaderId": "L3", "url": "http://app.test/a"]], session: "S-T1")
        #expect(try await events.next { _ in true } == .urlChanged(session: "s1", webview: .webview(1), url: "http://app.test/a"),
                "the same death said again is not reported")
        chromium.emit("Target.targetCrashed", ["targetId": "T1", "status": "crashed", "errorCode": 9])
        let again = try await events.next { _ in true }
        #expect(again == .shell(.crashed(session: "s1", webview: .webview(1), reason: "the page's renderer process died (crashed, code 9)")))

        // The browser itself: a call under way fails, the sessions are named, the tabs are gone.
        chromium.on("Page.captureScreenshot") { _ in .later }
        let shot = Task { try await host.screenshot(session: "s1", webview: .webview(1)) }
        try await chromium.next("Page.captureScreenshot")
        chromium.crash()
        await #expect(throws: BrowserError.disconnected) { try await shot.value }
        let crashed = try await events.next { _ in true }
        #expect(crashed == .browserCrashed(sessions: ["s1"]))
        let (tabs, sessions) = (await host.tabCount, await host.sessionCount)
        #expect(tabs == 0 && sessions == 0)
        await #expect(throws: BrowserError.disconnected) { try await host.evaluate(session: "s1", webview: .webview(1), expression: "1") }
        // Without --devtools nothing restarts until the next session.
        #expect(chromium.launches == 1)
        try await host.createSession("s2")
        #expect(chromium.launches == 2)
        await host.shutdown()
        #expect(events.untaken.isEmpty, "\(events.untaken)")
    }

    @Test func aDevToolsRestartThatFailsIsReported() async throws {
        let host = makeHost { $0.devtools = true }
        let url = try await host.start()
        #expect(url == "ws://127.0.0.1:1/devtools/browser/fake-1")
        chromium.failLaunches(with: .launchFailed("no memory left"))
        chromium.crash()
        let crashed = try await events.next { _ in true }
        #expect(crashed == .browserCrashed(sessions: []))
        let failed = try await events.next { _ in true }
        #expect(failed == .restartFailed(reason: "Chromium could not be started: no memory left"))
        #expect(host.devtoolsURL == nil)
        // The next session tries again.
        chromium.failLaunches(with: nil)
        try await host.createSession("s1")
        #expect(host.devtoolsURL == "ws://127.0.0.1:1/devtools/browser/fake-2")
        await host.shutdown()
    }

    @Test func aDevToolsRestartThatWorksNamesTheNewBrowser() async throws {
        let host = makeHost { $0.devtools = true }
        _ = try await host.start()
        chromium.crash()
        let crashed = try await events.next { _ in true }
        #expect(crashed == .browserCrashed(sessions: []))
        // The restart's first call is Chromium's version, on the second browser.
        try await chromium.next("Target.setDiscoverTargets") { $0.browser == 2 }
        #expect(chromium.launches == 2)
        await host.shutdown()
        #expect(events.untaken.isEmpty, "\(events.untaken)")
    }
}

/// A value the fake's scripts change (under the test's lock).
final class Box<T>: @unchecked Sendable {
    var value: T
    init(_ value: T) { self.value = value }
}
