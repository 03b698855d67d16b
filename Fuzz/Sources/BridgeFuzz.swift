/// `fuzz-bridge`: the whole `Bridge` state machine driven by a script decoded from the input.
///
/// Each step of the script (one byte picks what, the next ones how) connects or disconnects a
/// client, lets time pass (due timers fire in deadline order), sweeps idle sessions, or sends a
/// frame: one built from templates that make sense for the protocol (hello as page or controller,
/// with claims learned from earlier replies and events; page requests and events; controller
/// requests on known sessions), or raw bytes taken from the input, so that libFuzzer's mutations
/// reach the parser and the envelope checks through the Bridge.
///
/// Invariants, after every step:
/// - every request gets exactly one reply, with its id, before anything else sent to its sender;
///   an event gets no reply (at most one error with id null); a frame that is not valid JSON or not
///   an object gets one error with id null;
/// - a refused frame (a request answered with an error, an event or a malformed frame answered
///   with an error with id null) changes nothing: the whole Bridge after it (`Bridge` is
///   `Equatable`: connections and roles, every session with its engine, pages, subscribers,
///   tokens and routing tree, the counters, the random generator) equals a copy taken before it;
/// - nothing is sent to a client after its close or its disconnect; every frame sent is one JSON
///   object; a timer is never scheduled twice;
/// - memory stays bounded: at most `maxSessions` sessions, at most `maxStackDepth` items per stack,
///   no url or title over `maxURLBytes`, every session's held bytes (`Session.heldBytes`: its urls
///   and titles plus 64 per item) at most `maxSessionBytes`, and its cached stack JSON at most
///   `jsonBound` (the documented worst case: the held strings again, escaped).
enum BridgeFuzz {
    /// Limits small enough for the scripts to reach: `someURL` makes urls of up to 4 KiB, so
    /// some are over `maxURLBytes`, and a few long ones fill a session to `maxSessionBytes`
    /// before `maxStackDepth` stops it.
    static let configuration: BridgeConfiguration = {
        var c = BridgeConfiguration(
            engine: EngineConfiguration(foregroundTimeoutMs: 150, maxStackDepth: 8),
            maxSessions: 4, sessionIdleSeconds: 2)
        c.maxURLBytes = 2048
        c.maxSessionBytes = 6144
        return c
    }()

    /// The most bytes a session's stack JSON may take: every held byte escaped as `\u00XX` (six
    /// bytes each; the worst case of the JSON writer) plus the fields around each item.
    static let jsonBound = 6 * configuration.maxSessionBytes + configuration.engine.maxStackDepth * 256 + 64

    static func run(_ bytes: UnsafeRawBufferPointer) {
        var script = Script(bytes: bytes)
        var driver = Driver(seed: UInt64(bytes.count))
        var steps = 0
        while !script.atEnd && steps < 400 {
            driver.step(&script)
            steps += 1
        }
    }
}

/// The input, read byte by byte (zeros once it runs out).
struct Script {
    let bytes: UnsafeRawBufferPointer
    var offset = 0

    var atEnd: Bool { offset >= bytes.count }

    mutating func byte() -> Int {
        guard offset < bytes.count else { return 0 }
        defer { offset += 1 }
        return Int(bytes[offset])
    }

    mutating func pick<T>(_ items: [T]) -> T { items[byte() % items.count] }

    /// A length-prefixed chunk of the input (raw frame bytes).
    mutating func chunk() -> [UInt8] {
        let n = min(byte() * 4 + byte() % 4, bytes.count - min(offset, bytes.count))
        defer { offset += n }
        return Array(bytes[offset..<(offset + n)])
    }
}

struct Driver {
    var bridge: Bridge<SeededRandom>
    var now: Int64 = 1_000_000
    var nextClient: UInt64 = 1
    var live: [ClientID] = []
    var closed: Set<ClientID> = []
    var gone: Set<ClientID> = []
    var roles: [ClientID: String] = [:]
    var timers: [TimerKey: Int64] = [:]
    var nextID: Int64 = 1
    var sessions: [String] = []
    var claims: [(session: String, webview: String, token: String)] = []
    var buffer: [BridgeEffect] = []

    init(seed: UInt64) {
        bridge = Bridge(configuration: BridgeFuzz.configuration, random: SeededRandom(seed: seed &+ 1))
    }

    mutating func step(_ s: inout Script) {
        defer {
            // The host finishes the daemon's closes (a closed client sends nothing more).
            for c in live where closed.contains(c) { disconnect(c) }
            checkBounds()
        }
        let op = s.byte()
        switch op % 16 {
        case 0, 1:
            guard live.count < 12 else { return send(&s) }
            let c = ClientID(nextClient)
            nextClient += 1
            bridge.apply(.connected(c, isLoopback: s.byte() % 8 != 0), at: now)
            live.append(c)
            perform(sender: nil, frame: [])
        case 2:
            guard !live.isEmpty else { return }
            disconnect(s.pick(live))
        case 3:
            advance(ms: Int64(s.byte()) * 4)
        case 4:
            bridge.apply(.sweep, at: now)
            perform(sender: nil, frame: [])
        default:
            send(&s)
        }
    }

    mutating func disconnect(_ c: ClientID) {
        live.removeAll { $0 == c }
        gone.insert(c)
        bridge.apply(.left(c), at: now)
        perform(sender: nil, frame: [])
    }

    mutating func advance(ms: Int64) {
        now += ms * 1000
        while let (key, due) = timers.min(by: { $0.value < $1.value }), due <= now {
            timers[key] = nil
            bridge.apply(.timerFired(key), at: due)
            perform(sender: nil, frame: [])
        }
    }

    mutating func send(_ s: inout Script) {
        guard !live.isEmpty else { return }
        let c = s.pick(live)
        let frame = s.byte() % 5 == 0 ? s.chunk() : build(for: c, &s)
        // The whole Bridge before the frame (a value: the copy is independent; its effects were
        // drained by the last step, so a Bridge that only answered compares equal).
        let before = bridge
        bridge.apply(.frame(c, text: frame), at: now)
        let (reply, refused) = perform(sender: c, frame: frame)
        // A successful hello gives the client the role it asked for.
        if let reply, reply["result"] != nil, let sent = try? JSONParser.parse(frame),
           sent["method"] == "hello", let role = sent["params"]?["role"]?.stringValue {
            roles[c] = role
        }
        if let refused, bridge != before {
            fuzzFailure("a refused frame changed the daemon: \(String(decoding: frame.prefix(600), as: UTF8.self).debugDescription)\nreply: \(refused.jsonString)\n\(Self.difference(before, bridge, now: now))")
        }
    }

    /// What differs between two Bridges, for the failure message.
    static func difference(_ a: Bridge<SeededRandom>, _ b: Bridge<SeededRandom>, now: Int64) -> String {
        var a = a, b = b
        var parts: [String] = []
        if a.clients != b.clients { parts.append("clients: \(a.clients) -> \(b.clients)") }
        if a.sessions != b.sessions {
            parts.append("sessions: \(String(decoding: a.sessionListJSON(at: now), as: UTF8.self)) -> \(String(decoding: b.sessionListJSON(at: now), as: UTF8.self))")
            for sid in Set(a.sessionIDs).union(b.sessionIDs) where a.sessions[sid] != b.sessions[sid] {
                parts.append("session \(sid): \(String(describing: a.sessions[sid])) -> \(String(describing: b.sessions[sid]))")
            }
        }
        if a.rng != b.rng { parts.append("the random generator advanced") }
        if a.nextSessionSerial != b.nextSessionSerial || a.nextControllerNumber != b.nextControllerNumber {
            parts.append("counters: \(a.nextSessionSerial)/\(a.nextControllerNumber) -> \(b.nextSessionSerial)/\(b.nextControllerNumber)")
        }
        if a.sessionIDBySerial != b.sessionIDBySerial { parts.append("serials: \(a.sessionIDBySerial) -> \(b.sessionIDBySerial)") }
        if a.allSubscribers != b.allSubscribers { parts.append("subscribers to all: \(a.allSubscribers) -> \(b.allSubscribers)") }
        if a.effects != b.effects { parts.append("undrained effects: \(a.effects) -> \(b.effects)") }
        if a.held != b.held { parts.append("waiting connections: \(a.held) -> \(b.held)") }
        return parts.isEmpty ? "(no field differs: check Bridge ==)" : parts.joined(separator: "\n")
    }

    // MARK: Effects and the reply rule

    /// Performs one step's effects, checking them; returns the reply to `sender`, if any, and
    /// the error that refused the frame, if any (the reply of a request, or the error with id
    /// null that answers an event or a malformed frame).
    @discardableResult
    mutating func perform(sender: ClientID?, frame: [UInt8]) -> (reply: JSONValue?, refused: JSONValue?) {
        bridge.drainEffects(into: &buffer)
        let what = String(decoding: frame.prefix(200), as: UTF8.self).debugDescription
        var toSender: [JSONValue] = []
        for effect in buffer {
            switch effect {
            case .send(let to, let bytes):
                if gone.contains(to) { fuzzFailure("sent to \(to) after its disconnect: \(what)") }
                if closed.contains(to) { fuzzFailure("sent to \(to) after its close: \(what)") }
                guard let value = try? JSONParser.parse(bytes), case .object = value else {
                    fuzzFailure("sent a frame that is not a JSON object: \(String(decoding: bytes, as: UTF8.self))")
                }
                if value["id"] != nil, to != sender { fuzzFailure("a reply went to \(to), not to the sender: \(what)") }
                if to == sender { toSender.append(value) }
                learn(to, value)
            case .close(let to, _, _):
                if closed.contains(to) { fuzzFailure("closed \(to) twice") }
                closed.insert(to)
            case .schedule(let key, let ms):
                if timers[key] != nil { fuzzFailure("timer \(key) scheduled twice") }
                timers[key] = now + Int64(ms) * 1000
            case .cancel(let key):
                timers[key] = nil
            case .host:
                break  // work for a browser host (browser sessions): no browser here
            }
        }
        guard sender != nil else { return (nil, nil) }
        let replies = toSender.filter { $0["id"] != nil }
        switch Self.rule(for: frame) {
        case .request(let id):
            if replies.count != 1 { fuzzFailure("\(replies.count) replies to \(what)") }
            if replies[0]["id"] != id { fuzzFailure("reply id \(replies[0]["id"]!.jsonString), expected \(id.jsonString): \(what)") }
            if toSender.first != replies[0] { fuzzFailure("something came before the reply: \(what)") }
            // (JSONValue is ExpressibleByNilLiteral: spell out the Optional's none.)
            let refused: JSONValue? = replies[0]["error"] != nil ? replies[0] : Optional<JSONValue>.none
            return (replies[0], refused)
        case .event:
            if replies.count > 1 || replies.contains(where: { $0["id"] != .null }) {
                fuzzFailure("an event got \(replies.map(\.jsonString)): \(what)")
            }
            return (nil, replies.first)
        case .ignoredBeforeHello:
            return (nil, nil)
        }
    }

    enum Rule {
        case request(JSONValue)
        case event
        case ignoredBeforeHello
    }

    /// What a frame must get back, judged from its bytes alone (contract section 2).
    static func rule(for bytes: [UInt8]) -> Rule {
        guard let value = try? JSONParser.parse(bytes), case .object(let o) = value else { return .request(.null) }
        let id: JSONValue = if case .int(let n)? = o["id"] { .int(n) } else { .null }
        if o["method"] != nil { return .request(id) }
        if o["event"] != nil && o["id"] == nil { return .event }
        return .request(id)
    }

    /// Learns sessions, claims and roles from what clients are sent.
    mutating func learn(_ to: ClientID, _ value: JSONValue) {
        if let result = value["result"] {
            if let role = result["role"]?.stringValue { roles[to] = role }
            if let sid = result["session"]?.stringValue {
                if !sessions.contains(sid) { sessions.append(sid) }
                if let w = result["webview"]?.stringValue, let t = result["token"]?.stringValue { claims.append((sid, w, t)) }
            }
        }
        guard let params = value["params"] else { return }
        for candidate in [params, params["load"] ?? .null] {
            if let sid = candidate["session"]?.stringValue, let w = candidate["webview"]?.stringValue,
               let t = candidate["token"]?.stringValue {
                claims.append((sid, w, t))
            }
        }
        if claims.count > 64 { claims.removeFirst(claims.count - 64) }
        if sessions.count > 32 { sessions.removeFirst(sessions.count - 32) }
    }

    // MARK: Bounds

    mutating func checkBounds() {
        let c = BridgeFuzz.configuration
        if bridge.sessionCount > c.maxSessions { fuzzFailure("\(bridge.sessionCount) sessions, at most \(c.maxSessions)") }
        for sid in bridge.sessionIDs {
            guard let engine = bridge.engine(of: sid) else { fuzzFailure("listed session \(sid) has no engine") }
            if engine.stack.isEmpty || engine.stack.count > c.engine.maxStackDepth {
                fuzzFailure("\(sid): \(engine.stack.count) items, at most \(c.engine.maxStackDepth)")
            }
        }
        for sid in bridge.sessionIDs {
            guard let session = bridge.sessions[sid] else { fuzzFailure("listed session \(sid) is not in the table") }
            let held = session.heldBytes
            if held > c.maxSessionBytes { fuzzFailure("\(sid) holds \(held) bytes, at most \(c.maxSessionBytes)") }
            for item in session.engine.stack {
                let title: String? = switch item {
                case .webview(let w): w.title
                case .placeholder(let p): p.title
                case .native: nil
                }
                if item.url.utf8.count > c.maxURLBytes || (title?.utf8.count ?? 0) > c.maxURLBytes {
                    fuzzFailure("\(sid) holds a url or title over \(c.maxURLBytes) bytes: \(item.url.utf8.count), \(title?.utf8.count ?? 0)")
                }
            }
            if session.stackCache.count > BridgeFuzz.jsonBound {
                fuzzFailure("\(sid): cached stack JSON of \(session.stackCache.count) bytes, bound \(BridgeFuzz.jsonBound)")
            }
        }
        // The session list (what /api/sessions sends) is bounded by the same worst case.
        let list = bridge.sessionListJSON(at: now)
        let bound = max(bridge.sessionCount, 1) * (BridgeFuzz.jsonBound + 256) + 256
        if list.count > bound { fuzzFailure("session list of \(list.count) bytes for \(bridge.sessionCount) sessions, bound \(bound)") }
    }

    // MARK: Frames

    mutating func someSession(_ s: inout Script) -> String {
        let current = bridge.sessionIDs
        switch s.byte() % 8 {
        case 0: return s.pick(["s-0000000000000000", "", "W1", "s-"])
        case 1 where !sessions.isEmpty: return s.pick(sessions)
        default: return current.isEmpty ? "s-none" : s.pick(current)
        }
    }

    mutating func someURL(_ s: inout Script) -> String {
        let n = s.byte()
        switch n % 12 {
        case 0: return "http://h/app/\(n)"
        case 1: return "tt://native/\(n % 3)"
        case 2: return ""
        case 3: return "http://h/app/?bridge_session=s-1&bridge_token=t"
        case 4: return "http://h/ü/ẞ#f"
        case 5: return "http://h/" + String(repeating: "a", count: s.byte() * 16)
        default: return s.pick(["http://h/app/", "http://h/app/a", "http://h/app/b?x=1", "http://h/c.html"])
        }
    }

    mutating func build(for c: ClientID, _ s: inout Script) -> [UInt8] {
        var params: JSONObject = [:]
        var name: String
        var asEvent = false
        switch roles[c] {
        case nil:
            name = s.byte() % 16 == 0 ? s.pick(["ping", "session.list", "pwa-navigate"]) : "hello"
            params["protocol"] = s.byte() % 16 == 0 ? 2 : 1
            if s.byte() % 4 != 0 {
                params["role"] = "page"
                if !claims.isEmpty && s.byte() % 3 != 0 {
                    let claim = s.pick(claims)
                    params["session"] = .string(claim.session)
                    params["webview"] = .string(claim.webview)
                    params["token"] = .string(s.byte() % 10 == 0 ? "bad" : claim.token)
                }
                if s.byte() % 3 != 0 { params["url"] = .string(someURL(&s)) }
            } else {
                params["role"] = "controller"
                var handles: [JSONValue] = []
                if s.byte() % 4 == 0 { handles.append("navigate") }
                if s.byte() % 4 == 0 { handles.append("webview.open") }
                if !handles.isEmpty { params["handles"] = .array(handles) }
            }
        case "page"?:
            name = s.pick(["pwa-navigate", "pwa-navigate", "pwa-rendered", "pwa-rendered", "back", "navigate", "ping",
                           "pwa-navigated", "cart.add", "hello", "session.list"])
            switch name {
            case "pwa-navigate":
                if s.byte() % 5 != 0 { params["url"] = .string(someURL(&s)) }
                if s.byte() % 3 == 0 { params["title"] = .string("T\(s.byte())") }
            case "navigate", "pwa-navigated": params["url"] = .string(someURL(&s))
            case "cart.add": params["sku"] = .int(Int64(s.byte()))
            default: break
            }
            asEvent = name == "pwa-navigated" || name == "cart.add" || s.byte() % 3 == 0
        default:
            name = s.pick(["session.create", "session.list", "session.get", "session.close", "session.subscribe",
                           "session.unsubscribe", "navigation.navigateToUrl", "navigation.navigateToUrl", "navigation.back",
                           "navigation.canGoBack", "navigation.popToRoot", "ping", "bogus"])
            switch name {
            case "session.create": if s.byte() % 3 != 0 { params["url"] = .string(someURL(&s)) }
            case "session.get", "session.close", "navigation.back", "navigation.canGoBack", "navigation.popToRoot":
                params["session"] = .string(someSession(&s))
            case "session.subscribe", "session.unsubscribe":
                if s.byte() % 2 == 0 { params["session"] = .string(someSession(&s)) }
            case "navigation.navigateToUrl":
                params["session"] = .string(someSession(&s))
                params["url"] = .string(someURL(&s))
            default: break
            }
            asEvent = s.byte() % 32 == 0
        }
        var frame: JSONObject = [:]
        if asEvent {
            frame["event"] = .string(name)
        } else {
            nextID += 1
            frame["id"] = .int(s.byte() % 32 == 0 ? s.pick([0, -1, nextID - 1, 1 << 53]) : nextID)
            frame["method"] = .string(name)
        }
        if !params.isEmpty || s.byte() % 2 == 0 { frame["params"] = .object(params) }
        return Array(JSONValue.object(frame).jsonString.utf8)
    }
}
