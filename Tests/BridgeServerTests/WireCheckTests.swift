#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import CWireCheck
import XCTest

/// The byte-stream checks behind unmasked-frame and oversized-head handling (Sources/CWireCheck):
/// the scanners fed the same streams cut at every boundary and at random ones, and the `recv`
/// interposer on a socket pair.
final class WireCheckTests: XCTestCase {
    // MARK: - Building streams

    static func frame(_ opcode: UInt8, _ payload: [UInt8], fin: Bool = true, masked: Bool = true) -> [UInt8] {
        var out: [UInt8] = [(fin ? 0x80 : 0) | opcode]
        let bit: UInt8 = masked ? 0x80 : 0
        let n = payload.count
        if n < 126 {
            out.append(bit | UInt8(n))
        } else if n < 65536 {
            out += [bit | 126, UInt8(n >> 8), UInt8(n & 0xFF)]
        } else {
            out.append(bit | 127)
            for i in (0..<8).reversed() { out.append(UInt8(truncatingIfNeeded: UInt64(n) >> (8 * UInt64(i)))) }
        }
        guard masked else { return out + payload }
        // A key whose bytes look like frame headers, unmasked (0x01 text, 0x81 FIN+text).
        let key: [UInt8] = [0x81, 0x01, 0x7E, 0x00]
        out += key
        for (i, b) in payload.enumerated() { out.append(b ^ key[i % 4]) }
        return out
    }

    /// Masked frames: every length encoding at its edges, a fragmented message with control
    /// frames between the fragments, a close.
    static let validStream: [UInt8] = {
        var s: [UInt8] = []
        for n in [0, 1, 125, 126, 127, 65535, 65536] {
            s += frame(0x1, [UInt8](repeating: 0x81, count: n))  // payload bytes that look like headers
        }
        s += frame(0x1, Array("{\"id\":1,".utf8), fin: false)
        s += frame(0x9, Array("ping".utf8))
        s += frame(0x0, [UInt8](repeating: 0x20, count: 300), fin: false)
        s += frame(0xA, [])
        s += frame(0x0, Array("\"method\":\"ping\"}".utf8))
        s += frame(0x2, [1, 2, 3])
        s += frame(0x8, [0x03, 0xE8])
        return s
    }()

    /// Feeds `stream` in pieces ending at `cuts` (ascending, within the stream). Returns the bytes
    /// the scanner let through and whether it failed.
    static func scanFrames(_ stream: [UInt8], cuts: [Int]) -> (passed: Int, failed: Bool) {
        var state = bridged_wire_state_t()
        state.phase = UInt8(BRIDGED_WIRE_FRAMES)
        var start = 0
        return stream.withUnsafeBufferPointer { buf in
            for end in cuts + [stream.count] where end > start {
                let n = bridged_wire_scan_frames(&state, buf.baseAddress! + start, end - start)
                if state.phase == UInt8(BRIDGED_WIRE_FAILED) { return (start + n, true) }
                XCTAssertEqual(n, end - start)
                start = end
            }
            return (start, false)
        }
    }

    static func randomCuts(_ count: Int, _ rng: inout WireSplitMix) -> [Int] {
        var cuts: Set<Int> = []
        let pieces = Int(rng.next() % 40) + 1
        for _ in 0..<pieces { cuts.insert(Int(rng.next() % UInt64(count))) }
        return cuts.sorted()
    }

    // MARK: - Frames

    func testAValidStreamIsNeverFlaggedWhereverItIsCut() {
        let s = Self.validStream
        XCTAssertEqual(Self.scanFrames(s, cuts: []).failed, false)
        for cut in 0...s.count {  // every single boundary
            let r = Self.scanFrames(s, cuts: [cut])
            XCTAssertFalse(r.failed, "cut at \(cut)")
            XCTAssertEqual(r.passed, s.count)
        }
        for size in 1...16 {  // every piece size up to a whole long header
            let r = Self.scanFrames(s, cuts: Array(stride(from: size, to: s.count, by: size)))
            XCTAssertFalse(r.failed, "pieces of \(size)")
        }
        var rng = WireSplitMix(seed: 6455)
        for _ in 0..<500 {
            let cuts = Self.randomCuts(s.count, &rng)
            XCTAssertFalse(Self.scanFrames(s, cuts: cuts).failed, "cuts \(cuts)")
        }
    }

    func testTheFirstUnmaskedFrameIsAlwaysFlagged() {
        let bad: [(String, [UInt8])] = [
            ("text", Self.frame(0x1, Array("{\"id\":2}".utf8), masked: false)),
            ("empty text", Self.frame(0x1, [], masked: false)),
            ("16-bit text", Self.frame(0x1, [UInt8](repeating: 0x20, count: 126), masked: false)),
            ("64-bit binary", Self.frame(0x2, [UInt8](repeating: 0, count: 65536), masked: false)),
            ("ping", Self.frame(0x9, Array("hi".utf8), masked: false)),
            ("close", Self.frame(0x8, [0x03, 0xE8], masked: false)),
            ("continuation", Self.frame(0x0, Array("x".utf8), masked: false)),
        ]
        // Small valid frames before the bad one, so that every cut is cheap to try; then a large one.
        let prefixes: [[UInt8]] = [
            [],
            Self.frame(0x1, Array("{\"id\":1}".utf8)) + Self.frame(0x9, []) + Self.frame(0x1, [0x20], fin: false),
            Self.frame(0x1, [UInt8](repeating: 0x81, count: 70000)),
        ]
        let after = Self.frame(0x1, Array("later".utf8))  // masked, after the bad one: never reached
        var rng = WireSplitMix(seed: 1002)
        for (name, badFrame) in bad {
            for prefix in prefixes {
                let stream = prefix + badFrame + after
                let badStart = prefix.count
                func expect(_ cuts: [Int], _ why: String) {
                    let r = Self.scanFrames(stream, cuts: cuts)
                    XCTAssertTrue(r.failed, "\(name): \(why)")
                    // Everything before the bad frame passes; if the bad frame's first byte ended
                    // a piece, it has passed too (it was read before the mask bit was seen).
                    let split = cuts.contains(badStart + 1)
                    XCTAssertEqual(r.passed, split ? badStart + 1 : badStart, "\(name): \(why)")
                }
                expect([], "whole")
                if prefix.count < 1000 {
                    for cut in 0...stream.count { expect([cut], "cut at \(cut)") }
                    expect(Array(1..<stream.count), "byte by byte")
                } else {
                    for cut in (badStart - 20)...(badStart + 20) { expect([cut], "cut at \(cut)") }
                }
                for _ in 0..<100 { let c = Self.randomCuts(stream.count, &rng); expect(c, "cuts \(c)") }
            }
        }
    }

    // MARK: - Heads

    static func scanHead(_ bytes: [UInt8], cuts: [Int], limit: UInt32 = 8192) -> (consumed: Int, phase: Int) {
        var state = bridged_wire_state_t()
        state.phase = UInt8(BRIDGED_WIRE_HEAD)
        var start = 0
        return bytes.withUnsafeBufferPointer { buf in
            for end in cuts + [bytes.count] where end > start {
                let n = bridged_wire_scan_head(&state, buf.baseAddress! + start, end - start, limit)
                if n < 0 { return (start, Int(state.phase)) }
                if state.phase != UInt8(BRIDGED_WIRE_HEAD) { return (start + n, Int(state.phase)) }
                start = end
            }
            return (start, Int(state.phase))
        }
    }

    func testAHeadEndsAtItsBlankLineWhereverItIsCut() {
        let head = Array("GET /bridge HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\n\r\n".utf8)
        let stream = head + Self.frame(0x1, Array("\r\n\r\n".utf8))  // bytes after the head
        for cut in 0...stream.count {
            let r = Self.scanHead(stream, cuts: [cut])
            XCTAssertEqual(r.phase, BRIDGED_WIRE_AFTER_HEAD, "cut at \(cut)")
            XCTAssertEqual(r.consumed, head.count, "cut at \(cut)")
        }
        XCTAssertEqual(Self.scanHead(stream, cuts: Array(1..<stream.count)).consumed, head.count)
        // Bare line feeds end it too (so a head libwebsockets accepts is never counted on).
        for text in ["GET / HTTP/1.1\nHost: x\n\nREST", "GET / HTTP/1.1\r\nHost: x\n\r\nREST"] {
            let r = Self.scanHead(Array(text.utf8), cuts: [])
            XCTAssertEqual(r.phase, BRIDGED_WIRE_AFTER_HEAD)
            XCTAssertEqual(r.consumed, text.utf8.count - 4)
        }
        // A CR alone is no line end.
        XCTAssertEqual(Self.scanHead(Array("GET / HTTP/1.1\r\r\r\rHost".utf8), cuts: []).phase, BRIDGED_WIRE_HEAD)
    }

    func testAHeadOverTheLimitIsRefusedAndOneAtTheLimitIsNot() {
        func head(_ size: Int) -> [UInt8] {
            let start = Array("GET / HTTP/1.1\r\nUser-Agent: ".utf8), end = Array("\r\n\r\n".utf8)
            return start + [UInt8](repeating: 0x61, count: size - start.count - end.count) + end
        }
        for cuts in [[], [100], [8191], [8192], Array(stride(from: 1000, to: 70000, by: 1000))] {
            XCTAssertEqual(Self.scanHead(head(8192), cuts: cuts).phase, BRIDGED_WIRE_AFTER_HEAD, "\(cuts)")
            for size in [8193, 16384, 65536] {
                let r = Self.scanHead(head(size), cuts: cuts)
                XCTAssertEqual(r.phase, BRIDGED_WIRE_REFUSED, "\(size) \(cuts)")
            }
        }
        XCTAssertEqual(Self.scanHead(head(100), cuts: [], limit: 99).phase, BRIDGED_WIRE_REFUSED)
        XCTAssertEqual(Self.scanHead(head(100), cuts: [], limit: 100).phase, BRIDGED_WIRE_AFTER_HEAD)
    }

    // MARK: - The interposer on a socket pair

    private func pair() -> (Int32, Int32) {
        var fds: [Int32] = [0, 0]
        #if canImport(Glibc)
        XCTAssertEqual(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &fds), 0)
        #else
        XCTAssertEqual(socketpair(AF_UNIX, SOCK_STREAM, 0, &fds), 0)
        #endif
        let flags = fcntl(fds[0], F_GETFL)
        _ = fcntl(fds[0], F_SETFL, flags | O_NONBLOCK)
        return (fds[0], fds[1])
    }

    private func put(_ fd: Int32, _ bytes: [UInt8]) {
        XCTAssertEqual(bytes.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, 0) }, bytes.count)
    }

    private func take(_ fd: Int32, _ max: Int = 65536) -> (Int, [UInt8]) {
        var buf = [UInt8](repeating: 0, count: max)
        let n = buf.withUnsafeMutableBytes { recv(fd, $0.baseAddress, max, 0) }
        return (n, n > 0 ? Array(buf[0..<n]) : [])
    }

    func testTheInterposerStopsAtTheHeadThenFlagsAnUnmaskedFrame() {
        let (server, client) = pair()
        defer { _ = close(server); _ = close(client) }
        bridged_wire_track(server)
        XCTAssertEqual(Int(bridged_wire_phase(server)), BRIDGED_WIRE_HEAD)
        let head = Array("GET /bridge HTTP/1.1\r\nHost: x\r\n\r\n".utf8)
        let good = Self.frame(0x1, Array("{}".utf8)), bad = Self.frame(0x1, Array("{}".utf8), masked: false)
        put(client, head + good + good + bad + good)
        XCTAssertEqual(take(server).1, head)  // nothing after the head
        XCTAssertEqual(Int(bridged_wire_phase(server)), BRIDGED_WIRE_AFTER_HEAD)
        bridged_wire_established(server, nil, 1)
        XCTAssertEqual(take(server).1, good + good)  // only the frames before the unmasked one
        XCTAssertEqual(Int(bridged_wire_phase(server)), BRIDGED_WIRE_FAILED)
        put(client, good)
        let (n, _) = take(server)  // dropped: "try again"
        XCTAssertEqual(n, -1)
        XCTAssertEqual(errno, EAGAIN)
        bridged_wire_closing(server)
        XCTAssertEqual(take(server).0, 0)  // the end, once our close is out
        XCTAssertEqual(Int(bridged_wire_phase(server)), BRIDGED_WIRE_UNTRACKED)
    }

    func testTheInterposerAnswersAnOversizedHeadWith431() {
        let (server, client) = pair()
        defer { _ = close(server); _ = close(client) }
        bridged_wire_track(server)
        put(client, Array("GET / HTTP/1.1\r\nUser-Agent: ".utf8) + [UInt8](repeating: 0x61, count: 9000))
        var passed = 0
        while true {
            let (n, _) = take(server, 4096)
            if n < 0 { break }
            passed += n
        }
        XCTAssertLessThanOrEqual(passed, 8192)
        XCTAssertEqual(Int(bridged_wire_phase(server)), BRIDGED_WIRE_REFUSED)
        var answer: [UInt8] = []
        while true {
            let (n, bytes) = take(client)
            if n <= 0 { break }
            answer += bytes
        }
        let text = String(decoding: answer, as: UTF8.self)
        XCTAssertTrue(text.hasPrefix("HTTP/1.1 431 Request Header Fields Too Large\r\n"), text)
        let parts = text.components(separatedBy: "\r\n\r\n")
        XCTAssertEqual(parts.count, 2)
        XCTAssertTrue(text.contains("Content-Length: \(parts[1].utf8.count)\r\n"), text)
    }

    func testPlainRequestsOnAKeptAliveConnectionAreFollowedAndCloseEndsTheState() {
        let (server, client) = pair()
        defer { _ = close(client) }
        bridged_wire_track(server)
        let first = Array("GET /a HTTP/1.1\r\nContent-Length: 5\r\n\r\n".utf8), body = Array("hello".utf8)
        let second = Array("GET /b HTTP/1.1\r\n\r\n".utf8)
        put(client, first + body + second)
        XCTAssertEqual(take(server).1, first)
        bridged_wire_http_request(server, 5)
        XCTAssertEqual(Int(bridged_wire_phase(server)), BRIDGED_WIRE_BODY)
        XCTAssertEqual(take(server).1, body)  // the body and no more
        XCTAssertEqual(Int(bridged_wire_phase(server)), BRIDGED_WIRE_HEAD)
        XCTAssertEqual(take(server).1, second)
        // A read the transport did not announce: no longer followed (never a false alarm).
        put(client, Self.frame(0x1, [], masked: false))
        XCTAssertEqual(take(server).0, 2)
        XCTAssertEqual(Int(bridged_wire_phase(server)), BRIDGED_WIRE_UNTRACKED)
        bridged_wire_track(server)
        _ = close(server)
        XCTAssertEqual(Int(bridged_wire_phase(server)), BRIDGED_WIRE_UNTRACKED)
    }

    func testUntrackedDescriptorsAndPeeksPassThrough() {
        let (server, client) = pair()
        defer { _ = close(server); _ = close(client) }
        let bad = Self.frame(0x1, Array("{}".utf8), masked: false)
        put(client, bad)
        XCTAssertEqual(take(server).1, bad)
        bridged_wire_track(server)
        put(client, bad)
        var buf = [UInt8](repeating: 0, count: 64)
        let n = buf.withUnsafeMutableBytes { recv(server, $0.baseAddress, 64, Int32(MSG_PEEK)) }
        XCTAssertEqual(n, bad.count)
        XCTAssertEqual(Int(bridged_wire_phase(server)), BRIDGED_WIRE_HEAD)
    }
}

/// A small deterministic generator (tests need reproducible cuts).
struct WireSplitMix {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
