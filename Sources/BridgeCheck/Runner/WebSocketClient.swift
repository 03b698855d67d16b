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

/// A blocking TCP connection, connected within a deadline (a non-blocking connect polled), with
/// reads and writes bounded by timeouts.
final class TCPConnection {
    let fd: Int32
    var buffer: [UInt8] = []

    /// Monotonic milliseconds.
    static func nowMs() -> Int64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Int64(ts.tv_sec) * 1000 + Int64(ts.tv_nsec) / 1_000_000
    }

    init(host: String, port: Int, timeout: Double) throws(ClientError) {
        let deadline = Self.nowMs() + Int64(timeout * 1000)
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var res: UnsafeMutablePointer<addrinfo>?
        let rc = getaddrinfo(host, String(port), &hints, &res)
        guard rc == 0, let first = res else {
            throw ClientError("cannot resolve '\(host)': \(String(cString: gai_strerror(rc)))")
        }
        defer { freeaddrinfo(res) }
        var lastError = "no address"
        var ai: UnsafeMutablePointer<addrinfo>? = first
        while let a = ai {
            ai = a.pointee.ai_next
            let s = socket(a.pointee.ai_family, a.pointee.ai_socktype, a.pointee.ai_protocol)
            if s < 0 { lastError = String(cString: strerror(errno)); continue }
            let flags = fcntl(s, F_GETFL, 0)
            _ = fcntl(s, F_SETFL, flags | O_NONBLOCK)
            var r = connect(s, a.pointee.ai_addr, a.pointee.ai_addrlen)
            if r != 0 && errno == EINPROGRESS {
                var p = pollfd(fd: s, events: Int16(POLLOUT), revents: 0)
                if poll(&p, 1, Int32(clamping: max(0, deadline - Self.nowMs()))) == 1 {
                    var err: Int32 = 0
                    var len = socklen_t(MemoryLayout<Int32>.size)
                    getsockopt(s, SOL_SOCKET, SO_ERROR, &err, &len)
                    r = err == 0 ? 0 : -1
                    errno = err
                } else {
                    r = -1
                    errno = ETIMEDOUT
                }
            }
            if r == 0 {
                fd = s
                return
            }
            lastError = errno == ETIMEDOUT ? "timed out" : String(cString: strerror(errno))
            _ = Glibc.close(s)
        }
        throw ClientError("cannot connect to \(host):\(port): \(lastError)")
    }

    deinit { _ = Glibc.close(fd) }

    func write(_ bytes: [UInt8], timeout: Double) throws(ClientError) {
        let deadline = Self.nowMs() + Int64(timeout * 1000)
        var off = 0
        while off < bytes.count {
            let n = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress! + off, bytes.count - off, Int32(MSG_NOSIGNAL)) }
            if n > 0 { off += n; continue }
            if n < 0 && (errno == EAGAIN || errno == EINTR) {
                let left = deadline - Self.nowMs()
                if left <= 0 { throw ClientError("timed out while sending") }
                var p = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
                _ = poll(&p, 1, Int32(clamping: left))
                continue
            }
            throw ClientError("the connection closed while sending (\(String(cString: strerror(errno))))")
        }
    }

    /// Reads more bytes into the buffer; false on timeout.
    func fill(timeout: Double) throws(ClientError) -> Bool {
        var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        let r = poll(&p, 1, Int32(clamping: Int64(max(0, timeout * 1000))))
        if r == 0 { return false }
        if r < 0 { if errno == EINTR { return false }; throw ClientError("poll failed: \(String(cString: strerror(errno)))") }
        var chunk = [UInt8](repeating: 0, count: 65536)
        let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress!, 65536, 0) }
        if n == 0 { throw ClientError("the connection closed") }
        if n < 0 {
            if errno == EAGAIN || errno == EINTR { return false }
            throw ClientError("connection lost (\(String(cString: strerror(errno))))")
        }
        buffer += chunk[0..<n]
        return true
    }
}

/// The bytes of one frame a WebSocket client sends (RFC 6455: FIN set, masked with a random key).
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

/// The product's one WebSocket client (RFC 6455), blocking, for the command line and tests: the
/// check runner's controller and `bridged sessions` use it. Text frames out (masked), whole text
/// messages in (fragments joined, pings answered), every wait bounded by a timeout; a close from
/// the server ends it with an error that carries its code.
public final class WebSocketClient {
    let tcp: TCPConnection
    /// The largest message accepted (bytes); a bigger one is an error.
    public let maxMessageBytes: Int
    /// Timeout of a write (seconds).
    public var sendTimeout: Double
    /// The default largest message: 256 MiB.
    public static let defaultMaxMessageBytes = 256 << 20

    /// Connects to `ws://host:port/path` and completes the opening handshake, within `timeout`
    /// seconds. `host` is a name or an address (an IPv6 one without brackets).
    public init(host: String, port: Int, path: String = "/bridge", timeout: Double = 10,
                maxMessageBytes: Int = WebSocketClient.defaultMaxMessageBytes) throws(ClientError) {
        self.maxMessageBytes = maxMessageBytes
        self.sendTimeout = timeout
        let deadline = TCPConnection.nowMs() + Int64(timeout * 1000)
        tcp = try TCPConnection(host: host, port: port, timeout: timeout)
        var key = [UInt8](repeating: 0, count: 16)
        for i in key.indices { key[i] = UInt8.random(in: 0...255) }
        let hostHeader = (host.contains(":") ? "[\(host)]" : host) + ":\(port)"
        let request = "GET \(path) HTTP/1.1\r\nHost: \(hostHeader)\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: \(Data(key).base64EncodedString())\r\nSec-WebSocket-Version: 13\r\n\r\n"
        try tcp.write(Array(request.utf8), timeout: timeout)
        while true {
            if let end = Self.find(tcp.buffer, [13, 10, 13, 10]) {
                let head = String(decoding: tcp.buffer[0..<end], as: UTF8.self)
                tcp.buffer.removeFirst(end + 4)
                let status = head.split(separator: "\r\n").first.map(String.init) ?? head
                guard status.hasPrefix("HTTP/1.1 101") else { throw ClientError("the WebSocket upgrade was refused: \(status.prefix(120))") }
                return
            }
            if tcp.buffer.count > 65536 { throw ClientError("not a WebSocket server (no end of the HTTP head)") }
            let left = Double(deadline - TCPConnection.nowMs()) / 1000
            if left <= 0 { throw ClientError("no WebSocket handshake reply within \(Int(timeout)) s") }
            _ = try tcp.fill(timeout: left)
        }
    }

    static func find(_ hay: [UInt8], _ needle: [UInt8]) -> Int? {
        guard hay.count >= needle.count else { return nil }
        for i in 0...(hay.count - needle.count) where hay[i] == needle[0] && Array(hay[i..<(i + needle.count)]) == needle { return i }
        return nil
    }

    public func send(_ text: String) throws(ClientError) {
        try sendFrame(opcode: 1, Array(text.utf8))
    }

    public func sendText(_ bytes: [UInt8]) throws(ClientError) {
        try sendFrame(opcode: 1, bytes)
    }

    public func sendFrame(opcode: UInt8, _ payload: [UInt8]) throws(ClientError) {
        try tcp.write(WebSocketFrame.client(opcode: opcode, payload), timeout: sendTimeout)
    }

    /// Sends a close frame (1000); the connection itself closes when the client goes away.
    public func sendClose() throws(ClientError) {
        try sendFrame(opcode: 8, [0x03, 0xE8])
    }

    /// The next whole text message, or nil after `timeout` seconds without one.
    public func receive(timeout: Double) throws(ClientError) -> String? {
        try receiveBytes(timeout: timeout).map { String(decoding: $0, as: UTF8.self) }
    }

    /// The next whole message's bytes, or nil after `timeout` seconds without one.
    public func receiveBytes(timeout: Double) throws(ClientError) -> [UInt8]? {
        let deadline = TCPConnection.nowMs() + Int64(timeout * 1000)
        var message: [UInt8] = []
        while true {
            if let (fin, opcode, payload, used) = try parseFrame() {
                tcp.buffer.removeFirst(used)
                switch opcode {
                case 0x9: try sendFrame(opcode: 0xA, payload)
                case 0xA: break
                case 0x8:
                    let code = payload.count >= 2 ? Int(payload[0]) << 8 | Int(payload[1]) : 1005
                    throw ClientError("the daemon closed the connection (\(code))")
                default:
                    message += payload
                    if message.count > maxMessageBytes { throw ClientError("a message of more than \(maxMessageBytes) bytes is too large") }
                    if fin { return message }
                }
                continue
            }
            let left = Double(deadline - TCPConnection.nowMs()) / 1000
            if left <= 0 { return nil }
            _ = try tcp.fill(timeout: left)
        }
    }

    func parseFrame() throws(ClientError) -> (Bool, UInt8, [UInt8], Int)? {
        let b = tcp.buffer
        guard b.count >= 2 else { return nil }
        let fin = b[0] & 0x80 != 0, opcode = b[0] & 0x0F
        var len = Int(b[1] & 0x7F), off = 2
        if len == 126 {
            guard b.count >= 4 else { return nil }
            len = Int(b[2]) << 8 | Int(b[3]); off = 4
        } else if len == 127 {
            guard b.count >= 10 else { return nil }
            var l: UInt64 = 0
            for i in 2..<10 { l = l << 8 | UInt64(b[i]) }
            guard l <= UInt64(maxMessageBytes) else { throw ClientError("a message of \(l) bytes is too large") }
            len = Int(l)
            off = 10
        }
        guard len <= maxMessageBytes else { throw ClientError("a message of \(len) bytes is too large") }
        guard b.count >= off + len else { return nil }
        return (fin, opcode, Array(b[off..<(off + len)]), off + len)
    }
}

/// Checks done before a browser is started.
public enum CheckPreflight {
    /// nil when something listens at the page's host and port; else why it cannot be reached.
    /// The page itself (its status, redirects) is judged by what the browser gets, never by a
    /// separate request.
    public static func unreachable(_ url: String, timeout: Double = 10) -> String? {
        guard let u = URL(string: url), let host = u.host, let scheme = u.scheme else { return "\(url) is not a URL" }
        let port = u.port ?? (scheme == "https" ? 443 : 80)
        let bare = host.hasPrefix("[") ? String(host.dropFirst().dropLast()) : host
        do {
            _ = try TCPConnection(host: bare, port: port, timeout: timeout)
            return nil
        } catch {
            return "\(url) is unreachable: \(error.message)"
        }
    }
}
