import PropertyBased
import Testing

@testable import BridgeProtocol

/// Random JSON trees and pieces for property and fuzz tests.
enum RandomJSON {
    /// Characters that stress the codec: escapes, control characters, every UTF-8 length.
    static let trickyScalars: [Unicode.Scalar] = [
        "\"", "\\", "/", "\n", "\r", "\t", "\u{8}", "\u{C}", "\u{0}", "\u{1}", "\u{1F}", "\u{7F}", "\u{80}",
        "é", "ß", "€", "日", "\u{2028}", "\u{FEFF}", "\u{FFFD}", "\u{FFFF}", "😀", "\u{10000}", "\u{10FFFF}",
    ]

    static func scalar<R: RandomNumberGenerator>(_ rng: inout R) -> Unicode.Scalar {
        switch Int.random(in: 0..<10, using: &rng) {
        case 0..<5:
            return Unicode.Scalar(UInt8.random(in: 0x20...0x7E, using: &rng))
        case 5..<8:
            return trickyScalars.randomElement(using: &rng)!
        default:
            // Any scalar, surrogates excluded.
            while true {
                if let s = Unicode.Scalar(UInt32.random(in: 0...0x10FFFF, using: &rng)) { return s }
            }
        }
    }

    static func string<R: RandomNumberGenerator>(_ rng: inout R, maxLength: Int = 12) -> String {
        var s = String.UnicodeScalarView()
        for _ in 0..<Int.random(in: 0...maxLength, using: &rng) { s.append(scalar(&rng)) }
        return String(s)
    }

    static func int<R: RandomNumberGenerator>(_ rng: inout R) -> Int64 {
        switch Int.random(in: 0..<4, using: &rng) {
        case 0: return Int64.random(in: -1000...1000, using: &rng)
        case 1: return [Int64.min, .max, 0, -1, 1 << 53, -(1 << 53), (1 << 53) + 1].randomElement(using: &rng)!
        default: return Int64.random(in: .min ... .max, using: &rng)
        }
    }

    static func double<R: RandomNumberGenerator>(_ rng: inout R) -> Double {
        switch Int.random(in: 0..<5, using: &rng) {
        case 0:
            // Short decimals, the common case on the wire.
            let m = Double(Int.random(in: -100_000...100_000, using: &rng))
            return m / [1, 10, 100, 1000, 1e6].randomElement(using: &rng)!
        case 1:
            return [0.0, -0.0, 0.1, 0.5, 1e22, 1e23, .leastNonzeroMagnitude, 2.2250738585072014e-308, .greatestFiniteMagnitude,
                    9_007_199_254_740_993.0, 1e300, -1e-300].randomElement(using: &rng)!
        default:
            // Any finite double, by bit pattern.
            while true {
                let d = Double(bitPattern: UInt64.random(in: 0 ... .max, using: &rng))
                if d.isFinite { return d }
            }
        }
    }

    /// A random tree, at most `maxDepth` containers deep.
    static func value<R: RandomNumberGenerator>(_ rng: inout R, depth: Int = 0, maxDepth: Int = 5) -> JSONValue {
        let containers = depth < maxDepth
        switch Int.random(in: 0..<(containers ? 10 : 7), using: &rng) {
        case 0: return .null
        case 1: return .bool(Bool.random(using: &rng))
        case 2, 3: return .int(int(&rng))
        case 4: return .double(double(&rng))
        case 5, 6: return .string(string(&rng))
        case 7:
            let n = Int.random(in: 0...5, using: &rng)
            return .array((0..<n).map { _ in value(&rng, depth: depth + 1, maxDepth: maxDepth) })
        default:
            // Mostly small objects; sometimes past the index threshold.
            let big = Int.random(in: 0..<8, using: &rng) == 0
            let n = big ? Int.random(in: 14...40, using: &rng) : Int.random(in: 0...5, using: &rng)
            var o = JSONObject()
            for _ in 0..<n {
                let key = big ? "k\(Int.random(in: 0..<30, using: &rng))" : string(&rng, maxLength: 6)
                o[key] = value(&rng, depth: depth + 1, maxDepth: maxDepth)
            }
            return .object(o)
        }
    }

    /// Strictly smaller variants of `v`, for shrinking failures to a readable case.
    static func shrink(_ v: JSONValue) -> [JSONValue] {
        var out: [JSONValue] = []
        switch v {
        case .null:
            return []
        case .bool, .int, .double:
            out = [.null]
        case .string(let s):
            out = [.null]
            if !s.isEmpty { out += [.string(""), .string(String(s.unicodeScalars.dropFirst()))] }
        case .array(let a):
            out = [.null] + a
            for i in a.indices {
                var smaller = a
                smaller.remove(at: i)
                out.append(.array(smaller))
            }
        case .object(let o):
            out = [.null] + o.values
            for key in o.keys {
                var smaller = o
                smaller[key] = nil
                out.append(.object(smaller))
            }
        }
        return out
    }

    static var tree: Generator<JSONValue, [JSONValue]> {
        Generator(run: { rng in value(&rng) }, shrink: { shrink($0) })
    }

    /// A random JSON number literal: sign, 1–25 integer digits (no leading zero), an optional
    /// fraction of 1–25 digits, an optional exponent of 1–4 digits.
    static func numberLiteral<R: RandomNumberGenerator>(_ rng: inout R) -> String {
        func digits(_ n: Int, _ rng: inout R) -> String {
            String((0..<n).map { _ in Character(Unicode.Scalar(UInt8.random(in: 0x30...0x39, using: &rng))) })
        }
        var s = Bool.random(using: &rng) ? "-" : ""
        if Int.random(in: 0..<4, using: &rng) == 0 {
            s += "0"
        } else {
            s += String(Int.random(in: 1...9, using: &rng))
            s += digits(Int.random(in: 0...24, using: &rng), &rng)
        }
        if Bool.random(using: &rng) {
            s += "." + digits(Int.random(in: 1...25, using: &rng), &rng)
        }
        if Int.random(in: 0..<3, using: &rng) == 0 {
            s += ["e", "E", "e+", "e-", "E-"].randomElement(using: &rng)!
            s += digits(Int.random(in: 1...4, using: &rng), &rng)
        }
        return s
    }
}

@Suite("JSON round trips (property-based)")
struct JSONPropertyTests {
    @Test func writeThenParseGivesTheSameTree() async {
        await propertyCheck(count: 1500, input: RandomJSON.tree) { value in
            await Task.yield()  // see EnginePropertyTests.sequencesCoverTheInterestingCases
            let bytes = value.serialized()
            let parsed = try JSONParser.parse(bytes, maxDepth: 64)
            #expect(parsed == value)
            // Byte-stable: catches what == cannot see (the sign of -0.0, member order).
            #expect(parsed.serialized() == bytes)
            // Compact output: no byte is a raw control character or an insignificant space.
            #expect(!bytes.contains(where: { $0 < 0x20 }))
        }
    }

    @Test func parseAcceptsInsignificantWhitespaceAnywhere() async {
        await propertyCheck(count: 300, input: RandomJSON.tree) { value in
            // Re-serialize with whitespace after every structural byte outside strings.
            var spaced: [UInt8] = [0x20, 0x0A]
            var inString = false, escaped = false
            for b in value.serialized() {
                spaced.append(b)
                if inString {
                    if escaped { escaped = false } else if b == 0x5C { escaped = true } else if b == 0x22 { inString = false }
                } else if b == 0x22 {
                    inString = true
                } else if [0x7B, 0x7D, 0x5B, 0x5D, 0x2C, 0x3A].contains(b) {
                    spaced += [0x20, 0x09, 0x0D, 0x0A]
                }
            }
            spaced += [0x0D, 0x0A]
            let parsed = try JSONParser.parse(spaced)
            #expect(parsed == value)
        }
    }

    @Test func everyFiniteDoubleRoundTripsBitExactly() async {
        await propertyCheck(count: 3000, input: Gen.uint64()) { bits in
            let d = Double(bitPattern: bits)
            var w = JSONWriter()
            w.double(d)
            let parsed = try JSONParser.parse(w.bytes)
            if d.isFinite {
                #expect(parsed.doubleValue?.bitPattern == d.bitPattern, "\(d) written as \(w.string)")
                guard case .double = parsed else {
                    Issue.record("\(d) written as \(w.string) parsed as \(parsed)")
                    return
                }
            } else {
                #expect(parsed == .null)
            }
        }
    }

    @Test func everyInt64RoundTrips() async {
        await propertyCheck(count: 2000, input: Gen.int64()) { i in
            var w = JSONWriter()
            w.int(i)
            #expect(w.string == String(i))
            let parsed = try JSONParser.parse(w.bytes)
            #expect(parsed == .int(i))
        }
    }

    /// The parser's numbers agree with the standard library's conversions on random literals,
    /// which exercises the exact fast path, the fallback, and the Int64/Double boundary.
    @Test func numberLiteralsAgreeWithTheStandardLibrary() async {
        await propertyCheck(count: 5000, input: Generator(run: { rng in RandomJSON.numberLiteral(&rng) })) { text in
            let isIntegerLiteral = !text.contains(where: { ".eE".contains($0) })
            let result = Result { () throws(JSONParseError) in try JSONParser.parse(text) }
            if isIntegerLiteral, let i = Int64(text) {
                #expect(result == .success(.int(i)), "\(text)")
                return
            }
            let expected = Double(text)!
            guard expected.isFinite else {
                #expect(result == .failure(JSONParseError(offset: 0, message: "number out of range for a 64-bit float")))
                return
            }
            switch result {
            case .success(.double(let d)):
                #expect(d.bitPattern == expected.bitPattern, "\(text): \(d) != \(expected)")
            default:
                Issue.record("\(text) parsed as \(result), expected .double(\(expected))")
            }
        }
    }
}
