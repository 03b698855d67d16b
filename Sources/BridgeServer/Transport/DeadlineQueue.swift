/// Timers whose deadlines come in order, as the foreground fallbacks do (one timeout for all):
/// a FIFO instead of one lws timer each. Scheduling appends, cancelling marks the entry dead in
/// place (it is dropped when it reaches the head), so both are O(1), where lws keeps its timers
/// in a sorted linked list (O(pending) per insertion). The owner arms one real timer for
/// `nextDeadline()` and calls `popDue` when it fires.
///
/// A key is hashed once to schedule it, once to cancel it and once when it fires: `live` maps
/// each live key to its entry's position, so a cancel marks the entry itself and the head is
/// checked without a lookup.
struct DeadlineQueue<Key: Hashable> {
    /// Entry deadlines; `cancelled` marks an entry whose key was cancelled.
    private var deadlines: [Int64] = []
    private var keys: [Key] = []
    private var head = 0
    /// Position (counted since the queue was made) of `deadlines[0]`.
    private var base = 0
    /// The deadline of the last entry queued (live or not).
    private var lastDeadline: Int64 = .min
    /// Keys scheduled and not cancelled or fired, with their entry's position.
    private var live: [Key: Int] = [:]

    private static var cancelled: Int64 { .min }

    /// Number of live timers.
    var count: Int { live.count }

    /// Queues `key` for `deadline`; false (nothing queued) when `deadline` is earlier than the
    /// last queued one or `key` is already live: the caller then needs a timer of its own.
    /// `deadline` must be above `Int64.min`.
    mutating func push(_ key: Key, deadline: Int64) -> Bool {
        precondition(deadline != Self.cancelled, "DeadlineQueue: Int64.min is not a deadline")
        if head < deadlines.count, deadline < lastDeadline { return false }
        if head == deadlines.count {
            base += deadlines.count
            deadlines.removeAll(keepingCapacity: true)
            keys.removeAll(keepingCapacity: true)
            head = 0
        }
        let position = base + deadlines.count
        if let earlier = live.updateValue(position, forKey: key) {
            live[key] = earlier  // already live: left as it was
            return false
        }
        deadlines.append(deadline)
        keys.append(key)
        lastDeadline = deadline
        return true
    }

    /// Forgets `key`; false when it was not queued (or already fired).
    mutating func cancel(_ key: Key) -> Bool {
        guard let position = live.removeValue(forKey: key) else { return false }
        deadlines[position - base] = Self.cancelled
        return true
    }

    /// The earliest live deadline, nil when none is left.
    mutating func nextDeadline() -> Int64? {
        dropDeadHead()
        return head < deadlines.count ? deadlines[head] : nil
    }

    /// Removes and returns the live keys due at `now` (deadline ≤ now), earliest first.
    mutating func popDue(now: Int64) -> [Key] {
        var due: [Key] = []
        while head < deadlines.count, deadlines[head] <= now {
            if deadlines[head] != Self.cancelled {
                live[keys[head]] = nil
                due.append(keys[head])
            }
            head += 1
        }
        compact()
        return due
    }

    private mutating func dropDeadHead() {
        while head < deadlines.count, deadlines[head] == Self.cancelled { head += 1 }
        compact()
    }

    private mutating func compact() {
        if head == deadlines.count {
            base += deadlines.count
            deadlines.removeAll(keepingCapacity: deadlines.count <= 4096)
            keys.removeAll(keepingCapacity: keys.count <= 4096)
            head = 0
        } else if head >= 1024 && head * 2 >= deadlines.count {
            base += head
            deadlines.removeFirst(head)
            keys.removeFirst(head)
            head = 0
        }
    }
}
