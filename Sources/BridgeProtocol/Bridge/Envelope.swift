/// One frame after the envelope checks of section 2.
enum Frame {
    case request(id: Int64, method: String, params: JSONObject)
    case event(name: String, params: JSONObject)

    struct Failure: Error {
        var id: Int64?
        var error: ProtocolError
        /// The frame was an event (events before `hello` are ignored, malformed or not).
        var isEvent = false
    }

    static let maxID: Int64 = 1 << 53

    static func classify(_ bytes: UnsafeRawBufferPointer) -> Result<Frame, Failure> {
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
            case .success(let p): return .success(.request(id: id, method: method, params: p))
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
