import BridgeProtocol

/// The trace format: JSON Lines, one object per line, the first line a header.
///
/// Every line but the header carries `"t"`, the monotonic time in microseconds that the daemon
/// handed to the protocol state machine, and `"k"`, its kind:
///
/// - inputs (the `BridgeInput`s the daemon fed the state machine, in order): `connect`, `in`,
///   `binary`, `disconnect`, `timer`, `sweep`, `host-result` (what the browser did: `"what"`
///   names it, e.g. `tab-opened`, `snapshot-taken`, `navigation-stopped`; HostLines.swift) and
///   `open` (`bridged open`); each carries `"rand"` when the state machine drew random words
///   (session ids, tokens) while handling it, so a replay draws the same ones;
/// - outputs (the effects the state machine asked for, in order, right after their input):
///   `out` (a frame sent), `close`, `schedule`, `cancel`, `host` (work for the browser, e.g.
///   `"what":"open-tab"`);
/// - observations: `stack` (a session's stack changed, in the seed's notation), `snapshot`
///   (a placeholder was stacked; where its image is served).
public enum TraceFormat {
    /// The version this build writes and replays. Bumped whenever a trace written before can no
    /// longer replay identically (the lines mean something else, or the state machine changed).
    public static let version = 1
    /// The header's `"trace"` member, which marks a file as a bridged trace.
    public static let magic = "bridged"
    /// How an input line ends when its effects come after the next input's.
    static let moreMarker = #","more":true}"#
}

/// One line of a trace, after the header.
public enum TraceEvent: Equatable, Sendable {
    case input(BridgeInput, at: Int64, random: [UInt64])
    case output(BridgeEffect, at: Int64)
    /// `stack` is the session's stack in the seed's notation; nil when the session is gone.
    case stack(session: String, stack: String?, at: Int64)
    /// A placeholder was stacked; `ref` is the path its snapshot is served at.
    case snapshot(session: String, placeholder: String, ref: String, at: Int64)

    public var time: Int64 {
        switch self {
        case .input(_, let t, _), .output(_, let t), .stack(_, _, let t), .snapshot(_, _, _, let t): return t
        }
    }

    public var isInput: Bool { if case .input = self { return true } else { return false } }
    public var isOutput: Bool { if case .output = self { return true } else { return false } }
}

/// The first line: what a replay needs to build the same state machine.
public struct TraceHeader: Equatable, Sendable {
    public var format: Int
    /// The daemon's version (`bridged --version`), for messages about old traces.
    public var daemonVersion: String
    public var foregroundTimeoutMs: Int
    public var maxStackDepth: Int
    public var maxSessions: Int
    public var sessionIdleSeconds: Int
    /// The controller token the daemon required (a trace holds page tokens too: keep traces
    /// private).
    public var controllerToken: String?
    /// The routing configuration's YAML text and the origin it was completed with.
    public var routerYAML: String?
    public var origin: String?
    /// `--allow-controller-origin`, `--max-url-bytes`, `--max-session-bytes`: they decide
    /// which requests are refused. Traces written before they were recorded have the defaults.
    public var controllerOrigins: [String]
    public var maxURLBytes: Int
    public var maxSessionBytes: Int
    /// `--max-snapshot-bytes`: decides which snapshots a browser session still has.
    public var snapshotBytesPerSession: Int
    /// `--max-tabs-per-session`: decides which navigations of a browser session are refused.
    public var maxTabsPerSession: Int
    /// Off with `--devtools`: decides whether a closed web view's tab is kept (`keepTab`) or
    /// closed.
    public var keepsTabs: Bool

    public init(configuration: BridgeConfiguration, routerYAML: String? = nil, origin: String? = nil) {
        format = TraceFormat.version
        daemonVersion = configuration.version
        foregroundTimeoutMs = configuration.engine.foregroundTimeoutMs
        maxStackDepth = configuration.engine.maxStackDepth
        maxSessions = configuration.maxSessions
        sessionIdleSeconds = configuration.sessionIdleSeconds
        controllerToken = configuration.controllerToken
        controllerOrigins = configuration.controllerOrigins
        maxURLBytes = configuration.maxURLBytes
        maxSessionBytes = configuration.maxSessionBytes
        snapshotBytesPerSession = configuration.snapshotBytesPerSession
        maxTabsPerSession = configuration.maxTabsPerSession
        keepsTabs = configuration.keepsTabs
        self.routerYAML = routerYAML
        self.origin = origin
    }

    public var bridgeConfiguration: BridgeConfiguration {
        var c = BridgeConfiguration(
            engine: EngineConfiguration(foregroundTimeoutMs: foregroundTimeoutMs, maxStackDepth: maxStackDepth),
            maxSessions: maxSessions, sessionIdleSeconds: sessionIdleSeconds,
            controllerToken: controllerToken, version: daemonVersion)
        c.controllerOrigins = controllerOrigins
        c.maxURLBytes = maxURLBytes
        c.maxSessionBytes = maxSessionBytes
        c.snapshotBytesPerSession = snapshotBytesPerSession
        c.maxTabsPerSession = maxTabsPerSession
        c.keepsTabs = keepsTabs
        return c
    }
}

/// A line that is not what the format says.
public struct TraceError: Error, Equatable, Sendable, CustomStringConvertible {
    /// 1-based line number in the file.
    public var line: Int
    public var message: String
    public init(line: Int, _ message: String) {
        self.line = line
        self.message = message
    }
    public var description: String { "line \(line): \(message)" }
}

// MARK: - Encoding

extension TraceHeader {
    public var line: String {
        var o = JSONObject()
        o["trace"] = .string(TraceFormat.magic)
        o["format"] = .int(Int64(format))
        o["version"] = .string(daemonVersion)
        o["foregroundTimeoutMs"] = .int(Int64(foregroundTimeoutMs))
        o["maxStackDepth"] = .int(Int64(maxStackDepth))
        o["maxSessions"] = .int(Int64(maxSessions))
        o["sessionIdleS"] = .int(Int64(sessionIdleSeconds))
        if let controllerToken { o["controllerToken"] = .string(controllerToken) }
        if !controllerOrigins.isEmpty { o["controllerOrigins"] = .array(controllerOrigins.map { .string($0) }) }
        let defaults = BridgeConfiguration()
        if maxURLBytes != defaults.maxURLBytes { o["maxURLBytes"] = .int(Int64(maxURLBytes)) }
        if maxSessionBytes != defaults.maxSessionBytes { o["maxSessionBytes"] = .int(Int64(maxSessionBytes)) }
        if snapshotBytesPerSession != defaults.snapshotBytesPerSession { o["snapshotBytes"] = .int(Int64(snapshotBytesPerSession)) }
        if maxTabsPerSession != defaults.maxTabsPerSession { o["maxTabs"] = .int(Int64(maxTabsPerSession)) }
        if keepsTabs != defaults.keepsTabs { o["keepsTabs"] = .bool(keepsTabs) }
        if let routerYAML { o["router"] = .string(routerYAML) }
        if let origin { o["origin"] = .string(origin) }
        return JSONValue.object(o).jsonString
    }

    /// Reads a header line; a file that is no trace, or a trace of another format, says so.
    public static func parse(_ text: String) throws(TraceError) -> TraceHeader {
        let v: JSONValue
        do { v = try JSONParser.parse(text, maxDepth: 8) } catch { throw TraceError(line: 1, "not a bridged trace: the first line is not JSON (\(error))") }
        guard v["trace"]?.stringValue == TraceFormat.magic, let format = v["format"]?.intValue else {
            throw TraceError(line: 1, "not a bridged trace: the first line has no \"trace\":\"bridged\" header")
        }
        let recordedBy = v["version"]?.stringValue ?? "an unknown version"
        guard format == Int64(TraceFormat.version) else {
            throw TraceError(line: 1, "this trace is format \(format) (recorded by bridged \(recordedBy)); this bridged reads format \(TraceFormat.version) only: record it again with this version of bridged")
        }
        func int(_ key: String) throws(TraceError) -> Int {
            guard let i = v[key]?.intValue else { throw TraceError(line: 1, "the header has no integer \"\(key)\"") }
            return Int(i)
        }
        var h = TraceHeader(configuration: BridgeConfiguration())
        h.format = Int(format)
        h.daemonVersion = recordedBy
        h.foregroundTimeoutMs = try int("foregroundTimeoutMs")
        h.maxStackDepth = try int("maxStackDepth")
        h.maxSessions = try int("maxSessions")
        h.sessionIdleSeconds = try int("sessionIdleS")
        h.controllerToken = v["controllerToken"]?.stringValue
        if let origins = v["controllerOrigins"] {
            let list = origins.arrayValue?.compactMap(\.stringValue)
            guard let list, list.count == origins.arrayValue?.count else {
                throw TraceError(line: 1, "the header's \"controllerOrigins\" is not an array of strings")
            }
            h.controllerOrigins = list
        }
        if v["maxURLBytes"] != nil { h.maxURLBytes = try int("maxURLBytes") }
        if v["maxSessionBytes"] != nil { h.maxSessionBytes = try int("maxSessionBytes") }
        if v["snapshotBytes"] != nil { h.snapshotBytesPerSession = try int("snapshotBytes") }
        if v["maxTabs"] != nil { h.maxTabsPerSession = try int("maxTabs") }
        if let keeps = v["keepsTabs"] {
            guard let value = keeps.boolValue else { throw TraceError(line: 1, "the header's \"keepsTabs\" is not a boolean") }
            h.keepsTabs = value
        }
        h.routerYAML = v["router"]?.stringValue
        h.origin = v["origin"]?.stringValue
        return h
    }
}

extension TraceEvent {
    /// The event as one JSON line (no newline).
    public var line: String {
        var o = JSONObject()
        o["t"] = .int(time)
        switch self {
        case .input(let input, _, let random):
            switch input {
            case .connected(let c, let loopback, let origin):
                o["k"] = "connect"; o["c"] = .int(Int64(bitPattern: c.raw)); o["loopback"] = .bool(loopback)
                if let origin { o["origin"] = .string(origin) }
            case .frame(let c, let bytes):
                o["k"] = "in"; o["c"] = .int(Int64(bitPattern: c.raw))
                if let s = String(validating: bytes, as: UTF8.self) {
                    o["text"] = .string(s)
                } else {
                    o["hex"] = .string(Hex.encode(bytes))
                }
            case .binaryFrame(let c):
                o["k"] = "binary"; o["c"] = .int(Int64(bitPattern: c.raw))
            case .left(let c):
                o["k"] = "disconnect"; o["c"] = .int(Int64(bitPattern: c.raw))
            case .timerFired(let key):
                o["k"] = "timer"; o["session"] = .int(Int64(bitPattern: key.session)); o["token"] = .int(Int64(bitPattern: key.token.raw))
            case .sweep:
                o["k"] = "sweep"
            case .host(let result):
                o["k"] = "host-result"; HostLines.write(result, into: &o)
            case .openBrowserSession(let url, let profile, let params):
                o["k"] = "open"; o["url"] = .string(url)
                if !profile.isPlain { o["profile"] = .object(profile.params) }
                if !params.isEmpty { o["params"] = .object(params) }
            }
            if !random.isEmpty { o["rand"] = .array(random.map { .string(Hex.word($0)) }) }
        case .output(let effect, _):
            switch effect {
            case .send(let c, let bytes):
                o["k"] = "out"; o["c"] = .int(Int64(bitPattern: c.raw)); o["text"] = .string(String(decoding: bytes, as: UTF8.self))
            case .close(let c, let code, let reason):
                o["k"] = "close"; o["c"] = .int(Int64(bitPattern: c.raw)); o["code"] = .int(Int64(code)); o["reason"] = .string(reason)
            case .schedule(let key, let ms):
                o["k"] = "schedule"; o["session"] = .int(Int64(bitPattern: key.session)); o["token"] = .int(Int64(bitPattern: key.token.raw)); o["ms"] = .int(Int64(ms))
            case .cancel(let key):
                o["k"] = "cancel"; o["session"] = .int(Int64(bitPattern: key.session)); o["token"] = .int(Int64(bitPattern: key.token.raw))
            case .host(let work):
                o["k"] = "host"; HostLines.write(work, into: &o)
            }
        case .stack(let session, let stack, _):
            o["k"] = "stack"; o["session"] = .string(session)
            o["stack"] = stack.map { .string($0) } ?? .null
        case .snapshot(let session, let placeholder, let ref, _):
            o["k"] = "snapshot"; o["session"] = .string(session); o["placeholder"] = .string(placeholder); o["ref"] = .string(ref)
        }
        return JSONValue.object(o).jsonString
    }

    /// Reads one line; `number` (1-based) is only for the error.
    public static func parse(_ text: String, number: Int) throws(TraceError) -> TraceEvent {
        let v: JSONValue
        do { v = try JSONParser.parse(text, maxDepth: 64) } catch { throw TraceError(line: number, "not JSON: \(error)") }
        guard let kind = v["k"]?.stringValue else { throw TraceError(line: number, "no kind (\"k\")") }
        guard let t = v["t"]?.intValue else { throw TraceError(line: number, "no time (\"t\")") }
        func int(_ key: String) throws(TraceError) -> Int64 {
            guard let i = v[key]?.intValue else { throw TraceError(line: number, "a \"\(kind)\" line needs an integer \"\(key)\"") }
            return i
        }
        func string(_ key: String) throws(TraceError) -> String {
            guard let s = v[key]?.stringValue else { throw TraceError(line: number, "a \"\(kind)\" line needs a string \"\(key)\"") }
            return s
        }
        func client() throws(TraceError) -> UInt64 { UInt64(bitPattern: try int("c")) }
        func timerKey() throws(TraceError) -> TimerKey {
            TimerKey(session: UInt64(bitPattern: try int("session")), token: TimerToken(UInt64(bitPattern: try int("token"))))
        }
        var random: [UInt64] = []
        if let words = v["rand"]?.arrayValue {
            for w in words {
                guard let s = w.stringValue, let word = Hex.parseWord(s) else { throw TraceError(line: number, "\"rand\" holds 16-digit hex words") }
                random.append(word)
            }
        }
        switch kind {
        case "connect":
            return .input(.connected(ClientID(try client()), isLoopback: v["loopback"]?.boolValue ?? true, origin: v["origin"]?.stringValue),
                          at: t, random: random)
        case "in":
            let bytes: [UInt8]
            if let s = v["text"]?.stringValue {
                bytes = Array(s.utf8)
            } else if let h = v["hex"]?.stringValue, let b = Hex.decode(h) {
                bytes = b
            } else {
                throw TraceError(line: number, "an \"in\" line needs \"text\" (or \"hex\")")
            }
            return .input(.frame(ClientID(try client()), text: bytes), at: t, random: random)
        case "binary": return .input(.binaryFrame(ClientID(try client())), at: t, random: random)
        case "disconnect": return .input(.left(ClientID(try client())), at: t, random: random)
        case "timer": return .input(.timerFired(try timerKey()), at: t, random: random)
        case "sweep": return .input(.sweep, at: t, random: random)
        case "out": return .output(.send(ClientID(try client()), Array(try string("text").utf8)), at: t)
        case "close": return .output(.close(ClientID(try client()), code: Int(try int("code")), reason: try string("reason")), at: t)
        case "schedule": return .output(.schedule(try timerKey(), afterMs: Int(try int("ms"))), at: t)
        case "cancel": return .output(.cancel(try timerKey()), at: t)
        case "stack": return .stack(session: try string("session"), stack: v["stack"]?.stringValue, at: t)
        case "host-result": return .input(.host(try HostLines.result(HostLines.Reader(v: v, line: number, kind: kind))), at: t, random: random)
        case "open":
            var profile = SessionProfile.plain
            if let params = v["profile"]?.objectValue {
                do {
                    profile = try SessionProfile.parse(params)
                } catch {
                    throw TraceError(line: number, "the profile of \"open\": \(error.message)")
                }
            }
            return .input(.openBrowserSession(url: try string("url"), profile: profile, params: v["params"]?.objectValue ?? JSONObject()),
                          at: t, random: random)
        case "host" where v["call"] != nil, "host-abandon", "host-event", "hostout":
            throw TraceError(line: number, "a browser line of an older bridged (\"\(kind)\"): its host lines were text and cannot be replayed; record the session again")
        case "host": return .output(.host(try HostLines.work(HostLines.Reader(v: v, line: number, kind: kind))), at: t)
        case "snapshot": return .snapshot(session: try string("session"), placeholder: try string("placeholder"), ref: try string("ref"), at: t)
        default: throw TraceError(line: number, "unknown kind \"\(kind)\"")
        }
    }
}

/// A whole trace file, parsed.
public struct Trace: Sendable {
    public var header: TraceHeader
    /// Each event with its 1-based line number in the file.
    public var events: [(line: Int, event: TraceEvent)]
    /// Lines of inputs whose effects come after the next input's (`"more":true`).
    public var more: Set<Int>

    public init(header: TraceHeader, events: [(line: Int, event: TraceEvent)], more: Set<Int> = []) {
        self.header = header
        self.events = events
        self.more = more
    }

    /// Parses a file's text. Blank lines are skipped (their numbers still count).
    public static func parse(_ text: String) throws(TraceError) -> Trace {
        var lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        if lines.last == "" { lines.removeLast() }
        guard let first = lines.first, !first.isEmpty else { throw TraceError(line: 1, "the trace is empty") }
        let header = try TraceHeader.parse(first)
        var events: [(line: Int, event: TraceEvent)] = []
        var more = Set<Int>()
        for (i, l) in lines.enumerated().dropFirst() where !l.allSatisfy({ $0 == " " || $0 == "\r" }) {
            events.append((i + 1, try TraceEvent.parse(l, number: i + 1)))
            if l.hasSuffix(TraceFormat.moreMarker) { more.insert(i + 1) }
        }
        return Trace(header: header, events: events, more: more)
    }
}

enum Hex {
    static let digits = Array("0123456789abcdef".utf8)

    static func encode(_ bytes: [UInt8]) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count * 2)
        for b in bytes { out.append(digits[Int(b >> 4)]); out.append(digits[Int(b & 15)]) }
        return String(decoding: out, as: UTF8.self)
    }

    static func word(_ w: UInt64) -> String {
        var out = [UInt8](repeating: 0, count: 16)
        for i in 0..<16 { out[i] = digits[Int((w >> UInt64(60 - 4 * i)) & 15)] }
        return String(decoding: out, as: UTF8.self)
    }

    static func value(_ c: UInt8) -> UInt8? {
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return c - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return c - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return c - UInt8(ascii: "A") + 10
        default: return nil
        }
    }

    static func parseWord(_ s: String) -> UInt64? {
        let u = Array(s.utf8)
        guard u.count == 16 else { return nil }
        var w: UInt64 = 0
        for c in u { guard let d = value(c) else { return nil }; w = w << 4 | UInt64(d) }
        return w
    }

    static func decode(_ s: String) -> [UInt8]? {
        let u = Array(s.utf8)
        guard u.count % 2 == 0 else { return nil }
        var out: [UInt8] = []
        var i = 0
        while i < u.count {
            guard let a = value(u[i]), let b = value(u[i + 1]) else { return nil }
            out.append(a << 4 | b)
            i += 2
        }
        return out
    }
}
