/// The `Host` check applied to every HTTP request and WebSocket upgrade, against DNS rebinding:
/// a page on `http://evil.example` whose name the attacker re-points at 127.0.0.1 reaches the
/// daemon as a same-origin request, but its `Host` header still says `evil.example`.
///
/// Accepted (the rule Chrome's DevTools endpoint follows), any port or none:
/// - `localhost` and IP literals (`127.0.0.1`, `[::1]`, any address: a rebinding attack always
///   comes with a DNS name);
/// - the host the daemon was told to listen on (`--host`);
/// - the hosts of `--allow-origin` entries and every `--allow-host` entry (`*` accepts any host);
/// - a request without `Host` (HTTP/1.0 tools; browsers always send one).
///
/// Anything else is answered `421 Misdirected Request`.
public struct HostHeaderPolicy: Sendable {
    private let names: Set<String>
    private let any: Bool

    public init(bindHost: String, allowedOrigins: [String], allowedHosts: [String]) {
        var names: Set<String> = ["localhost"]
        if let h = HostHeaderPolicy.hostPart(bindHost) { names.insert(h) }
        for origin in allowedOrigins {
            if let parsed = OriginPolicy.parse(origin), !parsed.host.isEmpty,
               let h = HostHeaderPolicy.hostPart(parsed.host) {
                names.insert(h)
            }
        }
        for entry in allowedHosts where entry != "*" {
            if let h = HostHeaderPolicy.hostPart(entry) { names.insert(h) }
        }
        self.names = names
        any = allowedHosts.contains("*") || allowedOrigins.contains("*")
    }

    /// `*`, a host name or address, optionally with `:port`.
    public static func isValidEntry(_ entry: String) -> Bool { entry == "*" || hostPart(entry) != nil }

    public func isAllowed(_ header: String?) -> Bool {
        guard let header else { return true }
        if any { return true }
        guard let host = HostHeaderPolicy.hostPart(header) else { return false }
        if names.contains(host) { return true }
        return HostPolicy.isIPv4Literal(host) || HostPolicy.isIPv6Literal(host)
    }

    /// The host of `host[:port]` / `[v6][:port]`, lowercased, brackets and a trailing dot
    /// dropped; nil when malformed.
    static func hostPart(_ value: String) -> String? {
        let s = value.trimmingSpaces()
        var host: Substring
        var port: Substring?
        if s.hasPrefix("[") {
            guard let close = s.firstIndex(of: "]") else { return nil }
            host = s[s.index(after: s.startIndex)..<close]
            let rest = s[s.index(after: close)...]
            if !rest.isEmpty {
                guard rest.hasPrefix(":") else { return nil }
                port = rest.dropFirst()
            }
            guard HostPolicy.isIPv6Literal(String(host)) else { return nil }
        } else if let colon = s.lastIndex(of: ":") {
            host = s[..<colon]
            port = s[s.index(after: colon)...]
        } else {
            host = Substring(s)
        }
        if let port {
            guard !port.isEmpty, port.count <= 5, port.allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
        }
        if host.hasSuffix(".") { host = host.dropLast() }
        guard !host.isEmpty, host.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "-._:%".contains($0)) }) else {
            return nil
        }
        return host.lowercased()
    }
}
