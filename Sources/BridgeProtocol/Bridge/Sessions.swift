/// Sessions: creating, listing, subscribing to and closing them (`session.*`).
extension Bridge {
    /// request caused).
    mutating func createSession(url: String, connectedBy page: ClientID?, subscriber: ClientID?, now: Int64) throws(ProtocolError) -> String {
        guard sessions.count < configuration.maxSessions else {
            throw ProtocolError(.limitExceeded, "the daemon holds \(sessions.count) sessions, the most --max-sessions allows")
        }
        var sid: String
        repeat { sid = "s-" + randomHex(bytes: 8) } while sessions[sid] != nil
        let serial = nextSessionSerial
        nextSessionSerial += 1
        let record = SessionRecord(id: sid, serial: serial, engine: SessionEngine(configuration: configuration.engine))
        if let page { record.pages[.webview(1)] = page }
        if let subscriber {
            // The creator hears what its all-sessions subscription asked for, else everything.
            let filter = allSubscribers.first { $0.client == subscriber }?.filter ?? .all
            record.subscribers.append((subscriber, filter))
        }
        sessions.insert(record)
        sessionIDBySerial[serial] = sid
        if let subscriber, case .controller(var info)? = clients[subscriber]?.role {
            info.sessions.append(sid)
            clients[subscriber]?.role = .controller(info)
        }
        let token = randomHex(bytes: 16)
        var rootURL = url
        if let router {
            let route = makeRouteSession(router: router, url: url)
            rootURL = route.tree.activeStack.first?.url ?? url
            sessions[sid]!.route = route
        }
        _ = step(sid, .createRoot(url: rootURL, token: token, connected: page != nil), now: now)
        if let route = sessions[sid]!.route {
            let stack = sessions[sid]!.engine.stack
            _ = step(sid, .adopt(stack: stack, removed: [], singleTab: true,
                                 nextIDs: IDCounters(webview: route.ids.nextWebview, placeholder: route.ids.nextPlaceholder,
                                                     native: route.ids.nextNative)), now: now)
            issueTokens(sid)
        }
        updateIdle(sid, now: now)
        return sid
    }


    func existingSession(_ p: Params) throws(ProtocolError) -> String {
        let sid = try p.session()
        guard sessions[sid] != nil else { throw ProtocolError(.unknownSession, "no session \"\(sid)\"") }
        return sid
    }

    mutating func subscribe(_ client: ClientID, session sid: String?, filter: EventFilter, now: Int64) {
        guard case .controller(var info)? = clients[client]?.role else { return }
        if let sid {
            if let i = sessions[sid]!.subscribers.firstIndex(where: { $0.client == client }) {
                sessions[sid]!.subscribers[i].filter = filter
            } else {
                sessions[sid]!.subscribers.append((client, filter))
                info.sessions.append(sid)
                clients[client]?.role = .controller(info)
            }
            updateIdle(sid, now: now)
        } else if let i = allSubscribers.firstIndex(where: { $0.client == client }) {
            allSubscribers[i].filter = filter
        } else {
            allSubscribers.append((client, filter))
        }
    }

    mutating func unsubscribe(_ client: ClientID, session sid: String?, now: Int64) {
        guard case .controller(var info)? = clients[client]?.role else { return }
        if let sid {
            sessions[sid]?.subscribers.removeAll { $0.client == client }
            info.sessions.removeAll { $0 == sid }
            clients[client]?.role = .controller(info)
            updateIdle(sid, now: now)
        } else {
            allSubscribers.removeAll { $0.client == client }
        }
    }

    /// Closes a session: pages told and closed, subscribers told, everything forgotten.
    mutating func closeSession(_ sid: String, reason: String, now: Int64) {
        guard sessions[sid] != nil else { return }
        _ = step(sid, .close(reason: reason == "closed" ? "session-closed" : reason), now: now)
        flush(sid, cause: "session.close", now: now)
        emit(sid, "session.closed") { w in w.key("reason"); w.string(reason) }
        let record = sessions.removeValue(forKey: sid)!
        sessionIDBySerial[record.serial] = nil
        for (client, _) in record.subscribers {
            if case .controller(var info)? = clients[client]?.role {
                info.sessions.removeAll { $0 == sid }
                clients[client]?.role = .controller(info)
            }
        }
    }
}

extension Bridge {
    mutating func sessionRequest(_ method: SessionMethod, _ client: ClientID, id: Int64, _ p: Params, now: Int64) throws(ProtocolError) {
        switch method {
        case .create:
            let url = try p.optionalString("url").map(PageURL.stripClaim) ?? ""
            let sid = try createSession(url: url, connectedBy: nil, subscriber: client, now: now)
            let w1 = ItemID.webview(1)
            let token = sessions[sid]!.engine.webView(w1)!.token
            sendResult(client, id: id) { w in
                w.key("session"); w.string(sid)
                w.key("webview"); w.string("W1")
                w.key("token"); w.string(token)
                w.key("pageUrl"); w.string(PageURL.withClaim(url, session: sid, webview: w1, token: token))
            }
            emit(sid, "session.created") { _ in }
            flush(sid, cause: "session.create", now: now)
        case .list:
            var list = JSONWriter(capacity: 256)
            writeSessionArray(into: &list, now: now)
            let sessionsJSON = list.bytes
            sendResult(client, id: id) { w in
                w.key("sessions"); w.raw(sessionsJSON)
            }
        case .get:
            let sid = try existingSession(p)
            let stack = stackJSON(sid)
            var extra = JSONWriter(capacity: 128)
            writeForeground(sid, into: &extra, now: now)
            let foreground = extra.bytes
            var handlers: [(String, String?)] = []
            for name in ["navigate", "webview.open"] {
                if let h = handler(of: name, in: sid), case .controller(let info)? = clients[h]?.role {
                    handlers.append((name, info.name))
                } else {
                    handlers.append((name, nil))
                }
            }
            let canGoBack = sessions[sid]!.engine.canGoBack
            sendResult(client, id: id) { w in
                w.key("session"); w.string(sid)
                w.key("stack"); w.raw(stack)
                w.key("foreground"); w.raw(foreground)
                w.key("handlers")
                w.beginObject()
                for (name, controller) in handlers {
                    w.key(name)
                    if let controller { w.string(controller) } else { w.null() }
                }
                w.endObject()
                w.key("canGoBack"); w.bool(canGoBack)
            }
        case .close:
            let sid = try existingSession(p)
            sendResult(client, id: id) { _ in }
            closeSession(sid, reason: "closed", now: now)
        case .subscribe:
            let sid = try p.optionalString("session")
            let events = try p.optionalStringArray("events")
            if let sid, sessions[sid] == nil { throw ProtocolError(.unknownSession, "no session \"\(sid)\"") }
            subscribe(client, session: sid, filter: EventFilter(names: events.map(Set.init)), now: now)
            sendResult(client, id: id) { _ in }
        case .unsubscribe:
            let sid = try p.optionalString("session")
            unsubscribe(client, session: sid, now: now)
            sendResult(client, id: id) { _ in }
        }
    }
}

extension Bridge {
    /// Marks the session idle when no page and no controller holds it (the sweep discards it
    /// after `sessionIdleSeconds`), and busy again when one does.
    mutating func updateIdle(_ sid: String, now: Int64) {
        guard let s = sessions[sid] else { return }
        let idle = s.pages.isEmpty && s.subscribers.isEmpty
        if idle, s.idleSince == nil {
            sessions[sid]!.idleSince = now
        } else if !idle, s.idleSince != nil {
            sessions[sid]!.idleSince = nil
        }
    }
}
