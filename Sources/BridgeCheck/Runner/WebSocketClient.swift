import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

public struct ClientError: Error, CustomStringConvertible, Sendable {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

/// A blocking TCP connection to a loopback or named host, with reads bounded by a timeout.
final class TCPConnection {
    let fd: Int32
    var buffer: [UInt8] = []

    init(host: String, port: Int, timeout: Double) throws {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var res: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(host, String(port), &hints, &res) == 0, let first = res else {
            throw ClientError("cannot resolve \(host)")
        }
        defer { freeaddrinfo(res) }
        var lastError = "no address"
        var ai: UnsafeMutablePointer<addrinfo>? = first
        while let a = ai {
            let s = socket(a.pointee.ai_family, a.pointee.ai_socktype, a.pointee.ai_protocol)
            if s >= 0 {
                var tv = timeval(tv_sec: Int(timeout), tv_usec: Int((timeout - floor(timeout)) * 1_000_000))
                setsockopt(s, SOL_SOCKET, SO_SNDTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
                if connect(s, a.pointee.ai_addr, a.pointee.ai_addrlen) == 0 {
                    fd = s
                    return
                }
                lastError = String(cString: strerror(errno))
                close(s)
            }
            ai = a.pointee.ai_next
        }
        throw ClientError("cannot connect to \(host):\(port): \(lastError)")
    }

    deinit { close(fd) }

    func write(_ bytes: [UInt8]) throws {
        var off = 0
        while off < bytes.count {
            let n = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress! + off, bytes.count - off, Int32(MSG_NOSIGNAL)) }
            if n <= 0 { throw ClientError("the connection closed while writing") }
            off += n
        }
    }

    /// Reads more bytes into the buffer; false on timeout.
    func fill(timeout: Double) throws -> Bool {
        var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        let r = poll(&p, 1, Int32(max(0, timeout * 1000)))
        if r == 0 { return false }
        if r < 0 { if errno == EINTR { return false }; throw ClientError("poll failed") }
        var chunk = [UInt8](repeating: 0, count: 65536)
        let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress!, 65536, 0) }
        if n <= 0 { throw ClientError("the connection closed") }
        buffer += chunk[0..<n]
        return true
    }
}

/// A minimal WebSocket client (RFC 6455): text frames out (masked), text frames in, pings
/// answered, a close ends it.
/// The bytes of one frame a WebSocket client sends (RFC 6455: FIN set, masked with a random key),
/// for every client in this package and the command line.
public enum WebSocketFrame {
    public static func client(opcode: UInt8, _ payload: [UInt8]) -> [UInt8] {
        var f: [UInt8] = [0x80 | opcode]
        let n = payload.count
        if n < 126 {
            f.append(0x80 | UInt8(n))
        } else if n < 65536 {
            f.append(0x80 | 126); f.append(UInt8(n >> 8)); f.append(UInt8(n & 255))
        } else {
            f.append(0x80 | 127)
            for s in stride(from: 56, through: 0, by: -8) { f.append(UInt8((UInt64(n) >> UInt64(s)) & 255)) }
        }
        let mask = (0..<4).map { _ in UInt8.random(in: 0...255) }
        f += mask
        for (i, b) in payload.enumerated() { f.append(b ^ mask[i & 3]) }
        return f
    }
}

final class WebSocketClient {
    let tcp: TCPConnection

    init(host: String, port: Int, path: String, timeout: Double = 10) throws {
        tcp = try TCPConnection(host: host, port: port, timeout: timeout)
        var key = [UInt8](repeating: 0, count: 16)
        for i in key.indices { key[i] = UInt8.random(in: 0...255) }
        let request = "GET \(path) HTTP/1.1\r\nHost: \(host):\(port)\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: \(Data(key).base64EncodedString())\r\nSec-WebSocket-Version: 13\r\n\r\n"
        try tcp.write(Array(request.utf8))
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            if let end = find(tcp.buffer, Array("\r\n\r\n".utf8)) {
                let head = String(decoding: tcp.buffer[0..<end], as: UTF8.self)
                tcp.buffer.removeFirst(end + 4)
                guard head.hasPrefix("HTTP/1.1 101") else { throw ClientError("the daemon refused the WebSocket: \(head.prefix(80))") }
                return
            }
            let left = deadline.timeIntervalSinceNow
            if left <= 0 { throw ClientError("no WebSocket handshake reply") }
            _ = try tcp.fill(timeout: left)
        }
    }

    func find(_ hay: [UInt8], _ needle: [UInt8]) -> Int? {
        guard hay.count >= needle.count else { return nil }
        for i in 0...(hay.count - needle.count) where hay[i] == needle[0] && Array(hay[i..<(i + needle.count)]) == needle { return i }
        return nil
    }

    func send(_ text: String) throws {
        try sendFrame(opcode: 1, Array(text.utf8))
    }

    func sendFrame(opcode: UInt8, _ payload: [UInt8]) throws {
        try tcp.write(WebSocketFrame.client(opcode: opcode, payload))
    }

    /// The next text message, or nil after `timeout` seconds without one.
    func receive(timeout: Double) throws -> String? {
        let deadline = Date().addingTimeInterval(timeout)
        var message: [UInt8] = []
        while true {
            if let (fin, opcode, payload, used) = parseFrame() {
                tcp.buffer.removeFirst(used)
                switch opcode {
                case 0x9: try sendFrame(opcode: 0xA, payload)
                case 0xA: break
                case 0x8: throw ClientError("the daemon closed the connection")
                default:
                    message += payload
                    if fin { return String(decoding: message, as: UTF8.self) }
                }
                continue
            }
            let left = deadline.timeIntervalSinceNow
            if left <= 0 { return nil }
            _ = try tcp.fill(timeout: left)
        }
    }

    func parseFrame() -> (Bool, UInt8, [UInt8], Int)? {
        let b = tcp.buffer
        guard b.count >= 2 else { return nil }
        let fin = b[0] & 0x80 != 0, opcode = b[0] & 0x0F
        var len = Int(b[1] & 0x7F), off = 2
        if len == 126 {
            guard b.count >= 4 else { return nil }
            len = Int(b[2]) << 8 | Int(b[3]); off = 4
        } else if len == 127 {
            guard b.count >= 10 else { return nil }
            len = 0
            for i in 2..<10 { len = len << 8 | Int(b[i]) }
            off = 10
        }
        guard b.count >= off + len else { return nil }
        return (fin, opcode, Array(b[off..<(off + len)]), off + len)
    }
}

/// A plain HTTP GET, to tell "page unreachable" before starting a browser.
enum HTTPProbe {
    /// nil when the server answered (any status); else why it could not be reached.
    static func unreachable(_ url: String, timeout: Double = 10) -> String? {
        guard let u = URL(string: url), let host = u.host, let scheme = u.scheme else { return "\(url) is not a URL" }
        let port = u.port ?? (scheme == "https" ? 443 : 80)
        do {
            let c = try TCPConnection(host: host, port: port, timeout: timeout)
            if scheme == "https" { return nil }  // a TLS server listening there is reachable enough
            let path = u.path.isEmpty ? "/" : u.path + (u.query.map { "?" + $0 } ?? "")
            try c.write(Array("GET \(path) HTTP/1.1\r\nHost: \(host):\(port)\r\nConnection: close\r\n\r\n".utf8))
            let deadline = Date().addingTimeInterval(timeout)
            while c.buffer.count < 12 {
                let left = deadline.timeIntervalSinceNow
                if left <= 0 { return "\(url) did not answer within \(Int(timeout)) s" }
                _ = try c.fill(timeout: left)
            }
            let status = String(decoding: c.buffer.prefix(12), as: UTF8.self)
            guard status.hasPrefix("HTTP/") else { return "\(url) does not speak HTTP" }
            let code = Int(status.dropFirst(9).prefix(3)) ?? 0
            if code >= 400 { return "\(url) answered HTTP \(code)" }
            return nil
        } catch {
            return "\(url) is unreachable: \((error as? ClientError)?.message ?? "\(error)")"
        }
    }
}

/// Checks done before a browser is started.
public enum CheckPreflight {
    /// nil when the page's server answered; else why it could not be reached.
    public static func unreachable(_ url: String) -> String? { HTTPProbe.unreachable(url) }
}
