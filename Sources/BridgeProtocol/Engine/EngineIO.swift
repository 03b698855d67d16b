/// Everything that can happen to a session's navigation state.
///
/// Inputs carry every value the engine needs (tokens, the requester, single-tab mode), so a
/// recorded list of `(input, time)` pairs replays to exactly the same states and effects.
public enum SessionInput: Equatable, Sendable {
    /// Creates the root web view `W1`. Only valid on a new engine.
    case createRoot(url: String, token: String, connected: Bool)
    /// A page now speaks for this web view (a `hello` that created or claimed it). A non-nil
    /// `url` replaces the web view's url.
    case pageConnected(ItemID, url: String?)
    /// The page of this web view went away; the web view stays (`connected:false`).
    case pageDisconnected(ItemID)
    /// The page announces a PWA navigation (it awaits the reply before changing its DOM).
    /// `placeholderURL`, when given, is the url the new placeholder keeps instead of the web
    /// view's current one: the browser's report of this very navigation overtook it and already
    /// moved the web view's url (Bridge+Host.swift, `urlChanged`).
    case pwaNavigate(from: ItemID, url: String?, title: String?, placeholderURL: String? = nil)
    /// The page finished rendering its current state.
    case pwaRendered(from: ItemID)
    /// Informational: the page's url changed without a new history step.
    case pwaNavigated(from: ItemID, url: String)
    /// Pushes a classic web view for `url`. `requester` is the page that asked (its `navigate`
    /// event), nil for a controller. In single-tab mode the browser tab follows the new top.
    case navigateToUrl(url: String, token: String, requester: ItemID?, singleTab: Bool)
    /// Pushes a native screen for `url`.
    case pushNative(url: String, requester: ItemID?)
    /// The back algorithm. `requester` is the page that asked, nil for a controller.
    case back(requester: ItemID?, singleTab: Bool)
    /// Pops everything above the bottom web view (and its placeholders).
    case popToRoot(singleTab: Bool)
    /// A timer the engine scheduled has fired.
    case timerFired(TimerToken)
    /// The session ends: every page is told and closed.
    case close(reason: String)
    /// Takes `stack` as the new stack (a router action changed it: a tab selected, a modal
    /// presented, items pushed, popped or replaced). `removed` are the ids the action took out
    /// of the session altogether (pages of removed web views are told and closed); web views
    /// that only moved out of the active stack keep their pages. The new items' ids were drawn
    /// from this engine's `ids` (the router draws from the same allocator).
    case adopt(stack: [StackItem], removed: [ItemID], singleTab: Bool)
}

/// Errors leave the state exactly as it was.
public enum EngineError: Error, Equatable, Sendable, CustomStringConvertible {
    case unknownWebview(ItemID)
    case conflict(String)
    case limitExceeded(String)
    /// A timer that no longer belongs to the foreground that is up (or none is up).
    case staleTimer(TimerToken)
    case closed
    case invalid(String)

    /// The protocol's error code.
    public var code: String {
        switch self {
        case .unknownWebview: "unknown-webview"
        case .conflict: "conflict"
        case .limitExceeded: "limit-exceeded"
        case .staleTimer: "conflict"
        case .closed: "unknown-session"
        case .invalid: "invalid-params"
        }
    }

    public var message: String {
        switch self {
        case .unknownWebview(let id): "web view \(id) is not on the stack"
        case .conflict(let m): m
        case .limitExceeded(let m): m
        case .staleTimer(let t): "timer \(t) is stale"
        case .closed: "the session is closed"
        case .invalid(let m): m
        }
    }

    public var description: String { "\(code): \(message)" }
}

/// What the back algorithm did.
public enum BackAction: String, Sendable, Equatable {
    case swap, pop, none
}

/// The successful answer to the input, for whoever asked.
public enum SessionReply: Equatable, Sendable {
    case created(webview: ItemID)
    case connected(webview: ItemID)
    case disconnected
    case pwaNavigate(placeholder: ItemID)
    case pwaRendered(removed: Bool, latencyMs: Int?)
    case pwaNavigated
    case navigateToUrl(webview: ItemID, token: String)
    case pushNative(screen: ItemID)
    case back(action: BackAction, removed: [ItemID])
    case popToRoot(removed: [ItemID])
    case timerHandled
    case closed
    case adopted
}

/// Where a page is sent to load another web view (single-tab mode).
public struct LoadTarget: Equatable, Sendable {
    public let webview: ItemID
    public let url: String
    public let token: String

    public init(webview: ItemID, url: String, token: String) {
        self.webview = webview
        self.url = url
        self.token = token
    }
}

/// Events the daemon sends to a page.
public enum PageEvent: Equatable, Sendable {
    /// Go back one step in your own history (or load `url` if you cannot).
    case back(placeholder: ItemID, url: String)
    /// Your web view is gone; `load` says where the one browser tab goes next (single-tab mode).
    case closed(reason: String, load: LoadTarget?)
    /// Go to another web view (single-tab mode): the page leaves and claims `target`.
    case load(LoadTarget)
}

/// What subscribed controllers are told.
public enum Observation: Equatable, Sendable {
    case stackChanged
    case foregroundShown(webview: ItemID, kind: ForegroundKind, timeoutMs: Int)
    case foregroundRemoved(webview: ItemID, reason: RemovalReason, latencyMs: Int)
    case pwaRendered(webview: ItemID, removed: Bool, late: Bool)
    case pwaNavigated(webview: ItemID, url: String)
    case webviewOpen(webview: ItemID, url: String, token: String)
    case webviewClosed(webview: ItemID)
    case pageConnected(webview: ItemID)
    case pageDisconnected(webview: ItemID)
}

/// What the engine asks the host to do after a successful input, in order, once the reply
/// (returned by `handle`) is written.
public enum SessionEffect: Equatable, Sendable {
    case sendToPage(ItemID, PageEvent)
    /// Close the connection of this web view's page (after what was sent to it), with `code`.
    case closePage(ItemID, code: Int)
    case scheduleTimer(TimerToken, afterMs: Int)
    case cancelTimer(TimerToken)
    case observe(Observation)
}
