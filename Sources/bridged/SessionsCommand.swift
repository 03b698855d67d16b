import ArgumentParser
import BridgeCheck
import BridgeProtocol

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `bridged sessions --farm URL1,URL2,…`: every session of a farm, one controller connection per
/// daemon (a proxy in front of the farm would send a connection without a session to just one of
/// them).
struct SessionsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sessions",
        abstract: "List the sessions of one daemon or of every daemon of a farm.",
        discussion: """
            Opens one controller connection to each daemon, asks for session.list and prints one \
            line per session: its id, the daemon it lives on and its stack (P placeholder, W web \
            view with (*P) PWA or (*C) classic, N native screen; a trailing ~ marks a web view \
            without a connected page). Daemons that cannot be reached are reported on standard \
            error and the exit status is 1; the sessions of the others are still listed.
            """)

    @Option(name: .customLong("farm"), help: ArgumentHelp(
        "The daemons, comma-separated: http://HOST:PORT, ws://HOST:PORT/bridge or HOST:PORT. Give the daemons' own addresses, not the proxy's.",
        valueName: "url,url,…"))
    var farm: String = "http://127.0.0.1:8787"

    @Option(help: "Controller token of the daemons (also BRIDGED_TOKEN).")
    var token: String?

    @Option(name: .customLong("timeout-s"), help: "Seconds to wait for each daemon (connecting and answering).")
    var timeoutS: Int = 5

    @Flag(help: "Print one JSON object: {\"sessions\":[{\"daemon\",\"session\",\"stack\",\"foreground\"}…],\"errors\":[{\"daemon\",\"error\"}…]}.")
    var json = false

    var endpoints: [FarmEndpoint] {
        get throws {
            let parts = farm.split(separator: ",", omittingEmptySubsequences: false)
                .map { String($0).trimmingSpaces() }
            guard !parts.isEmpty, !parts.contains(where: \.isEmpty) else {
                throw ValidationError("--farm '\(farm)' has an empty entry; give daemon URLs separated by commas, e.g. --farm http://127.0.0.1:8701,http://127.0.0.1:8702")
            }
            var result: [FarmEndpoint] = []
            for raw in parts {
                do { result.append(try FarmEndpoint(parsing: raw)) } catch {
                    throw ValidationError("--farm: \(error.message)")
                }
            }
            return result
        }
    }

    func validate() throws {
        _ = try endpoints
        try check((1...3600).contains(timeoutS), "--timeout-s must be between 1 and 3600 (got \(timeoutS))")
        if let token { try check(!token.isEmpty, "--token must not be empty") }
    }

    private func check(_ ok: Bool, _ message: String) throws {
        if !ok { throw ValidationError(message) }
    }

    func run() throws {
        var resolvedToken = token
        if resolvedToken == nil, let env = getenv("BRIDGED_TOKEN"), env.pointee != 0 { resolvedToken = String(cString: env) }
        var rows: [(daemon: String, session: JSONValue)] = []
        var errors: [(daemon: String, message: String)] = []
        for endpoint in try endpoints {
            do {
                let sessions = try FarmClient.listSessions(endpoint, token: resolvedToken, timeoutMs: timeoutS * 1000)
                for s in sessions { rows.append((endpoint.display, s)) }
            } catch {
                errors.append((endpoint.display, error.message))
            }
        }
        if json {
            var w = JSONWriter(capacity: 4096)
            w.beginObject()
            w.key("sessions"); w.beginArray()
            for row in rows {
                var object = row.session.objectValue ?? JSONObject()
                object["daemon"] = .string(row.daemon)
                w.write(.object(object))
            }
            w.endArray()
            w.key("errors"); w.beginArray()
            for e in errors {
                w.beginObject(); w.key("daemon"); w.string(e.daemon); w.key("error"); w.string(e.message); w.endObject()
            }
            w.endArray()
            w.endObject()
            Stdout.writeLine(w.string)
        } else {
            let width = max(7, rows.map { ($0.session["session"]?.stringValue ?? "").utf8.count }.max() ?? 0)
            let daemonWidth = max(6, rows.map { $0.daemon.utf8.count }.max() ?? 0)
            func pad(_ s: String, _ n: Int) -> String { s + String(repeating: " ", count: max(0, n - s.utf8.count)) }
            Stdout.writeLine(pad("SESSION", width) + "  " + pad("DAEMON", daemonWidth) + "  STACK")
            for row in rows {
                let id = row.session["session"]?.stringValue ?? "?"
                Stdout.writeLine(pad(id, width) + "  " + pad(row.daemon, daemonWidth) + "  " + Self.notation(row.session["stack"]))
            }
        }
        for e in errors { Stderr.writeLine("bridged sessions: \(e.daemon): \(e.message)") }
        let count = (try endpoints).count
        Stderr.writeLine("\(rows.count) session\(rows.count == 1 ? "" : "s") on \(count - errors.count) of \(count) daemon\(count == 1 ? "" : "s")")
        if !errors.isEmpty { throw ExitCode(1) }
    }

    /// A stack in the seed's notation: `P1 W1(*P) W2(*C)~ N1`.
    static func notation(_ stack: JSONValue?) -> String {
        guard let items = stack?.arrayValue else { return "-" }
        return items.map { item -> String in
            let id = item["id"]?.stringValue ?? "?"
            guard item["kind"]?.stringValue == "webview" else { return id }
            let mode = item["mode"]?.stringValue == "pwa" ? "(*P)" : "(*C)"
            return id + mode + (item["connected"]?.boolValue == false ? "~" : "")
        }.joined(separator: " ")
    }
}

extension String {
    func trimmingSpaces() -> String {
        var s = Substring(self)
        while s.first == " " { s.removeFirst() }
        while s.last == " " { s.removeLast() }
        return String(s)
    }
}

struct FarmError: Error {
    var message: String
    init(_ message: String) { self.message = message }
}

/// One daemon's WebSocket address, from `http://HOST:PORT`, `ws://HOST:PORT/PATH` or `HOST:PORT`.
struct FarmEndpoint {
    var host: String  // without brackets
    var port: Int
    var path: String
    var display: String

    init(parsing raw: String) throws(FarmError) {
        var rest = Substring(raw)
        let separator = Array("://".utf8)
        let bytes = Array(raw.utf8)
        let schemeEnd = bytes.count >= 3 ? (0...(bytes.count - 3)).first { Array(bytes[$0..<($0 + 3)]) == separator } : nil
        if let schemeEnd {
            let scheme = String(decoding: bytes[..<schemeEnd], as: UTF8.self).lowercased()
            switch scheme {
            case "http", "ws": break
            case "https", "wss":
                throw FarmError("'\(raw)': TLS is not supported here; give the daemon's own plain address (http://HOST:PORT)")
            default:
                throw FarmError("'\(raw)': unknown scheme '\(scheme)'; use http://HOST:PORT or ws://HOST:PORT/bridge")
            }
            rest = Substring(String(decoding: bytes[(schemeEnd + 3)...], as: UTF8.self))
        }
        var path = "/bridge"
        if let slash = rest.firstIndex(of: "/") {
            let p = String(rest[slash...])
            if p != "/" { path = p }
            rest = rest[..<slash]
        }
        var host: Substring
        var portText: Substring?
        if rest.hasPrefix("[") {
            guard let close = rest.firstIndex(of: "]") else { throw FarmError("'\(raw)': unterminated IPv6 address") }
            host = rest[rest.index(after: rest.startIndex)..<close]
            let after = rest[rest.index(after: close)...]
            if after.hasPrefix(":") { portText = after.dropFirst() } else if !after.isEmpty {
                throw FarmError("'\(raw)': expected :PORT after the IPv6 address")
            }
        } else if let colon = rest.lastIndex(of: ":") {
            host = rest[..<colon]
            portText = rest[rest.index(after: colon)...]
        } else {
            host = rest
        }
        guard !host.isEmpty else { throw FarmError("'\(raw)': no host; expected http://HOST:PORT") }
        let port: Int
        if let portText {
            guard let p = Int(portText), (1...65535).contains(p) else { throw FarmError("'\(raw)': the port must be a number between 1 and 65535") }
            port = p
        } else {
            port = 8787
        }
        self.host = String(host)
        self.port = port
        self.path = path
        let shownHost = host.contains(":") ? "[\(host)]" : String(host)
        self.display = "http://\(shownHost):\(port)" + (path == "/bridge" ? "" : path)
    }

    var hostHeader: String { (host.contains(":") ? "[\(host)]" : host) + ":\(port)" }
}

/// A minimal blocking WebSocket client: enough for a controller's hello and one request.
enum FarmClient {
    static func listSessions(_ endpoint: FarmEndpoint, token: String?, timeoutMs: Int) throws(FarmError) -> [JSONValue] {
        let socket = try FarmSocket(endpoint, timeoutMs: timeoutMs)
        defer { socket.close() }
        try socket.handshake()
        var hello = JSONWriter(capacity: 128)
        hello.beginObject()
        hello.key("id"); hello.int(1)
        hello.key("method"); hello.string("hello")
        hello.key("params"); hello.beginObject()
        hello.key("protocol"); hello.int(1)
        hello.key("role"); hello.string("controller")
        if let token { hello.key("token"); hello.string(token) }
        hello.endObject()
        hello.endObject()
        try socket.sendText(hello.bytes)
        let helloReply = try socket.reply(to: 1)
        if let error = helloReply["error"] {
            let code = error["code"]?.stringValue ?? "?"
            let message = error["message"]?.stringValue ?? ""
            let hint = code == "not-allowed" ? " (pass --token or set BRIDGED_TOKEN to the daemons' controller token)" : ""
            throw FarmError("the daemon refused the controller: \(code): \(message)\(hint)")
        }
        try socket.sendText(Array(#"{"id":2,"method":"session.list","params":{}}"#.utf8))
        let list = try socket.reply(to: 2)
        if let error = list["error"] {
            throw FarmError("session.list failed: \(error["code"]?.stringValue ?? "?"): \(error["message"]?.stringValue ?? "")")
        }
        guard let sessions = list["result"]?["sessions"]?.arrayValue else {
            throw FarmError("session.list answered without a sessions list: is this a bridged daemon?")
        }
        try? socket.sendClose()
        return sessions
    }
}

final class FarmSocket {
    let endpoint: FarmEndpoint
    let fd: Int32
    let deadline: Int64
    var buffer: [UInt8] = []

    init(_ endpoint: FarmEndpoint, timeoutMs: Int) throws(FarmError) {
        self.endpoint = endpoint
        deadline = FarmSocket.nowMs() + Int64(timeoutMs)
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_family = AF_UNSPEC
        var list: UnsafeMutablePointer<addrinfo>?
        let rc = getaddrinfo(endpoint.host, String(endpoint.port), &hints, &list)
        guard rc == 0, let first = list else {
            throw FarmError("cannot resolve '\(endpoint.host)': \(String(cString: gai_strerror(rc)))")
        }
        defer { freeaddrinfo(list) }
        var lastError = "no address"
        var cursor: UnsafeMutablePointer<addrinfo>? = first
        while let ai = cursor {
            cursor = ai.pointee.ai_next
            let s = socket(ai.pointee.ai_family, ai.pointee.ai_socktype, ai.pointee.ai_protocol)
            if s < 0 { lastError = String(cString: strerror(errno)); continue }
            let flags = fcntl(s, F_GETFL, 0)
            _ = fcntl(s, F_SETFL, flags | O_NONBLOCK)
            var r = connect(s, ai.pointee.ai_addr, ai.pointee.ai_addrlen)
            if r != 0 && errno == EINPROGRESS {
                var p = pollfd(fd: s, events: Int16(POLLOUT), revents: 0)
                let wait = Int32(clamping: max(0, deadline - FarmSocket.nowMs()))
                if poll(&p, 1, wait) == 1 {
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
        throw FarmError("cannot connect (\(lastError)); is the daemon running, and is this its address?")
    }

    static func nowMs() -> Int64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Int64(ts.tv_sec) * 1000 + Int64(ts.tv_nsec) / 1_000_000
    }

    func close() { _ = Glibc.close(fd) }

    func writeAll(_ bytes: [UInt8]) throws(FarmError) {
        var offset = 0
        while offset < bytes.count {
            try waitFor(Int16(POLLOUT))
            let n = bytes.withUnsafeBytes { send(fd, $0.baseAddress! + offset, $0.count - offset, Int32(MSG_NOSIGNAL)) }
            if n < 0 {
                if errno == EAGAIN || errno == EINTR { continue }
                throw FarmError("connection lost while sending (\(String(cString: strerror(errno))))")
            }
            offset += n
        }
    }

    private func waitFor(_ events: Int16) throws(FarmError) {
        while true {
            let left = deadline - FarmSocket.nowMs()
            if left <= 0 { throw FarmError("timed out waiting for the daemon (see --timeout-s)") }
            var p = pollfd(fd: fd, events: events, revents: 0)
            let r = poll(&p, 1, Int32(clamping: left))
            if r > 0 { return }
            if r < 0 && errno != EINTR { throw FarmError("poll failed: \(String(cString: strerror(errno)))") }
        }
    }

    /// Reads more bytes into the buffer.
    private func fill() throws(FarmError) {
        try waitFor(Int16(POLLIN))
        var chunk = [UInt8](repeating: 0, count: 65536)
        let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress!, $0.count, 0) }
        if n == 0 { throw FarmError("the daemon closed the connection") }
        if n < 0 {
            if errno == EAGAIN || errno == EINTR { return }
            throw FarmError("connection lost (\(String(cString: strerror(errno))))")
        }
        buffer.append(contentsOf: chunk[0..<n])
    }

    func handshake() throws(FarmError) {
        var key: [UInt8] = []
        var rng = SystemRandomNumberGenerator()
        for _ in 0..<16 { key.append(UInt8.random(in: 0...255, using: &rng)) }
        let request = "GET \(endpoint.path) HTTP/1.1\r\nHost: \(endpoint.hostHeader)\r\nUpgrade: websocket\r\n"
            + "Connection: Upgrade\r\nSec-WebSocket-Key: \(Base64.encode(key))\r\nSec-WebSocket-Version: 13\r\n\r\n"
        try writeAll(Array(request.utf8))
        while true {
            if let end = FarmSocket.find([13, 10, 13, 10], in: buffer) {
                let head = String(decoding: buffer[0..<end], as: UTF8.self)
                buffer.removeFirst(end + 4)
                let status = head.split(separator: "\r\n").first.map(String.init) ?? head
                guard status.hasPrefix("HTTP/1.1 101") else {
                    throw FarmError("the WebSocket upgrade was refused: \(status)")
                }
                return
            }
            if buffer.count > 65536 { throw FarmError("not a WebSocket server (no end of the HTTP head)") }
            try fill()
        }
    }

    static func find(_ needle: [UInt8], in haystack: [UInt8]) -> Int? {
        guard haystack.count >= needle.count else { return nil }
        for i in 0...(haystack.count - needle.count) where haystack[i] == needle[0] {
            if Array(haystack[i..<(i + needle.count)]) == needle { return i }
        }
        return nil
    }

    func sendFrame(opcode: UInt8, _ payload: [UInt8]) throws(FarmError) {
        try writeAll(WebSocketFrame.client(opcode: opcode, payload))
    }

    func sendText(_ payload: [UInt8]) throws(FarmError) { try sendFrame(opcode: 1, payload) }

    func sendClose() throws(FarmError) { try sendFrame(opcode: 8, [0x03, 0xE8]) }

    /// The next whole text message (pings answered, fragments joined).
    func receiveText() throws(FarmError) -> [UInt8] {
        var message: [UInt8] = []
        while true {
            while buffer.count < 2 { try fill() }
            let b0 = buffer[0], b1 = buffer[1]
            var length = Int(b1 & 0x7F)
            var header = 2
            if length == 126 {
                while buffer.count < 4 { try fill() }
                length = Int(buffer[2]) << 8 | Int(buffer[3])
                header = 4
            } else if length == 127 {
                while buffer.count < 10 { try fill() }
                length = 0
                for i in 2..<10 { length = length << 8 | Int(buffer[i]) }
                header = 10
            }
            if length > 256 << 20 { throw FarmError("a message of \(length) bytes is too large") }
            while buffer.count < header + length { try fill() }
            let payload = Array(buffer[header..<(header + length)])
            buffer.removeFirst(header + length)
            switch b0 & 0x0F {
            case 0x9: try sendFrame(opcode: 0xA, payload)
            case 0xA: break
            case 0x8:
                let code = payload.count >= 2 ? Int(payload[0]) << 8 | Int(payload[1]) : 1005
                throw FarmError("the daemon closed the connection (\(code))")
            default:
                message.append(contentsOf: payload)
                if b0 & 0x80 != 0 { return message }
            }
        }
    }

    /// Reads messages until the reply with `id` (events in between are skipped).
    func reply(to id: Int64) throws(FarmError) -> JSONValue {
        while true {
            let text = try receiveText()
            let value: JSONValue
            do { value = try JSONParser.parse(text) } catch {
                throw FarmError("the daemon sent something that is not JSON (\(error))")
            }
            if value["id"]?.intValue == id { return value }
        }
    }
}

enum Base64 {
    static func encode(_ bytes: [UInt8]) -> String {
        let table = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
        var out: [UInt8] = []
        var i = 0
        while i < bytes.count {
            let b0 = bytes[i], b1 = i + 1 < bytes.count ? bytes[i + 1] : 0, b2 = i + 2 < bytes.count ? bytes[i + 2] : 0
            out.append(table[Int(b0 >> 2)])
            out.append(table[Int((b0 & 3) << 4 | b1 >> 4)])
            out.append(i + 1 < bytes.count ? table[Int((b1 & 15) << 2 | b2 >> 6)] : UInt8(ascii: "="))
            out.append(i + 2 < bytes.count ? table[Int(b2 & 63)] : UInt8(ascii: "="))
            i += 3
        }
        return String(decoding: out, as: UTF8.self)
    }
}
