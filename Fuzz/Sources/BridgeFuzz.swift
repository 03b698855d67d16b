/// `fuzz-bridge`: placeholder until written against the Bridge API.
enum BridgeFuzz {
    static func run(_ bytes: UnsafeRawBufferPointer) {}
}
