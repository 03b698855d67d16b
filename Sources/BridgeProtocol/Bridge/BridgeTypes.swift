/// One WebSocket connection, as the host numbers it.
public struct ClientID: Hashable, Sendable, Comparable, CustomStringConvertible {
    public let raw: UInt64
    public init(_ raw: UInt64) { self.raw = raw }
    public var description: String { "#\(raw)" }
    public static func < (a: ClientID, b: ClientID) -> Bool { a.raw < b.raw }
    /// Every frame looks its client up (see `NumberHash`).
    @inlinable public func _rawHashValue(seed: Int) -> Int { NumberHash.mix(raw, seed: seed) }
}

/// A cheap hash for keys the daemon numbers itself (client ids, timer keys, item ids), in the
/// place of the standard library's SipHash (≈ 200 instructions per lookup of a `ClientID`, every
/// frame; ≈ 260 per timer key, twice per navigation): the number xored with the table's seed
/// and mixed with the finalizer of MurmurHash3 (every input bit reaches every output bit).
/// Dictionaries and sets call `_rawHashValue(seed:)`, the requirement of `Hashable` that
/// `hash(into:)` normally feeds; equal keys still hash equal, and the per-table seed still
/// varies the order. These numbers are not chosen by peers (a peer names an item, but the
/// daemon draws the ids), so no peer can pick keys that collide. That is the whole defence: the
/// seed is no secret (a native table's is its storage address, not the per-process random key
/// SipHash adds) and the mix is invertible, so a table that ever holds keys a peer chose (an
/// `ItemID` parsed from a frame and inserted without being checked against the session's own,
/// a `ClientID` from the wire) would be open to flooding. Today every parsed id is only looked
/// up, or inserted after it was found among the session's (`claim` in Handshake.swift).
@usableFromInline
enum NumberHash {
    @inlinable @inline(__always)
    static func mix(_ value: UInt64, seed: Int) -> Int {
        var x = value ^ UInt64(bitPattern: Int64(seed))
        x ^= x >> 33
        x &*= 0xFF51_AFD7_ED55_8CCD
        x ^= x >> 33
        x &*= 0xC4CE_B9FE_1A85_EC53
        x ^= x >> 33
        return Int(bitPattern: UInt(x))
    }
}

/// A timer of one session's engine, as the host must run it.
public struct TimerKey: Hashable, Sendable, CustomStringConvertible {
    /// The session's serial number (never reused within a daemon's life).
    public let session: UInt64
    public let token: TimerToken
    public init(session: UInt64, token: TimerToken) {
        self.session = session
        self.token = token
    }
    public var description: String { "S\(session).\(token)" }
    /// Scheduled and cancelled about once per navigation (see `NumberHash`).
    @inlinable public func _rawHashValue(seed: Int) -> Int {
        NumberHash.mix(session &* 0x9E37_79B9_7F4A_7C15 ^ token.raw, seed: seed)
    }
}

/// What the host of a `Bridge` must do, in order.
public enum BridgeEffect: Equatable, Sendable {
    /// Queue one text message for the client.
    case send(ClientID, [UInt8])
    /// Close the client's connection with `code` once what was queued before is written.
    case close(ClientID, code: Int, reason: String)
    /// Call `timerFired(_:at:)` with this key after `afterMs` milliseconds.
    case schedule(TimerKey, afterMs: Int)
    case cancel(TimerKey)
    /// Work for the host's browser (browser sessions only; see `HostWork`).
    /// (Boxed: the work is large, and every effect of every message is copied by its size.)
    indirect case host(HostWork)
}

/// The daemon's protocol settings; defaults are the contract's.
public struct BridgeConfiguration: Sendable, Equatable {
    public var engine: EngineConfiguration
    /// `--max-sessions`: a `hello` or `session.create` that would create one more is refused.
    public var maxSessions: Int
    /// `--session-idle-s`: a session with no connection for this long is discarded.
    public var sessionIdleSeconds: Int
    /// `--token` / `BRIDGED_TOKEN`: what a controller must present. Without one, controllers
    /// are accepted from loopback peers only.
    public var controllerToken: String?
    /// Reported by `hello` to controllers and by `/healthz`.
    public var version: String
    /// `--max-url-bytes`: the longest url or title a request or event may carry (UTF-8 bytes);
    /// longer ones are refused with `invalid-params`. Browsers and CDNs stop near 8 KiB.
    public var maxURLBytes: Int = 8 * 1024
    /// `--max-session-bytes`: the most bytes of urls and titles one session may hold (every item
    /// of its stacks, plus 64 per item); what would take it over is refused with
    /// `limit-exceeded`.
    public var maxSessionBytes: Int = 1024 * 1024
    /// `--allow-controller-origin`: browser origins (`http://localhost:5173`) whose pages may
    /// say `hello` as a controller without the token. Without a configured token, a controller
    /// `hello` on a connection whose upgrade carried an `Origin` header is refused unless the
    /// origin is listed here (a stricter rule than the contract's "loopback peers").
    public var controllerOrigins: [String] = []
    /// Keep a human-readable line for every transition (stacks in the seed's notation,
    /// foregrounds, late `pwa-rendered`), for the daemon's log. Off by default: it costs a
    /// string per transition.
    public var trace: Bool = false
    /// Count requests, errors, navigations, … for the daemon's metrics (BridgeStats).
    public var countStats: Bool = true
    /// `--instance NAME`: every session id reads `s-NAME-RANDOM`, so that a proxy in front of
    /// several daemons routes a session's connections by the name inside its id. nil: `s-RANDOM`.
    public var instance: String? = nil
    /// `--max-snapshot-bytes`: the most bytes of placeholder snapshots a browser session keeps;
    /// the oldest go first beyond it.
    public var snapshotBytesPerSession: Int = 8 << 20
    /// `--max-tabs-per-session`: the most live tabs (web views with a tab) a browser session may
    /// have; a navigation that would open one more is refused with `session.limit` (a page that
    /// navigates itself every few milliseconds, or opens windows in a loop). A tab costs about
    /// 140 MiB of Chromium's memory: the daemon sizes the default by the machine's memory
    /// (`defaultMaxTabs(physicalMemory:)`).
    public var maxTabsPerSession: Int = 32
    /// Whether a profile may keep a closed web view's tab for a later web view of its own
    /// (`HostWork.keepTab`, asked for through `ProfileState.keepsTab`).
    /// The daemon turns it off with `--devtools`: to a DevTools client (Playwright, Puppeteer) a
    /// web view's page closes with it, and a kept tab would be a page left open.
    public var keepsTabs: Bool = true

    /// An eighth of `physicalMemory` in tabs of 140 MiB, between 4 and 64: a session that runs
    /// away takes at most that much of the machine.
    public static func defaultMaxTabs(physicalMemory: UInt64) -> Int {
        let tabs = physicalMemory / 8 / (140 << 20)
        return Int(min(64, max(4, tabs)))
    }

    /// The profiles `session.create {profile}` knows (Profiles/Registry.swift).
    public var profiles: ProfileRegistry = .standard

    /// What `--instance` accepts: 1 to 16 of `a-z` and `0-9`.
    public static func isValidInstance(_ name: String) -> Bool {
        let bytes = name.utf8
        return (1...16).contains(bytes.count) && bytes.allSatisfy { (0x61...0x7A).contains($0) || (0x30...0x39).contains($0) }
    }

    public init(
        engine: EngineConfiguration = EngineConfiguration(),
        maxSessions: Int = 10_000,
        sessionIdleSeconds: Int = 300,
        controllerToken: String? = nil,
        version: String = BridgedVersion.string
    ) {
        self.engine = engine
        self.maxSessions = maxSessions
        self.sessionIdleSeconds = sessionIdleSeconds
        self.controllerToken = controllerToken
        self.version = version
    }

    /// Whether a page of `origin` may be a controller without the token (ASCII case and a
    /// trailing `/` are ignored).
    public func allowsControllerOrigin(_ origin: String) -> Bool {
        let o = Self.normalizedOrigin(origin)
        return controllerOrigins.contains { Self.normalizedOrigin($0) == o }
    }

    static func normalizedOrigin(_ origin: String) -> String {
        var o = origin.lowercased()
        while o.hasSuffix("/") { o.removeLast() }
        return o
    }
}

/// The protocol's error codes (section 2).
public enum ErrorCode: String, Sendable, CaseIterable {
    case parseError = "parse-error"
    case invalidRequest = "invalid-request"
    case unknownMethod = "unknown-method"
    case invalidParams = "invalid-params"
    case notReady = "not-ready"
    case notAllowed = "not-allowed"
    case unknownSession = "unknown-session"
    case unknownWebview = "unknown-webview"
    case unknownRoute = "unknown-route"
    case conflict = "conflict"
    case limitExceeded = "limit-exceeded"
    /// The browser of a browser session failed; the message is the browser's.
    case browserError = "browser-error"
    /// A browser session's page did not answer within the call's time (a busy loop).
    case pageUnresponsive = "page-unresponsive"
    /// A browser session's web view whose renderer died; `webview.reload` brings it back.
    case webviewCrashed = "webview-crashed"
    case `internal` = "internal"
}

/// A failed request: its code and a message for people.
public struct ProtocolError: Error, Equatable, Sendable {
    public var code: ErrorCode
    public var message: String
    public init(_ code: ErrorCode, _ message: String) {
        self.code = code
        self.message = message
    }

    init(_ e: EngineError) {
        self.init(ErrorCode(rawValue: e.code) ?? .internal, e.message)
    }

    init(_ e: RouterError) {
        self.init(ErrorCode(rawValue: e.code.rawValue) ?? .internal, e.message)
    }
}

/// Which events a controller receives: all (`names == nil`) or the listed names.
struct EventFilter: Equatable, Sendable {
    var names: Set<String>?
    static let all = EventFilter(names: nil)
    func allows(_ name: String) -> Bool { names?.contains(name) ?? true }
}
