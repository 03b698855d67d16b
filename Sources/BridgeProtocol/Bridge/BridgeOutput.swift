/// Running the engine for a session, and writing what it produced as frames.
extension Bridge {
    // MARK: Engine

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

    mutating func observe(_ sid: String, _ observation: Observation, cause: String, transitions: [Transition]) {
        if configuration.trace { trace(sid, observation, cause: cause) }
        noteObservation(sid, observation)
        switch observation {
        case .stackChanged:
            if sessions[sid]?.route != nil {
                emitStackChanged(sid, cause: cause, transitions: transitions)
                return
            }
            guard hasSubscribers(sid, "stack.changed") else { return }
            let stack = stackJSON(sid)
            emit(sid, "stack.changed") { w in
                w.key("stack"); w.raw(stack)
                w.key("cause"); w.string(cause)
            }
        case .foregroundShown(let webview, let kind, let timeoutMs):
            emit(sid, "foreground.shown") { w in
                w.key("webview"); w.string(webview.description)
                w.key("kind"); w.string(kind.rawValue)
                w.key("timeoutMs"); w.int(Int64(timeoutMs))
            }
        case .foregroundRemoved(let webview, let reason, let latencyMs):
            emit(sid, "foreground.removed") { w in
                w.key("webview"); w.string(webview.description)
                w.key("reason"); w.string(reason.rawValue)
                w.key("latencyMs"); w.int(Int64(latencyMs))
            }
        case .pwaRendered(let webview, let removed, let late):
            emit(sid, "pwa-rendered") { w in
                w.key("webview"); w.string(webview.description)
                w.key("removed"); w.bool(removed)
                w.key("late"); w.bool(late)
            }
        case .pwaNavigated(let webview, let url):
            emit(sid, "pwa-navigated") { w in
                w.key("webview"); w.string(webview.description)
                w.key("url"); w.string(url)
            }
        case .webviewOpen(let webview, let url, let token):
            let pageUrl = PageURL.withClaim(url, session: sid, webview: webview, token: token)
            emit(sid, "webview.open") { w in
                w.key("webview"); w.string(webview.description)
                w.key("url"); w.string(url)
                w.key("token"); w.string(token)
                w.key("pageUrl"); w.string(pageUrl)
            }
        case .webviewClosed(let webview):
            emit(sid, "webview.closed") { w in w.key("webview"); w.string(webview.description) }
        case .pageConnected(let webview):
            emit(sid, "page.connected") { w in w.key("webview"); w.string(webview.description) }
        case .pageDisconnected(let webview):
            emit(sid, "page.disconnected") { w in w.key("webview"); w.string(webview.description) }
        }
    }

    /// A line for people watching the daemon's log (`BridgeConfiguration.trace`).
    mutating func trace(_ sid: String, _ observation: Observation, cause: String) {
        let line: String
        switch observation {
        case .stackChanged:
            line = "\(cause): \(sessions[sid]?.engine.rendering ?? "")"
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
        traceLines.append("\(sid) \(line)")
    }

    // MARK: Controllers

    func hasSubscribers(_ sid: String, _ name: String) -> Bool {
        if let s = sessions[sid], s.subscribers.contains(where: { $0.filter.allows(name) }) { return true }
        return allSubscribers.contains { $0.filter.allows(name) }
    }

    /// Sends event `name` with `session` and the body's fields to every controller subscribed to
    /// the session whose filter takes it; each controller gets it once.
    mutating func emit(_ sid: String, _ name: String, _ body: (inout JSONWriter) -> Void) {
        guard let s = sessions[sid] else { return }
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

    /// The earliest-connected controller that handles `name` and is subscribed to the session.
    func handler(of name: String, in sid: String) -> ClientID? {
        var best: (number: Int, client: ClientID)?
        func consider(_ client: ClientID) {
            guard case .controller(let info)? = clients[client]?.role, info.handles.contains(name) else { return }
            if best == nil || info.number < best!.number { best = (info.number, client) }
        }
        if let s = sessions[sid] { for sub in s.subscribers { consider(sub.client) } }
        for sub in allSubscribers { consider(sub.client) }
        return best?.client
    }

    mutating func updateIdle(_ sid: String, now: Int64) {
        guard let s = sessions[sid] else { return }
        let idle = s.pages.isEmpty && s.subscribers.isEmpty
        if idle, s.idleSince == nil {
            sessions[sid]!.idleSince = now
        } else if !idle, s.idleSince != nil {
            sessions[sid]!.idleSince = nil
        }
    }

    // MARK: Frames

    // Replies, errors and page events are written into the reused `frameWriter` from fixed
    // fragments (the same bytes key-by-key writing gives) and leave as exact-size arrays.

    mutating func sendResult(_ client: ClientID, id: Int64, _ body: (inout JSONWriter) -> Void) {
        var w = takeFrameWriter()
        w.appendRaw(#"{"id":"#)
        w.appendDigits(Int(id))
        w.appendRaw(#","result":{"#)
        w.afterRawOpen()
        body(&w)
        w.appendRaw("}}")
        send(client, &w)
    }

    mutating func sendError(_ client: ClientID, id: Int64?, _ error: ProtocolError) {
        stats.error(error.code)
        var w = takeFrameWriter()
        w.appendRaw(#"{"id":"#)
        if let id { w.appendDigits(Int(id)) } else { w.appendRaw("null") }
        w.appendRaw(#","error":{"code":"#)
        w.appendStringValue(error.code.rawValue)
        w.appendRaw(#","message":"#)
        w.appendStringValue(error.message)
        w.appendRaw("}}")
        send(client, &w)
    }

    mutating func sendEvent(_ client: ClientID, _ name: String, _ body: (inout JSONWriter) -> Void) {
        var w = takeFrameWriter()
        w.appendRaw(#"{"event":"#)
        w.appendStringValue(name)
        w.appendRaw(#","params":{"#)
        w.afterRawOpen()
        body(&w)
        w.appendRaw("}}")
        send(client, &w)
    }

    /// The scratch writer, empty; give it back with `send`.
    mutating func takeFrameWriter() -> JSONWriter {
        var w = JSONWriter(capacity: 0)
        swap(&w, &frameWriter)
        w.reset()
        return w
    }

    /// Queues the frame in `w` for `client` and keeps `w`'s storage for the next frame.
    mutating func send(_ client: ClientID, _ w: inout JSONWriter) {
        let n = w.bytes.count
        let frame = w.bytes.withUnsafeBufferPointer { src in
            [UInt8](unsafeUninitializedCapacity: n) { dst, count in
                _ = dst.initialize(fromContentsOf: src)
                count = n
            }
        }
        effects.append(.send(client, frame))
        swap(&w, &frameWriter)
    }

    // MARK: Stacks and sessions as JSON

    /// The session's stack as JSON, cached until the engine changes.
    mutating func stackJSON(_ sid: String) -> [UInt8] {
        guard let s = sessions[sid] else { return Array("[]".utf8) }
        let version = s.engine.version
        if s.stackCacheVersion == version { return s.stackCache }
        var w = JSONWriter(capacity: 64 + 128 * s.engine.stack.count)
        Self.writeStack(s.engine.stack, into: &w)
        s.stackCache = w.bytes
        s.stackCacheVersion = version
        return w.bytes
    }

    public static func writeStack(_ stack: [StackItem], into w: inout JSONWriter) {
        // Every reply to pwa-navigate and back carries the stack: written from fixed fragments
        // (same bytes as key-by-key writing; see FastJSON.swift).
        w.beginArray()
        var first = true
        for item in stack {
            if !first { w.bytes.append(0x2C) }
            first = false
            switch item {
            case .webview(let v):
                w.appendRaw(#"{"id":"#)
                w.appendQuotedID(v.id)
                switch v.mode {
                case .pwa: w.appendRaw(#","kind":"webview","mode":"pwa","url":"#)
                case .classic: w.appendRaw(#","kind":"webview","mode":"classic","url":"#)
                }
                w.appendStringValue(v.url)
                w.appendRaw(#","title":"#)
                if let t = v.title { w.appendStringValue(t) } else { w.appendRaw("null") }
                w.appendRaw(v.connected ? #","connected":true}"# : #","connected":false}"#)
            case .placeholder(let p):
                w.appendRaw(#"{"id":"#)
                w.appendQuotedID(p.id)
                w.appendRaw(#","kind":"placeholder","of":"#)
                w.appendQuotedID(p.of)
                w.appendRaw(#","url":"#)
                w.appendStringValue(p.url)
                if let t = p.title {
                    w.appendRaw(#","title":"#)
                    w.appendStringValue(t)
                }
                w.appendRaw("}")
            case .native(let n):
                w.appendRaw(#"{"id":"#)
                w.appendQuotedID(n.id)
                w.appendRaw(#","kind":"native","url":"#)
                w.appendStringValue(n.url)
                w.appendRaw("}")
            }
        }
        w.endArray()
    }

    func writeForeground(_ sid: String, into w: inout JSONWriter, now: Int64) {
        guard let fg = sessions[sid]?.engine.foreground else {
            w.null()
            return
        }
        w.beginObject()
        w.key("webview"); w.string(fg.webview.description)
        w.key("kind"); w.string(fg.kind.rawValue)
        w.key("sinceMs"); w.int(Int64(SessionEngine.milliseconds(now - fg.shownAt)))
        w.key("timeoutMs"); w.int(Int64(fg.timeoutMs))
        w.endObject()
    }

    func writeSessionArray(into w: inout JSONWriter, now: Int64) {
        w.beginArray()
        for s in sessions.values.sorted(by: { $0.serial < $1.serial }) {
            w.beginObject()
            w.key("session"); w.string(s.id)
            w.key("stack"); Self.writeStack(s.engine.stack, into: &w)
            w.key("foreground"); writeForeground(s.id, into: &w, now: now)
            w.endObject()
        }
        w.endArray()
    }

    func writeSessionList(into w: inout JSONWriter, now: Int64) {
        w.beginObject()
        w.key("sessions")
        writeSessionArray(into: &w, now: now)
        w.endObject()
    }

    static func writeIDs(_ ids: [ItemID], into w: inout JSONWriter) {
        w.beginArray()
        for id in ids { w.string(id.description) }
        w.endArray()
    }

    // MARK: Secrets

    mutating func randomHex(bytes: Int) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(bytes * 2)
        var remaining = bytes
        while remaining > 0 {
            var word = rng.next()
            for _ in 0..<min(8, remaining) {
                out.append(digits[Int(word & 15)])
                out.append(digits[Int((word >> 4) & 15)])
                word >>= 8
            }
            remaining -= 8
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Equal strings, compared in time that depends on the lengths only.
    static func constantTimeEquals(_ a: String, _ b: String) -> Bool {
        let x = Array(a.utf8), y = Array(b.utf8)
        var diff: UInt8 = x.count == y.count ? 0 : 1
        for i in 0..<max(x.count, y.count) {
            diff |= (i < x.count ? x[i] : 0) ^ (i < y.count ? y[i] : 0)
        }
        return diff == 0
    }
}
