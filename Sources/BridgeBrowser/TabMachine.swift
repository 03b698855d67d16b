import BridgeProtocol
import Foundation

/// The host's tabs as a pure state machine (swift-nio's style): what Chromium reports
/// (`event(_:session:now:)`) and what it answered to a call the machine asked for
/// (`answered(_:_:)`) go in; the DevTools calls to make and what the owner must hear come out,
/// as `[TabCommand]`, in order. `BrowserHost` (an actor) only performs them: it makes each call,
/// awaiting those the machine says to await before the next command, and feeds the answers of
/// `.ask` back in. No DevTools connection, clock or task here: `TabMachineTests` drives it by
/// table.
///
/// The host's work on tabs (open, close, bring forward) keeps its bookkeeping here too
/// (`register`, `closing(_:)`, `fronts`), so that the events of a tab find what the work did.
struct TabMachine {
    /// A web view's tab.
    struct Tab: Equatable {
        var session: String
        var webview: ItemID
        var targetId: TargetID
        var cdpSession: CDPSessionID
        /// The tab's own load (the first navigation, or a reload the host asked for) is let
        /// through the request interception; a POST override is applied to it.
        var ownLoadPending = true
        var ownLoadPost: NavigationRequest?
        /// A spare's injected client being added while its own load starts: that load's
        /// document request is let through once it is in place (failed when it could not be).
        /// (The reply itself is the host's: `BrowserHost.clients`.)
        var clientPending = false
        /// The host went back in the tab's history itself (`goBackInHistory`: a profile whose
        /// app has one web view that navigates in place): the next navigation the main frame
        /// starts is that traversal, its own load when it goes to another document (never
        /// handed over as a back again).
        var ownTraversalPending = false
        /// The last navigation type the main frame started (`historyDifferentDocument`, …).
        var lastNavigationType: String?
        /// The page asked for the navigation that starts next (`Page.frameRequestedNavigation`:
        /// a link, a form, a `location` change, a meta refresh). Chromium reports none for a
        /// navigation another DevTools client started (Playwright's `page.goto`).
        var pageRequestedNavigation = false
        /// Navigations of the page already handed to the owner when the page asked for them
        /// (`Page.frameRequestedNavigation`, see `decidedEarly`), oldest first: the document
        /// request each one reaches the interception with is aborted and reported no more, within
        /// `BrowserOptions.decidedNavigationSeconds` (`now` nanoseconds: when handed over).
        var decidedNavigations: [DecidedNavigation] = []
        /// The main frame's current navigation was started by another DevTools client, not by
        /// the page: the host loading a url into the web view, let through.
        var foreignLoad = false
        /// Once its page has loaded, the session gets a spare tab (when it has none): made
        /// after the load, its renderer does not compete with the page the user waits for.
        var spareAfterLoad = false
        /// The main frame committed Chromium's error page for this url (a load that failed: a
        /// refused port, a DNS failure): reported once that page has loaded, with its net error.
        var failedLoad: String?
        /// The root's first load is watched with the Network domain (enabled for it only, then
        /// disabled once its page has loaded): its document request (the main frame's) and,
        /// when that failed, Chromium's `errorText` (`net::ERR_CONNECTION_REFUSED`).
        var watchingNetwork = false
        var documentRequest: String?
        var netError: String?
        /// Its renderer's death was reported (`Target.targetCrashed` and `Inspector.targetCrashed`
        /// both say it): reported once, until the tab commits a document again (a reload). A
        /// second report handled after the owner's reload was asked for marked the reloaded page
        /// crashed again, for good.
        var rendererGone = false
        /// The identifier Chromium gave its injected client (`Page.addScriptToEvaluateOnNewDocument`):
        /// a tab handed to another web view (`handOver`) replaces it with that web view's.
        var scriptIdentifier: String?
        /// Its place among the session's tabs (they are opened in stack order: the highest is
        /// the right-most in the session's window).
        var order = 0

        init(session: String, webview: ItemID, targetId: TargetID, cdpSession: CDPSessionID) {
            self.session = session
            self.webview = webview
            self.targetId = targetId
            self.cdpSession = cdpSession
        }

        var key: TabKey { TabKey(session, webview) }
        /// A page's main frame has its target's id.
        var mainFrame: String { targetId.rawValue }
    }

    struct DecidedNavigation: Equatable {
        var url: String
        var at: UInt64
    }

    /// What the machine decides with (from `BrowserOptions`).
    struct Settings: Equatable {
        var decidesNavigationsEarly = true
        var decidedNavigationSeconds = 5.0
        var spareTabs = false
    }

    let settings: Settings
    /// session id → browser context id
    var contexts: [String: BrowserContextID] = [:]
    var tabs: [TabKey: Tab] = [:]
    var tabsByCDPSession: [CDPSessionID: TabKey] = [:]
    var tabsByTarget: [TargetID: TabKey] = [:]
    /// Popups (`window.open`) waiting for their url: target id → the opener's tab key.
    var popups: [TargetID: TabKey] = [:]
    /// Tabs asked to close and not destroyed yet: DevTools session → target. Chromium drops a
    /// close that lands while the tab is between two documents (say, during its page's own
    /// `history.back()` to the `about:blank` below it); such a tab is closed again once its
    /// document commits.
    var closing: [CDPSessionID: TargetID] = [:]
    /// Each session's tab last brought to the front by the host (opened, brought forward,
    /// pictured), when known: closing a tab that is not in front brings nothing forward.
    var fronts: [String: TabKey] = [:]
    /// Each web view's open file chooser: the `<input type=file>`'s backend node.
    var fileChoosers: [TabKey: Int64] = [:]
    /// The app files each session's tabs are served (BrowserHost+WebDir.swift).
    var webDirectories: [String: WebDirectory] = [:]
    /// Counts the tabs opened (`Tab.order`).
    var tabsOpened = 0
    /// When a web view's tab last opened or reported an event (`now` nanoseconds).
    var lastTabActivity: UInt64 = 0

    init(settings: Settings) {
        self.settings = settings
    }

    /// At most this many navigations decided early wait for their request per tab (a page
    /// that asks for more before any reaches the network: the oldest is forgotten, and its
    /// request, if it still comes, is decided again as any other).
    static let decidedNavigationsLimit = 4

    // MARK: the host's work

    /// The tab's state and its lookups, before its first call: its events are routed to it.
    mutating func register(_ tab: Tab, url: String, post: NavigationRequest?) {
        var tab = tab
        // Only network loads pass the request interception (a data: url does not).
        tab.ownLoadPending = Self.isNetwork(url)
        tab.ownLoadPost = post
        tab.spareAfterLoad = settings.spareTabs
        tabsOpened += 1
        tab.order = tabsOpened
        tabs[tab.key] = tab
        tabsByCDPSession[tab.cdpSession] = tab.key
        tabsByTarget[tab.targetId] = tab.key
    }

    /// The tab of `old` becomes `key`'s (a kept tab reused: `BrowserHost.reuseTab`): its
    /// events, its place in front and the popups it opened go with it; a file chooser its page
    /// had open does not. Nil (nothing changes) when `old` has no tab, `key` has one, or they
    /// are of two sessions.
    mutating func handOver(_ old: TabKey, to key: TabKey) -> Tab? {
        guard old.session == key.session, tabs[key] == nil, var tab = tabs.removeValue(forKey: old) else { return nil }
        tab.webview = key.webview
        tabs[key] = tab
        tabsByCDPSession[tab.cdpSession] = key
        tabsByTarget[tab.targetId] = key
        fileChoosers[old] = nil
        if fronts[key.session] == old { fronts[key.session] = key }
        for (target, opener) in popups where opener == old { popups[target] = key }
        return tab
    }

    /// The tab's state and lookups go (its events are a stray tab's from now on).
    @discardableResult
    mutating func forget(_ key: TabKey) -> Tab? {
        guard let tab = tabs.removeValue(forKey: key) else { return nil }
        fileChoosers[key] = nil
        tabsByCDPSession[tab.cdpSession] = nil
        tabsByTarget[tab.targetId] = nil
        return tab
    }

    /// The tab of `key` is being closed: forgotten, and its end awaited (`closing`). Returns it,
    /// and whether it was the one in front.
    mutating func startClosing(_ key: TabKey) -> (tab: Tab, wasInFront: Bool)? {
        guard let tab = forget(key) else { return nil }
        closing[tab.cdpSession] = tab.targetId
        let inFront = fronts[key.session] == key
        if inFront { fronts[key.session] = nil }
        return (tab, inFront)
    }

    /// The session's top tab (the last opened of those it has).
    func topTab(session: String) -> Tab? {
        tabs.values.filter { $0.session == session }.max { $0.order < $1.order }
    }

    /// The host closes the tab of `key` (`BrowserHost.closeTab`): it is forgotten at once, its
    /// end awaited (`closing`), and Chromium asked to close it; once that is answered
    /// (`TabFollowUp.closeAnswered`), what comes forward (`frontAfterClose`) and the close sent
    /// again until Chromium reports the tab destroyed. `spareRight`: the session has a spare, or
    /// one is being made. Nothing when the web view has no tab.
    mutating func closeTab(_ key: TabKey, spareRight: Bool) -> [TabCommand] {
        guard let (tab, _) = startClosing(key) else { return [] }
        return [.ask(.closeTarget(tab.targetId), session: nil, then: .closeAnswered(tab, spareRight: spareRight))]
    }

    /// Chromium answered the close of `closed`: the tab to bring forward, if any. Closing the
    /// tab in front brings its right neighbour forward, else its left one: the web view below,
    /// unless the session's spare sits right of it (`spareRight`: it had one, or one was being
    /// made, when the close was sent). Then the session's top tab (a web view opened meanwhile,
    /// a back then a push at once or a router's replace, is the top now, and in front) is brought
    /// forward, as it would be without a spare: when it is below the closed one and no tab came
    /// to the front while the close was answered (closing a tab behind brings nothing forward,
    /// in Chromium as here).
    mutating func frontAfterClose(_ closed: Tab, spareRight: Bool) -> Tab? {
        guard spareRight, let below = topTab(session: closed.session), below.order < closed.order,
              fronts[closed.session] == nil else { return nil }
        fronts[closed.session] = below.key
        return below
    }

    /// Everything of the browser that went away.
    mutating func reset() {
        contexts.removeAll()
        tabs.removeAll()
        tabsByCDPSession.removeAll()
        tabsByTarget.removeAll()
        popups.removeAll()
        closing.removeAll()
        fronts.removeAll()
    }

    static func isNetwork(_ url: String) -> Bool { url.hasPrefix("http:") || url.hasPrefix("https:") }

    /// A navigation the page asks for (`Page.frameRequestedNavigation` of the main frame, an
    /// http(s) url) is handed to the owner at once when its document request is sure to
    /// follow as a plain GET in the same tab: a link, a GET form, a `location` assignment, a
    /// refresh, with no fragment (a `#` may be a same-document change, which is never
    /// stopped). A POST form (its body is only in the request), a reload, a new tab or window, a
    /// download and a url with a fragment go the usual way: decided at their paused request.
    static func decidedEarly(url: String, reason: String?, disposition: String?) -> Bool {
        guard disposition == nil || disposition == "currentTab", !url.contains("#") else { return false }
        switch reason {
        case "anchorClick", "formSubmissionGet", "scriptInitiated", "metaTagRefresh", "httpHeaderRefresh": return true
        default: return false
        }
    }
}

/// What the machine asks of the host, in order.
enum TabCommand: Equatable {
    /// A call, awaited before the next command; its answer and its failure are not read.
    case call(DevToolsCall, session: CDPSessionID? = nil)
    /// A call sent and not awaited.
    case send(DevToolsCall, session: CDPSessionID? = nil)
    /// A call whose answer the machine reads: awaited, then fed back (`answered(then, result)`)
    /// and the commands that returns performed, before the next command. `timeout`: its own,
    /// instead of the usual one.
    case ask(DevToolsCall, session: CDPSessionID?, timeout: Double? = nil, then: TabFollowUp)
    /// What the owner must hear.
    case emit(BrowserEvent)
    /// A line for the owner's debug log.
    case debug(String)
    /// The tab's own load is let through (continued, or answered from the web directory): when
    /// the browser refuses, the owner hears the load failed. After the tab's injected client
    /// when it is being added (`afterClient`), without holding up later events.
    case letThrough(LetThrough)
    /// A paused request answered from the session's web directory (`Fetch.fulfillRequest`); when
    /// that fails, a warning, and the request is failed.
    case serve(requestId: String, url: String, WebDirectory, session: CDPSessionID, label: String)
    /// The Network domain is turned off in the tab, not awaited (a failure is a debug line).
    case disableNetwork(CDPSessionID, label: String)
    /// The session's page has loaded: its spare tab, or the context ahead, may be made now.
    case spareAfterLoad(session: String)
    /// A target Chromium reports gone or crashed: if it was a spare (or the context ahead's),
    /// it is dropped.
    case dropSpare(TargetID)
    /// The close of a tab is sent again now and then (`BrowserHost.closeRetries` times at
    /// most) while the tab is still `closing` (a dropped close is also sent again as soon as the
    /// tab commits its next document).
    case retryClose(TargetID, CDPSessionID)
}

struct LetThrough: Equatable {
    var key: TabKey
    var cdpSession: CDPSessionID
    var requestId: String
    var url: String
    /// `Fetch.continueRequest`'s params (a POST override applied).
    var continued: JSONObject
    var served: WebDirectory?
    var afterClient: Bool
}

/// What an `.ask`'s answer is for.
enum TabFollowUp: Equatable {
    /// A stopped navigation's POST body: the request is aborted and the owner hears it.
    case postData(StoppedNavigation)
    /// The error page's net error, for the load that failed.
    case errorPage(TabKey, url: String)
    /// The file chooser's `accept`.
    case fileChooser(TabKey, multiple: Bool)
    /// The close of a tab (`closeTab`), answered or failed.
    case closeAnswered(TabMachine.Tab, spareRight: Bool)
}

/// A document request of a tab's main frame, stopped: the owner decides where it goes.
struct StoppedNavigation: Equatable {
    var key: TabKey
    var cdpSession: CDPSessionID
    var requestId: String
    var url: String
    var method: String
    var headers: [String: String]
    var postData: [UInt8]?
    /// A traversal of the page's history: a back of the host.
    var historyBack: Bool
}
