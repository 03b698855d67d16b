// A strict RFC 8259 JSON reader over bytes. Pure Swift, no Foundation.
//
// Scans the input bytes once, building each String from a byte slice in one go (strings with
// escapes are decoded into a reused scratch buffer first). Integers are accumulated directly;
// decimal numbers with at most 19 significant digits and a small exponent are converted exactly
// without going through text (Clinger's fast path), the rest by the standard library's
// correctly rounded `Double(String)` after this parser has checked the JSON number grammar.

/// Why a document was rejected: the byte `offset` where the problem was found and a `message`
/// that names what was expected. `description` is `"<message> at offset <offset>"`.
public struct JSONParseError: Error, Equatable, Sendable, CustomStringConvertible {
    /// Byte offset into the input (0-based) where the problem was found.
    public var offset: Int
    /// What was wrong, e.g. `expected ',' or '}', found ']'`.
    public var message: String

    public init(offset: Int, message: String) {
        self.offset = offset
        self.message = message
    }

    public var description: String { "\(message) at offset \(offset)" }
}

/// Strict JSON parsing (RFC 8259).
///
/// Rejects: trailing commas, comments, single quotes, leading zeros, `+` signs, `NaN` and
/// `Infinity`, numbers too large for a `Double`, invalid escapes, lone surrogates in `\u`
/// escapes, unescaped control characters (U+0000–U+001F) in strings, a byte order mark,
/// anything but whitespace (space, tab, LF, CR) after the value, and arrays/objects nested
/// deeper than `maxDepth` (a scalar is depth 0, `[]` depth 1, `[[]]` depth 2).
///
/// Accepts any value at the top level (not only objects). Duplicate object keys: the last value
/// wins, at the position of the first. Invalid UTF-8 inside strings is repaired (U+FFFD), never
/// a crash.
///
/// The parser recurses once per nesting level, so `maxDepth` also bounds its stack use
/// (measured: about 170 bytes per level in release builds, a few KiB per level in debug builds);
/// it must lie in `0...maxSupportedDepth`.
public enum JSONParser {
    /// The default nesting limit.
    public static let defaultMaxDepth = 64
    /// The largest `maxDepth` accepted (≈ 175 KiB of stack in release builds at this depth).
    public static let maxSupportedDepth = 1024

    public static func parse(
        _ bytes: UnsafeRawBufferPointer, maxDepth: Int = defaultMaxDepth
    ) throws(JSONParseError) -> JSONValue {
        precondition(
            maxDepth >= 0 && maxDepth <= maxSupportedDepth,
            "JSONParser: maxDepth must be in 0...\(maxSupportedDepth)")
        guard let base = bytes.baseAddress, bytes.count > 0 else {
            throw JSONParseError(offset: 0, message: "unexpected end of input, expected a JSON value")
        }
        var reader = JSONReader(base: base, end: bytes.count, maxDepth: maxDepth)
        return try reader.parseDocument()
    }

    public static func parse(_ bytes: [UInt8], maxDepth: Int = defaultMaxDepth) throws(JSONParseError) -> JSONValue {
        let result = bytes.withUnsafeBytes { buffer in
            Result { () throws(JSONParseError) -> JSONValue in try parse(buffer, maxDepth: maxDepth) }
        }
        return try result.get()
    }

    public static func parse(_ text: String, maxDepth: Int = defaultMaxDepth) throws(JSONParseError) -> JSONValue {
        let result = text.utf8.withContiguousStorageIfAvailable { utf8 in
            Result { () throws(JSONParseError) -> JSONValue in
                try parse(UnsafeRawBufferPointer(utf8), maxDepth: maxDepth)
            }
        }
        if let result { return try result.get() }
        return try parse(Array(text.utf8), maxDepth: maxDepth)
    }
}

// ASCII codes used below.
private let quote: UInt8 = 0x22  // "
private let backslash: UInt8 = 0x5C  // \
private let comma: UInt8 = 0x2C
private let colon: UInt8 = 0x3A
private let openBrace: UInt8 = 0x7B
private let closeBrace: UInt8 = 0x7D
private let openBracket: UInt8 = 0x5B
private let closeBracket: UInt8 = 0x5D
private let minus: UInt8 = 0x2D
private let plus: UInt8 = 0x2B
private let dot: UInt8 = 0x2E
private let zero: UInt8 = 0x30
private let nine: UInt8 = 0x39

/// A word with the high bit set in each byte of `word` that is `"`, `\` or below 0x20 — exact for
/// the lowest such byte, which is all the callers use (the borrow of a match can flag bytes above
/// it spuriously, never below).
@inline(__always)
func stringSpecialBytes(_ word: UInt64) -> UInt64 {
    let ones: UInt64 = 0x0101_0101_0101_0101
    let quotes = word ^ (ones &* 0x22)
    let backslashes = word ^ (ones &* 0x5C)
    let control = (word &- ones &* 0x20) & ~word
    let quoteHits = (quotes &- ones) & ~quotes
    let backslashHits = (backslashes &- ones) & ~backslashes
    return (control | quoteHits | backslashHits) & (ones &* 0x80)
}

/// Human-readable name of a byte for error messages: `'x'` for printable ASCII, else `byte 0xNN`.
private func describeByte(_ c: UInt8) -> String {
    if c >= 0x20 && c < 0x7F { return "'\(Character(Unicode.Scalar(c)))'" }
    return "byte 0x" + hex(UInt32(c), width: 2)
}

private func hex(_ v: UInt32, width: Int) -> String {
    let digits = String(v, radix: 16, uppercase: true)
    return String(repeating: "0", count: max(0, width - digits.count)) + digits
}

/// The parser proper, over the bytes of one document (its numbers: JSONReader+Numbers.swift).
struct JSONReader {
    let base: UnsafeRawPointer
    let end: Int
    let maxDepth: Int
    var pos: Int = 0
    /// Reused buffer for decoding strings that contain escapes.
    var scratch: [UInt8] = []

    init(base: UnsafeRawPointer, end: Int, maxDepth: Int) {
        self.base = base
        self.end = end
        self.maxDepth = maxDepth
    }

    @inline(__always)
    func byte(_ i: Int) -> UInt8 { base.load(fromByteOffset: i, as: UInt8.self) }

    @inline(__always)
    mutating func skipWhitespace() {
        while pos < end {
            let c = byte(pos)
            guard c == 0x20 || c == 0x0A || c == 0x0D || c == 0x09 else { return }
            pos += 1
        }
    }

    func error(_ offset: Int, _ message: String) -> JSONParseError {
        JSONParseError(offset: offset, message: message)
    }

    /// The error for input ending where `expected` was due.
    func endOfInput(_ expected: String) -> JSONParseError {
        error(end, "unexpected end of input, expected \(expected)")
    }

    /// The error for byte `c` at `pos` where `expected` was due.
    func unexpected(_ expected: String) -> JSONParseError {
        error(pos, "expected \(expected), found \(describeByte(byte(pos)))")
    }

    mutating func parseDocument() throws(JSONParseError) -> JSONValue {
        if end >= 3 && byte(0) == 0xEF && byte(1) == 0xBB && byte(2) == 0xBF {
            throw error(0, "a byte order mark is not allowed")
        }
        skipWhitespace()
        guard pos < end else { throw endOfInput("a JSON value") }
        let value = try parseValue(depth: 0)
        skipWhitespace()
        if pos < end {
            throw error(pos, "expected end of input after the JSON value, found \(describeByte(byte(pos)))")
        }
        return value
    }

    /// Parses the value starting at `pos` (which must be `< end`, whitespace skipped) inside
    /// `depth` enclosing containers.
    mutating func parseValue(depth: Int) throws(JSONParseError) -> JSONValue {
        let c = byte(pos)
        switch c {
        case quote:
            return .string(try parseString())
        case openBrace:
            return .object(try parseObject(depth: depth + 1))
        case openBracket:
            return .array(try parseArray(depth: depth + 1))
        case 0x74:  // t
            try parseLiteral("true")
            return .bool(true)
        case 0x66:  // f
            try parseLiteral("false")
            return .bool(false)
        case 0x6E:  // n
            try parseLiteral("null")
            return .null
        case minus, zero...nine:
            return try parseNumber()
        default:
            throw badValueStart(c)
        }
    }

    func badValueStart(_ c: UInt8) -> JSONParseError {
        switch c {
        case 0x2F:  // /
            return error(pos, "comments are not allowed")
        case 0x27:  // '
            return error(pos, "strings must be in double quotes")
        case 0x4E, 0x49:  // N, I
            return error(pos, "NaN and Infinity are not allowed")
        case plus:
            return error(pos, "a number must not start with '+'")
        case dot:
            return error(pos, "a number must start with a digit, found '.'")
        default:
            return unexpected("a JSON value")
        }
    }

    mutating func parseLiteral(_ word: StaticString) throws(JSONParseError) {
        let n = word.utf8CodeUnitCount
        let w = word.utf8Start
        var i = 0
        while i < n {
            guard pos + i < end, byte(pos + i) == w[i] else {
                throw error(pos, "invalid literal, expected '\(word)'")
            }
            i += 1
        }
        pos += n
    }

    mutating func parseArray(depth: Int) throws(JSONParseError) -> [JSONValue] {
        if depth > maxDepth {
            throw error(pos, "arrays and objects nested deeper than \(maxDepth) levels")
        }
        pos += 1  // [
        skipWhitespace()
        guard pos < end else { throw endOfInput("a JSON value or ']'") }
        if byte(pos) == closeBracket {
            pos += 1
            return []
        }
        var array: [JSONValue] = []
        while true {
            array.append(try parseValue(depth: depth))
            skipWhitespace()
            guard pos < end else { throw endOfInput("',' or ']'") }
            let c = byte(pos)
            if c == closeBracket {
                pos += 1
                return array
            }
            guard c == comma else { throw unexpected("',' or ']'") }
            pos += 1
            skipWhitespace()
            guard pos < end else { throw endOfInput("a JSON value") }
            if byte(pos) == closeBracket { throw error(pos, "a trailing comma is not allowed before ']'") }
        }
    }

    mutating func parseObject(depth: Int) throws(JSONParseError) -> JSONObject {
        if depth > maxDepth {
            throw error(pos, "arrays and objects nested deeper than \(maxDepth) levels")
        }
        pos += 1  // {
        skipWhitespace()
        guard pos < end else { throw endOfInput("a string key or '}'") }
        var c = byte(pos)
        if c == closeBrace {
            pos += 1
            return JSONObject()
        }
        var object = JSONObject(minimumCapacity: 4)
        while true {
            guard c == quote else {
                if c == closeBrace { throw error(pos, "a trailing comma is not allowed before '}'") }
                throw unexpected("a string key")
            }
            let key = try parseString()
            skipWhitespace()
            guard pos < end else { throw endOfInput("':'") }
            guard byte(pos) == colon else { throw unexpected("':' after the key") }
            pos += 1
            skipWhitespace()
            guard pos < end else { throw endOfInput("a JSON value") }
            let value = try parseValue(depth: depth)
            if let i = object.position(of: key) {
                object.members[i].value = value
            } else {
                object.appendNew(key: key, value: value)
            }
            skipWhitespace()
            guard pos < end else { throw endOfInput("',' or '}'") }
            c = byte(pos)
            if c == closeBrace {
                pos += 1
                return object
            }
            guard c == comma else { throw unexpected("',' or '}'") }
            pos += 1
            skipWhitespace()
            guard pos < end else { throw endOfInput("a string key") }
            c = byte(pos)
        }
    }

    // MARK: Strings

    /// The offset of the first byte at or after `i` that ends a plain run inside a string (`"`,
    /// `\` or a control character), or `end` when there is none. Checks 8 bytes per step.
    @inline(__always)
    func scanPlain(from start: Int) -> Int {
        var i = start
        while i &+ 8 <= end {
            let word = UInt64(littleEndian: base.loadUnaligned(fromByteOffset: i, as: UInt64.self))
            let hits = stringSpecialBytes(word)
            if hits != 0 { return i &+ (hits.trailingZeroBitCount &>> 3) }
            i &+= 8
        }
        while i < end {
            let c = byte(i)
            if c == quote || c == backslash || c < 0x20 { return i }
            i &+= 1
        }
        return end
    }

    /// Parses the string whose opening quote is at `pos`.
    mutating func parseString() throws(JSONParseError) -> String {
        let open = pos
        let start = pos &+ 1
        let i = scanPlain(from: start)
        guard i < end else {
            throw error(end, "unexpected end of input in the string that starts at offset \(open)")
        }
        pos = i
        let c = byte(i)
        if c == quote {
            pos = i &+ 1
            return String(decoding: UnsafeRawBufferPointer(start: base + start, count: i &- start), as: UTF8.self)
        }
        if c == backslash { return try parseEscapedString(start: start, open: open) }
        throw controlCharacter(c)
    }

    func controlCharacter(_ c: UInt8) -> JSONParseError {
        error(pos, "unescaped control character U+\(hex(UInt32(c), width: 4)) in a string")
    }

    /// Continues a string at the first backslash (`pos`), decoding into `scratch`.
    mutating func parseEscapedString(start: Int, open: Int) throws(JSONParseError) -> String {
        scratch.removeAll(keepingCapacity: true)
        var runStart = start
        while true {
            let i = scanPlain(from: pos)
            guard i < end else {
                throw error(end, "unexpected end of input in the string that starts at offset \(open)")
            }
            pos = i
            let c = byte(i)
            if c == quote {
                appendRun(from: runStart)
                pos = i &+ 1
                return String(decoding: scratch, as: UTF8.self)
            }
            if c != backslash { throw controlCharacter(c) }
            appendRun(from: runStart)
            try decodeEscape()
            runStart = pos
        }
    }

    @inline(__always)
    mutating func appendRun(from runStart: Int) {
        if pos > runStart {
            scratch.append(
                contentsOf: UnsafeRawBufferPointer(start: base + runStart, count: pos - runStart))
        }
    }

    /// Decodes the escape sequence at `pos` (a backslash) into `scratch` and moves past it.
    mutating func decodeEscape() throws(JSONParseError) {
        let escapeStart = pos
        guard pos + 1 < end else {
            throw error(end, "unexpected end of input in an escape sequence")
        }
        let e = byte(pos + 1)
        let decoded: UInt8
        switch e {
        case quote, backslash, 0x2F: decoded = e  // " \ /
        case 0x62: decoded = 0x08  // b
        case 0x66: decoded = 0x0C  // f
        case 0x6E: decoded = 0x0A  // n
        case 0x72: decoded = 0x0D  // r
        case 0x74: decoded = 0x09  // t
        case 0x75:  // u
            var scalar = try hex4(at: pos + 2, escapeStart: escapeStart)
            pos += 6
            if scalar >= 0xD800 && scalar <= 0xDBFF {
                let high = scalar
                guard pos + 1 < end, byte(pos) == backslash, byte(pos + 1) == 0x75 else {
                    throw error(
                        escapeStart,
                        "lone high surrogate \\u\(hex(high, width: 4)), expected a \\uDC00-\\uDFFF escape to follow"
                    )
                }
                let low = try hex4(at: pos + 2, escapeStart: pos)
                guard low >= 0xDC00 && low <= 0xDFFF else {
                    throw error(
                        escapeStart,
                        "lone high surrogate \\u\(hex(high, width: 4)), expected a \\uDC00-\\uDFFF escape to follow"
                    )
                }
                pos += 6
                scalar = 0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00)
            } else if scalar >= 0xDC00 && scalar <= 0xDFFF {
                throw error(escapeStart, "lone low surrogate \\u\(hex(scalar, width: 4))")
            }
            appendUTF8(scalar)
            return
        default:
            throw error(escapeStart, "invalid escape sequence '\\\(describeEscapeByte(e))'")
        }
        scratch.append(decoded)
        pos += 2
    }

    private func describeEscapeByte(_ c: UInt8) -> String {
        if c >= 0x20 && c < 0x7F { return String(Character(Unicode.Scalar(c))) }
        return "<byte 0x" + hex(UInt32(c), width: 2) + ">"
    }

    /// The 4 hex digits at `i`.
    func hex4(at i: Int, escapeStart: Int) throws(JSONParseError) -> UInt32 {
        guard i + 4 <= end else {
            throw error(escapeStart, "expected 4 hex digits after '\\u'")
        }
        var v: UInt32 = 0
        for k in 0..<4 {
            let c = byte(i + k)
            let d: UInt8
            switch c {
            case zero...nine: d = c - zero
            case 0x41...0x46: d = c - 0x41 + 10  // A-F
            case 0x61...0x66: d = c - 0x61 + 10  // a-f
            default: throw error(escapeStart, "expected 4 hex digits after '\\u'")
            }
            v = v << 4 | UInt32(d)
        }
        return v
    }

    mutating func appendUTF8(_ scalar: UInt32) {
        switch scalar {
        case 0..<0x80:
            scratch.append(UInt8(scalar))
        case 0x80..<0x800:
            scratch.append(UInt8(0xC0 | (scalar >> 6)))
            scratch.append(UInt8(0x80 | (scalar & 0x3F)))
        case 0x800..<0x10000:
            scratch.append(UInt8(0xE0 | (scalar >> 12)))
            scratch.append(UInt8(0x80 | ((scalar >> 6) & 0x3F)))
            scratch.append(UInt8(0x80 | (scalar & 0x3F)))
        default:
            scratch.append(UInt8(0xF0 | (scalar >> 18)))
            scratch.append(UInt8(0x80 | ((scalar >> 12) & 0x3F)))
            scratch.append(UInt8(0x80 | ((scalar >> 6) & 0x3F)))
            scratch.append(UInt8(0x80 | (scalar & 0x3F)))
        }
    }
}
