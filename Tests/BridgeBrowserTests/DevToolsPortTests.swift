@testable import BridgeBrowser
import Foundation
import XCTest

/// `--devtools`: how the port is learnt from Chromium's profile and how /proc/net/tcp* addresses
/// are read for the loopback check (docs/SECURITY.md).
final class DevToolsPortTests: XCTestCase {
    func testTheURLComesFromDevToolsActivePort() throws {
        let dir = NSTemporaryDirectory() + "devtools-port-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        XCTAssertNil(DevToolsPort.read(profile: dir), "nothing before Chromium writes the file")
        try "40875\n/devtools/browser/cf604b57-d38f-47fd-a8a3-7aa98d13dfbb".write(toFile: dir + "/DevToolsActivePort", atomically: true, encoding: .utf8)
        let found = try XCTUnwrap(DevToolsPort.read(profile: dir))
        XCTAssertEqual(found.port, 40875)
        XCTAssertEqual(found.url, "ws://127.0.0.1:40875/devtools/browser/cf604b57-d38f-47fd-a8a3-7aa98d13dfbb")
        // A half-written or foreign file names nothing.
        for bad in ["40875", "0\n/devtools/browser/x", "70000\n/devtools/browser/x", "40875\n/json"] {
            try bad.write(toFile: dir + "/DevToolsActivePort", atomically: true, encoding: .utf8)
            XCTAssertNil(DevToolsPort.read(profile: dir), bad)
        }
    }

    func testProcNetAddressesAndLoopback() {
        XCTAssertEqual(DevToolsPort.address(hex: "0100007F", v6: false), "127.0.0.1")
        XCTAssertEqual(DevToolsPort.address(hex: "00000000", v6: false), "0.0.0.0")
        XCTAssertEqual(DevToolsPort.address(hex: "0101A8C0", v6: false), "192.168.1.1")
        XCTAssertEqual(DevToolsPort.address(hex: "00000000000000000000000001000000", v6: true), "::1")
        XCTAssertEqual(DevToolsPort.address(hex: "0000000000000000FFFF00000100007F", v6: true), "::ffff:127.0.0.1")
        XCTAssertEqual(DevToolsPort.address(hex: "00000000000000000000000000000000", v6: true), "0:0:0:0:0:0:0:0")
        for address in ["127.0.0.1", "127.1.2.3", "::1", "::ffff:127.0.0.1"] { XCTAssertTrue(DevToolsPort.isLoopback(address), address) }
        for address in ["0.0.0.0", "192.168.1.1", "0:0:0:0:0:0:0:0", "::ffff:10.0.0.1"] { XCTAssertFalse(DevToolsPort.isLoopback(address), address) }
    }

    func testAListeningSocketIsFoundWithItsAddress() throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        XCTAssertGreaterThanOrEqual(fd, 0)
        defer { close(fd) }
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        var len = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, len) } }
        XCTAssertEqual(bound, 0)
        XCTAssertEqual(listen(fd, 1), 0)
        _ = withUnsafeMutablePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &len) } }
        let port = Int(UInt16(bigEndian: addr.sin_port))
        XCTAssertEqual(DevToolsPort.listeningAddresses(port: port), ["127.0.0.1"])
    }
}
