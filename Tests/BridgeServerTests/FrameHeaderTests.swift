@testable import BridgeServer
import Testing

/// The server's frame header writer at the length encodings' boundaries (RFC 6455 §5.2).
@Suite struct FrameHeaderTests {
    func header(_ n: Int) -> [UInt8] {
        var bytes = [UInt8](repeating: 0xEE, count: 12)
        let size = bytes.withUnsafeMutableBufferPointer { Transport.writeFrameHeader($0.baseAddress!, payloadLength: n) }
        #expect(size == Transport.frameHeaderSize(payloadLength: n))
        #expect(bytes[size...].allSatisfy { $0 == 0xEE }, "wrote past its size")
        return Array(bytes[..<size])
    }

    @Test func sevenBitLengthsUpTo125() {
        #expect(header(0) == [0x81, 0])
        #expect(header(1) == [0x81, 1])
        #expect(header(125) == [0x81, 125])
    }

    @Test func sixteenBitLengthsFrom126To65535() {
        #expect(header(126) == [0x81, 126, 0x00, 126])
        #expect(header(255) == [0x81, 126, 0x00, 0xFF])
        #expect(header(256) == [0x81, 126, 0x01, 0x00])
        #expect(header(65_535) == [0x81, 126, 0xFF, 0xFF])
    }

    @Test func sixtyFourBitLengthsFrom65536() {
        #expect(header(65_536) == [0x81, 127, 0, 0, 0, 0, 0, 1, 0, 0])
        #expect(header(1 << 32) == [0x81, 127, 0, 0, 0, 1, 0, 0, 0, 0])
        #expect(header(0x0102_0304_0506) == [0x81, 127, 0, 0, 1, 2, 3, 4, 5, 6])
    }

    @Test func neverMasked() {
        for n in [0, 125, 126, 65_535, 65_536] { #expect(header(n)[1] & 0x80 == 0) }
    }
}
