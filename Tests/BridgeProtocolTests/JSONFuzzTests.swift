import Testing

@testable import BridgeProtocol


@Suite("JSON parser fuzzing")
struct JSONFuzzTests {
    /// Bytes that are likely to turn a valid document into an interesting invalid one.
    static let interestingBytes: [UInt8] =
        Array(#"{}[],:"\/0123456789-+.eEtfnulrsaxIN '"#.utf8) + [0x09, 0x0A, 0x0D, 0x00, 0x1F, 0x7F, 0x80, 0xBF, 0xC3, 0xED, 0xEF, 0xF0, 0xFF]

    static let tokens: [String] = [
        "{", "}", "[", "]", ",", ":", " ", "\n", #""k""#, #""""#, #""\u12""#, #""\uD83D\uDE00""#, #""\uD800""#,
        #""\n\"""#, "\"", "\\", "1", "-0.5e+3", "0", "01", "-", "1e400", "true", "false", "null", "nul", "NaN",
        "18446744073709551616", "0.1", "//", "'", "é",
    ]

    static var corpus: [[UInt8]] {
        var docs = JSONParserTests.validCases.map { Array($0.text.utf8) }
        docs += [
            #"{"id":1,"method":"hello","params":{"protocol":1,"role":"page","url":"http://127.0.0.1:8787/app/"}}"#,
            #"{"id":7,"error":{"code":"invalid-params","message":"human readable"}}"#,
            #"{"event":"back","params":{}}"#,
            #"{"id":2,"result":{"stack":[{"id":"W1","kind":"webview","url":"http://h/a"},{"id":"P1","kind":"placeholder"}]}}"#,
        ].map { Array($0.utf8) }
        var rng = SeededRandom(seed: 42)
        for _ in 0..<40 { docs.append(RandomJSON.value(&rng).serialized()) }
        return docs
    }

    static func mutate(_ input: [UInt8], _ rng: inout SeededRandom) -> [UInt8] {
        var bytes = input
        for _ in 0..<Int.random(in: 1...4, using: &rng) {
            let randomByte: UInt8 =
                Bool.random(using: &rng) ? interestingBytes.randomElement(using: &rng)! : UInt8.random(in: 0...255, using: &rng)
            switch Int.random(in: 0..<6, using: &rng) {
            case 0 where !bytes.isEmpty:
                bytes[Int.random(in: bytes.indices, using: &rng)] = randomByte
            case 1:
                bytes.insert(randomByte, at: Int.random(in: 0...bytes.count, using: &rng))
            case 2 where !bytes.isEmpty:
                bytes.remove(at: Int.random(in: bytes.indices, using: &rng))
            case 3:
                bytes = Array(bytes.prefix(Int.random(in: 0...bytes.count, using: &rng)))
            case 4 where !bytes.isEmpty:
                let a = Int.random(in: bytes.indices, using: &rng)
                let b = Int.random(in: a...bytes.count, using: &rng)
                bytes.insert(contentsOf: bytes[a..<b], at: Int.random(in: 0...bytes.count, using: &rng))
            case 5 where bytes.count >= 2:
                bytes.swapAt(Int.random(in: bytes.indices, using: &rng), Int.random(in: bytes.indices, using: &rng))
            default:
                break
            }
        }
        return bytes
    }

    /// Parses `bytes`; whatever happens must be well-behaved. Returns whether it was accepted.
    @discardableResult
    static func check(_ bytes: [UInt8], _ label: String) -> Bool {
        do {
            let value = try JSONParser.parse(bytes)
            // Anything accepted must survive a round trip unchanged.
            let written = value.serialized()
            let again = try JSONParser.parse(written)
            #expect(again == value, "\(label): round trip changed the value")
            #expect(again.serialized() == written, "\(label): output not stable")
            return true
        } catch {
            #expect(error.offset >= 0 && error.offset <= bytes.count, "\(label): offset \(error.offset) of \(bytes.count)")
            #expect(!error.message.isEmpty, "\(label)")
            return false
        }
    }

    @Test func mutatedDocumentsNeverCrash() {
        var rng = SeededRandom(seed: 0x5EED)
        let corpus = Self.corpus
        var accepted = 0, rejected = 0
        for iteration in 0..<6000 {
            let input = Self.mutate(corpus.randomElement(using: &rng)!, &rng)
            if Self.check(input, "mutation \(iteration)") { accepted += 1 } else { rejected += 1 }
        }
        // The mutations must exercise both outcomes substantially, or the test proves little.
        #expect(accepted > 300)
        #expect(rejected > 3000)
    }

    @Test func tokenSoupNeverCrashes() {
        var rng = SeededRandom(seed: 7)
        var accepted = 0
        for iteration in 0..<4000 {
            var text = ""
            for _ in 0..<Int.random(in: 1...12, using: &rng) { text += Self.tokens.randomElement(using: &rng)! }
            if Self.check(Array(text.utf8), "soup \(iteration) \(text.debugDescription)") { accepted += 1 }
        }
        #expect(accepted > 100)
    }

    @Test func randomBytesNeverCrash() {
        var rng = SeededRandom(seed: 99)
        for iteration in 0..<3000 {
            let n = Int.random(in: 0...64, using: &rng)
            let bytes = (0..<n).map { _ in
                Bool.random(using: &rng) ? Self.interestingBytes.randomElement(using: &rng)! : UInt8.random(in: 0...255, using: &rng)
            }
            Self.check(bytes, "random \(iteration)")
        }
    }

    @Test func everyPrefixOfAValidDocumentIsRejectedCleanly() async {
        // Truncated frames: every proper prefix of a document that ends in a container or string is
        // invalid and must fail at or before the end of the input.
        for doc in Self.corpus where [0x7D, 0x5D, 0x22].contains(doc.last) {
            await Task.yield()  // see EnginePropertyTests.sequencesCoverTheInterestingCases
            for n in 0..<doc.count {
                let prefix = Array(doc[0..<n])
                let trimmed = prefix.drop(while: { $0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09 })
                // A prefix that is itself a complete number may be valid ("12" of "123").
                if let first = trimmed.first, first == 0x2D || (0x30...0x39).contains(first) { continue }
                if Self.check(prefix, "prefix \(n) of \(String(decoding: doc, as: UTF8.self))") {
                    Issue.record("accepted a truncated document: \(String(decoding: prefix, as: UTF8.self))")
                }
            }
        }
    }
}
