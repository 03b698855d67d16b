/// The Origin check applied to WebSocket upgrades.
///
/// - no Origin header: allowed (a non-browser client; browsers always send one);
/// - `http(s)://127.0.0.1[:port]`, `http(s)://localhost[:port]`, `http(s)://[::1][:port]`: allowed;
/// - an origin equal (after normalisation) to one of `allowedOrigins`: allowed;
/// - every origin, when `allowedOrigins` holds `*` (as Chrome's `--remote-allow-origins=*`);
/// - anything else, including `null` (file:// pages, sandboxed frames) unless `"null"` is listed,
///   and malformed values: refused with 403 at upgrade time.
///
/// Normalisation lowercases scheme and host, drops a trailing `/` and the scheme's default port
/// (`:80` for http/ws, `:443` for https/wss), as browsers do in the header.
public struct OriginPolicy: Sendable {
    private let extra: Set<String>
    private let any: Bool

    /// `allowedOrigins` must already be valid (see `TransportConfiguration.validate`); invalid
    /// entries are ignored here.
    public init(allowedOrigins: [String]) {
        extra = Set(allowedOrigins.compactMap(OriginPolicy.normalize))
        any = allowedOrigins.contains("*")
    }

    /// `*`, or an origin of the form `scheme://host[:port]`.
    public static func isValidEntry(_ entry: String) -> Bool { entry == "*" || normalize(entry) != nil }

    public func isAllowed(_ origin: String?) -> Bool {
        guard let origin else { return true }
        if any { return true }
        guard let parsed = OriginPolicy.parse(origin) else { return false }
        if extra.contains(parsed.normalized) { return true }
        guard parsed.scheme == "http" || parsed.scheme == "https" else { return false }
        return parsed.host == "127.0.0.1" || parsed.host == "localhost" || parsed.host == "[::1]"
    }

    struct Parsed {
        var scheme: String
        var host: String   // lowercased; IPv6 with brackets
        var port: Int?     // nil when absent or the scheme's default
        var normalized: String
    }

    /// `scheme://host[:port]` in canonical form, or nil when `origin` is not an origin.
    public static func normalize(_ origin: String) -> String? { parse(origin)?.normalized }

    static func parse(_ origin: String) -> Parsed? {
        let trimmed = origin.trimmingSpaces()
        if trimmed.lowercased() == "null" {
            return Parsed(scheme: "", host: "", port: nil, normalized: "null")
        }
        guard let sep = trimmed.firstRange(of: "://") else { return nil }
        let scheme = trimmed[..<sep.lowerBound].lowercased()
        guard !scheme.isEmpty,
              scheme.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "+" || $0 == "-" || $0 == ".") })
        else { return nil }
        var authority = Substring(trimmed[sep.upperBound...])
        if authority.hasSuffix("/") { authority = authority.dropLast() }
        guard !authority.isEmpty,
              !authority.contains(where: { "/?#@ \\".contains($0) || !$0.isASCII })
        else { return nil }

        var host: Substring
        var portText: Substring?
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else { return nil }
            host = authority[...close]
            let rest = authority[authority.index(after: close)...]
            if !rest.isEmpty {
                guard rest.hasPrefix(":") else { return nil }
                portText = rest.dropFirst()
            }
            guard HostPolicy.isIPv6Literal(String(host.dropFirst().dropLast())) else { return nil }
        } else if let colon = authority.lastIndex(of: ":") {
            host = authority[..<colon]
            portText = authority[authority.index(after: colon)...]
        } else {
            host = authority
        }
        guard !host.isEmpty, !host.contains(":") || host.hasPrefix("[") else { return nil }

        var port: Int?
        if let portText {
            guard !portText.isEmpty, portText.count <= 5, portText.allSatisfy({ $0.isASCII && $0.isNumber }),
                  let p = Int(portText), p <= 65535
            else { return nil }
            port = p
        }
        let defaultPort: Int? = switch scheme {
        case "http", "ws": 80
        case "https", "wss": 443
        default: nil
        }
        if port == defaultPort { port = nil }
        let h = host.lowercased()
        let normalized = "\(scheme)://\(h)" + (port.map { ":\($0)" } ?? "")
        return Parsed(scheme: scheme, host: h, port: port, normalized: normalized)
    }
}

extension String {
    func trimmingSpaces() -> String {
        var s = Substring(self)
        while let f = s.first, f == " " || f == "\t" { s = s.dropFirst() }
        while let l = s.last, l == " " || l == "\t" { s = s.dropLast() }
        return String(s)
    }
}
