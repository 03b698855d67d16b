@testable import BridgeServer
import BridgeBrowser
import BridgeTesting
import BridgeProtocol
import Foundation
import Testing

/// The daemon's browser glue (Daemon+Browser.swift) against a fake Chromium over a fake
/// transport: the Bridge's `HostWork` becomes DevTools commands, what the browser answers and
/// reports comes back as `HostResult`s, which the test lets the "service thread" (itself) run
/// with `serviceRemote`. No Chromium, no sockets.
@Suite struct DaemonBrowserTests {
    let chromium = FakeChromium()

    func make(_ configure: @escaping (inout DaemonConfiguration) -> Void = { _ in }) -> (Daemon, FakeTransport) {
        let launcher = chromium.launcher
        return DaemonTests.make { c in
            c.browser.launcher = launcher
            configure(&c)
        }
    }

    static func json(_ text: String) -> JSONValue { (try? JSONParser.parse(text)) ?? .null }

    static func reply(_ fake: FakeTransport, to client: ConnectionID, id: Int) -> JSONValue? {
        fake.sent(to: client).first { $0.hasPrefix("{\"id\":\(id),") }.map(json)
    }

    /// A controller that created a browser session on `url` (answered once its tab opened).
    func browserSession(_ fake: FakeTransport, url: String = "http://app.test/a") async throws -> (controller: ConnectionID, session: String, token: String) {
        let controller = fake.open()
        fake.receive(controller, #"{"id":1,"method":"hello","params":{"protocol":1,"role":"controller"}}"#)
        fake.receive(controller, #"{"id":2,"method":"session.create","params":{"url":"\#(url)","browser":true}}"#)
        try await fake.serviceRemote { Self.reply(fake, to: controller, id: 2) != nil }
        let created = try #require(Self.reply(fake, to: controller, id: 2))
        let session = try #require(created["result"]?["session"]?.stringValue, "\(created)")
        let token = try #require(created["result"]?["token"]?.stringValue)
        return (controller, session, token)
    }

    /// A browser session whose W1 page connected, and tabs opened in the host for W2…W`last`
    /// (`http://app.test/2`…), as the web views a controller pushed would have.
    func sessionWithTabs(_ daemon: Daemon, _ fake: FakeTransport, _ last: Int) async throws -> (session: String, host: BrowserHost) {
        let (_, session, token) = try await browserSession(fake)
        _ = try Self.page(fake, session, token)
        let host = try #require(daemon.browser?.host)
        for n in 2...last {
            _ = try await host.openTab(session: session, webview: .webview(n), url: "http://app.test/\(n)", script: nil)
        }
        return (session, host)
    }

    /// The page of `W1` in its tab connects and claims it, as the injected client does.
    static func page(_ fake: FakeTransport, _ session: String, _ token: String) throws -> ConnectionID {
        let page = fake.open()
        fake.receive(page, #"{"id":1,"method":"hello","params":{"protocol":1,"role":"page","session":"\#(session)","webview":"W1","token":"\#(token)","url":"http://app.test/a"}}"#)
        let hello = try #require(reply(fake, to: page, id: 1))
        #expect(hello["result"]?["session"]?.stringValue == session, "\(hello)")
        return page
    }

    /// Events `name` the controller received.
    static func events(_ fake: FakeTransport, _ client: ConnectionID, _ name: String) -> [JSONValue] {
        fake.sent(to: client).map(json).filter { $0["event"]?.stringValue == name }
    }

    @Test func aBrowserSessionOpensATabAndAStoppedNavigationPushesAWebViewWithItsOwnTab() async throws {
        let (daemon, fake) = make()
        let (controller, session, token) = try await browserSession(fake)
        // HostWork.openTab(root) → a context, a tab, its setup, the page replacing about:blank.
        let browserMethods = chromium.methods(session: nil)
        // (The context reports its downloads and denies them before its first tab: BrowserHost+Shell.swift.)
        #expect(Array(browserMethods.prefix(6)) == ["Browser.getVersion", "Target.setDiscoverTargets", "Target.createBrowserContext",
                                                    "Browser.setDownloadBehavior", "Target.createTarget", "Target.attachToTarget"])
        let replace = try await chromium.next("Runtime.evaluate")
        #expect(replace.sessionId == "S-T1" && replace.params["expression"] == #"location.replace("http://app.test/a"); true"#)
        // tabOpened came back: the session knows its tab.
        fake.receive(controller, #"{"id":3,"method":"session.get","params":{"session":"\#(session)"}}"#)
        let got = try #require(Self.reply(fake, to: controller, id: 3))
        #expect(got["result"]?["browserContextId"] == "C1", "\(got)")
        #expect(got["result"]?["targetIds"] == ["W1": "T1"])

        // The page's own load passes; a link it follows is stopped and becomes W2, in a tab of its own.
        _ = try Self.page(fake, session, token)
        chromium.emit("Fetch.requestPaused", ["requestId": "r1", "frameId": "T1", "request": ["url": "http://app.test/a", "method": "GET"]], session: "S-T1")
        try await chromium.next("Fetch.continueRequest")
        chromium.emit("Page.frameRequestedNavigation", ["frameId": "T1", "url": "http://app.test/b"], session: "S-T1")
        chromium.emit("Page.frameStartedNavigating", ["frameId": "T1", "url": "http://app.test/b", "navigationType": "differentDocument"], session: "S-T1")
        chromium.emit("Fetch.requestPaused", ["requestId": "r2", "frameId": "T1", "request": ["url": "http://app.test/b", "method": "GET"]], session: "S-T1")
        try await fake.serviceRemote { chromium.methods(session: "S-T2").contains("Page.navigate") }
        let stopped = try await chromium.next("Fetch.failRequest")
        #expect(stopped.params == ["requestId": "r2", "errorReason": "Aborted"])
        let navigate = try await chromium.next("Page.navigate")
        #expect(navigate.sessionId == "S-T2" && navigate.params["url"]?.stringValue?.hasPrefix("http://app.test/b") == true, "\(navigate)")
        let changed = Self.events(fake, controller, "stack.changed").last
        #expect(changed?["params"]?["stack"].map { "\($0)" }?.contains("W2") == true, "\(String(describing: changed))")
        #expect(daemon.bridge.sessionCount == 1)
    }

    @Test func aPageThatCannotLoadIsAFailedWebView() async throws {
        let (_, fake) = make()
        let (controller, session, _) = try await browserSession(fake)
        chromium.on("Page.navigate") { _ in .result(["frameId": "T2", "loaderId": "L1", "errorText": "net::ERR_CONNECTION_REFUSED"]) }
        fake.receive(controller, #"{"id":3,"method":"navigation.navigateToUrl","params":{"session":"\#(session)","url":"http://127.0.0.1:9/down"}}"#)
        try await fake.serviceRemote { !Self.events(fake, controller, "webview.failed").isEmpty }
        let failed = try #require(Self.events(fake, controller, "webview.failed").first)
        #expect(failed["params"]?["webview"] == "W2", "\(failed)")
        #expect(failed["params"]?["url"] == "http://127.0.0.1:9/down")
        #expect(failed["params"]?["reason"] == "net::ERR_CONNECTION_REFUSED")
        // Its tab was closed in the browser.
        let close = try await chromium.next("Target.closeTarget")
        #expect(close.params == ["targetId": "T2"])
    }

    @Test func aTabThatCannotComeToTheFrontIsLoggedAndChangesNothingElse() async throws {
        let (daemon, fake) = make()
        let (controller, session, token) = try await browserSession(fake)
        _ = try Self.page(fake, session, token)
        fake.receive(controller, #"{"id":3,"method":"session.get","params":{"session":"\#(session)"}}"#)
        let before = try #require(Self.reply(fake, to: controller, id: 3))
        let sent = fake.sent(to: controller).count
        let calls = chromium.methods().count
        chromium.on("Page.bringToFront") { _ in .error("Target crashed") }
        // HostWork.showTab (a hotwire-native main web view uncovered by a dismissed modal).
        daemon.performHost(.showTab(session: session, webview: .webview(1)))
        let line = try await TestLog.next(.warning) { $0.hasPrefix("\(session) W1:") }
        #expect(line == "\(session) W1: the tab cannot be brought to the front: Target crashed")
        // Nothing else: no other call to the browser, nothing for the service thread, no event
        // for the controller, the session as it was.
        #expect(Array(chromium.methods().dropFirst(calls)) == ["Page.bringToFront"])
        #expect(fake.remote.takeWork().work.isEmpty)
        #expect(fake.sent(to: controller).count == sent)
        fake.receive(controller, #"{"id":4,"method":"session.get","params":{"session":"\#(session)"}}"#)
        let after = try #require(Self.reply(fake, to: controller, id: 4))
        #expect(after["result"] == before["result"], "\(after)")
        #expect(daemon.bridge.sessionCount == 1)
    }

    @Test func aBrowserCrashIsReportedToTheSessionsSubscribers() async throws {
        let (_, fake) = make()
        let (controller, session, _) = try await browserSession(fake)
        chromium.crash()
        try await fake.serviceRemote { !Self.events(fake, controller, "browser.crashed").isEmpty }
        let crashed = try #require(Self.events(fake, controller, "browser.crashed").first)
        #expect(crashed["params"]?["session"]?.stringValue == session, "\(crashed)")
    }

    @Test func aPwaNavigateIsAnsweredAfterItsSnapshotAndTheFramesAfterItWait() async throws {
        let (daemon, fake) = make()
        let (_, session, token) = try await browserSession(fake)
        let page = try Self.page(fake, session, token)
        chromium.on("Page.captureScreenshot") { _ in .later }
        fake.receive(page, #"{"id":2,"method":"pwa-navigate","params":{"url":"http://app.test/a/next"}}"#)
        fake.receive(page, #"{"id":3,"method":"pwa-rendered"}"#)
        // HostWork.takeSnapshot: the tab is brought to the front and pictured.
        let shot = try await chromium.next("Page.captureScreenshot")
        #expect(shot.sessionId == "S-T1")
        #expect(chromium.methods(session: "S-T1").suffix(2) == ["Page.bringToFront", "Page.captureScreenshot"])
        // Until the picture is in hand, the page hears nothing more.
        #expect(Self.reply(fake, to: page, id: 2) == nil && Self.reply(fake, to: page, id: 3) == nil, "\(fake.sent(to: page))")
        chromium.reply(to: shot, .result(["data": .string(Data(FakeChromium.jpeg).base64EncodedString())]))
        try await fake.serviceRemote { Self.reply(fake, to: page, id: 3) != nil }
        let sent = fake.sent(to: page)
        let second = try #require(sent.firstIndex { $0.hasPrefix(#"{"id":2,"#) })
        let third = try #require(sent.firstIndex { $0.hasPrefix(#"{"id":3,"#) })
        #expect(second < third, "replies keep request order")
        let placeholder = try #require(Self.json(sent[second])["result"]?["placeholder"]?.stringValue, "\(sent[second])")
        // The placeholder the reply names has the picture.
        let image = daemon.browserHTTP(path: "/api/sessions/\(session)/placeholders/\(placeholder).jpg")
        #expect(image?.status == 200 && image?.body == FakeChromium.jpeg)
    }

    @Test func aWebViewsOverlayChangesReachItsPageInTheOrderTheBridgeAskedForThem() async throws {
        let (daemon, fake) = make()
        let (controller, session, token) = try await browserSession(fake)
        _ = try Self.page(fake, session, token)
        let creates: @Sendable (CDPCommand) -> Bool = { $0.params["expression"]?.stringValue?.contains("createElement") == true }
        let removes: @Sendable (CDPCommand) -> Bool = { $0.params["expression"]?.stringValue?.contains("?.remove()") == true }
        // The page is slow to answer the overlay being shown.
        chromium.on("Runtime.evaluate") { creates($0) ? .later : .result(["result": ["type": "boolean", "value": true]]) }
        // The foreground shown and at once removed (a `pwa-rendered` right after its
        // `pwa-navigate`), then other work for the same tab.
        daemon.performHost(.showOverlay(session: session, webview: .webview(1), image: nil))
        daemon.performHost(.removeOverlay(session: session, webview: .webview(1)))
        daemon.performHost(.showTab(session: session, webview: .webview(1)))
        // A controller's screenshot asked meanwhile is of the page as the events left it.
        fake.receive(controller, #"{"id":3,"method":"session.screenshot","params":{"session":"\#(session)"}}"#)
        let shown = try await chromium.next("Runtime.evaluate", where: creates)
        try await chromium.next("Page.bringToFront")
        // The tab's other work went ahead; the removal and the screenshot wait for the page
        // to have shown the overlay.
        #expect(!chromium.commands.all.contains(where: removes), "\(chromium.methods(session: "S-T1"))")
        #expect(!chromium.methods().contains("Page.captureScreenshot"))
        chromium.reply(to: shown, .result(["result": ["type": "boolean", "value": true]]))
        let removed = try await chromium.next("Runtime.evaluate", where: removes)
        #expect(removed.sessionId == "S-T1" && removed.id > shown.id)
        let shot = try await chromium.next("Page.captureScreenshot")
        #expect(shot.id > removed.id)
        try await fake.serviceRemote { Self.reply(fake, to: controller, id: 3) != nil }
        #expect(Self.reply(fake, to: controller, id: 3)?["result"]?["data"] != nil)
        // Its web view's tab closed: the daemon forgets its page lane; the session closed, its
        // session lane.
        #expect(daemon.browser?.lanes.count.pages == 1)
        daemon.performHost(.closeTab(session: session, webview: .webview(1)))
        #expect(daemon.browser?.lanes.count.pages == 0)
        #expect(daemon.browser?.lanes.count.sessions == 1)
        daemon.performHost(.closeSession(session: session))
        #expect(daemon.browser?.lanes.count.sessions == 0)
    }

    /// A bring-to-front the Bridge asks for after a close (a routed session's new top after a
    /// pop) is carried out after the close, which may bring the tab below forward once Chromium
    /// answers it: the last tab brought forward is the one the Bridge asked for.
    @Test func aBringToFrontAfterACloseComesAfterIt() async throws {
        let (daemon, fake) = make()
        let (session, host) = try await sessionWithTabs(daemon, fake, 2)
        chromium.on("Target.closeTarget") { _ in .later }
        daemon.performHost(.closeTab(session: session, webview: .webview(2)))
        daemon.performHost(.showTab(session: session, webview: .webview(1)))
        let closing = try await chromium.next("Target.closeTarget")
        let fronts = { chromium.commands.all.filter { $0.method == "Page.bringToFront" && $0.id > closing.id } }
        // The close's answer has not come: the bring-to-front waits for it.
        _ = try await host.evaluate(session: session, webview: .webview(1), expression: "1")  // (a round trip through the host)
        #expect(fronts().isEmpty, "\(fronts())")
        chromium.reply(to: closing, .result([:]))
        let front = try await chromium.next("Page.bringToFront") { $0.sessionId == "S-T1" && $0.id > closing.id }
        #expect(front.id > closing.id)
    }

    /// Closes run at once (a pop to the root closes three tabs in one round trip); a
    /// bring-to-front asked for after them waits for them all, and is dropped when a tab was
    /// opened after it was asked for (that tab, in front, is the newer top).
    @Test func closesRunAtOnceAndAStaleBringToFrontIsDropped() async throws {
        let (daemon, fake) = make()
        let (session, _) = try await sessionWithTabs(daemon, fake, 3)
        chromium.on("Target.closeTarget") { _ in .later }
        daemon.performHost(.closeTab(session: session, webview: .webview(3)))
        daemon.performHost(.closeTab(session: session, webview: .webview(2)))
        daemon.performHost(.showTab(session: session, webview: .webview(1)))
        let first = try await chromium.next("Target.closeTarget")
        let second = try await chromium.next("Target.closeTarget")
        #expect(Set([first, second].compactMap { $0.params["targetId"]?.stringValue }) == ["T3", "T2"], "both sent before either is answered")
        // A push meanwhile: its tab comes to the front; the bring-to-front of W1 is out of date.
        daemon.performHost(.openTab(session: session, webview: .webview(4), url: "http://app.test/d", token: "t4", post: nil, root: false))
        try await chromium.next("Page.navigate") { $0.params["url"] == "http://app.test/d" }
        chromium.reply(to: first, .result([:]))
        chromium.reply(to: second, .result([:]))
        let line = try await TestLog.next(.debug) { $0.hasPrefix("\(session) W1: not brought") }
        #expect(line == "\(session) W1: not brought to the front (another tab came forward since)")
        #expect(!chromium.commands.all.contains { $0.method == "Page.bringToFront" && $0.sessionId == "S-T1" && $0.id > first.id })
    }

    /// A browser session closed while its context is being made (Chromium starting): its
    /// creator is answered (`browser-error`), not left waiting for a tab that will not come.
    /// The close takes effect at once (the session lane is cancelled): the open sees it once
    /// the context is there, makes no tab, and the session's close, after it, disposes of the
    /// context (HostLanes: no race between the two).
    @Test func aSessionClosedWhileItsContextIsMadeAnswersItsCreator() async throws {
        let (daemon, fake) = make()
        chromium.on("Target.createBrowserContext") { _ in .later }
        let controller = fake.open()
        fake.receive(controller, #"{"id":1,"method":"hello","params":{"protocol":1,"role":"controller"}}"#)
        fake.receive(controller, #"{"id":2,"method":"session.create","params":{"url":"http://app.test/a","browser":true}}"#)
        let making = try await chromium.next("Target.createBrowserContext")
        let session = try #require(daemon.bridge.sessionIDs.first)
        daemon.performHost(.closeSession(session: session))
        chromium.reply(to: making, .result(["browserContextId": "C9"]))
        try await fake.serviceRemote { Self.reply(fake, to: controller, id: 2) != nil }
        let reply = try #require(Self.reply(fake, to: controller, id: 2))
        #expect(reply["error"]?["code"] == "browser-error", "\(reply)")
        #expect(reply["error"]?["message"] == "the session was closed before its tab opened")
        let disposed = try await chromium.next("Target.disposeBrowserContext")
        #expect(disposed.params == ["browserContextId": "C9"])
        #expect(!chromium.commands.all.contains { $0.method == "Target.createTarget" || $0.method == "Browser.setDownloadBehavior" },
                "the open ended once its context came: \(chromium.methods())")
        #expect(daemon.bridge.sessionCount == 0)
    }

    /// With `--devtools` the Bridge keeps no tab for a later web view (a DevTools client sees a
    /// web view's page close with it); without, it may (Hotwire Native's iOS modal). A recording
    /// says which, so that its replay asks for the same host work.
    @Test(arguments: [false, true])
    func devtoolsTurnsKeptTabsOff(devtools: Bool) {
        let (daemon, _) = make { $0.browser.options.devtools = devtools }
        #expect(daemon.bridge.configuration.keepsTabs == !devtools)
        #expect(daemon.configuration.bridge.keepsTabs, "the configuration given is left as it was")
    }

    /// A web view closed while its tab is being opened (a modal dismissed at once; here its
    /// `Target.createTarget` not answered yet): the close waits for the open in the session's
    /// lane, the open ends once the tab is there, and the close closes it. The tab does not stay
    /// in front of the web view below (which would then draw no frames: Turbo's restore visit
    /// behind it never rendered, CI's hotwire snapshot flake). A later web view opens as usual.
    @Test func aWebViewClosedWhileItsTabOpensGetsNoTab() async throws {
        let (daemon, fake) = make { $0.browser.options.spareTabsSetting = false }
        let (_, session, token) = try await browserSession(fake)
        _ = try Self.page(fake, session, token)
        let host = try #require(daemon.browser?.host)
        _ = try await chromium.next("Target.createTarget")  // W1's
        chromium.on("Target.createTarget") { _ in .later }
        daemon.performHost(.openTab(session: session, webview: .webview(2), url: "http://app.test/b", token: "t2", post: nil, root: false))
        let creating = try await chromium.next("Target.createTarget")
        daemon.performHost(.closeTab(session: session, webview: .webview(2)))
        chromium.reply(to: creating, .result(["targetId": "T9"]))
        let closed = try await chromium.next("Target.closeTarget")
        #expect(closed.params == ["targetId": "T9"])
        #expect(await host.hasTab(session: session, webview: .webview(2)) == false)
        #expect(await host.tabCount == 1)
        chromium.on("Target.createTarget") { _ in .result(["targetId": "T10"]) }
        #expect(try await host.openTab(session: session, webview: .webview(3), url: "http://app.test/c", script: nil) == "T10")
    }

    /// The same while the root's tab is being created: the open ends once the tab is there, and
    /// the session's close, after it, disposes of the context with the tab in it.
    @Test func aSessionClosedWhileItsRootTabIsCreatedAnswersItsCreator() async throws {
        let (daemon, fake) = make()
        chromium.on("Target.createTarget") { _ in .later }
        let controller = fake.open()
        fake.receive(controller, #"{"id":1,"method":"hello","params":{"protocol":1,"role":"controller"}}"#)
        fake.receive(controller, #"{"id":2,"method":"session.create","params":{"url":"http://app.test/a","browser":true}}"#)
        let creating = try await chromium.next("Target.createTarget")
        let session = try #require(daemon.bridge.sessionIDs.first)
        daemon.performHost(.closeSession(session: session))
        chromium.reply(to: creating, .result(["targetId": "T1"]))
        try await fake.serviceRemote { Self.reply(fake, to: controller, id: 2) != nil }
        let reply = try #require(Self.reply(fake, to: controller, id: 2))
        #expect(reply["error"]?["message"] == "the session was closed before its tab opened", "\(reply)")
        let disposed = try await chromium.next("Target.disposeBrowserContext")
        #expect(disposed.params == ["browserContextId": "C1"])
        let host = try #require(daemon.browser?.host)
        #expect(await host.hasTab(session: session, webview: .webview(1)) == false)
        #expect(daemon.bridge.sessionCount == 0)
    }

    @Test func bridgedOpenSaysWhyNothingOpened() async throws {
        let (daemon, _) = make { $0.bridge.maxURLBytes = 64 }
        let long = "http://app.test/" + String(repeating: "x", count: 64)
        #expect(throws: ProtocolError(.invalidParams, "\"url\" is 80 bytes, more than --max-url-bytes (64) allows")) {
            try daemon.openBrowserSession(url: long)
        }
        #expect(daemon.bridge.sessionCount == 0)
        #expect(chromium.launches == 0, "no browser was started")
        #expect(throws: ProfileError.self) { try SessionProfile.parse(["profile": "nope"]) }  // never reaches the daemon
        // At the limit of sessions: refused with limit-exceeded.
        let (full, _) = make { $0.bridge.maxSessions = 1 }
        let first = try full.openBrowserSession(url: "http://app.test/")
        #expect(first.hasPrefix("s-"))
        #expect(throws: ProtocolError(.limitExceeded, "the daemon holds 1 sessions, the most --max-sessions allows")) {
            try full.openBrowserSession(url: "http://app.test/")
        }
        #expect(full.bridge.sessionCount == 1)
    }

    /// A session the daemon opened itself (`bridged open`) whose root tab cannot open is said to
    /// its owner (the command exits 1), not left as a daemon serving nothing.
    @Test func bridgedOpenHearsThatItsTabCannotOpen() async throws {
        chromium.failLaunches(with: .notInstalled("chromium"))
        let (daemon, fake) = make()
        let heard = Locked<[String]>([])
        daemon.onOpenFailure = { session, reason in heard.withLock { $0.append("\(session): \(reason)") } }
        let sid = try daemon.openBrowserSession(url: "http://app.test/")
        try await fake.serviceRemote { !heard.withLock { $0 }.isEmpty }
        let lines = heard.withLock { $0 }
        #expect(lines.count == 1 && lines[0].hasPrefix("\(sid): Chromium is not installed"), "\(lines)")
        // A controller's session failing the same way is its creator's to hear, not the daemon's.
        let (other, otherFake) = make()
        let called = Locked(false)
        other.onOpenFailure = { _, _ in called.withLock { $0 = true } }
        let controller = otherFake.open()
        otherFake.receive(controller, #"{"id":1,"method":"hello","params":{"protocol":1,"role":"controller"}}"#)
        otherFake.receive(controller, #"{"id":2,"method":"session.create","params":{"url":"http://app.test/","browser":true}}"#)
        try await otherFake.serviceRemote { Self.reply(otherFake, to: controller, id: 2) != nil }
        #expect(Self.reply(otherFake, to: controller, id: 2)?["error"]?["code"] == "browser-error")
        #expect(!called.withLock { $0 })
    }
}
