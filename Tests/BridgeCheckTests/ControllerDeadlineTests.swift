import Foundation
import Testing
@testable import BridgeCheck

#if canImport(Glibc)
import Glibc
#endif

/// A loopback listener that accepts WebSocket upgrades and then never answers a request: what a
/// daemon held by a page that does not answer looks like to its controller.
final class SilentServer: @unchecked Sendable {
    let listener: Int32
    let port: Int
    private let lock = NSLock()
    private var _accepted = 0
    var accepted: Int { lock.lock(); defer { lock.unlock() }; return _accepted }

    init() {
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        self.listener = listener
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        var len = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, len) } }
        listen(listener, 8)
        _ = withUnsafeMutablePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(listener, $0, &len) } }
        port = Int(UInt16(bigEndian: addr.sin_port))
        Thread.detachNewThread { [self] in
            while true {
                let c = accept(listener, nil, nil)
                if c < 0 { return }
                lock.lock(); _accepted += 1; lock.unlock()
                Thread.detachNewThread {
                    var head: [UInt8] = []
                    var b = [UInt8](repeating: 0, count: 1)
                    while !(head.count >= 4 && Array(head.suffix(4)) == [13, 10, 13, 10]) {
                        if recv(c, &b, 1, 0) <= 0 { return }
                        head.append(b[0])
                    }
                    let reply = Array("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n".utf8)
                    _ = send(c, reply, reply.count, Int32(MSG_NOSIGNAL))
                    var sink = [UInt8](repeating: 0, count: 4096)
                    while recv(c, &sink, sink.count, 0) > 0 {}
                    close(c)
                }
            }
        }
    }

    /// Stops accepting: a new connection is refused.
    func stop() { shutdown(listener, Int32(SHUT_RDWR)); close(listener) }
}

@Suite struct ControllerDeadlineTests {
    @Test func aCallWithoutAReplyEndsAtItsDeadlineOnANewConnection() throws {
        let server = SilentServer()
        let ctl = try ControllerClient(host: "127.0.0.1", port: server.port)
        var rejoined = 0
        ctl.onReconnect = { rejoined += 1 }
        let t0 = Date()
        #expect(throws: ControllerClient.CallTimeout.self) { try ctl.call("webview.evaluate", [:], timeout: 0.3) }
        #expect(Date().timeIntervalSince(t0) < 10)
        #expect(ctl.reconnects == 1 && rejoined == 1 && server.accepted == 2)
        // `soft` reads no answer as none.
        #expect(try ctl.soft { try ctl.call("session.get", [:], timeout: 0.2) } == nil)
        #expect(ctl.reconnects == 2)
        // Without reconnecting, the connection is left as it is.
        #expect(throws: ControllerClient.CallTimeout.self) { try ctl.call("hello", [:], timeout: 0.2, reconnecting: false) }
        #expect(ctl.reconnects == 2)
        // A daemon that accepts no new connection is gone: the check cannot go on.
        server.stop()
        #expect(throws: ClientError.self) { try ctl.call("webview.click", [:], timeout: 0.2) }
    }
}
