#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// With a token configured, HTTP needs it everywhere but `/healthz`, `/bridge.js` and the
/// static app (`/app/...`): either `Authorization: Bearer TOKEN`, or the cookie a browser gets
/// from the one-time dashboard link printed at start (`/?token=CODE`, as Jupyter does). The
/// cookie holds a random secret of this daemon run, never the token itself.
struct HTTPAuth {
    let token: String?
    /// `bridged_session=<secret>`: HttpOnly, SameSite=Strict, Path=/.
    let cookieSecret: String
    /// The code of the one-time link; consumed by its first use.
    private(set) var loginCode: String?

    static let cookieName = "bridged_session"

    init(token: String?) {
        self.token = (token ?? "").isEmpty ? nil : token
        cookieSecret = HTTPAuth.randomHex(16)
        loginCode = self.token == nil ? nil : HTTPAuth.randomHex(16)
    }

    var isEnabled: Bool { token != nil }

    /// Paths anyone may fetch.
    static func isPublic(_ path: String) -> Bool {
        path == "/healthz" || path == "/bridge.js" || path == "/bridge" || path == "/app" || path.hasPrefix("/app/")
    }

    /// True when the request carries the token or this run's cookie.
    func isAuthorized(authorization: String?, cookie: String?) -> Bool {
        guard let token else { return true }
        if let authorization {
            let a = authorization.trimmingSpaces()
            if a.count > 7, a.prefix(7).lowercased() == "bearer ",
               constantTimeEqual(String(a.dropFirst(7)).trimmingSpaces(), token) {
                return true
            }
        }
        if let cookie {
            for part in cookie.split(separator: ";") {
                let kv = part.trimmingCharacters(inSet: " \t")
                if kv.hasPrefix(HTTPAuth.cookieName + "="),
                   constantTimeEqual(String(kv.dropFirst(HTTPAuth.cookieName.count + 1)), cookieSecret) {
                    return true
                }
            }
        }
        return false
    }

    /// `/?token=X`: true (and the one-time code is spent) when X is the one-time code or the token.
    mutating func redeem(_ code: String) -> Bool {
        if let loginCode, constantTimeEqual(code, loginCode) {
            self.loginCode = nil
            return true
        }
        if let token { return constantTimeEqual(code, token) }
        return false
    }

    var setCookieHeader: String {
        "\(HTTPAuth.cookieName)=\(cookieSecret); HttpOnly; SameSite=Strict; Path=/"
    }

    static func randomHex(_ bytes: Int) -> String {
        var g = SystemRandomNumberGenerator()
        let digits = Array("0123456789abcdef")
        var s = ""
        for _ in 0..<bytes {
            let b = UInt8.random(in: 0...255, using: &g)
            s.append(digits[Int(b >> 4)])
            s.append(digits[Int(b & 15)])
        }
        return s
    }
}

/// Compares without an early exit on the first difference (the length still shows).
func constantTimeEqual(_ a: String, _ b: String) -> Bool {
    let x = Array(a.utf8), y = Array(b.utf8)
    guard x.count == y.count else { return false }
    var diff: UInt8 = 0
    for i in 0..<x.count { diff |= x[i] ^ y[i] }
    return diff == 0
}

extension Substring {
    func trimmingCharacters(inSet set: String) -> Substring {
        var s = self
        while let f = s.first, set.contains(f) { s = s.dropFirst() }
        while let l = s.last, set.contains(l) { s = s.dropLast() }
        return s
    }
}
