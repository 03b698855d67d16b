@testable import BridgeServer
import BridgeProtocol
import Foundation
import Testing

/// The ordering model of host work (HostLanes.swift, docs/ARCHITECTURE.md "The ordering
/// model"): what each kind of job waits for, the latest front winning, and a closed session's
/// lanes. Jobs are held open by gates the test opens; nothing sleeps.
@Suite struct HostLanesTests {
    /// A gate a job waits at until the test opens it.
    final class Gate: @unchecked Sendable {
        private let lock = NSLock()
        private var open = false
        private var waiters: [CheckedContinuation<Void, Never>] = []
        func wait() async {
            await withCheckedContinuation { c in
                lock.lock()
                if open { lock.unlock(); c.resume() } else { waiters.append(c); lock.unlock() }
            }
        }
        func release() {
            lock.lock()
            open = true
            let w = waiters
            waiters = []
            lock.unlock()
            for c in w { c.resume() }
        }
    }

    /// What the jobs did, in order.
    final class Log: @unchecked Sendable {
        private let lock = NSLock()
        private var entries: [String] = []
        private var waiters: [(Int, CheckedContinuation<Void, Never>)] = []
        func add(_ s: String) {
            lock.lock()
            entries.append(s)
            let n = entries.count
            let ready = waiters.filter { $0.0 <= n }
            waiters.removeAll { $0.0 <= n }
            lock.unlock()
            for (_, c) in ready { c.resume() }
        }
        var all: [String] { lock.lock(); defer { lock.unlock() }; return entries }
        /// Waits until `n` entries are in.
        func count(_ n: Int) async {
            await withCheckedContinuation { c in
                lock.lock()
                if entries.count >= n { lock.unlock(); c.resume() } else { waiters.append((n, c)); lock.unlock() }
            }
        }
    }

    @Test func aLookWaitsForTheChangeBeforeItAndHoldsUpNothing() async {
        let lanes = HostLanes(), log = Log(), shown = Gate(), look = Gate()
        lanes.change(session: "s", webview: .webview(1)) { await shown.wait(); log.add("shown") }
        lanes.look(session: "s", webview: .webview(1)) { log.add("snapshot"); await look.wait(); log.add("snapshot done") }
        lanes.look(session: "s", webview: .webview(1)) { log.add("evaluate") }
        lanes.change(session: "s", webview: .webview(1)) { log.add("removed") }
        // Another web view's page is not held up.
        lanes.look(session: "s", webview: .webview(2)) { log.add("W2") }
        await log.count(1)
        #expect(log.all == ["W2"])
        shown.release()
        // The second change does not wait for the snapshot still under way.
        await log.count(5)
        #expect(log.all.prefix(2) == ["W2", "shown"])
        #expect(Set(log.all.dropFirst(2)) == ["snapshot", "evaluate", "removed"])
        look.release()
        await log.count(6)
        #expect(log.all.last == "snapshot done")
    }

    @Test func closesRunTogetherAndAFrontWaitsForThemThenTheLatestWins() async {
        let lanes = HostLanes(), log = Log(), closeA = Gate(), closeB = Gate()
        lanes.close(session: "s", webview: .webview(3)) { log.add("close W3"); await closeA.wait() }
        lanes.close(session: "s", webview: .webview(2)) { log.add("close W2"); await closeB.wait() }
        lanes.front(session: "s") { dropped in log.add(dropped ? "W1 dropped" : "front W1") }
        await log.count(2)
        #expect(Set(log.all) == ["close W3", "close W2"], "both closes under way at once")
        // A newer front: the first one is dropped when its turn comes.
        lanes.front(session: "s") { dropped in log.add(dropped ? "W4 dropped" : "front W4") }
        closeA.release()
        closeB.release()
        await log.count(4)
        #expect(Array(log.all.suffix(2)) == ["W1 dropped", "front W4"])
        // A tab opened drops a front not started yet.
        let hold = Gate()
        lanes.close(session: "s", webview: .webview(4)) { await hold.wait() }
        lanes.front(session: "s") { dropped in log.add(dropped ? "W5 dropped" : "front W5") }
        lanes.open(session: "s", webview: .webview(5)) { _ in log.add("open W5") }
        hold.release()
        await log.count(6)
        #expect(Set(log.all.suffix(2)) == ["W5 dropped", "open W5"])
    }

    @Test func aClosedSessionsLanesAreCancelledAndForgotten() async {
        let lanes = HostLanes(), log = Log(), gate = Gate(), started = Log()
        lanes.change(session: "s", webview: .webview(1)) { started.add("first"); await gate.wait(); log.add("first") }
        await started.count(1)
        lanes.change(session: "s", webview: .webview(1)) { log.add("second change") }
        lanes.look(session: "s", webview: .webview(1)) { log.add("look") }
        lanes.close(session: "s", webview: .webview(2)) { log.add("close") }
        lanes.change(session: "t", webview: .webview(1)) { log.add("other session") }
        #expect(lanes.count == (1, 2))
        lanes.closeSession("s")
        #expect(lanes.count == (0, 1))
        gate.release()
        // The change not started is skipped; the look (it answers someone) and the close run.
        await log.count(4)
        #expect(Set(log.all) == ["first", "look", "close", "other session"])
    }

    /// A session closed while its root open waits for its context: the close takes effect at
    /// once (the open sees it after its await, and ends), and the session's close runs after it.
    @Test func aSessionClosedWhileItsRootOpenWaitsForItsContext() async {
        let lanes = HostLanes(), log = Log(), context = Gate(), started = Log()
        lanes.open(session: "s", webview: .webview(1)) { cancelled in
            started.add("making the context")
            await context.wait()
            log.add(cancelled.now ? "open ended: closed" : "tab opened")
        }
        lanes.front(session: "s") { dropped in log.add(dropped ? "front dropped" : "front") }
        await started.count(1)
        lanes.closeSession("s") { log.add("session closed") }
        #expect(lanes.count == (0, 0))
        context.release()
        await log.count(3)
        #expect(log.all == ["open ended: closed", "front dropped", "session closed"])
    }

    /// An open not started when its session, or its web view, is closed is skipped: it starts
    /// cancelled, and the close waits for it.
    @Test func anOpenNotStartedWhenItsSessionOrWebViewIsClosedIsSkipped() async {
        let lanes = HostLanes(), log = Log(), first = Gate(), started = Log()
        lanes.open(session: "s", webview: .webview(1)) { _ in started.add("W1"); await first.wait(); log.add("W1 opened") }
        lanes.open(session: "s", webview: .webview(2)) { c in log.add(c.atStart ? "W2 skipped" : "W2 opened") }
        lanes.open(session: "s", webview: .webview(3)) { c in log.add(c.atStart ? "W3 skipped" : "W3 opened") }
        await started.count(1)
        // W2's web view closed before its open started.
        lanes.close(session: "s", webview: .webview(2)) { log.add("W2 closed") }
        lanes.closeSession("s") { log.add("session closed") }
        first.release()
        await log.count(5)
        #expect(log.all.prefix(3) == ["W1 opened", "W2 skipped", "W3 skipped"], "\(log.all)")
        #expect(Set(log.all.suffix(2)) == ["W2 closed", "session closed"])
        // A web view closed while its open is under way: the open sees it after its await.
        let other = HostLanes(), opening = Gate(), under = Log()
        other.open(session: "t", webview: .webview(2)) { c in
            under.add("opening")
            await opening.wait()
            under.add(c.now ? "W2 ended: closed" : "W2 opened")
        }
        await under.count(1)
        other.close(session: "t", webview: .webview(2)) { under.add("W2 closed") }
        opening.release()
        await under.count(3)
        #expect(under.all == ["opening", "W2 ended: closed", "W2 closed"])
    }

    /// An open after a front not started drops it, and does not wait for the closes it waits
    /// for; a front under way is waited for.
    @Test func anOpenAfterAFrontDropsItOrWaitsForItUnderWay() async {
        let lanes = HostLanes(), log = Log(), close = Gate()
        lanes.close(session: "s", webview: .webview(2)) { await close.wait(); log.add("W2 closed") }
        lanes.front(session: "s") { dropped in log.add(dropped ? "W1 dropped" : "front W1") }
        lanes.open(session: "s", webview: .webview(3)) { _ in log.add("open W3") }
        await log.count(1)
        #expect(log.all == ["open W3"], "the open does not wait for the close nor the dropped front")
        close.release()
        await log.count(3)
        #expect(log.all.suffix(2) == ["W2 closed", "W1 dropped"])
        // A front under way: the open comes after it.
        let front = Gate(), started = Log()
        lanes.front(session: "s") { _ in started.add("front"); await front.wait(); log.add("front W3") }
        await started.count(1)
        lanes.open(session: "s", webview: .webview(4)) { _ in log.add("open W4") }
        front.release()
        await log.count(5)
        #expect(log.all.suffix(2) == ["front W3", "open W4"])
    }

    /// Opens keep their order; a front and a close asked after them wait for them.
    @Test func twoOpensKeepTheirOrder() async {
        let lanes = HostLanes(), log = Log(), first = Gate(), started = Log()
        lanes.open(session: "s", webview: .webview(1)) { _ in started.add("W1"); await first.wait(); log.add("W1 opened") }
        lanes.open(session: "s", webview: .webview(2)) { _ in log.add("W2 opened") }
        lanes.front(session: "s") { dropped in log.add(dropped ? "front dropped" : "front W1") }
        lanes.close(session: "s", webview: .webview(5)) { log.add("W5 closed") }
        // Another session's open is not held up.
        lanes.open(session: "t", webview: .webview(1)) { _ in log.add("t W1 opened") }
        await started.count(1)
        await log.count(1)
        #expect(log.all == ["t W1 opened"])
        first.release()
        await log.count(5)
        #expect(log.all.prefix(3) == ["t W1 opened", "W1 opened", "W2 opened"], "\(log.all)")
        #expect(Set(log.all.suffix(2)) == ["front W1", "W5 closed"])
    }

    /// However many looks in a row, a lane keeps a bounded list to wait for.
    @Test func manyLooksInARowStayBounded() async {
        let lane = HostLane(), log = Log()
        for i in 0..<(HostLane.foldAt * 3) { lane.shared { _ in log.add("look \(i)") } }
        lane.exclusive { _ in log.add("after") }
        await log.count(HostLane.foldAt * 3 + 1)
        #expect(log.all.last == "after")
    }
}
