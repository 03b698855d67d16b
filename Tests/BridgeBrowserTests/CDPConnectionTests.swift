@testable import BridgeBrowser
import BridgeProtocol
import Foundation
import Testing

/// `CDPConnection.start`: a call sent before it returns, its reply waited for later, by any
/// number of waiters, before or after it came; errors, timeouts and a closed browser as `call`.
@Suite struct CDPConnectionTests {
    /// A transport that keeps what was sent and answers when told.
    final class Transport: CDPTransport, @unchecked Sendable {
        private let lock = NSLock()
        private var receive: (@Sendable ([UInt8]) -> Void)?
        private var closed: (@Sendable () -> Void)?
        private var isClosed = false
        private var sentMessages: [JSONValue] = []

        func start(receive: @escaping @Sendable ([UInt8]) -> Void, closed: @escaping @Sendable () -> Void) {
            lock.withLock { self.receive = receive; self.closed = closed }
        }

        func send(_ message: consuming [UInt8]) -> Bool {
            let bytes = message
            return lock.withLock {
                if isClosed { return false }
                sentMessages.append((try? JSONParser.parse(bytes)) ?? .null)
                return true
            }
        }

        var sent: [JSONValue] { lock.withLock { sentMessages } }

        func answer(_ message: JSONValue) {
            let receive = lock.withLock { self.receive }
            receive?(message.serialized())
        }

        func close() {
            let closed: (@Sendable () -> Void)? = lock.withLock {
                if isClosed { return nil }
                isClosed = true
                return self.closed
            }
            closed?()
        }
    }

    @Test func aStartedCallIsSentAtOnceAndItsReplyWaitedForLater() async throws {
        let transport = Transport()
        let cdp = CDPConnection(transport: transport) {}
        let first = cdp.start(.addScript("x"), session: "S1")
        let second = cdp.start(.navigate("http://a.test/"), session: "S1")
        // Both sent before start returned, in that order, nothing answered yet.
        #expect(transport.sent.map { $0["method"]?.stringValue } == ["Page.addScriptToEvaluateOnNewDocument", "Page.navigate"])
        #expect(transport.sent.map { $0["sessionId"]?.stringValue } == ["S1", "S1"])
        #expect(!first.failed && !second.failed)
        let firstId = try #require(transport.sent[0]["id"]), secondId = try #require(transport.sent[1]["id"])
        // Two waiters before the reply, one after it.
        async let a = first.value
        async let b = first.value
        transport.answer(["id": secondId, "result": ["frameId": "F"]])
        transport.answer(["id": firstId, "result": ["identifier": "1"]])
        #expect(try await a == ["identifier": "1"])
        #expect(try await b == ["identifier": "1"])
        #expect(try await first.value == ["identifier": "1"])
        #expect(try await second.value == ["frameId": "F"])
        // A second reply with the same id is dropped.
        transport.answer(["id": firstId, "result": ["identifier": "2"]])
        #expect(try await first.value == ["identifier": "1"])
    }

    @Test func anErrorReplyFailsItsWaiters() async throws {
        let transport = Transport()
        let cdp = CDPConnection(transport: transport) {}
        let reply = cdp.start(.addScript("x"), session: "S1")
        let id = try #require(transport.sent.first?["id"])
        transport.answer(["id": id, "error": ["code": -32000, "message": "Not attached to an active page"]])
        await #expect(throws: BrowserError.browser("Not attached to an active page")) { try await reply.value }
        #expect(reply.failed)
    }

    @Test func anUnansweredCallTimesOut() async throws {
        let transport = Transport()
        let cdp = CDPConnection(transport: transport) {}
        let reply = cdp.start(.navigate("http://a.test/"), session: "S1", timeout: 0.05)
        await #expect(throws: BrowserError.timeout("Page.navigate")) { try await reply.value }
        #expect(reply.failed)
        // An answer after the timeout changes nothing.
        transport.answer(["id": try #require(transport.sent.first?["id"]), "result": [:]])
        await #expect(throws: BrowserError.timeout("Page.navigate")) { try await reply.value }
    }

    /// Chromium answers no call of a DevTools session it detached (the tab closed, its context
    /// disposed): those calls fail at once, as the tab's absence, not after their timeout; the
    /// calls of other sessions and the browser's own wait for their answers.
    @Test func aDetachedSessionsCallsFailAtOnce() async throws {
        let transport = Transport()
        let cdp = CDPConnection(transport: transport) {}
        let onGone = cdp.start(.evaluate("1"), session: "S1", timeout: 600)
        let onOther = cdp.start(.evaluate("2"), session: "S2", timeout: 600)
        let browsers = cdp.start(.bringToFront, timeout: 600)
        transport.answer(["method": "Target.detachedFromTarget", "params": ["sessionId": "S1", "targetId": "T1"]])
        await #expect(throws: BrowserError.unknownTarget("its tab closed before it answered Runtime.evaluate")) { try await onGone.value }
        #expect(!onOther.failed && !browsers.failed)
        transport.answer(["id": try #require(transport.sent[1]["id"]), "result": ["ok": true]])
        transport.answer(["id": try #require(transport.sent[2]["id"]), "result": [:]])
        #expect(try await onOther.value == ["ok": true])
        #expect(try await browsers.value == [:])
        // The event is still an event for those who listen.
        var events = cdp.events.makeAsyncIterator()
        #expect(await events.next()?.event == .detachedFromTarget("S1"))
    }

    @Test func theBrowserGoingAwayFailsStartedCallsAndLaterOnes() async throws {
        let transport = Transport()
        let closed = Inbox()
        let cdp = CDPConnection(transport: transport) { closed.signal() }
        // (Deadlines far away: on a loaded machine, sanitizers on, the second call may take
        // seconds to go out; the close, not a timeout, must fail them.)
        let pending = cdp.start(.navigate("http://a.test/"), session: "S1", timeout: 600)
        let called = Task { try await cdp.call(.evaluate("1"), session: "S1", timeout: 600) }
        try await waitUntil { transport.sent.count == 2 }
        transport.close()
        await #expect(throws: BrowserError.disconnected) { try await pending.value }
        await #expect(throws: BrowserError.disconnected) { try await called.value }
        #expect(closed.count == 1)
        let after = cdp.start(.bringToFront, session: "S1")
        #expect(after.failed)
        await #expect(throws: BrowserError.disconnected) { try await after.value }
        #expect(transport.sent.count == 2, "nothing sent once the browser is gone")
    }

    /// Counts signals (the connection's close callback).
    final class Inbox: @unchecked Sendable {
        private let lock = NSLock()
        private var n = 0
        func signal() { lock.withLock { n += 1 } }
        var count: Int { lock.withLock { n } }
    }

    /// Waits (yielding) until `condition` holds; a generous bound only so that a broken test ends.
    func waitUntil(_ condition: () -> Bool) async throws {
        let deadline = ContinuousClock.now.advanced(by: .seconds(30))
        while !condition() {
            if ContinuousClock.now > deadline { throw CancellationError() }
            await Task.yield()
        }
    }
}
