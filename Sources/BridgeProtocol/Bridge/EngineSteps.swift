/// Running the engine for a session and performing what it asked for (page events, closes,
/// timers, observations).
extension Bridge {

    /// Runs `input` on the session's engine. The reply (or failure) is returned; the other
    /// effects wait in `engineEffects` for `flush`.
    mutating func step(_ sid: String, _ input: SessionInput, now: Int64) -> Result<SessionReply, EngineError> {
        guard sessions[sid] != nil else { return .failure(.closed) }
        let start = engineEffects.count
        var buffer: [SessionEffect] = []
        swap(&buffer, &engineEffects)
        sessions[sid]!.engine.handle(input, at: now, into: &buffer)
        swap(&buffer, &engineEffects)
        switch start < engineEffects.count ? engineEffects[start] : nil {
        case .reply(let r)?: return .success(r)
        case .failure(let e)?: return .failure(e)
        default: return .failure(.invalid("the engine gave no answer"))
        }
    }

    /// Performs the effects of the last `step` for session `sid`. With a routing configuration
    /// the tree is first brought in step with the engine; the transitions from the tree before to
    /// the tree after (those of `routerTransitions` for a router action) are returned and
    /// carried by `stack.changed`.
    @discardableResult
    mutating func flush(_ sid: String, cause: String, now: Int64) -> [Transition] {
        var list: [SessionEffect] = []
        swap(&list, &engineEffects)
        defer {
            // (Element by element: removeAll(keepingCapacity:) goes through the generic
            // replaceSubrange, several times dearer for the handful of effects of a step.)
            while !list.isEmpty { list.removeLast() }
            swap(&list, &engineEffects)
        }
        guard let serial = sessions[sid]?.serial else { return [] }
        let transitions = sessions[sid]?.route == nil ? [] : (routerTransitions ?? syncTree(sid))
        for effect in list {
            switch effect {
            case .reply, .failure:
                continue
            case .sendToPage(let webview, let event):
                guard let client = sessions[sid]?.pages[webview] else { continue }
                sendPageEvent(client, sid, event)
            case .closePage(let webview, let code):
                guard let client = sessions[sid]?.pages.removeValue(forKey: webview) else { continue }
                clients[client]?.role = .detached(session: sid, webview: webview, why: "its page was sent away or closed")
                effects.append(.close(client, code: code, reason: ""))
            case .scheduleTimer(let token, let ms):
                effects.append(.schedule(TimerKey(session: serial, token: token), afterMs: ms))
            case .cancelTimer(let token):
                effects.append(.cancel(TimerKey(session: serial, token: token)))
            case .observe(let observation):
                observe(sid, observation, cause: cause, transitions: transitions)
            }
        }
        updateIdle(sid, now: now)
        return transitions
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
