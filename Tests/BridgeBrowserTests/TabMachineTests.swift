@testable import BridgeBrowser
import BridgeProtocol
import Foundation
import Testing

/// The tab machine by table: a tab in a given state, an event of Chromium (or an answer to a call
/// the machine asked for), and the commands that come out, in order, with what the tab's state
/// becomes. No Chromium, no fake, no task.
@Suite struct TabMachineTests {
    static let s1: CDPSessionID = "S-T1"
    static let key = TabKey("s1", .webview(1))

    /// A machine with web view W1 of s1 on tab T1 (session S-T1), its own load done.
    static func machine(_ settings: TabMachine.Settings = TabMachine.Settings(), _ configure: (inout TabMachine.Tab) -> Void = { _ in }) -> TabMachine {
        var m = TabMachine(settings: settings)
        m.contexts["s1"] = "C1"
        m.register(TabMachine.Tab(session: "s1", webview: .webview(1), targetId: "T1", cdpSession: s1), url: "http://app.test/a", post: nil)
        m.tabs[key]?.ownLoadPending = false
        configure(&m.tabs[key]!)
        return m
    }

    static func paused(_ url: String, method: String = "GET", frame: String = "T1", type: String = "Document", id: String = "R1",
                       post: String? = nil) -> DevToolsEvent {
        .requestPaused(PausedRequest(requestId: id, frameId: frame, resourceType: type, url: url, method: method, headers: ["Accept": "text/html"],
                                     hasPostData: post != nil, postData: post))
    }

    struct Row: CustomTestStringConvertible, Sendable {
        var name: String
        var tab: @Sendable (inout TabMachine.Tab) -> Void = { _ in }
        var event: DevToolsEvent
        var session: CDPSessionID? = TabMachineTests.s1
        var commands: [TabCommand]
        var after: @Sendable (TabMachine.Tab?) -> Bool = { _ in true }
        var testDescription: String { name }
    }

    static let nav = { @Sendable (url: String) in BrowserEvent.navigationRequested(session: "s1", webview: .webview(1), request: NavigationRequest(url: url)) }

    static let rows: [Row] = [
        Row(name: "a link the page follows is handed over early",
            event: .frameRequestedNavigation(frameId: "T1", url: "http://app.test/b", reason: "anchorClick", disposition: "currentTab"),
            commands: [.emit(nav("http://app.test/b"))],
            after: { $0?.decidedNavigations.map(\.url) == ["http://app.test/b"] && $0?.pageRequestedNavigation == true }),
        Row(name: "a POST form is not decided early",
            event: .frameRequestedNavigation(frameId: "T1", url: "http://app.test/b", reason: "formSubmissionPost", disposition: "currentTab"),
            commands: [], after: { $0?.decidedNavigations.isEmpty == true && $0?.pageRequestedNavigation == true }),
        Row(name: "a url with a fragment is not decided early",
            event: .frameRequestedNavigation(frameId: "T1", url: "http://app.test/b#x", reason: "anchorClick", disposition: nil), commands: []),
        Row(name: "nothing is decided early during the tab's own load",
            tab: { $0.ownLoadPending = true },
            event: .frameRequestedNavigation(frameId: "T1", url: "http://app.test/b", reason: "anchorClick", disposition: nil), commands: []),
        Row(name: "a custom scheme is handed over",
            event: .frameRequestedNavigation(frameId: "T1", url: "tt://settings", reason: "anchorClick", disposition: "currentTab"),
            commands: [.emit(.navigationRequested(session: "s1", webview: .webview(1), request: NavigationRequest(url: "tt://settings", kind: .customScheme)))]),
        Row(name: "a javascript: url is left alone",
            event: .frameRequestedNavigation(frameId: "T1", url: "javascript:void(0)", reason: "anchorClick", disposition: nil), commands: []),
        Row(name: "a frame inside the page navigates as it likes",
            event: .frameRequestedNavigation(frameId: "F2", url: "tt://x", reason: "anchorClick", disposition: nil), commands: []),
        Row(name: "the tab's own load is let through",
            tab: { $0.ownLoadPending = true },
            event: paused("http://app.test/a"),
            commands: [.letThrough(LetThrough(key: key, cdpSession: s1, requestId: "R1", url: "http://app.test/a", continued: ["requestId": "R1"],
                                              served: nil, afterClient: false))],
            after: { $0?.ownLoadPending == false }),
        Row(name: "a spare's own load waits for its client",
            tab: { $0.ownLoadPending = true; $0.clientPending = true },
            event: paused("http://app.test/a"),
            commands: [.letThrough(LetThrough(key: key, cdpSession: s1, requestId: "R1", url: "http://app.test/a", continued: ["requestId": "R1"],
                                              served: nil, afterClient: true))]),
        Row(name: "the host's own traversal to another document becomes the tab's own load",
            tab: { $0.ownTraversalPending = true },
            event: .frameStartedNavigating(frameId: "T1", url: "http://app.test/first", navigationType: "historyDifferentDocument"),
            commands: [], after: { $0?.ownLoadPending == true && $0?.ownTraversalPending == false }),
        Row(name: "the host's own traversal within the document changes nothing more",
            tab: { $0.ownTraversalPending = true },
            event: .frameStartedNavigating(frameId: "T1", url: "http://app.test/a#b", navigationType: "historySameDocument"),
            commands: [], after: { $0?.ownLoadPending == false && $0?.ownTraversalPending == false }),
        Row(name: "the host's own traversal to the tab's blank first entry stops there, handed over to no one",
            tab: { $0.ownTraversalPending = true },
            event: .frameStartedNavigating(frameId: "T1", url: "about:blank", navigationType: "historyDifferentDocument"),
            commands: [.call(.stopLoading, session: s1)], after: { $0?.ownTraversalPending == false }),
        Row(name: "the page's own traversal to another document is handed over as a back (at its request)",
            event: .frameStartedNavigating(frameId: "T1", url: "http://app.test/first", navigationType: "historyDifferentDocument"),
            commands: [], after: { $0?.ownLoadPending == false && $0?.lastNavigationType == "historyDifferentDocument" }),
        Row(name: "a reload is let through",
            tab: { $0.lastNavigationType = "reload" },
            event: paused("http://app.test/a"),
            commands: [.letThrough(LetThrough(key: key, cdpSession: s1, requestId: "R1", url: "http://app.test/a", continued: ["requestId": "R1"],
                                              served: nil, afterClient: false))]),
        Row(name: "a document request of the page is aborted and handed over",
            event: paused("http://app.test/b"),
            commands: [.call(.failRequest("R1"), session: s1),
                       .emit(.navigationRequested(session: "s1", webview: .webview(1),
                                                  request: NavigationRequest(url: "http://app.test/b", headers: ["Accept": "text/html"])))]),
        Row(name: "a request decided early is aborted, not handed over again",
            tab: { $0.decidedNavigations = [.init(url: "http://app.test/b", at: 19_000_000_000)] },
            event: paused("http://app.test/b"),
            commands: [.send(.failRequest("R1"), session: s1)], after: { $0?.decidedNavigations.isEmpty == true }),
        Row(name: "a decision older than the window is forgotten",
            tab: { $0.decidedNavigations = [.init(url: "http://app.test/b", at: 0)] },
            event: paused("http://app.test/b"),
            commands: [.call(.failRequest("R1"), session: s1),
                       .emit(.navigationRequested(session: "s1", webview: .webview(1),
                                                  request: NavigationRequest(url: "http://app.test/b", headers: ["Accept": "text/html"])))]),
        Row(name: "a POST with its body inline is handed over with it",
            event: paused("http://app.test/f", method: "POST", post: "a=1"),
            commands: [.call(.failRequest("R1"), session: s1),
                       .emit(.navigationRequested(session: "s1", webview: .webview(1), request: NavigationRequest(
                           url: "http://app.test/f", method: "POST", postData: Array("a=1".utf8), headers: ["Accept": "text/html"])))]),
        Row(name: "a traversal of the page's history to a fetched document is a back",
            tab: { $0.lastNavigationType = "historyDifferentDocument" },
            event: paused("http://app.test/z"),
            commands: [.call(.failRequest("R1"), session: s1), .emit(.historyBack(session: "s1", webview: .webview(1)))]),
        Row(name: "a frame's request goes on",
            event: paused("http://app.test/frame", frame: "F2"),
            commands: [.call(.continueRequest("R1"), session: s1)]),
        Row(name: "a traversal to about:blank is stopped here: a back",
            event: .frameStartedNavigating(frameId: "T1", url: "about:blank", navigationType: "historyDifferentDocument"),
            commands: [.call(.stopLoading, session: s1), .emit(.historyBack(session: "s1", webview: .webview(1)))],
            after: { $0?.lastNavigationType == "historyDifferentDocument" }),
        Row(name: "a navigation nobody in the page asked for is another client's",
            event: .frameStartedNavigating(frameId: "T1", url: "http://app.test/x", navigationType: "differentDocument"),
            commands: [], after: { $0?.foreignLoad == true }),
        Row(name: "a same-document change is the web view's url",
            event: .navigatedWithinDocument(frameId: "T1", url: "http://app.test/a#2"),
            commands: [.emit(.urlChanged(session: "s1", webview: .webview(1), url: "http://app.test/a#2"))]),
        Row(name: "a committed document is the web view's url",
            event: .frameNavigated(frameId: "T1", isMainFrame: true, url: "http://app.test/c", unreachableUrl: nil),
            commands: [.emit(.urlChanged(session: "s1", webview: .webview(1), url: "http://app.test/c"))]),
        Row(name: "Chromium's error page is remembered until it has loaded",
            event: .frameNavigated(frameId: "T1", isMainFrame: true, url: "chrome-error://chromewebdata/", unreachableUrl: "http://app.test/c"),
            commands: [], after: { $0?.failedLoad == "http://app.test/c" }),
        Row(name: "a failed load watched by the Network domain is reported with its error",
            tab: { $0.failedLoad = "http://app.test/c"; $0.watchingNetwork = true; $0.documentRequest = "D1"; $0.netError = "net::ERR_CONNECTION_REFUSED" },
            event: .loadEventFired,
            commands: [.disableNetwork(s1, label: "s1 W1"),
                       .emit(.loadFailed(session: "s1", webview: .webview(1), url: "http://app.test/c", reason: "net::ERR_CONNECTION_REFUSED"))],
            after: { $0?.failedLoad == nil && $0?.watchingNetwork == false && $0?.netError == nil }),
        Row(name: "a failed load not watched asks the error page for its code",
            tab: { $0.failedLoad = "http://app.test/c" },
            event: .loadEventFired,
            commands: [.ask(.evaluate("(document.querySelector('.error-code') || {}).textContent || ''", returnByValue: true), session: s1,
                            then: .errorPage(key, url: "http://app.test/c"))]),
        Row(name: "the first load makes the session's spare",
            tab: { $0.spareAfterLoad = true },
            event: .loadEventFired, commands: [.spareAfterLoad(session: "s1")], after: { $0?.spareAfterLoad == false }),
        Row(name: "the document request's failure is its net error",
            tab: { $0.watchingNetwork = true; $0.documentRequest = "D1" },
            event: .loadingFailed(requestId: "D1", errorText: "net::ERR_NAME_NOT_RESOLVED"),
            commands: [], after: { $0?.netError == "net::ERR_NAME_NOT_RESOLVED" }),
        Row(name: "a dialog is the app's",
            event: .dialogOpening(type: "confirm", message: "Sure?", defaultPrompt: "", url: "http://app.test/a"),
            commands: [.emit(.shell(.dialogOpened(session: "s1", webview: .webview(1),
                                                  Dialog(type: .confirm, message: "Sure?", defaultValue: "", url: "http://app.test/a"))))]),
        Row(name: "a file chooser asks for its input's accept",
            event: .fileChooserOpened(backendNodeId: 7, multiple: true),
            commands: [.ask(DevToolsCall(.domDescribeNode, ["backendNodeId": 7]), session: s1, timeout: 2, then: .fileChooser(key, multiple: true))]),
        Row(name: "a stray tab's request goes on",
            event: paused("http://x.test/"), session: "S-T9", commands: [.call(.continueRequest("R1"), session: "S-T9")]),
        Row(name: "a stray tab's dialog is dismissed (a beforeunload accepted)",
            event: .dialogOpening(type: "beforeunload", message: "", defaultPrompt: "", url: ""), session: "S-T9",
            commands: [.send(.handleDialog(accept: true), session: "S-T9")]),
        Row(name: "a popup's url is a navigation of its opener, and the popup closes",
            event: .targetCreated(TargetInfo(targetId: "T7", type: "page", url: "http://app.test/pop", openerId: "T1")), session: nil,
            commands: [.call(.closeTarget("T7")),
                       .emit(.navigationRequested(session: "s1", webview: .webview(1), request: NavigationRequest(url: "http://app.test/pop", kind: .windowOpen)))]),
        Row(name: "a popup without its url yet waits for it",
            event: .targetCreated(TargetInfo(targetId: "T7", type: "page", url: "about:blank", openerId: "T1")), session: nil, commands: []),
        Row(name: "a tab's renderer crash is the app's",
            event: .targetCrashed("T1", status: "killed", errorCode: 9), session: nil,
            commands: [.dropSpare("T1"), .emit(.shell(.crashed(session: "s1", webview: .webview(1), reason: "the page's renderer process died (killed, code 9)")))],
            after: { $0?.rendererGone == true }),
        Row(name: "a renderer's death reported a second time is not reported again (by target)",
            tab: { $0.rendererGone = true },
            event: .targetCrashed("T1", status: "killed", errorCode: 9), session: nil, commands: [.dropSpare("T1")]),
        Row(name: "a renderer's death reported a second time is not reported again (by the page's session)",
            tab: { $0.rendererGone = true }, event: .inspectorTargetCrashed, commands: []),
        Row(name: "a document committed again (a reload) reports a later death again",
            tab: { $0.rendererGone = true },
            event: .frameNavigated(frameId: "T1", isMainFrame: true, url: "http://app.test/a", unreachableUrl: nil),
            commands: [.emit(.urlChanged(session: "s1", webview: .webview(1), url: "http://app.test/a"))], after: { $0?.rendererGone == false }),
        Row(name: "a download is cancelled in its context and reported",
            event: .downloadWillBegin(guid: "G1", frameId: "T1", url: "http://app.test/f.zip", suggestedFilename: "f.zip"), session: nil,
            commands: [.send(.cancelDownload(guid: "G1", context: "C1")),
                       .emit(.shell(.download(session: "s1", webview: .webview(1), url: "http://app.test/f.zip", filename: "f.zip")))]),
    ]

    @Test(arguments: rows) func row(_ row: Row) {
        var m = Self.machine(TabMachine.Settings(), row.tab)
        let commands = m.event(row.event, session: row.session, now: 20_000_000_000)
        #expect(commands == row.commands)
        #expect(row.after(m.tabs[Self.key]))
    }

    /// Chromium says a renderer died twice (the browser's `Target.targetCrashed`, the page's
    /// `Inspector.targetCrashed`): the owner hears it once, whichever comes first, so that the
    /// second, handled after the owner's reload was asked for, does not mark the reloaded page
    /// crashed again (a loaded run of test_shell_duties: the page stayed "crashed" for good).
    @Test(arguments: [false, true]) func aRenderersDeathIsReportedOnceUntilItsTabLoadsAgain(pageFirst: Bool) {
        var m = Self.machine()
        let byTarget = DevToolsEvent.targetCrashed("T1", status: "killed", errorCode: 9)
        let crashes = { (c: [TabCommand]) in c.filter { if case .emit(.shell(.crashed)) = $0 { true } else { false } }.count }
        let first = pageFirst ? m.event(.inspectorTargetCrashed, session: Self.s1, now: 0) : m.event(byTarget, session: nil, now: 0)
        let second = pageFirst ? m.event(byTarget, session: nil, now: 0) : m.event(.inspectorTargetCrashed, session: Self.s1, now: 0)
        #expect(crashes(first) == 1 && crashes(second) == 0)
        _ = m.event(.frameNavigated(frameId: "T1", isMainFrame: true, url: "http://app.test/a", unreachableUrl: nil), session: Self.s1, now: 0)
        #expect(crashes(m.event(byTarget, session: nil, now: 0)) == 1, "a death after the reload is a new one")
    }

    @Test func aPopupNamedLaterIsHandedOverThen() {
        var m = Self.machine()
        #expect(m.event(.targetCreated(TargetInfo(targetId: "T7", type: "page", url: "", openerId: "T1")), session: nil, now: 0) == [])
        #expect(m.popups["T7"] == Self.key)
        let commands = m.event(.targetInfoChanged(TargetInfo(targetId: "T7", type: "page", url: "http://app.test/p", openerId: nil)), session: nil, now: 0)
        #expect(commands.first == .call(.closeTarget("T7")))
        #expect(m.popups.isEmpty)
    }

    @Test func aPOSTWithoutItsBodyAsksForItThenHandsItOver() {
        var m = Self.machine()
        let ask = m.event(.requestPaused(PausedRequest(requestId: "R1", frameId: "T1", resourceType: "Document", url: "http://app.test/f", method: "POST",
                                                        headers: [:], hasPostData: true, postData: nil)), session: Self.s1, now: 0)
        guard case .ask(let call, _, _, .postData(let stopped)) = ask.first else {
            Issue.record("no ask: \(ask)")
            return
        }
        #expect(call == .getRequestPostData("R1"))
        let answered = m.answered(.postData(stopped), .success(["postData": .string(Data("a=1".utf8).base64EncodedString()), "base64Encoded": true]))
        #expect(answered == [.call(.failRequest("R1"), session: Self.s1),
                             .emit(.navigationRequested(session: "s1", webview: .webview(1),
                                                        request: NavigationRequest(url: "http://app.test/f", method: "POST", postData: Array("a=1".utf8))))])
        // Unreadable: said, and the POST goes without its body.
        let failed = m.answered(.postData(stopped), .failure(BrowserError.timeout("Fetch.getRequestPostData")))
        guard case .emit(.warning) = failed.first else {
            Issue.record("no warning: \(failed)")
            return
        }
        #expect(failed.count == 3)
    }

    @Test func theErrorPagesCodeIsTheReason() {
        var m = Self.machine()
        let named = m.answered(.errorPage(Self.key, url: "http://app.test/c"), .success(["result": ["value": "ERR_CONNECTION_REFUSED"]]))
        #expect(named == [.emit(.loadFailed(session: "s1", webview: .webview(1), url: "http://app.test/c", reason: "net::ERR_CONNECTION_REFUSED"))])
        let unnamed = m.answered(.errorPage(Self.key, url: "http://app.test/c"), .failure(BrowserError.disconnected))
        #expect(unnamed == [.emit(.loadFailed(session: "s1", webview: .webview(1), url: "http://app.test/c",
                                              reason: "the page could not be loaded (Chromium shows its error page)"))])
    }

    @Test func aFileChoosersAcceptIsReadFromItsInput() {
        var m = Self.machine()
        _ = m.event(.fileChooserOpened(backendNodeId: 7, multiple: false), session: Self.s1, now: 0)
        #expect(m.fileChoosers[Self.key] == 7)
        let answered = m.answered(.fileChooser(Self.key, multiple: false), .success(["node": ["attributes": ["type", "file", "accept", "image/*"]]]))
        #expect(answered == [.emit(.shell(.fileChooser(session: "s1", webview: .webview(1), multiple: false, accept: "image/*")))])
    }

    @Test func aClosingTabThatCommitsIsClosedAgainAndItsEndForgetsIt() {
        var m = Self.machine()
        m.fronts["s1"] = Self.key
        let closed = m.startClosing(Self.key)
        #expect(closed?.wasInFront == true)
        #expect(m.fronts["s1"] == nil)
        #expect(m.tabs.isEmpty && m.tabsByTarget.isEmpty && m.tabsByCDPSession.isEmpty)
        // Its request is failed (it loads nothing more), a commit closes it again.
        #expect(m.event(Self.paused("http://app.test/b"), session: Self.s1, now: 0) == [.call(.failRequest("R1"), session: Self.s1)])
        #expect(m.event(.frameNavigated(frameId: "T1", isMainFrame: true, url: "about:blank", unreachableUrl: nil), session: Self.s1, now: 0)
            == [.call(.closeTarget("T1"))])
        #expect(m.event(.targetDestroyed("T1"), session: nil, now: 0) == [.dropSpare("T1")])
        #expect(m.closing.isEmpty)
    }

    /// What comes forward once a close is answered, by table: (the closed tab's place, a spare
    /// right of it, a tab brought forward meanwhile) → the tab brought forward.
    @Test(arguments: [
        (3, true, false, "W2" as String?),   // the top closed, the spare right of it: the web view below comes forward
        (3, false, false, nil),              // no spare: Chromium brings the left neighbour forward itself
        (3, true, true, nil),                // another tab came forward meanwhile
        (1, true, false, nil),               // a tab below the top closed: the top stays in front
    ])
    func theTabBelowComesForwardPastTheSpare(closedAt: Int, spareRight: Bool, frontMeanwhile: Bool, expected: String?) throws {
        var m = TabMachine(settings: TabMachine.Settings())
        m.contexts["s1"] = "C1"
        for i in 1...3 {
            m.register(TabMachine.Tab(session: "s1", webview: .webview(i), targetId: TargetID("T\(i)"), cdpSession: CDPSessionID("S-T\(i)")),
                       url: "http://app.test/\(i)", post: nil)
        }
        let key = TabKey("s1", .webview(closedAt))
        m.fronts["s1"] = key
        let closing = m.startClosing(key)
        let closed = try #require(closing).tab
        if frontMeanwhile { m.fronts["s1"] = TabKey("s1", .webview(1)) }
        let front = m.frontAfterClose(closed, spareRight: spareRight)
        #expect(front.map { "\($0.webview)" } == expected)
        if let front { #expect(m.fronts["s1"] == front.key) }
    }

    /// Closing a tab: forgotten at once, the close asked; once answered, the web view below
    /// comes forward past the spare, and the close is sent again until the tab is destroyed.
    @Test func aCloseIsAskedThenWhatComesForwardThenItsRetries() throws {
        var m = Self.machine()
        m.register(TabMachine.Tab(session: "s1", webview: .webview(2), targetId: "T2", cdpSession: "S-T2"), url: "http://app.test/b", post: nil)
        let w2 = TabKey("s1", .webview(2))
        m.fronts["s1"] = w2
        let closed = try #require(m.tabs[w2])
        #expect(m.closeTab(w2, spareRight: true) == [.ask(.closeTarget("T2"), session: nil, then: .closeAnswered(closed, spareRight: true))])
        #expect(m.tabs[w2] == nil && m.closing["S-T2"] == "T2")
        #expect(m.answered(.closeAnswered(closed, spareRight: true), .success([:])) == [.call(.bringToFront, session: Self.s1), .retryClose("T2", "S-T2")])
        #expect(m.fronts["s1"] == Self.key)
        // A web view without a tab: nothing.
        #expect(m.closeTab(w2, spareRight: true) == [])
    }

    @Test func atMostFourNavigationsWaitDecidedEarly() {
        var m = Self.machine()
        for i in 1...6 {
            _ = m.event(.frameRequestedNavigation(frameId: "T1", url: "http://app.test/\(i)", reason: "anchorClick", disposition: nil),
                        session: Self.s1, now: UInt64(i))
        }
        #expect(m.tabs[Self.key]?.decidedNavigations.map(\.url) == (3...6).map { "http://app.test/\($0)" })
    }

    @Test func theWebDirectoryServesSubresourcesAndTheOwnLoad() {
        var m = Self.machine { $0.ownLoadPending = true }
        let web = WebDirectory(origin: "https://localhost", directory: "/nonexistent")
        m.webDirectories["s1"] = web
        #expect(m.event(Self.paused("https://localhost/app.js", type: "Script"), session: Self.s1, now: 0)
            == [.serve(requestId: "R1", url: "https://localhost/app.js", web, session: Self.s1, label: "s1 W1")])
        #expect(m.event(Self.paused("https://localhost/", id: "R2"), session: Self.s1, now: 0)
            == [.letThrough(LetThrough(key: Self.key, cdpSession: Self.s1, requestId: "R2", url: "https://localhost/", continued: ["requestId": "R2"],
                                       served: web, afterClient: false))])
    }

    @Test func eventsOfAWebViewsTabAreItsActivity() {
        var m = Self.machine()
        _ = m.event(.loadEventFired, session: Self.s1, now: 42)
        #expect(m.lastTabActivity == 42)
        _ = m.event(.loadEventFired, session: "S-T9", now: 99)
        #expect(m.lastTabActivity == 42)
    }
}

// MARK: handing a kept tab over to another web view

extension TabMachineTests {
    static let w1 = TabKey("s1", .webview(1))
    static let w2 = TabKey("s1", .webview(2))
    static let w3 = TabKey("s1", .webview(3))

    /// Everything a machine holds (TabMachine itself is not Equatable), to compare a machine
    /// before and after.
    struct Snapshot: Equatable {
        var settings: TabMachine.Settings
        var contexts: [String: BrowserContextID]
        var tabs: [TabKey: TabMachine.Tab]
        var tabsByCDPSession: [CDPSessionID: TabKey]
        var tabsByTarget: [TargetID: TabKey]
        var popups: [TargetID: TabKey]
        var closing: [CDPSessionID: TargetID]
        var fronts: [String: TabKey]
        var fileChoosers: [TabKey: Int64]
        var webDirectories: [String: WebDirectory]
        var tabsOpened: Int
        var lastTabActivity: UInt64

        init(_ m: TabMachine) {
            (settings, contexts, tabs, tabsByCDPSession, tabsByTarget) = (m.settings, m.contexts, m.tabs, m.tabsByCDPSession, m.tabsByTarget)
            (popups, closing, fronts, fileChoosers, webDirectories) = (m.popups, m.closing, m.fronts, m.fileChoosers, m.webDirectories)
            (tabsOpened, lastTabActivity) = (m.tabsOpened, m.lastTabActivity)
        }
    }

    /// `m.handOver(old, to: key)`, required to succeed.
    static func handOver(_ m: inout TabMachine, _ old: TabKey, _ key: TabKey) throws -> TabMachine.Tab {
        let tab = m.handOver(old, to: key)
        return try #require(tab)
    }

    @Test func aSnapshotHoldsEveryPropertyOfTheMachine() {
        // A property added to TabMachine must be added to Snapshot too (else the comparisons
        // below would miss it).
        #expect(Mirror(reflecting: TabMachine(settings: TabMachine.Settings())).children.count == Mirror(reflecting: Snapshot(Self.machine())).children.count)
    }

    /// s1 with W1 (T1, S-T1: in front, its script `id-1`, a popup T7 waiting for its url, a file
    /// chooser open) and W2 (T2, S-T2: a popup T8 waiting); s2 with W1 (T9, S-T9).
    static func keptMachine() -> TabMachine {
        var m = machine { $0.scriptIdentifier = "id-1" }
        m.register(TabMachine.Tab(session: "s1", webview: .webview(2), targetId: "T2", cdpSession: "S-T2"), url: "http://app.test/b", post: nil)
        m.contexts["s2"] = "C2"
        m.register(TabMachine.Tab(session: "s2", webview: .webview(1), targetId: "T9", cdpSession: "S-T9"), url: "http://app.test/z", post: nil)
        m.fronts["s1"] = w1
        m.fronts["s2"] = TabKey("s2", .webview(1))
        m.popups["T7"] = w1
        m.popups["T8"] = w2
        m.fileChoosers[w1] = 7
        m.fileChoosers[w2] = 8
        return m
    }

    @Test func aHandedOverTabIsTheNewWebViewsWithItsLookupsFrontAndPopups() throws {
        var m = Self.keptMachine()
        let before = m.tabs[Self.w1]
        let tab = try Self.handOver(&m, Self.w1, Self.w3)
        // The same tab (target, DevTools session, script, place, state), now W3's.
        var expected = try #require(before)
        expected.webview = .webview(3)
        #expect(tab == expected)
        #expect(tab.key == Self.w3 && tab.targetId == "T1" && tab.cdpSession == Self.s1 && tab.scriptIdentifier == "id-1")
        #expect(m.tabs[Self.w1] == nil && m.tabs[Self.w3] == tab)
        #expect(m.tabsByCDPSession[Self.s1] == Self.w3 && m.tabsByTarget["T1"] == Self.w3)
        #expect(m.fronts["s1"] == Self.w3)
        #expect(m.popups == ["T7": Self.w3, "T8": Self.w2])
        // W1's file chooser is dropped (the page's chooser is not W3's to answer); W2's stays.
        #expect(m.fileChoosers == [Self.w2: 8])
        // Nothing else moved: W2, the other session, the count of tabs opened.
        #expect(m.tabs.count == 3 && m.tabs[Self.w2]?.targetId == "T2" && m.tabsByCDPSession["S-T2"] == Self.w2 && m.tabsByTarget["T2"] == Self.w2)
        #expect(m.tabs[TabKey("s2", .webview(1))]?.targetId == "T9" && m.fronts["s2"] == TabKey("s2", .webview(1)))
        #expect(m.tabsOpened == 3)
        #expect(m.topTab(session: "s1")?.webview == .webview(2))
    }

    @Test func aTabNotInFrontIsHandedOverWithoutTakingTheFront() throws {
        var m = Self.keptMachine()
        m.fronts["s1"] = Self.w2
        _ = try Self.handOver(&m, Self.w1, Self.w3)
        #expect(m.fronts["s1"] == Self.w2)
        // A session with no tab known in front keeps none.
        m.fronts["s1"] = nil
        _ = try Self.handOver(&m, Self.w3, TabKey("s1", .webview(4)))
        #expect(m.fronts["s1"] == nil)
    }

    struct HandedOverEvent: CustomTestStringConvertible, Sendable {
        var name: String
        var event: DevToolsEvent
        var session: CDPSessionID?
        var commands: [TabCommand]
        var testDescription: String { name }
    }

    /// Once W1's tab is W3's, what Chromium reports of it (by its DevTools session, its target
    /// id, its frame, a popup it opened before) is W3's.
    static let handedOverEvents: [HandedOverEvent] = [
        HandedOverEvent(name: "a same-document change (by DevTools session)",
                        event: .navigatedWithinDocument(frameId: "T1", url: "http://app.test/a#2"), session: s1,
                        commands: [.emit(.urlChanged(session: "s1", webview: .webview(3), url: "http://app.test/a#2"))]),
        HandedOverEvent(name: "a committed document (by DevTools session)",
                        event: .frameNavigated(frameId: "T1", isMainFrame: true, url: "http://app.test/c", unreachableUrl: nil), session: s1,
                        commands: [.emit(.urlChanged(session: "s1", webview: .webview(3), url: "http://app.test/c"))]),
        HandedOverEvent(name: "a dialog (by DevTools session)",
                        event: .dialogOpening(type: "alert", message: "Hi", defaultPrompt: "", url: "http://app.test/a"), session: s1,
                        commands: [.emit(.shell(.dialogOpened(session: "s1", webview: .webview(3),
                                                              Dialog(type: .alert, message: "Hi", defaultValue: "", url: "http://app.test/a"))))]),
        HandedOverEvent(name: "a renderer crash (by target id)",
                        event: .targetCrashed("T1", status: "killed", errorCode: 9), session: nil,
                        commands: [.dropSpare("T1"), .emit(.shell(.crashed(session: "s1", webview: .webview(3),
                                                                           reason: "the page's renderer process died (killed, code 9)")))]),
        HandedOverEvent(name: "a download (by frame id)",
                        event: .downloadWillBegin(guid: "G1", frameId: "T1", url: "http://app.test/f.zip", suggestedFilename: "f.zip"), session: nil,
                        commands: [.send(.cancelDownload(guid: "G1", context: "C1")),
                                   .emit(.shell(.download(session: "s1", webview: .webview(3), url: "http://app.test/f.zip", filename: "f.zip")))]),
        HandedOverEvent(name: "the url of a popup opened before the hand-over",
                        event: .targetInfoChanged(TargetInfo(targetId: "T7", type: "page", url: "http://app.test/pop", openerId: nil)), session: nil,
                        commands: [.call(.closeTarget("T7")),
                                   .emit(.navigationRequested(session: "s1", webview: .webview(3), request: NavigationRequest(url: "http://app.test/pop", kind: .windowOpen)))]),
        HandedOverEvent(name: "a popup opened after the hand-over",
                        event: .targetCreated(TargetInfo(targetId: "T6", type: "page", url: "http://app.test/pop2", openerId: "T1")), session: nil,
                        commands: [.call(.closeTarget("T6")),
                                   .emit(.navigationRequested(session: "s1", webview: .webview(3), request: NavigationRequest(url: "http://app.test/pop2", kind: .windowOpen)))]),
        HandedOverEvent(name: "a file chooser opened after the hand-over is W3's",
                        event: .fileChooserOpened(backendNodeId: 5, multiple: false), session: s1,
                        commands: [.ask(DevToolsCall(.domDescribeNode, ["backendNodeId": 5]), session: s1, timeout: 2, then: .fileChooser(w3, multiple: false))]),
    ]

    @Test(arguments: handedOverEvents) func eventsOfAHandedOverTabAreTheNewWebViews(_ row: HandedOverEvent) throws {
        var m = Self.keptMachine()
        _ = try Self.handOver(&m, Self.w1, Self.w3)
        #expect(m.event(row.event, session: row.session, now: 1) == row.commands)
    }

    struct Refused: CustomTestStringConvertible, Sendable {
        var name: String
        var old: TabKey
        var key: TabKey
        var testDescription: String { name }
    }

    @Test(arguments: [
        Refused(name: "the old web view has no tab", old: TabKey("s1", .webview(5)), key: w3),
        Refused(name: "the new web view already has a tab", old: w1, key: w2),
        Refused(name: "the two web views are of two sessions", old: w1, key: TabKey("s2", .webview(3))),
        Refused(name: "the old web view's session has its own web view of that id elsewhere", old: TabKey("s2", .webview(1)), key: w1),
        Refused(name: "a tab handed over to itself", old: w1, key: w1),
    ])
    func aHandOverThatCannotBeChangesNothing(_ row: Refused) {
        var m = Self.keptMachine()
        let before = Snapshot(m)
        let handed = m.handOver(row.old, to: row.key)
        #expect(handed == nil)
        #expect(Snapshot(m) == before)
    }

    @Test func aTabHandedOverOnceIsNotTheOldWebViewsAnyMore() throws {
        var m = Self.keptMachine()
        _ = try Self.handOver(&m, Self.w1, Self.w3)
        let after = Snapshot(m)
        // W1 has no tab now: a second hand-over of it is refused, and W3's tab closes as any.
        let again = m.handOver(Self.w1, to: TabKey("s1", .webview(4)))
        #expect(again == nil)
        #expect(Snapshot(m) == after)
        #expect(m.closeTab(Self.w1, spareRight: false) == [])
        let closed = try #require(m.tabs[Self.w3])
        #expect(m.closeTab(Self.w3, spareRight: false) == [.ask(.closeTarget("T1"), session: nil, then: .closeAnswered(closed, spareRight: false))])
        #expect(m.tabsByCDPSession[Self.s1] == nil && m.tabsByTarget["T1"] == nil && m.fronts["s1"] == nil)
    }
}
