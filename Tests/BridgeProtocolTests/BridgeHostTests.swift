import Testing
@testable import BridgeProtocol

/// Browser sessions at the pure level: what the Bridge hands its host (`HostCall`) names web views
/// and placeholders by `ItemID`; the wire text ("W2") is parsed only from the frames that arrive.
@Suite struct BridgeHostTests {
    /// A browser session created by a controller that handles `webview.open` (as the daemon's
    /// browser does); returns the controller, the session and W1's token.
    static func browserSession(_ h: inout BridgeHarness) -> (ClientID, String, String) {
        let ctl = h.controller(handles: ["webview.open"])
        let id = h.nextID
        // The reply waits for the browser: the host sends it.
        #expect(h.request(ctl, "session.create", ["url": "http://h/a/", "browser": true]) == .null)
        guard case .createBrowserSession(let client, let requestID, let sid, let webview, let url, let token, let reply)? = h.hostCalls.last else {
            Issue.record("no createBrowserSession in \(h.hostCalls)")
            return (ctl, "", "")
        }
        #expect(client == ctl && requestID == id)
        #expect(webview == .webview(1))
        #expect(url == "http://h/a/")
        let frame = try? JSONParser.parse(reply)
        #expect(frame?["id"] == .int(id))
        #expect(frame?["result"]?["session"] == .string(sid))
        #expect(frame?["result"]?["webview"] == "W1")
        #expect(frame?["result"]?["token"] == .string(token))
        #expect(h.bridge.isBrowserSession(sid))
        return (ctl, sid, token)
    }

    @Test func claimsOfASecondTabCarryItsItemID() {
        var h = BridgeHarness()
        let (ctl, sid, token) = Self.browserSession(&h)
        let p1 = h.claimed(sid, "W1", token, url: "http://h/a/")
        #expect(h.hostCalls.last == .pageClaimed(client: p1.client, session: sid, webview: .webview(1)))
        let w2 = h.push(ctl, sid, "http://h/b")
        #expect(w2["webview"] == "W2")
        let p2 = h.claimed(sid, "W2", w2["token"]?.stringValue ?? "", url: "http://h/b")
        #expect(h.hostCalls.last == .pageClaimed(client: p2.client, session: sid, webview: .webview(2)))

        #expect(h.bridge.pageClient(session: sid, webview: .webview(1)) == p1.client)
        #expect(h.bridge.pageClient(session: sid, webview: .webview(2)) == p2.client)
        #expect(h.bridge.pageClient(session: sid, webview: .webview(3)) == nil)
        #expect(h.bridge.pageClient(session: sid, webview: .placeholder(2)) == nil)
        #expect(h.bridge.pageClient(session: "s-none", webview: .webview(1)) == nil)
        h.disconnect(p2.client)
        #expect(h.bridge.pageClient(session: sid, webview: .webview(2)) == nil)
    }

    @Test func requestsForTheBrowserNameTheirTargetByItemID() {
        var h = BridgeHarness()
        let (ctl, sid, token) = Self.browserSession(&h)
        _ = h.claimed(sid, "W1", token, url: "http://h/a/")
        let w2 = h.push(ctl, sid, "http://h/b")
        let p2 = h.claimed(sid, "W2", w2["token"]?.stringValue ?? "", url: "http://h/b")
        // The PWA in W2 navigates: a placeholder P1 goes under it.
        #expect(h.request(p2.client, "pwa-navigate", ["url": "http://h/b/1"])["result"] != nil)
        #expect(h.stackIDs(sid) == "W1 P1 W2")

        func hostRequest(_ method: String, _ params: JSONObject) -> (id: Int64, call: HostCall?) {
            let id = h.nextID
            let before = h.hostCalls.count
            var p = params
            p["session"] = .string(sid)
            #expect(h.request(ctl, method, .object(p)) == .null, "\(method): the browser replies, not the Bridge")
            return (id, h.hostCalls.count == before + 1 ? h.hostCalls.last : nil)
        }
        let cases: [(String, JSONObject, ItemID)] = [
            ("webview.evaluate", ["webview": "W1", "expression": "1 + 1"], .webview(1)),
            ("webview.click", ["webview": "W2", "selector": "#go"], .webview(2)),
            ("webview.type", ["webview": "W2", "selector": "#q", "text": "x"], .webview(2)),
            ("session.screenshot", [:], .webview(2)),
            ("placeholder.snapshot", ["placeholder": "P1"], .placeholder(1)),
        ]
        for (method, params, target) in cases {
            let (id, call) = hostRequest(method, params)
            guard case .request(let client, let requestID, let m, let session, let t, _)? = call else {
                Issue.record("\(method): no host request in \(h.hostCalls)")
                continue
            }
            #expect(client == ctl && requestID == id && m == method && session == sid)
            #expect(t == target, "\(method)")
        }

        // Text that names no item of the stack is refused where it arrives; the host hears nothing.
        let before = h.hostCalls
        let refused: [(String, JSONObject, String)] = [
            ("webview.evaluate", ["webview": "W9", "expression": "1"], "unknown-webview"),
            ("webview.evaluate", ["webview": "w1", "expression": "1"], "unknown-webview"),
            ("webview.click", ["webview": "P1", "selector": "#go"], "unknown-webview"),
            ("placeholder.snapshot", ["placeholder": "W1"], "invalid-params"),
            ("placeholder.snapshot", ["placeholder": "P01"], "invalid-params"),
        ]
        for (method, params, code) in refused {
            var p = params
            p["session"] = .string(sid)
            let r = h.request(ctl, method, .object(p))
            #expect(r["error"]?["code"] == .string(code), "\(method) \(params): \(r)")
        }
        #expect(h.hostCalls == before)
    }
}
