import Testing

@testable import BridgeProtocol

@Suite("JSON values and objects")
struct JSONValueTests {
    @Test func accessorsReturnNilForOtherCases() throws {
        let v = try JSONParser.parse(#"{"s":"x","i":3,"d":1.5,"b":false,"n":null,"a":[1],"o":{"k":1}}"#)
        #expect(v["s"]?.stringValue == "x")
        #expect(v["i"]?.intValue == 3)
        #expect(v["i"]?.doubleValue == 3.0)
        #expect(v["d"]?.doubleValue == 1.5)
        #expect(v["d"]?.intValue == nil)
        #expect(v["b"]?.boolValue == false)
        #expect(v["n"]?.isNull == true)
        #expect(v["a"]?.arrayValue == [.int(1)])
        #expect(v["a"]?[0] == .int(1))
        #expect(v["a"]?[1] == nil)
        #expect(v["a"]?[-1] == nil)
        #expect(v["o"]?.objectValue?["k"] == .int(1))
        #expect(v["missing"] == nil)
        #expect(v[0] == nil)
        // Accessors on the wrong case are nil, never a trap.
        for other: JSONValue in [.null, .bool(true), .int(1), .double(1), .string("s"), .array([]), .object([:])] {
            #expect(other["k"] == nil)
            if case .string = other {} else { #expect(other.stringValue == nil) }
            if case .int = other {} else { #expect(other.intValue == nil) }
            if case .bool = other {} else { #expect(other.boolValue == nil) }
            if case .object = other {} else { #expect(other.objectValue == nil) }
            if case .array = other {} else { #expect(other.arrayValue == nil) }
        }
        #expect(JSONValue.string("1").doubleValue == nil)
    }

    @Test func intAndDoubleAreDistinct() {
        #expect(JSONValue.int(1) != JSONValue.double(1))
        #expect(JSONValue.double(0) == JSONValue.double(-0.0))
    }

    @Test func literals() {
        let v: JSONValue = ["a": 1, "b": [true, nil, "s", 2.5], "c": [:]]
        #expect(
            v
                == .object([
                    "a": .int(1), "b": .array([.bool(true), .null, .string("s"), .double(2.5)]), "c": .object([:]),
                ]))
    }

    @Test func objectSubscriptReplacesInPlaceAppendsAndRemoves() {
        var o = JSONObject()
        #expect(o.isEmpty)
        o["a"] = 1
        o["b"] = 2
        o["c"] = 3
        o["a"] = 10  // replace keeps the position
        #expect(o.keys == ["a", "b", "c"])
        #expect(o.values == [10, 2, 3])
        #expect(o.count == 3)
        o["b"] = nil
        #expect(o.keys == ["a", "c"])
        #expect(o["b"] == nil)
        #expect(o.removeValue(forKey: "a") == 10)
        #expect(o.removeValue(forKey: "a") == nil)
        #expect(o.keys == ["c"])
        o["b"] = 4
        #expect(o.keys == ["c", "b"])
        #expect(o.position(of: "b") == 1)
    }

    @Test func literalAndSequenceInitWithDuplicateKeys() {
        let o: JSONObject = ["x": 1, "y": 2, "x": 3]
        #expect(o.keys == ["x", "y"])
        #expect(o["x"] == 3)
        let p = JSONObject([("k", JSONValue.int(1)), ("k", .int(2))])
        #expect(p.count == 1 && p["k"] == 2)
    }

    @Test func iterationFollowsInsertionOrder() {
        let o: JSONObject = ["b": 1, "a": 2, "c": 3]
        var seen: [String] = []
        for (key, value) in o {
            seen.append(key)
            #expect(o[key] == value)
        }
        #expect(seen == ["b", "a", "c"])
        #expect(o.map(\.key) == ["b", "a", "c"])
    }

    @Test func equalityIgnoresMemberOrder() {
        let a: JSONObject = ["a": 1, "b": [1, 2], "c": nil]
        let b: JSONObject = ["c": nil, "a": 1, "b": [1, 2]]
        #expect(a == b)
        #expect(JSONValue.object(a) == JSONValue.object(b))
        let c: JSONObject = ["a": 1, "b": [2, 1], "c": nil]
        #expect(a != c)
        let d: JSONObject = ["a": 1, "b": [1, 2]]
        #expect(a != d)
        let e: JSONObject = ["a": 1, "b": [1, 2], "x": nil]
        #expect(a != e)
        // Arrays stay ordered.
        #expect(JSONValue.array([1, 2]) != JSONValue.array([2, 1]))
    }

    @Test func largeObjectsKeepAWorkingIndexThroughEdits() {
        var o = JSONObject()
        let n = JSONObject.indexThreshold * 4
        for i in 0..<n { o["k\(i)"] = .int(Int64(i)) }
        #expect(o.index != nil)
        for i in 0..<n { #expect(o["k\(i)"] == .int(Int64(i))) }
        // Replace, remove from the middle, append: lookups must follow the new positions.
        o["k5"] = "five"
        #expect(o.removeValue(forKey: "k3") == 3)
        o["new"] = true
        #expect(o.count == n)
        #expect(o["k3"] == nil)
        #expect(o["k5"] == "five")
        #expect(o["k4"] == 4)
        #expect(o["new"] == true)
        #expect(o.keys.last == "new")
        #expect(o.position(of: "k4") == 3)
        for (i, key) in o.keys.enumerated() { #expect(o.position(of: key) == i) }
        // Shrinking below the threshold drops the index; lookups still work.
        for i in 0..<n where i != 5 && i != 3 { o["k\(i)"] = nil }
        #expect(o.index == nil)
        #expect(o.keys == ["k5", "new"])
        #expect(o["new"] == true)
        // Equality between an indexed and a scanned object with the same members in another order.
        var big1 = JSONObject(), big2 = JSONObject()
        for i in 0..<n { big1["k\(i)"] = .int(Int64(i)) }
        for i in (0..<n).reversed() { big2["k\(i)"] = .int(Int64(i)) }
        #expect(big1 == big2)
        big2["k0"] = 1
        #expect(big1 != big2)
    }

    @Test func copiesAreIndependent() {
        var a: JSONObject = ["x": 1]
        let b = a
        a["x"] = 2
        a["y"] = 3
        #expect(b["x"] == 1 && b["y"] == nil)
    }
}
