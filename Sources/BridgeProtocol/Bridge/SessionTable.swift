/// The sessions by id. Each session is a value in a slot; `withSession` takes it out of its
/// slot for the duration of a request (so the request works on it and on the rest of the Bridge
/// at once, without overlapping accesses) and puts it back.
struct SessionTable {
    private var slotByID: [String: Int] = [:]
    private var slots: [Session?] = []
    private var freeSlots: [Int] = []

    init() {}

    var count: Int { slotByID.count }
    var isEmpty: Bool { slotByID.isEmpty }

    func contains(_ sid: String) -> Bool { slotByID[sid] != nil }

    /// A copy of the session (for reading).
    subscript(sid: String) -> Session? {
        guard let i = slotByID[sid] else { return nil }
        return slots[i]
    }

    /// The slot of a session, for `take` and `put`.
    func slot(of sid: String) -> Int? { slotByID[sid] }

    /// Moves the session out of slot `i` (the slot stays reserved until `put`).
    mutating func take(_ i: Int) -> Session {
        slots[i].take()!
    }

    mutating func put(_ session: consuming Session, at i: Int) {
        slots[i] = consume session
    }

    mutating func insert(_ session: Session) {
        precondition(slotByID[session.id] == nil, "session \(session.id) exists")
        if let i = freeSlots.popLast() {
            slots[i] = session
            slotByID[session.id] = i
        } else {
            slotByID[session.id] = slots.count
            slots.append(session)
        }
    }

    @discardableResult
    mutating func remove(_ sid: String) -> Session? {
        guard let i = slotByID.removeValue(forKey: sid) else { return nil }
        var s: Session?
        swap(&s, &slots[i])
        freeSlots.append(i)
        return s
    }

    /// Every session, in no particular order.
    var all: [Session] { slots.compactMap { $0 } }
}

extension SessionTable: Equatable {
    /// The same sessions by id (slot positions are not compared).
    static func == (a: SessionTable, b: SessionTable) -> Bool {
        guard a.count == b.count else { return false }
        for (sid, i) in a.slotByID {
            guard let j = b.slotByID[sid], a.slots[i] == b.slots[j] else { return false }
        }
        return true
    }
}
