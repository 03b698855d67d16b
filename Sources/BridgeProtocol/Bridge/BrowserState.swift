/// A browser session's browser side (Bridge+Host.swift): what the Bridge keeps of its browser.

/// The browser side of one session: one reference in the session (a plain session's `browser`
/// is a nil pointer, tested per message), its fields (`BrowserFields`) out of line, copied on
/// write. A field is read and written as a member (`s.browser!.tabbed.insert(w)`): the change
/// is made on a copy of the field and stored back (the session's only reference: no copy of the
/// other fields).
@dynamicMemberLookup
struct BrowserState: Equatable {
    typealias Snapshot = BrowserFields.Snapshot
    typealias Failure = BrowserFields.Failure
    typealias Unannounced = BrowserFields.Unannounced
    typealias URLReport = BrowserFields.URLReport
    static var overtakeWindow: Int64 { BrowserFields.overtakeWindow }

    private final class Box {
        var fields: BrowserFields
        init(_ fields: BrowserFields) { self.fields = fields }
    }
    private var box = Box(BrowserFields())

    init() {}

    subscript<T>(dynamicMember field: WritableKeyPath<BrowserFields, T>) -> T {
        get { box.fields[keyPath: field] }
        set {
            if !isKnownUniquelyReferenced(&box) { box = Box(box.fields) }
            box.fields[keyPath: field] = newValue
        }
    }

    func snapshot(of placeholder: ItemID) -> [UInt8]? { box.fields.snapshot(of: placeholder) }

    static func == (a: BrowserState, b: BrowserState) -> Bool { a.box === b.box || a.box.fields == b.box.fields }
}

/// The fields of a session's `BrowserState`.
struct BrowserFields: Equatable {
    struct Snapshot: Equatable {
        var placeholder: ItemID
        var jpeg: [UInt8]
    }
    struct Failure: Equatable {
        var webview: ItemID
        var url: String
        var reason: String
    }
    /// Snapshots of the placeholders on the stack, oldest first, within the byte budget.
    var snapshots: [Snapshot] = []
    /// The image of the placeholder a back discarded last (shown over the tab it uncovers).
    var discarded: [UInt8]?
    /// POSTs the browser stopped, by url, until the web view they became opens its tab.
    var posts: [String: NavigationStop] = [:]
    /// Navigations stopped in a tab before its page connected, by web view (the latest).
    var waitingNavigations: [ItemID: NavigationStop] = [:]
    /// Web views whose tab could not open or whose page could not load, oldest first.
    var failed: [Failure] = []
    /// The browser's ids of the web views' tabs and of the session's context (`session.get`,
    /// `webview.open`): a DevTools client (Playwright, Puppeteer) maps its pages to web views.
    var targetIds: [ItemID: String] = [:]
    var browserContextId: String?
    /// A web view pushed whose tab is not open yet: its `webview.open` goes out once it is,
    /// with the tab's target id.
    struct Unannounced: Equatable {
        var url: String
        var token: String
    }
    var unannounced: [ItemID: Unannounced] = [:]
    /// The last url change the browser reported and the Bridge applied to a classic web view,
    /// with the url it replaced and when. A page's `pwa-navigate` and the browser's report of the
    /// `history.pushState` that follows it travel on different connections, and the report can
    /// arrive first: the placeholder must then keep the url from before it (`pwaNavigate`).
    struct URLReport: Equatable {
        var webview: ItemID
        var before: String
        var after: String
        var at: Int64
    }
    var lastURLReport: URLReport?
    /// A routed session's web view whose tab the Bridge last had in front: when the active
    /// stack's top web view is another one, its tab is brought to the front (or opened, if it
    /// never had one) (`browserKeepFront`).
    var front: ItemID?
    /// Web views whose tab was asked for (`HostWork.openTab`) and not closed since.
    var tabbed: Set<ItemID> = []
    /// Dialogs, crashes, choosers, the tab limit (Bridge+Shell.swift).
    var shell = ShellState()
    /// How long after the browser's report of a url change a `pwa-navigate` to that same url is
    /// taken as the announcement the report overtook (microseconds). Both leave the page within
    /// a millisecond; the window is wide so that a loaded machine does not matter, and bounded so
    /// that a page announcing, much later, the url it already moved to is taken at its word.
    static let overtakeWindow: Int64 = 5_000_000

    func snapshot(of placeholder: ItemID) -> [UInt8]? {
        snapshots.first { $0.placeholder == placeholder }?.jpeg
    }
}
