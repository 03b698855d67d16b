// A compact JSON writer that appends UTF-8 bytes to a buffer. Pure Swift, no Foundation.

/// Writes compact JSON (no spaces) into `bytes`.
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
public struct JSONWriter: Sendable {
    /// The output so far.
    public var bytes: [UInt8]
    /// Whether the next value or key must be preceded by a comma.
    @usableFromInline internal var needsComma: Bool = false

    public init(capacity: Int = 256) {
        bytes = []
        bytes.reserveCapacity(capacity)
    }

    /// Empties the output for the next document, keeping its storage, and keeping the first
    /// `prefix` bytes: a transport that needs headroom before the payload (libwebsockets'
    /// `LWS_PRE`) can set `bytes` to that many zero bytes once and send `bytes[prefix...]` in place.
    public mutating func reset(keepingPrefix prefix: Int = 0) {
        precondition(prefix >= 0 && prefix <= bytes.count, "JSONWriter.reset: prefix beyond the output")
        bytes.removeSubrange(prefix...)
        needsComma = false
    }

    /// The output as a String.
    public var string: String { String(decoding: bytes, as: UTF8.self) }

    @inline(__always)
    @usableFromInline
    internal mutating func separate() {
        if needsComma { bytes.append(0x2C) }
    }

    // MARK: Streaming

    public mutating func beginObject() {
        separate()
        bytes.append(0x7B)
        needsComma = false
    }

    public mutating func endObject() {
        bytes.append(0x7D)
        needsComma = true
    }

    public mutating func beginArray() {
        separate()
        bytes.append(0x5B)
        needsComma = false
    }

    public mutating func endArray() {
        bytes.append(0x5D)
        needsComma = true
    }

    /// Writes an object key and the `:`; the member's value must follow.
    public mutating func key(_ k: String) {
        separate()
        appendQuoted(k)
        bytes.append(0x3A)
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
            bytes.append(contentsOf: d.description.utf8)
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
        self.bytes.append(contentsOf: bytes)
        needsComma = true
    }

    /// Writes one pre-serialized JSON value from a buffer; see `raw(_: [UInt8])`.
    public mutating func raw(_ bytes: UnsafeRawBufferPointer) {
        separate()
        self.bytes.append(contentsOf: bytes)
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
        bytes.append(contentsOf: UnsafeBufferPointer(start: s.utf8Start, count: s.utf8CodeUnitCount))
    }

    @inline(__always)
    private mutating func appendNull() {
        appendStatic("null")
    }

    mutating func appendDecimal(_ i: Int64) {
        var magnitude = i.magnitude
        // 20 digits for UInt64.max, plus a sign.
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { digits in
            var n = 20
            repeat {
                n -= 1
                digits[n] = UInt8(truncatingIfNeeded: magnitude % 10) &+ 0x30
                magnitude /= 10
            } while magnitude != 0
            if i < 0 { bytes.append(0x2D) }
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: digits[n...]))
        }
    }

    private mutating func appendQuoted(_ s: String) {
        bytes.append(0x22)
        var s = s
        s.withUTF8 { utf8 in appendEscaped(utf8) }
        bytes.append(0x22)
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
            if i > runStart { bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart..<i])) }
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
                bytes.append(h[Int(c >> 4)])
                bytes.append(h[Int(c & 0xF)])
            }
            i += 1
            runStart = i
        }
        if n > runStart { bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart..<n])) }
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
