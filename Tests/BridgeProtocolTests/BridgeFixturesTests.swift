import Testing
@testable import BridgeProtocol

// Helpers shared by the Bridge*Tests suites: setting up pages and controllers, snapshots of
// the whole protocol state (the Bridge itself), and frames that must be refused without changing anything.

/// A page that said hello: its connection and what the daemon handed it.
struct PageHandle {
    var client: ClientID
    var session: String
    var webview: String
    var token: String
    var pageUrl: String
}

extension BridgeHarness {
    // MARK: Setting up

    /// A controller that said hello (loopback, no token unless given).
    mutating func controller(handles: [String] = [], token: String? = nil, loopback: Bool = true,
                             subscribeAll: Bool = false, sourceLocation: SourceLocation = #_sourceLocation) -> ClientID {
        let c = connect(loopback: loopback)
        var params: JSONObject = ["protocol": 1, "role": "controller"]
        if !handles.isEmpty { params["handles"] = .array(handles.map { .string($0) }) }
        if let token { params["token"] = .string(token) }
        let r = request(c, "hello", .object(params))
        #expect(r["result"]?["protocol"] == 1, "controller hello: \(r)", sourceLocation: sourceLocation)
        if subscribeAll {
            #expect(request(c, "session.subscribe")["result"] == .object([:]), sourceLocation: sourceLocation)
        }
        return c
    }

    /// A page that said hello without a claim, so a new session was created for it.
    mutating func newPage(url: String = "http://h/app/", sourceLocation: SourceLocation = #_sourceLocation) -> PageHandle {
        let c = connect()
        let r = request(c, "hello", ["protocol": 1, "role": "page", "url": .string(url)])
        #expect(r["result"] != nil, "page hello: \(r)", sourceLocation: sourceLocation)
        return PageHandle(client: c, session: r["result"]?["session"]?.stringValue ?? "",
                          webview: r["result"]?["webview"]?.stringValue ?? "",
                          token: r["result"]?["token"]?.stringValue ?? "",
                          pageUrl: r["result"]?["pageUrl"]?.stringValue ?? "")
    }

    /// A new connection that claims `webview` of `session` with `token`; returns it and the reply.
    mutating func claim(_ session: String, _ webview: String, _ token: String, url: String? = nil) -> (ClientID, JSONValue) {
        let c = connect()
        var params: JSONObject = ["protocol": 1, "role": "page", "session": .string(session),
                                  "webview": .string(webview), "token": .string(token)]
        if let url { params["url"] = .string(url) }
        return (c, request(c, "hello", .object(params)))
    }

    /// Like `claim`, but expects success and returns a handle.
    mutating func claimed(_ session: String, _ webview: String, _ token: String, url: String? = nil,
                          sourceLocation: SourceLocation = #_sourceLocation) -> PageHandle {
        let (c, r) = claim(session, webview, token, url: url)
        #expect(r["result"]?["webview"] == .string(webview), "claim of \(webview): \(r)", sourceLocation: sourceLocation)
        return PageHandle(client: c, session: session, webview: webview, token: token,
                          pageUrl: r["result"]?["pageUrl"]?.stringValue ?? "")
    }

    /// `navigation.navigateToUrl` from a controller; returns the result object.
    mutating func push(_ ctl: ClientID, _ session: String, _ url: String, sourceLocation: SourceLocation = #_sourceLocation) -> JSONValue {
        let r = request(ctl, "navigation.navigateToUrl", ["session": .string(session), "url": .string(url)])
        #expect(r["result"] != nil, "navigateToUrl: \(r)", sourceLocation: sourceLocation)
        return r["result"] ?? .null
    }

    /// The session's stack ids as `"P1 W1 W2"`.
    func stackIDs(_ session: String) -> String {
        bridge.engine(of: session)?.stack.map(\.id.description).joined(separator: " ") ?? "<no session>"
    }

    /// The result of `session.get` for `session`, asked by a throwaway controller.
    mutating func sessionGet(_ session: String) -> JSONValue {
        let c = controller()
        let r = request(c, "session.get", ["session": .string(session)])
        disconnect(c)
        return r
    }

    /// Events named `name` sent to `c`, their params, and removes nothing.
    func eventParams(_ c: ClientID, _ name: String) -> [JSONValue] {
        events(c, name).map { $0["params"] ?? .null }
    }

    /// Names of the events `c` has been sent, in order (from inbox position `since` on).
    func eventNames(_ c: ClientID, since: Int = 0) -> [String] {
        (inbox[c] ?? []).dropFirst(since).compactMap { $0["event"]?.stringValue }
    }

    // MARK: Snapshots

    /// The whole protocol state (a `Bridge` is a value): what a refused frame must leave as
    /// it was, router trees, tokens and the generator included.
    func snapshot() -> Bridge<SeededRandom> { bridge }

    // MARK: Frames and effects

    /// Hands `text` to the bridge and returns the effects it produced, after applying them to
    /// the harness (inbox, closes, timers) the way `collect` does.
    mutating func frame(_ c: ClientID, _ text: String) -> [BridgeEffect] {
        bridge.received(c, text: Array(text.utf8), at: now)
        let effects = bridge.drainEffects()
        apply(effects)
        return effects
    }

    /// What `collect` does, for effects already drained, without trapping on a send after a
    /// close (callers check that themselves).
    mutating func apply(_ effects: [BridgeEffect]) {
        for effect in effects {
            switch effect {
            case .send(let c, let bytes):
                if let value = try? JSONParser.parse(bytes) { inbox[c, default: []].append(value) }
            case .close(let c, let code, _):
                closed[c] = code
            case .schedule(let key, let ms):
                timers[key] = now + Int64(ms) * 1000
            case .host:
                break  // browser sessions only; none here
            case .cancel(let key):
                timers[key] = nil
            }
        }
    }

    /// Sends a frame that the contract says must be refused with `code` and reply id `id`:
    /// exactly one reply goes back to the sender (followed by `thenEvents`, by name, to the
    /// sender), nobody else hears anything, no timer moves, and the state is unchanged.
    @discardableResult
    mutating func refused(_ c: ClientID, _ text: String, id: JSONValue, code: String, thenEvents: [String] = [],
                          sourceLocation: SourceLocation = #_sourceLocation) -> JSONValue? {
        let before = snapshot()
        bridge.received(c, text: Array(text.utf8), at: now)
        let effects = bridge.drainEffects()
        #expect(snapshot() == before, "\(text) changed the state", sourceLocation: sourceLocation)
        var frames: [JSONValue] = []
        for effect in effects {
            guard case .send(let to, let bytes) = effect, to == c else {
                Issue.record("\(text): unexpected effect \(effect)", sourceLocation: sourceLocation)
                continue
            }
            guard let value = try? JSONParser.parse(bytes) else {
                Issue.record("\(text): the daemon sent invalid JSON", sourceLocation: sourceLocation)
                continue
            }
            frames.append(value)
        }
        #expect(frames.count == 1 + thenEvents.count, "\(text): sent \(frames)", sourceLocation: sourceLocation)
        guard let reply = frames.first else { return nil }
        #expect(reply["id"] == id, "\(text): reply id \(reply)", sourceLocation: sourceLocation)
        #expect(reply["result"] == nil, "\(text): \(reply)", sourceLocation: sourceLocation)
        #expect(reply["error"]?["code"] == .string(code), "\(text): \(reply)", sourceLocation: sourceLocation)
        let message = reply["error"]?["message"]?.stringValue ?? ""
        #expect(!message.isEmpty, "\(text): an error needs a message", sourceLocation: sourceLocation)
        let names = frames.dropFirst().map { $0["event"]?.stringValue ?? "<not an event>" }
        #expect(names == thenEvents, "\(text): events after the reply", sourceLocation: sourceLocation)
        return reply
    }

    /// Sends a frame that must produce nothing at all and change nothing.
    mutating func ignored(_ c: ClientID, _ text: String, sourceLocation: SourceLocation = #_sourceLocation) {
        let before = snapshot()
        bridge.received(c, text: Array(text.utf8), at: now)
        let effects = bridge.drainEffects()
        #expect(effects.isEmpty, "\(text): \(effects)", sourceLocation: sourceLocation)
        #expect(snapshot() == before, "\(text) changed the state", sourceLocation: sourceLocation)
    }
}

/// The frames (parsed) and closes a sequence of effects addressed to `c`, in order, as short
/// labels: `reply 7`, `error 7 conflict`, `event closed`, `close 1000`.
func trace(_ effects: [BridgeEffect], for c: ClientID) -> [String] {
    effects.compactMap { effect -> String? in
        switch effect {
        case .send(let to, let bytes) where to == c:
            guard let v = try? JSONParser.parse(bytes) else { return "invalid json" }
            if let name = v["event"]?.stringValue { return "event \(name)" }
            let id = v["id"].map { $0.jsonString } ?? "?"
            if let code = v["error"]?["code"]?.stringValue { return "error \(id) \(code)" }
            return "reply \(id)"
        case .close(let to, let code, _) where to == c:
            return "close \(code)"
        default:
            return nil
        }
    }
}
