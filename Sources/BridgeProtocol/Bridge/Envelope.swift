/// One frame after the envelope checks of section 2.
enum Frame {
    /// `method` is `name` matched (nil: no such method).
    case request(id: Int64, method: BridgeMethod?, name: String, params: JSONObject)
    case event(name: String, params: JSONObject)

    struct Failure: Error {
        var id: Int64?
        var error: ProtocolError
        /// The frame was an event (events before `hello` are ignored, malformed or not).
        var isEvent = false
    }

    static let maxID: Int64 = 1 << 53

    static func classify(_ bytes: UnsafeRawBufferPointer) -> Result<Frame, Failure> {
        if let request = FastRequest.parse(bytes) { return .success(request) }
        return classifyGeneral(bytes)
    }

    /// Every frame through the JSON parser and the checks above.
    static func classifyGeneral(_ bytes: UnsafeRawBufferPointer) -> Result<Frame, Failure> {
        let value: JSONValue
        do {
            value = try JSONParser.parse(bytes)
        } catch {
            return .failure(Failure(id: nil, error: ProtocolError(.parseError, "not valid JSON: \(error.description)")))
        }
        guard case .object(let object) = value else {
            return .failure(Failure(id: nil, error: ProtocolError(.invalidRequest, "a frame must be one JSON object")))
        }
        let idValue = object["id"]
        var id: Int64?
        if case .int(let n)? = idValue { id = n }

        if let methodValue = object["method"] {
            guard let id else {
                let why = idValue == nil ? "a request needs an integer \"id\"" : "\"id\" must be an integer"
                return .failure(Failure(id: nil, error: ProtocolError(.invalidRequest, why)))
            }
            guard id >= -maxID, id <= maxID else {
                return .failure(Failure(id: id, error: ProtocolError(.invalidRequest, "\"id\" must be within ±2^53")))
            }
            guard case .string(let method) = methodValue else {
                return .failure(Failure(id: id, error: ProtocolError(.invalidRequest, "\"method\" must be a string")))
            }
            switch params(object) {
            case .success(let p): return .success(.request(id: id, method: BridgeMethod(name: method), name: method, params: p))
            case .failure(let e): return .failure(Failure(id: id, error: e))
            }
        }
        if let eventValue = object["event"], idValue == nil {
            guard case .string(let name) = eventValue, !name.isEmpty else {
                return .failure(Failure(id: nil, error: ProtocolError(.invalidRequest, "\"event\" must be a non-empty string"), isEvent: true))
            }
            switch params(object) {
            case .success(let p): return .success(.event(name: name, params: p))
            case .failure(let e): return .failure(Failure(id: nil, error: e, isEvent: true))
            }
        }
        return .failure(Failure(id: id, error: ProtocolError(.invalidRequest, "a frame needs \"method\" (a request) or \"event\" without \"id\" (an event)")))
    }

    private static func params(_ object: JSONObject) -> Result<JSONObject, ProtocolError> {
        switch object["params"] {
        case nil, .null?: .success(JSONObject())
        case .object(let p)?: .success(p)
        default: .failure(ProtocolError(.invalidParams, "\"params\" must be an object"))
        }
    }
}

/// Typed access to request parameters, each failure an `invalid-params` that names the field.
struct Params {
    let object: JSONObject

    init(_ object: JSONObject) { self.object = object }

    /// A required string.
    func string(_ key: String) throws(ProtocolError) -> String {
        guard let v = object[key] else { throw ProtocolError(.invalidParams, "\"\(key)\" is required") }
        guard case .string(let s) = v else { throw ProtocolError(.invalidParams, "\"\(key)\" must be a string") }
        return s
    }

    /// An optional string: absent or null is nil.
    func optionalString(_ key: String) throws(ProtocolError) -> String? {
        switch object[key] {
        case nil, .null?: return nil
        case .string(let s)?: return s
        default: throw ProtocolError(.invalidParams, "\"\(key)\" must be a string")
        }
    }

    func optionalStringArray(_ key: String) throws(ProtocolError) -> [String]? {
        switch object[key] {
        case nil, .null?: return nil
        case .array(let items)?:
            var out: [String] = []
            for item in items {
                guard case .string(let s) = item else { throw ProtocolError(.invalidParams, "\"\(key)\" must be an array of strings") }
                out.append(s)
            }
            return out
        default: throw ProtocolError(.invalidParams, "\"\(key)\" must be an array of strings")
        }
    }

    func optionalInt(_ key: String) throws(ProtocolError) -> Int64? {
        switch object[key] {
        case nil, .null?: return nil
        case .int(let n)?: return n
        default: throw ProtocolError(.invalidParams, "\"\(key)\" must be an integer")
        }
    }

    func session() throws(ProtocolError) -> String { try string("session") }
}

/// The shape nearly every frame has, `{"id":7,"method":"ping","params":{…}}`, read in one pass
/// without building a JSON tree: the three keys in any order (`params` optional), a
/// non-negative integer id within ±2^53, a method of printable ASCII without escapes, params
/// `null` or an object. Flat params whose values are such plain strings are read directly; any
/// other params object goes through `JSONParser` on its own bytes (one level less deep allowed,
/// as inside the envelope). Anything else, including every malformed frame, returns nil and
/// takes the general path, so errors and their messages are unchanged.
/// (PerfFastPathTests checks it against the general path on valid, odd and mutated frames.)
enum FastRequest {
    struct Cursor {
        let p: UnsafePointer<UInt8>
        let n: Int
        var i = 0

        @inline(__always) mutating func skipSpace() {
            while i < n {
                let c = p[i]
                guard c == 0x20 || c == 0x0A || c == 0x0D || c == 0x09 else { return }
                i += 1
            }
        }

        @inline(__always) mutating func take(_ c: UInt8) -> Bool {
            skipSpace()
            guard i < n, p[i] == c else { return false }
            i += 1
            return true
        }

        /// A string of printable ASCII without escapes, quotes included; returns its bytes' range.
        mutating func plainString() -> Range<Int>? {
            skipSpace()
            guard i < n, p[i] == 0x22 else { return nil }
            let start = i + 1
            var j = start
            while j < n {
                // Skip plain bytes 8 at a time while possible (`plainStringStops`).
                while j &+ 8 <= n {
                    let word = UInt64(littleEndian: UnsafeRawPointer(p).loadUnaligned(fromByteOffset: j, as: UInt64.self))
                    let stops = FastRequest.plainStringStops(word)
                    if stops != 0 {
                        j &+= stops.trailingZeroBitCount &>> 3
                        break
                    }
                    j &+= 8
                }
                guard j < n else { break }
                let c = p[j]
                if c == 0x22 {
                    i = j + 1
                    return start..<j
                }
                guard c >= 0x20, c < 0x7F, c != 0x5C else { return nil }
                j += 1
            }
            return nil
        }

        func equals(_ r: Range<Int>, _ s: StaticString) -> Bool {
            guard r.count == s.utf8CodeUnitCount else { return false }
            let b = s.utf8Start
            for k in 0..<r.count where p[r.lowerBound + k] != b[k] { return false }
            return true
        }

        func string(_ r: Range<Int>) -> String {
            String(decoding: UnsafeBufferPointer(start: p + r.lowerBound, count: r.count), as: UTF8.self)
        }

        /// A non-negative integer literal (no leading zeros, not followed by a fraction or exponent).
        mutating func id() -> Int64? {
            skipSpace()
            let start = i
            var v: Int64 = 0
            while i < n, p[i] >= 0x30, p[i] <= 0x39 {
                guard i - start < 16 else { return nil }
                v = v &* 10 &+ Int64(p[i] &- 0x30)
                i += 1
            }
            let digits = i - start
            guard digits > 0, !(digits > 1 && p[start] == 0x30) else { return nil }
            if i < n, p[i] == 0x2E || p[i] == 0x65 || p[i] == 0x45 { return nil }
            return v
        }

        /// The end of the object starting at `i` (just past its `}`), skipping strings; nil when
        /// the input ends first.
        func objectEnd() -> Int? {
            var depth = 0
            var j = i
            var inString = false
            while j < n {
                let c = p[j]
                if inString {
                    if c == 0x5C { j += 1 } else if c == 0x22 { inString = false }
                } else if c == 0x22 {
                    inString = true
                } else if c == 0x7B || c == 0x5B {
                    depth += 1
                } else if c == 0x7D || c == 0x5D {
                    depth -= 1
                    if depth == 0 { return j + 1 }
                }
                j += 1
            }
            return nil
        }
    }

    /// A word with the high bit set in each byte of `word` that ends a plain string or makes it
    /// not plain: `"`, `\`, below 0x20, 0x7F and above. Exact for the lowest such byte, which is
    /// all `plainString` uses (borrows and carries can flag bytes above it, never below).
    @inline(__always)
    static func plainStringStops(_ word: UInt64) -> UInt64 {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highs: UInt64 = ones &* 0x80
        // 0x80 and above have the high bit; 0x7F gets it by adding one.
        return stringSpecialBytes(word) | ((word | (word &+ ones)) & highs)
    }

    static func parse(_ bytes: UnsafeRawBufferPointer) -> Frame? {
        guard let base = bytes.baseAddress else { return nil }
        var c = Cursor(p: base.assumingMemoryBound(to: UInt8.self), n: bytes.count)
        guard c.take(0x7B) else { return nil }
        var id: Int64?
        var method: BridgeMethod?
        var name: String?
        var params: JSONObject?
        repeat {
            guard let key = c.plainString(), c.take(0x3A) else { return nil }
            if c.equals(key, "id") {
                guard id == nil, let v = c.id() else { return nil }
                id = v
            } else if c.equals(key, "method") {
                guard name == nil, let r = c.plainString() else { return nil }
                // Matched from the bytes; a `String` made only of a name that is no method.
                method = BridgeMethod(utf8: UnsafeRawBufferPointer(start: c.p + r.lowerBound, count: r.count))
                name = method?.name ?? c.string(r)
            } else if c.equals(key, "params") {
                guard params == nil, let v = paramsValue(&c) else { return nil }
                params = v
            } else {
                return nil
            }
        } while c.take(0x2C)
        guard c.take(0x7D) else { return nil }
        c.skipSpace()
        guard c.i == c.n, let id, id <= Frame.maxID, let name else { return nil }
        return .request(id: id, method: method, name: name, params: params ?? JSONObject())
    }

    /// `null` or an object; nil for anything else.
    static func paramsValue(_ c: inout Cursor) -> JSONObject? {
        c.skipSpace()
        guard c.i < c.n else { return nil }
        if c.p[c.i] == 0x6E {  // null
            guard c.i + 4 <= c.n, c.p[c.i + 1] == 0x75, c.p[c.i + 2] == 0x6C, c.p[c.i + 3] == 0x6C else { return nil }
            c.i += 4
            return JSONObject()
        }
        guard c.p[c.i] == 0x7B else { return nil }
        let open = c.i
        // Flat objects of plain strings, read directly.
        var flat = c
        flat.i += 1
        if flat.take(0x7D) {
            c = flat
            return JSONObject()
        }
        var object = JSONObject()
        while true {
            guard let k = flat.plainString(), flat.take(0x3A), let v = flat.plainString() else { break }
            // A repeated key goes to the parser (first position, last value). (Looked up in the
            // object itself: plain ASCII keys are equal exactly when their bytes are.)
            let key = flat.string(k)
            if object[key] != nil { break }
            object.appendNew(key: key, value: .string(flat.string(v)))
            if flat.take(0x2C) { continue }
            if flat.take(0x7D) {
                c = flat
                return object
            }
            break
        }
        // Anything else: the parser, on the object's own bytes.
        c.i = open
        guard let end = c.objectEnd() else { return nil }
        let slice = UnsafeRawBufferPointer(start: c.p + open, count: end - open)
        guard case .object(let parsed)? = try? JSONParser.parse(slice, maxDepth: 63) else { return nil }
        c.i = end
        return parsed
    }
}
