#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The transport's settings. Every field has the documented default below; `validate()` is the
/// one place that checks them (the command line builds one of these and calls it).
public struct TransportConfiguration: Sendable {
    /// Address to listen on. Loopback (`127.0.0.1`, any 127.x, `localhost`, `::1`) is always
    /// allowed; anything else requires `token`.
    public var host: String = "127.0.0.1"
    /// 0 picks a free port; `Transport.port` has the real one once started.
    public var port: Int = 8787
    /// Only used here for the non-loopback refusal (controllers' tokens are the protocol's job).
    public var token: String? = nil
    /// A text or binary message (all fragments together) above this closes the connection with
    /// 1009. Default 64 KiB.
    public var maxMessageBytes: Int = 65536
    /// Bytes queued for one connection (not yet handed to the socket) above this close it with
    /// 1008: the peer does not read fast enough. Default 8 MiB.
    public var maxSendQueueBytes: Int = 8 << 20
    /// Exact origins (`scheme://host[:port]`) allowed to open WebSockets, in addition to the
    /// loopback ones (`http(s)://127.0.0.1[:*]`, `localhost[:*]`, `[::1][:*]`). An upgrade
    /// without an Origin header (a non-browser client) is always allowed.
    public var allowedOrigins: [String] = []
    /// Extra names accepted in the `Host` header of HTTP requests and upgrades (`name` or
    /// `name:port`; `*` accepts any), besides `localhost`, IP literals, `host` and the hosts of
    /// `allowedOrigins`. Others get 421 (DNS rebinding); see `HostHeaderPolicy`.
    public var allowedHosts: [String] = []
    /// Most connections (HTTP and WebSocket) open at once; 0 (default): the open-file limit,
    /// raised to its hard maximum at start, minus 32. Connections beyond are closed as soon as
    /// they are accepted.
    public var maxConnections: Int = 0
    /// How long the bytes queued behind the message being written may stay over
    /// `maxSendQueueBytes` before the reader counts as slow (closed with 1008). Default 10 s.
    public var slowReaderTimeout: Duration = .seconds(10)
    /// Served under `/app/` when set (must be an existing directory).
    public var staticDirectory: String? = nil
    /// Silence from the peer before lws sends a PING. Default 30 s; whole seconds, 1 s to 65,534 s.
    public var pingInterval: Duration = .seconds(30)
    /// Silence (PONGs included) before the connection is dropped. Default 60 s; more than
    /// `pingInterval`, at most 65,535 s.
    public var pingTimeout: Duration = .seconds(60)
    /// How long `stop()` waits for clients to receive their 1001 close before the context is
    /// destroyed anyway. Default 2 s; 0 to 600 s.
    public var shutdownTimeout: Duration = .milliseconds(2000)
    /// What waits for the sockets: `.epoll` (default) or `.poll` (see `EventLoop`).
    public var eventLoop: EventLoop = .epoll

    /// What the service thread waits in.
    public enum EventLoop: String, Sendable, CaseIterable {
        /// libuv's loop (epoll on Linux), owned by the transport: a round costs what is ready,
        /// whatever the number of open connections.
        case epoll
        /// lws's own `poll()` over every open descriptor: each round costs O(connections)
        /// (about 1 µs per descriptor here), which delays timers by several ms at 10,000.
        case poll
    }

    public init() {}

    /// True for 127.0.0.0/8, `localhost`, `::1` (optionally bracketed).
    public var isLoopbackHost: Bool { HostPolicy.isLoopback(host) }

    /// `http://HOST:PORT` as printed by the daemon (IPv6 literals in brackets).
    public func displayURL(port realPort: Int) -> String {
        "http://\(HostPolicy.urlHost(host)):\(realPort)"
    }

    /// Checks every field; throws a `ConfigurationError` naming the first bad one and what is
    /// expected.
    public func validate() throws(ConfigurationError) {
        func check(_ ok: Bool, _ setting: ConfigurationError.Setting, _ problem: @autoclosure () -> String) throws(ConfigurationError) {
            if !ok { throw ConfigurationError(setting, problem()) }
        }
        try check(!host.isEmpty, .host, "must not be empty")
        try check((0...65535).contains(port), .port, "must be between 0 and 65535 (got \(port))")
        if let token { try check(!token.isEmpty, .token, "must not be empty") }
        try check((64...(64 << 20)).contains(maxMessageBytes), .maxMessageBytes,
                  "must be between 64 and \(64 << 20) (got \(maxMessageBytes))")
        try check(maxSendQueueBytes >= 1024, .maxSendQueueBytes, "must be at least 1024 (got \(maxSendQueueBytes))")
        try check(pingInterval.isWholeSeconds && (1...65534).contains(pingInterval.wholeSeconds), .pingInterval,
                  "must be whole seconds between 1 and 65534 (got \(pingInterval.text))")
        try check(pingTimeout.isWholeSeconds && pingTimeout > pingInterval && pingTimeout.wholeSeconds <= 65535, .pingTimeout,
                  "must be whole seconds, more than the ping interval (\(pingInterval.text)) and at most 65535 (got \(pingTimeout.text))")
        try check(shutdownTimeout >= .zero && shutdownTimeout <= .seconds(600), .shutdownTimeout,
                  "must be between 0 and 600 s (got \(shutdownTimeout.text))")
        for origin in allowedOrigins {
            try check(OriginPolicy.isValidEntry(origin), .allowedOrigins,
                      "'\(origin)' is not an origin of the form scheme://host[:port] (or '*' or 'null')")
        }
        for entry in allowedHosts {
            try check(HostHeaderPolicy.isValidEntry(entry), .allowedHosts, "'\(entry)' is not a host name or address (optionally with :port), or '*'")
        }
        try check(maxConnections >= 0, .maxConnections, "must be 0 (automatic) or more (got \(maxConnections))")
        try check(slowReaderTimeout >= .zero && slowReaderTimeout <= .seconds(3600), .slowReaderTimeout,
                  "must be between 0 and 3600 s (got \(slowReaderTimeout.text))")
        if let dir = staticDirectory {
            var st = stat()
            try check(!dir.isEmpty && stat(dir, &st) == 0 && (st.st_mode & S_IFMT) == S_IFDIR, .staticDirectory,
                      "'\(dir)' does not exist or is not a directory")
        }
        try check(isLoopbackHost || !(token ?? "").isEmpty, .host,
                  "'\(host)' is not a loopback address: listening there needs a token "
                  + "(pass --token or set BRIDGED_TOKEN, or listen on 127.0.0.1)")
    }
}

/// A setting that cannot be used, and what it must be instead.
public struct ConfigurationError: Error, Equatable, CustomStringConvertible {
    /// Which setting (the command line maps each onto its flag).
    public enum Setting: String, Sendable, CaseIterable {
        case host, port, token, maxMessageBytes, maxSendQueueBytes, allowedOrigins, allowedHosts, staticDirectory
        case maxConnections, slowReaderTimeout
        case pingInterval, pingTimeout, shutdownTimeout
        case foregroundTimeout, sessionIdle, maxSessions, maxStackDepth
    }
    public let setting: Setting
    /// What is wrong, e.g. "must be between 0 and 65535 (got 70000)".
    public let problem: String

    public init(_ setting: Setting, _ problem: String) {
        self.setting = setting
        self.problem = problem
    }

    public var description: String { "\(setting.rawValue) \(problem)" }
}

extension Duration {
    /// Whole microseconds (rounded down; durations here are far below the overflow).
    public var microseconds: Int64 {
        let (s, atto) = components
        return s * 1_000_000 + atto / 1_000_000_000_000
    }

    var isWholeSeconds: Bool { components.attoseconds == 0 }
    var wholeSeconds: Int64 { components.seconds }

    /// `30 s`, `2.5 s`, `250 ms`: for messages.
    var text: String {
        let us = microseconds
        if us % 1_000_000 == 0 { return "\(us / 1_000_000) s" }
        if us % 1000 == 0 { return "\(us / 1000) ms" }
        return "\(us) µs"
    }
}

/// How a configured host maps onto lws's `iface` and options (see the binding bug in the notes:
/// `iface = "127.0.0.1"` alone listens on every interface; it needs DISABLE_IPV6 too).
struct BindPlan: Equatable {
    var iface: String?
    var disableIPv6: Bool
}

enum HostPolicy {
    static func stripBrackets(_ host: String) -> String {
        if host.hasPrefix("["), host.hasSuffix("]") { return String(host.dropFirst().dropLast()) }
        return host
    }

    static func isIPv4Literal(_ s: String) -> Bool {
        var a = in_addr()
        return inet_pton(AF_INET, s, &a) == 1
    }

    static func isIPv6Literal(_ s: String) -> Bool {
        var a = in6_addr()
        return inet_pton(AF_INET6, s, &a) == 1
    }

    static func isLoopback(_ host: String) -> Bool {
        let h = stripBrackets(host).lowercased()
        if h == "localhost" { return true }
        if isIPv4Literal(h) { return h.hasPrefix("127.") }
        if isIPv6Literal(h) { return isLoopbackAddress(h) }
        return false
    }

    /// Loopback test for a numeric peer address as lws reports it.
    static func isLoopbackAddress(_ address: String) -> Bool {
        let a = stripBrackets(address).lowercased()
        if isIPv4Literal(a) { return a.hasPrefix("127.") }
        var v6 = in6_addr()
        guard inet_pton(AF_INET6, a, &v6) == 1 else { return false }
        let bytes = withUnsafeBytes(of: &v6) { Array($0) }
        if bytes[0..<15].allSatisfy({ $0 == 0 }) && bytes[15] == 1 { return true }  // ::1
        // ::ffff:127.x.y.z (IPv4-mapped)
        if bytes[0..<10].allSatisfy({ $0 == 0 }) && bytes[10] == 0xff && bytes[11] == 0xff && bytes[12] == 127 {
            return true
        }
        return false
    }

    static func bindPlan(for host: String) -> BindPlan {
        let h = stripBrackets(host).lowercased()
        if h == "localhost" { return BindPlan(iface: "127.0.0.1", disableIPv6: true) }
        if h == "0.0.0.0" { return BindPlan(iface: nil, disableIPv6: true) }
        if h == "::" { return BindPlan(iface: nil, disableIPv6: false) }
        if isIPv4Literal(h) { return BindPlan(iface: h, disableIPv6: true) }
        if isIPv6Literal(h) { return BindPlan(iface: h, disableIPv6: false) }
        return BindPlan(iface: host, disableIPv6: false)  // an interface name; lws resolves it
    }

    static func urlHost(_ host: String) -> String {
        let h = stripBrackets(host)
        return isIPv6Literal(h) ? "[\(h)]" : h
    }
}
