import Foundation  // Thread, for a known stack size in the deep-nesting test
import Testing

@testable import BridgeProtocol

/// A document that must parse to `expected`.
struct ValidJSONCase: Sendable, CustomTestStringConvertible {
    let text: String
    let expected: JSONValue
    init(_ text: String, _ expected: JSONValue) {
        self.text = text
        self.expected = expected
    }
    var testDescription: String { jsonCaseDescription(text) }
}

/// A document that must be rejected with exactly this error.
struct InvalidJSONCase: Sendable, CustomTestStringConvertible {
    let text: String
    let offset: Int
    let message: String
    init(_ text: String, _ offset: Int, _ message: String) {
        self.text = text
        self.offset = offset
        self.message = message
    }
    var testDescription: String { jsonCaseDescription(text) }
}

/// `text` quoted, cut to 80 characters for test names.
func jsonCaseDescription(_ text: String) -> String {
    text.count <= 80 ? text.debugDescription : String(text.prefix(70)).debugDescription + "… (\(text.utf8.count) bytes)"
}

/// Parses `text` through all three entry points, which must agree.
func parseJSONAllWays(_ text: String, maxDepth: Int = 64) -> Result<JSONValue, JSONParseError> {
    let fromString = Result { () throws(JSONParseError) in try JSONParser.parse(text, maxDepth: maxDepth) }
    let bytes = Array(text.utf8)
    let fromArray = Result { () throws(JSONParseError) in try JSONParser.parse(bytes, maxDepth: maxDepth) }
    let fromBuffer = bytes.withUnsafeBytes { buffer in
        Result { () throws(JSONParseError) in try JSONParser.parse(buffer, maxDepth: maxDepth) }
    }
    #expect(fromString == fromArray)
    #expect(fromString == fromBuffer)
    return fromString
}

@Suite("JSON parser")
struct JSONParserTests {
    static let validCases: [ValidJSONCase] = [
        // Literals and whitespace.
        .init("null", .null),
        .init("true", .bool(true)),
        .init("false", .bool(false)),
        .init(" \t\n\r 1 \n\r\t ", .int(1)),
        // Integers.
        .init("0", .int(0)),
        .init("-0", .int(0)),
        .init("7", .int(7)),
        .init("-123", .int(-123)),
        .init("9007199254740993", .int(9_007_199_254_740_993)),
        .init("9223372036854775807", .int(.max)),
        .init("-9223372036854775808", .int(.min)),
        .init("1234567890123456789", .int(1_234_567_890_123_456_789)),
        // Integers beyond Int64 become doubles.
        .init("9223372036854775808", .double(9_223_372_036_854_775_808.0)),
        .init("-9223372036854775809", .double(-9_223_372_036_854_775_809.0)),
        .init("9999999999999999999", .double(9_999_999_999_999_999_999.0)),
        .init("18446744073709551616", .double(18_446_744_073_709_551_616.0)),
        .init("100000000000000000000000000000", .double(1e29)),
        // Fractions and exponents are always doubles.
        .init("1.0", .double(1)),
        .init("1E3", .double(1000)),
        .init("1e+2", .double(100)),
        .init("-1.5e3", .double(-1500)),
        .init("1e-3", .double(0.001)),
        .init("0.1", .double(0.1)),
        .init("0.000123", .double(0.000123)),
        .init("123.456", .double(123.456)),
        .init("0.30000000000000004", .double(0.30000000000000004)),
        .init("1.0000000000000002", .double(1.0000000000000002)),
        .init("9007199254740993.0", .double(9_007_199_254_740_992.0)),  // rounds to even
        .init("1e22", .double(1e22)),
        .init("1e23", .double(1e23)),
        .init("5e-324", .double(.leastNonzeroMagnitude)),
        .init("2.2250738585072014e-308", .double(2.2250738585072014e-308)),
        .init("1.7976931348623157e308", .double(.greatestFiniteMagnitude)),
        .init("-1.7976931348623157e308", .double(-.greatestFiniteMagnitude)),
        .init("1e-400", .double(0)),
        .init("0e99999999999999999999", .double(0)),
        .init("123456789012345678901234567890.5", .double(1.2345678901234568e29)),
        .init("0.1234567890123456789012345", .double(0.12345678901234568)),
        .init("1E00000000000000000001", .double(10)),
        // Strings.
        .init(#""""#, .string("")),
        .init(#""abc""#, .string("abc")),
        .init(#""\"\\\/\b\f\n\r\t""#, .string("\"\\/\u{8}\u{C}\n\r\t")),
        .init(#""a\"b""#, .string("a\"b")),
        .init(#""line1\nline2 and more text""#, .string("line1\nline2 and more text")),
        .init(#""\u0041\u00e9\u20AC\uffff""#, .string("A\u{E9}\u{20AC}\u{FFFF}")),
        .init(#""\uD83D\uDE00""#, .string("\u{1F600}")),
        .init(#""x\ud83d\ude00y""#, .string("x\u{1F600}y")),
        .init(#""\uDBFF\uDFFF""#, .string("\u{10FFFF}")),
        .init(#""\u0000""#, .string("\u{0}")),
        .init(#""\u001f\u007f""#, .string("\u{1F}\u{7F}")),
        .init("\"é😀 日本\u{7F}\"", .string("é😀 日本\u{7F}")),
        .init("\"é\\n😀\"", .string("é\n😀")),
        // Arrays.
        .init("[]", .array([])),
        .init("[ ]", .array([])),
        .init("[ 1 , \"a\" , null ]", .array([.int(1), .string("a"), .null])),
        .init("[1,[2,[3]],{}]", .array([.int(1), .array([.int(2), .array([.int(3)])]), .object([:])])),
        // Objects.
        .init("{}", .object([:])),
        .init("{ }", .object([:])),
        .init(#"{"":0}"#, .object(["": .int(0)])),
        .init(#"{"a":1,"b":[true,false]}"#, .object(["a": .int(1), "b": .array([.bool(true), .bool(false)])])),
        .init(#" { "a" : 1 , "b" : { } } "#, .object(["a": .int(1), "b": .object([:])])),
        .init(
            #"{"id":7,"method":"pwa-navigate","params":{"url":"http://127.0.0.1:8787/app/page2","title":"Two"}}"#,
            .object([
                "id": .int(7), "method": .string("pwa-navigate"),
                "params": .object(["url": .string("http://127.0.0.1:8787/app/page2"), "title": .string("Two")]),
            ])),
        .init(String(repeating: "[", count: 64) + String(repeating: "]", count: 64), nested(64)),
    ]

    /// `depth` nested empty arrays.
    static func nested(_ depth: Int) -> JSONValue {
        var v = JSONValue.array([])
        for _ in 1..<depth { v = .array([v]) }
        return v
    }

    @Test(arguments: validCases)
    func acceptsValidDocument(_ c: ValidJSONCase) {
        switch parseJSONAllWays(c.text) {
        case .success(let value): #expect(value == c.expected)
        case .failure(let error): Issue.record("rejected: \(error)")
        }
    }

    static let invalidCases: [InvalidJSONCase] = [
        // Empty input, trailing garbage.
        .init("", 0, "unexpected end of input, expected a JSON value"),
        .init("  \n ", 4, "unexpected end of input, expected a JSON value"),
        .init("1 2", 2, "expected end of input after the JSON value, found '2'"),
        .init("truex", 4, "expected end of input after the JSON value, found 'x'"),
        .init("{}x", 2, "expected end of input after the JSON value, found 'x'"),
        .init("{},", 2, "expected end of input after the JSON value, found ','"),
        .init("[1]/* c */", 3, "expected end of input after the JSON value, found '/'"),
        .init("\u{FEFF}{}", 0, "a byte order mark is not allowed"),
        .init("\u{0B}1", 0, "expected a JSON value, found byte 0x0B"),
        .init("\u{A0}1", 0, "expected a JSON value, found byte 0xC2"),
        .init("]", 0, "expected a JSON value, found ']'"),
        // Trailing commas.
        .init("[1,]", 3, "a trailing comma is not allowed before ']'"),
        .init("[1, ]", 4, "a trailing comma is not allowed before ']'"),
        .init(#"{"a":1,}"#, 7, "a trailing comma is not allowed before '}'"),
        .init("[,1]", 1, "expected a JSON value, found ','"),
        .init("[1,,2]", 3, "expected a JSON value, found ','"),
        .init("{,}", 1, "expected a string key, found ','"),
        // Structure.
        .init("[1 2]", 3, "expected ',' or ']', found '2'"),
        .init(#"{"a":1 "b":2}"#, 7, #"expected ',' or '}', found '"'"#),
        .init(#"{"a":1]"#, 6, "expected ',' or '}', found ']'"),
        .init(#"{"a" 1}"#, 5, "expected ':' after the key, found '1'"),
        .init("{a:1}", 1, "expected a string key, found 'a'"),
        .init("{1:1}", 1, "expected a string key, found '1'"),
        .init(#"{"a":}"#, 5, "expected a JSON value, found '}'"),
        .init("[", 1, "unexpected end of input, expected a JSON value or ']'"),
        .init("[1", 2, "unexpected end of input, expected ',' or ']'"),
        .init("[1,", 3, "unexpected end of input, expected a JSON value"),
        .init("{", 1, "unexpected end of input, expected a string key or '}'"),
        .init(#"{"a""#, 4, "unexpected end of input, expected ':'"),
        .init(#"{"a":"#, 5, "unexpected end of input, expected a JSON value"),
        .init(#"{"a":1"#, 6, "unexpected end of input, expected ',' or '}'"),
        .init(#"{"a":1,"#, 7, "unexpected end of input, expected a string key"),
        // Comments, quotes, literals.
        .init("// c\n1", 0, "comments are not allowed"),
        .init("/* c */ 1", 0, "comments are not allowed"),
        .init("[1, /* c */ 2]", 4, "comments are not allowed"),
        .init("'a'", 0, "strings must be in double quotes"),
        .init("{'a':1}", 1, "expected a string key, found '''"),
        .init("tru", 0, "invalid literal, expected 'true'"),
        .init("True", 0, "expected a JSON value, found 'T'"),
        .init("falsy", 0, "invalid literal, expected 'false'"),
        .init("nul", 0, "invalid literal, expected 'null'"),
        .init("[nulL]", 1, "invalid literal, expected 'null'"),
        .init("undefined", 0, "expected a JSON value, found 'u'"),
        // Numbers.
        .init("NaN", 0, "NaN and Infinity are not allowed"),
        .init("nan", 0, "invalid literal, expected 'null'"),
        .init("Infinity", 0, "NaN and Infinity are not allowed"),
        .init("-Infinity", 1, "NaN and Infinity are not allowed"),
        .init("[1,NaN]", 3, "NaN and Infinity are not allowed"),
        .init("01", 0, "leading zeros are not allowed in numbers"),
        .init("00", 0, "leading zeros are not allowed in numbers"),
        .init("-01", 0, "leading zeros are not allowed in numbers"),
        .init("[1,007]", 3, "leading zeros are not allowed in numbers"),
        .init("+1", 0, "a number must not start with '+'"),
        .init(".5", 0, "a number must start with a digit, found '.'"),
        .init("-", 1, "unexpected end of input, expected a digit after '-'"),
        .init("- 1", 1, "expected a digit after '-', found ' '"),
        .init("-a", 1, "expected a digit after '-', found 'a'"),
        .init("1.", 2, "unexpected end of input, expected a digit after '.'"),
        .init("1.e5", 2, "expected a digit after '.', found 'e'"),
        .init("1.5.2", 3, "expected end of input after the JSON value, found '.'"),
        .init("1e", 2, "unexpected end of input, expected a digit in the exponent"),
        .init("1E+", 3, "unexpected end of input, expected a digit in the exponent"),
        .init("1ex", 2, "expected a digit in the exponent, found 'x'"),
        .init("1e+-2", 3, "expected a digit in the exponent, found '-'"),
        .init("0x10", 1, "expected end of input after the JSON value, found 'x'"),
        .init("1e400", 0, "number out of range for a 64-bit float"),
        .init("[-1e400]", 1, "number out of range for a 64-bit float"),
        .init("1" + String(repeating: "0", count: 400), 0, "number out of range for a 64-bit float"),
        .init("1.8e308", 0, "number out of range for a 64-bit float"),
        // Strings.
        .init(#""abc"#, 4, "unexpected end of input in the string that starts at offset 0"),
        .init(#"["a\"]"#, 6, "unexpected end of input in the string that starts at offset 1"),
        .init(#""a\"#, 3, "unexpected end of input in an escape sequence"),
        .init("\"a\nb\"", 2, "unescaped control character U+000A in a string"),
        .init("\"\t\"", 1, "unescaped control character U+0009 in a string"),
        .init("\"\u{0}\"", 1, "unescaped control character U+0000 in a string"),
        .init("\"\\n\u{1F}\"", 3, "unescaped control character U+001F in a string"),
        .init(#""\x""#, 1, #"invalid escape sequence '\x'"#),
        .init(#""ab\'""#, 3, #"invalid escape sequence '\''"#),
        .init(#""\U0041""#, 1, #"invalid escape sequence '\U'"#),
        .init("\"\\\n\"", 1, #"invalid escape sequence '\<byte 0x0A>'"#),
        .init(#""\u12""#, 1, #"expected 4 hex digits after '\u'"#),
        .init(#""\u12G4""#, 1, #"expected 4 hex digits after '\u'"#),
        .init(#""\u""#, 1, #"expected 4 hex digits after '\u'"#),
        .init(#""\uD800""#, 1, #"lone high surrogate \uD800, expected a \uDC00-\uDFFF escape to follow"#),
        .init(#""\uD800x""#, 1, #"lone high surrogate \uD800, expected a \uDC00-\uDFFF escape to follow"#),
        .init(#""\ud83d\u0041""#, 1, #"lone high surrogate \uD83D, expected a \uDC00-\uDFFF escape to follow"#),
        .init(#""\uD800\uD800""#, 1, #"lone high surrogate \uD800, expected a \uDC00-\uDFFF escape to follow"#),
        .init(#""\uD800\n""#, 1, #"lone high surrogate \uD800, expected a \uDC00-\uDFFF escape to follow"#),
        .init(#""\uD800\u12""#, 7, #"expected 4 hex digits after '\u'"#),
        .init(#""\uDC00""#, 1, #"lone low surrogate \uDC00"#),
        .init(#""a\uDFFF""#, 2, #"lone low surrogate \uDFFF"#),
        .init(#""\uDE00\uD83D""#, 1, #"lone low surrogate \uDE00"#),
        // Nesting.
        .init(String(repeating: "[", count: 65) + String(repeating: "]", count: 65), 64,
              "arrays and objects nested deeper than 64 levels"),
        .init(String(repeating: "[", count: 100_000), 64, "arrays and objects nested deeper than 64 levels"),
        .init(String(repeating: #"{"a":"#, count: 70), 320, "arrays and objects nested deeper than 64 levels"),
    ]

    @Test(arguments: invalidCases)
    func rejectsInvalidDocument(_ c: InvalidJSONCase) {
        switch parseJSONAllWays(c.text) {
        case .success(let value): Issue.record("accepted as \(value)")
        case .failure(let error): #expect(error == JSONParseError(offset: c.offset, message: c.message))
        }
    }

    @Test func errorDescriptionNamesExpectationAndOffset() {
        let text = #"{"id":7,"method"]"#
        #expect(throws: JSONParseError(offset: 16, message: "expected ':' after the key, found ']'")) {
            try JSONParser.parse(text)
        }
        do {
            _ = try JSONParser.parse(#"{"id":7 "x"}"#)
            Issue.record("accepted")
        } catch {
            #expect(error.description == #"expected ',' or '}', found '"' at offset 8"#)
        }
    }

    @Test func negativeZeroDoubleKeepsItsSign() throws {
        let v = try JSONParser.parse("-0.0")
        #expect(v.doubleValue?.sign == .minus)
        let w = try JSONParser.parse("-0e5")
        #expect(w.doubleValue?.sign == .minus)
    }

    @Test func maxDepthIsConfigurable() throws {
        #expect(try JSONParser.parse("1", maxDepth: 0) == .int(1))
        #expect(try JSONParser.parse(#""s""#, maxDepth: 0) == .string("s"))
        #expect(throws: JSONParseError(offset: 0, message: "arrays and objects nested deeper than 0 levels")) {
            try JSONParser.parse("[]", maxDepth: 0)
        }
        #expect(try JSONParser.parse(#"{"a":[{}]}"#, maxDepth: 3) == .object(["a": .array([.object([:])])]))
        #expect(throws: JSONParseError(offset: 6, message: "arrays and objects nested deeper than 2 levels")) {
            try JSONParser.parse(#"{"a":[{}]}"#, maxDepth: 2)
        }
        // Siblings do not add up: depth is nesting, not count.
        let wide = "[" + Array(repeating: "[[]]", count: 100).joined(separator: ",") + "]"
        #expect(try JSONParser.parse(wide, maxDepth: 3).arrayValue?.count == 100)
    }

    /// Parses `depth` levels and returns how many levels the result has below the top.
    static func parseDeep(depth: Int) -> Result<Int, JSONParseError> {
        let text = String(repeating: #"{"k":["#, count: depth / 2) + String(repeating: "]}", count: depth / 2)
        return Result { () throws(JSONParseError) in
            var v = try JSONParser.parse(text, maxDepth: depth)
            var levels = 0
            while true {
                if let inner = v["k"] {
                    v = inner
                } else if let inner = v[0] {
                    v = inner
                } else {
                    break
                }
                levels += 1
            }
            return v == .array([]) ? levels : -1
        }
    }

    @Test func deepestSupportedNestingParses() async {
        // The parser recurses per level; debug builds use a few KiB of stack per level, so this
        // runs on a thread whose stack size is known rather than on whatever runs the test.
        let depth = JSONParser.maxSupportedDepth
        let (deepest, tooDeep) = await withCheckedContinuation {
            (done: CheckedContinuation<(Result<Int, JSONParseError>, Result<JSONValue, JSONParseError>), Never>) in
            let thread = Thread {
                let deepest = Self.parseDeep(depth: depth)
                // One level more is rejected, not a crash.
                let text = String(repeating: "[", count: depth + 1) + String(repeating: "]", count: depth + 1)
                let tooDeep = Result { () throws(JSONParseError) in try JSONParser.parse(text, maxDepth: depth) }
                done.resume(returning: (deepest, tooDeep))
            }
            thread.stackSize = 16 << 20
            thread.start()
        }
        #expect(deepest == .success(depth - 1))
        #expect(tooDeep == .failure(JSONParseError(offset: depth, message: "arrays and objects nested deeper than \(depth) levels")))
    }

    @Test func duplicateKeysLastValueWinsAtFirstPosition() throws {
        let v = try JSONParser.parse(#"{"a":1,"b":2,"a":3,"c":4,"b":5}"#)
        let object = try #require(v.objectValue)
        #expect(object.keys == ["a", "b", "c"])
        #expect(object["a"] == .int(3))
        #expect(object["b"] == .int(5))
        #expect(object["c"] == .int(4))
    }

    @Test func manyKeysUseTheIndexAndKeepOrderAndLastWins() throws {
        // 3,000 distinct keys, then every key again with a new value: duplicates must be
        // resolved through the index (this input would be ~9M comparisons scanning linearly).
        var text = "{"
        for i in 0..<3000 { text += #""k\#(i)":\#(i),"# }
        for i in 0..<3000 { text += #""k\#(i)":-\#(i),"# }
        text += #""last":true}"#
        let object = try #require(try JSONParser.parse(text).objectValue)
        #expect(object.count == 3001)
        #expect(object.index != nil)
        #expect(object.keys.prefix(3) == ["k0", "k1", "k2"])
        #expect(object.keys.last == "last")
        for i in [0, 1, 15, 16, 17, 1234, 2999] {
            #expect(object["k\(i)"] == .int(-Int64(i)))
        }
    }

    @Test func invalidUTF8InStringsIsRepairedNotFatal() throws {
        #expect(try JSONParser.parse([0x22, 0xFF, 0x22]) == .string("\u{FFFD}"))
        #expect(try JSONParser.parse([0x22, 0x61, 0xC3, 0x22]) == .string("a\u{FFFD}"))
        // Through the escape path as well.
        #expect(try JSONParser.parse([0x22, 0x5C, 0x6E, 0xED, 0xA0, 0x80, 0x22]) == .string("\n\u{FFFD}\u{FFFD}\u{FFFD}"))
        // Outside strings an invalid byte is an unexpected character.
        #expect(throws: JSONParseError(offset: 1, message: "expected a JSON value, found byte 0xFF")) {
            try JSONParser.parse([0x5B, 0xFF, 0x5D])
        }
    }

    @Test func emptyBufferIsAnErrorNotACrash() {
        #expect(throws: JSONParseError(offset: 0, message: "unexpected end of input, expected a JSON value")) {
            try JSONParser.parse(UnsafeRawBufferPointer(start: nil, count: 0))
        }
        #expect(throws: JSONParseError(offset: 0, message: "unexpected end of input, expected a JSON value")) {
            try JSONParser.parse([UInt8]())
        }
    }

    @Test func parsesFromASliceOfALargerBuffer() throws {
        // The parser must not read past the buffer it was given.
        let bytes = Array(#"[1,2]"#.utf8) + Array("garbage".utf8)
        let v = try bytes.withUnsafeBytes { all throws(JSONParseError) in
            try JSONParser.parse(UnsafeRawBufferPointer(rebasing: all[0..<5]))
        }
        #expect(v == .array([.int(1), .int(2)]))
        let truncated = Array(#""abc""#.utf8)
        #expect(throws: JSONParseError(offset: 4, message: "unexpected end of input in the string that starts at offset 0")) {
            try truncated.withUnsafeBytes { all throws(JSONParseError) in
                try JSONParser.parse(UnsafeRawBufferPointer(rebasing: all[0..<4]))
            }
        }
    }

    @Test func stringsWithManyEscapesDecode() throws {
        // Escapes at the start, end, back to back, and mixed with long runs and non-ASCII.
        let run = String(repeating: "abcdefghé", count: 50)
        let text = #""\n"# + run + #"\"\\\u00e9\uD83D\uDE00"# + run + #"\t""#
        let v = try JSONParser.parse(text)
        #expect(v == .string("\n" + run + "\"\\é😀" + run + "\t"))
        // The scratch buffer is reused between strings: a short escaped string after a long one.
        let two = try JSONParser.parse(#"["\n"# + run + #"","\ta"]"#)
        #expect(two == .array([.string("\n" + run), .string("\ta")]))
    }
}
