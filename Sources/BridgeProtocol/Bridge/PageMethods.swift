/// Page requests and events (contract section 5); `navigate` and `back` are in Navigation.swift.
extension Bridge {
    mutating func pageRequest(_ client: ClientID, id: Int64, method known: BridgeMethod?, name: String, _ p: Params, session s: inout Session, webview: ItemID, now: Int64) throws(ProtocolError) {
        guard let known, let method = PageMethod(known) else {
            if known == .hello { throw ProtocolError(.conflict, "this connection already said hello") }
            if known != nil {
                throw ProtocolError(.notAllowed, "\"\(name)\" is for controllers; this connection is a page")
            }
            throw ProtocolError(.unknownMethod, "no method \"\(name)\"")
        }
        switch method {
        case .pwaNavigate:
            let url = try p.optionalString("url").map(PageURL.stripClaim)
            let title = try p.optionalString("title")
            try pwaNavigate(client, id: id, url: url, title: title, session: &s, webview: webview, now: now)
        case .pwaRendered:
            run(&s, .pwaRendered(from: webview), cause: BridgeMethod.pwaRendered.name, now: now) { b, _, result in
                switch result {
                case .success(.pwaRendered(let removed, let latency)):
                    b.sendResult(client, id: id) { w in
                        if removed, let latency {
                            w.appendRaw(#""removed":true,"reason":"rendered","latencyMs":"#)
                            w.appendDigits(latency)
                        } else {
                            w.appendRaw(removed ? #""removed":true"# : #""removed":false"#)
                        }
                        w.afterRawValue()
                    }
                case .success: break
                case .failure(let e): b.sendError(client, id: id, ProtocolError(e))
                }
            }
        case .back:
            back(&s, requester: webview, replyTo: (client, id), cause: BridgeMethod.back.name, now: now)
        case .navigate:
            let url = try p.string("url")
            navigate(&s, from: webview, client: client, url: url, replyTo: id, now: now)
        case .ping:
            sendResult(client, id: id) { _ in }
        case .deeplinkOpen:
            guard s.isRouted else {
                throw ProtocolError(.unknownMethod, "\"\(name)\" needs a routing configuration: start bridged with --config FILE")
            }
            let action = try Self.deeplinkAction(p)
            try runRouterAction(action, on: &s, requester: webview, cause: name, now: now) { b, s, outcome in
                b.writeOutcome(client, id: id, outcome, &s)
            }
        }
    }

    /// `pwa-navigate`, as a request (`id`) or an event: checked, then (in a browser session)
    /// held until the snapshot of the tab is taken (Bridge+Host.swift), then run.
    mutating func pwaNavigate(_ client: ClientID, id: Int64?, url: String?, title: String?, session s: inout Session, webview: ItemID, now: Int64) throws(ProtocolError) {
        try checkPush(&s, url: url, title: title)
        // (Only the top web view's: a covered one's is refused below, and picturing it would
        // bring its tab to the front, over the top web view's.)
        if s.isBrowser, s.engine.top?.id == webview, waitForSnapshot(client, &s, webview: webview, PendingNavigate(id: id, url: url, title: title)) { return }
        let placeholderURL = s.isBrowser ? overtakenURL(&s, webview: webview, url: url, now: now) : nil
        run(&s, .pwaNavigate(from: webview, url: url, title: title, placeholderURL: placeholderURL), cause: BridgeMethod.pwaNavigate.name, now: now) { b, s, result in
            switch result {
            case .success(.pwaNavigate(let placeholder)):
                b.keepSnapshot(&s, placeholder: placeholder)
                guard let id else { return }
                let stack = b.stackJSON(&s)
                b.sendResult(client, id: id) { w in
                    w.appendRaw(#""placeholder":"#)
                    w.appendQuotedID(placeholder)
                    w.appendRaw(#","stack":"#)
                    w.appendRaw(stack)
                    w.afterRawValue()
                }
            case .success: break
            case .failure(let e): if let id { b.sendError(client, id: id, ProtocolError(e)) }
            }
        }
    }

    /// The url a browser session's placeholder keeps when the browser's report of the page's
    /// `history.pushState` overtook the `pwa-navigate` that announced it: the first announcement
    /// of a classic web view, to exactly the url the report moved it to, within
    /// `BrowserState.overtakeWindow`. The report is consumed either way.
    private func overtakenURL(_ s: inout Session, webview: ItemID, url: String?, now: Int64) -> String? {
        guard let report = s.browser?.lastURLReport else { return nil }
        s.browser!.lastURLReport = nil
        guard report.webview == webview, now - report.at <= BrowserState.overtakeWindow, let url,
              PageURL.stripClaim(url) == report.after,
              let current = s.engine.webView(webview), current.mode == .classic, current.url == report.after
        else { return nil }
        return report.before
    }

    mutating func pageEvent(_ client: ClientID, name: String, _ p: Params, session s: inout Session, webview: ItemID, now: Int64) throws(ProtocolError) {
        if let profile = s.profile,
           try type(of: profile).pageEvent(&self, client, name: name, p.object, &s, webview: webview, now: now) { return }
        guard let event = PageEventName(name: name) else {
            emit(&s, .appEvent) { w in
                w.key("webview"); w.string(webview.description)
                w.key("name"); w.string(name)
                w.key("params"); w.write(.object(p.object))
            }
            return
        }
        switch event {
        case .pwaNavigate:
            let url = try p.optionalString("url").map(PageURL.stripClaim)
            let title = try p.optionalString("title")
            try pwaNavigate(client, id: nil, url: url, title: title, session: &s, webview: webview, now: now)
        case .pwaRendered:
            run(&s, .pwaRendered(from: webview), cause: BridgeMethod.pwaRendered.name, now: now)
        case .back:
            back(&s, requester: webview, replyTo: nil, cause: BridgeMethod.back.name, now: now)
        case .navigate:
            let url = try p.string("url")
            navigate(&s, from: webview, client: client, url: url, replyTo: nil, now: now)
        case .pwaNavigated:
            let url = PageURL.stripClaim(try p.string("url"))
            let source = try p.optionalString("source")
            try checkURL(url, "url")
            try checkURLChange(s, webview: webview, url: url)
            // The engine's observation is announced here, with the page's `source`.
            run(&s, .pwaNavigated(from: webview, url: url), cause: PageEventName.pwaNavigated.name, now: now) { b, s, result in
                guard case .success = result else { return }
                b.emitPwaNavigated(&s, webview, url: url, source: source)
            }
        }
    }
}
