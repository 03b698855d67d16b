#if canImport(Glibc)
import Glibc
#endif
import CBenchSupport

/// What a workload hears from the loop. Everything runs on the one thread of the loop.
class ConnectionHandler {
    /// The WebSocket handshake completed.
    func opened(_ c: Connection) {}
    /// One whole text message.
    func text(_ c: Connection, _ payload: UnsafeRawBufferPointer) {}
    /// The connection failed or was closed by the peer (not called for `abort`).
    func failed(_ c: Connection, _ why: String) {}
}

/// One WebSocket client connection on a raw non-blocking socket.
final class Connection {
    enum Phase { case idle, connecting, handshaking, open, closed }

    let index: Int
    var fd: Int32 = -1
    var phase = Phase.idle
    /// Bytes read and not yet consumed (a partial frame or the handshake response).
    var rx: [UInt8] = []
    /// Frames waiting for the socket.
    var tx: [UInt8] = []
    var txStart = 0
    var writeRegistered = false
    var dirty = false
    var key = ""
    var mask: (UInt8, UInt8, UInt8, UInt8) = (0, 0, 0, 0)
    var fragments: [UInt8] = []
    var inFragmentedMessage = false
    /// We sent a close frame; the peer's close (or EOF) ends the connection quietly.
    var closing = false

    // Workload state.
    var nextID: Int64 = 1
    var outstanding = PendingQueue()
    var step = 0
    var ready = false
    var waiting = false
    var session = ""
    var navigatedAt: UInt64 = 0
    var navigateRepliedAt: UInt64 = 0

    init(index: Int) { self.index = index }
}

/// The requests a connection has in flight, oldest first (a ring that grows when needed).
struct PendingQueue {
    struct Entry {
        var id: Int64
        var sentAt: UInt64
        var kind: UInt8
    }

    private var storage = [Entry](repeating: Entry(id: 0, sentAt: 0, kind: 0), count: 4)
    private var head = 0
    private(set) var count = 0

    mutating func push(_ e: Entry) {
        if count == storage.count {
            var grown = [Entry](repeating: Entry(id: 0, sentAt: 0, kind: 0), count: storage.count * 2)
            for i in 0..<count { grown[i] = storage[(head + i) & (storage.count - 1)] }
            storage = grown
            head = 0
        }
        storage[(head + count) & (storage.count - 1)] = e
        count += 1
    }

    mutating func pop() -> Entry? {
        guard count > 0 else { return nil }
        let e = storage[head]
        head = (head + 1) & (storage.count - 1)
        count -= 1
        return e
    }
}

/// A single-threaded epoll loop driving many `Connection`s. Writes made while handling events
/// are collected per connection and flushed once per loop iteration (one `write` per
/// connection per iteration, whatever the number of frames).
final class Loop {
    let options: Options
    var handler: ConnectionHandler
    let epfd: Int32
    var connections: [Connection] = []
    private var address = sockaddr_in()
    private let readSize = 256 * 1024
    private let readBuffer: UnsafeMutableRawPointer
    private var dirtyList: [Connection] = []
    private var eventData = [UInt64](repeating: 0, count: 1024)
    private var eventFlags = [UInt32](repeating: 0, count: 1024)
    private var frameScratch: [UInt8] = []
    private var rngState: UInt64

    // Counters the workloads read.
    var framesIn = 0
    var framesOut = 0
    var connectFailures = 0
    var firstFailure: String?

    private static let epollIn: UInt32 = 0x001
    private static let epollOut: UInt32 = 0x004
    private static let epollErr: UInt32 = 0x008
    private static let epollHup: UInt32 = 0x010
    private static let epollRdHup: UInt32 = 0x2000

    init(options: Options, handler: ConnectionHandler) {
        self.options = options
        self.handler = handler
        epfd = bench_epoll_create()
        precondition(epfd >= 0, "epoll_create1 failed: errno \(errno)")
        readBuffer = .allocate(byteCount: readSize, alignment: 16)
        rngState = monotonicNanos() | 1
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(options.port).bigEndian)
        _ = inet_pton(AF_INET, options.host, &address.sin_addr)
        frameScratch.reserveCapacity(4096)
    }

    deinit {
        readBuffer.deallocate()
        close(epfd)
    }

    private func random() -> UInt64 {
        // xorshift64*: masks and handshake keys need no cryptographic quality here.
        rngState ^= rngState >> 12
        rngState ^= rngState << 25
        rngState ^= rngState >> 27
        return rngState &* 2_685_821_657_736_338_717
    }

    @discardableResult
    func makeConnection() -> Connection {
        let c = Connection(index: connections.count)
        connections.append(c)
        return c
    }

    // MARK: Connecting

    /// Starts a non-blocking connect; `handler.opened` follows the handshake.
    func connect(_ c: Connection) {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else {
            fail(c, "socket: \(String(cString: strerror(errno)))")
            return
        }
        var one: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        c.fd = fd
        c.phase = .connecting
        let r = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        if r != 0 && errno != EINPROGRESS {
            fail(c, "connect: \(String(cString: strerror(errno)))")
            return
        }
        _ = bench_epoll_ctl(epfd, 1, fd, Loop.epollOut | Loop.epollIn | Loop.epollRdHup, UInt64(c.index))
        c.writeRegistered = true
    }

    private func connected(_ c: Connection) {
        var err: Int32 = 0
        var len = socklen_t(MemoryLayout<Int32>.size)
        getsockopt(c.fd, SOL_SOCKET, SO_ERROR, &err, &len)
        if err != 0 {
            fail(c, "connect: \(String(cString: strerror(err)))")
            return
        }
        var nonce = [UInt8](repeating: 0, count: 16)
        for i in 0..<2 {
            let r = random()
            for j in 0..<8 { nonce[i * 8 + j] = UInt8(truncatingIfNeeded: r >> (8 * UInt64(j))) }
        }
        c.key = Loop.base64(nonce)
        let m = random()
        c.mask = (UInt8(truncatingIfNeeded: m), UInt8(truncatingIfNeeded: m >> 8),
                  UInt8(truncatingIfNeeded: m >> 16), UInt8(truncatingIfNeeded: m >> 24))
        let request = "GET \(options.path) HTTP/1.1\r\nHost: \(options.host):\(options.port)\r\n"
            + "Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: \(c.key)\r\n"
            + "Sec-WebSocket-Version: 13\r\n\r\n"
        c.phase = .handshaking
        c.tx.append(contentsOf: Array(request.utf8))
        markDirty(c)
    }

    static func base64(_ bytes: [UInt8]) -> String {
        var out = [CChar](repeating: 0, count: bytes.count * 2 + 8)
        let n = bench_base64(bytes, Int32(bytes.count), &out, Int32(out.count))
        guard n > 0 else { return "" }
        return String(decoding: out[0..<Int(n)].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Sec-WebSocket-Accept for `key` (RFC 6455 section 4.2.2).
    static func acceptValue(_ key: String) -> String {
        let input = Array((key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11").utf8)
        var digest = [UInt8](repeating: 0, count: 20)
        _ = bench_sha1(input, input.count, &digest)
        return base64(digest)
    }

    /// Parses the 101 response in `c.rx`; true once the connection is open.
    private func finishHandshake(_ c: Connection) -> Bool {
        let crlf2: [UInt8] = [13, 10, 13, 10]
        guard c.rx.count >= 4 else { return false }
        var end = -1
        for i in 0...(c.rx.count - 4) where c.rx[i] == 13 && Array(c.rx[i..<i + 4]) == crlf2 {
            end = i + 4
            break
        }
        if end < 0 {
            if c.rx.count > 16384 { fail(c, "handshake response too long") }
            return false
        }
        let head = String(decoding: c.rx[0..<end], as: UTF8.self)
        let lines = head.split(separator: "\r\n")
        guard let status = lines.first, status.hasPrefix("HTTP/1.1 101") else {
            fail(c, "handshake refused: \(lines.first ?? "")")
            return false
        }
        let expected = Loop.acceptValue(c.key)
        let accept = lines.dropFirst().first { $0.lowercased().hasPrefix("sec-websocket-accept:") }
        guard let accept, accept.split(separator: ":", maxSplits: 1)[1].trimmingSpaces == expected else {
            fail(c, "handshake: bad or missing Sec-WebSocket-Accept")
            return false
        }
        c.rx.removeFirst(end)
        c.phase = .open
        handler.opened(c)
        if c.phase == .open && !c.rx.isEmpty {
            let pending = c.rx
            c.rx.removeAll(keepingCapacity: true)
            let used = pending.withUnsafeBufferPointer { consume(c, $0.baseAddress!, $0.count) }
            if c.phase == .open && used < pending.count { c.rx.append(contentsOf: pending[used...]) }
        }
        return true
    }

    // MARK: Sending

    private func markDirty(_ c: Connection) {
        if !c.dirty {
            c.dirty = true
            dirtyList.append(c)
        }
    }

    /// Queues one masked text frame; written at the end of this loop iteration.
    func sendText(_ c: Connection, _ payload: UnsafeRawBufferPointer) {
        guard c.phase == .open else { return }
        appendFrame(c, opcode: 0x1, payload)
        framesOut += 1
    }

    func sendText(_ c: Connection, _ payload: [UInt8]) {
        payload.withUnsafeBytes { sendText(c, $0) }
    }

    private func appendFrame(_ c: Connection, opcode: UInt8, _ payload: UnsafeRawBufferPointer) {
        let n = payload.count
        c.tx.append(0x80 | opcode)
        if n < 126 {
            c.tx.append(0x80 | UInt8(n))
        } else if n < 65536 {
            c.tx.append(0x80 | 126)
            c.tx.append(UInt8(n >> 8))
            c.tx.append(UInt8(n & 0xFF))
        } else {
            c.tx.append(0x80 | 127)
            for shift in stride(from: 56, through: 0, by: -8) { c.tx.append(UInt8(truncatingIfNeeded: n >> shift)) }
        }
        let (m0, m1, m2, m3) = c.mask
        c.tx.append(m0); c.tx.append(m1); c.tx.append(m2); c.tx.append(m3)
        let start = c.tx.count
        c.tx.append(contentsOf: payload)
        let word = UInt32(m0) | UInt32(m1) << 8 | UInt32(m2) << 16 | UInt32(m3) << 24
        c.tx.withUnsafeMutableBufferPointer { b in
            var i = 0
            while i < n {
                b[start + i] ^= UInt8(truncatingIfNeeded: word >> (8 * UInt32(i & 3)))
                i += 1
            }
        }
        markDirty(c)
    }

    /// Writes every connection's queued frames (one write each).
    func flush() {
        guard !dirtyList.isEmpty else { return }
        let list = dirtyList
        dirtyList.removeAll(keepingCapacity: true)
        for c in list {
            c.dirty = false
            write(c)
        }
    }

    private func write(_ c: Connection) {
        guard c.fd >= 0, c.phase == .open || c.phase == .handshaking else { return }
        let remaining = c.tx.count - c.txStart
        guard remaining > 0 else { return }
        let n = c.tx.withUnsafeBytes { Glibc.write(c.fd, $0.baseAddress! + c.txStart, remaining) }
        if n == remaining {
            c.tx.removeAll(keepingCapacity: c.tx.capacity <= 65536)
            c.txStart = 0
            if c.writeRegistered {
                c.writeRegistered = false
                _ = bench_epoll_ctl(epfd, 3, c.fd, Loop.epollIn | Loop.epollRdHup, UInt64(c.index))
            }
        } else if n >= 0 || errno == EAGAIN || errno == EWOULDBLOCK {
            c.txStart += max(0, n)
            if !c.writeRegistered {
                c.writeRegistered = true
                _ = bench_epoll_ctl(epfd, 3, c.fd, Loop.epollIn | Loop.epollOut | Loop.epollRdHup, UInt64(c.index))
            }
        } else {
            fail(c, "write: \(String(cString: strerror(errno)))")
        }
    }

    // MARK: Receiving

    private func readable(_ c: Connection) {
        while c.fd >= 0 {
            let n = Glibc.read(c.fd, readBuffer, readSize)
            if n > 0 {
                let bytes = readBuffer.assumingMemoryBound(to: UInt8.self)
                if c.phase == .handshaking {
                    c.rx.append(contentsOf: UnsafeBufferPointer(start: bytes, count: n))
                    _ = finishHandshake(c)
                } else if c.phase == .open {
                    if c.rx.isEmpty {
                        let used = consume(c, bytes, n)
                        if used < n && c.phase == .open {
                            c.rx.append(contentsOf: UnsafeBufferPointer(start: bytes + used, count: n - used))
                        }
                    } else {
                        c.rx.append(contentsOf: UnsafeBufferPointer(start: bytes, count: n))
                        let all = c.rx
                        let used = all.withUnsafeBufferPointer { consume(c, $0.baseAddress!, $0.count) }
                        if c.phase == .open {
                            c.rx.removeFirst(used)
                        }
                    }
                }
                if n < readSize { return }
            } else if n == 0 {
                if c.closing {
                    closeSocket(c, reset: false)
                    return
                }
                fail(c, "closed by the peer")
                return
            } else {
                if errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR { return }
                fail(c, "read: \(String(cString: strerror(errno)))")
                return
            }
        }
    }

    /// Handles every whole frame in `bytes`; returns how many bytes were used.
    @discardableResult
    private func consume(_ c: Connection, _ bytes: UnsafePointer<UInt8>, _ count: Int) -> Int {
        var off = 0
        while count - off >= 2 && c.phase == .open {
            let b0 = bytes[off], b1 = bytes[off + 1]
            if b1 & 0x80 != 0 {
                fail(c, "the server sent a masked frame")
                return count
            }
            var len = Int(b1 & 0x7F)
            var header = 2
            if len == 126 {
                guard count - off >= 4 else { break }
                len = Int(bytes[off + 2]) << 8 | Int(bytes[off + 3])
                header = 4
            } else if len == 127 {
                guard count - off >= 10 else { break }
                var v = 0
                for i in 0..<8 { v = v << 8 | Int(bytes[off + 2 + i]) }
                len = v
                header = 10
            }
            guard count - off - header >= len else { break }
            frame(c, opcode: b0 & 0x0F, fin: b0 & 0x80 != 0,
                  UnsafeRawBufferPointer(start: bytes + off + header, count: len))
            off += header + len
        }
        return off
    }

    private func frame(_ c: Connection, opcode: UInt8, fin: Bool, _ payload: UnsafeRawBufferPointer) {
        switch opcode {
        case 0x1 where fin && !c.inFragmentedMessage:
            framesIn += 1
            handler.text(c, payload)
        case 0x1, 0x0:
            if opcode == 0x1 { c.inFragmentedMessage = true; c.fragments.removeAll(keepingCapacity: true) }
            c.fragments.append(contentsOf: payload)
            if fin {
                c.inFragmentedMessage = false
                framesIn += 1
                let message = c.fragments
                c.fragments = []
                message.withUnsafeBytes { handler.text(c, $0) }
            }
        case 0x2:
            fail(c, "unexpected binary frame")
        case 0x8 where c.closing:
            closeSocket(c, reset: false)
        case 0x8:
            var code = 0
            if payload.count >= 2 { code = Int(payload[0]) << 8 | Int(payload[1]) }
            let reason = payload.count > 2 ? String(decoding: payload[2...], as: UTF8.self) : ""
            fail(c, "closed by the peer with \(code) \(reason)")
        case 0x9:
            appendFrame(c, opcode: 0xA, payload)  // pong
        case 0xA:
            break
        default:
            fail(c, "unknown opcode \(opcode)")
        }
    }

    // MARK: Closing

    private func fail(_ c: Connection, _ why: String) {
        guard c.phase != .closed else { return }
        if firstFailure == nil { firstFailure = "connection \(c.index): \(why)" }
        if c.phase == .connecting || c.phase == .handshaking { connectFailures += 1 }
        closeSocket(c, reset: true)
        handler.failed(c, why)
    }

    /// Starts the closing handshake (1000); the connection ends when the peer answers.
    func closeGracefully(_ c: Connection) {
        guard c.phase == .open, !c.closing else {
            abort(c)
            return
        }
        c.closing = true
        let payload: [UInt8] = [0x03, 0xE8]
        payload.withUnsafeBytes { appendFrame(c, opcode: 0x8, $0) }
    }

    /// Connections not closed yet.
    var openCount: Int { connections.reduce(0) { $0 + ($1.phase == .closed || $1.phase == .idle ? 0 : 1) } }

    /// Drops the connection with a TCP reset (no TIME_WAIT left on the load side).
    func abort(_ c: Connection) {
        guard c.phase != .closed else { return }
        closeSocket(c, reset: true)
    }

    private func closeSocket(_ c: Connection, reset: Bool) {
        c.phase = .closed
        if c.fd >= 0 {
            if reset {
                var l = linger(l_onoff: 1, l_linger: 0)
                setsockopt(c.fd, SOL_SOCKET, SO_LINGER, &l, socklen_t(MemoryLayout<linger>.size))
            }
            close(c.fd)
            c.fd = -1
        }
        c.rx = []
        c.tx = []
        c.txStart = 0
    }

    // MARK: Running

    /// Handles the events of one epoll_wait (at most `timeoutNanos`, negative: forever), then
    /// flushes every connection written to.
    func poll(timeoutNanos: Int64) {
        flush()
        let n = eventData.withUnsafeMutableBufferPointer { d in
            eventFlags.withUnsafeMutableBufferPointer { f in
                bench_epoll_wait(epfd, d.baseAddress, f.baseAddress, Int32(d.count), timeoutNanos)
            }
        }
        if n < 0 {
            if errno != EINTR { fatal("epoll_wait: \(String(cString: strerror(errno)))") }
            return
        }
        for i in 0..<Int(n) {
            let c = connections[Int(eventData[i])]
            let flags = eventFlags[i]
            guard c.fd >= 0 else { continue }
            switch c.phase {
            case .connecting:
                if flags & (Loop.epollOut | Loop.epollErr | Loop.epollHup) != 0 { connected(c) }
            case .handshaking, .open:
                if flags & Loop.epollIn != 0 { readable(c) }
                if c.fd >= 0 && flags & Loop.epollOut != 0 { write(c) }
                if c.fd >= 0 && flags & (Loop.epollErr | Loop.epollHup) != 0 && flags & Loop.epollIn == 0 {
                    fail(c, "socket error or hang-up")
                }
            case .idle, .closed:
                break
            }
        }
        flush()
    }
}

extension Substring {
    var trimmingSpaces: Substring {
        var s = self
        while s.first == " " || s.first == "\t" { s = s.dropFirst() }
        while s.last == " " || s.last == "\t" || s.last == "\r" { s = s.dropLast() }
        return s
    }
}

func fatal(_ message: String) -> Never {
    var line = Array("bridge-load: \(message)\n".utf8)
    _ = line.withUnsafeMutableBytes { Glibc.write(2, $0.baseAddress, $0.count) }
    exit(2)
}
