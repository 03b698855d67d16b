// A compact JSON writer that appends UTF-8 bytes to a buffer. Pure Swift, no Foundation.

/// Writes compact JSON (no spaces) into a growable byte buffer; `bytes` is the output so far.
///
/// Either write a whole tree with `write(_:)`, or stream a document without building one:
///
///     var w = JSONWriter()
///     w.beginObject()
///     w.key("id"); w.int(7)
///     w.key("result"); w.beginObject(); w.key("ok"); w.bool(true); w.endObject()
///     w.endObject()
///     // w.bytes == Array(#"{"id":7,"result":{"ok":true}}"#.utf8)
///
/// Commas are inserted automatically: between members after `key(_:)`, between array elements,
/// and between top-level values (which yields a sequence, not one document — the caller's
/// choice). The writer does not check the call sequence: calls must follow JSON's shape
/// (`key` only directly inside an object and before each value there, balanced begin/end).
///
/// Bytes already in `bytes` when writing starts (e.g. headroom for a transport) are kept as is;
/// the first value is written after them without a comma.
///
/// Output is always valid UTF-8 JSON as long as the calls are well-formed: strings escape `"`,
/// `\` and every control character; non-finite doubles are written as `null`.
///
/// The output lives in raw memory of the writer's own (grown by doubling, copied on write when a
/// copy of the writer shares it): an append is a capacity check and a `memcpy`,
/// where `Array.append(contentsOf:)` cost about 90 instructions per call (docs/PERFORMANCE.md).
/// Read it with `withBytes` (no copy) or `bytes` (a copy).
public struct JSONWriter: Sendable {
    @usableFromInline internal var storage: Storage
    /// Bytes written (the used part of `storage`).
    @usableFromInline internal var count = 0
    /// Whether the next value or key must be preceded by a comma.
    @usableFromInline internal var needsComma: Bool = false

    public init(capacity: Int = 256) {
        storage = Storage.make(capacity: capacity)
    }

    /// An empty writer that allocates nothing until it is written to (a placeholder, e.g. for a
    /// writer swapped out of its owner).
    static var unallocated: JSONWriter { JSONWriter(storage: Storage.shared) }

    private init(storage: Storage) {
        self.storage = storage
    }

    /// The output so far, as an array (a copy). Setting it replaces the output (see
    /// `reset(keepingPrefix:)` for headroom).
    public var bytes: [UInt8] {
        get { withBytes { Array($0) } }
        set {
            count = 0
            needsComma = false
            newValue.withUnsafeBytes { append($0) }
        }
    }

    /// Number of bytes written.
    public var byteCount: Int { count }

    /// Calls `body` with the output so far, in place (valid only during the call).
    @inline(__always)
    public func withBytes<R, E: Error>(_ body: (UnsafeBufferPointer<UInt8>) throws(E) -> R) throws(E) -> R {
        try body(UnsafeBufferPointer(start: storage.base, count: count))
    }

    /// Empties the output for the next document, keeping its storage, and keeping the first
    /// `prefix` bytes: a transport that needs headroom before the payload (libwebsockets'
    /// `LWS_PRE`) can set `bytes` to that many zero bytes once and send `bytes[prefix...]` in place.
    public mutating func reset(keepingPrefix prefix: Int = 0) {
        precondition(prefix >= 0 && prefix <= count, "JSONWriter.reset: prefix beyond the output")
        count = prefix
        needsComma = false
    }

    /// The output as a String.
    public var string: String { withBytes { String(decoding: $0, as: UTF8.self) } }

    @inline(__always)
    @usableFromInline
    internal mutating func separate() {
        if needsComma { append(0x2C) }
    }

    // MARK: Raw appends

    /// Room for `n` more bytes, uniquely owned; returns where they go.
    @inline(__always)
    @usableFromInline
    internal mutating func reserve(_ n: Int) -> UnsafeMutablePointer<UInt8> {
        if _slowPath(count &+ n > storage.capacity || !isKnownUniquelyReferenced(&storage)) { grow(n) }
        return storage.base + count
    }

    @inline(never)
    @usableFromInline
    internal mutating func grow(_ n: Int) {
        let capacity = Swift.max(count + n, isKnownUniquelyReferenced(&storage) ? 2 * storage.capacity : storage.capacity)
        let new = Storage.make(capacity: capacity)
        new.base.initialize(from: storage.base, count: count)
        storage = new
    }

    /// Appends one byte as is.
    @inline(__always)
    mutating func append(_ byte: UInt8) {
        reserve(1).pointee = byte
        count &+= 1
    }

    /// Appends `bytes` as is.
    @inline(__always)
    mutating func append(_ bytes: UnsafeRawBufferPointer) {
        let n = bytes.count
        guard n > 0 else { return }
        UnsafeMutableRawPointer(reserve(n)).copyMemory(from: bytes.baseAddress!, byteCount: n)
        count &+= n
    }

    /// Appends `bytes` as is.
    @inline(__always)
    mutating func append(_ bytes: UnsafeBufferPointer<UInt8>) {
        append(UnsafeRawBufferPointer(bytes))
    }

    // MARK: Streaming

    public mutating func beginObject() {
        separate()
        append(0x7B)
        needsComma = false
    }

    public mutating func endObject() {
        append(0x7D)
        needsComma = true
    }

    public mutating func beginArray() {
        separate()
        append(0x5B)
        needsComma = false
    }

    public mutating func endArray() {
        append(0x5D)
        needsComma = true
    }

    /// Writes an object key and the `:`; the member's value must follow.
    public mutating func key(_ k: String) {
        separate()
        appendQuoted(k)
        append(0x3A)
        needsComma = false
    }

    public mutating func string(_ s: String) {
        separate()
        appendQuoted(s)
        needsComma = true
    }

    public mutating func int(_ i: Int64) {
        separate()
        appendDecimal(i)
        needsComma = true
    }

    /// Writes a double so that it parses back to the same value (shortest round-trip form, e.g.
    /// `1.0`, `0.1`, `1e+16`, `5e-324`); NaN and ±infinity, which JSON cannot express, as `null`.
    public mutating func double(_ d: Double) {
        separate()
        if d.isFinite {
            var text = d.description
            text.withUTF8 { append($0) }
        } else {
            appendNull()
        }
        needsComma = true
    }

    public mutating func bool(_ b: Bool) {
        separate()
        if b {
            appendStatic("true")
        } else {
            appendStatic("false")
        }
        needsComma = true
    }

    public mutating func null() {
        separate()
        appendNull()
        needsComma = true
    }

    /// Writes one pre-serialized JSON value (e.g. a cached stack) as is. The bytes must be one
    /// complete, valid JSON value; they are not checked.
    public mutating func raw(_ bytes: [UInt8]) {
        separate()
        bytes.withUnsafeBytes { append($0) }
        needsComma = true
    }

    /// Writes one pre-serialized JSON value from a buffer; see `raw(_: [UInt8])`.
    public mutating func raw(_ bytes: UnsafeRawBufferPointer) {
        separate()
        append(bytes)
        needsComma = true
    }

    // MARK: Trees

    public mutating func write(_ value: JSONValue) {
        switch value {
        case .null: null()
        case .bool(let b): bool(b)
        case .int(let i): int(i)
        case .double(let d): double(d)
        case .string(let s): string(s)
        case .array(let array):
            beginArray()
            for element in array { write(element) }
            endArray()
        case .object(let object):
            beginObject()
            for member in object.members {
                key(member.key)
                write(member.value)
            }
            endObject()
        }
    }

    // MARK: Encoding

    @inline(__always)
    private mutating func appendStatic(_ s: StaticString) {
        append(UnsafeRawBufferPointer(start: s.utf8Start, count: s.utf8CodeUnitCount))
    }

    @inline(__always)
    private mutating func appendNull() {
        appendStatic("null")
    }

    /// The decimal digits of `i`, written in place: counted first, then written from the last.
    /// (Through a temporary buffer and a copy, this cost about twice as much.)
    mutating func appendDecimal(_ i: Int64) {
        if i < 0 { append(0x2D) }
        var magnitude = i.magnitude
        var digits = 1
        var rest = magnitude / 10
        while rest != 0 {
            digits &+= 1
            rest /= 10
        }
        let out = reserve(digits)
        var k = digits
        repeat {
            k &-= 1
            out[k] = UInt8(truncatingIfNeeded: magnitude % 10) &+ 0x30
            magnitude /= 10
        } while magnitude != 0
        count &+= digits
    }

    private mutating func appendQuoted(_ s: String) {
        append(0x22)
        // A native string is read in place; `var s = s; s.withUTF8` costs a retain and a release.
        if s.utf8.withContiguousStorageIfAvailable({ appendEscaped($0) }) == nil {
            var s = s
            s.withUTF8 { utf8 in appendEscaped(utf8) }
        }
        append(0x22)
    }

    private mutating func appendEscaped(_ utf8: UnsafeBufferPointer<UInt8>) {
        var runStart = 0
        var i = 0
        let n = utf8.count
        guard let base = utf8.baseAddress else { return }
        let raw = UnsafeRawPointer(base)
        while i < n {
            // Skip plain bytes, 8 at a time while possible.
            while i &+ 8 <= n {
                let word = UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: i, as: UInt64.self))
                let hits = stringSpecialBytes(word)
                if hits != 0 {
                    i &+= hits.trailingZeroBitCount &>> 3
                    break
                }
                i &+= 8
            }
            guard i < n else { break }
            let c = base[i]
            if c >= 0x20 && c != 0x22 && c != 0x5C {
                i += 1
                continue
            }
            if i > runStart { append(UnsafeBufferPointer(rebasing: utf8[runStart..<i])) }
            switch c {
            case 0x22: appendStatic(#"\""#)
            case 0x5C: appendStatic(#"\\"#)
            case 0x0A: appendStatic(#"\n"#)
            case 0x0D: appendStatic(#"\r"#)
            case 0x09: appendStatic(#"\t"#)
            case 0x08: appendStatic(#"\b"#)
            case 0x0C: appendStatic(#"\f"#)
            default:  // other control characters: \u00XX
                let hexDigits: StaticString = "0123456789abcdef"
                let h = hexDigits.utf8Start
                appendStatic(#"\u00"#)
                append(h[Int(c >> 4)])
                append(h[Int(c & 0xF)])
            }
            i += 1
            runStart = i
        }
        if n > runStart { append(UnsafeBufferPointer(rebasing: utf8[runStart..<n])) }
    }
}

extension JSONWriter {
    /// The writer's memory.
    @usableFromInline
    final class Storage: @unchecked Sendable {
        // Sendable: a writer changes its storage only while it is the sole owner (copy on write),
        // so storage reachable from another writer (another thread) is never written.
        @usableFromInline let base: UnsafeMutablePointer<UInt8>
        @usableFromInline let capacity: Int

        private init(capacity: Int) {
            self.capacity = capacity
            base = .allocate(capacity: capacity)
        }

        deinit { base.deallocate() }

        static func make(capacity: Int) -> Storage { Storage(capacity: Swift.max(capacity, 16)) }

        /// Never written (a writer copies it before its first append: never uniquely referenced).
        static let shared = make(capacity: 16)
    }
}

extension JSONValue {
    /// The compact JSON text of this value as UTF-8 bytes.
    public func serialized() -> [UInt8] {
        var writer = JSONWriter()
        writer.write(self)
        return writer.bytes
    }

    /// The compact JSON text of this value.
    public var jsonString: String { String(decoding: serialized(), as: UTF8.self) }
}
