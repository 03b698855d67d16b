@testable import BridgeServer
import Foundation
import Testing

@Suite struct OriginPolicyTests {
    @Test func loopbackOriginsAreAllowedByDefault() {
        let p = OriginPolicy(allowedOrigins: [])
        for o in ["http://127.0.0.1", "http://127.0.0.1:5173", "https://127.0.0.1:8443", "http://localhost",
                  "https://LOCALHOST:3000", "http://[::1]:8080", "http://localhost:8787/"] {
            #expect(p.isAllowed(o), "\(o)")
        }
        #expect(p.isAllowed(nil))
    }

    @Test func otherOriginsAreRefused() {
        let p = OriginPolicy(allowedOrigins: [])
        for o in ["http://evil.example", "null", "file://", "ws://127.0.0.1:1", "http://127.0.0.2",
                  "http://localhost.evil.example", "http://127.0.0.1@evil.example", "", "localhost",
                  "http://localhost:99999", "http://[::2]:80", "http://127.0.0.1:80/path"] {
            #expect(!p.isAllowed(o), "\(o)")
        }
    }

    @Test func extraOriginsMatchAfterNormalisation() {
        let p = OriginPolicy(allowedOrigins: ["https://App.Example", "http://other.example:8080/", "null"])
        #expect(p.isAllowed("https://app.example"))
        #expect(p.isAllowed("https://app.example:443"))
        #expect(!p.isAllowed("http://app.example"))
        #expect(!p.isAllowed("https://app.example:444"))
        #expect(p.isAllowed("http://other.example:8080"))
        #expect(!p.isAllowed("http://other.example"))
        #expect(p.isAllowed("null"))
    }

    @Test func aStarAllowsEveryOrigin() throws {
        let p = OriginPolicy(allowedOrigins: ["*"])
        for o in ["http://evil.example", "null", "https://app.example:444", "http://127.0.0.1"] {
            #expect(p.isAllowed(o), "\(o)")
        }
        #expect(OriginPolicy.isValidEntry("*") && !OriginPolicy.isValidEntry("**") && !OriginPolicy.isValidEntry("http://"))
        var c = TransportConfiguration()
        c.allowedOrigins = ["*"]
        try c.validate()
    }

    @Test func normalize() {
        #expect(OriginPolicy.normalize("HTTP://Example.COM:80/") == "http://example.com")
        #expect(OriginPolicy.normalize("https://example.com:8443") == "https://example.com:8443")
        #expect(OriginPolicy.normalize("http://[::1]:80") == "http://[::1]")
        #expect(OriginPolicy.normalize("example.com") == nil)
        #expect(OriginPolicy.normalize("http://") == nil)
        #expect(OriginPolicy.normalize("http://a b") == nil)
        #expect(OriginPolicy.normalize("http://x:y") == nil)
        #expect(OriginPolicy.normalize("http://[zz]:1") == nil)
    }
}

@Suite struct HostPolicyTests {
    @Test func loopbackHosts() {
        for h in ["127.0.0.1", "127.1.2.3", "localhost", "LOCALHOST", "::1", "[::1]"] {
            #expect(HostPolicy.isLoopback(h), "\(h)")
        }
        for h in ["0.0.0.0", "::", "192.168.1.2", "example.com", "128.0.0.1", "eth0", "::2"] {
            #expect(!HostPolicy.isLoopback(h), "\(h)")
        }
    }

    @Test func bindPlansApplyTheBindingWorkaround() {
        #expect(HostPolicy.bindPlan(for: "127.0.0.1") == BindPlan(iface: "127.0.0.1", disableIPv6: true))
        #expect(HostPolicy.bindPlan(for: "localhost") == BindPlan(iface: "127.0.0.1", disableIPv6: true))
        #expect(HostPolicy.bindPlan(for: "::1") == BindPlan(iface: "::1", disableIPv6: false))
        #expect(HostPolicy.bindPlan(for: "[::1]") == BindPlan(iface: "::1", disableIPv6: false))
        #expect(HostPolicy.bindPlan(for: "0.0.0.0") == BindPlan(iface: nil, disableIPv6: true))
        #expect(HostPolicy.bindPlan(for: "::") == BindPlan(iface: nil, disableIPv6: false))
    }

    @Test func peerAddresses() {
        #expect(HostPolicy.isLoopbackAddress("127.0.0.1"))
        #expect(HostPolicy.isLoopbackAddress("::1"))
        #expect(HostPolicy.isLoopbackAddress("::ffff:127.0.0.1"))
        #expect(!HostPolicy.isLoopbackAddress("::ffff:10.0.0.1"))
        #expect(!HostPolicy.isLoopbackAddress("10.0.0.1"))
        #expect(!HostPolicy.isLoopbackAddress(""))
    }

    @Test func displayURL() {
        var c = TransportConfiguration()
        c.host = "::1"
        #expect(c.displayURL(port: 80) == "http://[::1]:80")
        c.host = "127.0.0.1"
        #expect(c.displayURL(port: 8787) == "http://127.0.0.1:8787")
    }
}

@Suite struct ConfigurationTests {
    @Test func defaultsAreValid() throws {
        try TransportConfiguration().validate()
    }

    @Test func nonLoopbackNeedsAToken() throws {
        var c = TransportConfiguration()
        c.host = "0.0.0.0"
        #expect(throws: ConfigurationError.self) { try c.validate() }
        c.token = ""
        #expect(throws: ConfigurationError.self) { try c.validate() }
        c.token = "secret"
        try c.validate()
        do {
            var d = TransportConfiguration()
            d.host = "0.0.0.0"
            _ = try Transport(configuration: d, bridgeJS: [], logger: TestLog.logger)
            Issue.record("a non-loopback host without a token was accepted")
        } catch let error as ConfigurationError {
            #expect(error.setting == .host)
            #expect(error.problem.contains("token"))
        }
    }

    @Test func badValuesAreRejectedWithTheSettingName() {
        func setting(_ change: (inout TransportConfiguration) -> Void) -> ConfigurationError.Setting? {
            var c = TransportConfiguration()
            change(&c)
            do { try c.validate(); return nil } catch { return error.setting }
        }
        #expect(setting { $0.port = 70000 } == .port)
        #expect(setting { $0.maxMessageBytes = 63 } == .maxMessageBytes)
        #expect(setting { $0.maxMessageBytes = 64 } == nil)
        #expect(setting { $0.maxSendQueueBytes = 1023 } == .maxSendQueueBytes)
        #expect(setting { $0.maxSendQueueBytes = 1024 } == nil)
        #expect(setting { $0.pingTimeout = $0.pingInterval } == .pingTimeout)
        #expect(setting { $0.pingInterval = .milliseconds(1500) } == .pingInterval)
        #expect(setting { $0.pingInterval = .seconds(65534); $0.pingTimeout = .seconds(65535) } == nil)
        #expect(setting { $0.shutdownTimeout = .seconds(601) } == .shutdownTimeout)
        #expect(setting { $0.shutdownTimeout = .zero } == nil)
        #expect(setting { $0.allowedOrigins = ["nope"] } == .allowedOrigins)
        #expect(setting { $0.staticDirectory = "/definitely/not/here" } == .staticDirectory)
        #expect(setting { $0.host = "" } == .host)
    }

    @Test func theDaemonConfigurationChecksTheProtocolSettingsToo() {
        var c = DaemonConfiguration()
        c.bridge.engine.foregroundTimeoutMs = 0
        #expect(throws: ConfigurationError(.foregroundTimeout, "must be between 1 ms and 600000 ms (got 0 ms)")) { try c.validate() }
        c.bridge.engine.foregroundTimeoutMs = 600_000
        c.bridge.maxSessions = 0
        #expect((try? c.validate()) == nil)
        c.bridge.maxSessions = 1
        #expect((try? c.validate()) != nil)
    }

    @Test func durationsInMicroseconds() {
        #expect(Duration.seconds(30).microseconds == 30_000_000)
        #expect(Duration.milliseconds(2500).microseconds == 2_500_000)
        #expect(Duration.milliseconds(2500).text == "2500 ms")
        #expect(Duration.seconds(3).text == "3 s")
    }
}
