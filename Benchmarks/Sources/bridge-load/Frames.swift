/// A message from the peer, classified by looking at its first keys only. bridged, the Python
/// mock and the echo server all write `id` (or `event`) as the first key, so this never parses a
/// whole reply on the hot path.
enum Incoming {
    /// `{"id":N,"result":…}`, `{"id":N,"error":…}`, or an echoed request `{"id":N,"method":…}`.
    case reply(id: Int64, status: Status)
    /// `{"id":null,"error":…}`: a frame the peer could not attribute.
    case unattributed
    /// `{"event":"NAME",…}`: `name` indexes the payload.
    case event(name: Range<Int>)
    case other

    enum Status { case result, error, echo }
}

struct Scanner {
    let p: UnsafeRawBufferPointer
    var i = 0

    init(_ p: UnsafeRawBufferPointer) { self.p = p }

    @inline(__always) mutating func skipSpace() {
        while i < p.count, p[i] == 0x20 || p[i] == 0x0A || p[i] == 0x0D || p[i] == 0x09 { i += 1 }
    }

    @inline(__always) mutating func expect(_ byte: UInt8) -> Bool {
        skipSpace()
        guard i < p.count, p[i] == byte else { return false }
        i += 1
        return true
    }

    /// Matches `"key"` (quotes included) at the cursor.
    mutating func key(_ k: StaticString) -> Bool {
        skipSpace()
        let n = k.utf8CodeUnitCount
        guard i + n + 2 <= p.count, p[i] == 0x22, p[i + n + 1] == 0x22 else { return false }
        let base = k.utf8Start
        for j in 0..<n where p[i + 1 + j] != base[j] { return false }
        i += n + 2
        return true
    }

    mutating func integer() -> Int64? {
        skipSpace()
        var negative = false
        if i < p.count, p[i] == 0x2D { negative = true; i += 1 }
        var v: Int64 = 0
        var digits = 0
        while i < p.count, p[i] >= 0x30, p[i] <= 0x39 {
            v = v &* 10 &+ Int64(p[i] - 0x30)
            i += 1
            digits += 1
        }
        return digits == 0 ? nil : (negative ? -v : v)
    }

    static func classify(_ p: UnsafeRawBufferPointer) -> Incoming {
        var s = Scanner(p)
        guard s.expect(0x7B) else { return .other }  // {
        if s.key("id") {
            guard s.expect(0x3A) else { return .other }
            s.skipSpace()
            if s.i < p.count, p[s.i] == 0x6E { return .unattributed }  // null
            guard let id = s.integer(), s.expect(0x2C) else { return .other }
            if s.key("result") { return .reply(id: id, status: .result) }
            if s.key("error") { return .reply(id: id, status: .error) }
            return .reply(id: id, status: .echo)
        }
        if s.key("event") {
            guard s.expect(0x3A), s.expect(0x22) else { return .other }
            let start = s.i
            while s.i < p.count, p[s.i] != 0x22 { s.i += 1 }
            return .event(name: start..<s.i)
        }
        return .other
    }
}

extension UnsafeRawBufferPointer {
    /// True when bytes `range` spell `s`.
    func equals(_ range: Range<Int>, _ s: StaticString) -> Bool {
        guard range.count == s.utf8CodeUnitCount else { return false }
        for (j, k) in range.enumerated() where self[k] != s.utf8Start[j] { return false }
        return true
    }

    /// The index just after the first occurrence of `needle`, or nil.
    func after(_ needle: StaticString) -> Int? {
        let n = needle.utf8CodeUnitCount
        guard count >= n else { return nil }
        var i = 0
        outer: while i + n <= count {
            for j in 0..<n where self[i + j] != needle.utf8Start[j] {
                i += 1
                continue outer
            }
            return i + n
        }
        return nil
    }

    /// The string value of `"key":"…"` (no escapes expected), or nil.
    func stringField(_ needle: StaticString) -> String? {
        guard var i = after(needle) else { return nil }
        let start = i
        while i < count, self[i] != 0x22 { i += 1 }
        return String(decoding: self[start..<i], as: UTF8.self)
    }

    /// The integer value of `"key":N`, or nil.
    func intField(_ needle: StaticString) -> Int64? {
        guard let i = after(needle) else { return nil }
        var s = Scanner(self)
        s.i = i
        return s.integer()
    }

    var text: String { String(decoding: self, as: UTF8.self) }
}
