/// A capacitor session in the Bridge (docs/CAPACITOR.md): the page's `capacitor.ready` and
/// `capacitor.call`, answered by the session's `CapacitorStore` (or a controller's mock or
/// reply); the controller's `capacitor.*`, `navigation.openUrl`, `app.pause`/`app.resume`; the
/// hardware back; top-level navigations kept in the web view or sent outside.
extension Bridge {
    // MARK: The page

    /// A page event of a capacitor session: `true` when it was one of the profile's.
    mutating func capacitorPageEvent(_ client: ClientID, name: String, _ params: JSONObject, _ s: inout Session,
                                     webview: ItemID, now: Int64) throws(ProtocolError) -> Bool {
        guard var st = s.profile as? CapacitorState else { return false }
        switch name {
        case "capacitor.ready":
            // A new document in the app's web view: native forgets its listeners and held calls.
            guard webview == st.app else { return true }
            let dropped = st.store.pageStarted()
            s.profile = st
            // The calls the old page still waited for end with it: their controllers hear so
            // (`dropped`), then that a new document started.
            for call in dropped {
                guard let result = CapacitorResult(answering: call, .failure(.droppedWithPage)) else { continue }
                emitCapacitorResult(&s, result, mocked: false, dropped: true)
            }
            emit(&s, .capacitorReady) { w in
                w.key("webview"); w.string(webview.description)
                w.key("platform"); w.string(st.profile.options.platform.rawValue)
                w.key("url"); w.write(params["url"] ?? .null)
            }
        case "capacitor.call":
            guard let call = CapacitorCall(params: params) else {
                throw ProtocolError(.invalidParams, "capacitor.call needs plugin and method")
            }
            // Only the app's web view has Capacitor (an in-app browser's page is any site).
            guard webview == st.app else { return true }
            let outcome = st.store.answer(call)
            s.profile = st
            var unavailable = call.unavailable
            if case .unavailable = outcome.answer { unavailable = true }
            emit(&s, .capacitorCall) { w in
                w.key("webview"); w.string(webview.description)
                w.key("callbackId"); w.write(call.callbackId.map(JSONValue.string) ?? .null)
                w.key("plugin"); w.string(call.plugin)
                w.key("method"); w.string(call.method)
                w.key("options"); w.write(.object(call.options))
                if unavailable { w.key("unavailable"); w.bool(true) }
            }
            capacitorDeliver(&s, outcome.pageEvents(for: call))
            if let result = outcome.result(for: call) { emitCapacitorResult(&s, result, mocked: outcome.mocked) }
            for effect in outcome.effects { capacitorEffect(effect, &s, from: webview, now: now) }
        default:
            return false
        }
        return true
    }

    /// Sends `events` to the page of the app's web view, in order (none when no page is there:
    /// what must wait for a listener the store keeps).
    mutating func capacitorDeliver(_ s: inout Session, _ events: [CapacitorPageEvent]) {
        guard let st = s.profile as? CapacitorState, let client = s.pages[st.app] else { return }
        for event in events {
            let params = event.params
            sendEvent(client, event.name) { w in
                for (key, value) in zip(params.keys, params.values) { w.key(key); w.write(value) }
            }
        }
    }

    /// `capacitor.result {session, callbackId, plugin, method, success, data | error}` to the
    /// controllers (with `mocked` when a mock answered).
    /// (with `dropped` for a call its page went away from before an answer).
    mutating func emitCapacitorResult(_ s: inout Session, _ result: CapacitorResult, mocked: Bool, dropped: Bool = false) {
        let params = result.params
        let app = (s.profile as? CapacitorState)?.app
        emit(&s, .capacitorResult) { w in
            if let app { w.key("webview"); w.string(app.description) }
            for (key, value) in zip(params.keys, params.values) where key != "save" { w.key(key); w.write(value) }
            if mocked { w.key("mocked"); w.bool(true) }
            if dropped { w.key("dropped"); w.bool(true) }
        }
    }

    /// What an answer asks of the app's native side.
    mutating func capacitorEffect(_ effect: CapacitorEffect, _ s: inout Session, from webview: ItemID, now: Int64) {
        guard var st = s.profile as? CapacitorState else { return }
        switch effect {
        case .exitApp:
            // The process ends: the session with it (after this input, `session.closed {reason: "exit-app"}`).
            endSessionLater(s.id, reason: "exit-app")
        case .minimizeApp:
            let events = st.store.pause()
            s.profile = st
            capacitorDeliver(&s, events)
        case .openBrowser(let url):
            openInAppBrowser(&s, url: url, now: now)
        case .closeBrowser:
            closeInAppBrowser(&s, now: now)
        case .openExternal(let url):
            emitExternalOpen(&s, url: url, from: webview)
        }
    }

    // MARK: Controller methods

    /// `capacitor.mock`, `capacitor.reply`, `capacitor.emit`, `navigation.openUrl`, `app.pause`,
    /// `app.resume` (the session is a capacitor one: the core checked). Every refusal is
    /// `invalid-params` and changes nothing.
    mutating func capacitorRequest(_ method: CapacitorMethod, _ client: ClientID, id: Int64, _ p: Params, _ s: inout Session) throws(ProtocolError) {
        guard var st = s.profile as? CapacitorState else { return }
        func checked<T>(_ body: () throws(CapacitorConfigurationError) -> T) throws(ProtocolError) -> T {
            do { return try body() } catch { throw ProtocolError(.invalidParams, error.message) }
        }
        switch method {
        case .mock:
            let mock = try checked { () throws(CapacitorConfigurationError) in try CapacitorMock.parse(p.object) }
            guard st.store.mocks.add(mock) else {
                throw ProtocolError(.limitExceeded, "session \(s.id) has \(CapacitorMocks.maxQueued) mocks waiting: at most \(CapacitorMocks.maxQueued)")
            }
            s.profile = st
            let queued = st.store.mocks.queue.count
            sendResult(client, id: id) { w in w.key("queued"); w.int(Int64(queued)) }
        case .reply:
            let (callbackId, outcome) = try checked { () throws(CapacitorConfigurationError) in try CapacitorControl.reply(p.object) }
            guard let result = st.store.reply(callbackId: callbackId, outcome) else {
                throw ProtocolError(.invalidParams, "session \(s.id) holds no call \"\(callbackId)\" (a capacitor.mock with hold: true holds one)")
            }
            s.profile = st
            sendResult(client, id: id) { _ in }
            capacitorDeliver(&s, [.result(result)])
            emitCapacitorResult(&s, result, mocked: true)
        case .emit:
            let (plugin, event, data) = try checked { () throws(CapacitorConfigurationError) in try CapacitorControl.emit(p.object) }
            guard let events = st.store.emit(plugin: plugin, event: event, data: data) else {
                throw ProtocolError(.invalidParams, "session \(s.id) has no plugin \"\(plugin)\"")
            }
            s.profile = st
            let listeners = events.filter { if case .result = $0 { true } else { false } }.count
            sendResult(client, id: id) { w in w.key("listeners"); w.int(Int64(listeners)) }
            capacitorDeliver(&s, events)
        case .openUrl:
            let url = try p.string("url")
            guard !url.isEmpty, (try? RouteURL.parse(url))?.scheme != nil else {
                throw ProtocolError(.invalidParams, "\"url\" must be an absolute URL (a deep link such as myapp://item/7)")
            }
            let events = st.store.openUrl(url)
            s.profile = st
            let delivered = !events.isEmpty
            sendResult(client, id: id) { w in w.key("delivered"); w.bool(delivered) }
            capacitorDeliver(&s, events)
        case .pause, .resume:
            let events = method == .pause ? st.store.pause() : st.store.resume()
            s.profile = st
            let active = st.store.isActive
            sendResult(client, id: id) { w in w.key("active"); w.bool(active) }
            capacitorDeliver(&s, events)
        }
    }

    // MARK: Navigation

    /// A top-level navigation: in the in-app browser it goes ahead; in the app's web view it
    /// stays when the app's origin or `allowNavigation` allows it (loaded into the same web
    /// view), else it opens outside the app (`external.open`) and the web view stays. The reply
    /// goes before the events it caused.
    mutating func capacitorNavigate(_ client: ClientID?, _ s: inout Session, url: String, from webview: ItemID?, reply: ProfileNavigateReply) {
        guard let st = s.profile as? CapacitorState else { return }
        let mark = effects.count
        let target = webview ?? st.app
        if target == st.browser || st.profile.options.navigationStays(url, appOrigin: st.profile.appOrigin) {
            effects.append(.host(.loadURL(session: s.id, webview: target, url: url)))
        } else {
            emitExternalOpen(&s, url: url, from: target)
        }
        guard let client else { return }
        let stack: [UInt8]? = if case .stack = reply { stackJSON(&s) } else { nil }
        let frames = replyEffect(client) { b in
            switch reply {
            case .none: break
            case .handledBy(let id): b.sendResult(client, id: id) { w in w.key("handledBy"); w.string(CapacitorProfile.name) }
            case .stack(let id): b.sendResult(client, id: id) { w in w.key("stack"); w.raw(stack ?? []) }
            }
        }
        effects.insert(contentsOf: frames, at: mark)
    }

    /// `navigation.back`: closes a presented in-app browser; refused on iOS; on Android the
    /// hardware back, which needs the web view's history (asked of the host, answered by
    /// `historyRead`) when the app may hear it or the web view may go back.
    mutating func capacitorBack(_ s: inout Session, client: ClientID?, id: Int64?, now: Int64) {
        guard var st = s.profile as? CapacitorState else { return }
        let o = st.store
        let needsHistory = o.browserURL == nil && o.options.platform == .android && o.options.plugin("App") != nil
            && o.backButtonHandlerEnabled && s.browser != nil
        guard needsHistory else { return capacitorBackDecided(&s, canGoBack: false, client: client, id: id, now: now) }
        st.backs.append(CapacitorState.WaitingBack(client: client, id: id))
        s.profile = st
        // Its connection waits with it: the controller's later requests are answered after it.
        if let client { holdForHistory(client, session: s.id, webview: st.app, id: id) }
        if st.backs.count == 1 { effects.append(.host(.readHistory(session: s.id, webview: st.app))) }
    }

    mutating func capacitorBackDecided(_ s: inout Session, canGoBack: Bool, client: ClientID?, id: Int64?, now: Int64) {
        guard var st = s.profile as? CapacitorState else { return }
        let mark = effects.count
        let before = s.engine.stack.map(\.id)
        let decision = st.store.back(canGoBack: canGoBack)
        s.profile = st
        // A back that waited for the history (`capacitorBack`) is answered only to a controller
        // still connected: its connection may have left meanwhile.
        let replyTo = client.flatMap { clients[$0] != nil ? $0 : nil }
        let action: String
        switch decision {
        case .refused(let message):
            if let replyTo, let id { sendError(replyTo, id: id, ProtocolError(.notAllowed, message)) }
            return
        case .closeBrowser:
            action = "closeBrowser"
            closeInAppBrowser(&s, now: now)
        case .notify(let events):
            action = "backButton"
            capacitorDeliver(&s, events)
        case .goBack:
            action = "goBack"
            effects.append(.host(.goBackInHistory(session: s.id, webview: st.app)))
        case .nothing:
            action = "none"
        case .leaveApp:
            action = "background"
            let events = st.store.pause()
            s.profile = st
            capacitorDeliver(&s, events)
        }
        // The reply first, with the stack as it is now, then what the back caused.
        guard let client = replyTo, let id else { return }
        let after = Set(s.engine.stack.map(\.id))
        let removed = before.filter { !after.contains($0) }
        let stack = stackJSON(&s)
        let reply = replyEffect(client) { b in
            b.sendResult(client, id: id) { w in
                w.key("action"); w.string(action)
                w.key("removed"); w.write(.array(removed.map { .string($0.description) }))
                w.key("stack"); w.raw(stack)
            }
        }
        effects.insert(contentsOf: reply, at: mark)
    }

    /// What the host answered for the profile (`historyRead`).
    mutating func capacitorHostResult(_ result: HostResult, _ s: inout Session, now: Int64) {
        guard case .historyRead(_, let webview, let canGoBack) = result, var st = s.profile as? CapacitorState,
              webview == st.app, !st.backs.isEmpty else { return }
        let waiting = st.backs
        st.backs.removeAll()
        s.profile = st
        for back in waiting { capacitorBackDecided(&s, canGoBack: canGoBack, client: back.client, id: back.id, now: now) }
    }

    /// A traversal of the app's web view (or the in-app browser's) to another document that the
    /// browser stopped: the web view goes back in its own history (the host lets that traversal
    /// through), as a device's web view does; nothing is stacked or popped. `true` for the
    /// session's web views.
    mutating func capacitorHistoryTraversed(_ s: inout Session, webview: ItemID) -> Bool {
        guard let st = s.profile as? CapacitorState, webview == st.app || webview == st.browser else { return false }
        effects.append(.host(.goBackInHistory(session: s.id, webview: webview)))
        return true
    }

    // MARK: The in-app browser

    /// `Browser.open {url}`: a new item on the stack with its own tab (without Capacitor, outside
    /// the app's navigation rules). One at a time: a second open loads the new URL in it.
    mutating func openInAppBrowser(_ s: inout Session, url: String, now: Int64) {
        guard let st = s.profile as? CapacitorState else { return }
        if let shown = st.browser {
            effects.append(.host(.loadURL(session: s.id, webview: shown, url: url)))
            return
        }
        navigateToUrl(&s, url: url, requester: nil, cause: "capacitor:Browser.open", now: now) { b, s, result in
            guard case .success(.navigateToUrl(let id, _)) = result, var st = s.profile as? CapacitorState else { return }
            st.browser = id
            s.profile = st
        }
    }

    /// `Browser.close()` or a back: the in-app browser's item goes, `browserFinished` to the app.
    mutating func closeInAppBrowser(_ s: inout Session, now: Int64) {
        guard var st = s.profile as? CapacitorState else { return }
        let events = st.store.browserClosed()
        let shown = st.browser
        st.browser = nil
        s.profile = st
        if let shown, s.engine.top?.id == shown {
            back(&s, requester: shown, replyTo: nil, cause: "capacitor:Browser.close", now: now)
        }
        capacitorDeliver(&s, events)
    }

    /// A page claimed `webview`: in the in-app browser, its page loaded (`browserPageLoaded`).
    mutating func capacitorPageConnected(_ s: inout Session, webview: ItemID) {
        guard var st = s.profile as? CapacitorState, webview == st.browser else { return }
        let events = st.store.browserLoaded()
        s.profile = st
        capacitorDeliver(&s, events)
    }
}
