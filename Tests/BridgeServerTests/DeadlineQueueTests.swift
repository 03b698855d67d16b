@testable import BridgeServer
import Testing

/// The FIFO behind the daemon's foreground timers (docs/PERFORMANCE.md).
@Suite struct DeadlineQueueTests {
    /// `#expect` cannot take a mutating call on the queue; the value is computed first.
    func check(_ ok: Bool, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(ok, sourceLocation: sourceLocation)
    }

    @Test func firesLiveKeysInOrderAndSkipsCancelled() {
        var q = DeadlineQueue<Int>()
        check(q.nextDeadline() == nil)
        for k in 1...5 { check(q.push(k, deadline: Int64(100 + k))) }
        check(q.count == 5)
        check(q.cancel(1))
        check(!q.cancel(1))
        check(q.cancel(3))
        check(q.nextDeadline() == 102)  // 1 was cancelled
        check(q.popDue(now: 101) == [])
        check(q.popDue(now: 104) == [2, 4])
        check(q.nextDeadline() == 105)
        check(!q.cancel(2))  // already fired
        check(q.popDue(now: 1000) == [5])
        check(q.nextDeadline() == nil)
        check(q.count == 0)
    }

    @Test func refusesWhatWouldBreakTheOrder() {
        var q = DeadlineQueue<String>()
        check(q.push("a", deadline: 10))
        check(q.push("b", deadline: 10))   // equal deadlines are in order
        check(!q.push("c", deadline: 9))   // earlier than the last: the caller's own timer
        check(!q.push("a", deadline: 20))  // already live
        check(q.popDue(now: 10) == ["a", "b"])
        check(q.push("c", deadline: 5))    // empty again: any deadline
        check(q.nextDeadline() == 5)
    }

    @Test func aKeyCancelledAndQueuedAgainFiresOnceAtItsNewDeadline() {
        var q = DeadlineQueue<String>()
        check(q.push("a", deadline: 10))
        check(q.push("b", deadline: 11))
        check(q.cancel("a"))
        check(q.push("a", deadline: 12))
        check(!q.push("a", deadline: 13))  // live again
        check(q.count == 2)
        check(q.nextDeadline() == 11)
        check(q.popDue(now: 11) == ["b"])
        check(q.cancel("a"))
        check(q.push("a", deadline: 14))
        check(q.popDue(now: 13) == [])
        check(q.popDue(now: 14) == ["a"])
        check(!q.cancel("a"))
        check(q.count == 0)
        check(q.nextDeadline() == nil)
    }

    @Test func cancelledHeadsDoNotHideLaterKeys() {
        var q = DeadlineQueue<Int>()
        for k in 0..<10_000 { check(q.push(k, deadline: Int64(k))) }
        for k in 0..<9_999 { check(q.cancel(k)) }
        check(q.nextDeadline() == 9_999)
        check(q.popDue(now: 9_998) == [])
        check(q.popDue(now: 9_999) == [9_999])
        // Many rounds of push, cancel, fire: everything live fires exactly once.
        var fired: [Int] = []
        var next = 20_000
        for round in 0..<50 {
            for _ in 0..<100 {
                check(q.push(next, deadline: Int64(next)))
                if next % 3 != 0 { check(q.cancel(next)) }
                next += 1
            }
            fired += q.popDue(now: Int64(20_000 + round * 100 + 50))
        }
        fired += q.popDue(now: .max)
        #expect(fired == Array(stride(from: 20_001, to: next, by: 1)).filter { $0 % 3 == 0 })
        check(q.count == 0)
    }
}
