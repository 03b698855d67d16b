#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

public struct TransportConfiguration: Sendable {
    /// Address to listen on. Loopback (`127.0.0.1`, any 127.x, `localhost`, `::1`) is always
    /// allowed; anything else requires `token`.
    public var host: String = "127.0.0.1"
    /// 0 picks a free port; `Transport.port` has the real one once started.
    public var port: Int = 8787
    /// Only used here for the non-loopback refusal (controllers' tokens are the protocol's job).
    public var token: String? = nil
    /// A text or binary message (all fragments together) above this closes the connection with 1009.
    public var maxMessageBytes: Int = 65536
    /// Bytes queued for one connection (not yet handed to the socket) above this close it with
    /// 1008: the peer does not read fast enough.
    public var maxSendQueueBytes: Int = 8 << 20
    /// Exact origins (`scheme://host[:port]`) allowed to open WebSockets, in addition to the
    /// loopback ones (`http(s)://127.0.0.1[:*]`, `localhost[:*]`, `[::1][:*]`). An upgrade
    /// without an Origin header (a non-browser client) is always allowed.
    public var allowedOrigins: [String] = []
    /// Served under `/app/` when set (must be an existing directory).
    public var staticDirectory: String? = nil
    /// Seconds without traffic from the peer before lws sends a PING.
    public var pingIntervalSeconds: Int = 30
    /// Seconds without valid traffic (including PONGs) before the connection is dropped.
    public var idleHangupSeconds: Int = 60
    /// How long `stop()` waits for clients to receive their 1001 close before the context is
    /// destroyed anyway.
    public var shutdownDeadlineMilliseconds: Int = 2000

    public init() {}

    /// True for 127.0.0.0/8, `localhost`, `::1` (optionally bracketed).
    public var isLoopbackHost: Bool { HostPolicy.isLoopback(host) }

    /// `http://HOST:PORT` as printed by the daemon (IPv6 literals in brackets).
    public func displayURL(port realPort: Int) -> String {
        "http://\(HostPolicy.urlHost(host)):\(realPort)"
    }

    /// Checks every field; throws `TransportError` naming the first bad one.
    public func validate() throws {
        func bad(_ s: String) -> TransportError { .invalidConfiguration(s) }
        if host.isEmpty { throw bad("host must not be empty") }
        if !(0...65535).contains(port) { throw bad("port \(port) is outside 0...65535") }
        if !(1...(1 << 30)).contains(maxMessageBytes) {
            throw bad("maxMessageBytes \(maxMessageBytes) must be between 1 and \(1 << 30)")
        }
        if maxSendQueueBytes < 1024 { throw bad("maxSendQueueBytes \(maxSendQueueBytes) must be at least 1024") }
        if !(1...65534).contains(pingIntervalSeconds) {
            throw bad("pingIntervalSeconds \(pingIntervalSeconds) must be between 1 and 65534")
        }
        if idleHangupSeconds <= pingIntervalSeconds || idleHangupSeconds > 65535 {
            throw bad("idleHangupSeconds \(idleHangupSeconds) must be greater than pingIntervalSeconds (\(pingIntervalSeconds)) and at most 65535")
        }
        if !(0...600_000).contains(shutdownDeadlineMilliseconds) {
            throw bad("shutdownDeadlineMilliseconds \(shutdownDeadlineMilliseconds) must be between 0 and 600000")
        }
        for origin in allowedOrigins where !OriginPolicy.isValidEntry(origin) {
            throw bad("allowed origin '\(origin)' is not of the form scheme://host[:port] (or 'null')")
        }
        if let dir = staticDirectory {
            var st = stat()
            if dir.isEmpty || stat(dir, &st) != 0 || (st.st_mode & S_IFMT) != S_IFDIR {
                throw bad("static directory '\(dir)' does not exist or is not a directory")
            }
        }
        if !isLoopbackHost && (token ?? "").isEmpty {
            throw TransportError.nonLoopbackWithoutToken(host: host)
        }
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
