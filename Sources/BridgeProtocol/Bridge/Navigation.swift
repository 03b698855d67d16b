/// Navigation: a page's classic navigation and back, and the controllers' `navigation.*`.
extension Bridge {
    /// A page's classic navigation: to the session's `navigate` handler, else the built-in policy.
    mutating func navigate(_ sid: String, from webview: ItemID, client: ClientID, url: String, replyTo id: Int64?, now: Int64) {
        guard !url.isEmpty else {
            failNavigate(client, id: id, url: url, ProtocolError(.invalidParams, "\"url\" must not be empty"))
            return
        }
        if let handler = handler(of: "navigate", in: sid) {
            sendEvent(handler, "navigate") { w in
                w.key("session"); w.string(sid)
                w.key("webview"); w.string(webview.description)
                w.key("url"); w.string(url)
            }
            if let id { sendResult(client, id: id) { w in w.key("handledBy"); w.string("controller") } }
            return
        }
        if sessions[sid]?.route != nil {
            routeNavigate(sid, from: webview, client: client, url: url, replyTo: id, now: now)
            return
        }
        let token = randomHex(bytes: 16)
        let singleTab = handler(of: "webview.open", in: sid) == nil
        switch step(sid, .navigateToUrl(url: PageURL.stripClaim(url), token: token, requester: webview, singleTab: singleTab), now: now) {
        case .success(.navigateToUrl(let newID, let token)):
            if let id {
                let stack = stackJSON(sid)
                sendResult(client, id: id) { w in
                    w.key("webview"); w.string(newID.description)
                    w.key("stack"); w.raw(stack)
                    _ = token
                }
            }
        case .success: break
        case .failure(let e):
            failNavigate(client, id: id, url: url, ProtocolError(e))
        }
        flush(sid, cause: "navigate", now: now)
    }

    /// A navigation that cannot happen: the page hears `navigate.failed` (and an error reply
    /// when it asked with a request).
    mutating func failNavigate(_ client: ClientID, id: Int64?, url: String, _ error: ProtocolError) {
        if let id { sendError(client, id: id, error) }
        sendEvent(client, "navigate.failed") { w in
            w.key("url"); w.string(url)
            w.key("code"); w.string(error.code.rawValue)
            w.key("message"); w.string(error.message)
        }
    }

    mutating func back(_ sid: String, requester: ItemID?, replyTo: (ClientID, Int64)?, cause: String, now: Int64) {
        let singleTab = handler(of: "webview.open", in: sid) == nil
        switch step(sid, .back(requester: requester, singleTab: singleTab), now: now) {
        case .success(.back(let action, let removed)):
            stats.back(action)
            if let (client, id) = replyTo {
                let stack = stackJSON(sid)
                sendResult(client, id: id) { w in
                    w.appendRaw(#""action":"#)
                    w.appendStringValue(action.rawValue)
                    w.appendRaw(#","removed":["#)
                    for (i, r) in removed.enumerated() {
                        if i > 0 { w.bytes.append(0x2C) }
                        w.appendQuotedID(r)
                    }
                    w.appendRaw(#"],"stack":"#)
                    w.bytes.append(contentsOf: stack)
                    w.afterRawValue()
                }
            }
        case .success: break
        case .failure(let e):
            if let (client, id) = replyTo { sendError(client, id: id, ProtocolError(e)) }
        }
        flush(sid, cause: cause, now: now)
    }
}

extension Bridge {
    mutating func navigationRequest(_ method: NavigationMethod, _ client: ClientID, id: Int64, _ p: Params, now: Int64) throws(ProtocolError) {
        switch method {
        case .navigateToUrl:
            let sid = try existingSession(p)
            let url = try p.string("url")
            guard !url.isEmpty else { throw ProtocolError(.invalidParams, "\"url\" must not be empty") }
            let token = randomHex(bytes: 16)
            let singleTab = handler(of: "webview.open", in: sid) == nil
            switch step(sid, .navigateToUrl(url: PageURL.stripClaim(url), token: token, requester: nil, singleTab: singleTab), now: now) {
            case .success(.navigateToUrl(let webview, let token)):
                let stack = stackJSON(sid)
                let pageUrl = PageURL.withClaim(PageURL.stripClaim(url), session: sid, webview: webview, token: token)
                sendResult(client, id: id) { w in
                    w.key("webview"); w.string(webview.description)
                    w.key("token"); w.string(token)
                    w.key("pageUrl"); w.string(pageUrl)
                    w.key("stack"); w.raw(stack)
                }
            case .success: break
            case .failure(let e): sendError(client, id: id, ProtocolError(e))
            }
            flush(sid, cause: "navigation.navigateToUrl", now: now)
        case .back:
            let sid = try existingSession(p)
            back(sid, requester: nil, replyTo: (client, id), cause: "navigation.back", now: now)
        case .canGoBack:
            let sid = try existingSession(p)
            let can = sessions[sid]!.engine.canGoBack
            sendResult(client, id: id) { w in w.key("canGoBack"); w.bool(can) }
        case .popToRoot:
            let sid = try existingSession(p)
            let singleTab = handler(of: "webview.open", in: sid) == nil
            switch step(sid, .popToRoot(singleTab: singleTab), now: now) {
            case .success(.popToRoot(let removed)):
                let stack = stackJSON(sid)
                sendResult(client, id: id) { w in
                    w.key("removed"); Self.writeIDs(removed, into: &w)
                    w.key("stack"); w.raw(stack)
                }
            case .success: break
            case .failure(let e): sendError(client, id: id, ProtocolError(e))
            }
            flush(sid, cause: "navigation.popToRoot", now: now)
        }
    }
}
