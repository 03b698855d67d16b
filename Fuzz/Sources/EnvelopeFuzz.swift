/// `fuzz-envelope`: the request fast path against the general parser.
///
/// `FastRequest.parse` takes the common request frames without building a `JSONValue` for the
/// envelope; whenever it accepts a frame, the general path (`Frame.classifyGeneral`: the JSON
/// parser and the envelope checks) must reach the same verdict with the same id, method (its
/// name, and the `BridgeMethod` matched from the frame's bytes against `init(name:)`'s) and
/// params, members in the same order. `Frame.classify` (what the daemon calls) must agree with the
/// general path on every input.
enum EnvelopeFuzz {
    static func describe(_ r: Result<Frame, Frame.Failure>) -> String {
        switch r {
        case .success(.request(let id, let method, let name, let params)):
            return "request \(id) \(name.debugDescription) \(method.map { "\($0)" } ?? "unknown") " + JSONValue.object(params).jsonString
        case .success(.event(let name, let params)):
            return "event \(name.debugDescription) " + JSONValue.object(params).jsonString
        case .failure(let f):
            return "failure \(String(describing: f.id)) \(f.error.code) event=\(f.isEvent)"
        }
    }

    static func run(_ bytes: UnsafeRawBufferPointer) {
        let general = Frame.classifyGeneral(bytes)
        if let fast = FastRequest.parse(bytes) {
            let a = describe(.success(fast)), b = describe(general)
            if a != b { fuzzFailure("fast path: \(a)\ngeneral path: \(b)", input: bytes) }
            if case .request(_, _, _, let p) = fast, case .success(.request(_, _, _, let q)) = general,
               JSONValue.object(p).serialized() != JSONValue.object(q).serialized() {
                fuzzFailure("params differ in member order", input: bytes)
            }
        }
        let classified = describe(Frame.classify(bytes)), expected = describe(general)
        if classified != expected { fuzzFailure("classify: \(classified)\ngeneral: \(expected)", input: bytes) }
    }
}
