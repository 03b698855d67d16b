import BridgeBrowser
import BridgeTesting
import BridgeProtocol
import Foundation
import Testing

/// The daemon's fetch of a hotwire-native session's `pathConfigurationUrl` through the browser
/// (`BrowserHost.fetchJSON`), against a fake Chromium: `Network.loadNetworkResource` in the main
/// tab's frame, the body read from its stream with `IO.read` (at most the byte cap), `IO.close`,
/// and every way it can fail, in words.
@Suite struct PathConfigurationFetchFakeTests {
    let chromium = FakeChromium()
    static let url = "http://other.test/path-configuration.json"

    /// The stream's chunks, handed out one per `IO.read` (`endless`: the same chunk for ever).
    final class Stream: @unchecked Sendable {
        private let lock = NSLock()
        private var chunks: [JSONValue]
        private let endless: JSONValue?
        init(_ chunks: [JSONValue], endless: JSONValue? = nil) {
            self.chunks = chunks
            self.endless = endless
        }
        func next() -> JSONValue {
            lock.withLock { chunks.isEmpty ? (endless ?? ["data": "", "eof": true]) : chunks.removeFirst() }
        }
    }

    /// A host whose session `s1` has its root web view `W1` (tab `T1`, attached as `S-T1`).
    func host() async throws -> BrowserHost {
        let host = BrowserHost(options: BrowserOptions(), launcher: chromium.launcher) { _ in }
        try await host.createSession("s1")
        _ = try await host.openTab(session: "s1", webview: .webview(1), url: "http://app.test/", script: nil, root: true)
        return host
    }

    /// The resource answers `Network.loadNetworkResource` with, and the stream behind it.
    func serve(_ resource: JSONValue, _ stream: Stream = Stream([])) {
        chromium.on("Network.loadNetworkResource") { _ in .result(["resource": resource]) }
        chromium.on("IO.read") { _ in .result(stream.next()) }
    }

    static let ok: JSONValue = ["success": true, "httpStatusCode": 200, "stream": "io-1", "headers": ["Content-Type": "application/json"]]

    func fetch(_ host: BrowserHost, webview: ItemID = .webview(1), maxBytes: Int = BrowserOptions().pathConfigurationMaxBytes,
               timeout: Double = 15) async -> PathConfigurationFetch {
        await host.fetchJSON(session: "s1", webview: webview, url: Self.url, maxBytes: maxBytes, timeoutSeconds: timeout)
    }

    @Test func theDocumentIsLoadedInTheMainFrameAndReadFromItsStream() async throws {
        let host = try await host()
        serve(Self.ok, Stream([["data": #"{"rules": [{"patterns": ["/new$"],"#, "eof": false],
                               ["data": #" "properties": {"context": "modal"}}]}"#, "eof": true]]))
        let got = await fetch(host)
        #expect(got == .document(["rules": [["patterns": ["/new$"], "properties": ["context": "modal"]]]]))
        // In the main frame of the session's tab (its id is the target's), with the session's
        // cookies and past the cache; no CORS applies to it.
        let load = try await chromium.next("Network.loadNetworkResource")
        #expect(load.sessionId == "S-T1")
        #expect(load.params == ["frameId": "T1", "url": .string(Self.url), "options": ["disableCache": true, "includeCredentials": true]])
        let reads = chromium.commands.all.filter { $0.method == "IO.read" }
        #expect(reads.count == 2 && reads.allSatisfy { $0.params == ["handle": "io-1", "size": 65536] && $0.sessionId == "S-T1" })
        let close = try await chromium.next("IO.close")
        #expect(close.params == ["handle": "io-1"])
        await host.shutdown()
    }

    @Test func aBinaryStreamIsBase64() async throws {
        let host = try await host()
        serve(Self.ok, Stream([["data": .string(Data(#"{"rules":[]}"#.utf8).base64EncodedString()), "base64Encoded": true, "eof": true]]))
        #expect(await fetch(host) == .document(["rules": []]))
        await host.shutdown()
    }

    /// Every failure is an answer in words (what `hotwire.pathConfiguration` says as its `error`).
    static let failures: [(JSONValue, String?, String)] = [
        // Chromium's answer to a 404 (its loader fails non-2xx answers).
        (["success": false, "netError": -334, "netErrorName": "net::ERR_HTTP_RESPONSE_CODE_FAILURE", "httpStatusCode": 404],
         nil, "HTTP 404"),
        (["success": true, "httpStatusCode": 500, "stream": "io-1"], #"{"rules":[]}"#, "HTTP 500"),
        (["success": false, "netError": -102, "netErrorName": "net::ERR_CONNECTION_REFUSED"], nil, "net::ERR_CONNECTION_REFUSED"),
        (["success": false], nil, "the browser could not load it"),
        (Self.ok, "<!doctype html><p>hello", "not JSON: "),
        (Self.ok, "", "not JSON: unexpected end of input"),
        (["success": true, "httpStatusCode": 200], nil, "the browser gave no body for it"),
    ]

    @Test(arguments: Self.failures)
    func failuresSayWhy(resource: JSONValue, body: String?, says: String) async throws {
        let host = try await host()
        serve(resource, Stream(body.map { [["data": .string($0), "eof": true]] } ?? []))
        guard case .failed(let why) = await fetch(host) else { Issue.record("no failure"); return }
        #expect(why.hasPrefix(says), "\(why)")
        if resource["stream"] != nil {
            // The stream is closed either way.
            #expect(try await chromium.next("IO.close").params == ["handle": "io-1"])
        }
        await host.shutdown()
    }

    @Test func theBrowsersRefusalAndAMissingTabSayWhy() async throws {
        let host = try await host()
        chromium.on("Network.loadNetworkResource") { _ in .error("Frame not found") }
        #expect(await fetch(host) == .failed("the browser could not fetch it: Frame not found"))
        #expect(await fetch(host, webview: .webview(9)) == .failed("the main web view has no tab to fetch it from"))
        await host.shutdown()
    }

    /// The time bound covers the whole fetch: no answer in time is a failure (the browser's late
    /// answer is dropped).
    @Test func noAnswerInTimeIsAFailure() async throws {
        let host = try await host()
        chromium.on("Network.loadNetworkResource") { _ in .later }
        #expect(await fetch(host, timeout: 0.2) == .failed("no answer within 0.2 s"))
        // A stream that never ends is bounded by the same time.
        serve(Self.ok, Stream([], endless: ["data": " ", "eof": false]))
        #expect(await fetch(host, timeout: 0.3) == .failed("no answer within 0.3 s"))
        await host.shutdown()
    }

    /// The byte cap (default 1 MiB): a document of exactly the cap is read; one byte more is
    /// refused as soon as it is read (an endless body is not read on), and the stream is closed.
    @Test func theByteCapAtTheLimit() async throws {
        let cap = BrowserOptions().pathConfigurationMaxBytes
        #expect(cap == 1_048_576)
        let host = try await host()
        let document = #"{"rules":[]}"#
        let exact = document + String(repeating: " ", count: cap - document.utf8.count)
        serve(Self.ok, Stream([["data": .string(exact), "eof": true]]))
        #expect(await fetch(host) == .document(["rules": []]))

        serve(Self.ok, Stream([["data": .string(exact + " "), "eof": true]]))
        #expect(await fetch(host) == .failed("the document is over 1048576 bytes"))

        let before = chromium.commands.all.filter { $0.method == "IO.read" }.count
        let chunk = String(repeating: " ", count: 65536)
        serve(Self.ok, Stream([], endless: ["data": .string(chunk), "eof": false]))
        #expect(await fetch(host) == .failed("the document is over 1048576 bytes"))
        // 16 chunks are the cap; the 17th is one too many, and the last read.
        #expect(chromium.commands.all.filter { $0.method == "IO.read" }.count - before == 17)
        #expect(chromium.commands.all.filter { $0.method == "IO.close" }.count == 3)
        await host.shutdown()
    }
}
