import Testing
@testable import BridgeProtocol

/// The hot-path shortcuts taken for performance (docs/PERFORMANCE.md) must give exactly what
/// the general code gives.
@Suite struct PerfFastPathTests {
    @Test(arguments: [
        ("http://127.0.0.1:8787/app/#/products/1", false),
        ("", false),
        ("bridge", false),
        ("bridge_", true),
        ("x?bridge_session=s-1", true),
        ("http://h/a?b=bridge_x#frag", true),
        ("http://h/bridge-x?q=bridgE_", true),
        ("http://h/bridge-x?q=bridge", false),
        ("http://h/a%20b", true),
        ("http://h/ünïcødé/bridge_token", true),
        ("http://h/ünïcødé/bridg", false),
    ])
    func claimScanAgreesWithContains(_ url: String, _ expected: Bool) {
        #expect(PageURL.mayCarryClaim(url) == expected)
        #expect(PageURL.mayCarryClaim(url) == (url.lowercased().contains("bridge_") || url.contains("%")))
    }

    @Test func stripClaimKeepsEverythingElse() {
        #expect(PageURL.mayCarryClaim(String(Substring("xx?bridge_token=1").dropFirst(2))))
        #expect(PageURL.stripClaim("http://h/?a=1&bridge_token=t&b=2#f") == "http://h/?a=1&b=2#f")
        #expect(PageURL.stripClaim("http://h/?a=bridge_1") == "http://h/?a=bridge_1")
        #expect(PageURL.stripClaim("http://h/#bridge_") == "http://h/#bridge_")
    }

    // MARK: Stack writing

    /// The stack as the general writer writes it, key by key (the original implementation).
    static func referenceStack(_ stack: [StackItem]) -> [UInt8] {
        var w = JSONWriter()
        w.beginArray()
        for item in stack {
            w.beginObject()
            w.key("id"); w.string(item.id.description)
            switch item {
            case .webview(let v):
                w.key("kind"); w.string("webview")
                w.key("mode"); w.string(v.mode.rawValue)
                w.key("url"); w.string(v.url)
                w.key("title")
                if let t = v.title { w.string(t) } else { w.null() }
                w.key("connected"); w.bool(v.connected)
            case .placeholder(let p):
                w.key("kind"); w.string("placeholder")
                w.key("of"); w.string(p.of.description)
                w.key("url"); w.string(p.url)
                if let t = p.title { w.key("title"); w.string(t) }
            case .native(let n):
                w.key("kind"); w.string("native")
                w.key("url"); w.string(n.url)
            }
            w.endObject()
        }
        w.endArray()
        return w.bytes
    }

    static let texts = ["", "http://127.0.0.1:8787/app/#/products/1", "a\"quote\\and\nnewline\u{1}",
                        "ünïcødé ✓ 🚀", "tt://native/screen?x=1&y=2", String(repeating: "x", count: 300)]

    /// Deterministic pseudo-random stacks covering every item kind, mode, title and flag.
    static func stacks() -> [[StackItem]] {
        var rng = SeededRandom(seed: 0x9E37_79B9_7F4A_7C15)
        func next(_ n: Int) -> Int { Int(rng.next() % UInt64(n)) }
        var out: [[StackItem]] = [[]]
        for _ in 0..<300 {
            var stack: [StackItem] = []
            for _ in 0..<(1 + next(6)) {
                let number = [1, 9, 10, 99, 12345, Int.max][next(6)]
                let title: String? = next(3) == 0 ? nil : texts[next(texts.count)]
                switch next(3) {
                case 0:
                    stack.append(.webview(WebView(id: .webview(number), mode: next(2) == 0 ? .pwa : .classic,
                                                  url: texts[next(texts.count)], title: title,
                                                  connected: next(2) == 0, token: "t")))
                case 1:
                    stack.append(.placeholder(Placeholder(id: .placeholder(number), of: .webview(next(1000)),
                                                          url: texts[next(texts.count)], title: title)))
                default:
                    stack.append(.native(NativeScreen(id: .native(number), url: texts[next(texts.count)])))
                }
            }
            out.append(stack)
        }
        return out
    }

    @Test func stackWriterMatchesTheGeneralWriter() {
        for stack in Self.stacks() {
            var w = JSONWriter()
            Bridge<SystemRandomNumberGenerator>.writeStack(stack, into: &w)
            #expect(w.bytes == Self.referenceStack(stack), "\(stack)")
            // Inside a document: the comma logic around the array is unchanged.
            var doc = JSONWriter()
            doc.beginObject()
            doc.key("a"); doc.int(1)
            doc.key("stack")
            Bridge<SystemRandomNumberGenerator>.writeStack(stack, into: &doc)
            doc.key("b"); doc.bool(true)
            doc.endObject()
            #expect(doc.string == #"{"a":1,"stack":"# + String(decoding: Self.referenceStack(stack), as: UTF8.self) + #","b":true}"#)
        }
    }

    @Test(arguments: [0, 1, 9, 10, 11, 99, 100, 12345, Int.max, -1, -10, Int.min])
    func digitsMatchDescription(_ n: Int) {
        var w = JSONWriter()
        w.appendDigits(n)
        #expect(w.string == String(n))
        if n >= 0 {
            for kind in [ItemID.Kind.webview, .placeholder, .native] {
                var q = JSONWriter()
                q.appendQuotedID(ItemID(kind, n))
                #expect(q.string == "\"\(ItemID(kind, n))\"")
            }
        }
    }

    // MARK: Envelope fast path

    static func describe(_ r: Result<Frame, Frame.Failure>) -> String {
        switch r {
        case .success(.request(let id, let method, let name, let params)):
            return "request \(id) \(name) \(method.map { "\($0)" } ?? "unknown") " + JSONValue.object(params).jsonString
        case .success(.event(let name, let params)):
            return "event \(name) " + JSONValue.object(params).jsonString
        case .failure(let f):
            return "failure \(String(describing: f.id)) \(f.error.code) \(f.error.message)"
        }
    }

    static let frames: [String] = [
        #"{"id":1,"method":"ping","params":{}}"#,
        #"{"id":0,"method":"ping"}"#,
        #"{"method":"pwa-navigate","params":{"url":"http://127.0.0.1:8787/app/#/p/1"},"id":42}"#,
        #"{"params":{"url":"u","title":"t"},"id":9007199254740992,"method":"pwa-navigate"}"#,
        #" { "id" : 3 , "method" : "back" , "params" : null } "#,
        "{\t\"id\":3,\n\"method\":\"back\",\r\"params\":{ }}",
        #"{"id":5,"method":"hello","params":{"protocol":1,"role":"page","url":"http://h/app/"}}"#,
        #"{"id":6,"method":"session.subscribe","params":{"events":["foreground.removed"]}}"#,
        #"{"id":7,"method":"x","params":{"a":{"b":[1,2,{"c":"}"}]},"d":"\"}"}}"#,
        #"{"id":8,"method":"x","params":{"url":"ünï"}}"#,
        #"{"id":8,"method":"x","params":{"url":"a\u0041\n"}}"#,
        #"{"id":9,"method":"x","params":{"a":"1","a":"2"}}"#,
        #"{"id":10,"method":"x","params":{"a":"1","b":2,"c":true,"d":null}}"#,
        #"{"id":11,"method":"x","params":{"a":"1",}}"#,
        #"{"id":12,"method":"x","params":[]}"#,
        #"{"id":13,"method":"x","params":"s"}"#,
        #"{"id":14,"method":"x","params":1}"#,
        #"{"id":15,"method":"x","extra":true}"#,
        #"{"id":16,"id":17,"method":"x"}"#,
        #"{"id":16,"method":"x","method":"y"}"#,
        #"{"id":-1,"method":"x"}"#,
        #"{"id":-0,"method":"x"}"#,
        #"{"id":01,"method":"x"}"#,
        #"{"id":1.0,"method":"x"}"#,
        #"{"id":1e3,"method":"x"}"#,
        #"{"id":9007199254740993,"method":"x"}"#,
        #"{"id":99999999999999999999,"method":"x"}"#,
        #"{"id":"1","method":"x"}"#,
        #"{"id":null,"method":"x"}"#,
        #"{"id":1,"method":1}"#,
        #"{"id":1,"method":"p\u0069ng"}"#,
        #"{"id":1,"method":"ping"}x"#,
        #"{"id":1,"method":"ping"}}"#,
        #"{"id":1,"method":"ping","params":{}"#,
        #"{"id":1,"method":"ping",}"#,
        #"{"id":1}"#,
        #"{"method":"ping"}"#,
        #"{}"#,
        #"[]"#,
        #""#,
        #"{"event":"pwa-rendered","params":{}}"#,
        #"{"id":1,"method":"x","params":{"a":{"b":{"c":{}}}}}"#,
        "\u{FEFF}{\"id\":1,\"method\":\"ping\"}",
    ]

    /// Every frame above, each truncated at every length, and each with every byte replaced by
    /// a few troublemakers.
    static func corpus() -> [[UInt8]] {
        var out: [[UInt8]] = []
        for f in frames {
            let b = Array(f.utf8)
            out.append(b)
            for n in 0..<b.count { out.append(Array(b[0..<n])) }
            for i in 0..<b.count {
                for r: UInt8 in [0x22, 0x5C, 0x7D, 0x2C, 0x20, 0x30, 0x00, 0xFF] where b[i] != r {
                    var m = b
                    m[i] = r
                    out.append(m)
                }
            }
        }
        return out
    }

    /// The word-at-a-time scan of plain strings stops at exactly the first byte that ends one or
    /// makes it not plain, for every byte value at every position, behind plain bytes.
    @Test func plainStringStopsAtTheFirstStopByte() {
        for b in 0...255 {
            let stop = b < 0x20 || b >= 0x7F || b == 0x22 || b == 0x5C
            for k in 0..<8 {
                var bytes = [UInt8](repeating: 0x61, count: 8)
                bytes[k] = UInt8(b)
                // Behind it, bytes that could disturb the borrows and carries.
                for m in (k + 1)..<8 { bytes[m] = [0x00, 0xFF, 0x7F, 0x22][m % 4] }
                let word = bytes.withUnsafeBytes { UInt64(littleEndian: $0.loadUnaligned(as: UInt64.self)) }
                let stops = FastRequest.plainStringStops(word)
                let first = stops == 0 ? 8 : stops.trailingZeroBitCount / 8
                if !stop { #expect(first > k, "byte \(b) at \(k)") } else { #expect(first == k, "byte \(b) at \(k)") }
            }
        }
    }

    @Test func fastPathAgreesWithTheGeneralPath() {
        var fast = 0
        for bytes in Self.corpus() {
            bytes.withUnsafeBytes { raw in
                guard let frame = FastRequest.parse(raw) else { return }
                fast += 1
                let general = Frame.classifyGeneral(raw)
                #expect(Self.describe(.success(frame)) == Self.describe(general), "\(String(decoding: bytes, as: UTF8.self))")
                if case .success(.request(_, _, _, let p)) = general, case .request(_, _, _, let q) = frame {
                    // Same members in the same order, not only equal objects.
                    #expect(JSONValue.object(p).serialized() == JSONValue.object(q).serialized())
                }
            }
        }
        // The fast path did take the common frames.
        #expect(fast > 100)
        for f in Self.frames.prefix(7) {
            Array(f.utf8).withUnsafeBytes { #expect(FastRequest.parse($0) != nil, "\(f)") }
        }
    }

    @Test func deepParamsKeepTheirDepthLimit() {
        // 64 levels in all (the envelope is one): accepted; 65: the general path's error.
        func frame(_ levels: Int) -> [UInt8] {
            Array((#"{"id":1,"method":"x","params":"# + String(repeating: #"{"a":"#, count: levels - 1) + "1"
                   + String(repeating: "}", count: levels - 1) + "}").utf8)
        }
        for levels in [63, 64, 65, 66] {
            frame(levels).withUnsafeBytes { raw in
                #expect(Self.describe(Frame.classify(raw)) == Self.describe(Frame.classifyGeneral(raw)), "\(levels)")
            }
        }
    }

    // MARK: Session table

    static func record(_ sid: String, _ serial: UInt64) -> Session {
        Session(id: sid, serial: serial, engine: SessionEngine(configuration: EngineConfiguration()))
    }

    @Test func sessionTableSlots() {
        var t = SessionTable()
        t.insert(Self.record("s-a", 1))
        t.insert(Self.record("s-b", 2))
        #expect(t["s-a"]?.serial == 1 && t["s-b"]?.serial == 2 && t["s-c"] == nil)
        #expect(t.count == 2 && !t.isEmpty && t.contains("s-a"))
        // A session taken out for a request and put back.
        let i = t.slot(of: "s-a")!
        let s = t.take(i)
        #expect(t["s-a"] == nil && t.contains("s-a"))
        s.session.idleSince = 5
        t.put(s, at: i)
        #expect(t["s-a"]?.idleSince == 5)
        #expect(t.remove("s-b")?.serial == 2)
        #expect(t["s-b"] == nil && t.count == 1)
        // A freed slot is reused.
        t.insert(Self.record("s-c", 3))
        #expect(t.slot(of: "s-c") == t.slot(of: "s-c") && t.count == 2)
        #expect(Set(t.all.map(\.id)) == ["s-a", "s-c"])
        // The sweep's question, read in the slots: s-a is idle since 5, s-c not idle.
        #expect(t.idle { $0 <= 5 }.map(\.id) == ["s-a"])
        #expect(t.idle { $0 < 5 }.isEmpty)
    }

    @Test func sessionTableCopiesStayIndependentAndCompareByContent() {
        var t = SessionTable()
        t.insert(Self.record("s-a", 1))
        let snapshot = t
        t.insert(Self.record("s-c", 3))
        #expect(t["s-c"] != nil && snapshot["s-c"] == nil)
        var other = snapshot
        other.remove("s-a")
        #expect(t["s-a"]?.serial == 1 && other["s-a"] == nil && snapshot["s-a"]?.serial == 1)
        // A session changed in its slot after the table was copied: the copy keeps the old one
        // (the slots are shared until `take`).
        let i = t.slot(of: "s-a")!
        let slot = t.take(i)
        slot.session.idleSince = 9
        t.put(slot, at: i)
        #expect(t["s-a"]?.idleSince == 9 && snapshot["s-a"]?.idleSince == nil)
        // And the other way round: the copy changed, the original not.
        var copy = t
        let j = copy.slot(of: "s-a")!
        let other2 = copy.take(j)
        other2.session.idleSince = 11
        copy.put(other2, at: j)
        #expect(copy["s-a"]?.idleSince == 11 && t["s-a"]?.idleSince == 9)
        // Equal content in other slots is equal.
        var x = SessionTable(), y = SessionTable()
        x.insert(Self.record("s-1", 1)); x.insert(Self.record("s-2", 2))
        y.insert(Self.record("s-2", 2)); y.insert(Self.record("s-1", 1))
        #expect(x == y)
        y.remove("s-1")
        #expect(x != y)
    }

    // MARK: Frames written from fragments

    /// Drives a page through navigate, rendered, back and a few errors, and checks every frame it
    /// is sent is compact canonical JSON (what key-by-key writing produced) with the right content.
    @Test func framesAreCanonicalAndComplete() throws {
        var bridge = Bridge(configuration: BridgeConfiguration(), random: SeededRandom(seed: 7))
        let page = ClientID(1)
        bridge.connected(page, isLoopback: true, at: 0)
        var frames: [[UInt8]] = []
        func send(_ text: String, at now: Int64 = 0) {
            bridge.received(page, text: Array(text.utf8), at: now)
            for case .send(_, let bytes) in bridge.drainEffects() { frames.append(bytes) }
        }
        send(#"{"id":1,"method":"hello","params":{"protocol":1,"role":"page","url":"http://h/app/"}}"#)
        send(#"{"id":2,"method":"pwa-navigate","params":{"url":"http://h/app/#/a\"q\u00e9","title":"T\n"}}"#)
        send(#"{"id":3,"method":"pwa-rendered","params":{}}"#, at: 42_000)
        send(#"{"id":4,"method":"pwa-rendered","params":{}}"#, at: 43_000)
        send(#"{"id":5,"method":"back","params":{}}"#)
        send(#"{"id":6,"method":"back","params":{}}"#)
        send(#"{"id":-7,"method":"ping"}"#)
        send(#"{"id":8,"method":"no \"such\""}"#)
        send(#"{"id":9,"method":"pwa-rendered","params":[]}"#)
        send(#"nonsense"#)
        send(#"{"event":"pwa-navigate","params":{"url":"http://h/x"}}"#)
        send(#"{"id":10,"method":"back"}"#)
        var parsed: [JSONValue] = []
        for bytes in frames {
            let value = try JSONParser.parse(bytes)
            #expect(value.serialized() == bytes, "\(String(decoding: bytes, as: UTF8.self))")
            parsed.append(value)
        }
        func reply(_ id: Int64) -> JSONValue? { parsed.first { $0["id"] == .int(id) } }
        #expect(reply(2)?["result"]?["placeholder"] == "P1")
        #expect(BridgeHarness.ids(reply(2)?["result"]?["stack"]) == "P1 W1")
        #expect(reply(2)?["result"]?["stack"]?[1]?["url"] == "http://h/app/#/a\"qé")
        #expect(reply(2)?["result"]?["stack"]?[1]?["title"] == "T\n")
        #expect(reply(3)?["result"] == ["removed": true, "reason": "rendered", "latencyMs": 42])
        #expect(reply(4)?["result"] == ["removed": false])
        #expect(reply(5)?["result"]?["action"] == "swap")
        #expect(reply(5)?["result"]?["removed"] == ["P1"])
        #expect(BridgeHarness.ids(reply(5)?["result"]?["stack"]) == "W1")
        #expect(reply(6)?["result"]?["action"] == "none")
        #expect(reply(6)?["result"]?["removed"] == [])
        #expect(reply(-7)?["result"] == .object([:]))
        #expect(reply(8)?["error"]?["code"] == "unknown-method")
        #expect(reply(8)?["error"]?["message"] == #"no method "no "such"""#)
        #expect(reply(9)?["error"]?["code"] == "invalid-params")
        #expect(parsed.contains { $0["id"] == .null && $0["error"]?["code"] == "parse-error" })
        #expect(parsed.contains { $0["event"] == "back" && $0["params"] == ["placeholder": "P1", "url": "http://h/app/"] })
        #expect(reply(10)?["result"]?["action"] == "swap")
    }

    // MARK: The cached stack rewritten from its first changed item

    /// Every stack a reply carries is the stack as `writeStack` writes it from the engine's items,
    /// while `stackJSON` keeps the bytes of the placeholders at the bottom from the last writing:
    /// pushes and swaps over placeholders, pops that uncover them, a placeholder replaced by
    /// another in the same place, a web view between placeholders (nothing kept above it).
    @Test func cachedStackKeepsOnlyUnchangedPlaceholders() throws {
        var bridge = Bridge(configuration: BridgeConfiguration(), random: SeededRandom(seed: 11))
        var page = ClientID(1)
        bridge.connected(page, isLoopback: true, at: 0)
        var checked = 0
        var load: JSONValue?
        func send(_ text: String) throws {
            bridge.received(page, text: Array(text.utf8), at: 0)
            for case .send(_, let bytes) in bridge.drainEffects() {
                let frame = try JSONParser.parse(bytes)
                #expect(frame["error"] == nil, "\(text): \(frame)")
                if frame["event"] == "load" { load = frame["params"] }
                guard let stack = frame["result"]?["stack"] else { continue }
                let sid = try #require(bridge.sessionIDs.first)
                var w = JSONWriter()
                Bridge<SeededRandom>.writeStack(try #require(bridge.engine(of: sid)).stack, into: &w)
                #expect(stack.serialized() == w.bytes, "\(text)")
                checked += 1
            }
        }
        try send(#"{"id":1,"method":"hello","params":{"protocol":1,"role":"page","url":"http://h/app/"}}"#)
        var id = 2
        func call(_ method: String, _ params: String = "{}") throws {
            try send(#"{"id":"# + "\(id)" + #","method":""# + method + #"","params":"# + params + "}")
            id += 1
        }
        for step in 1...4 {
            try call("pwa-navigate", #"{"url":"http://h/app/#/"# + "\(step)" + #"","title":"t\"\u00e9"# + "\(step)" + #""}"#)
            try call("pwa-rendered")
        }
        try call("back")  // swap: P4 goes, P1 P2 P3 stay
        try call("pwa-navigate", #"{"url":"http://h/app/#/5"}"#)  // P5 where P4 was
        try call("back")
        try call("back")  // P1 P2 W1
        try call("navigate", #"{"url":"http://h/other/"}"#)  // P1 P2 W1 W2; W1's page is sent to W2
        let target = try #require(load)
        page = ClientID(2)
        bridge.connected(page, isLoopback: true, at: 0)
        func json(_ v: JSONValue?) -> String { String(decoding: v?.serialized() ?? [], as: UTF8.self) }
        let hello = #"{"protocol":1,"role":"page","session":"# + json(target["session"])
            + #","webview":"W2","token":"# + json(target["token"]) + #","url":"http://h/other/"}"#
        try call("hello", hello)
        try call("pwa-navigate", #"{"url":"http://h/other/#/1"}"#)  // P1 P2 W1 P6 W2: nothing kept above W1
        try call("pwa-navigate", #"{"url":"http://h/other/#/2"}"#)
        for _ in 1...3 { try call("back") }  // swap, swap, then W2 popped: P1 P2 W1
        #expect(checked >= 14)
    }

    // MARK: Frame storage reused

    /// A frame goes into the storage of the last one once nothing else holds it (what
    /// `Daemon.perform` arranges), and a frame something still holds is never written over.
    @Test func framesReuseStorageOnlyWhenNothingElseHoldsIt() {
        var bridge = Bridge(configuration: BridgeConfiguration(), random: SeededRandom(seed: 7))
        let client = ClientID(1)
        var effects: [BridgeEffect] = []
        func request(_ text: String) -> [UInt8] {
            Array(text.utf8).withUnsafeBytes { bridge.apply(frame: client, text: $0, at: 0) }
            effects.removeAll()
            bridge.drainEffects(into: &effects)
            guard effects.count == 1, case .send(client, let bytes) = effects[0] else {
                Issue.record("expected one frame, got \(effects)")
                return []
            }
            return bytes
        }
        func address(_ a: [UInt8]) -> UnsafeRawPointer? { a.withUnsafeBytes { $0.baseAddress } }
        bridge.apply(.connected(client, isLoopback: true, origin: nil), at: 0)
        bridge.drainEffects(into: &effects)
        _ = request(#"{"id":1,"method":"hello","params":{"protocol":1,"role":"page","url":"http://h/app/"}}"#)

        // Held: the next frame gets storage of its own, the held one is unchanged.
        let held = request(#"{"id":2,"method":"ping"}"#)
        let next = request(#"{"id":300,"method":"ping"}"#)
        #expect(held == Array(#"{"id":2,"result":{}}"#.utf8))
        #expect(next == Array(#"{"id":300,"result":{}}"#.utf8))
        #expect(address(held) != address(next))

        // Let go of (the host performed and wrote it): the next frame is written over it, a
        // short one into the long one's storage (a fresh array would be a small allocation).
        let long = request(#"{"id":4,"method":"#  + "\"" + String(repeating: "m", count: 500) + #"","params":{}}"#)
        #expect(long.count > 500)
        let storage = address(long)
        _ = consume long
        effects.removeAll()
        let reused = request(#"{"id":5,"method":"ping"}"#)
        #expect(reused == Array(#"{"id":5,"result":{}}"#.utf8))
        #expect(address(reused) == storage)
        #expect(reused.capacity > 500)
    }

    /// The stack cache is written over in place while its capacity is at most twice what it
    /// holds or at most `stackCacheFloor` (1 KiB), and a new one has room for half as much again:
    /// a stack that grows and shrinks by a few items keeps one allocation.
    @Test func stackCacheKeepsItsStorageUpToTheFloorOrTwiceItsBytes() {
        typealias B = Bridge<SeededRandom>
        func address(_ a: [UInt8]) -> UnsafeRawPointer? { a.withUnsafeBytes { $0.baseAddress } }
        func write(_ cache: inout [UInt8], _ count: Int, _ byte: UInt8) {
            let bytes = [UInt8](repeating: byte, count: count)
            bytes.withUnsafeBufferPointer { B.overwrite(&cache, with: $0) }
            #expect(cache == bytes)
        }
        #expect(B.stackCacheFloor == 1024)
        var cache: [UInt8] = []
        write(&cache, 200, 1)
        #expect(cache.capacity >= 300)  // room for half as much again
        let first = address(cache)
        write(&cache, 300, 2)  // grew, still fits
        write(&cache, 2, 3)  // far below half, but the capacity is under the floor
        #expect(address(cache) == first)

        // Above the floor: kept while it holds at least half its capacity.
        write(&cache, 1200, 4)
        let large = address(cache)
        let capacity = cache.capacity
        #expect(capacity >= 1800)
        write(&cache, capacity / 2 + 1, 5)
        #expect(address(cache) == large)
        write(&cache, 100, 6)  // under half of a capacity above the floor: a new, smaller cache
        #expect(address(cache) != large)
        #expect(cache.capacity < B.stackCacheFloor)

        // Held elsewhere (a reply not yet written): copy on write leaves the held bytes as they were.
        let held = cache
        write(&cache, 120, 7)
        #expect(held == [UInt8](repeating: 6, count: 100))
    }
}
