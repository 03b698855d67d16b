/// The claim parameters a page carries in its address (`bridge_session`, `bridge_webview`,
/// `bridge_token`), added to and removed from urls without Foundation.
public enum PageURL {
    static let claimKeys: Set<[UInt8]> = [Array("bridge_session".utf8), Array("bridge_webview".utf8),
                                          Array("bridge_token".utf8)]

    /// `url` without any claim parameter, in any spelling a page client or a user could
    /// produce: the names in any letter case (`BRIDGE_TOKEN`), percent-encoded in part or whole
    /// (`bridge%5Ftoken`, `%62ridge_token`), in the query or in the fragment (`#bridge_token=…`,
    /// a hash route's `#/route?bridge_token=…`). Everything else is kept as it was; a url
    /// without a claim comes back unchanged. Stored urls never carry the claim.
    public static func stripClaim(_ url: String) -> String {
        guard mayCarryClaim(url) else { return url }
        let (base, query, fragment) = split(url)
        var changed = false
        var out = String(base)
        if let query {
            let (kept, removed) = keptParameters(query)
            changed = changed || removed
            if !removed {
                out += "?" + query
            } else if !kept.isEmpty {
                out += "?" + kept
            }
        }
        if let fragment {
            // A fragment holds parameters after a `?` (hash routes), or is itself `k=v&…`.
            if let q = fragment.firstIndex(of: "?") {
                let (kept, removed) = keptParameters(fragment[fragment.index(after: q)...])
                changed = changed || removed
                out += "#" + fragment[..<q]
                if !removed {
                    out += fragment[q...]
                } else if !kept.isEmpty {
                    out += "?" + kept
                }
            } else if fragment.contains("=") {
                let (kept, removed) = keptParameters(fragment)
                changed = changed || removed
                if !removed {
                    out += "#" + fragment
                } else if !kept.isEmpty {
                    out += "#" + kept
                }
            } else {
                out += "#" + fragment
            }
        }
        return changed ? out : url
    }

    /// The `&`-separated parameters of `query` that are not a claim, joined again, and whether
    /// any was removed.
    static func keptParameters(_ query: Substring) -> (kept: String, removed: Bool) {
        var removed = false
        let kept = query.split(separator: "&", omittingEmptySubsequences: false).filter { pair in
            if isClaimKey(pair) {
                removed = true
                return false
            }
            return true
        }
        return (removed ? kept.joined(separator: "&") : String(query), removed)
    }

    /// Whether the name of `pair` (up to `=`), percent-decoded and in lower case, is a claim key.
    static func isClaimKey(_ pair: Substring) -> Bool {
        let raw = Array(pair.utf8.prefix { $0 != UInt8(ascii: "=") })
        guard raw.count >= 12 else { return false }  // "bridge_token" is the shortest name
        var name: [UInt8] = []
        name.reserveCapacity(raw.count)
        var i = 0
        while i < raw.count {
            let c = raw[i]
            if c == UInt8(ascii: "%"), let hi = hexValue(raw[safe: i + 1]), let lo = hexValue(raw[safe: i + 2]) {
                name.append(lower(hi << 4 | lo))
                i += 3
            } else {
                name.append(lower(c))
                i += 1
            }
            if name.count > 14 { return false }  // longer than the longest name
        }
        return claimKeys.contains(name)
    }

    @inline(__always) static func lower(_ c: UInt8) -> UInt8 {
        c >= UInt8(ascii: "A") && c <= UInt8(ascii: "Z") ? c | 0x20 : c
    }

    @inline(__always) static func hexValue(_ c: UInt8?) -> UInt8? {
        guard let c else { return nil }
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return c - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return c - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return c - UInt8(ascii: "A") + 10
        default: return nil
        }
    }

    /// Whether `url` may carry a claim: it contains `bridge_` in any letter case, or a `%`
    /// (a name may be percent-encoded). A byte scan, since every pwa-navigate passes its url
    /// through `stripClaim` and almost none carry a claim. (`String.contains(_: String)` goes
    /// through the generic substring searcher, about 30,000 instructions per call.)
    static func mayCarryClaim(_ url: String) -> Bool {
        let found = url.utf8.withContiguousStorageIfAvailable { bytes -> Bool in
            let n = bytes.count
            guard n >= 7 else { return false }
            var i = 0
            while i < n {
                let c = bytes[i]
                if c == 0x25 { return true }  // "%"
                if c | 0x20 == 0x62, i <= n - 7, bytes[i + 1] | 0x20 == 0x72, bytes[i + 2] | 0x20 == 0x69,
                   bytes[i + 3] | 0x20 == 0x64, bytes[i + 4] | 0x20 == 0x67, bytes[i + 5] | 0x20 == 0x65,
                   bytes[i + 6] == 0x5F {  // "bridge_", any case
                    return true
                }
                i += 1
            }
            return false
        }
        return found ?? (url.contains("%") || url.lowercased().contains("bridge_"))
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

extension Array {
    fileprivate subscript(safe index: Int) -> Element? { index >= 0 && index < count ? self[index] : nil }
}
