/// The claim parameters a page carries in its address (`bridge_session`, `bridge_webview`,
/// `bridge_token`), added to and removed from urls without Foundation.
public enum PageURL {
    static let claimKeys: Set<Substring> = ["bridge_session", "bridge_webview", "bridge_token"]

    /// `url` without any `bridge_*` claim parameter; the rest of the query and the fragment are
    /// kept as they were. Stored urls never carry the claim.
    public static func stripClaim(_ url: String) -> String {
        guard url.contains("bridge_") else { return url }
        let (base, query, fragment) = split(url)
        guard let query else { return url }
        let kept = query.split(separator: "&", omittingEmptySubsequences: false).filter { pair in
            let key = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
            return !claimKeys.contains(key)
        }
        var out = String(base)
        if !kept.isEmpty { out += "?" + kept.joined(separator: "&") }
        if let fragment { out += "#" + fragment }
        return out
    }

    /// `url` with the claim added to its query, before any fragment.
    public static func withClaim(_ url: String, session: String, webview: ItemID, token: String) -> String {
        let clean = stripClaim(url)
        let (base, query, fragment) = split(clean)
        var out = String(base)
        let claim = "bridge_session=\(percentEncode(session))&bridge_webview=\(webview)&bridge_token=\(percentEncode(token))"
        if let query, !query.isEmpty {
            out += "?" + query + "&" + claim
        } else {
            out += "?" + claim
        }
        if let fragment { out += "#" + fragment }
        return out
    }

    /// Splits `base?query#fragment`.
    static func split(_ url: String) -> (Substring, Substring?, Substring?) {
        var rest = Substring(url)
        var fragment: Substring?
        if let hash = rest.firstIndex(of: "#") {
            fragment = rest[rest.index(after: hash)...]
            rest = rest[..<hash]
        }
        var query: Substring?
        if let q = rest.firstIndex(of: "?") {
            query = rest[rest.index(after: q)...]
            rest = rest[..<q]
        }
        return (rest, query, fragment)
    }

    static func percentEncode(_ s: String) -> String {
        var out = ""
        for byte in s.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                 UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"),
                 UInt8(ascii: "."), UInt8(ascii: "~"):
                out.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                let hex = Array("0123456789ABCDEF".utf8)
                out += "%"
                out.unicodeScalars.append(Unicode.Scalar(hex[Int(byte >> 4)]))
                out.unicodeScalars.append(Unicode.Scalar(hex[Int(byte & 15)]))
            }
        }
        return out
    }
}
