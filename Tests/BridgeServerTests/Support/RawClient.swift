#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

enum RawClientError: Error, Equatable {
    case connect(Int32)
    case handshake(String)
    case closed
    case timeout
}

/// A minimal blocking WebSocket client over a plain TCP socket (tests only): handshake, masked
/// frames out (zero key), frames in one by one. Reads time out after `timeoutSeconds`.
final class RawClient {
    struct Frame {
        var fin: Bool
        var opcode: UInt8
        var payload: [UInt8]
        var text: String { String(decoding: payload, as: UTF8.self) }
        var closeCode: UInt16? {
            opcode == 8 && payload.count >= 2 ? UInt16(payload[0]) << 8 | UInt16(payload[1]) : nil
        }
    }

    let fd: Int32
    private var buffer: [UInt8] = []

    init(port: Int, path: String = "/bridge", origin: String? = nil, receiveBuffer: Int32? = nil,
         timeoutSeconds: Int = 10) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        if let receiveBuffer {
            var size = receiveBuffer
            setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        }
        var tv = timeval(tv_sec: timeoutSeconds, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_port = in_port_t(UInt16(port).bigEndian)
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        let rc = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        if rc != 0 {
            let e = errno
            Glibc.close(fd)
            throw RawClientError.connect(e)
        }
        var request = "GET \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nUpgrade: websocket\r\n"
            + "Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
        if let origin { request += "Origin: \(origin)\r\n" }
        request += "\r\n"
        try writeAll(Array(request.utf8))
        // Read the response head.
        while true {
            if let end = findHeaderEnd() {
                let head = String(decoding: buffer[0..<end], as: UTF8.self)
                buffer.removeFirst(end + 4)
                guard head.hasPrefix("HTTP/1.1 101") else { throw RawClientError.handshake(head) }
                break
            }
            try fill()
        }
    }

    deinit { Glibc.close(fd) }

    private func findHeaderEnd() -> Int? {
        guard buffer.count >= 4 else { return nil }
        for i in 0...(buffer.count - 4) where buffer[i] == 13 && buffer[i + 1] == 10 && buffer[i + 2] == 13 && buffer[i + 3] == 10 {
            return i
        }
        return nil
    }

    private func fill() throws {
        var chunk = [UInt8](repeating: 0, count: 65536)
        let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        if n == 0 { throw RawClientError.closed }
        if n < 0 { throw errno == EAGAIN || errno == EWOULDBLOCK ? RawClientError.timeout : RawClientError.closed }
        buffer.append(contentsOf: chunk[0..<n])
    }

    func writeAll(_ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeBytes { send(fd, $0.baseAddress! + offset, $0.count - offset, Int32(MSG_NOSIGNAL)) }
            if n <= 0 { throw RawClientError.closed }
            offset += n
        }
    }

    func sendFrame(opcode: UInt8, _ payload: [UInt8], fin: Bool = true) throws {
        var frame: [UInt8] = [(fin ? 0x80 : 0) | opcode]
        if payload.count < 126 {
            frame.append(0x80 | UInt8(payload.count))
        } else if payload.count < 65536 {
            frame += [0x80 | 126, UInt8(payload.count >> 8), UInt8(payload.count & 0xFF)]
        } else {
            frame.append(0x80 | 127)
            for shift in stride(from: 56, through: 0, by: -8) { frame.append(UInt8((payload.count >> shift) & 0xFF)) }
        }
        frame += [0, 0, 0, 0]  // zero masking key
        try writeAll(frame + payload)
    }

    func sendText(_ text: String) throws { try sendFrame(opcode: 1, Array(text.utf8)) }

    func sendClose(code: UInt16) throws { try sendFrame(opcode: 8, [UInt8(code >> 8), UInt8(code & 0xFF)]) }

    private func take(_ n: Int) throws -> [UInt8] {
        while buffer.count < n { try fill() }
        let out = Array(buffer[0..<n])
        buffer.removeFirst(n)
        return out
    }

    func readFrame() throws -> Frame {
        let head = try take(2)
        var length = Int(head[1] & 0x7F)
        if length == 126 {
            let b = try take(2)
            length = Int(b[0]) << 8 | Int(b[1])
        } else if length == 127 {
            length = try take(8).reduce(0) { $0 << 8 | Int($1) }
        }
        return Frame(fin: head[0] & 0x80 != 0, opcode: head[0] & 0x0F, payload: try take(length))
    }

    /// The next data message with its fragments joined (control frames other than close are
    /// skipped). Returns the close frame itself if one comes first.
    func readMessage() throws -> (frames: Int, message: Frame) {
        var joined: Frame?
        var frames = 0
        while true {
            let f = try readFrame()
            if f.opcode == 8 { return (frames, f) }
            if f.opcode >= 8 { continue }
            frames += 1
            if joined == nil { joined = f } else { joined!.payload += f.payload }
            if f.fin { joined!.fin = true; return (frames, joined!) }
        }
    }

    /// Reads (and drops) everything up to the close frame; returns its code.
    func readUntilClose() throws -> UInt16? {
        while true {
            let f = try readFrame()
            if f.opcode == 8 { return f.closeCode }
        }
    }
}
