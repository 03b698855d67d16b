import Foundation
import Testing
@testable import BridgeCheck
import BridgeProtocol

#if canImport(Glibc)
import Glibc
#endif

/// A one-connection WebSocket server on loopback, scripted: it answers the upgrade with
/// `status`, then sends `frames` (raw bytes) and records what the client sent.
final class ScriptedServer: @unchecked Sendable {
    let listener: Int32
    let port: Int
    private let lock = NSLock()
    private var received: [UInt8] = []
    private let done = DispatchSemaphore(value: 0)

    init(status: String = "HTTP/1.1 101 Switching Protocols", frames: [[UInt8]], readAfter: Int = 0) throws {
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        self.listener = listener
        var one: Int32 = 1
        setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        addr.sin_port = 0
        var len = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, len) } }
        listen(listener, 1)
        _ = withUnsafeMutablePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(listener, $0, &len) } }
        port = Int(UInt16(bigEndian: addr.sin_port))
        let fd = listener
        Thread.detachNewThread { [self] in
            let c = accept(fd, nil, nil)
            var head: [UInt8] = []
            var b = [UInt8](repeating: 0, count: 4096)
            while !(head.count >= 4 && Array(head.suffix(4)) == [13, 10, 13, 10]) {
                let n = recv(c, &b, 1, 0)
                if n <= 0 { break }
                head.append(b[0])
            }
            let reply = Array("\(status)\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n".utf8)
            _ = send(c, reply, reply.count, Int32(MSG_NOSIGNAL))
            for f in frames { _ = send(c, f, f.count, Int32(MSG_NOSIGNAL)) }
            var got: [UInt8] = []
            while got.count < readAfter {
                let n = recv(c, &b, b.count, 0)
                if n <= 0 { break }
                got += b[0..<n]
            }
            lock.lock(); received = got; lock.unlock()
            done.signal()
            usleep(200_000)
            close(c)
        }
    }

    deinit { close(listener) }

    /// What the client sent after the handshake (once `readAfter` bytes came).
    func sent() -> [UInt8] {
        done.wait()
        lock.lock(); defer { lock.unlock() }
        return received
    }

    /// An unmasked server frame.
    static func frame(_ opcode: UInt8, _ payload: [UInt8], fin: Bool = true) -> [UInt8] {
        var f: [UInt8] = [(fin ? 0x80 : 0) | opcode]
        if payload.count < 126 { f.append(UInt8(payload.count)) } else { f += [126, UInt8(payload.count >> 8), UInt8(payload.count & 255)] }
        return f + payload
    }
}

@Suite struct WebSocketClientTests {
    @Test func joinsFragmentsAnswersPingsAndReportsTheCloseCode() throws {
        let server = try ScriptedServer(frames: [
            ScriptedServer.frame(0x1, Array("hel".utf8), fin: false),
            ScriptedServer.frame(0x9, [7, 7]),  // a ping between two fragments
            ScriptedServer.frame(0x0, Array("lo".utf8)),
            ScriptedServer.frame(0x1, Array(repeating: UInt8(ascii: "x"), count: 300)),
            ScriptedServer.frame(0x8, [0x03, 0xF1]),  // 1009
        ], readAfter: 8)
        let ws = try WebSocketClient(host: "127.0.0.1", port: server.port, path: "/bridge", timeout: 5)
        #expect(try ws.receive(timeout: 5) == "hello")
        #expect(try ws.receive(timeout: 5) == String(repeating: "x", count: 300))
        do {
            _ = try ws.receive(timeout: 5)
            Issue.record("no error on close")
        } catch {
            #expect(error.message == "the daemon closed the connection (1009)")
        }
        // The pong carried the ping's payload, masked.
        let pong = server.sent()
        #expect(pong[0] == 0x8A && pong[1] == 0x82)
        #expect([pong[6] ^ pong[2], pong[7] ^ pong[3]] == [7, 7])
    }

    @Test func aRefusedUpgradeSaysItsStatus() throws {
        let server = try ScriptedServer(status: "HTTP/1.1 403 Forbidden", frames: [])
        do {
            _ = try WebSocketClient(host: "127.0.0.1", port: server.port, timeout: 5)
            Issue.record("accepted")
        } catch {
            #expect(error.message == "the WebSocket upgrade was refused: HTTP/1.1 403 Forbidden")
        }
    }

    @Test func aMessageOverTheLimitIsRefused() throws {
        let server = try ScriptedServer(frames: [ScriptedServer.frame(0x1, Array(repeating: 65, count: 200))])
        let ws = try WebSocketClient(host: "127.0.0.1", port: server.port, timeout: 5, maxMessageBytes: 199)
        do {
            _ = try ws.receive(timeout: 5)
            Issue.record("accepted")
        } catch {
            #expect(error.message == "a message of 200 bytes is too large")
        }
        // At the limit it passes.
        let at = try ScriptedServer(frames: [ScriptedServer.frame(0x1, Array(repeating: 65, count: 199))])
        let ws2 = try WebSocketClient(host: "127.0.0.1", port: at.port, timeout: 5, maxMessageBytes: 199)
        #expect(try ws2.receive(timeout: 5)?.count == 199)
    }

    @Test func nothingListeningIsConnectionRefused() throws {
        // A port that was bound and released: nothing listens there.
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        var len = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, len) } }
        _ = withUnsafeMutablePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &len) } }
        let port = Int(UInt16(bigEndian: addr.sin_port))
        close(fd)
        do {
            _ = try WebSocketClient(host: "127.0.0.1", port: port, timeout: 2)
            Issue.record("connected")
        } catch {
            #expect(error.message == "cannot connect to 127.0.0.1:\(port): Connection refused")
        }
        #expect(CheckPreflight.unreachable("http://127.0.0.1:\(port)/app/")?.contains("Connection refused") == true)
    }
}

/// A lost connection to the checker's daemon ends the check (exit 2), never hidden as a page
/// that did not answer.
@Suite struct DaemonConnectionTests {
    static func reply(_ id: Int, _ result: String) -> [UInt8] {
        ScriptedServer.frame(0x1, Array("{\"id\":\(id),\"result\":\(result)}".utf8))
    }

    @Test func anAnswerWithAnErrorIsSoftALostConnectionIsNot() throws {
        let server = try ScriptedServer(frames: [])
        let c = try ControllerClient(host: "127.0.0.1", port: server.port)
        let none: Int? = try c.soft { throw ControllerClient.CallError(code: "browser-error", message: "no page") }
        #expect(none == nil)
        #expect(try c.soft { 7 } == 7)
        #expect(throws: ClientError.self) { _ = try c.soft { () throws -> Int in throw ClientError("the connection closed") } }
    }

    /// A Turbo visit is waited for until it renders or fails, or until its document goes away
    /// (the page disconnects, the web view closes, native cold-boots it on pageInvalidated):
    /// a visit that can no longer render does not hold a step for the whole timeout.
    @Test func aVisitWhoseDocumentWentAwayIsNotWaitedFor() throws {
        let server = try ScriptedServer(frames: [])
        var options = CheckOptions(url: "http://127.0.0.1:9/", steps: [], budgetMs: nil, maxStates: 2, host: "127.0.0.1", port: server.port)
        options.profile = .hotwireNative
        let runner = try CheckRunner(options)
        func started(_ id: String) {
            runner.event("hotwire.message", ["webview": "W1", "name": "visitStarted",
                                             "data": ["identifier": .string(id), "location": "http://a/one"]])
        }
        for end: (String, JSONValue) in [
            ("hotwire.message", ["webview": "W1", "name": "visitRendered", "data": ["identifier": "v"]]),
            ("hotwire.message", ["webview": "W1", "name": "pageInvalidated", "data": [:]]),
            ("page.disconnected", ["webview": "W1"]),
            ("webview.closed", ["webview": "W1"]),
        ] {
            started("v")
            #expect(runner.visiting["W1"]?.location == "http://a/one")
            runner.event("hotwire.message", ["webview": "W1", "name": "visitRendered", "data": ["identifier": "other"]])
            #expect(runner.visiting["W1"] != nil, "another visit's render does not end this one")
            runner.event(end.0, end.1)
            #expect(runner.visiting["W1"] == nil, "\(end)")
        }
    }

    @Test func theDaemonGoingAwayMidRunEndsTheCheckSayingSo() throws {
        // hello, session.create and session.subscribe are answered, then the daemon is gone.
        let server = try ScriptedServer(frames: [Self.reply(1, "{}"), Self.reply(2, "{\"session\":\"s-1\"}"), Self.reply(3, "{}")])
        var options = CheckOptions(url: "http://127.0.0.1:9/", steps: [], budgetMs: nil, maxStates: 2, host: "127.0.0.1", port: server.port)
        options.timeout = 5
        do {
            _ = try CheckRunner(options).run()
            Issue.record("the check ran on")
        } catch let e as CheckCannotRun {
            #expect(e.message.hasPrefix("the check stopped: the connection to the checker's own daemon failed ("))
            #expect(e.message.hasSuffix("the daemon exited or stopped answering, so nothing was judged"))
        }
    }
}
