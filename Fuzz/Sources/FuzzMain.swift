// The libFuzzer entry points of bridged's fuzz targets. All targets are linked into one binary
// together with BridgeProtocol's sources (one module, so internals such as the request fast path
// are reachable); the target is chosen by the name the binary is run under (`fuzz-json`,
// `fuzz-envelope`, `fuzz-bridge`: links made by `make fuzz-build`), or by BRIDGED_FUZZ_TARGET.
//
// A target's invariant that fails calls `fuzzFailure`, which aborts: libFuzzer then saves the
// input as crash-*, and `./.build-fuzz/fuzz-NAME crash-…` replays it.

#if canImport(Glibc)
import Glibc
#endif

enum FuzzTarget: String, CaseIterable {
    case json, envelope, bridge

    func run(_ bytes: UnsafeRawBufferPointer) {
        switch self {
        case .json: JSONFuzz.run(bytes)
        case .envelope: EnvelopeFuzz.run(bytes)
        case .bridge: BridgeFuzz.run(bytes)
        }
    }
}

nonisolated(unsafe) var selectedTarget: FuzzTarget = .json

func fuzzFailure(_ message: String, input: UnsafeRawBufferPointer? = nil) -> Never {
    var text = "fuzz-\(selectedTarget.rawValue): invariant broken: \(message)\n"
    if let input {
        text += "input (\(input.count) bytes): \(String(decoding: input.prefix(400), as: UTF8.self).debugDescription)\n"
    }
    _ = text.withCString { write(2, $0, strlen($0)) }
    abort()
}

@_cdecl("LLVMFuzzerInitialize")
public func fuzzInitialize(_ argc: UnsafeMutablePointer<CInt>, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>>) -> CInt {
    var name = ""
    if let env = getenv("BRIDGED_FUZZ_TARGET") {
        name = String(cString: env)
    } else if let first = argv.pointee[0] {
        let program = String(cString: first)
        name = String(program.split(separator: "/").last ?? "")
        if name.hasPrefix("fuzz-") { name.removeFirst(5) }
    }
    guard let target = FuzzTarget(rawValue: name) else {
        let known = FuzzTarget.allCases.map { "fuzz-\($0.rawValue)" }.joined(separator: ", ")
        let text = "run this binary as one of \(known) (links made by `make fuzz-build`), or set BRIDGED_FUZZ_TARGET\n"
        _ = text.withCString { write(2, $0, strlen($0)) }
        exit(2)
    }
    selectedTarget = target
    return 0
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = UnsafeRawBufferPointer(start: size == 0 ? nil : UnsafeRawPointer(data), count: size)
    selectedTarget.run(bytes)
    return 0
}
