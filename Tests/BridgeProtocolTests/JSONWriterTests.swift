import Testing

@testable import BridgeProtocol

@Suite("JSON writer")
struct JSONWriterTests {
    static func text(_ build: (inout JSONWriter) -> Void) -> String {
        var w = JSONWriter()
        build(&w)
        return w.string
    }

    @Test func scalars() {
        #expect(JSONValue.null.jsonString == "null")
        #expect(JSONValue.bool(true).jsonString == "true")
        #expect(JSONValue.bool(false).jsonString == "false")
        #expect(JSONValue.int(0).jsonString == "0")
        #expect(JSONValue.int(7).jsonString == "7")
        #expect(JSONValue.int(-42).jsonString == "-42")
        #expect(JSONValue.int(.max).jsonString == "9223372036854775807")
        #expect(JSONValue.int(.min).jsonString == "-9223372036854775808")
        #expect(JSONValue.string("").jsonString == #""""#)
        #expect(JSONValue.string("a/b é 😀").jsonString == "\"a/b é 😀\"")
    }

    @Test(arguments: [
        (1.0, "1.0"), (-1.0, "-1.0"), (0.0, "0.0"), (-0.0, "-0.0"), (0.1, "0.1"), (1.5, "1.5"),
        (1e16, "1e+16"), (123456789.0, "123456789.0"), (1e-7, "1e-07"),
        (Double.leastNonzeroMagnitude, "5e-324"), (Double.greatestFiniteMagnitude, "1.7976931348623157e+308"),
        (Double.nan, "null"), (Double.infinity, "null"), (-Double.infinity, "null"),
        (Double.signalingNaN, "null"),
    ])
    func doubles(_ d: Double, _ expected: String) {
        #expect(JSONValue.double(d).jsonString == expected)
    }

    @Test func integralDoublesStayDoublesThroughARoundTrip() throws {
        for d in [1.0, -3.0, 1e15, 1e16, 1e22, 9_007_199_254_740_993.0, 1e300, -0.0] {
            let back = try JSONParser.parse(JSONValue.double(d).serialized())
            #expect(back == .double(d))
            #expect(back.doubleValue?.bitPattern == d.bitPattern)
        }
    }

    @Test func stringEscapes() {
        #expect(JSONValue.string("\"").jsonString == #""\"""#)
        #expect(JSONValue.string("\\").jsonString == #""\\""#)
        #expect(JSONValue.string("a\nb\rc\td\u{8}e\u{C}f").jsonString == #""a\nb\rc\td\be\ff""#)
        #expect(JSONValue.string("\u{0}\u{1}\u{1F}").jsonString == #""\u0000\u0001\u001f""#)
        #expect(JSONValue.string("\u{7F}\u{80}\u{2028}").jsonString == "\"\u{7F}\u{80}\u{2028}\"")
        #expect(JSONValue.string("say \"hi\"\\n").jsonString == #""say \"hi\"\\n""#)
    }

    @Test func everyControlCharacterIsEscapedAndRoundTrips() throws {
        for c in UInt8(0)..<0x20 {
            let s = "x" + String(UnicodeScalar(c)) + "y"
            let bytes = JSONValue.string(s).serialized()
            #expect(!bytes.contains(where: { $0 < 0x20 }), "raw control byte \(c) in output")
            #expect(try JSONParser.parse(bytes) == .string(s))
        }
    }

    @Test func treesKeepInsertionOrder() {
        var object = JSONObject()
        object["z"] = .int(1)
        object["a"] = .array([.null, .bool(true), .string("s"), .array([]), .object([:])])
        object["m"] = .object(["k": .double(2.5)])
        #expect(JSONValue.object(object).jsonString == #"{"z":1,"a":[null,true,"s",[],{}],"m":{"k":2.5}}"#)
        #expect(JSONValue.array([]).jsonString == "[]")
        #expect(JSONValue.object([:]).jsonString == "{}")
    }

    @Test func streamingAPIPlacesCommasAndColons() {
        let reply = Self.text { w in
            w.beginObject()
            w.key("id"); w.int(7)
            w.key("result")
            w.beginObject()
            w.key("ok"); w.bool(true)
            w.key("stack")
            w.beginArray()
            w.beginObject(); w.key("id"); w.string("W1"); w.endObject()
            w.beginObject(); w.key("id"); w.string("W2"); w.key("x"); w.null(); w.endObject()
            w.endArray()
            w.key("empty"); w.beginArray(); w.endArray()
            w.key("d"); w.double(0.5)
            w.key("nan"); w.double(.nan)
            w.endObject()
            w.endObject()
        }
        #expect(
            reply
                == #"{"id":7,"result":{"ok":true,"stack":[{"id":"W1"},{"id":"W2","x":null}],"empty":[],"d":0.5,"nan":null}}"#
        )
    }

    @Test func streamingArraysOfScalars() {
        let t = Self.text { w in
            w.beginArray()
            w.int(1); w.string("two"); w.bool(false); w.null(); w.double(3.25)
            w.beginArray(); w.int(4); w.endArray()
            w.int(5)
            w.endArray()
        }
        #expect(t == #"[1,"two",false,null,3.25,[4],5]"#)
    }

    @Test func rawInsertsPreSerializedValues() throws {
        let cachedStack = JSONValue.array([.object(["id": .string("W1")]), .object(["id": .string("P1")])]).serialized()
        let t = Self.text { w in
            w.beginObject()
            w.key("stack"); w.raw(cachedStack)
            w.key("n"); w.int(2)
            w.key("list"); w.beginArray(); w.raw(Array("true".utf8)); w.raw(Array("{}".utf8)); w.endArray()
            w.endObject()
        }
        #expect(t == #"{"stack":[{"id":"W1"},{"id":"P1"}],"n":2,"list":[true,{}]}"#)
        let viaBuffer = Self.text { w in
            w.beginArray()
            cachedStack.withUnsafeBytes { w.raw($0) }
            w.int(1)
            w.endArray()
        }
        #expect(viaBuffer == #"[[{"id":"W1"},{"id":"P1"}],1]"#)
        #expect(try JSONParser.parse(t)["stack"]?[1]?["id"] == .string("P1"))
    }

    @Test func writeMixesWithStreaming() {
        let params: JSONValue = ["url": "http://x/a?b=\"c\"", "n": 1]
        let t = Self.text { w in
            w.beginObject()
            w.key("event"); w.string("back")
            w.key("params"); w.write(params)
            w.endObject()
        }
        #expect(t == #"{"event":"back","params":{"url":"http://x/a?b=\"c\"","n":1}}"#)
    }

    @Test func keysAreEscaped() {
        let t = Self.text { w in
            w.beginObject(); w.key("a\"b\n"); w.int(1); w.endObject()
        }
        #expect(t == #"{"a\"b\n":1}"#)
    }

    @Test func resetKeepsNoStateFromThePreviousDocument() {
        var w = JSONWriter(capacity: 16)
        w.beginArray(); w.int(1); w.int(2); w.endArray()
        #expect(w.string == "[1,2]")
        w.reset()
        #expect(w.bytes.isEmpty)
        w.int(3)
        #expect(w.string == "3")
        w.reset()
        w.beginObject(); w.key("a"); w.string("b"); w.endObject()
        #expect(w.string == #"{"a":"b"}"#)
    }

    @Test func headroomPrefixIsKeptAcrossResets() {
        var w = JSONWriter()
        w.bytes = [UInt8](repeating: 0, count: 16)
        w.beginObject(); w.key("id"); w.int(1); w.endObject()
        #expect(w.bytes.count == 16 + 8)
        #expect(Array(w.bytes.prefix(16)) == [UInt8](repeating: 0, count: 16))
        #expect(String(decoding: w.bytes.dropFirst(16), as: UTF8.self) == #"{"id":1}"#)
        w.reset(keepingPrefix: 16)
        w.beginArray(); w.endArray()
        #expect(w.bytes.count == 18)
        #expect(String(decoding: w.bytes.dropFirst(16), as: UTF8.self) == "[]")
        w.reset()
        #expect(w.bytes.isEmpty)
    }

    @Test func longStringsWithEscapesAtTheEdges() throws {
        let body = String(repeating: "abcdéf😀", count: 200)
        let s = "\"" + body + "\n" + body + "\\"
        let bytes = JSONValue.string(s).serialized()
        #expect(bytes.first == 0x22 && bytes.last == 0x22)
        #expect(try JSONParser.parse(bytes) == .string(s))
    }

    @Test func descriptionIsCompactJSON() {
        let v: JSONValue = ["a": [1, 2.5, nil, true, "x"]]
        #expect(v.description == #"{"a":[1,2.5,null,true,"x"]}"#)
        #expect(String(describing: v.objectValue!) == v.description)
    }
}
