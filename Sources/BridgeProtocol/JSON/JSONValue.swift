// The JSON value model of the bridge protocol: a small tree of enums and insertion-ordered objects.
// Pure Swift, no Foundation.

/// One JSON value.
///
/// Numbers come in two cases: an integer literal (no fraction, no exponent) that fits `Int64`
/// parses as `.int`, every other number as `.double`. The two cases never compare equal to each
/// other (`.int(1) != .double(1)`); use `doubleValue` to read either as a `Double`.
public enum JSONValue: Equatable, Sendable {
    case null
    case bool(Bool)
    case int(Int64)
    case double(Double)
    case string(String)
    case array([JSONValue])
    case object(JSONObject)

    /// The member `key` when this is an object that has it, else `nil`.
    @inlinable
    public subscript(key: String) -> JSONValue? {
        if case .object(let object) = self { return object[key] }
        return nil
    }

    /// The element at `index` when this is an array and `index` is in range, else `nil`.
    @inlinable
    public subscript(index: Int) -> JSONValue? {
        if case .array(let array) = self, array.indices.contains(index) { return array[index] }
        return nil
    }

    @inlinable
    public var stringValue: String? {
        if case .string(let s) = self { return s }
        return nil
    }

    /// The integer of an `.int`; `nil` for everything else (including integral `.double`s).
    @inlinable
    public var intValue: Int64? {
        if case .int(let i) = self { return i }
        return nil
    }

    /// The number of an `.int` or a `.double` as a `Double`; `nil` for everything else.
    @inlinable
    public var doubleValue: Double? {
        switch self {
        case .double(let d): return d
        case .int(let i): return Double(i)
        default: return nil
        }
    }

    @inlinable
    public var boolValue: Bool? {
        if case .bool(let b) = self { return b }
        return nil
    }

    @inlinable
    public var objectValue: JSONObject? {
        if case .object(let o) = self { return o }
        return nil
    }

    @inlinable
    public var arrayValue: [JSONValue]? {
        if case .array(let a) = self { return a }
        return nil
    }

    @inlinable
    public var isNull: Bool {
        if case .null = self { return true }
        return false
    }
}

extension JSONValue: ExpressibleByNilLiteral, ExpressibleByBooleanLiteral, ExpressibleByIntegerLiteral,
    ExpressibleByFloatLiteral, ExpressibleByStringLiteral, ExpressibleByArrayLiteral,
    ExpressibleByDictionaryLiteral
{
    @inlinable public init(nilLiteral: ()) { self = .null }
    @inlinable public init(booleanLiteral value: Bool) { self = .bool(value) }
    @inlinable public init(integerLiteral value: Int64) { self = .int(value) }
    @inlinable public init(floatLiteral value: Double) { self = .double(value) }
    @inlinable public init(stringLiteral value: String) { self = .string(value) }
    @inlinable public init(arrayLiteral elements: JSONValue...) { self = .array(elements) }
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        var object = JSONObject(minimumCapacity: elements.count)
        for (k, v) in elements { object[k] = v }
        self = .object(object)
    }
}

extension JSONValue: CustomStringConvertible {
    /// The compact JSON text of this value.
    public var description: String { jsonString }
}

/// A JSON object: `(key, value)` members in insertion order, keys unique.
///
/// - `subscript(key)` reads a member; setting replaces the value in place (the key keeps its
///   position) or appends a new member; setting `nil` removes the member.
/// - Parsed input with duplicate keys keeps the first position and the last value.
/// - Equality follows JSON semantics: two objects are equal when they have the same keys with
///   equal values, in any order.
/// - Lookups scan linearly while the object is small (the protocol's envelopes have 2–6 members);
///   from `indexThreshold` members on, a hash index keeps lookups and parsing O(1) per key, so a
///   hostile frame with thousands of keys cannot make parsing quadratic.
public struct JSONObject: Sendable, Sequence, ExpressibleByDictionaryLiteral {
    public typealias Element = (key: String, value: JSONValue)

    /// Objects with at least this many members keep a hash index of their keys.
    public static let indexThreshold = 16

    /// A stored member. (A struct rather than the `Element` tuple: arrays of tuples are destroyed
    /// through the runtime's generic tuple witness, which is several times slower.)
    @usableFromInline
    internal struct Member: Sendable {
        @usableFromInline var key: String
        @usableFromInline var value: JSONValue
        @inlinable init(key: String, value: JSONValue) {
            self.key = key
            self.value = value
        }
    }

    @usableFromInline internal var members: [Member]
    @usableFromInline internal var index: [String: Int]?

    @inlinable
    public init() {
        members = []
        index = nil
    }

    public init(minimumCapacity: Int) {
        members = []
        members.reserveCapacity(minimumCapacity)
        index = nil
    }

    /// Builds an object from pairs; a repeated key keeps its first position and its last value.
    public init<S: Sequence>(_ pairs: S) where S.Element == (String, JSONValue) {
        self.init(minimumCapacity: pairs.underestimatedCount)
        for (k, v) in pairs { self[k] = v }
    }

    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self.init(elements)
    }

    @inlinable public var count: Int { members.count }
    @inlinable public var isEmpty: Bool { members.isEmpty }
    /// The keys in insertion order.
    public var keys: [String] { members.map(\.key) }
    /// The values in insertion order.
    public var values: [JSONValue] { members.map(\.value) }

    /// The position of `key` among the members, or `nil`.
    @inlinable
    public func position(of key: String) -> Int? {
        if let index { return index[key] }
        for i in members.indices where members[i].key == key { return i }
        return nil
    }

    @inlinable
    public subscript(key: String) -> JSONValue? {
        get {
            guard let i = position(of: key) else { return nil }
            return members[i].value
        }
        set {
            if let newValue {
                if let i = position(of: key) {
                    members[i].value = newValue
                } else {
                    appendNew(key: key, value: newValue)
                }
            } else {
                removeValue(forKey: key)
            }
        }
    }

    /// Removes the member `key` and returns its value, or `nil` when there was none.
    /// Keeps the order of the other members (O(n)).
    @discardableResult
    public mutating func removeValue(forKey key: String) -> JSONValue? {
        guard let i = position(of: key) else { return nil }
        let old = members.remove(at: i).value
        if index != nil { rebuildIndex() }
        return old
    }

    /// Appends a member whose key is known not to be present.
    @usableFromInline
    internal mutating func appendNew(key: String, value: JSONValue) {
        members.append(Member(key: key, value: value))
        if index != nil {
            index![key] = members.count - 1
        } else if members.count >= Self.indexThreshold {
            rebuildIndex()
        }
    }

    @usableFromInline
    internal mutating func rebuildIndex() {
        if members.count < Self.indexThreshold {
            index = nil
            return
        }
        var idx = [String: Int](minimumCapacity: members.count)
        for (i, m) in members.enumerated() { idx[m.key] = i }
        index = idx
    }

    // MARK: Sequence

    public struct Iterator: IteratorProtocol {
        @usableFromInline internal var base: IndexingIterator<[Member]>
        @inlinable internal init(base: IndexingIterator<[Member]>) { self.base = base }
        @inlinable public mutating func next() -> Element? {
            guard let m = base.next() else { return nil }
            return (key: m.key, value: m.value)
        }
    }

    @inlinable public func makeIterator() -> Iterator { Iterator(base: members.makeIterator()) }
    @inlinable public var underestimatedCount: Int { members.count }
}

extension JSONObject: Equatable {
    public static func == (lhs: JSONObject, rhs: JSONObject) -> Bool {
        guard lhs.members.count == rhs.members.count else { return false }
        // Fast path: same order.
        var i = 0
        while i < lhs.members.count {
            let l = lhs.members[i], r = rhs.members[i]
            if l.key != r.key { break }
            if l.value != r.value { return false }
            i += 1
        }
        if i == lhs.members.count { return true }
        // Keys are unique on both sides and the counts are equal, so "every member of lhs is in
        // rhs with an equal value" is equality.
        while i < lhs.members.count {
            let l = lhs.members[i]
            guard let rv = rhs[l.key], rv == l.value else { return false }
            i += 1
        }
        return true
    }
}

extension JSONObject: CustomStringConvertible {
    public var description: String { JSONValue.object(self).jsonString }
}
