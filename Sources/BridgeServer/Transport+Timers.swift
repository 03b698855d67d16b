import CWebsockets
import Logging

/// A scheduled timer: the lws sul lives in `node` (heap, stable address) until it fires or is
/// cancelled; the Swift closure lives here.
struct TimerEntry {
    let node: UnsafeMutablePointer<bridged_timer_t>
    let body: () -> Void
}

extension Transport {
    /// Runs `body` on the service thread after `afterMicroseconds` (clamped to ≥ 0), measured on
    /// `monotonicMicroseconds`. Service thread only, between `transportDidStart` and the end of
    /// `run()`; outside that window the returned timer never fires. Each pending timer costs one
    /// small allocation and a dictionary entry; lws keeps them in a sorted list.
    public func schedule(afterMicroseconds: Int64, _ body: @escaping () -> Void) -> TimerHandle {
        let serial = nextTimerSerial
        nextTimerSerial += 1
        guard let context, !destroying else {
            logger.warning("timer scheduled while the transport is not running; it will not fire")
            return TimerHandle(serial: serial)
        }
        let node = UnsafeMutablePointer<bridged_timer_t>.allocate(capacity: 1)
        node.initialize(to: bridged_timer_t())
        node.pointee.serial = serial
        node.pointee.owner = Unmanaged.passUnretained(self).toOpaque()
        timers[serial] = TimerEntry(node: node, body: body)
        bridged_timer_schedule(context, node, { sul in
            guard let sul, let node = bridged_timer_from_sul(sul), let owner = node.pointee.owner else { return }
            Unmanaged<Transport>.fromOpaque(owner).takeUnretainedValue().timerFired(node)
        }, max(0, afterMicroseconds))
        return TimerHandle(serial: serial)
    }

    /// Milliseconds convenience for `schedule(afterMicroseconds:_:)`.
    public func schedule(afterMilliseconds ms: Int64, _ body: @escaping () -> Void) -> TimerHandle {
        schedule(afterMicroseconds: ms * 1000, body)
    }

    /// Cancels a pending timer; a no-op when it already fired or was cancelled.
    public func cancel(_ timer: TimerHandle) {
        guard let entry = timers.removeValue(forKey: timer.serial) else { return }
        bridged_timer_cancel(entry.node)
        entry.node.deallocate()
    }

    /// Number of timers scheduled and not yet fired or cancelled.
    public var pendingTimerCount: Int { timers.count }

    func timerFired(_ node: UnsafeMutablePointer<bridged_timer_t>) {
        let serial = node.pointee.serial
        guard let entry = timers.removeValue(forKey: serial) else { return }
        node.deallocate()
        entry.body()
    }
}
