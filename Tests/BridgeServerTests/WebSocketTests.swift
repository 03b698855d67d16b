@testable import BridgeServer
import Dispatch
import Testing

/// A delegate whose behaviour the test scripts; it records what happens as strings.
final class ScriptedDelegate: TransportDelegate {
    let transport: Transport
    let events: Recorder<String>
    var onOpen: (Transport, ConnectionID, ConnectionInfo) -> Void = { _, _, _ in }
    var onText: (Transport, ConnectionID, String) -> Void = { _, _, _ in }

    init(_ transport: Transport, events: Recorder<String>) {
        self.transport = transport
        self.events = events
    }

    func transportDidStart(port: Int) { events.append("start") }
    func transportDidOpen(_ id: ConnectionID, info: ConnectionInfo) {
        events.append("open")
        onOpen(transport, id, info)
    }
    func transport(_ id: ConnectionID, didReceiveText message: UnsafeRawBufferPointer) {
        let text = String(decoding: message, as: UTF8.self)
        events.append("text:\(text)")
        onText(transport, id, text)
    }
    func transportDidReceiveBinary(_ id: ConnectionID) { events.append("binary") }
    func transportDidClose(_ id: ConnectionID) { events.append("close:\(id)") }
    func transportHTTP(method: String, path: String, query: String) -> HTTPResponse? { nil }
}

@Suite struct WebSocketTests {
    @Test func closeFlushesQueuedMessagesFirstAndLaterSendsAreDropped() throws {
        let events = Recorder<String>()
        let after = Recorder<String>()
        let service = ServiceThread(makeDelegate: { t in
            let d = ScriptedDelegate(t, events: events)
            d.onOpen = { t, id, _ in
                for m in ["one", "two", "three"] { t.send(id, Array(m.utf8)) }
                t.close(id, code: 1000, reason: "bye")
                t.send(id, Array("dropped".utf8))
                t.close(id, code: 4000, reason: "second close ignored")
                after.append("open:\(t.isOpen(id))")
            }
            return d
        })
        #expect(service.waitStarted())
        defer { service.stop() }
        let client = try RawClient(port: service.port)
        var texts: [String] = []
        var close: RawClient.Frame?
        while close == nil {
            let (_, m) = try client.readMessage()
            if m.opcode == 8 { close = m } else { texts.append(m.text) }
        }
        #expect(texts == ["one", "two", "three"])
        #expect(close?.closeCode == 1000)
        #expect(close.map { String(decoding: $0.payload.dropFirst(2), as: UTF8.self) } == "bye")
        #expect(after.all == ["open:false"])
        try client.sendClose(code: 1000)  // complete the closing handshake
        #expect(events.wait(forCount: 3))  // start, open, close
        #expect(events.all.last?.hasPrefix("close:") == true)
        #expect(service.sync { $0.connectionCount } == 0)
    }

    @Test func largeOutboundMessagesAreFragmented() throws {
        let big = String(repeating: "0123456789", count: 10_000)  // 100 KB
        let service = ServiceThread(makeDelegate: { t in
            let d = ScriptedDelegate(t, events: Recorder())
            d.onOpen = { t, id, _ in
                t.send(id, Array(big.utf8))
                t.send(id, Array("after".utf8))
            }
            return d
        })
        #expect(service.waitStarted())
        defer { service.stop() }
        let client = try RawClient(port: service.port)
        let (frames, message) = try client.readMessage()
        #expect(message.opcode == 1)
        #expect(frames == (100_000 + Transport.chunkSize - 1) / Transport.chunkSize)
        #expect(message.text == big)
        let (afterFrames, after) = try client.readMessage()
        #expect(afterFrames == 1 && after.text == "after")
    }

    @Test func inboundFragmentsAreReassembledAndBinaryIsReported() throws {
        let events = Recorder<String>()
        let service = ServiceThread(makeDelegate: { t in ScriptedDelegate(t, events: events) })
        #expect(service.waitStarted())
        defer { service.stop() }
        let client = try RawClient(port: service.port)
        try client.sendFrame(opcode: 1, Array("hel".utf8), fin: false)
        try client.sendFrame(opcode: 0, Array("lo ".utf8), fin: false)
        try client.sendFrame(opcode: 9, [1, 2])  // a ping between fragments
        try client.sendFrame(opcode: 0, Array("world".utf8), fin: true)
        try client.sendFrame(opcode: 2, [0, 1, 2], fin: false)
        try client.sendFrame(opcode: 0, [3], fin: true)
        let large = String(repeating: "z", count: 40_000)  // one frame, several receive chunks
        try client.sendText(large)
        #expect(events.wait(forCount: 5))
        #expect(Array(events.all.dropFirst(2)) == ["text:hello world", "binary", "text:\(large)"])
    }

    @Test func connectionInfo() throws {
        let infos = Recorder<String>()
        let service = ServiceThread(makeDelegate: { t in
            let d = ScriptedDelegate(t, events: Recorder())
            d.onOpen = { _, id, info in
                infos.append("\(info.origin ?? "-")|\(info.query)|\(info.peerAddress)|\(info.isLoopbackPeer)|\(id.raw > 0)")
            }
            return d
        })
        #expect(service.waitStarted())
        defer { service.stop() }
        let a = try RawClient(port: service.port, path: "/bridge?session=s-1", origin: "http://localhost:3000")
        #expect(infos.wait(forCount: 1))
        let b = try RawClient(port: service.port)
        #expect(infos.wait(forCount: 2))
        #expect(infos.all == ["http://localhost:3000|session=s-1|127.0.0.1|true|true", "-||127.0.0.1|true|true"])
        _ = (a, b)
    }

    @Test func refusedUpgradesNeverReachTheDelegate() throws {
        let events = Recorder<String>()
        let service = ServiceThread(makeDelegate: { t in ScriptedDelegate(t, events: events) })
        #expect(service.waitStarted())
        defer { service.stop() }
        #expect(throws: RawClientError.self) { try RawClient(port: service.port, path: "/elsewhere") }
        #expect(throws: RawClientError.self) { try RawClient(port: service.port, origin: "https://evil.example") }
        let ok = try RawClient(port: service.port)
        #expect(events.wait(forCount: 2))
        #expect(events.all == ["start", "open"])
        _ = ok
    }

    @Test func sendToUnknownOrClosedConnectionsIsANoOp() throws {
        let service = ServiceThread()
        #expect(service.waitStarted())
        defer { service.stop() }
        let result = service.sync { t -> Bool in
            t.send(ConnectionID(raw: 12345), Array("x".utf8))
            t.close(ConnectionID(raw: 12345), code: 1000, reason: "")
            return !t.isOpen(ConnectionID(raw: 12345)) && t.queuedBytes(ConnectionID(raw: 12345)) == nil
        }
        #expect(result == true)
    }

    @Test func aReaderThatFallsBehindPushedTrafficIsClosedWith1008() throws {
        var config = ServiceThread.defaultConfiguration()
        config.maxSendQueueBytes = 64 * 1024
        let outcome = Recorder<String>()
        let chunk = [UInt8](repeating: UInt8(ascii: "p"), count: 32 * 1024)
        let service = ServiceThread(configuration: config, makeDelegate: { t in
            let d = ScriptedDelegate(t, events: Recorder())
            d.onOpen = { t, id, _ in
                var pushed = 0
                var maxQueued = 0
                func push() {
                    t.send(id, chunk)
                    pushed += 1
                    maxQueued = max(maxQueued, t.queuedBytes(id) ?? 0)
                    if t.isOpen(id) && pushed < 4000 {
                        _ = t.schedule(afterMicroseconds: 50) { push() }
                    } else {
                        // Bound: four times the limit behind the message in flight, plus that message.
                        outcome.append("open=\(t.isOpen(id)) bounded=\(maxQueued <= 4 * 64 * 1024 + 2 * chunk.count)")
                    }
                }
                push()
            }
            return d
        })
        #expect(service.waitStarted())
        defer { service.stop() }
        let client = try RawClient(port: service.port, receiveBuffer: 4096)
        #expect(outcome.wait(forCount: 1, seconds: 30))
        #expect(outcome.all == ["open=false bounded=true"])
        #expect(TestLog.contains(.warning, "too slow"))
        // Reading now: the data that was in flight, then the 1008 close.
        #expect(try client.readUntilClose() == 1008)
    }

    @Test func stopClosesEveryConnectionWith1001() throws {
        let events = Recorder<String>()
        let service = ServiceThread(makeDelegate: { t in ScriptedDelegate(t, events: events) })
        #expect(service.waitStarted())
        let clients = try (0..<5).map { _ in try RawClient(port: service.port) }
        #expect(events.wait(forCount: 6))
        service.remote.stop()
        for c in clients {
            let f = try c.readFrame()
            #expect(f.closeCode == 1001)
            try c.sendClose(code: 1001)
        }
        #expect(service.waitFinished())
        #expect(events.all.filter { $0.hasPrefix("close:") }.count == 5)
    }

    @Test func aPeerThatNeverAnswersOurCloseIsDroppedAfterTheGracePeriod() throws {
        let events = Recorder<String>()
        let service = ServiceThread(makeDelegate: { t in
            let d = ScriptedDelegate(t, events: events)
            d.onOpen = { t, id, _ in t.close(id, code: 4001, reason: "go away") }
            return d
        })
        #expect(service.waitStarted())
        defer { service.stop() }
        let client = try RawClient(port: service.port, timeoutSeconds: 30)
        #expect(try client.readFrame().closeCode == 4001)
        // No close in reply: the transport still ends the connection (closeGraceSeconds).
        #expect(events.wait(forCount: 3, seconds: Double(Transport.closeGraceSeconds) + 20))
        #expect(events.all.last?.hasPrefix("close:") == true)
        #expect(throws: RawClientError.closed) { _ = try client.readFrame() }
    }
}
