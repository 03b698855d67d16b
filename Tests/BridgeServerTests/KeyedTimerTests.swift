@testable import BridgeServer
import BridgeProtocol
import Testing

/// Records keyed timers as they fire, with the clock reading at that moment.
final class KeyedTimerDelegate: TransportDelegate {
    let fired: Recorder<(key: TimerKey, at: Int64)>
    let transport: Transport
    init(_ transport: Transport, fired: Recorder<(key: TimerKey, at: Int64)>) {
        self.transport = transport
        self.fired = fired
    }
    func transportDidStart(port: Int) {}
    func transportDidOpen(_ id: ConnectionID, info: ConnectionInfo) {}
    func transport(_ id: ConnectionID, didReceiveText message: UnsafeRawBufferPointer) {}
    func transportDidReceiveBinary(_ id: ConnectionID) {}
    func transportDidClose(_ id: ConnectionID) {}
    func transportHTTP(method: String, path: String, query: String) -> HTTPResponse? { nil }
    func transportTimerFired(_ key: TimerKey) { fired.append((key, transport.monotonicMicroseconds)) }
}

/// The transport's keyed timers: the FIFO fast path for in-order deadlines, heap timers for the
/// others, replacement and cancellation, never early.
@Suite struct KeyedTimerTests {
    func key(_ i: UInt64) -> TimerKey { TimerKey(session: i, token: TimerToken(i)) }

    @Test func inOrderAndOutOfOrderDeadlinesFireInDeadlineOrderAndNeverEarly() throws {
        let fired = Recorder<(key: TimerKey, at: Int64)>()
        let service = ServiceThread(makeDelegate: { KeyedTimerDelegate($0, fired: fired) })
        #expect(service.waitStarted())
        defer { service.stop() }
        let deadlines = Locked<[TimerKey: Int64]>([:])
        // 1..4 in order (the FIFO), 5 earlier than all of them (a heap timer), 6 replaces 2.
        let delays: [(UInt64, Int64)] = [(1, 20_000), (2, 30_000), (3, 40_000), (4, 50_000), (5, 5_000)]
        service.remote.enqueue { (t: Transport) in
            for (i, d) in delays {
                let before = t.monotonicMicroseconds
                t.schedule(self.key(i), afterMicroseconds: d)
                deadlines.withLock { $0[self.key(i)] = before + d }
            }
            let before = t.monotonicMicroseconds
            t.schedule(self.key(2), afterMicroseconds: 60_000)  // replaces the pending one
            deadlines.withLock { $0[self.key(2)] = before + 60_000 }
            t.cancel(self.key(3))
            t.cancel(self.key(99))  // unknown: a no-op
        }
        #expect(fired.wait(forCount: 4, seconds: 30))
        let all = fired.all
        #expect(all.map(\.key) == [key(5), key(1), key(4), key(2)])
        let due = deadlines.withLock { $0 }
        #expect(all.allSatisfy { $0.at >= due[$0.key]! })
        #expect(service.sync { $0.pendingKeyedTimerCount } == 0)
    }

    @Test func tenThousandInOrderWithHalfCancelled() throws {
        let fired = Recorder<(key: TimerKey, at: Int64)>()
        let service = ServiceThread(makeDelegate: { KeyedTimerDelegate($0, fired: fired) })
        #expect(service.waitStarted())
        defer { service.stop() }
        let n: UInt64 = 10_000
        let pending = Locked(0)
        service.remote.enqueue { (t: Transport) in
            for i in 0..<n { t.schedule(self.key(i), afterMicroseconds: 20_000) }
            for i in stride(from: 1, to: n, by: 2) { t.cancel(self.key(i)) }
            pending.withLock { $0 = t.pendingKeyedTimerCount }
        }
        #expect(fired.wait(forCount: Int(n / 2), seconds: 30))
        #expect(pending.withLock { $0 } == Int(n / 2))
        #expect(fired.all.map(\.key) == stride(from: 0, to: n, by: 2).map { key($0) })
        #expect(service.sync { $0.pendingKeyedTimerCount } == 0)
    }
}
