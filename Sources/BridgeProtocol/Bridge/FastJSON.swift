/// Hot-path writing helpers for the frames the daemon sends most (replies, stacks, events):
/// fixed fragments are appended as precomputed bytes instead of key by key, and item ids are
/// written digit by digit instead of through `ItemID.description`. The output is byte for byte
/// what the general `JSONWriter` calls produce (PerfFastPathTests checks it).
extension JSONWriter {
    /// Appends `fragment` as is: JSON text known to be valid at this point of the document.
    /// The caller keeps `needsComma` right (see `afterRaw`).
    @inline(__always)
    mutating func appendRaw(_ fragment: StaticString) {
        append(UnsafeRawBufferPointer(start: fragment.utf8Start, count: fragment.utf8CodeUnitCount))
    }

    /// Appends pre-serialized JSON (e.g. a cached stack) right after a raw `"key":` fragment.
    @inline(__always)
    mutating func appendRaw(_ json: [UInt8]) {
        json.withUnsafeBytes { append($0) }
    }

    /// After raw fragments that ended with a complete value: the next member needs a comma.
    @inline(__always)
    mutating func afterRawValue() { needsComma = true }

    /// After raw fragments that ended with `{`, `[` or `:`: no comma before what follows.
    @inline(__always)
    mutating func afterRawOpen() { needsComma = false }

    /// A string value right after a raw `"key":` fragment.
    @inline(__always)
    mutating func appendStringValue(_ s: String) {
        needsComma = false
        string(s)
    }

    /// `"W12"`: an item id as a JSON string.
    mutating func appendQuotedID(_ id: ItemID) {
        switch id.kind {
        case .webview: appendRaw(#""W"#)
        case .placeholder: appendRaw(#""P"#)
        case .native: appendRaw(#""N"#)
        }
        appendDigits(id.number)
        append(0x22)
    }

    /// The decimal digits of `n` (negative numbers get a `-`).
    mutating func appendDigits(_ n: Int) {
        if n >= 0 && n < 10 {
            append(0x30 &+ UInt8(truncatingIfNeeded: n))
            return
        }
        appendDecimal(Int64(n))
    }
}
