// URL handling for the router, by hand: no Foundation. Only what routing needs: the scheme,
// the origin of http(s) URLs, the raw path, query and fragment, and percent-decoding.

/// An absolute URL split into the parts the router uses. Parts are kept raw (still
/// percent-encoded); decoding happens per path segment and per query pair.
public struct RouteURL: Sendable, Equatable {
    /// Lower-cased scheme, without the `:`.
    public var scheme: String
    /// What follows `//` up to the path, raw; `nil` when the URL has no `//`.
    public var authority: String?
    /// The raw path (after the authority, before `?`/`#`).
    public var path: String
    /// The raw query without `?`; `nil` when there is no `?`.
    public var query: String?
    /// The raw fragment without `#`; `nil` when there is no `#`.
    public var fragment: String?

    /// Splits an absolute URL. Errors (`unknown-route`): no scheme, an invalid scheme, spaces or
    /// control characters.
    public static func parse(_ text: String) throws(RouterError) -> RouteURL {
        for scalar in text.unicodeScalars where scalar.value <= 0x20 || scalar.value == 0x7F {
            throw .unknownRoute("malformed URL '\(text)': it contains a space or a control character")
        }
        guard let colon = text.firstIndex(of: ":") else {
            throw .unknownRoute("malformed URL '\(text)': not an absolute URL (no scheme)")
        }
        let scheme = text[..<colon]
        guard isValidScheme(scheme) else {
            throw .unknownRoute("malformed URL '\(text)': '\(scheme)' is not a valid scheme")
        }
        var rest = text[text.index(after: colon)...]
        var fragment: String?
        if let hash = rest.firstIndex(of: "#") {
            fragment = String(rest[rest.index(after: hash)...])
            rest = rest[..<hash]
        }
        var query: String?
        if let q = rest.firstIndex(of: "?") {
            query = String(rest[rest.index(after: q)...])
            rest = rest[..<q]
        }
        var authority: String?
        if rest.hasPrefix("//") {
            let afterSlashes = rest.index(rest.startIndex, offsetBy: 2)
            let end = rest[afterSlashes...].firstIndex(of: "/") ?? rest.endIndex
            authority = String(rest[afterSlashes..<end])
            rest = rest[end...]
        }
        return RouteURL(
            scheme: scheme.lowercased(), authority: authority, path: String(rest), query: query,
            fragment: fragment)
    }

    /// `scheme://host[:port]` with the default port left out, lower-cased; `nil` for URLs that
    /// are not http(s) or have no host.
    public var origin: String? {
        guard scheme == "http" || scheme == "https", let authority else { return nil }
        guard let (host, port) = try? RouteURL.hostAndPort(authority), !host.isEmpty else { return nil }
        let defaultPort = scheme == "http" ? 80 : 443
        if let port, port != defaultPort { return "\(scheme)://\(host):\(port)" }
        return "\(scheme)://\(host)"
    }

    /// The path of a custom-scheme URL as the route table sees it: `tt://products/42` and
    /// `tt:products/42` both give `products/42` (leading slashes dropped).
    var customPath: Substring {
        let whole = (authority ?? "") + path
        return whole.drop(while: { $0 == "/" })
    }

    static func isValidScheme(_ s: Substring) -> Bool {
        guard let first = s.unicodeScalars.first, isASCIILetter(first) else { return false }
        return s.unicodeScalars.allSatisfy { isASCIILetter($0) || isASCIIDigit($0) || $0 == "+" || $0 == "-" || $0 == "." }
    }

    /// Host (lower-cased, IPv6 literals keep their brackets) and port of an authority;
    /// userinfo is dropped.
    static func hostAndPort(_ authority: String) throws(RouterError) -> (String, Int?) {
        var hostPort = Substring(authority)
        if let at = hostPort.lastIndex(of: "@") { hostPort = hostPort[hostPort.index(after: at)...] }
        var host = hostPort
        var portText: Substring?
        if hostPort.hasPrefix("[") {
            guard let close = hostPort.firstIndex(of: "]") else {
                throw .unknownRoute("malformed host '\(authority)'")
            }
            host = hostPort[...close]
            let after = hostPort[hostPort.index(after: close)...]
            if after.hasPrefix(":") { portText = after.dropFirst() } else if !after.isEmpty {
                throw .unknownRoute("malformed host '\(authority)'")
            }
        } else if let colon = hostPort.lastIndex(of: ":") {
            host = hostPort[..<colon]
            portText = hostPort[hostPort.index(after: colon)...]
        }
        var port: Int?
        if let portText, !portText.isEmpty {
            guard portText.count <= 5, portText.unicodeScalars.allSatisfy(isASCIIDigit), let p = Int(portText), p <= 65535
            else { throw .unknownRoute("malformed port in '\(authority)'") }
            port = p
        }
        return (host.lowercased(), port)
    }
}

func isASCIILetter(_ c: Unicode.Scalar) -> Bool { (c >= "a" && c <= "z") || (c >= "A" && c <= "Z") }
func isASCIIDigit(_ c: Unicode.Scalar) -> Bool { c >= "0" && c <= "9" }

/// Percent-encoding by hand.
public enum PercentEncoding {
    /// Decodes `%XX` escapes (and `+` as a space when `plusAsSpace`). The decoded bytes must be
    /// UTF-8. Errors name the offending text.
    public static func decode(_ text: Substring, plusAsSpace: Bool = false) throws(RouterError) -> String {
        if !text.utf8.contains(UInt8(ascii: "%")) && !(plusAsSpace && text.utf8.contains(UInt8(ascii: "+"))) {
            return String(text)
        }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.utf8.count)
        var it = text.utf8.makeIterator()
        while let b = it.next() {
            if b == UInt8(ascii: "%") {
                guard let h = it.next(), let l = it.next(), let hv = hexValue(h), let lv = hexValue(l) else {
                    throw .unknownRoute("malformed percent-encoding in '\(text)'")
                }
                bytes.append(hv << 4 | lv)
            } else if plusAsSpace && b == UInt8(ascii: "+") {
                bytes.append(UInt8(ascii: " "))
            } else {
                bytes.append(b)
            }
        }
        guard let s = String(validating: bytes, as: UTF8.self) else {
            throw .unknownRoute("percent-encoding in '\(text)' does not decode to UTF-8")
        }
        return s
    }

    /// Encodes everything but the unreserved characters `A-Z a-z 0-9 - . _ ~`.
    public static func encode(_ text: String) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        let hex = Array("0123456789ABCDEF".unicodeScalars)
        for b in text.utf8 {
            let c = Unicode.Scalar(b)
            if isASCIILetter(c) || isASCIIDigit(c) || c == "-" || c == "." || c == "_" || c == "~" {
                out.unicodeScalars.append(c)
            } else {
                out.unicodeScalars.append("%")
                out.unicodeScalars.append(hex[Int(b >> 4)])
                out.unicodeScalars.append(hex[Int(b & 0xF)])
            }
        }
        return out
    }

    private static func hexValue(_ b: UInt8) -> UInt8? {
        switch b {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return b - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return b - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return b - UInt8(ascii: "A") + 10
        default: return nil
        }
    }

    /// Parses `a=1&b=2` (a query or a fragment) into decoded pairs; `+` is a space; a later
    /// repeat of a key wins; empty pieces are skipped. A piece without `=` is a key with an
    /// empty value, or, with `bareKeys: false` (fragments: `#reviews`, `#/a/b`), ignored.
    /// A piece with an empty key is malformed.
    public static func parsePairs(_ text: String, bareKeys: Bool = true) throws(RouterError) -> [String: String] {
        var out: [String: String] = [:]
        for piece in text.split(separator: "&", omittingEmptySubsequences: true) {
            let key: Substring
            let value: Substring
            if let eq = piece.firstIndex(of: "=") {
                key = piece[..<eq]
                value = piece[piece.index(after: eq)...]
            } else if bareKeys {
                key = piece
                value = ""
            } else {
                continue
            }
            guard !key.isEmpty else {
                throw .unknownRoute("malformed parameter '\(piece)': empty name")
            }
            out[try decode(key, plusAsSpace: true)] = try decode(value, plusAsSpace: true)
        }
        return out
    }
}
