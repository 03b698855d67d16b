import Testing
@testable import BridgeProtocol

/// Who sends a bad frame in `BridgeEnvelopeTests`.
enum Sender: String, Sendable {
    /// Connected, no hello yet.
    case fresh
    /// The page of session A's top web view W2.
    case page
    /// The page of session A's W1, covered by W2 (a `webview.open` handler keeps it connected).
    case coveredPage
    /// The page of session A's W3, popped by a controller's back (its web view is gone).
    case poppedPage
    /// The first page of session B's W1, replaced by a newer claim (its web view is still there).
    case replacedPage
    /// A loopback controller that handles `webview.open` and is subscribed to every session.
    case controller
}

/// One bad frame and what the contract says it gets. In `frame`, `$A`/`$B` stand for the
/// session ids, `$TA1`, `$TA2`, `$TA3`, `$TB1` for the tokens of A's W1–W3 and B's W1.
struct BadFrame: Sendable, CustomTestStringConvertible {
    var sender: Sender
    var frame: String
    /// The reply's `id`: nil for `"id": null`.
    var id: Int64?
    var code: String
    var thenEvents: [String] = []

    init(_ sender: Sender, _ frame: String, _ id: Int64?, _ code: String, then events: [String] = []) {
        self.sender = sender
        self.frame = frame
        self.id = id
        self.code = code
        self.thenEvents = events
    }

    var testDescription: String { "\(sender.rawValue): \(frame) → \(code)" }
}

/// A daemon with two sessions and connections in every state a bad frame can come from.
struct EnvelopeWorld {
    var h = BridgeHarness()
    var clients: [Sender: ClientID] = [:]
    var substitutions: [(String, String)] = []

    init() {
        let ctl = h.controller(handles: ["webview.open"], subscribeAll: true)
        let a1 = h.newPage(url: "http://h/app/")
        let sidA = a1.session
        let w2 = h.push(ctl, sidA, "http://h/two")
        let a2 = h.claimed(sidA, "W2", w2["token"]?.stringValue ?? "")
        let w3 = h.push(ctl, sidA, "http://h/three")
        let a3 = h.claimed(sidA, "W3", w3["token"]?.stringValue ?? "")
        let back = h.request(ctl, "navigation.back", ["session": .string(sidA)])
        #expect(back["result"]?["action"] == "pop")
        #expect(h.closed[a3.client] == 1000)
        let b1 = h.newPage(url: "http://h/b/")
        let b1again = h.claimed(b1.session, "W1", b1.token)
        #expect(h.closed[b1.client] == 1000)
        #expect(h.stackIDs(sidA) == "W1 W2")
        clients = [.fresh: h.connect(), .page: a2.client, .coveredPage: a1.client, .poppedPage: a3.client,
                   .replacedPage: b1.client, .controller: ctl]
        _ = b1again
        // Longest keys first, so `$TA1` is not read as `$A` followed by text.
        substitutions = [("$TA1", a1.token), ("$TA2", a2.token), ("$TA3", a3.token), ("$TB1", b1.token),
                         ("$A", sidA), ("$B", b1.session)]
    }

    func expand(_ text: String) -> String {
        var out = text
        for (key, value) in substitutions { out = out.replacingOccurrences(of: key, with: value) }
        return out
    }
}

extension String {
    /// Plain substring replacement, without Foundation.
    func replacingOccurrences(of target: String, with replacement: String) -> String {
        guard !target.isEmpty else { return self }
        var out = ""
        var rest = self[...]
        while let r = rest.firstRange(of: target) {
            out += rest[..<r.lowerBound]
            out += replacement
            rest = rest[r.upperBound...]
        }
        out += rest
        return out
    }
}

let envelopeCases: [BadFrame] = [
    // parse-error: not JSON at all.
    .init(.page, "not json", nil, "parse-error"),
    .init(.page, "", nil, "parse-error"),
    .init(.page, #"{"id":1,"method":"ping""#, nil, "parse-error"),
    .init(.page, #"{"id":1,"method":"ping",}"#, nil, "parse-error"),
    .init(.page, #"{'id':1,'method':'ping'}"#, nil, "parse-error"),
    .init(.page, #"{"id":1,"method":"ping"} {"id":2,"method":"ping"}"#, nil, "parse-error"),
    .init(.page, #"{"id":01,"method":"ping"}"#, nil, "parse-error"),
    .init(.fresh, "hello", nil, "parse-error"),
    .init(.controller, #"{"id":1,"#, nil, "parse-error"),
    // invalid-request: not an object.
    .init(.page, "[]", nil, "invalid-request"),
    .init(.page, #"[{"id":1,"method":"ping"}]"#, nil, "invalid-request"),
    .init(.page, #""ping""#, nil, "invalid-request"),
    .init(.page, "1", nil, "invalid-request"),
    .init(.page, "null", nil, "invalid-request"),
    .init(.fresh, "true", nil, "invalid-request"),
    .init(.controller, "[]", nil, "invalid-request"),
    // invalid-request: the id is missing or not an integer → id null.
    .init(.page, "{}", nil, "invalid-request"),
    .init(.page, #"{"method":"ping"}"#, nil, "invalid-request"),
    .init(.page, #"{"id":"1","method":"ping"}"#, nil, "invalid-request"),
    .init(.page, #"{"id":1.5,"method":"ping"}"#, nil, "invalid-request"),
    .init(.page, #"{"id":1e3,"method":"ping"}"#, nil, "invalid-request"),
    .init(.page, #"{"id":null,"method":"ping"}"#, nil, "invalid-request"),
    .init(.page, #"{"id":true,"method":"ping"}"#, nil, "invalid-request"),
    .init(.page, #"{"id":[1],"method":"ping"}"#, nil, "invalid-request"),
    .init(.page, #"{"id":{},"method":"ping"}"#, nil, "invalid-request"),
    .init(.page, #"{"id":100000000000000000000,"method":"ping"}"#, nil, "invalid-request"),
    .init(.fresh, #"{"id":"x","method":"hello","params":{"protocol":1,"role":"page"}}"#, nil, "invalid-request"),
    .init(.controller, #"{"method":"session.list"}"#, nil, "invalid-request"),
    // invalid-request: an integer id beyond ±2^53 is echoed.
    .init(.page, #"{"id":9007199254740993,"method":"ping"}"#, 9_007_199_254_740_993, "invalid-request"),
    .init(.page, #"{"id":-9007199254740993,"method":"ping"}"#, -9_007_199_254_740_993, "invalid-request"),
    .init(.page, #"{"id":9223372036854775807,"method":"ping"}"#, 9_223_372_036_854_775_807, "invalid-request"),
    .init(.controller, #"{"id":-9223372036854775808,"method":"session.list"}"#, -9_223_372_036_854_775_808, "invalid-request"),
    // invalid-request: method not a string, or neither method nor event.
    .init(.page, #"{"id":3,"method":5}"#, 3, "invalid-request"),
    .init(.page, #"{"id":3,"method":null}"#, 3, "invalid-request"),
    .init(.page, #"{"id":3,"method":["ping"]}"#, 3, "invalid-request"),
    .init(.controller, #"{"id":4,"method":{}}"#, 4, "invalid-request"),
    .init(.page, #"{"id":3}"#, 3, "invalid-request"),
    .init(.page, #"{"id":3,"params":{}}"#, 3, "invalid-request"),
    .init(.page, #"{"id":3,"event":"pwa-navigate"}"#, 3, "invalid-request"),
    .init(.page, #"{"params":{}}"#, nil, "invalid-request"),
    .init(.page, #"{"event":5}"#, nil, "invalid-request"),
    .init(.page, #"{"event":null}"#, nil, "invalid-request"),
    .init(.page, #"{"event":""}"#, nil, "invalid-request"),
    .init(.fresh, #"{"id":0}"#, 0, "invalid-request"),
    // invalid-params: params not an object.
    .init(.page, #"{"id":5,"method":"ping","params":[]}"#, 5, "invalid-params"),
    .init(.page, #"{"id":5,"method":"pwa-navigate","params":"x"}"#, 5, "invalid-params"),
    .init(.page, #"{"id":5,"method":"back","params":1}"#, 5, "invalid-params"),
    .init(.page, #"{"id":5,"method":"pwa-rendered","params":true}"#, 5, "invalid-params"),
    .init(.page, #"{"event":"pwa-navigate","params":[]}"#, nil, "invalid-params"),
    .init(.controller, #"{"id":5,"method":"session.list","params":[1]}"#, 5, "invalid-params"),
    .init(.fresh, #"{"id":5,"method":"hello","params":"x"}"#, 5, "invalid-params"),
    // invalid-params: hello.
    .init(.fresh, #"{"id":6,"method":"hello"}"#, 6, "invalid-params"),
    .init(.fresh, #"{"id":6,"method":"hello","params":{"protocol":2,"role":"page"}}"#, 6, "invalid-params"),
    .init(.fresh, #"{"id":6,"method":"hello","params":{"protocol":0,"role":"page"}}"#, 6, "invalid-params"),
    .init(.fresh, #"{"id":6,"method":"hello","params":{"protocol":"1","role":"page"}}"#, 6, "invalid-params"),
    .init(.fresh, #"{"id":6,"method":"hello","params":{"protocol":1.0,"role":"page"}}"#, 6, "invalid-params"),
    .init(.fresh, #"{"id":6,"method":"hello","params":{"protocol":null,"role":"page"}}"#, 6, "invalid-params"),
    .init(.fresh, #"{"id":6,"method":"hello","params":{"protocol":1}}"#, 6, "invalid-params"),
    .init(.fresh, #"{"id":6,"method":"hello","params":{"protocol":1,"role":"admin"}}"#, 6, "invalid-params"),
    .init(.fresh, #"{"id":6,"method":"hello","params":{"protocol":1,"role":"Page"}}"#, 6, "invalid-params"),
    .init(.fresh, #"{"id":6,"method":"hello","params":{"protocol":1,"role":5}}"#, 6, "invalid-params"),
    .init(.fresh, #"{"id":6,"method":"hello","params":{"protocol":1,"role":"page","url":5}}"#, 6, "invalid-params"),
    .init(.fresh, #"{"id":6,"method":"hello","params":{"protocol":1,"role":"page","session":5}}"#, 6, "invalid-params"),
    .init(.fresh, #"{"id":6,"method":"hello","params":{"protocol":1,"role":"page","session":"$A"}}"#, 6, "invalid-params"),
    .init(.fresh, #"{"id":6,"method":"hello","params":{"protocol":1,"role":"page","session":"$A","webview":"W1"}}"#, 6, "invalid-params"),
    .init(.fresh, #"{"id":6,"method":"hello","params":{"protocol":1,"role":"page","session":"$A","token":"$TA1"}}"#, 6, "invalid-params"),
    .init(.fresh, #"{"id":6,"method":"hello","params":{"protocol":1,"role":"page","webview":"W1","token":"$TA1"}}"#, 6, "invalid-params"),
    .init(.fresh, #"{"id":6,"method":"hello","params":{"protocol":1,"role":"page","session":"$A","webview":"W1","token":7}}"#, 6, "invalid-params"),
    .init(.fresh, #"{"id":6,"method":"hello","params":{"protocol":1,"role":"page","session":"$A","webview":1,"token":"$TA1"}}"#, 6, "invalid-params"),
    .init(.fresh, #"{"id":6,"method":"hello","params":{"protocol":1,"role":"controller","handles":"navigate"}}"#, 6, "invalid-params"),
    .init(.fresh, #"{"id":6,"method":"hello","params":{"protocol":1,"role":"controller","handles":[1]}}"#, 6, "invalid-params"),
    .init(.fresh, #"{"id":6,"method":"hello","params":{"protocol":1,"role":"controller","handles":["navigate","bogus"]}}"#, 6, "invalid-params"),
    .init(.fresh, #"{"id":6,"method":"hello","params":{"protocol":1,"role":"controller","handles":{}}}"#, 6, "invalid-params"),
    .init(.fresh, #"{"id":6,"method":"hello","params":{"protocol":1,"role":"controller","token":5}}"#, 6, "invalid-params"),
    // invalid-params: page requests.
    .init(.page, #"{"id":7,"method":"pwa-navigate","params":{"url":5}}"#, 7, "invalid-params"),
    .init(.page, #"{"id":7,"method":"pwa-navigate","params":{"url":["x"]}}"#, 7, "invalid-params"),
    .init(.page, #"{"id":7,"method":"pwa-navigate","params":{"title":false}}"#, 7, "invalid-params"),
    .init(.page, #"{"id":7,"method":"navigate","params":{}}"#, 7, "invalid-params"),
    .init(.page, #"{"id":7,"method":"navigate","params":{"url":5}}"#, 7, "invalid-params"),
    .init(.page, #"{"id":7,"method":"navigate","params":{"url":""}}"#, 7, "invalid-params", then: ["navigate.failed"]),
    // invalid-params: controller requests.
    .init(.controller, #"{"id":8,"method":"session.get"}"#, 8, "invalid-params"),
    .init(.controller, #"{"id":8,"method":"session.get","params":{"session":5}}"#, 8, "invalid-params"),
    .init(.controller, #"{"id":8,"method":"session.close","params":{}}"#, 8, "invalid-params"),
    .init(.controller, #"{"id":8,"method":"session.close","params":{"session":null}}"#, 8, "invalid-params"),
    .init(.controller, #"{"id":8,"method":"session.create","params":{"url":5}}"#, 8, "invalid-params"),
    .init(.controller, #"{"id":8,"method":"session.subscribe","params":{"session":5}}"#, 8, "invalid-params"),
    .init(.controller, #"{"id":8,"method":"session.subscribe","params":{"events":"stack.changed"}}"#, 8, "invalid-params"),
    .init(.controller, #"{"id":8,"method":"session.subscribe","params":{"session":"$A","events":[1]}}"#, 8, "invalid-params"),
    .init(.controller, #"{"id":8,"method":"navigation.navigateToUrl","params":{"session":"$A"}}"#, 8, "invalid-params"),
    .init(.controller, #"{"id":8,"method":"navigation.navigateToUrl","params":{"session":"$A","url":5}}"#, 8, "invalid-params"),
    .init(.controller, #"{"id":8,"method":"navigation.navigateToUrl","params":{"session":"$A","url":""}}"#, 8, "invalid-params"),
    .init(.controller, #"{"id":8,"method":"navigation.navigateToUrl","params":{"url":"http://h/x"}}"#, 8, "invalid-params"),
    .init(.controller, #"{"id":8,"method":"navigation.back","params":{}}"#, 8, "invalid-params"),
    .init(.controller, #"{"id":8,"method":"navigation.canGoBack","params":{"session":["$A"]}}"#, 8, "invalid-params"),
    .init(.controller, #"{"id":8,"method":"navigation.popToRoot","params":{"session":1}}"#, 8, "invalid-params"),
    // not-ready: any request before hello.
    .init(.fresh, #"{"id":9,"method":"ping"}"#, 9, "not-ready"),
    .init(.fresh, #"{"id":9,"method":"session.list"}"#, 9, "not-ready"),
    .init(.fresh, #"{"id":9,"method":"session.create"}"#, 9, "not-ready"),
    .init(.fresh, #"{"id":9,"method":"pwa-navigate","params":{"url":"http://h/x"}}"#, 9, "not-ready"),
    .init(.fresh, #"{"id":9,"method":"back"}"#, 9, "not-ready"),
    .init(.fresh, #"{"id":9,"method":"bogus"}"#, 9, "not-ready"),
    .init(.fresh, #"{"id":9,"method":"navigation.back","params":{"session":"$A"}}"#, 9, "not-ready"),
    // conflict: a second hello; pushes and backs from a covered web view.
    .init(.page, #"{"id":10,"method":"hello","params":{"protocol":1,"role":"page"}}"#, 10, "conflict"),
    .init(.page, #"{"id":10,"method":"hello","params":{"protocol":1,"role":"controller"}}"#, 10, "conflict"),
    .init(.controller, #"{"id":10,"method":"hello","params":{"protocol":1,"role":"controller"}}"#, 10, "conflict"),
    .init(.controller, #"{"id":10,"method":"hello","params":{"protocol":2}}"#, 10, "conflict"),
    .init(.poppedPage, #"{"id":10,"method":"hello","params":{"protocol":1,"role":"page"}}"#, 10, "conflict"),
    .init(.coveredPage, #"{"id":10,"method":"pwa-navigate","params":{"url":"http://h/app/x"}}"#, 10, "conflict"),
    .init(.coveredPage, #"{"id":10,"method":"back"}"#, 10, "conflict"),
    .init(.coveredPage, #"{"id":10,"method":"navigate","params":{"url":"http://h/x"}}"#, 10, "conflict", then: ["navigate.failed"]),
    // unknown-method.
    .init(.page, #"{"id":11,"method":"frobnicate"}"#, 11, "unknown-method"),
    .init(.page, #"{"id":11,"method":""}"#, 11, "unknown-method"),
    .init(.page, #"{"id":11,"method":"Ping"}"#, 11, "unknown-method"),
    .init(.page, #"{"id":11,"method":"pwa-navigated","params":{"url":"http://h/x"}}"#, 11, "unknown-method"),
    .init(.controller, #"{"id":11,"method":"frobnicate"}"#, 11, "unknown-method"),
    .init(.controller, #"{"id":11,"method":"session.destroy","params":{"session":"$A"}}"#, 11, "unknown-method"),
    // not-allowed: a page calling controller methods and vice versa.
    .init(.page, #"{"id":12,"method":"session.list"}"#, 12, "not-allowed"),
    .init(.page, #"{"id":12,"method":"session.create"}"#, 12, "not-allowed"),
    .init(.page, #"{"id":12,"method":"session.close","params":{"session":"$A"}}"#, 12, "not-allowed"),
    .init(.page, #"{"id":12,"method":"session.close","params":{"session":"$B"}}"#, 12, "not-allowed"),
    .init(.page, #"{"id":12,"method":"navigation.back","params":{"session":"$A"}}"#, 12, "not-allowed"),
    .init(.page, #"{"id":12,"method":"navigation.navigateToUrl","params":{"session":"$B","url":"http://h/x"}}"#, 12, "not-allowed"),
    .init(.page, #"{"id":12,"method":"session.subscribe"}"#, 12, "not-allowed"),
    .init(.controller, #"{"id":12,"method":"pwa-navigate","params":{"url":"http://h/x"}}"#, 12, "not-allowed"),
    .init(.controller, #"{"id":12,"method":"pwa-rendered"}"#, 12, "not-allowed"),
    .init(.controller, #"{"id":12,"method":"back"}"#, 12, "not-allowed"),
    .init(.controller, #"{"id":12,"method":"navigate","params":{"url":"http://h/x"}}"#, 12, "not-allowed"),
    // not-allowed: wrong claim tokens (including another web view's or another session's).
    .init(.fresh, #"{"id":13,"method":"hello","params":{"protocol":1,"role":"page","session":"$A","webview":"W2","token":"wrong"}}"#, 13, "not-allowed"),
    .init(.fresh, #"{"id":13,"method":"hello","params":{"protocol":1,"role":"page","session":"$A","webview":"W2","token":""}}"#, 13, "not-allowed"),
    .init(.fresh, #"{"id":13,"method":"hello","params":{"protocol":1,"role":"page","session":"$A","webview":"W2","token":"$TA1"}}"#, 13, "not-allowed"),
    .init(.fresh, #"{"id":13,"method":"hello","params":{"protocol":1,"role":"page","session":"$A","webview":"W1","token":"$TB1"}}"#, 13, "not-allowed"),
    .init(.fresh, #"{"id":13,"method":"hello","params":{"protocol":1,"role":"page","session":"$B","webview":"W1","token":"$TA1"}}"#, 13, "not-allowed"),
    .init(.fresh, #"{"id":13,"method":"hello","params":{"protocol":1,"role":"page","session":"$A","webview":"W2","token":"$TA2x"}}"#, 13, "not-allowed"),
    // not-allowed: a replaced page no longer speaks for its web view.
    .init(.replacedPage, #"{"id":13,"method":"pwa-navigate","params":{"url":"http://h/b/x"}}"#, 13, "not-allowed"),
    .init(.replacedPage, #"{"id":13,"method":"back"}"#, 13, "not-allowed"),
    // unknown-session.
    .init(.fresh, #"{"id":14,"method":"hello","params":{"protocol":1,"role":"page","session":"s-nope","webview":"W1","token":"$TA1"}}"#, 14, "unknown-session"),
    .init(.fresh, #"{"id":14,"method":"hello","params":{"protocol":1,"role":"page","session":"","webview":"W1","token":"$TA1"}}"#, 14, "unknown-session"),
    .init(.controller, #"{"id":14,"method":"session.get","params":{"session":"s-nope"}}"#, 14, "unknown-session"),
    .init(.controller, #"{"id":14,"method":"session.close","params":{"session":"s-nope"}}"#, 14, "unknown-session"),
    .init(.controller, #"{"id":14,"method":"session.subscribe","params":{"session":"s-nope"}}"#, 14, "unknown-session"),
    .init(.controller, #"{"id":14,"method":"navigation.navigateToUrl","params":{"session":"s-nope","url":"http://h/x"}}"#, 14, "unknown-session"),
    .init(.controller, #"{"id":14,"method":"navigation.back","params":{"session":"s-nope"}}"#, 14, "unknown-session"),
    .init(.controller, #"{"id":14,"method":"navigation.canGoBack","params":{"session":"s-nope"}}"#, 14, "unknown-session"),
    .init(.controller, #"{"id":14,"method":"navigation.popToRoot","params":{"session":"s-nope"}}"#, 14, "unknown-session"),
    // unknown-webview: claims of what is not a web view on the stack; requests of a popped page.
    .init(.fresh, #"{"id":15,"method":"hello","params":{"protocol":1,"role":"page","session":"$A","webview":"W3","token":"$TA3"}}"#, 15, "unknown-webview"),
    .init(.fresh, #"{"id":15,"method":"hello","params":{"protocol":1,"role":"page","session":"$A","webview":"W9","token":"$TA1"}}"#, 15, "unknown-webview"),
    .init(.fresh, #"{"id":15,"method":"hello","params":{"protocol":1,"role":"page","session":"$A","webview":"P1","token":"$TA1"}}"#, 15, "unknown-webview"),
    .init(.fresh, #"{"id":15,"method":"hello","params":{"protocol":1,"role":"page","session":"$A","webview":"W01","token":"$TA1"}}"#, 15, "unknown-webview"),
    .init(.fresh, #"{"id":15,"method":"hello","params":{"protocol":1,"role":"page","session":"$A","webview":"","token":"$TA1"}}"#, 15, "unknown-webview"),
    .init(.poppedPage, #"{"id":15,"method":"ping"}"#, 15, "unknown-webview"),
    .init(.poppedPage, #"{"id":15,"method":"pwa-navigate","params":{"url":"http://h/three/a"}}"#, 15, "unknown-webview"),
    .init(.poppedPage, #"{"id":15,"method":"back"}"#, 15, "unknown-webview"),
    .init(.poppedPage, #"{"id":15,"method":"pwa-rendered"}"#, 15, "unknown-webview"),
]

@Suite struct BridgeEnvelopeTests {
    /// Every bad frame gets exactly one reply with the contract's code and id, and changes
    /// nothing: no session, stack, subscription, role or timer, and nobody else hears of it.
    @Test(arguments: envelopeCases)
    func badFrameIsRefusedAndChangesNothing(_ bad: BadFrame) {
        var world = EnvelopeWorld()
        let c = world.clients[bad.sender]!
        world.h.refused(c, world.expand(bad.frame), id: bad.id.map { .int($0) } ?? .null, code: bad.code,
                        thenEvents: bad.thenEvents)
    }

    /// The connection survives a bad frame: the next good request is answered normally.
    @Test func connectionStillWorksAfterBadFrames() {
        var world = EnvelopeWorld()
        let page = world.clients[.page]!, fresh = world.clients[.fresh]!, ctl = world.clients[.controller]!
        for text in ["garbage", "[]", #"{"id":"x","method":"ping"}"#, #"{"id":1,"method":"nope"}"#] {
            _ = world.h.frame(page, text)
            _ = world.h.frame(fresh, text)
            _ = world.h.frame(ctl, text)
        }
        #expect(world.h.closed[page] == nil && world.h.closed[fresh] == nil && world.h.closed[ctl] == nil)
        #expect(world.h.request(page, "ping")["result"] == .object([:]))
        #expect(world.h.request(ctl, "ping")["result"] == .object([:]))
        // A failed hello leaves the connection fresh: a good one still works.
        world.h.refused(fresh, #"{"id":1,"method":"hello","params":{"protocol":2,"role":"page"}}"#, id: 1, code: "invalid-params")
        let hello = world.h.request(fresh, "hello", ["protocol": 1, "role": "page", "url": "http://h/c/"])
        #expect(hello["result"]?["webview"] == "W1")
        #expect(world.h.bridge.sessionCount == 3)
    }

    /// The largest ids allowed (±2^53) are valid and echoed exactly.
    @Test(arguments: [Int64(1) << 53, -(Int64(1) << 53), 0, -1])
    func idsWithinTwoToThe53AreAccepted(_ id: Int64) {
        var world = EnvelopeWorld()
        let page = world.clients[.page]!
        let effects = world.h.frame(page, #"{"id":\#(id),"method":"ping"}"#)
        #expect(trace(effects, for: page) == ["reply \(id)"])
    }

    /// `params` omitted, null or `{}` are the same.
    @Test(arguments: [#"{"id":1,"method":"ping"}"#, #"{"id":1,"method":"ping","params":null}"#,
                      #"{"id":1,"method":"ping","params":{}}"#, #"{"params":null,"method":"ping","id":1}"#])
    func paramsMayBeOmittedOrNull(_ text: String) {
        var world = EnvelopeWorld()
        let page = world.clients[.page]!
        #expect(trace(world.h.frame(page, text), for: page) == ["reply 1"])
    }

    /// Events before hello are ignored: no reply, no effect, no state change.
    @Test(arguments: [
        #"{"event":"pwa-navigate","params":{"url":"http://h/x"}}"#,
        #"{"event":"pwa-rendered"}"#,
        #"{"event":"back"}"#,
        #"{"event":"navigate","params":{"url":"http://h/x"}}"#,
        #"{"event":"custom","params":{"a":1}}"#,
    ])
    func eventsBeforeHelloAreIgnored(_ text: String) {
        var world = EnvelopeWorld()
        world.h.ignored(world.clients[.fresh]!, text)
    }

    /// Events from controllers have no meaning and are ignored.
    @Test func eventsFromControllersAreIgnored() {
        var world = EnvelopeWorld()
        world.h.ignored(world.clients[.controller]!, #"{"event":"back","params":{"session":"x"}}"#)
    }

    /// Events from a covered page that the contract refuses act on nothing and get no reply.
    @Test(arguments: [#"{"event":"pwa-navigate","params":{"url":"http://h/x"}}"#, #"{"event":"back"}"#])
    func refusedEventsFromCoveredPagesChangeNothing(_ text: String) {
        var world = EnvelopeWorld()
        world.h.ignored(world.clients[.coveredPage]!, text)
    }

    /// Frames, binary frames and disconnects of a connection the daemon no longer knows (it
    /// disconnected, or never connected) are dropped without effect.
    @Test func framesOfUnknownConnectionsAreDropped() {
        var world = EnvelopeWorld()
        let page = world.clients[.page]!
        world.h.disconnect(page)
        for c in [page, ClientID(12_345)] {
            world.h.ignored(c, #"{"id":1,"method":"pwa-navigate"}"#)
            world.h.ignored(c, #"{"event":"back"}"#)
            world.h.ignored(c, "garbage")
            let before = world.h.snapshot()
            world.h.bridge.receivedBinary(c, at: world.h.now)
            world.h.bridge.disconnected(c, at: world.h.now)
            #expect(world.h.bridge.drainEffects().isEmpty)
            #expect(world.h.snapshot() == before)
        }
    }

    /// A binary frame: `invalid-request` with id null, and nothing changes.
    @Test func binaryFrameIsInvalidRequest() {
        var world = EnvelopeWorld()
        for sender in [Sender.fresh, .page, .controller] {
            let c = world.clients[sender]!
            let before = world.h.snapshot()
            world.h.bridge.receivedBinary(c, at: world.h.now)
            let effects = world.h.bridge.drainEffects()
            #expect(trace(effects, for: c) == ["error null invalid-request"], "\(sender)")
            #expect(effects.count == 1)
            #expect(world.h.snapshot() == before)
        }
    }
}

@Suite struct BridgeAccessTests {
    /// With a configured token, a controller must present it; from anywhere with it.
    @Test func controllerTokenIsRequiredWhenConfigured() {
        var h = BridgeHarness(configuration: BridgeConfiguration(controllerToken: "sekret"))
        for loopback in [true, false] {
            let c = h.connect(loopback: loopback)
            h.refused(c, #"{"id":1,"method":"hello","params":{"protocol":1,"role":"controller"}}"#, id: 1, code: "not-allowed")
            h.refused(c, #"{"id":2,"method":"hello","params":{"protocol":1,"role":"controller","token":"wrong"}}"#, id: 2, code: "not-allowed")
            h.refused(c, #"{"id":3,"method":"hello","params":{"protocol":1,"role":"controller","token":"sekre"}}"#, id: 3, code: "not-allowed")
            h.refused(c, #"{"id":4,"method":"hello","params":{"protocol":1,"role":"controller","token":"sekret2"}}"#, id: 4, code: "not-allowed")
            h.refused(c, #"{"id":5,"method":"hello","params":{"protocol":1,"role":"controller","token":null}}"#, id: 5, code: "not-allowed")
            h.refused(c, #"{"id":6,"method":"hello","params":{"protocol":1,"role":"controller","token":5}}"#, id: 6, code: "invalid-params")
            // Still not said hello.
            h.refused(c, #"{"id":7,"method":"session.list"}"#, id: 7, code: "not-ready")
            let ok = h.request(c, "hello", ["protocol": 1, "role": "controller", "token": "sekret"])
            #expect(ok["result"]?["protocol"] == 1, "loopback \(loopback)")
            #expect(h.request(c, "session.list")["result"]?["sessions"] == [])
        }
        // Pages need no controller token.
        let page = h.connect(loopback: false)
        #expect(h.request(page, "hello", ["protocol": 1, "role": "page"])["result"]?["webview"] == "W1")
    }

    /// Without a configured token, controllers are accepted from loopback only (a token they
    /// bring does not help).
    @Test func controllersFromElsewhereNeedAConfiguredToken() {
        var h = BridgeHarness()
        let remote = h.connect(loopback: false)
        h.refused(remote, #"{"id":1,"method":"hello","params":{"protocol":1,"role":"controller"}}"#, id: 1, code: "not-allowed")
        h.refused(remote, #"{"id":2,"method":"hello","params":{"protocol":1,"role":"controller","token":"anything"}}"#, id: 2, code: "not-allowed")
        // The same connection may still be a page.
        #expect(h.request(remote, "hello", ["protocol": 1, "role": "page"])["result"]?["webview"] == "W1")
        let local = h.connect(loopback: true)
        #expect(h.request(local, "hello", ["protocol": 1, "role": "controller"])["result"]?["protocol"] == 1)
    }

    /// `--max-sessions`: a hello or session.create that would create one more is refused and
    /// nothing changes; claims of existing web views still work; room comes back on close.
    @Test func maxSessionsLimitsHelloAndSessionCreate() {
        var h = BridgeHarness(configuration: BridgeConfiguration(maxSessions: 2))
        let ctl = h.controller(subscribeAll: true)
        let a = h.newPage()
        let created = h.request(ctl, "session.create", ["url": "http://h/b/"])
        let sidB = created["result"]?["session"]?.stringValue ?? ""
        #expect(h.bridge.sessionCount == 2)
        let p = h.connect()
        h.refused(p, #"{"id":1,"method":"hello","params":{"protocol":1,"role":"page","url":"http://h/c/"}}"#, id: 1, code: "limit-exceeded")
        h.refused(ctl, #"{"id":2,"method":"session.create","params":{"url":"http://h/c/"}}"#, id: 2, code: "limit-exceeded")
        h.refused(ctl, #"{"id":3,"method":"session.create"}"#, id: 3, code: "limit-exceeded")
        // A claim creates no session.
        let b1 = h.claimed(sidB, "W1", created["result"]?["token"]?.stringValue ?? "")
        #expect(h.bridge.sessionCount == 2)
        // Closing one makes room.
        #expect(h.request(ctl, "session.close", ["session": .string(a.session)])["result"] == .object([:]))
        #expect(h.request(p, "hello", ["protocol": 1, "role": "page"])["result"]?["webview"] == "W1")
        h.refused(ctl, #"{"id":4,"method":"session.create"}"#, id: 4, code: "limit-exceeded")
        _ = b1
    }

    /// `--max-stack-depth`: pwa-navigate and navigateToUrl at the limit are refused and nothing
    /// changes; a page's navigate hears `navigate.failed` with the code.
    @Test func maxStackDepthLimitsPushes() {
        var h = BridgeHarness(configuration: BridgeConfiguration(engine: EngineConfiguration(maxStackDepth: 3)))
        let ctl = h.controller(subscribeAll: true)
        let page = h.newPage()
        _ = h.request(page.client, "pwa-navigate", ["url": "http://h/app/a"])
        _ = h.request(page.client, "pwa-navigate", ["url": "http://h/app/b"])
        #expect(h.stackIDs(page.session) == "P1 P2 W1")
        h.refused(page.client, #"{"id":1,"method":"pwa-navigate","params":{"url":"http://h/app/c"}}"#, id: 1, code: "limit-exceeded")
        h.refused(ctl, #"{"id":2,"method":"navigation.navigateToUrl","params":{"session":"\#(page.session)","url":"http://h/x"}}"#,
                  id: 2, code: "limit-exceeded")
        h.refused(page.client, #"{"id":3,"method":"navigate","params":{"url":"http://h/x"}}"#, id: 3, code: "limit-exceeded",
                  thenEvents: ["navigate.failed"])
        // The event form: no reply, only navigate.failed with the code, nothing else.
        let before = h.snapshot()
        let effects = h.frame(page.client, #"{"event":"navigate","params":{"url":"http://h/x"}}"#)
        #expect(trace(effects, for: page.client) == ["event navigate.failed"])
        #expect(effects.count == 1)
        let failed = h.eventParams(page.client, "navigate.failed").last
        #expect(failed?["url"] == "http://h/x" && failed?["code"] == "limit-exceeded")
        let message = failed?["message"]?.stringValue ?? ""
        #expect(!message.isEmpty)
        #expect(h.snapshot() == before)
        // The pwa-navigate event form changes nothing either.
        h.ignored(page.client, #"{"event":"pwa-navigate","params":{"url":"http://h/app/c"}}"#)
        // A back makes room again.
        _ = h.request(page.client, "pwa-rendered")
        #expect(h.request(page.client, "back")["result"]?["action"] == "swap")
        #expect(h.request(page.client, "pwa-navigate", ["url": "http://h/app/c"])["result"]?["placeholder"] == "P3")
    }
}
