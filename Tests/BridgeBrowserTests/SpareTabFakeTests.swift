import BridgeBrowser
import BridgeTesting
import BridgeProtocol
import Foundation
import Testing

/// Spare tabs (docs/BROWSER.md, "Spare tabs") against the fake Chromium: made once a page has
/// loaded, taken by the session's next web view, replaced, closed with the session, replaced
/// when they fail, never shared between sessions; and the context made ahead for the next
/// session. Ids as the fake gives them: contexts `C1`…, targets `T1`…, sessions `S-Tn`.
@Suite struct SpareTabFakeTests {
    let chromium = FakeChromium()
    let events = Inbox<BrowserEvent>()
    /// The host's debug log.
    let debug = Inbox<String>()

    static let setup: Set<String> = ["Page.enable", "Fetch.enable", "Emulation.setUserAgentOverride", "Emulation.setDeviceMetricsOverride",
                                     "Emulation.setTouchEmulationEnabled", "Network.setBypassServiceWorker", "Page.setLifecycleEventsEnabled",
                                     "Page.setInterceptFileChooserDialog"]

    func makeHost(_ configure: (inout BrowserOptions) -> Void = { _ in }) -> BrowserHost {
        var options = BrowserOptions()
        configure(&options)
        let events = self.events, debug = self.debug
        return BrowserHost(options: options, launcher: chromium.launcher, debug: { debug.append($0) }) { events.append($0) }
    }

    /// The targets created in `context`, in order.
    func created(in context: String) -> [CDPCommand] {
        chromium.commands.all.filter { $0.method == "Target.createTarget" && $0.params["browserContextId"]?.stringValue == context }
    }

    /// The page of the tab attached as `cdpSession` has loaded; returns once the host has
    /// handled that (events are handled in order: a marker after it has been answered).
    func loaded(_ cdpSession: String) async throws {
        chromium.emit("Page.loadEventFired", ["timestamp": 1], session: cdpSession)
        let mark = "mark-\(UUID())"
        chromium.emit("Fetch.requestPaused", ["requestId": .string(mark), "frameId": "F-mark", "request": ["url": "http://x.test/", "method": "GET"]], session: cdpSession)
        _ = try await chromium.next("Fetch.continueRequest") { $0.params["requestId"]?.stringValue == mark }
    }

    /// Session s1 (C1) with its root W1 (T1) loaded; its spare T2 (in C1) ready, then the
    /// context ahead C2 with its tab T3.
    func sessionWithSpare(_ host: BrowserHost) async throws {
        try await host.createSession("s1")
        #expect(try await host.openTab(session: "s1", webview: .webview(1), url: "http://app.test/a", script: "w1", root: true) == "T1")
        // Nothing ahead before the page has loaded.
        #expect(created(in: "C1").count == 1)
        try await loaded("S-T1")
        #expect(await host.spareTargetId(session: "s1") == "T2")
        let ahead = await host.contextAhead()
        #expect(ahead?.context == "C2" && ahead?.target == "T3")
    }

    /// `sessionWithSpare`, then W2 on the spare (T2), loaded: the next spare is T4.
    func sessionWithW2OnTheSpare(_ host: BrowserHost) async throws {
        try await sessionWithSpare(host)
        #expect(try await host.openTab(session: "s1", webview: .webview(2), url: "http://app.test/b", script: "w2") == "T2")
        try await loaded("S-T2")
        #expect(await host.spareTargetId(session: "s1") == "T4")
    }

    @Test func theNextWebViewTakesTheSpareAndANewOneFollowsItsLoad() async throws {
        let host = makeHost()
        try await sessionWithSpare(host)
        // The spare: in the session's context, attached, dressed as W1 was (same user agent),
        // no injected client (it names a web view).
        // (In the background: the top web view stays in front.)
        #expect(created(in: "C1").map(\.params) == [["url": "about:blank", "browserContextId": "C1"], ["url": "about:blank", "browserContextId": "C1", "background": true]])
        #expect(Set(chromium.methods(session: "S-T2")) == Self.setup && chromium.methods(session: "S-T2").count == 8)
        let uas = chromium.commands.all.filter { $0.method == "Emulation.setUserAgentOverride" }
        #expect(uas.count == 3 && uas[0].params == uas[1].params && uas[0].sessionId == "S-T1" && uas[1].sessionId == "S-T2")
        #expect(await host.tabCount == 1, "the spare is no web view's tab")
        #expect(await host.targetId(session: "s1", webview: .webview(2)) == nil)

        // W2 is the spare: its client added, brought to front, its url loaded, sent in that
        // order without waiting for each other; no tab is created for it.
        #expect(try await host.openTab(session: "s1", webview: .webview(2), url: "http://app.test/b", script: "w2") == "T2")
        let taken = Array(chromium.methods(session: "S-T2").dropFirst(8))
        #expect(taken == ["Page.addScriptToEvaluateOnNewDocument", "Page.bringToFront", "Page.navigate"])
        let script = try await chromium.next("Page.addScriptToEvaluateOnNewDocument") { $0.sessionId == "S-T2" }
        #expect(script.params == ["source": "w2", "runImmediately": true])
        let navigate = try await chromium.next("Page.navigate") { $0.sessionId == "S-T2" }
        #expect(navigate.params == ["url": "http://app.test/b"])
        #expect(created(in: "C1").count == 2)
        #expect(await host.targetId(session: "s1", webview: .webview(2)) == "T2")
        #expect(await host.spareTargetId(session: "s1") == nil)
        // Its events are W2's now: its own load passes the interception.
        chromium.emit("Fetch.requestPaused", ["requestId": "r1", "frameId": "T2", "request": ["url": "http://app.test/b", "method": "GET"]], session: "S-T2")
        #expect(try await chromium.next("Fetch.continueRequest").params == ["requestId": "r1"])

        // W2's page has loaded: a new spare for s1 (the context ahead is there already).
        try await loaded("S-T2")
        #expect(await host.spareTargetId(session: "s1") == "T4")
        #expect(created(in: "C1").count == 3)
        #expect(await host.contextAhead()?.target == "T3")
        #expect(await host.spareTabCount == 1)

        // Popping W2 closes its tab; the spare stays. W1 comes to front (Chromium would bring
        // the spare, W2's right neighbour).
        await host.closeTab(session: "s1", webview: .webview(2))
        #expect(try await chromium.next("Target.closeTarget").params == ["targetId": "T2"])
        #expect(chromium.methods(session: "S-T1").last == "Page.bringToFront")
        #expect(await host.spareTargetId(session: "s1") == "T4")
        await host.shutdown()
    }

    /// A session that serves a web directory (a Capacitor app's build) and starts on the
    /// context made ahead: its spare, dressed before the session was known, intercepts the
    /// directory's origin too before its load (else the app's own scripts would not load).
    @Test func aSpareTakenByASessionWithAWebDirectoryInterceptsItsOrigin() async throws {
        let host = makeHost()
        try await sessionWithSpare(host)
        let dressed = chromium.commands.all.filter { $0.method == "Fetch.enable" && $0.sessionId == "S-T3" }
        #expect(dressed.count == 1 && !dressed[0].params.jsonString.contains("localhost"))
        await host.serve(session: "s2", WebDirectory(origin: "https://localhost", directory: NSTemporaryDirectory()))
        try await host.createSession("s2")
        #expect(try await host.openTab(session: "s2", webview: .webview(1), url: "https://localhost/", script: "w1", root: true) == "T3")
        let again = try await chromium.next("Fetch.enable") { $0.sessionId == "S-T3" && $0.params.jsonString.contains("https://localhost/*") }
        // Before the tab's load (a root loads with location.replace: Runtime.evaluate).
        let order = chromium.methods(session: "S-T3")
        let enable = order.lastIndex(of: "Fetch.enable"), navigate = order.lastIndex(of: "Runtime.evaluate")
        #expect(enable != nil && navigate != nil && enable! < navigate!, "\(order)")
        #expect(again.params["patterns"]?.arrayValue?.count == 2)
        await host.shutdown()
    }

    /// W2 popped and W3 pushed at once (a back then a push; a router's replace does both in one
    /// step): W3 takes the spare and comes to front while W2's close is still being answered.
    /// The close then brings forward nothing: W3's tab stays in front (it brought W1's
    /// forward, W1 being the tab below W2 when the close began, and W3 drew no frames).
    @Test func aTabOpenedWhileTheTopOneClosesStaysInFront() async throws {
        let host = makeHost()
        try await sessionWithW2OnTheSpare(host)
        chromium.on("Target.closeTarget") { _ in .later }
        let close = Task { await host.closeTab(session: "s1", webview: .webview(2)) }
        let closing = try await chromium.next("Target.closeTarget")
        #expect(closing.params == ["targetId": "T2"])
        #expect(try await host.openTab(session: "s1", webview: .webview(3), url: "http://app.test/c", script: "w3") == "T4")
        chromium.reply(to: closing, .result([:]))
        await close.value
        let fronts = chromium.commands.all.filter { $0.method == "Page.bringToFront" }.compactMap(\.sessionId)
        #expect(fronts.last == "S-T4", "tabs brought to front, in order: \(fronts)")
        // Without a tab opened meanwhile, the close still brings the web view below forward
        // (over the new spare, right of it).
        try await loaded("S-T4")
        #expect(await host.spareTargetId(session: "s1") == "T5")
        chromium.on("Target.closeTarget") { _ in .result([:]) }
        await host.closeTab(session: "s1", webview: .webview(3))
        #expect(chromium.commands.all.filter { $0.method == "Page.bringToFront" }.last?.sessionId == "S-T1")
        await host.shutdown()
    }

    /// Closing a tab that is not in front (a routed session's web view removed from a stack
    /// not shown, after the shown one was brought forward) brings nothing forward; closing the
    /// one in front still brings the web view below forward over the spare.
    @Test func closingATabBehindBringsNothingForward() async throws {
        let host = makeHost()
        try await sessionWithW2OnTheSpare(host)
        try await host.bringToFront(session: "s1", webview: .webview(1))
        let before = chromium.methods().count
        await host.closeTab(session: "s1", webview: .webview(2))
        #expect(Array(chromium.methods().dropFirst(before)) == ["Target.closeTarget"])
        #expect(try await host.openTab(session: "s1", webview: .webview(3), url: "http://app.test/c", script: "w3") == "T4")
        try await loaded("S-T4")
        await host.closeTab(session: "s1", webview: .webview(3))
        #expect(chromium.commands.all.last { $0.method == "Page.bringToFront" }?.sessionId == "S-T1")
        await host.shutdown()
    }

    /// The context ahead waits until no web view's tab has opened or reported anything for
    /// `contextAheadQuietSeconds` (its renderer's start would compete with the pages loading);
    /// a session created meanwhile gets a context of its own at once.
    @Test func theContextAheadWaitsForAQuietBrowser() async throws {
        let host = makeHost { $0.contextAheadQuietSeconds = 3600 }
        try await host.createSession("s1")
        #expect(try await host.openTab(session: "s1", webview: .webview(1), url: "http://app.test/a", script: "w1", root: true) == "T1")
        try await loaded("S-T1")
        #expect(await host.spareTargetId(session: "s1") == "T2")
        #expect(await host.contextAheadWaits)
        #expect(chromium.commands.all.filter { $0.method == "Target.createBrowserContext" }.count == 1, "the session's only")
        #expect(try await host.createSession("s2") == "C2")
        await host.shutdown()
        #expect(await !host.contextAheadWaits)
    }

    @Test func theNextSessionTakesTheContextAheadAndItsTab() async throws {
        let host = makeHost()
        try await sessionWithSpare(host)
        let before = chromium.commands.all.filter { $0.method == "Target.createBrowserContext" }.count
        #expect(try await host.createSession("s2") == "C2")
        #expect(chromium.commands.all.filter { $0.method == "Target.createBrowserContext" }.count == before, "no context made for it")
        // Its root is the tab ahead: the client, then the page replaces about:blank.
        #expect(try await host.openTab(session: "s2", webview: .webview(1), url: "http://app.test/c", script: "s2w1", root: true) == "T3")
        let taken = Array(chromium.methods(session: "S-T3").dropFirst(8))
        #expect(taken == ["Page.addScriptToEvaluateOnNewDocument", "Page.bringToFront", "Network.enable", "Runtime.evaluate"])
        let replace = try await chromium.next("Runtime.evaluate") { $0.sessionId == "S-T3" }
        #expect(replace.params["expression"] == #"location.replace("http://app.test/c"); true"#)
        #expect(await host.contextAhead() == nil, "taken; the next follows a load")
        await host.shutdown()
    }

    @Test func sessionsNeverShareSpares() async throws {
        let host = makeHost()
        try await sessionWithSpare(host)
        // s2 is C2 with its root T3; its load makes its own spare in C2.
        try await host.createSession("s2")
        try await host.openTab(session: "s2", webview: .webview(1), url: "http://app.test/c", script: nil, root: true)
        try await loaded("S-T3")
        let spare2 = try #require(await host.spareTargetId(session: "s2"))
        #expect(created(in: "C2").count == 2, "its root and its spare")
        #expect(spare2 != "T2")
        // Each session's next web view takes its own.
        #expect(try await host.openTab(session: "s2", webview: .webview(2), url: "http://app.test/d", script: nil) == spare2)
        #expect(try await host.openTab(session: "s1", webview: .webview(2), url: "http://app.test/b", script: nil) == "T2")
        #expect(await host.targetId(session: "s1", webview: .webview(2)) == "T2")
        await host.shutdown()
    }

    @Test func closingTheSessionClosesItsSpareAndOneBeingMade() async throws {
        let host = makeHost()
        try await sessionWithSpare(host)
        await host.closeSession("s1")
        #expect(try await chromium.next("Target.disposeBrowserContext").params == ["browserContextId": "C1"])
        #expect(await host.spareTargetId(session: "s1") == nil)
        #expect(await host.spareTabCount == 0)

        // A spare still being made when its session closes is closed when it comes back.
        try await host.createSession("s2")  // the context ahead, C2 (T3 its root)
        try await host.openTab(session: "s2", webview: .webview(1), url: "http://app.test/c", script: nil, root: true)
        let held = Inbox<CDPCommand>()
        chromium.on("Target.createTarget") { held.append($0); return .later }
        try await loaded("S-T3")
        let pending = try await held.next { _ in true }
        #expect(pending.params["browserContextId"] == "C2")
        await host.closeSession("s2")
        chromium.reply(to: pending, .result(["targetId": "T9"]))
        #expect(try await chromium.next("Target.closeTarget").params == ["targetId": "T9"])
        #expect(try await debug.next { $0.hasPrefix("s2:") } == "s2: its spare tab was made for nothing (the session or the browser went away)")
        #expect(await host.spareTargetId(session: "s2") == nil)
        #expect(await host.spareTabCount == 0)
        await host.shutdown()
    }

    @Test func aSpareThatFailsWhenTakenIsClosedAndANewTabMade() async throws {
        let host = makeHost()
        try await sessionWithSpare(host)
        chromium.on("Page.addScriptToEvaluateOnNewDocument") { $0.sessionId == "S-T2" ? .error("Not attached to an active page") : .result([:]) }
        let target = try await host.openTab(session: "s1", webview: .webview(2), url: "http://app.test/b", script: "w2")
        #expect(try await chromium.next("Target.closeTarget").params == ["targetId": "T2"])
        #expect(target == "T4" && created(in: "C1").count == 3)
        _ = try await chromium.next("Page.navigate") { $0.sessionId == "S-T4" }
        #expect(await host.targetId(session: "s1", webview: .webview(2)) == "T4")
        await host.shutdown()
    }

    /// Opens `webview` of `session` (in its spare: `sessionWithSpare` first) with the injected
    /// client's call on the tab `cdpSession` held unanswered (other tabs' are answered): the
    /// open's task and the held call.
    func openHoldingTheClient(_ host: BrowserHost, session: String = "s1", webview: ItemID = .webview(2), url: String = "http://app.test/b",
                              script: String = "w2", root: Bool = false, cdpSession: String = "S-T2") async throws
        -> (open: Task<TargetID, any Error>, client: CDPCommand) {
        let held = Inbox<CDPCommand>()
        chromium.on("Page.addScriptToEvaluateOnNewDocument") { command in
            if command.sessionId == cdpSession { held.append(command); return .later }
            return .result(["identifier": "1"])
        }
        let open = Task { try await host.openTab(session: session, webview: webview, url: url, script: script, root: root) }
        return (open, try await held.next { _ in true })
    }

    /// The spare's client and its load are sent together (the client first: once a load has
    /// begun, Chromium holds calls for the renderer until the document commits); the load's
    /// document request is let through only once the client is in place, so the page's first
    /// document runs it. Other tabs' events are handled meanwhile.
    @Test func aSparesDocumentRequestWaitsForItsClient() async throws {
        let host = makeHost()
        try await sessionWithSpare(host)
        let (open, client) = try await openHoldingTheClient(host)
        _ = try await chromium.next("Page.navigate") { $0.sessionId == "S-T2" }
        chromium.emit("Fetch.requestPaused", ["requestId": "r1", "frameId": "T2", "request": ["url": "http://app.test/b", "method": "GET"]], session: "S-T2")
        // Handled after it: W1's events (a marker answered), while r1 still waits.
        try await loaded("S-T1")
        #expect(!chromium.commands.all.contains { $0.params["requestId"] == "r1" }, "let through before the client was in place")
        chromium.reply(to: client, .result(["identifier": "1"]))
        #expect(try await chromium.next("Fetch.continueRequest") { $0.params["requestId"] == "r1" }.sessionId == "S-T2")
        #expect(try await open.value == "T2")
        #expect(await host.targetId(session: "s1", webview: .webview(2)) == "T2")
        await host.shutdown()
    }

    /// The spare's own load, waiting for its client, was superseded meanwhile (a newer
    /// navigation of the tab: Chromium answers "Invalid InterceptionId" when it is let through):
    /// no failure is reported, and the tab's next document request is its own load, as on a
    /// tab's direct path (ShellFakeTests).
    @Test func aSparesOwnLoadSupersededWhileItsClientWaitsIsNoFailure() async throws {
        let host = makeHost()
        try await sessionWithSpare(host)
        let (open, client) = try await openHoldingTheClient(host)
        _ = try await chromium.next("Page.navigate") { $0.sessionId == "S-T2" }
        chromium.on("Fetch.continueRequest") { m in m.params["requestId"] == "r1" ? .error("Invalid InterceptionId.") : .result([:]) }
        chromium.emit("Fetch.requestPaused", ["requestId": "r1", "frameId": "T2", "request": ["url": "http://app.test/b", "method": "GET"]], session: "S-T2")
        try await loaded("S-T1")
        chromium.reply(to: client, .result(["identifier": "1"]))
        _ = try await chromium.next("Fetch.continueRequest") { $0.params["requestId"] == "r1" }
        #expect(try await open.value == "T2")
        chromium.emit("Fetch.requestPaused", ["requestId": "r2", "frameId": "T2", "request": ["url": "http://app.test/b", "method": "GET"]], session: "S-T2")
        // Let through as the own load, not aborted as the page's own navigation would be.
        _ = try await chromium.next("Fetch.continueRequest") { $0.params["requestId"] == "r2" }
        #expect(!chromium.commands.all.contains { $0.method == "Fetch.failRequest" && $0.sessionId == "S-T2" })
        #expect(events.all.allSatisfy { if case .loadFailed = $0 { return false }; return true }, "\(events.all)")
        await host.shutdown()
    }

    /// The client cannot be added to the spare while its load has begun: the load's document
    /// request is failed (never a page without its client) and the web view gets a new tab.
    @Test func aSpareWhoseClientFailsDuringItsLoadIsReplaced() async throws {
        let host = makeHost()
        try await sessionWithSpare(host)
        let (open, client) = try await openHoldingTheClient(host)
        _ = try await chromium.next("Page.navigate") { $0.sessionId == "S-T2" }
        chromium.emit("Fetch.requestPaused", ["requestId": "r1", "frameId": "T2", "request": ["url": "http://app.test/b", "method": "GET"]], session: "S-T2")
        try await loaded("S-T1")  // r1 handled (held) before the client's failure comes
        chromium.reply(to: client, .error("Not attached to an active page"))
        #expect(try await chromium.next("Fetch.failRequest") { $0.params["requestId"] == "r1" }.params["errorReason"] == "Aborted")
        #expect(try await chromium.next("Target.closeTarget").params == ["targetId": "T2"])
        #expect(try await open.value == "T4")
        #expect(chromium.commands.all.contains { $0.method == "Fetch.continueRequest" && $0.params["requestId"] == "r1" } == false)
        #expect(try await chromium.next("Page.addScriptToEvaluateOnNewDocument") { $0.sessionId == "S-T4" }.params["source"] == "w2")
        await host.shutdown()
    }

    /// A url that is not fetched (no document request to hold) loads once the client is in place.
    @Test func aSpareLoadingADataURLWaitsForItsClientFirst() async throws {
        let host = makeHost()
        try await sessionWithSpare(host)
        let (open, client) = try await openHoldingTheClient(host, url: "data:text/html,hi")
        try await loaded("S-T1")
        #expect(!chromium.methods(session: "S-T2").contains("Page.navigate"))
        chromium.reply(to: client, .result(["identifier": "1"]))
        #expect(try await chromium.next("Page.navigate") { $0.sessionId == "S-T2" }.params == ["url": "data:text/html,hi"])
        #expect(try await open.value == "T2")
        await host.shutdown()
    }

    /// A root's load (location.replace) is answered before its document request is paused;
    /// when the client fails first, the tab is closed, and its request, coming after, is failed,
    /// not let through without the client.
    @Test func aRootSparesRequestAfterItsClientFailedIsNotLetThrough() async throws {
        let host = makeHost()
        try await sessionWithSpare(host)
        #expect(try await host.createSession("s2") == "C2")
        let (open, client) = try await openHoldingTheClient(host, session: "s2", webview: .webview(1), url: "http://app.test/c", script: "s2w1",
                                                            root: true, cdpSession: "S-T3")
        _ = try await chromium.next("Runtime.evaluate") { $0.sessionId == "S-T3" }
        chromium.reply(to: client, .error("Not attached to an active page"))
        #expect(try await chromium.next("Target.closeTarget").params == ["targetId": "T3"])
        // The renderer's location.replace reaches the interception only now.
        chromium.emit("Fetch.requestPaused", ["requestId": "r1", "frameId": "T3", "request": ["url": "http://app.test/c", "method": "GET"]], session: "S-T3")
        try await loaded("S-T1")
        #expect(!chromium.commands.all.contains { $0.method == "Fetch.continueRequest" && $0.params["requestId"] == "r1" },
                "the page's first document was let through without its client")
        #expect(try await chromium.next("Fetch.failRequest") { $0.params["requestId"] == "r1" }.sessionId == "S-T3")
        // The root gets a new tab, in the same context.
        #expect(try await open.value == "T4")
        #expect(created(in: "C2").count == 2)
        await host.shutdown()
    }

    /// Every document request of the tab waits while its client is being added, not only the
    /// first (another DevTools client's load replacing the held one, a reload).
    @Test func aSecondDocumentRequestDuringTheClientWaitsToo() async throws {
        let host = makeHost()
        try await sessionWithSpare(host)
        let (open, client) = try await openHoldingTheClient(host)
        _ = try await chromium.next("Page.navigate") { $0.sessionId == "S-T2" }
        chromium.emit("Fetch.requestPaused", ["requestId": "r1", "frameId": "T2", "request": ["url": "http://app.test/b", "method": "GET"]], session: "S-T2")
        // Another DevTools client loads a url into the tab meanwhile (r1 is cancelled by it).
        chromium.emit("Page.frameStartedNavigating", ["frameId": "T2", "navigationType": "differentDocument", "url": "http://app.test/x"], session: "S-T2")
        chromium.emit("Fetch.requestPaused", ["requestId": "r2", "frameId": "T2", "request": ["url": "http://app.test/x", "method": "GET"]], session: "S-T2")
        try await loaded("S-T1")
        #expect(!chromium.commands.all.contains { $0.method == "Fetch.continueRequest" && $0.params["requestId"] == "r2" },
                "a document of the tab let through before its client was in place")
        chromium.reply(to: client, .result(["identifier": "1"]))
        #expect(try await chromium.next("Fetch.continueRequest") { $0.params["requestId"] == "r2" }.sessionId == "S-T2")
        #expect(try await open.value == "T2")
        await host.shutdown()
    }

    @Test func aSpareThatCannotBeMadeIsADebugLineAndTheNextWebViewGetsATab() async throws {
        let host = makeHost()
        try await host.createSession("s1")
        try await host.openTab(session: "s1", webview: .webview(1), url: "http://app.test/a", script: nil, root: true)
        // The spare's tab (made in the background) cannot be created.
        chromium.on("Target.createTarget") { $0.params["background"] == true ? .error("Target closed") : .result(["targetId": "T7"]) }
        try await loaded("S-T1")
        #expect(try await debug.next { $0.hasPrefix("s1:") } == "s1: no spare tab: Target closed")
        #expect(await host.spareTargetId(session: "s1") == nil)
        #expect(await host.tabCount == 1)
        // The next web view gets a tab of its own, made the usual way.
        #expect(try await host.openTab(session: "s1", webview: .webview(2), url: "http://app.test/b", script: nil) == "T7")
        #expect(try await chromium.next("Page.navigate").sessionId == "S-T7")
        #expect(debug.all.count == 1, "\(debug.all)")
        await host.shutdown()
    }

    @Test func aSpareThatCrashesIsDroppedAndClosed() async throws {
        let host = makeHost()
        try await sessionWithSpare(host)
        chromium.emit("Target.targetCrashed", ["targetId": "T2", "status": "crashed", "errorCode": 9])
        #expect(try await chromium.next("Target.closeTarget").params == ["targetId": "T2"])
        #expect(await host.spareTargetId(session: "s1") == nil)
        // The context ahead whose tab goes is disposed of with it.
        chromium.emit("Target.targetDestroyed", ["targetId": "T3"])
        #expect(try await chromium.next("Target.disposeBrowserContext").params == ["browserContextId": "C2"])
        #expect(await host.contextAhead() == nil)
        // The next web view gets a new tab; its load makes the next spare and context ahead.
        #expect(try await host.openTab(session: "s1", webview: .webview(2), url: "http://app.test/b", script: nil) == "T4")
        try await loaded("S-T4")
        #expect(await host.spareTargetId(session: "s1") == "T5")
        #expect(await host.contextAhead()?.target == "T6")
        await host.shutdown()
    }

    @Test(arguments: [false, true]) func offNoSpareIsMade(devtools: Bool) async throws {
        // `--no-spare-tabs`, or `--devtools` without `--spare-tabs`.
        let host = makeHost { if devtools { $0.devtools = true } else { $0.spareTabsSetting = false } }
        #expect(await host.options.spareTabs == false)
        try await host.createSession("s1")
        try await host.openTab(session: "s1", webview: .webview(1), url: "http://app.test/a", script: nil, root: true)
        try await loaded("S-T1")
        #expect(await host.spareTargetId(session: "s1") == nil)
        #expect(await host.contextAhead() == nil)
        #expect(chromium.commands.all.filter { $0.method == "Target.createTarget" }.count == 1)
        #expect(try await host.openTab(session: "s1", webview: .webview(2), url: "http://app.test/b", script: nil) == "T2")
        #expect(Set(chromium.methods(session: "S-T2").prefix(8)) == Self.setup)
        await host.shutdown()
    }

    @Test func devtoolsWithSpareTabsMakesThem() async throws {
        let host = makeHost { $0.devtools = true; $0.spareTabsSetting = true }
        #expect(await host.options.spareTabs)
        try await sessionWithSpare(host)
        await host.shutdown()
    }
}
