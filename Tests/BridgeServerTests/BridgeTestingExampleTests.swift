// Only public API here (no @testable import): what a test outside this package can write with
// the BridgeTesting product. docs/ARCHITECTURE.md ("Testing the browser layer without Chromium")
// shows the same test.
import BridgeProtocol
import BridgeServer
import BridgeTesting
import Logging
import Testing

@Suite struct BridgeTestingExampleTests {
    @Test func aBrowserSessionOnAFakeChromiumOverAFakeTransport() async throws {
        let chromium = FakeChromium()
        var configuration = DaemonConfiguration()
        configuration.browser.launcher = chromium.launcher     // no Chromium: the fake plays it
        let fake = FakeTransport()                              // no sockets: the test is the service thread
        let daemon = Daemon(configuration: configuration, transport: fake, logger: Logger(label: "test"))
        try daemon.run()                                        // returns at once (port 4242)
        defer { daemon.shutdownBrowser() }

        let controller = fake.open()                            // a connection, as after its handshake
        fake.receive(controller, #"{"id":1,"method":"hello","params":{"protocol":1,"role":"controller"}}"#)
        fake.receive(controller, #"{"id":2,"method":"session.create","params":{"url":"http://app.test/a","browser":true}}"#)
        // The browser host's results come back through `daemon.remote`: run them here until the
        // reply has been sent.
        try await fake.serviceRemote { fake.sent(to: controller).contains { $0.hasPrefix(#"{"id":2,"result":"#) } }
        let load = try await chromium.next("Runtime.evaluate")  // what the host asked of the browser
        #expect(load.sessionId == "S-T1" && load.params["expression"] == #"location.replace("http://app.test/a"); true"#)

        // Closing the session disposes of its browser context: awaited as the browser sees it.
        let created = try #require(fake.sent(to: controller).first { $0.hasPrefix(#"{"id":2,"#) })
        let session = try #require(JSONParser.parse(created)["result"]?["session"]?.stringValue)
        fake.receive(controller, #"{"id":3,"method":"session.close","params":{"session":"\#(session)"}}"#)
        let dispose = try await chromium.next("Target.disposeBrowserContext")
        #expect(dispose.params["browserContextId"] == "C1")

        // Timers fire when the test moves the clock: a session nobody is connected to is
        // dropped once its idle time is over.
        let page = fake.open()
        fake.receive(page, #"{"id":1,"method":"hello","params":{"protocol":1,"role":"page","url":"http://app.test/b"}}"#)
        fake.peerClosed(page)
        fake.advance(microseconds: Int64(configuration.bridge.sessionIdleSeconds + 2) * 1_000_000)
        let sessions = try #require(daemon.transportHTTP(method: "GET", path: "/api/sessions", query: ""))
        #expect(String(decoding: sessions.body, as: UTF8.self) == #"{"sessions":[]}"#)
    }
}
