/// Page requests and events (contract section 5), except the navigation ones (Navigation.swift).
extension Bridge {
    mutating func pageRequest(_ client: ClientID, id: Int64, method name: String, _ p: Params, session sid: String, webview: ItemID, now: Int64) throws(ProtocolError) {
        guard let method = PageMethod(rawValue: name) else {
            if name == "hello" { throw ProtocolError(.conflict, "this connection already said hello") }
            if ControllerMethod(name) != nil {
                throw ProtocolError(.notAllowed, "\"\(name)\" is for controllers; this connection is a page")
            }
            throw ProtocolError(.unknownMethod, "no method \"\(name)\"")
        }
        switch method {
        case .pwaNavigate:
            let url = try p.optionalString("url").map(PageURL.stripClaim)
            let title = try p.optionalString("title")
            switch step(sid, .pwaNavigate(from: webview, url: url, title: title), now: now) {
            case .success(.pwaNavigate(let placeholder)):
                let stack = stackJSON(sid)
                sendResult(client, id: id) { w in
                    w.appendRaw(#""placeholder":"#)
                    w.appendQuotedID(placeholder)
                    w.appendRaw(#","stack":"#)
                    w.bytes.append(contentsOf: stack)
                    w.afterRawValue()
                }
            case .success: break
            case .failure(let e): sendError(client, id: id, ProtocolError(e))
            }
            flush(sid, cause: "pwa-navigate", now: now)
        case .pwaRendered:
            switch step(sid, .pwaRendered(from: webview), now: now) {
            case .success(.pwaRendered(let removed, let latency)):
                sendResult(client, id: id) { w in
                    if removed, let latency {
                        w.appendRaw(#""removed":true,"reason":"rendered","latencyMs":"#)
                        w.appendDigits(latency)
                    } else {
                        w.appendRaw(removed ? #""removed":true"# : #""removed":false"#)
                    }
                    w.afterRawValue()
                }
            case .success: break
            case .failure(let e): sendError(client, id: id, ProtocolError(e))
            }
            flush(sid, cause: "pwa-rendered", now: now)
        case .back:
            back(sid, requester: webview, replyTo: (client, id), cause: "back", now: now)
        case .navigate:
            let url = try p.string("url")
            navigate(sid, from: webview, client: client, url: url, replyTo: id, now: now)
        case .ping:
            sendResult(client, id: id) { _ in }
        case .deeplinkOpen:
            guard sessions[sid]?.route != nil else {
                throw ProtocolError(.unknownMethod, "\"deeplink.open\" needs a routing configuration: start bridged with --config FILE")
            }
            let action = try Self.deeplinkAction(p)
            let outcome = try runRouterAction(action, on: sid, requester: webview, cause: "deeplink.open", now: now)
            writeOutcome(client, id: id, outcome, sid)
        }
    }

    mutating func pageEvent(_ client: ClientID, name: String, _ p: Params, session sid: String, webview: ItemID, now: Int64) throws(ProtocolError) {
        guard let event = PageEventName(rawValue: name) else {
            emit(sid, "app.event") { w in
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
            _ = step(sid, .pwaNavigate(from: webview, url: url, title: title), now: now)
            flush(sid, cause: "pwa-navigate", now: now)
        case .pwaRendered:
            _ = step(sid, .pwaRendered(from: webview), now: now)
            flush(sid, cause: "pwa-rendered", now: now)
        case .back:
            back(sid, requester: webview, replyTo: nil, cause: "back", now: now)
        case .navigate:
            let url = try p.string("url")
            navigate(sid, from: webview, client: client, url: url, replyTo: nil, now: now)
        case .pwaNavigated:
            let url = PageURL.stripClaim(try p.string("url"))
            let source = try p.optionalString("source")
            if case .success = step(sid, .pwaNavigated(from: webview, url: url), now: now) {
                engineEffects.removeAll(keepingCapacity: true)
                emit(sid, "pwa-navigated") { w in
                    w.key("webview"); w.string(webview.description)
                    w.key("url"); w.string(url)
                    if let source { w.key("source"); w.string(source) }
                }
            }
            flush(sid, cause: "pwa-navigated", now: now)
        }
    }

}
