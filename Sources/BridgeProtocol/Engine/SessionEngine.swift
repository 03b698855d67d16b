/// Limits and timings of one session's engine.
public struct EngineConfiguration: Equatable, Sendable {
    /// How long a foreground stays up without `pwa-rendered` (the fallback timer).
    public var foregroundTimeoutMs: Int
    /// The most items a stack may hold; pushes beyond it are `limit-exceeded`.
    public var maxStackDepth: Int

    public init(foregroundTimeoutMs: Int = 1000, maxStackDepth: Int = 256) {
        self.foregroundTimeoutMs = foregroundTimeoutMs
        self.maxStackDepth = maxStackDepth
    }
}

/// The navigation state of one session and every transition of the contract (sections 4–5),
/// as a value type: no I/O, no clock, no randomness of its own.
///
/// `handle(_:at:into:)` takes an input and the current time (microseconds of any monotonic
/// clock), returns the reply (or the error, the state untouched) and appends the effects for the
/// host to perform after writing the reply.
public struct SessionEngine: Equatable, Sendable {
    public let configuration: EngineConfiguration
    /// Bottom first.
    public private(set) var stack: [StackItem] = []
    public private(set) var foreground: Foreground?
    public private(set) var isClosed = false
    /// Counts every change of an item or of the list, so a host can cache renderings.
    public private(set) var version: UInt64 = 0

    /// The session's item ids; a router drawing ids for this session draws from this value.
    public internal(set) var itemIDs = ItemIDAllocator()
    private var nextTimer: UInt64 = 1

    public init(configuration: EngineConfiguration = EngineConfiguration()) {
        self.configuration = configuration
    }

    // MARK: Queries

    public var top: StackItem? { stack.last }

    public var canGoBack: Bool { stack.count > 1 }

    public func index(of id: ItemID) -> Int? {
        stack.lastIndex { $0.id == id }
    }

    public func webView(_ id: ItemID) -> WebView? {
        guard id.kind == .webview, let i = index(of: id) else { return nil }
        return stack[i].webview
    }

    /// The web views of the stack, bottom first.
    public var webViews: [WebView] { stack.compactMap(\.webview) }

    // MARK: Transitions

    /// Convenience form of `handle(_:at:into:)`: the answer and the effects.
    public mutating func handle(_ input: SessionInput, at now: Int64) -> (reply: Result<SessionReply, EngineError>, effects: [SessionEffect]) {
        var effects: [SessionEffect] = []
        let reply = handle(input, at: now, into: &effects)
        return (reply, effects)
    }

    /// Applies `input` at time `now` (microseconds). Returns the answer for whoever asked: the
    /// reply, or the error with the state untouched and nothing appended. On success the
    /// effects (to perform in order, after the reply is written) are appended to `effects`.
    @discardableResult
    public mutating func handle(_ input: SessionInput, at now: Int64, into effects: inout [SessionEffect]) -> Result<SessionReply, EngineError> {
        do throws(EngineError) {
            return .success(try apply(input, at: now, into: &effects))
        } catch {
            return .failure(error)
        }
    }

    private mutating func apply(_ input: SessionInput, at now: Int64, into effects: inout [SessionEffect]) throws(EngineError) -> SessionReply {
        if isClosed {
            throw .closed
        }
        switch input {
        case .createRoot(let url, let token, let connected):
            return try createRoot(url: url, token: token, connected: connected, into: &effects)
        case .pageConnected(let id, let url):
            return try pageConnected(id, url: url, into: &effects)
        case .pageDisconnected(let id):
            return try pageDisconnected(id, now: now, into: &effects)
        case .pwaNavigate(let id, let url, let title, let placeholderURL):
            return try pwaNavigate(from: id, url: url, title: title, placeholderURL: placeholderURL, now: now, into: &effects)
        case .pwaRendered(let id):
            return try pwaRendered(from: id, now: now, into: &effects)
        case .pwaNavigated(let id, let url):
            return try pwaNavigated(from: id, url: url, into: &effects)
        case .navigateToUrl(let url, let token, let requester, let singleTab):
            return try navigateToUrl(url: url, token: token, requester: requester, singleTab: singleTab, now: now, into: &effects)
        case .pushNative(let url, let requester):
            return try pushNative(url: url, requester: requester, now: now, into: &effects)
        case .back(let requester, let singleTab):
            return try back(requester: requester, singleTab: singleTab, now: now, into: &effects)
        case .popToRoot(let singleTab):
            return try popToRoot(singleTab: singleTab, now: now, into: &effects)
        case .timerFired(let token):
            return try timerFired(token, now: now, into: &effects)
        case .close(let reason):
            return try close(reason: reason, now: now, into: &effects)
        case .adopt(let newStack, let removed, let singleTab):
            return try adopt(newStack, removed: removed, singleTab: singleTab, now: now, into: &effects)
        }
    }

    // MARK: - Pages

    private mutating func createRoot(url: String, token: String, connected: Bool, into effects: inout [SessionEffect]) throws(EngineError) -> SessionReply {
        guard stack.isEmpty, itemIDs.nextWebview == 1 else {
            throw .conflict("the session already has a root web view")
        }
        let id = itemIDs.next(.webview)
        stack.append(.webview(WebView(id: id, mode: .classic, url: url, connected: connected, token: token)))
        version &+= 1
        let reply = SessionReply.created(webview: id)
        effects.append(.observe(.stackChanged))
        if connected { effects.append(.observe(.pageConnected(webview: id))) }
        return reply
    }

    private mutating func pageConnected(_ id: ItemID, url: String?, into effects: inout [SessionEffect]) throws(EngineError) -> SessionReply {
        guard let i = webViewIndex(id) else {
            throw .unknownWebview(id)
        }
        updateWebView(at: i) { w in
            w.connected = true
            if let url { w.url = url }
        }
        let reply = SessionReply.connected(webview: id)
        effects.append(.observe(.pageConnected(webview: id)))
        return reply
    }

    private mutating func pageDisconnected(_ id: ItemID, now: Int64, into effects: inout [SessionEffect]) throws(EngineError) -> SessionReply {
        guard let i = webViewIndex(id) else {
            throw .unknownWebview(id)
        }
        updateWebView(at: i) { $0.connected = false }
        let reply = SessionReply.disconnected
        effects.append(.observe(.pageDisconnected(webview: id)))
        if foreground?.webview == id {
            removeForeground(.closed, now: now, into: &effects)
        }
        return reply
    }

    private mutating func pwaNavigate(from id: ItemID, url: String?, title: String?, placeholderURL: String?, now: Int64, into effects: inout [SessionEffect]) throws(EngineError) -> SessionReply {
        guard let i = webViewIndex(id) else {
            throw .unknownWebview(id)
        }
        guard i == stack.count - 1 else {
            throw .conflict("pwa-navigate from \(id), which is not on top (top is \(stack[stack.count - 1].id))")
        }
        guard stack.count < configuration.maxStackDepth else {
            throw .limitExceeded("the stack holds \(stack.count) items, the most --max-stack-depth allows")
        }
        // The web view is on top: move it off the stack rather than copy it.
        guard case .webview(var w) = stack.removeLast() else { preconditionFailure("\(id) is not a web view") }
        let placeholder = Placeholder(id: itemIDs.next(.placeholder), of: id, url: placeholderURL ?? w.url, title: w.title)
        if let url { w.url = url }
        if let title { w.title = title }
        w.mode = .pwa
        stack.append(.placeholder(placeholder))
        stack.append(.webview(w))
        version &+= 1
        let reply = SessionReply.pwaNavigate(placeholder: placeholder.id)
        effects.append(.observe(.stackChanged))
        showForeground(over: id, kind: .blank, now: now, into: &effects)
        return reply
    }

    private mutating func pwaRendered(from id: ItemID, now: Int64, into effects: inout [SessionEffect]) throws(EngineError) -> SessionReply {
        guard let i = webViewIndex(id) else {
            throw .unknownWebview(id)
        }
        if let fg = foreground, fg.webview == id {
            let latency = Self.milliseconds(now - fg.shownAt)
            let reply = SessionReply.pwaRendered(removed: true, latencyMs: latency)
            effects.append(.observe(.pwaRendered(webview: id, removed: true, late: false)))
            removeForeground(.rendered, now: now, into: &effects)
            return reply
        }
        // Late: this web view's last foreground timed out and none is up now (contract §6); it
        // stays late for every `pwa-rendered` until a new foreground is shown over it.
        let late = stack[i].webViewLastRemoval == .timeout
        let reply = SessionReply.pwaRendered(removed: false, latencyMs: nil)
        effects.append(.observe(.pwaRendered(webview: id, removed: false, late: late)))
        return reply
    }

    private mutating func pwaNavigated(from id: ItemID, url: String, into effects: inout [SessionEffect]) throws(EngineError) -> SessionReply {
        guard let i = webViewIndex(id) else {
            throw .unknownWebview(id)
        }
        updateWebView(at: i) { $0.url = url }
        let reply = SessionReply.pwaNavigated
        effects.append(.observe(.pwaNavigated(webview: id, url: url)))
        return reply
    }

    // MARK: - Pushes

    /// Checks that a page asking for a push is on top, and that the stack has room.
    private func checkPush(requester: ItemID?, what: String) -> EngineError? {
        if let requester {
            guard webViewIndex(requester) != nil else { return .unknownWebview(requester) }
            guard topID == requester else {
                return .conflict("\(what) from \(requester), which is covered (top is \(stack.last.map { "\($0.id)" } ?? "nothing"))")
            }
        }
        guard stack.count < configuration.maxStackDepth else {
            return .limitExceeded("the stack holds \(stack.count) items, the most --max-stack-depth allows")
        }
        return nil
    }

    private mutating func navigateToUrl(url: String, token: String, requester: ItemID?, singleTab: Bool, now: Int64, into effects: inout [SessionEffect]) throws(EngineError) -> SessionReply {
        if let error = checkPush(requester: requester, what: "navigate") {
            throw error
        }
        let previousTop = topID.flatMap { stack[stack.count - 1].webViewIsConnected ? $0 : nil }
        let id = itemIDs.next(.webview)
        stack.append(.webview(WebView(id: id, mode: .classic, url: url, connected: false, token: token)))
        version &+= 1
        let reply = SessionReply.navigateToUrl(webview: id, token: token)
        if foreground != nil { removeForeground(.superseded, now: now, into: &effects) }
        effects.append(.observe(.stackChanged))
        effects.append(.observe(.webviewOpen(webview: id, url: url, token: token)))
        guard singleTab else { return reply }
        // The one browser tab follows the top of the stack: the page that was on top leaves.
        let leaving: ItemID? = requester ?? previousTop
        if let leaving, let i = webViewIndex(leaving), stack[i].webViewIsConnected {
            effects.append(.sendToPage(leaving, .load(LoadTarget(webview: id, url: url, token: token))))
            effects.append(.closePage(leaving, code: 1000))
            updateWebView(at: i) { $0.connected = false }
            effects.append(.observe(.pageDisconnected(webview: leaving)))
        }
        return reply
    }

    private mutating func pushNative(url: String, requester: ItemID?, now: Int64, into effects: inout [SessionEffect]) throws(EngineError) -> SessionReply {
        if let error = checkPush(requester: requester, what: "a native screen") {
            throw error
        }
        let id = itemIDs.next(.native)
        stack.append(.native(NativeScreen(id: id, url: url)))
        version &+= 1
        let reply = SessionReply.pushNative(screen: id)
        if foreground != nil { removeForeground(.superseded, now: now, into: &effects) }
        effects.append(.observe(.stackChanged))
        return reply
    }

    // MARK: - Back

    private mutating func back(requester: ItemID?, singleTab: Bool, now: Int64, into effects: inout [SessionEffect]) throws(EngineError) -> SessionReply {
        if let requester {
            guard webViewIndex(requester) != nil else {
                throw .unknownWebview(requester)
            }
            guard topID == requester else {
                throw .conflict("back from \(requester), which is not on top (top is \(stack.last.map { "\($0.id)" } ?? "nothing"))")
            }
        }
        guard stack.count > 1 else {
            let reply = SessionReply.back(action: .none, removed: [])
            return reply
        }
        if kind(at: stack.count - 1) == .webview, kind(at: stack.count - 2) == .placeholder {
            // Swap: the web view goes back one step in its own history; the placeholder's image
            // covers it until the PWA has rendered that step. (The placeholder is moved off the
            // stack and the web view changed in place, neither is copied.)
            let below = stack.remove(at: stack.count - 2)
            guard case .placeholder(let p) = consume below else { preconditionFailure("the kind was just checked") }
            let top = stack.count - 1
            let id = stack[top].id
            _ = stack[top].modifyWebView { w in
                w.url = p.url
                w.title = p.title
            }
            version &+= 1
            let reply = SessionReply.back(action: .swap, removed: [p.id])
            effects.append(.observe(.stackChanged))
            effects.append(.sendToPage(id, .back(placeholder: p.id, url: p.url)))
            showForeground(over: id, kind: .placeholder, now: now, into: &effects)
            return reply
        }
        let top = stack.removeLast()
        version &+= 1
        let reply = SessionReply.back(action: .pop, removed: [top.id])
        discard(CollectionOfOne(top), singleTab: singleTab, now: now, into: &effects)
        return reply
    }

    private mutating func popToRoot(singleTab: Bool, now: Int64, into effects: inout [SessionEffect]) throws(EngineError) -> SessionReply {
        let rootIndex = stack.firstIndex(where: \.isWebView) ?? 0
        guard rootIndex + 1 < stack.count else {
            let reply = SessionReply.popToRoot(removed: [])
            return reply
        }
        let removed = Array(stack[(rootIndex + 1)...].reversed())
        stack.removeSubrange((rootIndex + 1)...)
        version &+= 1
        let reply = SessionReply.popToRoot(removed: removed.map(\.id))
        discard(removed, singleTab: singleTab, now: now, into: &effects)
        return reply
    }

    /// Effects of items just taken off the stack, top first: foregrounds closed, pages told and
    /// closed. In single-tab mode the topmost removed page (the one showing the tab) is sent to
    /// the uncovered web view when no page shows it.
    private mutating func discard(_ removed: some Collection<StackItem>, singleTab: Bool, now: Int64, into effects: inout [SessionEffect]) {
        if let fg = foreground, removed.contains(where: { $0.id == fg.webview }) {
            removeForeground(.closed, now: now, into: &effects)
        }
        effects.append(.observe(.stackChanged))
        var load: LoadTarget?
        if singleTab, !stack.isEmpty {
            load = stack[stack.count - 1].loadTargetIfWithoutPage
        }
        for item in removed {
            guard case .webview(let w) = item else { continue }
            if w.connected {
                // Only the topmost page shows the browser tab and follows `load` (a native
                // screen above it has no page of its own).
                effects.append(.sendToPage(w.id, .closed(reason: "popped", load: load)))
                load = nil
                effects.append(.closePage(w.id, code: 1000))
            }
            effects.append(.observe(.webviewClosed(webview: w.id)))
        }
    }

    // MARK: - Foreground

    private mutating func showForeground(over id: ItemID, kind: ForegroundKind, now: Int64, into effects: inout [SessionEffect]) {
        if foreground != nil { removeForeground(.superseded, now: now, into: &effects) }
        let token = TimerToken(nextTimer)
        nextTimer += 1
        let timeout = configuration.foregroundTimeoutMs
        foreground = Foreground(webview: id, kind: kind, shownAt: now, timeoutMs: timeout, timer: token)
        if let i = webViewIndex(id) { updateWebView(at: i) { $0.lastRemoval = nil } }
        effects.append(.scheduleTimer(token, afterMs: timeout))
        effects.append(.observe(.foregroundShown(webview: id, kind: kind, timeoutMs: timeout)))
    }

    private mutating func removeForeground(_ reason: RemovalReason, now: Int64, into effects: inout [SessionEffect]) {
        guard let fg = foreground else { return }
        foreground = nil
        if reason != .timeout { effects.append(.cancelTimer(fg.timer)) }
        if let i = webViewIndex(fg.webview) { updateWebView(at: i) { $0.lastRemoval = reason } }
        effects.append(.observe(.foregroundRemoved(webview: fg.webview, reason: reason, latencyMs: Self.milliseconds(now - fg.shownAt))))
    }

    private mutating func timerFired(_ token: TimerToken, now: Int64, into effects: inout [SessionEffect]) throws(EngineError) -> SessionReply {
        guard let fg = foreground, fg.timer == token else {
            throw .staleTimer(token)
        }
        let reply = SessionReply.timerHandled
        removeForeground(.timeout, now: now, into: &effects)
        return reply
    }

    // MARK: - Router

    private mutating func adopt(_ newStack: [StackItem], removed: [ItemID], singleTab: Bool, now: Int64, into effects: inout [SessionEffect]) throws(EngineError) -> SessionReply {
        guard !newStack.isEmpty, !(newStack.last!.isPlaceholder) else {
            throw .invalid("a stack must not be empty nor end with a placeholder")
        }
        let old = stack
        let oldTop = old.last?.webview
        stack = newStack
        version &+= 1
        let reply = SessionReply.adopted
        if let fg = foreground {
            if removed.contains(fg.webview) {
                removeForeground(.closed, now: now, into: &effects)
            } else if stack.last?.id != fg.webview {
                removeForeground(.superseded, now: now, into: &effects)
            }
        }
        if old.map(\.id) != stack.map(\.id) { effects.append(.observe(.stackChanged)) }
        // The one browser tab follows the top of the stack.
        var load: LoadTarget?
        if singleTab, case .webview(let top)? = stack.last, !top.connected, top.id != oldTop?.id {
            load = LoadTarget(webview: top.id, url: top.url, token: top.token)
        }
        let removedSet = Set(removed)
        if let oldTop, oldTop.connected, let load, !removedSet.contains(oldTop.id) {
            effects.append(.sendToPage(oldTop.id, .load(load)))
            effects.append(.closePage(oldTop.id, code: 1000))
            if let i = webViewIndex(oldTop.id) { updateWebView(at: i) { $0.connected = false } }
            effects.append(.observe(.pageDisconnected(webview: oldTop.id)))
        }
        for item in old.reversed() where removedSet.contains(item.id) {
            guard case .webview(let w) = item else { continue }
            if w.connected {
                effects.append(.sendToPage(w.id, .closed(reason: "popped", load: w.id == oldTop?.id ? load : nil)))
                effects.append(.closePage(w.id, code: 1000))
            }
            effects.append(.observe(.webviewClosed(webview: w.id)))
        }
        return reply
    }

    // MARK: - Closing

    private mutating func close(reason: String, now: Int64, into effects: inout [SessionEffect]) throws(EngineError) -> SessionReply {
        let reply = SessionReply.closed
        if foreground != nil { removeForeground(.closed, now: now, into: &effects) }
        for i in stack.indices.reversed() where stack[i].webViewIsConnected {
            let id = stack[i].id
            effects.append(.sendToPage(id, .closed(reason: reason, load: nil)))
            effects.append(.closePage(id, code: 1000))
            updateWebView(at: i) { $0.connected = false }
        }
        isClosed = true
        return reply
    }

    // MARK: - Helpers

    /// The kind of the item at `i`, read in place.
    private func kind(at i: Int) -> ItemID.Kind { stack[i].id.kind }

    /// The top item's id, read in place (`stack.last` would copy the item and its strings).
    private var topID: ItemID? { stack.isEmpty ? nil : stack[stack.count - 1].id }

    private func webViewIndex(_ id: ItemID) -> Int? {
        guard id.kind == .webview else { return nil }
        // The web view asked about is almost always on top.
        var i = stack.count - 1
        while i >= 0 {
            if stack[i].id == id { return i }
            i -= 1
        }
        return nil
    }

    private mutating func updateWebView(at i: Int, _ change: (inout WebView) -> Void) {
        if stack[i].modifyWebView(change) { version &+= 1 }
    }

    static func milliseconds(_ microseconds: Int64) -> Int {
        Int((max(0, microseconds) + 500) / 1000)
    }
}

extension StackItem {
    // Reads of one field of a web view in place; `webview?.field` would copy the whole web view.

    fileprivate var webViewIsConnected: Bool {
        if case .webview(let w) = self { return w.connected }
        return false
    }

    fileprivate var webViewLastRemoval: RemovalReason? {
        if case .webview(let w) = self { return w.lastRemoval }
        return nil
    }

    /// Where a page goes to show this web view, when it is a web view without a page.
    fileprivate var loadTargetIfWithoutPage: LoadTarget? {
        if case .webview(let w) = self, !w.connected { return LoadTarget(webview: w.id, url: w.url, token: w.token) }
        return nil
    }

    /// Applies `change` to the web view in place, without copying it out of the stack (a copy
    /// retains and releases each of its strings); false for other items.
    @inline(__always)
    fileprivate mutating func modifyWebView(_ change: (inout WebView) -> Void) -> Bool {
        switch consume self {
        case .webview(var w):
            change(&w)
            self = .webview(w)
            return true
        case let other:
            self = other
            return false
        }
    }
}
