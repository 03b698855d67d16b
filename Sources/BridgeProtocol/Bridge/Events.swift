/// Controller events: what each observation of the engine becomes, who receives it, and the
/// controllers that handle a session's `navigate` and `webview.open`.
extension Bridge {
    // (Not inlined into `flush`: inlined, its loop copies every effect through the value witness.)
    @inline(never)
    mutating func observe(_ s: inout Session, _ observation: Observation, cause: String, transitions: [Transition]) {
        if configuration.trace { trace(s, observation, cause: cause) }
        noteObservation(&s, observation)
        if s.isBrowser { browserObserve(&s, observation) }
        switch observation {
        case .stackChanged:
            emitStackChanged(&s, cause: cause, transitions: s.isRouted ? transitions : nil)
        case .foregroundShown(let webview, let kind, let timeoutMs):
            emit(&s, .foregroundShown) { w in
                w.key("webview"); w.string(webview.description)
                w.key("kind"); w.string(kind.rawValue)
                w.key("timeoutMs"); w.int(Int64(timeoutMs))
            }
        case .foregroundRemoved(let webview, let reason, let latencyMs):
            emit(&s, .foregroundRemoved) { w in
                w.key("webview"); w.string(webview.description)
                w.key("reason"); w.string(reason.rawValue)
                w.key("latencyMs"); w.int(Int64(latencyMs))
            }
        case .pwaRendered(let webview, let removed, let late):
            emit(&s, .pwaRendered) { w in
                w.key("webview"); w.string(webview.description)
                w.key("removed"); w.bool(removed)
                w.key("late"); w.bool(late)
            }
        case .pwaNavigated:
            break  // announced by the page event's handler, with the page's `source`
        case .webviewOpen(let webview, let url, let token):
            if s.isBrowser {
                // Announced once its tab is open, with the tab's target id (`announceOpen`).
                s.browser!.unannounced[webview] = BrowserState.Unannounced(url: url, token: token)
                return
            }
            emitWebviewOpen(&s, webview, url: url, token: token)
        case .webviewClosed(let webview):
            emitWebviewClosed(&s, webview)
        case .pageConnected(let webview):
            emitPageConnected(&s, webview)
        case .pageDisconnected(let webview):
            emitPageDisconnected(&s, webview)
        }
    }

    // MARK: The events with more than one cause: one writer each

    /// `webview.open {webview, url, token, pageUrl}`; a router item's `context`; in a browser
    /// session also the browser's ids of the tab and the context.
    mutating func emitWebviewOpen(_ s: inout Session, _ webview: ItemID, url: String, token: String, context: JSONValue? = nil,
                                  targetId: String? = nil, browserContextId: String? = nil) {
        let pageUrl = PageURL.withClaim(url, session: s.id, webview: webview, token: token)
        emit(&s, .webviewOpen) { w in
            w.key("webview"); w.string(webview.description)
            w.key("url"); w.string(url)
            w.key("token"); w.string(token)
            w.key("pageUrl"); w.string(pageUrl)
            if let context { w.key("context"); w.write(context) }
            if let targetId { w.key("targetId"); w.string(targetId) }
            if let browserContextId { w.key("browserContextId"); w.string(browserContextId) }
        }
    }

    /// `webview.closed {webview}`.
    mutating func emitWebviewClosed(_ s: inout Session, _ webview: ItemID) {
        emit(&s, .webviewClosed) { w in w.key("webview"); w.string(webview.description) }
    }

    /// `stack.changed {stack, cause}`; in a routed session (`transitions` given) also its
    /// `transitions` and `tree`.
    mutating func emitStackChanged(_ s: inout Session, cause: String, transitions: [Transition]?) {
        guard hasSubscribers(s.subscribers, ControllerEventName.stackChanged.name) else { return }
        let stack = stackJSON(&s)
        let tree: JSONValue? = transitions == nil ? nil : (s.tree?.toJSON() ?? .null)
        emit(&s, .stackChanged) { w in
            w.key("stack"); w.raw(stack)
            w.key("cause"); w.string(cause)
            if let transitions, let tree {
                w.key("transitions"); w.write(.array(transitions.map { $0.toJSON() }))
                w.key("tree"); w.write(tree)
            }
        }
    }

    /// `external.open {url, webview?}`: a navigation the app sends outside (another app, the
    /// system browser); `webview` is the one it came from, when one did.
    mutating func emitExternalOpen(_ s: inout Session, url: String, from webview: ItemID?) {
        emit(&s, .externalOpen) { w in
            w.key("url"); w.string(url)
            if let webview { w.key("webview"); w.string(webview.description) }
        }
    }

    /// `page.connected {webview}`.
    mutating func emitPageConnected(_ s: inout Session, _ webview: ItemID) {
        emit(&s, .pageConnected) { w in w.key("webview"); w.string(webview.description) }
    }

    /// `page.disconnected {webview, reason?}` (`replaced`: a newer page claimed the web view).
    mutating func emitPageDisconnected(_ s: inout Session, _ webview: ItemID, reason: String? = nil) {
        emit(&s, .pageDisconnected) { w in
            w.key("webview"); w.string(webview.description)
            if let reason { w.key("reason"); w.string(reason) }
        }
    }

    /// `pwa-navigated {webview, url, source?}` (`browser`: the browser saw the URL change).
    mutating func emitPwaNavigated(_ s: inout Session, _ webview: ItemID, url: String, source: String?) {
        emit(&s, .pwaNavigated) { w in
            w.key("webview"); w.string(webview.description)
            w.key("url"); w.string(url)
            if let source { w.key("source"); w.string(source) }
        }
    }

    /// A line for people watching the daemon's log (`BridgeConfiguration.trace`).
    mutating func trace(_ s: Session, _ observation: Observation, cause: String) {
        let line: String
        switch observation {
        case .stackChanged:
            line = "\(cause): \(s.engine.rendering)"
        case .foregroundShown(let webview, let kind, let timeoutMs):
            line = "foreground \(kind.rawValue) over \(webview) (fallback in \(timeoutMs) ms)"
        case .foregroundRemoved(let webview, let reason, let latencyMs):
            line = "foreground over \(webview) removed: \(reason.rawValue) after \(latencyMs) ms"
        case .pwaRendered(let webview, _, let late):
            guard late else { return }
            line = "late pwa-rendered from \(webview): its foreground had already timed out"
        case .webviewOpen(let webview, let url, _):
            line = "web view \(webview) opened for \(url)"
        case .webviewClosed(let webview):
            line = "web view \(webview) closed"
        case .pageConnected(let webview):
            line = "page connected to \(webview)"
        case .pageDisconnected(let webview):
            line = "page of \(webview) disconnected"
        case .pwaNavigated:
            return
        }
        traceLines.append("\(s.id) \(line)")
    }


    func hasSubscribers(_ subscribers: [Subscriber], _ name: String) -> Bool {
        if subscribers.contains(where: { $0.filter.allows(name) }) { return true }
        return allSubscribers.contains { $0.filter.allows(name) }
    }

    /// Sends event `name` with `session` and the body's fields to every controller subscribed to
    /// the session whose filter takes it; each controller gets it once. (`s` is only read; it is
    /// `inout` so that the session is not copied, 264 bytes, for every event.)
    mutating func emit(_ s: inout Session, _ event: ControllerEventName, _ body: (inout JSONWriter) -> Void) {
        let name = event.name
        let sid = s.id
        var recipients: [ClientID] = []
        for sub in s.subscribers where sub.filter.allows(name) { recipients.append(sub.client) }
        for sub in allSubscribers where sub.filter.allows(name) && !recipients.contains(sub.client) {
            recipients.append(sub.client)
        }
        guard !recipients.isEmpty else { return }
        var w = JSONWriter(capacity: 256)
        w.beginObject()
        w.key("event"); w.string(name)
        w.key("params")
        w.beginObject()
        w.key("session"); w.string(sid)
        body(&w)
        w.endObject()
        w.endObject()
        sendEventFrame(name, w.bytes, to: recipients)
    }

    /// Whether a new web view replaces the top one (no controller handles the session's
    /// `webview.open`, and no browser makes tabs of them).
    func singleTab(_ s: Session) -> Bool {
        !s.isBrowser && handler(of: "webview.open", among: s.subscribers) == nil
    }

    /// The earliest-connected controller that handles `name` and is subscribed to the session
    /// (one of the session's `subscribers`, or subscribed to all).
    func handler(of name: String, among subscribers: [Subscriber]) -> ClientID? {
        var best: (number: Int, client: ClientID)?
        func consider(_ client: ClientID) {
            guard case .controller(let info)? = clients[client]?.role, info.handles.contains(name) else { return }
            if best == nil || info.number < best!.number { best = (info.number, client) }
        }
        for sub in subscribers { consider(sub.client) }
        for sub in allSubscribers { consider(sub.client) }
        return best?.client
    }
}
