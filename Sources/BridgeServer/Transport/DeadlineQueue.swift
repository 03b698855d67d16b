/// Timers whose deadlines come in order, as the foreground fallbacks do (one timeout for all):
/// a FIFO instead of one lws timer each. Scheduling appends, cancelling only forgets the key
/// (the entry is dropped when it reaches the head), so both are O(1), where lws keeps its
/// timers in a sorted linked list (O(pending) per insertion). The owner arms one real timer for
/// `nextDeadline()` and calls `popDue` when it fires.
struct DeadlineQueue<Key: Hashable> {
    private var deadlines: [Int64] = []
    private var keys: [Key] = []
    private var head = 0
    /// Keys scheduled and not cancelled or fired, with their deadline.
    private var live: [Key: Int64] = [:]

    /// Number of live timers.
    var count: Int { live.count }

    /// Queues `key` for `deadline`; false (nothing queued) when `deadline` is earlier than the
    /// last queued one or `key` is already live: the caller then needs a timer of its own.
    mutating func push(_ key: Key, deadline: Int64) -> Bool {
        if head < deadlines.count, deadline < deadlines[deadlines.count - 1] { return false }
        guard live[key] == nil else { return false }
        if head == deadlines.count {
            deadlines.removeAll(keepingCapacity: true)
            keys.removeAll(keepingCapacity: true)
            head = 0
        }
        deadlines.append(deadline)
        keys.append(key)
        live[key] = deadline
        return true
    }

    /// Forgets `key`; false when it was not queued (or already fired).
    mutating func cancel(_ key: Key) -> Bool {
        live.removeValue(forKey: key) != nil
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
            let key = keys[head]
            if live[key] == deadlines[head] {
                live[key] = nil
                due.append(key)
            }
            head += 1
        }
        compact()
        return due
    }

    private func isLive(_ i: Int) -> Bool { live[keys[i]] == deadlines[i] }

    private mutating func dropDeadHead() {
        while head < deadlines.count, !isLive(head) { head += 1 }
        compact()
    }

    private mutating func compact() {
        if head == deadlines.count {
            deadlines.removeAll(keepingCapacity: deadlines.count <= 4096)
            keys.removeAll(keepingCapacity: keys.count <= 4096)
            head = 0
        } else if head >= 1024 && head * 2 >= deadlines.count {
            deadlines.removeFirst(head)
            keys.removeFirst(head)
            head = 0
        }
    }
}
