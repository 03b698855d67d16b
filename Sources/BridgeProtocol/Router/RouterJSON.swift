// A minimal JSON value for the router's inputs (actions, navigation contexts) and outputs
// (`toJSON()` of every result type). The router does not depend on a JSON codec: the daemon
// converts between this and its own JSON type, case by case.

/// A JSON value as the router reads and writes it.
///
/// Objects are dictionaries: the router never depends on member order, and `jsonText` writes
/// members with sorted keys so output is deterministic.
public enum RouterJSON: Sendable, Equatable {
    case null
    case bool(Bool)
    case int(Int64)
    case double(Double)
    case string(String)
    case array([RouterJSON])
    case object([String: RouterJSON])

    public subscript(key: String) -> RouterJSON? {
        if case .object(let members) = self { return members[key] }
        return nil
    }

    public var stringValue: String? {
        if case .string(let s) = self { return s }
        return nil
    }

    public var objectValue: [String: RouterJSON]? {
        if case .object(let o) = self { return o }
        return nil
    }

    public var arrayValue: [RouterJSON]? {
        if case .array(let a) = self { return a }
        return nil
    }

    public var isNull: Bool {
        if case .null = self { return true }
        return false
    }

    /// Compact JSON text, object members sorted by key.
    public var jsonText: String {
        var out = ""
        write(to: &out)
        return out
    }

    private func write(to out: inout String) {
        switch self {
        case .null: out += "null"
        case .bool(let b): out += b ? "true" : "false"
        case .int(let i): out += String(i)
        case .double(let d):
            if d.isFinite {
                if d == d.rounded(), abs(d) < 1e15 { out += String(Int64(d)) } else { out += String(d) }
            } else {
                out += "null"
            }
        case .string(let s): RouterJSON.writeString(s, to: &out)
        case .array(let a):
            out += "["
            for (i, v) in a.enumerated() {
                if i > 0 { out += "," }
                v.write(to: &out)
            }
            out += "]"
        case .object(let o):
            out += "{"
            for (i, key) in o.keys.sorted().enumerated() {
                if i > 0 { out += "," }
                RouterJSON.writeString(key, to: &out)
                out += ":"
                o[key]!.write(to: &out)
            }
            out += "}"
        }
    }

    private static func writeString(_ s: String, to out: inout String) {
        out += "\""
        for scalar in s.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            default:
                if scalar.value < 0x20 {
                    let hex = String(scalar.value, radix: 16)
                    out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        out += "\""
    }
}

extension RouterJSON: ExpressibleByNilLiteral, ExpressibleByBooleanLiteral, ExpressibleByIntegerLiteral,
    ExpressibleByFloatLiteral, ExpressibleByStringLiteral, ExpressibleByArrayLiteral,
    ExpressibleByDictionaryLiteral
{
    public init(nilLiteral: ()) { self = .null }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(integerLiteral value: Int64) { self = .int(value) }
    public init(floatLiteral value: Double) { self = .double(value) }
    public init(stringLiteral value: String) { self = .string(value) }
    public init(arrayLiteral elements: RouterJSON...) { self = .array(elements) }
    public init(dictionaryLiteral elements: (String, RouterJSON)...) {
        var o: [String: RouterJSON] = [:]
        for (k, v) in elements { o[k] = v }
        self = .object(o)
    }
}

extension RouterJSON: CustomStringConvertible {
    public var description: String { jsonText }
}

/// A string map as a JSON object.
func jsonObject(_ map: [String: String]) -> RouterJSON {
    .object(map.mapValues { .string($0) })
}
