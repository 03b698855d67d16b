@testable import BridgeServer
import Dispatch
#if canImport(Glibc)
import Glibc
#endif
import Testing

/// Timers on a real service thread. Every wait is on an event with a generous timeout; nothing
/// asserts how late a timer fires (that is for benchmarks), only order, cancellation and that
/// none fires early.
@Suite struct TimerTests {
    @Test func firesInDeadlineOrderAndNeverEarly() throws {
        let service = ServiceThread()
        #expect(service.waitStarted())
        defer { service.stop() }
        let fired = Recorder<(delay: Int64, late: Int64)>()
        let delays: [Int64] = [5000, 1000, 3000, 2000, 4000, 0, 2500]
        service.remote.enqueue { (t: Transport) in
            for d in delays {
                let before = t.monotonicMicroseconds
                let box = Locked<Int64>(0)
                let handle = t.schedule(afterMicroseconds: d) {
                    fired.append((d, t.monotonicMicroseconds - box.withLock { $0 }))
                }
                box.withLock { $0 = handle.deadlineMicroseconds }
                precondition(handle.deadlineMicroseconds >= before + d)
            }
        }
        #expect(fired.wait(forCount: delays.count))
        #expect(fired.all.map(\.delay) == delays.sorted())
        #expect(fired.all.allSatisfy { $0.late >= 0 })
    }

    @Test func cancelledTimersDoNotFire() throws {
        let service = ServiceThread()
        #expect(service.waitStarted())
        defer { service.stop() }
        let fired = Recorder<String>()
        service.remote.enqueue { (t: Transport) in
            _ = t.schedule(afterMicroseconds: 1000) { fired.append("a") }
            let b = t.schedule(afterMicroseconds: 2000) { fired.append("b") }
            var d: TimerHandle?
            _ = t.schedule(afterMicroseconds: 2500) {
                fired.append("c")
                t.cancel(d!)  // cancel another pending timer from inside a timer
            }
            d = t.schedule(afterMicroseconds: 4000) { fired.append("d") }
            _ = t.schedule(afterMicroseconds: 6000) { fired.append("e") }
            t.cancel(b)
            t.cancel(b)  // twice: no-op
        }
        #expect(fired.wait(forCount: 3))
        #expect(fired.all == ["a", "c", "e"])
        #expect(service.sync { $0.pendingTimerCount } == 0)
    }

    @Test func cancellingAFiredTimerIsANoOp() throws {
        let service = ServiceThread()
        #expect(service.waitStarted())
        defer { service.stop() }
        let fired = Recorder<Int>()
        let handle = Locked<TimerHandle?>(nil)
        service.remote.enqueue { (t: Transport) in
            handle.withLock { $0 = t.schedule(afterMicroseconds: 0) { fired.append(1) } }
        }
        #expect(fired.wait(forCount: 1))
        let count = service.sync { t -> Int in
            t.cancel(handle.withLock { $0 }!)
            return t.pendingTimerCount
        }
        #expect(count == 0)
    }

    @Test func thousandsPendingWithHalfCancelled() throws {
        let service = ServiceThread()
        #expect(service.waitStarted())
        defer { service.stop() }
        let n = 10_000
        let fired = Recorder<(index: Int, at: Int64)>()
        let deadlines = Locked<[Int64]>([])
        let pendingAfterScheduling = Locked(0)
        service.remote.enqueue { (t: Transport) in
            var generator = SystemRandomNumberGenerator()
            var handles: [TimerHandle] = []
            handles.reserveCapacity(n)
            for i in 0..<n {
                let delay = Int64.random(in: 0..<50_000, using: &generator)
                handles.append(t.schedule(afterMicroseconds: delay) {
                    fired.append((i, t.monotonicMicroseconds))
                })
            }
            for i in stride(from: 1, to: n, by: 2) { t.cancel(handles[i]) }
            deadlines.withLock { $0 = handles.map(\.deadlineMicroseconds) }
            pendingAfterScheduling.withLock { $0 = t.pendingTimerCount }
        }
        #expect(fired.wait(forCount: n / 2, seconds: 30))
        #expect(pendingAfterScheduling.withLock { $0 } == n / 2)
        let all = fired.all
        let due = deadlines.withLock { $0 }
        #expect(all.count == n / 2)
        #expect(Set(all.map(\.index)) == Set(stride(from: 0, to: n, by: 2)))
        #expect(all.allSatisfy { $0.at >= due[$0.index] })
        // Deadlines fire in order.
        let inversions = zip(all, all.dropFirst()).map { due[$0.index] - due[$1.index] }.filter { $0 > 0 }
        #expect(inversions.isEmpty, "\(inversions.count) inversions, max \(inversions.max() ?? 0) µs")
        #expect(service.sync { $0.pendingTimerCount } == 0)
    }

    @Test func pendingTimersAreDiscardedWhenTheTransportStops() throws {
        let fired = Recorder<Int>()
        let leftAfterRun = Locked(-1)
        let service = ServiceThread(afterRun: { t in leftAfterRun.withLock { $0 = t.pendingTimerCount } })
        #expect(service.waitStarted())
        _ = service.sync { t in
            for i in 0..<100 { _ = t.schedule(afterMilliseconds: 60_000) { fired.append(i) } }
        }
        #expect(service.stop())
        #expect(leftAfterRun.withLock { $0 } == 0)
        #expect(fired.all.isEmpty)
    }
}

@Suite struct RemoteTests {
    @Test func workFromManyThreadsRunsOnTheServiceThreadInOrder() throws {
        let service = ServiceThread()
        #expect(service.waitStarted())
        defer { service.stop() }
        let serviceThread = service.sync { _ in pthread_self() }!
        let ran = Recorder<(producer: Int, seq: Int, onService: Bool)>()
        let producers = 8
        let each = 1000
        DispatchQueue.concurrentPerform(iterations: producers) { p in
            for s in 0..<each {
                service.remote.enqueue { ran.append((p, s, pthread_equal(pthread_self(), serviceThread) != 0)) }
            }
        }
        #expect(ran.wait(forCount: producers * each))
        let all = ran.all
        #expect(all.allSatisfy { $0.onService })
        for p in 0..<producers {
            #expect(all.filter { $0.producer == p }.map(\.seq) == Array(0..<each))
        }
    }

    @Test func workEnqueuedBeforeRunRunsAfterStart() throws {
        let ran = Recorder<Int>()
        let service = ServiceThread(makeDelegate: { t in
            t.remote.enqueue { (t: Transport) in ran.append(t.port > 0 ? 1 : 0) }  // before run(): runs once listening
            return nil
        })
        #expect(service.waitStarted())
        #expect(ran.wait(forCount: 1))
        #expect(ran.all == [1])
        #expect(service.stop())
    }

    @Test func stopFromAnotherThreadEndsRunAndLaterWorkIsDropped() throws {
        let service = ServiceThread()
        #expect(service.waitStarted())
        let remote = service.remote
        DispatchQueue.global().async { remote.stop() }
        #expect(service.waitFinished())
        #expect(remote.isStopRequested)
        remote.enqueue { Issue.record("work ran after the transport finished") }
        remote.stop()  // again: harmless
        // Dropped on the spot: nothing is left queued for a loop that no longer exists.
        #expect(remote.state.withLock { $0.finished && $0.work.isEmpty && $0.context == nil })
    }

    @Test func runTwiceIsRefused() throws {
        let second = Locked<TransportError?>(nil)
        let service = ServiceThread(afterRun: { t in
            do { try t.run() } catch let e as TransportError { second.withLock { $0 = e } } catch {}
        })
        #expect(service.waitStarted())
        #expect(service.stop())
        #expect(second.withLock { $0 } == .alreadyRan)
    }
}

@Suite struct TimerHeapTests {
    @Test func popsInDeadlineThenSerialOrder() {
        var generator = SystemRandomNumberGenerator()
        var heap = TimerHeap()
        var reference: [TimerHeap.Item] = []
        var serial: UInt64 = 0
        for round in 0..<200 {
            for _ in 0..<Int.random(in: 0...20, using: &generator) {
                serial += 1
                // Few distinct deadlines, so ties (broken by serial) are common.
                let item = TimerHeap.Item(deadline: Int64.random(in: 0..<30, using: &generator), serial: serial)
                heap.push(item)
                reference.append(item)
            }
            reference.sort(by: <)
            for _ in 0..<Int.random(in: 0...15, using: &generator) {
                let popped = heap.popMin()
                #expect(popped == reference.first, "round \(round)")
                if !reference.isEmpty { reference.removeFirst() }
            }
            if round % 50 == 49 {
                heap.rebuild(reference.shuffled(using: &generator))
            }
        }
        reference.sort(by: <)
        while let item = heap.popMin() {
            #expect(item == reference.removeFirst())
        }
        #expect(reference.isEmpty && heap.count == 0)
    }
}

extension TimerTests {
    @Test(arguments: TransportConfiguration.EventLoop.allCases)
    func aTimerReschedulingItselfDoesNotStarveOtherWork(loop: TransportConfiguration.EventLoop) throws {
        var c = ServiceThread.defaultConfiguration()
        c.eventLoop = loop
        let service = ServiceThread(configuration: c)
        #expect(service.waitStarted())
        defer { service.stop() }
        let stop = Locked(false)
        let rounds = Recorder<Int>()
        let running = Recorder<Bool>()
        service.remote.enqueue { (t: Transport) in
            var n = 0
            func again() {
                n += 1
                if n == 3 { running.append(true) }
                if stop.withLock({ $0 }) { rounds.append(n); return }
                _ = t.schedule(afterMicroseconds: 0) { again() }
            }
            again()
        }
        // Once the timer is rescheduling itself (so the next work item cannot have been taken
        // in the same drain as the first), this work item can only run if the loop keeps
        // servicing its wake-up pipe between timer rounds.
        #expect(running.wait(forCount: 1))
        service.remote.enqueue { stop.withLock { $0 = true } }
        #expect(rounds.wait(forCount: 1))
    }

    @Test func manyCancelledTimersAreCompacted() throws {
        let service = ServiceThread()
        #expect(service.waitStarted())
        defer { service.stop() }
        let sizes = service.sync { t -> (Int, Int) in
            let handles = (0..<20_000).map { _ in t.schedule(afterMilliseconds: 60_000) {} }
            for h in handles.dropLast(10) { t.cancel(h) }
            return (t.pendingTimerCount, t.timerHeap.count)
        }
        #expect(sizes?.0 == 10)
        #expect((sizes?.1 ?? .max) <= 2048)
    }
}

extension RemoteTests {
    @Test func stopBeforeRunStartsAndEndsAtOnce() throws {
        let started = Recorder<Int>()
        var config = ServiceThread.defaultConfiguration()
        config.shutdownTimeout = .seconds(120)  // waiting for it would time the test out
        let service = ServiceThread(configuration: config, makeDelegate: { t in
            t.remote.stop()
            t.remote.enqueue { (t: Transport) in started.append(t.port) }
            return nil
        })
        // run() still binds, runs the queued work, then returns without waiting for anything.
        #expect(service.waitFinished(seconds: 60))
        #expect(started.all.count == 1 && started.all[0] > 0)
    }
}
