/// The sessions by id, with the last one looked up remembered: one request reaches its session
/// through `sessions[sid]` a dozen times, and each dictionary lookup hashes the id string.
///
/// Copies of a table (of a `Bridge`) stay independent: the remembered entry is only used while
/// the table holds the same generation token it was remembered under, and every insertion or
/// removal takes a fresh token.
struct SessionTable: Sequence {
    private var storage: [String: SessionRecord] = [:]
    private var generation = Generation()
    private let last = LastLookup()

    final class Generation {}

    final class LastLookup {
        var generation: Generation?
        var record: SessionRecord?
    }

    init() {}

    subscript(sid: String) -> SessionRecord? {
        if last.generation === generation, let r = last.record, r.id == sid { return r }
        guard let r = storage[sid] else { return nil }
        last.generation = generation
        last.record = r
        return r
    }

    mutating func insert(_ record: SessionRecord) {
        generation = Generation()
        storage[record.id] = record
    }

    @discardableResult
    mutating func removeValue(forKey sid: String) -> SessionRecord? {
        generation = Generation()
        last.record = nil
        return storage.removeValue(forKey: sid)
    }

    var count: Int { storage.count }
    var isEmpty: Bool { storage.isEmpty }
    var values: Dictionary<String, SessionRecord>.Values { storage.values }

    func makeIterator() -> Dictionary<String, SessionRecord>.Iterator { storage.makeIterator() }
}
