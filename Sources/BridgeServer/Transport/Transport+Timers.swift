import BridgeProtocol
import CWebsockets
import Logging

/// A binary min-heap of (deadline, serial): earliest deadline first, FIFO among equal deadlines.
struct TimerHeap {
    struct Item: Equatable {
        var deadline: Int64
        var serial: UInt64
        static func < (a: Item, b: Item) -> Bool {
            a.deadline != b.deadline ? a.deadline < b.deadline : a.serial < b.serial
        }
    }

    private(set) var items: [Item] = []

    var count: Int { items.count }
    var min: Item? { items.first }

    mutating func push(_ item: Item) {
        items.append(item)
        var i = items.count - 1
        while i > 0 {
            let parent = (i - 1) / 2
            guard items[i] < items[parent] else { break }
            items.swapAt(i, parent)
            i = parent
        }
    }

    @discardableResult
    mutating func popMin() -> Item? {
        guard !items.isEmpty else { return nil }
        let top = items[0]
        let last = items.removeLast()
        if !items.isEmpty {
            items[0] = last
            siftDown(0)
        }
        return top
    }

    /// Replaces the content (O(n) heapify).
    mutating func rebuild(_ newItems: [Item]) {
        items = newItems
        if items.count > 1 {
            for i in stride(from: items.count / 2 - 1, through: 0, by: -1) { siftDown(i) }
        }
    }

    private mutating func siftDown(_ start: Int) {
        var i = start
        let n = items.count
        while true {
            let l = 2 * i + 1
            let r = l + 1
            var smallest = i
            if l < n && items[l] < items[smallest] { smallest = l }
            if r < n && items[r] < items[smallest] { smallest = r }
            if smallest == i { return }
            items.swapAt(i, smallest)
            i = smallest
        }
    }
}

/// Timers: a Swift heap behind a single lws sul armed for the earliest deadline.
///
/// lws keeps its suls in a sorted linked list (O(n) insertion: ~16 µs per schedule with 10,000
/// pending on this machine), so one sul per timer would not keep thousands of pending timers
/// cheap. Here scheduling is a heap push plus a dictionary insert (O(log n)); cancelling is a
/// dictionary removal (the heap entry is skipped when it surfaces, and the heap is compacted
/// when dead entries dominate). Precision is lws's: its poll waits in whole milliseconds and
/// then polls without waiting through the last millisecond, so a timer fires within a few µs of
/// its deadline on an idle machine, never before it.
extension Transport {
    /// Runs `body` on the service thread after `afterMicroseconds` (clamped to ≥ 0), measured on
    /// `monotonicMicroseconds`. Service thread only, between `transportDidStart` and the end of
    /// `run()`; outside that window the returned timer never fires. Timers with the same
    /// deadline fire in the order they were scheduled.
    public func schedule(afterMicroseconds: Int64, _ body: @escaping () -> Void) -> TimerHandle {
        let serial = nextTimerSerial
        nextTimerSerial += 1
        guard context != nil, !destroying else {
            logger.warning("timer scheduled while the transport is not running; it will not fire")
            return TimerHandle(serial: serial, deadlineMicroseconds: 0)
        }
        let deadline = monotonicMicroseconds + max(0, afterMicroseconds)
        timerBodies[serial] = (deadline, body)
        timerHeap.push(.init(deadline: deadline, serial: serial))
        if armedDeadline.map({ deadline < $0 }) ?? true { arm(deadline) }
        return TimerHandle(serial: serial, deadlineMicroseconds: deadline)
    }

    /// Milliseconds convenience for `schedule(afterMicroseconds:_:)`.
    public func schedule(afterMilliseconds ms: Int64, _ body: @escaping () -> Void) -> TimerHandle {
        schedule(afterMicroseconds: ms * 1000, body)
    }

    /// Cancels a pending timer; a no-op when it already fired or was cancelled.
    public func cancel(_ timer: TimerHandle) {
        guard timerBodies.removeValue(forKey: timer.serial) != nil else { return }
        if timerHeap.count > 1024 && timerHeap.count > 2 * timerBodies.count {
            timerHeap.rebuild(timerBodies.map { .init(deadline: $0.value.deadline, serial: $0.key) })
        }
    }

    /// Number of timers scheduled and not yet fired or cancelled.
    public var pendingTimerCount: Int { timerBodies.count }

    private func arm(_ deadline: Int64) {
        guard let context else { return }
        armedDeadline = deadline
        if let uvTimer {
            // Whole milliseconds, rounded up; `timersDue` re-arms when it fires early. Armed
            // from a timer round, at least 1 ms: libuv runs a timer started with 0 ms inside its
            // callback again in the same pass, before any socket, so a body that reschedules
            // itself with no delay would starve the sockets.
            let delay = deadline - monotonicMicroseconds
            bridged_uv_timer_arm(uvTimer, firingTimers ? max(1, delay) : max(0, delay))
            return
        }
        // lws takes a delay; its deadline (its now + delay) is never earlier than ours.
        bridged_timer_schedule(context, timerNode, { sul in
            guard let sul, let node = bridged_timer_from_sul(sul), let owner = node.pointee.owner else { return }
            Unmanaged<Transport>.fromOpaque(owner).takeUnretainedValue().timersDue()
        }, max(0, deadline - monotonicMicroseconds))
    }

    /// The sul fired: run every timer that is due, in order, then re-arm for the next one.
    /// Timers scheduled by these bodies wait for the next round (so a body that reschedules
    /// itself with no delay cannot starve the sockets).
    func timersDue() {
        armedDeadline = nil
        firingTimers = true
        defer { firingTimers = false }
        let now = monotonicMicroseconds
        let firstNewSerial = nextTimerSerial
        while let top = timerHeap.min, top.deadline <= now, top.serial < firstNewSerial {
            timerHeap.popMin()
            guard let entry = timerBodies.removeValue(forKey: top.serial) else { continue }  // cancelled
            entry.body()
            if destroying { return }
        }
        // Drop cancelled entries from the top, then arm for the earliest live one.
        while let top = timerHeap.min, timerBodies[top.serial] == nil { timerHeap.popMin() }
        if let top = timerHeap.min { arm(top.deadline) }
        if !pendingFlush.isEmpty { flushPendingWrites() }
        // lws arms its own libuv timer only from its callbacks: a close grace (lws_set_timeout)
        // set by a body here would wait for the next of them. A wake-up makes one.
        if lwsTimeoutsSet, let context, uvLoop != nil { lws_cancel_service(context) }
        lwsTimeoutsSet = false
    }
}

/// Keyed timers: the daemon's timers (a key and a deadline; `TransportDelegate.transportTimerFired`
/// when due).
///
/// The protocol's timers (foreground fallbacks) all share one timeout, so their deadlines arrive
/// in order: those go into a FIFO (`DeadlineQueue`) behind a single heap timer, O(1) to schedule
/// and to cancel. A deadline earlier than the last one queued (a shorter timeout) gets a heap
/// timer of its own. Scheduling a key that is pending replaces it.
extension Transport {
    /// Calls `delegate.transportTimerFired(key)` after `afterMicroseconds` (clamped to ≥ 0).
    /// Service thread only, while running.
    public func schedule(_ key: TimerKey, afterMicroseconds: Int64) {
        if !keyedOutOfOrder.isEmpty, let old = keyedOutOfOrder.removeValue(forKey: key) { cancel(old) }
        let deadline = monotonicMicroseconds + max(0, afterMicroseconds)
        if keyedQueue.push(key, deadline: deadline)
            || (keyedQueue.cancel(key) && keyedQueue.push(key, deadline: deadline)) {
            // An armed timer is never later than a live deadline (each push checks its own), so
            // one armed no later than this deadline fires early enough: nothing to re-arm.
            if keyedQueueTimerAt > deadline { armKeyedQueue() }
            return
        }
        keyedOutOfOrder[key] = schedule(afterMicroseconds: afterMicroseconds) { [unowned self] in
            self.keyedOutOfOrder[key] = nil
            self.delegate?.transportTimerFired(key)
        }
    }

    /// Forgets a pending keyed timer; a no-op when it is not pending.
    public func cancel(_ key: TimerKey) {
        if !keyedQueue.cancel(key), !keyedOutOfOrder.isEmpty, let handle = keyedOutOfOrder.removeValue(forKey: key) {
            cancel(handle)
        }
    }

    /// Number of keyed timers pending.
    public var pendingKeyedTimerCount: Int { keyedQueue.count + keyedOutOfOrder.count }

    /// Keeps one heap timer armed for the earliest live deadline of the FIFO.
    private func armKeyedQueue() {
        guard let next = keyedQueue.nextDeadline() else { return }
        if let armed = keyedQueueTimer {
            if keyedQueueTimerAt <= next { return }  // fires early enough; it re-arms then
            cancel(armed)
        }
        keyedQueueTimerAt = next
        keyedQueueTimer = schedule(afterMicroseconds: next - monotonicMicroseconds) { [unowned self] in
            self.keyedQueueTimer = nil
            self.keyedQueueTimerAt = .max
            for key in self.keyedQueue.popDue(now: self.monotonicMicroseconds) {
                self.delegate?.transportTimerFired(key)
                if self.destroying { return }
            }
            self.armKeyedQueue()
        }
    }
}
