import BridgeBrowser
import BridgeTesting
import BridgeProtocol
import Foundation
import Testing

/// A kept tab handed to a new web view (`BrowserHost.reuseTab`, Hotwire Native iOS's modal)
/// against the fake Chromium: the old injected client removed, the new one added, the tab in
/// front, the page's client reclaimed (or, with no client, the url loaded); a new tab when
/// there is no tab to reuse or a call fails. Ids as the fake gives them: contexts `C1`…, targets
/// `T1`…, sessions `S-Tn`. Each `Page.addScriptToEvaluateOnNewDocument` is answered with the
/// identifier `id-<its source>`.
@Suite struct ReuseTabFakeTests {
    let chromium = FakeChromium()
    let events = Inbox<BrowserEvent>()
    /// The host's debug log.
    let debug = Inbox<String>()

    static let reclaimW3 = InjectedClient.reclaimExpression(session: "s1", webview: .webview(3), token: "tok3")

    func makeHost(spareTabs: Bool = false) -> BrowserHost {
        var options = BrowserOptions()
        options.spareTabsSetting = spareTabs
        let events = self.events, debug = self.debug
        chromium.on("Page.addScriptToEvaluateOnNewDocument") { command in
            .result(["identifier": .string("id-" + (command.params["source"]?.stringValue ?? "?"))])
        }
        return BrowserHost(options: options, launcher: chromium.launcher, debug: { debug.append($0) }) { events.append($0) }
    }

    /// Whether `command` is the reclaim of a page's client (not another evaluate).
    static func isReclaim(_ command: CDPCommand) -> Bool {
        command.method == "Runtime.evaluate" && (command.params["expression"]?.stringValue ?? "").contains("reclaim")
    }

    /// Session s1 (C1) with its root W1 (T1, script `S1`) and W2 (T2, script `S2`, on
    /// `http://app.test/b`, its own load let through).
    func sessionWithW2(_ host: BrowserHost) async throws {
        try await host.createSession("s1")
        #expect(try await host.openTab(session: "s1", webview: .webview(1), url: "http://app.test/a", script: "S1", root: true) == "T1")
        #expect(try await host.openTab(session: "s1", webview: .webview(2), url: "http://app.test/b", script: "S2") == "T2")
        // W2's client was recorded with the identifier Chromium gave it.
        let added = try await chromium.next("Page.addScriptToEvaluateOnNewDocument") { $0.sessionId == "S-T2" }
        #expect(added.params["source"] == "S2")
        // W2's own load is let through: its page is up, as a kept tab's is.
        chromium.emit("Fetch.requestPaused", ["requestId": "own-b", "frameId": "T2", "request": ["url": "http://app.test/b", "method": "GET"]], session: "S-T2")
        _ = try await chromium.next("Fetch.continueRequest") { $0.params["requestId"]?.stringValue == "own-b" }
    }

    /// The commands sent from the `from`-th on.
    func commands(from: Int) -> [CDPCommand] { Array(chromium.commands.all.dropFirst(from)) }

    @Test func aKeptTabIsHandedOverItsClientReplacedAndReclaimed() async throws {
        let host = makeHost()
        try await sessionWithW2(host)
        let sent = chromium.commands.all.count
        let target = try await host.reuseTab(session: "s1", webview: .webview(3), kept: .webview(2), url: "http://app.test/c", script: "S3", token: "tok3")
        #expect(target == "T2")
        // On W2's tab, in order: its old client removed, W3's added, in front, the page's client
        // reclaimed for W3. Nothing else (no new tab, no load).
        let reuse = commands(from: sent)
        #expect(reuse.map(\.description) == ["Page.removeScriptToEvaluateOnNewDocument@S-T2", "Page.addScriptToEvaluateOnNewDocument@S-T2",
                                             "Page.bringToFront@S-T2", "Runtime.evaluate@S-T2"])
        try #require(reuse.count == 4)
        #expect(reuse[0].params == ["identifier": "id-S2"])
        #expect(reuse[1].params == ["source": "S3", "runImmediately": true])
        let expression = try #require(reuse[3].params["expression"]?.stringValue)
        #expect(expression == Self.reclaimW3)
        #expect(expression.contains(#""session":"s1""#) && expression.contains(#""webview":"W3""#) && expression.contains(#""token":"tok3""#),
                "\(expression)")
        #expect(reuse[3].params["returnByValue"] == true)
        // The open's own load was the only one; W3 got no target of its own.
        #expect(chromium.methods().filter { $0 == "Page.navigate" }.count == 1)
        #expect(chromium.methods().filter { $0 == "Target.createTarget" }.count == 2)
        #expect(!chromium.methods().contains("Target.closeTarget"))
        #expect(await host.hasTab(session: "s1", webview: .webview(3)))
        #expect(await !host.hasTab(session: "s1", webview: .webview(2)))
        #expect(await host.targetId(session: "s1", webview: .webview(3)) == "T2")
        #expect(await host.targetId(session: "s1", webview: .webview(2)) == nil)
        #expect(await host.tabCount == 2)
    }

    @Test func theNewClientsIdentifierIsTheOneRemovedAtTheNextReuse() async throws {
        let host = makeHost()
        try await sessionWithW2(host)
        #expect(try await host.reuseTab(session: "s1", webview: .webview(3), kept: .webview(2), url: "http://app.test/c", script: "S3", token: "tok3") == "T2")
        #expect(try await chromium.next("Page.removeScriptToEvaluateOnNewDocument").params == ["identifier": "id-S2"])
        #expect(try await host.reuseTab(session: "s1", webview: .webview(4), kept: .webview(3), url: "http://app.test/c", script: "S4", token: "tok4") == "T2")
        #expect(try await chromium.next("Page.removeScriptToEvaluateOnNewDocument").params == ["identifier": "id-S3"])
        let reclaim = try await chromium.next("Runtime.evaluate") { Self.isReclaim($0) && $0.params["expression"]?.stringValue?.contains("tok4") == true }
        #expect(reclaim.params["expression"]?.stringValue == InjectedClient.reclaimExpression(session: "s1", webview: .webview(4), token: "tok4"))
        #expect(await host.targetId(session: "s1", webview: .webview(4)) == "T2")
        #expect(await !host.hasTab(session: "s1", webview: .webview(3)))
    }

    @Test func aReuseWithoutAScriptRemovesTheOldClientAndAddsNone() async throws {
        let host = makeHost()
        try await sessionWithW2(host)
        let sent = chromium.commands.all.count
        #expect(try await host.reuseTab(session: "s1", webview: .webview(3), kept: .webview(2), url: "http://app.test/c", script: nil, token: "tok3") == "T2")
        #expect(commands(from: sent).map(\.description) == ["Page.removeScriptToEvaluateOnNewDocument@S-T2", "Page.bringToFront@S-T2",
                                                             "Runtime.evaluate@S-T2"])
        // With no client of its own now, the next reuse removes nothing.
        let again = chromium.commands.all.count
        #expect(try await host.reuseTab(session: "s1", webview: .webview(4), kept: .webview(3), url: "http://app.test/c", script: "S4", token: "tok4") == "T2")
        #expect(commands(from: again).map(\.description) == ["Page.addScriptToEvaluateOnNewDocument@S-T2", "Page.bringToFront@S-T2",
                                                              "Runtime.evaluate@S-T2"])
    }

    /// What the page answers to the reclaim when it has no client to claim (it navigated away
    /// from the app, say).
    @Test(arguments: [
        ["result": ["type": "boolean", "value": false]] as JSONValue,
        ["result": ["type": "undefined"]] as JSONValue,
    ])
    func aPageWithNoClientToReclaimLoadsTheUrl(_ answer: JSONValue) async throws {
        let host = makeHost()
        chromium.on("Runtime.evaluate") { command in
            Self.isReclaim(command) ? .result(answer) : .result(["result": ["type": "boolean", "value": true]])
        }
        try await sessionWithW2(host)
        let sent = chromium.commands.all.count
        #expect(try await host.reuseTab(session: "s1", webview: .webview(3), kept: .webview(2), url: "http://app.test/c", script: "S3", token: "tok3") == "T2")
        let reuse = commands(from: sent)
        #expect(reuse.map(\.description) == ["Page.removeScriptToEvaluateOnNewDocument@S-T2", "Page.addScriptToEvaluateOnNewDocument@S-T2",
                                             "Page.bringToFront@S-T2", "Runtime.evaluate@S-T2", "Page.navigate@S-T2"])
        #expect(reuse.last?.params == ["url": "http://app.test/c"])
        // The same tab, W3's, loading: no new tab, nothing closed.
        #expect(chromium.methods().filter { $0 == "Target.createTarget" }.count == 2)
        #expect(!chromium.methods().contains("Target.closeTarget"))
        #expect(await host.targetId(session: "s1", webview: .webview(3)) == "T2")
        #expect(debug.all.contains { $0.contains("no page client") && $0.contains("http://app.test/c") }, "\(debug.all)")
        // Its load is W3's own: let through the interception.
        chromium.emit("Fetch.requestPaused", ["requestId": "r1", "frameId": "T2", "request": ["url": "http://app.test/c", "method": "GET"]], session: "S-T2")
        let continued = try await chromium.next("Fetch.continueRequest") { $0.params["requestId"] == "r1" }
        #expect(continued.sessionId == "S-T2")
        #expect(!events.all.contains { if case .navigationRequested = $0 { true } else { false } })
    }

    @Test func aKeptWebViewWithNoTabGetsANewTabAsAnOpenMakesIt() async throws {
        let host = makeHost()
        try await host.createSession("s1")
        #expect(try await host.openTab(session: "s1", webview: .webview(1), url: "http://app.test/a", script: "S1", root: true) == "T1")
        let sent = chromium.commands.all.count
        // W2 never opened a tab.
        let target = try await host.reuseTab(session: "s1", webview: .webview(3), kept: .webview(2), url: "http://app.test/c", script: "S3", token: "tok3")
        #expect(target == "T2")
        let reuse = commands(from: sent)
        #expect(reuse.prefix(2).map(\.description) == ["Target.createTarget", "Target.attachToTarget"])
        #expect(reuse.first?.params == ["url": "about:blank", "browserContextId": "C1"])
        // Dressed, its client added, then its url loaded, as `openTab` does.
        let onTab = reuse.filter { $0.sessionId == "S-T2" }
        #expect(Set(onTab.prefix(8).map(\.method)) == ["Page.enable", "Fetch.enable", "Emulation.setUserAgentOverride", "Emulation.setDeviceMetricsOverride",
                                                        "Emulation.setTouchEmulationEnabled", "Network.setBypassServiceWorker", "Page.setLifecycleEventsEnabled",
                                                        "Page.setInterceptFileChooserDialog"])
        #expect(onTab.dropFirst(8).map(\.method) == ["Page.addScriptToEvaluateOnNewDocument", "Page.navigate"])
        #expect(onTab.dropFirst(8).map(\.params) == [["source": "S3", "runImmediately": true], ["url": "http://app.test/c"]])
        // Nothing of a reuse: no client removed, no reclaim, nothing closed.
        #expect(!reuse.contains { $0.method == "Page.removeScriptToEvaluateOnNewDocument" || Self.isReclaim($0) || $0.method == "Target.closeTarget" })
        #expect(await host.targetId(session: "s1", webview: .webview(3)) == "T2")
        #expect(await host.targetId(session: "s1", webview: .webview(1)) == "T1")
        #expect(await host.tabCount == 2)
        // Its client's identifier is recorded as a new tab's: a later reuse removes it.
        #expect(try await host.reuseTab(session: "s1", webview: .webview(4), kept: .webview(3), url: "http://app.test/d", script: "S4", token: "tok4") == "T2")
        #expect(try await chromium.next("Page.removeScriptToEvaluateOnNewDocument").params == ["identifier": "id-S3"])
    }

    struct Failure: CustomTestStringConvertible, Sendable {
        var name: String
        var method: String
        var reply: CDPReply
        /// Which of the method's calls fail: those of W2's tab that are the reuse's.
        var matches: @Sendable (CDPCommand) -> Bool = { $0.sessionId == "S-T2" }
        var testDescription: String { name }
    }

    @Test(arguments: [
        Failure(name: "the old client cannot be removed", method: "Page.removeScriptToEvaluateOnNewDocument", reply: .error("No script with given id found")),
        Failure(name: "the new client cannot be added", method: "Page.addScriptToEvaluateOnNewDocument", reply: .error("Target closed"),
                matches: { $0.sessionId == "S-T2" && $0.params["source"] == "S3" }),
        Failure(name: "the tab cannot come to the front", method: "Page.bringToFront", reply: .error("Target closed")),
        Failure(name: "the reclaim fails", method: "Runtime.evaluate", reply: .error("Target closed"), matches: { $0.sessionId == "S-T2" && ReuseTabFakeTests.isReclaim($0) }),
        Failure(name: "the reclaim throws", method: "Runtime.evaluate",
                reply: .result(["result": ["type": "object"], "exceptionDetails": ["text": "Uncaught", "exception": ["description": "TypeError: boom"]]]),
                matches: { $0.sessionId == "S-T2" && ReuseTabFakeTests.isReclaim($0) }),
    ])
    func aReuseThatFailsClosesTheKeptTabAndOpensANewOne(_ failure: Failure) async throws {
        let host = makeHost()
        try await sessionWithW2(host)
        chromium.on(failure.method) { command in
            if failure.matches(command) { return failure.reply }
            switch command.method {
            case "Page.addScriptToEvaluateOnNewDocument": return .result(["identifier": .string("id-" + (command.params["source"]?.stringValue ?? "?"))])
            case "Runtime.evaluate": return .result(["result": ["type": "boolean", "value": true]])
            default: return .result(.object(JSONObject()))
            }
        }
        let sent = chromium.commands.all.count
        let target = try await host.reuseTab(session: "s1", webview: .webview(3), kept: .webview(2), url: "http://app.test/c", script: "S3", token: "tok3")
        #expect(target == "T3")
        let reuse = commands(from: sent)
        // The failed call, then the kept tab closed, then W3's new tab, made and loaded as an open does.
        let failed = try #require(reuse.firstIndex { $0.method == failure.method && failure.matches($0) })
        let closed = try #require(reuse.firstIndex { $0.method == "Target.closeTarget" })
        let created = try #require(reuse.firstIndex { $0.method == "Target.createTarget" })
        #expect(failed < closed && closed < created)
        #expect(reuse[closed].params == ["targetId": "T2"])
        // No call on the kept tab after it was failed (a reclaim, a load), but its close.
        #expect(reuse[(failed + 1)...].filter { $0.sessionId == "S-T2" }.isEmpty)
        #expect(!reuse.contains { $0.method == "Page.navigate" && $0.sessionId == "S-T2" })
        let onNewTab = reuse.filter { $0.sessionId == "S-T3" }.map(\.method)
        #expect(onNewTab.suffix(2) == ["Page.addScriptToEvaluateOnNewDocument", "Page.navigate"])
        #expect(reuse.last { $0.sessionId == "S-T3" }?.params == ["url": "http://app.test/c"])
        #expect(await host.targetId(session: "s1", webview: .webview(3)) == "T3")
        #expect(await !host.hasTab(session: "s1", webview: .webview(2)))
        #expect(await host.tabCount == 2)
        #expect(debug.all.contains { $0.contains("cannot be reused") }, "\(debug.all)")
    }

    @Test func eventsOfTheReusedTabAreTheNewWebViews() async throws {
        let host = makeHost()
        try await sessionWithW2(host)
        #expect(try await host.reuseTab(session: "s1", webview: .webview(3), kept: .webview(2), url: "http://app.test/c", script: "S3", token: "tok3") == "T2")
        // A same-document change, then a committed document, of the kept tab's page.
        chromium.emit("Page.navigatedWithinDocument", ["frameId": "T2", "url": "http://app.test/b#x"], session: "S-T2")
        let moved = try await events.next { if case .urlChanged = $0 { true } else { false } }
        #expect(moved == .urlChanged(session: "s1", webview: .webview(3), url: "http://app.test/b#x"))
        chromium.emit("Page.frameNavigated", ["frame": ["id": "T2", "loaderId": "L9", "url": "http://app.test/d"]], session: "S-T2")
        let committed = try await events.next { if case .urlChanged = $0 { true } else { false } }
        #expect(committed == .urlChanged(session: "s1", webview: .webview(3), url: "http://app.test/d"))
        // A link the page follows is W3's navigation.
        chromium.emit("Page.frameRequestedNavigation", ["frameId": "T2", "url": "http://app.test/e", "reason": "anchorClick", "disposition": "currentTab"],
                      session: "S-T2")
        let asked = try await events.next { if case .navigationRequested = $0 { true } else { false } }
        #expect(asked == .navigationRequested(session: "s1", webview: .webview(3), request: NavigationRequest(url: "http://app.test/e")))
        // Its close is W3's.
        await host.closeTab(session: "s1", webview: .webview(3))
        #expect(try await chromium.next("Target.closeTarget").params == ["targetId": "T2"])
        #expect(await host.tabCount == 1)
    }

    /// A web view opened on the session's spare tab records its client's identifier once the
    /// client is in place: the reuse removes that one.
    @Test func aTabOpenedOnASpareIsReusedWithItsClientsIdentifier() async throws {
        let host = makeHost(spareTabs: true)
        try await host.createSession("s1")
        #expect(try await host.openTab(session: "s1", webview: .webview(1), url: "http://app.test/a", script: "S1", root: true) == "T1")
        // The page has loaded: the session's spare (T2) is made.
        chromium.emit("Page.loadEventFired", ["timestamp": 1], session: "S-T1")
        // (Events are handled in order: once a marker after it is answered, the spare is being made.)
        chromium.emit("Fetch.requestPaused", ["requestId": "mark", "frameId": "F-mark", "request": ["url": "http://x.test/", "method": "GET"]], session: "S-T1")
        _ = try await chromium.next("Fetch.continueRequest") { $0.params["requestId"]?.stringValue == "mark" }
        let spare = try #require(await host.spareTargetId(session: "s1"))
        #expect(try await host.openTab(session: "s1", webview: .webview(2), url: "http://app.test/b", script: "S2") == spare)
        // The spare's client was added when it was taken (not when it was dressed).
        let added = try await chromium.next("Page.addScriptToEvaluateOnNewDocument") { $0.params["source"] == "S2" }
        #expect(added.sessionId == "S-\(spare.rawValue)")
        #expect(try await host.reuseTab(session: "s1", webview: .webview(3), kept: .webview(2), url: "http://app.test/c", script: "S3", token: "tok3") == spare)
        let removed = try await chromium.next("Page.removeScriptToEvaluateOnNewDocument")
        #expect(removed.params == ["identifier": "id-S2"])
        #expect(removed.sessionId == "S-\(spare.rawValue)")
        #expect(await host.targetId(session: "s1", webview: .webview(3)) == spare)
    }
}
