import Testing
@testable import BridgeProtocol

/// Section 2: replies in request order, a reply before the events its request caused; section 5:
/// a page popped by its own `back` gets the reply, then `closed`, then the close.
@Suite struct BridgeOrderingTests {
    /// Sends a request and returns what its sender got, in order, as `trace` labels.
    static func traced(_ h: inout BridgeHarness, _ c: ClientID, _ method: String, _ params: JSONValue = .object([:])) -> (id: Int64, trace: [String]) {
        let id = h.nextID
        h.nextID += 1
        let frame: JSONValue = ["id": .int(id), "method": .string(method), "params": params]
        return (id, trace(h.frame(c, frame.jsonString), for: c))
    }

    @Test func pageRepliesComeInRequestOrderAndFirst() {
        var h = BridgeHarness()
        let page = h.newPage()
        var ids: [Int64] = [h.nextID - 1]  // the hello
        func check(_ method: String, _ params: JSONValue = .object([:]), then events: [String] = [],
                   sourceLocation: SourceLocation = #_sourceLocation) {
            let (id, t) = Self.traced(&h, page.client, method, params)
            ids.append(id)
            #expect(t.first?.hasSuffix(" \(id)") == true || t.first?.contains(" \(id) ") == true, "\(method): \(t)", sourceLocation: sourceLocation)
            #expect(Array(t.dropFirst()) == events.map { "event \($0)" }, "\(method): \(t)", sourceLocation: sourceLocation)
        }
        check("pwa-navigate", ["url": "http://h/app/a"])
        check("ping")
        check("pwa-navigate", ["url": "http://h/app/b"])
        check("frobnicate")
        check("pwa-rendered")
        check("back", then: ["back"])
        check("pwa-rendered")
        check("back", then: ["back"])
        check("back")
        // Every reply, in the order of the requests.
        let replyIDs = (h.inbox[page.client] ?? []).compactMap { $0["id"]?.intValue }
        #expect(replyIDs == ids)
    }

    /// A controller's request that causes events to the controller itself: the reply first.
    @Test func controllerReplyComesBeforeTheEventsItCaused() {
        var h = BridgeHarness()
        let ctl = h.controller(subscribeAll: true)

        let create = Self.traced(&h, ctl, "session.create", ["url": "http://h/app/"])
        #expect(create.trace == ["reply \(create.id)", "event session.created", "event stack.changed"])
        let sid = h.inbox[ctl]?.first { $0["id"] == .int(create.id) }?["result"]?["session"]?.stringValue ?? ""
        let w1 = h.bridge.engine(of: sid)?.webView(.webview(1))?.token ?? ""
        let page = h.claimed(sid, "W1", w1)
        _ = h.request(page.client, "pwa-navigate", ["url": "http://h/app/a"])

        let push = Self.traced(&h, ctl, "navigation.navigateToUrl", ["session": .string(sid), "url": "http://h/x"])
        #expect(push.trace.first == "reply \(push.id)")
        #expect(push.trace.contains("event webview.open") && push.trace.contains("event stack.changed")
                && push.trace.contains("event foreground.removed"), "\(push.trace)")

        let back = Self.traced(&h, ctl, "navigation.back", ["session": .string(sid)])
        #expect(back.trace.first == "reply \(back.id)")
        #expect(back.trace.contains("event stack.changed") && back.trace.contains("event webview.closed"), "\(back.trace)")

        let pop = Self.traced(&h, ctl, "navigation.popToRoot", ["session": .string(sid)])
        #expect(pop.trace.first == "reply \(pop.id)")

        let close = Self.traced(&h, ctl, "session.close", ["session": .string(sid)])
        #expect(close.trace.first == "reply \(close.id)")
        #expect(close.trace.last == "event session.closed", "\(close.trace)")
    }

    /// A handler's own request: `session.create` by a `navigate`/`webview.open` handler that is
    /// subscribed to every session gets its reply before `session.created`, once.
    @Test func createByAllSubscriberRepliesFirstAndOnce() {
        var h = BridgeHarness()
        let ctl = h.controller(handles: ["navigate", "webview.open"], subscribeAll: true)
        let create = Self.traced(&h, ctl, "session.create")
        #expect(create.trace == ["reply \(create.id)", "event session.created", "event stack.changed"])
    }

    /// A page's own back that pops it: the reply, then `closed`, then the 1000 close, and
    /// nothing after (single-tab: `closed` carries where to go).
    @Test func pagePoppedByItsOwnBackGetsReplyThenClosedThenClose() {
        var h = BridgeHarness()
        let a = h.newPage(url: "http://h/app/")
        h.event(a.client, "navigate", ["url": "http://h/two"])
        let load = h.eventParams(a.client, "load").first
        #expect(h.closed[a.client] == 1000)
        let b = h.claimed(a.session, "W2", load?["token"]?.stringValue ?? "")
        let id = h.nextID
        h.nextID += 1
        let effects = h.frame(b.client, #"{"id":\#(id),"method":"back"}"#)
        #expect(trace(effects, for: b.client) == ["reply \(id)", "event closed", "close 1000"])
        let reply = h.inbox[b.client]?.first { $0["id"] == .int(id) }
        #expect(reply?["result"]?["action"] == "pop")
        #expect(reply?["result"]?["removed"] == ["W2"])
        #expect(BridgeHarness.ids(reply?["result"]?["stack"]) == "W1")
        let closed = h.eventParams(b.client, "closed").first
        #expect(closed?["reason"] == "popped")
        #expect(closed?["load"]?["webview"] == "W1")
        #expect(closed?["load"]?["token"] == .string(a.token))
        #expect(closed?["load"]?["session"] == .string(a.session))
        #expect(closed?["load"]?["pageUrl"] == .string(a.pageUrl))
        #expect(closed?["load"]?["url"] == "http://h/app/")
    }

    /// The same with a `webview.open` handler (the web view below keeps its page): no `load`.
    @Test func pagePoppedByItsOwnBackWithTabsGetsNoLoad() {
        var h = BridgeHarness()
        let ctl = h.controller(handles: ["webview.open"], subscribeAll: true)
        let a = h.newPage()
        let w2 = h.push(ctl, a.session, "http://h/two")
        #expect(h.closed[a.client] == nil)
        let b = h.claimed(a.session, "W2", w2["token"]?.stringValue ?? "")
        let (id, t) = Self.traced(&h, b.client, "back")
        #expect(t == ["reply \(id)", "event closed", "close 1000"])
        #expect(h.eventParams(b.client, "closed").first == ["reason": "popped"])
        #expect(h.closed[a.client] == nil)
        #expect(h.sessionGet(a.session)["result"]?["stack"]?[0]?["connected"] == true)
    }

    /// The event form of a popping back: `closed`, then the close; no reply.
    @Test func pagePoppedByItsOwnBackEvent() {
        var h = BridgeHarness()
        let ctl = h.controller(handles: ["webview.open"], subscribeAll: true)
        let a = h.newPage()
        let w2 = h.push(ctl, a.session, "http://h/two")
        let b = h.claimed(a.session, "W2", w2["token"]?.stringValue ?? "")
        let effects = h.frame(b.client, #"{"event":"back"}"#)
        #expect(trace(effects, for: b.client) == ["event closed", "close 1000"])
        #expect(h.stackIDs(a.session) == "W1")
    }

    /// A page's `navigate` request in single-tab mode: the reply, then `load`, then the close.
    @Test func navigateRequestRepliesBeforeLoadAndClose() {
        var h = BridgeHarness()
        let a = h.newPage()
        let (id, t) = Self.traced(&h, a.client, "navigate", ["url": "http://h/two"])
        #expect(t == ["reply \(id)", "event load", "close 1000"])
        let reply = h.inbox[a.client]?.first { $0["id"] == .int(id) }
        #expect(reply?["result"]?["webview"] == "W2")
        #expect(BridgeHarness.ids(reply?["result"]?["stack"]) == "W1 W2")
    }

    /// A swap: the reply, then the page's `back` event.
    @Test func swapRepliesBeforeBackEvent() {
        var h = BridgeHarness()
        let a = h.newPage()
        _ = h.request(a.client, "pwa-navigate", ["url": "http://h/app/a"])
        _ = h.request(a.client, "pwa-rendered")
        let (id, t) = Self.traced(&h, a.client, "back")
        #expect(t == ["reply \(id)", "event back"])
        #expect(h.eventParams(a.client, "back").first == ["placeholder": "P1", "url": "http://h/app/"])
    }
}
