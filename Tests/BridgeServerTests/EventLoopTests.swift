@testable import BridgeServer
import Dispatch
#if canImport(Glibc)
import Glibc
#endif
import Testing

/// The same transport behaviour on both event loops (`--event-loop epoll`, the default, and
/// `poll`): timers, the replies written when a callback ends, what the socket does not take at
/// once, and shutdown. Every wait is on an event with a generous timeout.
@Suite struct EventLoopTests {
    static func configuration(_ loop: TransportConfiguration.EventLoop) -> TransportConfiguration {
        var c = ServiceThread.defaultConfiguration()
        c.eventLoop = loop
        return c
    }

    @Test(arguments: TransportConfiguration.EventLoop.allCases)
    func timersFireInDeadlineOrderAndNeverEarly(loop: TransportConfiguration.EventLoop) throws {
        let service = ServiceThread(configuration: Self.configuration(loop))
        #expect(service.waitStarted())
        defer { service.stop() }
        let fired = Recorder<(index: Int, late: Int64)>()
        let deadlines = Recorder<Int64>()
        // Sub-millisecond gaps, and a run of deadlines a few hundred µs apart (the foreground
        // fallbacks of many sessions): the loop's timer works in whole milliseconds.
        let delays: [Int64] = [5300, 1000, 3001, 2000, 4999, 0, 2500, 150, 1999] + (0..<40).map { 6000 + Int64($0) * 250 }
        service.remote.enqueue { (t: Transport) in
            for (i, d) in delays.enumerated() {
                let box = Locked<Int64>(0)
                let handle = t.schedule(afterMicroseconds: d) {
                    fired.append((i, t.monotonicMicroseconds - box.withLock { $0 }))
                }
                box.withLock { $0 = handle.deadlineMicroseconds }
                deadlines.append(handle.deadlineMicroseconds)
            }
        }
        #expect(fired.wait(forCount: delays.count))
        // In deadline order (ties in the order scheduled), each at or after its deadline.
        let byDeadline = deadlines.all.enumerated().sorted { ($0.element, $0.offset) < ($1.element, $1.offset) }.map(\.offset)
        #expect(fired.all.map(\.index) == byDeadline)
        #expect(fired.all.allSatisfy { $0.late >= 0 })
    }

    @Test(arguments: TransportConfiguration.EventLoop.allCases)
    func repliesToEveryMessageArriveInOrder(loop: TransportConfiguration.EventLoop) throws {
        let service = ServiceThread(configuration: Self.configuration(loop), makeDelegate: { t in
            let d = ScriptedDelegate(t, events: Recorder())
            // Two replies per message, the second after a timer (written outside any callback
            // of the connection).
            d.onText = { t, id, text in
                t.send(id, Array("re:\(text)".utf8))
                _ = t.schedule(afterMicroseconds: 0) { t.send(id, Array("later:\(text)".utf8)) }
            }
            return d
        })
        #expect(service.waitStarted())
        defer { service.stop() }
        let clients = try (0..<4).map { _ in try RawClient(port: service.port) }
        let count = 200
        for (c, client) in clients.enumerated() {
            for i in 0..<count { try client.sendText("\(c)-\(i)") }
        }
        for (c, client) in clients.enumerated() {
            var replies: [String] = []
            var later: [String] = []
            while replies.count + later.count < 2 * count {
                let (_, m) = try client.readMessage()
                if m.text.hasPrefix("re:") { replies.append(m.text) } else { later.append(m.text) }
            }
            #expect(replies == (0..<count).map { "re:\(c)-\($0)" })
            #expect(later == (0..<count).map { "later:\(c)-\($0)" })
        }
    }

    @Test(arguments: TransportConfiguration.EventLoop.allCases)
    func aBurstLargerThanTheSocketTakesArrivesWholeAndInOrder(loop: TransportConfiguration.EventLoop) throws {
        // 600 messages of 10 KB and a 100 KB one (fragmented) in one callback: far more than a
        // socket buffer of 4 KiB takes at once; what lws holds back and what waits for WRITEABLE
        // must come out in order.
        let small = (0..<600).map { i in String(repeating: String(i % 10), count: 10_000) }
        let big = String(repeating: "0123456789", count: 10_000)
        let service = ServiceThread(configuration: Self.configuration(loop), makeDelegate: { t in
            let d = ScriptedDelegate(t, events: Recorder())
            d.onOpen = { t, id, _ in
                for (i, m) in small.enumerated() {
                    t.send(id, Array(m.utf8))
                    if i == 300 { t.send(id, Array(big.utf8)) }
                }
            }
            return d
        })
        #expect(service.waitStarted())
        defer { service.stop() }
        let client = try RawClient(port: service.port, receiveBuffer: 4096)
        var texts: [String] = []
        while texts.count < small.count + 1 {
            texts.append(try client.readMessage().message.text)
        }
        var expected = small
        expected.insert(big, at: 301)
        #expect(texts.count == expected.count)
        #expect(texts == expected)
    }

    @Test(arguments: TransportConfiguration.EventLoop.allCases)
    func messagesWrittenWhileTheSocketIsFullAreKept(loop: TransportConfiguration.EventLoop) throws {
        // Small messages pushed from timer rounds (written at once, outside WRITEABLE) to a
        // client that reads slowly: again and again the socket is full when the next one is
        // written, and the socket takes nothing. None may be lost, reordered or end the
        // connection.
        let total = 3000
        let body = String(repeating: "x", count: 1000)
        let service = ServiceThread(configuration: Self.configuration(loop), makeDelegate: { t in
            let d = ScriptedDelegate(t, events: Recorder())
            d.onOpen = { t, id, _ in
                var next = 0
                func push() {
                    for _ in 0..<3 where next < total {
                        t.send(id, Array("\(next) \(body)".utf8))
                        next += 1
                    }
                    if next < total { _ = t.schedule(afterMicroseconds: 0) { push() } }
                }
                push()
            }
            return d
        })
        #expect(service.waitStarted())
        defer { service.stop() }
        let client = try RawClient(port: service.port, receiveBuffer: 4096)
        var received = 0
        while received < total {
            let (_, m) = try client.readMessage()
            #expect(m.opcode == 1)
            guard m.text == "\(received) \(body)" else {
                Issue.record("message \(received): got \(m.text.prefix(20))")
                return
            }
            received += 1
            if received % 50 == 0 { usleep(2000) }  // a slow reader, so that the socket fills again
        }
        #expect(service.sync { t in t.connectionCount } == 1)
    }

    @Test(arguments: TransportConfiguration.EventLoop.allCases)
    func stopClosesEveryConnectionWith1001AndRunReturns(loop: TransportConfiguration.EventLoop) throws {
        let events = Recorder<String>()
        let service = ServiceThread(configuration: Self.configuration(loop),
                                    makeDelegate: { t in ScriptedDelegate(t, events: events) })
        #expect(service.waitStarted())
        let clients = try (0..<3).map { _ in try RawClient(port: service.port) }
        #expect(events.wait(forCount: 4))
        service.remote.stop()
        for c in clients {
            #expect(try c.readFrame().closeCode == 1001)
            try c.sendClose(code: 1001)
        }
        #expect(service.waitFinished())
        #expect(events.all.filter { $0.hasPrefix("close:") }.count == 3)
    }

    @Test func theEventLoopSettingDefaultsToEpoll() {
        #expect(TransportConfiguration().eventLoop == .epoll)
        #expect(TransportConfiguration.EventLoop(rawValue: "poll") == .poll)
        #expect(TransportConfiguration.EventLoop(rawValue: "select") == nil)
    }
}
