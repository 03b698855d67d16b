/// `fuzz-json`: the JSON parser on arbitrary bytes.
///
/// Invariants: it never crashes or traps; a rejection names an offset inside the input and a
/// message; an accepted document survives serialization unchanged (parse ∘ serialize is the
/// identity and the output is stable); a document accepted under a lower depth limit is accepted
/// with the same value under the default one, and one rejected under the default limit is
/// rejected under every lower one.
enum JSONFuzz {
    static func run(_ bytes: UnsafeRawBufferPointer) {
        let parsed: JSONValue
        do {
            parsed = try JSONParser.parse(bytes)
        } catch {
            if error.offset < 0 || error.offset > bytes.count {
                fuzzFailure("error offset \(error.offset) outside the \(bytes.count)-byte input", input: bytes)
            }
            if error.message.isEmpty { fuzzFailure("error without a message", input: bytes) }
            // Rejected at the default depth: rejected at every lower one too.
            if let depth = bytes.first.map({ Int($0 % 8) }), (try? JSONParser.parse(bytes, maxDepth: depth)) != nil {
                fuzzFailure("accepted at maxDepth \(depth) but rejected at the default", input: bytes)
            }
            return
        }
        let written = parsed.serialized()
        let again: JSONValue
        do {
            again = try JSONParser.parse(written)
        } catch {
            fuzzFailure("its own output does not parse: \(error)", input: bytes)
        }
        if again != parsed { fuzzFailure("a round trip changed the value", input: bytes) }
        if again.serialized() != written { fuzzFailure("serialization is not stable", input: bytes) }
        if let depth = bytes.first.map({ Int($0 % 8) }), let shallow = try? JSONParser.parse(bytes, maxDepth: depth),
           shallow != parsed {
            fuzzFailure("maxDepth \(depth) gave a different value", input: bytes)
        }
    }
}
