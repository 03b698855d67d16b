@testable import BridgeServer
import Testing

@Suite struct HostHeaderPolicyTests {
    let policy = HostHeaderPolicy(bindHost: "127.0.0.1", allowedOrigins: ["http://dev.test:5173"], allowedHosts: ["app.test:8080"])

    @Test func loopbackNamesAndAddressesAreAccepted() {
        for host in ["localhost", "localhost:8787", "LOCALHOST", "127.0.0.1", "127.0.0.1:1", "[::1]", "[::1]:8787", "10.0.0.5:80", nil] {
            #expect(policy.isAllowed(host), "\(host ?? "nil")")
        }
    }

    @Test func namedHostsAreAccepted() {
        #expect(policy.isAllowed("dev.test"))
        #expect(policy.isAllowed("dev.test:1"))
        #expect(policy.isAllowed("app.test"))
        #expect(policy.isAllowed("app.test."))
    }

    @Test func otherNamesAndMalformedValuesAreRefused() {
        for host in ["evil.example", "evil.example:8787", "localhost.evil.example", "127.0.0.1.evil.example", "", "a b", "[::1", "host:port", "host:123456", "x/y"] {
            #expect(!policy.isAllowed(host), "\(host)")
        }
    }

    @Test func aStarAcceptsAnyHost() {
        #expect(HostHeaderPolicy(bindHost: "127.0.0.1", allowedOrigins: [], allowedHosts: ["*"]).isAllowed("evil.example"))
        #expect(HostHeaderPolicy.isValidEntry("*"))
        #expect(!HostHeaderPolicy.isValidEntry("not a host"))
    }
}

@Suite struct HTTPAuthTests {
    @Test func withoutATokenEverythingIsAuthorized() {
        let auth = HTTPAuth(token: nil)
        #expect(!auth.isEnabled && auth.loginCode == nil)
        #expect(auth.isAuthorized(authorization: nil, cookie: nil))
    }

    @Test func bearerTokenOrCookie() {
        let auth = HTTPAuth(token: "T")
        #expect(!auth.isAuthorized(authorization: nil, cookie: nil))
        #expect(auth.isAuthorized(authorization: "Bearer T", cookie: nil))
        #expect(auth.isAuthorized(authorization: "bearer  T ", cookie: nil))
        #expect(!auth.isAuthorized(authorization: "Bearer TT", cookie: nil))
        #expect(!auth.isAuthorized(authorization: "Basic T", cookie: nil))
        #expect(auth.isAuthorized(authorization: nil, cookie: "a=b; bridged_session=\(auth.cookieSecret)"))
        #expect(!auth.isAuthorized(authorization: nil, cookie: "bridged_session=T"))
    }

    @Test func theLoginCodeWorksOnce() {
        var auth = HTTPAuth(token: "T")
        let code = auth.loginCode!
        #expect(code != "T" && code.count == 32)
        let first = auth.redeem(code)
        let again = auth.redeem(code)
        let withToken = auth.redeem("T")
        let wrong = auth.redeem("nope")
        #expect(first && !again && withToken && !wrong)
        #expect(auth.setCookieHeader.contains("HttpOnly") && auth.setCookieHeader.contains("SameSite=Strict"))
    }

    @Test func publicPaths() {
        for p in ["/healthz", "/bridge.js", "/app", "/app/x.js"] { #expect(HTTPAuth.isPublic(p)) }
        for p in ["/", "/api/sessions", "/metrics", "/application"] { #expect(!HTTPAuth.isPublic(p)) }
    }
}
