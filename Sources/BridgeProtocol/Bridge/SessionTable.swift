/// The sessions by id. Each session is a value in a slot; `withSession` takes the slot out of
/// the table for the duration of a request (so the request works on the session and on the rest
/// of the Bridge at once, without overlapping accesses) and puts it back.
///
/// A slot is a reference: the request changes the session where it lies, where moving the
/// session itself (several hundred bytes) out of an optional and back cost seven `memcpy`s of it
/// per request. The table stays a value: `take` hands out a slot only this table holds, copying
/// the session first when a copy of the table shares the slot.
struct SessionTable {
    final class Slot {
        /// Opts out of dynamic exclusivity checks: a taken slot is reached only through the
        /// request that took it.
        @exclusivity(unchecked) var session: Session
        init(_ session: Session) { self.session = session }
    }

    private var slotByID: [String: Int] = [:]
    private var slots: [Slot?] = []
    private var freeSlots: [Int] = []

    init() {}

    var count: Int { slotByID.count }
    var isEmpty: Bool { slotByID.isEmpty }

    func contains(_ sid: String) -> Bool { slotByID[sid] != nil }

    /// A copy of the session (for reading).
    subscript(sid: String) -> Session? {
        guard let i = slotByID[sid] else { return nil }
        return slots[i]?.session
    }

    /// The position of a session's slot, for `take` and `put`.
    func slot(of sid: String) -> Int? { slotByID[sid] }

    /// Whether slot `i` holds the session of serial `serial` (a hint from an earlier lookup may
    /// be stale or -1): no hashing, no id read.
    func holds(serial: UInt64, at i: Int) -> Bool {
        i >= 0 && i < slots.count && slots[i]?.session.serial == serial
    }

    /// The serial of the session in slot `i`, which holds one.
    func serial(at i: Int) -> UInt64 { slots[i]!.session.serial }

    /// Takes slot `i` out of the table (its position stays reserved until `put`): a slot no copy
    /// of the table shares, so its session can be changed in place.
    mutating func take(_ i: Int) -> Slot {
        var slot = slots[i].take()!
        if !isKnownUniquelyReferenced(&slot) { slot = Slot(slot.session) }
        return slot
    }

    mutating func put(_ slot: Slot, at i: Int) {
        slots[i] = slot
    }

    mutating func insert(_ session: Session) {
        precondition(slotByID[session.id] == nil, "session \(session.id) exists")
        if let i = freeSlots.popLast() {
            slots[i] = Slot(session)
            slotByID[session.id] = i
        } else {
            slotByID[session.id] = slots.count
            slots.append(Slot(session))
        }
    }

    @discardableResult
    mutating func remove(_ sid: String) -> Session? {
        guard let i = slotByID.removeValue(forKey: sid) else { return nil }
        let s = slots[i].take()?.session
        freeSlots.append(i)
        return s
    }

    /// Every session, in no particular order.
    var all: [Session] { slots.compactMap { $0?.session } }

    /// The sessions idle since a time `expired` accepts (serial and id), in no particular order;
    /// read in their slots, without a copy of each session (the sweep, once a second).
    func idle(_ expired: (_ since: Int64) -> Bool) -> [(serial: UInt64, id: String)] {
        var out: [(serial: UInt64, id: String)] = []
        for case let slot? in slots {
            if let since = slot.session.idleSince, expired(since) { out.append((slot.session.serial, slot.session.id)) }
        }
        return out
    }
}

extension SessionTable: Equatable {
    /// The same sessions by id (slot positions are not compared).
    static func == (a: SessionTable, b: SessionTable) -> Bool {
        guard a.count == b.count else { return false }
        for (sid, i) in a.slotByID {
            guard let j = b.slotByID[sid], a.slots[i]?.session == b.slots[j]?.session else { return false }
        }
        return true
    }
}
