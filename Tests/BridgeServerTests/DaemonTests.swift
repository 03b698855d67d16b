@testable import BridgeServer
import BridgeProtocol
import BridgeTesting
import Logging
import Testing

/// The Daemon over a fake transport: what it sends, closes and schedules for given input, with
/// time advanced by hand.
@Suite struct DaemonTests {
    static func make(_ configure: (inout DaemonConfiguration) -> Void = { _ in }) -> (Daemon, FakeTransport) {
        var configuration = DaemonConfiguration()
        configuration.bridge.engine = EngineConfiguration(foregroundTimeoutMs: 1000, maxStackDepth: 64)
        configure(&configuration)
        let fake = FakeTransport()
        let daemon = Daemon(configuration: configuration, transport: fake, logger: TestLog.logger)
        try! daemon.run()
        return (daemon, fake)
    }

    static func hello(_ fake: FakeTransport, _ id: ConnectionID) {
        fake.receive(id, #"{"id":1,"method":"hello","params":{"protocol":1,"role":"page","url":"http://127.0.0.1/a"}}"#)
    }

    @Test func aPageHelloIsAnsweredOnItsOwnConnection() {
        let (daemon, fake) = Self.make()
        let a = fake.open()
        let b = fake.open()
        Self.hello(fake, a)
        let events = fake.takeEvents()
        #expect(events.count == 1)
        guard case .send(let to, let text)? = events.first else { Issue.record("no reply"); return }
        #expect(to == a && to != b)
        #expect(text.hasPrefix(#"{"id":1,"result":{"protocol":1,"session":""#))
        #expect(daemon.bridge.sessionCount == 1)
    }

    @Test func aForegroundTimerIsScheduledAndFiresOnlyWhenDue() {
        let (_, fake) = Self.make()
        let page = fake.open()
        Self.hello(fake, page)
        let controller = fake.open()
        fake.receive(controller, #"{"id":1,"method":"hello","params":{"protocol":1,"role":"controller"}}"#)
        fake.receive(controller, #"{"id":2,"method":"session.subscribe","params":{"events":["foreground.removed"]}}"#)
        _ = fake.takeEvents()
        fake.receive(page, #"{"id":2,"method":"pwa-navigate","params":{"url":"http://127.0.0.1/b"}}"#)
        #expect(fake.keyed.count == 1)
        #expect(fake.keyed.values.first == fake.monotonicMicroseconds + 1_000_000)
        _ = fake.takeEvents()
        fake.advance(microseconds: 999_999)
        #expect(fake.takeEvents().isEmpty)
        #expect(fake.keyed.count == 1)
        fake.advance(microseconds: 1)
        #expect(fake.keyed.isEmpty)
        let fired = fake.sent(to: controller)
        #expect(fired.count == 1)
        #expect(fired.first?.contains(#""event":"foreground.removed""#) == true)
        #expect(fired.first?.contains(#""reason":"timeout""#) == true)
    }

    @Test func renderingCancelsTheTimer() {
        let (_, fake) = Self.make()
        let page = fake.open()
        Self.hello(fake, page)
        fake.receive(page, #"{"id":2,"method":"pwa-navigate","params":{"url":"http://127.0.0.1/b"}}"#)
        #expect(fake.keyed.count == 1)
        fake.receive(page, #"{"id":3,"method":"pwa-rendered"}"#)
        #expect(fake.keyed.isEmpty)
        let replies = fake.sent(to: page)
        #expect(replies.last?.contains(#""reason":"rendered""#) == true)
    }

    @Test func idleSessionsAreSweptByTheHousekeepingTimer() {
        let (daemon, fake) = Self.make { $0.bridge.sessionIdleSeconds = 2 }
        let page = fake.open()
        Self.hello(fake, page)
        fake.peerClosed(page)
        #expect(daemon.bridge.sessionCount == 1)
        fake.advance(microseconds: 1_000_000)
        #expect(daemon.bridge.sessionCount == 1)
        fake.advance(microseconds: 2_000_000)
        #expect(daemon.bridge.sessionCount == 0)
        #expect(fake.closures.count == 1)  // the sweep re-arms itself
    }

    @Test func aSecondPageClaimClosesTheFirstWith1000() {
        let (_, fake) = Self.make()
        let first = fake.open()
        Self.hello(fake, first)
        guard case .send(_, let reply)? = fake.takeEvents().first,
              let session = field(reply, "session"), let token = field(reply, "token") else {
            Issue.record("no hello reply"); return
        }
        let second = fake.open()
        fake.receive(second, #"{"id":1,"method":"hello","params":{"protocol":1,"role":"page","session":"\#(session)","webview":"W1","token":"\#(token)"}}"#)
        let events = fake.takeEvents()
        #expect(events.contains(.close(first, code: 1000, reason: "replaced")) || events.contains { if case .close(first, 1000, _) = $0 { true } else { false } })
        #expect(events.contains { if case .send(second, let t) = $0 { t.hasPrefix(#"{"id":1,"result""#) } else { false } })
    }

    @Test func binaryFramesAreAnsweredWithAnError() {
        let (_, fake) = Self.make()
        let page = fake.open()
        fake.delegate?.transportDidReceiveBinary(page)
        let sent = fake.sent(to: page)
        #expect(sent.count == 1)
        #expect(sent.first?.contains(#""error""#) == true)
    }

    @Test func healthzCountsSessionsAndConnections() {
        let (daemon, fake) = Self.make()
        Self.hello(fake, fake.open())
        _ = fake.open()
        let response = daemon.transportHTTP(method: "GET", path: "/healthz", query: "")
        let body = response.map { String(decoding: $0.body, as: UTF8.self) } ?? ""
        #expect(response?.status == 200)
        #expect(body.contains(#""sessions":1"#))
        #expect(body.contains(#""connections":2"#))
        #expect(daemon.transportHTTP(method: "GET", path: "/nope", query: "") == nil)
    }
}

/// The string value of `"name":"…"` in a flat JSON text (test helper).
func field(_ json: String, _ name: String) -> String? {
    guard let r = json.range(of: "\"\(name)\":\"") else { return nil }
    let rest = json[r.upperBound...]
    guard let end = rest.firstIndex(of: "\"") else { return nil }
    return String(rest[..<end])
}
