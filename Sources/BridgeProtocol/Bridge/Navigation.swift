/// Navigation: a page's classic navigation and back, and the controllers' `navigation.*`.
extension Bridge {
    mutating func navigationRequest(_ method: NavigationMethod, _ client: ClientID, id: Int64, _ p: Params, now: Int64) throws(ProtocolError) {
        switch method {
        case .navigateToUrl:
            try withExistingSession(p) { (b, s) throws(ProtocolError) in
                let url = try p.string("url")
                guard !url.isEmpty else { throw ProtocolError(.invalidParams, "\"url\" must not be empty") }
                try b.checkURL(url, "url")
                if let profile = s.profile,
                   type(of: profile).navigate(&b, client, &s, url: PageURL.stripClaim(url), from: nil, reply: .stack(id), now: now) {
                    return
                }
                try b.checkPush(&s, url: url, title: nil)
                b.navigateToUrl(&s, url: url, requester: nil, cause: BridgeMethod.navigateToUrl.name, now: now) { b, s, result in
                    switch result {
                    case .success(.navigateToUrl(let webview, let token)):
                        let stack = b.stackJSON(&s)
                        let pageUrl = PageURL.withClaim(PageURL.stripClaim(url), session: s.id, webview: webview, token: token)
                        b.sendResult(client, id: id) { w in
                            w.key("webview"); w.string(webview.description)
                            w.key("token"); w.string(token)
                            w.key("pageUrl"); w.string(pageUrl)
                            w.key("stack"); w.raw(stack)
                        }
                    case .success: break
                    case .failure(let e): b.sendError(client, id: id, ProtocolError(e))
                    }
                }
            }
        case .back:
            try withExistingSession(p) { b, s in
                if let profile = s.profile, type(of: profile).back(&b, &s, client: client, id: id, now: now) { return }
                b.back(&s, requester: nil, replyTo: (client, id), cause: BridgeMethod.navigationBack.name, now: now)
            }
        case .canGoBack:
            try withExistingSession(p) { b, s in
                let can = s.engine.canGoBack
                b.sendResult(client, id: id) { w in w.key("canGoBack"); w.bool(can) }
            }
        case .popToRoot:
            try withExistingSession(p) { b, s in
                let singleTab = b.singleTab(s)
                b.run(&s, .popToRoot(singleTab: singleTab), cause: BridgeMethod.popToRoot.name, now: now) { b, s, result in
                    switch result {
                    case .success(.popToRoot(let removed)):
                        let stack = b.stackJSON(&s)
                        b.sendResult(client, id: id) { w in
                            w.key("removed"); Self.writeIDs(removed, into: &w)
                            w.key("stack"); w.raw(stack)
                        }
                    case .success: break
                    case .failure(let e): b.sendError(client, id: id, ProtocolError(e))
                    }
                }
            }
        }
    }

    /// A page's classic navigation: to the session's `navigate` handler, else the built-in policy.
    mutating func navigate(_ s: inout Session, from webview: ItemID, client: ClientID, url: String, replyTo id: Int64?, now: Int64) {
        guard !url.isEmpty else {
            failNavigate(client, id: id, url: url, ProtocolError(.invalidParams, "\"url\" must not be empty"))
            return
        }
        do throws(ProtocolError) {
            try checkURL(url, "url")
        } catch {
            failNavigate(client, id: id, url: url, error)
            return
        }
        if let profile = s.profile,
           type(of: profile).navigate(&self, client, &s, url: url, from: webview, reply: id.map { .handledBy($0) } ?? .none, now: now) {
            return
        }
        if let handler = handler(of: "navigate", among: s.subscribers) {
            let sid = s.id
            sendEvent(handler, "navigate") { w in
                w.key("session"); w.string(sid)
                w.key("webview"); w.string(webview.description)
                w.key("url"); w.string(url)
            }
            if let id { sendResult(client, id: id) { w in w.key("handledBy"); w.string("controller") } }
            return
        }
        do throws(ProtocolError) {
            try checkPush(&s, url: url, title: nil)
        } catch {
            failNavigate(client, id: id, url: url, error)
            return
        }
        if s.isRouted {
            routeNavigate(&s, from: webview, client: client, url: url, replyTo: id, now: now)
            return
        }
        navigateToUrl(&s, url: url, requester: webview, cause: BridgeMethod.navigate.name, now: now) { b, s, result in
            switch result {
            case .success(.navigateToUrl(let newID, _)):
                if let id {
                    let stack = b.stackJSON(&s)
                    b.sendResult(client, id: id) { w in
                        w.key("webview"); w.string(newID.description)
                        w.key("stack"); w.raw(stack)
                    }
                }
            case .success: break
            case .failure(let e):
                b.failNavigate(client, id: id, url: url, ProtocolError(e))
            }
        }
    }

    /// The engine's `navigateToUrl` with a fresh token; a refused navigation leaves the generator
    /// as it was (an error changes nothing).
    mutating func navigateToUrl(_ s: inout Session, url: String, requester: ItemID?, cause: String, now: Int64,
                                answer: (inout Self, inout Session, Result<SessionReply, EngineError>) -> Void) {
        let saved = rng
        let token = randomHex(bytes: 16)
        let singleTab = singleTab(s)
        run(&s, .navigateToUrl(url: PageURL.stripClaim(url), token: token, requester: requester, singleTab: singleTab), cause: cause, now: now) { b, s, result in
            if case .failure = result { b.rng = saved }
            answer(&b, &s, result)
        }
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

    /// Back: a page's `back` (request or event, or its browser's Back), `navigation.back`.
    /// With a routing configuration it is the same back as `router.perform goBack`
    /// (`routerDecidesBack`): the router's when the drawer is open or the active stack has a
    /// single item (close the drawer; dismiss a modal; the tab's `back_behavior`), else the
    /// contract's back algorithm.
    mutating func back(_ s: inout Session, requester: ItemID?, replyTo: (ClientID, Int64)?, cause: String, now: Int64) {
        if s.isRouted, routerDecidesBack(s) {
            return routerBack(&s, requester: requester, replyTo: replyTo, cause: cause, now: now)
        }
        let singleTab = singleTab(s)
        run(&s, .back(requester: requester, singleTab: singleTab), cause: cause, now: now) { b, s, result in
            switch result {
            case .success(.back(let action, let removed)):
                b.stats.back(action)
                if let (client, id) = replyTo {
                    let stack = b.stackJSON(&s)
                    b.sendResult(client, id: id) { w in
                        w.appendRaw(#""action":"#)
                        w.appendStringValue(action.rawValue)
                        w.appendRaw(#","removed":["#)
                        for (i, r) in removed.enumerated() {
                            if i > 0 { w.append(0x2C) }
                            w.appendQuotedID(r)
                        }
                        w.appendRaw(#"],"stack":"#)
                        w.appendRaw(stack)
                        w.afterRawValue()
                    }
                }
            case .success: break
            case .failure(let e):
                if let (client, id) = replyTo { b.sendError(client, id: id, ProtocolError(e)) }
            }
        }
    }
}
