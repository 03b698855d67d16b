/// Secrets: session ids and tokens from the injected generator, and comparing tokens.
extension Bridge {

    mutating func randomHex(bytes: Int) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(bytes * 2)
        var remaining = bytes
        while remaining > 0 {
            var word = rng.next()
            for _ in 0..<min(8, remaining) {
                out.append(digits[Int(word & 15)])
                out.append(digits[Int((word >> 4) & 15)])
                word >>= 8
            }
            remaining -= 8
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Equal strings, compared in time that depends on the lengths only.
    static func constantTimeEquals(_ a: String, _ b: String) -> Bool {
        let x = Array(a.utf8), y = Array(b.utf8)
        var diff: UInt8 = x.count == y.count ? 0 : 1
        for i in 0..<max(x.count, y.count) {
            diff |= (i < x.count ? x[i] : 0) ^ (i < y.count ? y[i] : 0)
        }
        return diff == 0
    }
}
