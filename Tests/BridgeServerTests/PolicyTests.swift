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
        #expect(throws: TransportError.nonLoopbackWithoutToken(host: "0.0.0.0")) { try c.validate() }
        c.token = ""
        #expect(throws: TransportError.nonLoopbackWithoutToken(host: "0.0.0.0")) { try c.validate() }
        c.token = "secret"
        try c.validate()
        #expect(throws: TransportError.nonLoopbackWithoutToken(host: "0.0.0.0")) {
            var d = TransportConfiguration()
            d.host = "0.0.0.0"
            _ = try Transport(configuration: d, bridgeJS: [], logger: TestLog.logger)
        }
    }

    @Test func badValuesAreRejectedWithTheFieldName() {
        func message(_ change: (inout TransportConfiguration) -> Void) -> String? {
            var c = TransportConfiguration()
            change(&c)
            do { try c.validate(); return nil } catch { return "\(error)" }
        }
        #expect(message { $0.port = 70000 }?.contains("port") == true)
        #expect(message { $0.maxMessageBytes = 0 }?.contains("maxMessageBytes") == true)
        #expect(message { $0.maxSendQueueBytes = 10 }?.contains("maxSendQueueBytes") == true)
        #expect(message { $0.idleHangupSeconds = $0.pingIntervalSeconds }?.contains("idleHangupSeconds") == true)
        #expect(message { $0.allowedOrigins = ["nope"] }?.contains("nope") == true)
        #expect(message { $0.staticDirectory = "/definitely/not/here" }?.contains("static directory") == true)
        #expect(message { $0.host = "" }?.contains("host") == true)
    }
}

@Suite struct StaticFilesTests {
    let root: URL
    let files: StaticFiles

    init() throws {
        let base = FileManager.default.temporaryDirectory.appendingPathComponent("bridged-static-\(UUID().uuidString)")
        root = base.appendingPathComponent("site")
        let fm = FileManager.default
        try fm.createDirectory(at: root.appendingPathComponent("sub"), withIntermediateDirectories: true)
        try fm.createDirectory(at: root.appendingPathComponent("empty"), withIntermediateDirectories: true)
        try Data("root".utf8).write(to: root.appendingPathComponent("index.html"))
        try Data("sub".utf8).write(to: root.appendingPathComponent("sub/index.html"))
        try Data("x".utf8).write(to: root.appendingPathComponent("sub/app.js"))
        try Data("secret".utf8).write(to: base.appendingPathComponent("secret.txt"))
        try fm.createSymbolicLink(at: root.appendingPathComponent("out.txt"),
                                  withDestinationURL: base.appendingPathComponent("secret.txt"))
        try fm.createSymbolicLink(at: root.appendingPathComponent("in.js"),
                                  withDestinationURL: root.appendingPathComponent("sub/app.js"))
        files = try #require(StaticFiles(directory: root.path))
    }

    @Test func servesFilesAndIndexes() {
        guard case .file(let index, let type) = files.resolve(urlPath: "/app/") else { Issue.record(); return }
        #expect(index.hasSuffix("/site/index.html") && type.hasPrefix("text/html"))
        guard case .file(let js, let jsType) = files.resolve(urlPath: "/app/sub/app.js") else { Issue.record(); return }
        #expect(js.hasSuffix("/site/sub/app.js") && jsType.hasPrefix("text/javascript"))
        guard case .file(_, _) = files.resolve(urlPath: "/app//sub//index.html") else { Issue.record(); return }
        guard case .file(let linked, _) = files.resolve(urlPath: "/app/in.js") else { Issue.record(); return }
        #expect(linked.hasSuffix("/site/sub/app.js"))
    }

    @Test func redirectsDirectoriesToTheirSlashedForm() {
        #expect(files.resolve(urlPath: "/app") == .redirect(location: "/app/"))
        #expect(files.resolve(urlPath: "/app/sub") == .redirect(location: "/app/sub/"))
    }

    @Test func refusesTraversalAndEscapes() {
        for path in ["/app/../secret.txt", "/app/sub/../../secret.txt", "/app/./index.html", "/app/out.txt",
                     "/app/..\\secret.txt", "/app/missing", "/app/empty/", "/application", "/other/x",
                     "/app/sub/index.html\0"] {
            #expect(files.resolve(urlPath: path) == .notFound, "\(path)")
        }
    }

    @Test func contentTypes() {
        #expect(StaticFiles.contentType(forPath: "/a/b.CSS").hasPrefix("text/css"))
        #expect(StaticFiles.contentType(forPath: "/a/b.mjs").hasPrefix("text/javascript"))
        #expect(StaticFiles.contentType(forPath: "/a/b.webmanifest") == "application/manifest+json")
        #expect(StaticFiles.contentType(forPath: "/a/.hidden") == "application/octet-stream")
        #expect(StaticFiles.contentType(forPath: "/a/noext") == "application/octet-stream")
    }
}

@Suite struct MessageQueueTests {
    @Test func fifoWithCompaction() {
        var q = MessageQueue()
        #expect(q.isEmpty && q.first == nil)
        var next = 0
        var expected = 0
        for round in 0..<50 {
            for _ in 0..<(round % 7 + 1) {
                q.append([UInt8(next & 0xFF)])
                next += 1
            }
            for _ in 0..<(round % 5) where !q.isEmpty {
                #expect(q.first == [UInt8(expected & 0xFF)])
                q.removeFirst()
                expected += 1
            }
        }
        #expect(q.count == next - expected)
        while let f = q.first {
            #expect(f == [UInt8(expected & 0xFF)])
            q.removeFirst()
            expected += 1
        }
        #expect(expected == next)
        q.append([1, 2, 3])
        q.append([4])
        #expect(q.removeAll() == 4)
        #expect(q.isEmpty)
    }
}

@Suite struct LWSLogTests {
    @Test func cleansLwsPrefixes() {
        #expect(LWSLog.clean("[2026/11/21 23:35:39:1234] E: ERROR on binding fd 9\n") == "ERROR on binding fd 9")
        #expect(LWSLog.clean("plain line\n") == "plain line")
    }
}
