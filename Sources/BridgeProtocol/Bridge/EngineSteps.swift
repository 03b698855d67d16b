/// Running the engine for a session and performing what it asked for (page events, closes,
/// timers, observations).
extension Bridge {

    /// Runs `input` on the session's engine; `answer` writes the reply (or the error) for
    /// whoever asked, then the engine's effects are performed: a reply always precedes the events
    /// its request caused, and no step's effects can be left unperformed.
    mutating func run(_ s: inout Session, _ input: SessionInput, cause: String, now: Int64,
                      answer: (inout Self, inout Session, Result<SessionReply, EngineError>) -> Void = { _, _, _ in }) {
        var list = takeEffectStorage()
        let result = s.engine.handle(input, at: now, into: &list)
        answer(&self, &s, result)
        flush(&list, &s, cause: cause, now: now)
        returnEffectStorage(&list)
    }

    /// An empty list with the capacity kept from the previous steps (no allocation per step).
    mutating func takeEffectStorage() -> [SessionEffect] {
        var list: [SessionEffect] = []
        swap(&list, &effectStorage)
        return list
    }

    /// Empties `list` and keeps its storage for the next step.
    mutating func returnEffectStorage(_ list: inout [SessionEffect]) {
        // (Element by element: removeAll(keepingCapacity:) goes through the generic
        // replaceSubrange, several times dearer for the handful of effects of a step.)
        while !list.isEmpty { list.removeLast() }
        swap(&list, &effectStorage)
    }

    /// Performs the effects of a step of session `s`. With a routing configuration the tree is
    /// first brought in step with the engine; the transitions from the tree before to the tree
    /// after (or `transitions`, a router action's own) are carried by `stack.changed`.
    /// A routed browser session's tab in front follows (`browserKeepFront`) unless `keepFront`
    /// is false (a router action, which opens its new web views after the flush).
    mutating func flush(_ list: inout [SessionEffect], _ s: inout Session, cause: String, transitions given: [Transition]? = nil,
                        keepFront: Bool = true, now: Int64) {
        let transitions = !s.isRouted ? [] : (given ?? syncTree(&s))
        for effect in list {
            switch effect {
            case .sendToPage(let webview, let event):
                guard let client = s.pages[webview] else { continue }
                sendPageEvent(client, s.id, event)
            case .closePage(let webview, let code):
                guard let client = s.pages.removeValue(forKey: webview) else { continue }
                clients[client]?.role = .detached(session: s.id, webview: webview, why: "its page was sent away or closed")
                effects.append(.close(client, code: code, reason: ""))
            case .scheduleTimer(let token, let ms):
                effects.append(.schedule(TimerKey(session: s.serial, token: token), afterMs: ms))
            case .cancelTimer(let token):
                effects.append(.cancel(TimerKey(session: s.serial, token: token)))
            case .observe(let observation):
                observe(&s, observation, cause: cause, transitions: transitions)
            }
        }
        if keepFront, s.isRouted, s.isBrowser { browserKeepFront(&s) }
        updateIdle(&s, now: now)
    }

    mutating func sendPageEvent(_ client: ClientID, _ sid: String, _ event: PageEvent) {
        switch event {
        case .back(let placeholder, let url):
            sendEvent(client, "back") { w in
                w.appendRaw(#""placeholder":"#)
                w.appendQuotedID(placeholder)
                w.appendRaw(#","url":"#)
                w.appendStringValue(url)
            }
        case .closed(let reason, let load):
            sendEvent(client, "closed") { w in
                w.key("reason"); w.string(reason)
                if let load {
                    w.key("load")
                    Self.writeLoad(load, session: sid, into: &w)
                }
            }
        case .load(let target):
            var w = JSONWriter(capacity: 256)
            w.beginObject()
            w.key("event"); w.string("load")
            w.key("params"); Self.writeLoad(target, session: sid, into: &w)
            w.endObject()
            effects.append(.send(client, w.bytes))
        }
    }

    static func writeLoad(_ load: LoadTarget, session sid: String, into w: inout JSONWriter) {
        w.beginObject()
        w.key("session"); w.string(sid)
        w.key("webview"); w.string(load.webview.description)
        w.key("url"); w.string(load.url)
        w.key("token"); w.string(load.token)
        w.key("pageUrl"); w.string(PageURL.withClaim(load.url, session: sid, webview: load.webview, token: load.token))
        w.endObject()
    }
}
