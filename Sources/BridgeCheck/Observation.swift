/// What the checker saw while it drove a browser session, in order. The runner builds this log
/// from the controller's events and replies and from what the page client reported (the page's
/// own clock for page-side times: a rule compares page times with page times only, and
/// controller times with controller times).
public struct Observation: Equatable, Sendable {
    /// Milliseconds since the check started (controller clock), or on the page's clock for the
    /// page-side kinds marked so below.
    public var t: Double
    /// The web view it concerns ("" when none).
    public var webview: String
    public var kind: Kind
    /// The index of the step running when it was seen (-1: before the first step).
    public var step: Int

    public init(t: Double, webview: String = "", step: Int = -1, _ kind: Kind) {
        self.t = t
        self.webview = webview
        self.kind = kind
        self.step = step
    }

    public enum Kind: Equatable, Sendable {
        // Page side (page clock).
        /// The page sent `pwa-navigate` (`url` as sent).
        case navigateSent(url: String)
        /// The reply to that `pwa-navigate` reached the page.
        case navigateReplied(placeholder: String)
        /// The page's DOM changed (`count` mutation records at that moment).
        case domChanged(count: Int)
        /// The page changed its history: `push` (pushState, or a same-document URL change that
        /// adds an entry), `replace` (replaceState), `pop` (popstate, history traversal).
        case history(how: HistoryChange, url: String)
        case consoleError(message: String)
        case exception(message: String)
        // Controller side (controller clock).
        /// The stack after a change, in the seed's notation, and what caused it.
        case stack(rendering: String, cause: String)
        case foregroundShown(kind: String)
        case foregroundRemoved(reason: String, latencyMs: Int)
        /// Every `pwa-rendered` the page sent.
        case rendered(late: Bool, removed: Bool)
        /// A back of the host: its action and, for a swap, the placeholder discarded and its url.
        case back(action: String, placeholder: String?, url: String?)
        /// A new web view opened for a classic navigation (hotwire-native: or a modal's web
        /// view, `from` the url of the main stack's top it was presented over).
        case webviewOpened(url: String, from: String? = nil)
        /// hotwire-native: a native screen was pushed (the web view is its item, `N1`…): its url,
        /// its screen (the path configuration's `view_controller`, Android's `uri`) and the url of the item below
        /// it in its stack.
        case nativePushed(url: String, screen: String?, from: String?)
        /// The routing configuration sent a link outside the app (`external.open`).
        case externalOpen(url: String)
        /// A web view's page could not load (`webview.failed`): the url and the browser's reason.
        case loadFailed(url: String, reason: String)
        /// The page's location at a moment the checker asked (after a render settled).
        case location(url: String, title: String)
        /// A step began (`description` as the step reads).
        case step(description: String)
        // Hotwire Native sessions (`--profile hotwire-native`), controller side.
        /// A Turbo adapter message (`hotwire.message`): its name and the fields the rules read
        /// (the visit's `identifier`, `location`, `action`, a failure's `statusCode`, an
        /// `errorRaised`'s `error`).
        case turbo(name: String, identifier: String?, location: String?, action: String?, statusCode: Int?, error: String?)
        /// A bridge component's message (`bridge.message`): `ignored` with the daemon's reason
        /// when native would drop it (its `data.metadata.url` is not the web view's url).
        case bridgeMessage(component: String, event: String, url: String?, ignored: Bool, reason: String?)
        // Page side (page clock).
        /// The page began loading another document of the app (a navigation that was not a
        /// Turbo visit: `data-turbo="false"`, `location.href = …`, a form Turbo did not take):
        /// the url and what began it (`a#plain[data-turbo=false]`, `script`).
        case documentLoad(url: String, via: String)
        // What became of a page (controller side).
        /// A page stopped answering the checker: a call to it (an evaluate, a click, a
        /// screenshot) got no answer within its time, the daemon answered `page-unresponsive`,
        /// or said `webview.unresponsive`. `how` says which; `url` is where the page was.
        case unresponsive(url: String, how: String)
        /// A web view's renderer died (`webview.crashed`, or a call answered `webview-crashed`).
        case crashed(url: String, reason: String)
        /// A JavaScript dialog opened in the page (`webview.dialog`): `alert`, `confirm`,
        /// `prompt` or `beforeunload`, its message and the page's url.
        case dialog(type: String, message: String, url: String)
        /// A dialog was answered (`webview.dialog.closed`): accepted or dismissed, and by whom
        /// (`policy`: `--dialogs`; `controller`; `timeout`).
        case dialogClosed(type: String, accepted: Bool, by: String)
        /// The session hit one of its limits (`session.limit`): `tabs` when a page opened more
        /// web views than the session may have live (a navigation or `window.open` loop).
        case limit(name: String, max: Int, url: String)
        // Capacitor sessions (`--profile capacitor`), controller side.
        /// A plugin call the daemon heard of (`capacitor.call`). `callbackId` nil and
        /// `unavailable`: the page reported a call its runtime refused, the plugin not being in
        /// the session (`"X" plugin is not implemented`); with a `callbackId`, `unavailable`
        /// means native has no answer of its own for it (it fails with `UNAVAILABLE`).
        case capacitorCall(plugin: String, method: String, callbackId: String?, unavailable: Bool)
        /// Native's answer to a call (`capacitor.result`): a success, or an error's message and code.
        case capacitorResult(plugin: String, method: String, callbackId: String, success: Bool, error: String?, code: String?)
        /// The session ended (`session.closed`) and why: `exit-app` for `App.exitApp`.
        case sessionEnded(reason: String)
        /// What the top page showed once the app was still: its url and a digest of its visible
        /// text (the same screen gives the same digest).
        case screen(url: String, digest: String)
        /// A deep link the checker sent (`navigation.openUrl`): whether a listener of the app got
        /// it (`appUrlOpen`), else native keeps it for the first one.
        case deepLink(url: String, delivered: Bool)
    }
}

public enum HistoryChange: String, Sendable {
    case push, replace, pop
}
