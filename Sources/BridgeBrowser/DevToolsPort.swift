import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Chromium's own DevTools port beside the pipe (`--devtools`, docs/PLAYWRIGHT.md): how it is
/// asked for, how its address is learnt, and the check that it listens on loopback only.
///
/// Facts checked with Debian's Chromium 156 (new headless): `--remote-debugging-port=0` next to
/// `--remote-debugging-pipe` gives both; Chromium writes `PORT\n/devtools/browser/ID` into
/// `DevToolsActivePort` in its profile directory (and "DevTools listening on ws://…" on stderr);
/// it binds 127.0.0.1 and ignores `--remote-debugging-address=0.0.0.0`.
enum DevToolsPort {
    /// Chromium's flags for a port of its choice on loopback.
    static let arguments = ["--remote-debugging-port=0", "--remote-debugging-address=127.0.0.1"]

    /// `ws://127.0.0.1:PORT/devtools/browser/ID` from the profile's `DevToolsActivePort`; nil
    /// while Chromium has not written it.
    static func read(profile: String) -> (port: Int, url: String)? {
        guard let text = try? String(contentsOfFile: profile + "/DevToolsActivePort", encoding: .utf8) else { return nil }
        let lines = text.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
        guard lines.count >= 2, let port = Int(lines[0]), (1...65535).contains(port),
              lines[1].hasPrefix("/devtools/browser/") else { return nil }
        return (port, "ws://127.0.0.1:\(port)\(lines[1])")
    }

    /// The local addresses of the TCP sockets listening on `port` (from /proc/net/tcp and
    /// tcp6), each as "127.0.0.1" / "::1" / another text; empty when none is found.
    static func listeningAddresses(port: Int) -> [String] {
        var found: [String] = []
        for (file, v6) in [("/proc/net/tcp", false), ("/proc/net/tcp6", true)] {
            guard let text = try? String(contentsOfFile: file, encoding: .utf8) else { continue }
            for line in text.split(separator: "\n").dropFirst() {
                let fields = line.split(separator: " ", omittingEmptySubsequences: true)
                // sl local_address rem_address st …; 0A is LISTEN.
                guard fields.count > 3, fields[3] == "0A" else { continue }
                let local = fields[1].split(separator: ":")
                guard local.count == 2, Int(local[1], radix: 16) == port else { continue }
                found.append(address(hex: String(local[0]), v6: v6))
            }
        }
        return found
    }

    /// An address of /proc/net/tcp* (each 32-bit word in host order, little-endian here).
    static func address(hex: String, v6: Bool) -> String {
        var bytes: [UInt8] = []
        var i = hex.startIndex
        while i < hex.endIndex, let j = hex.index(i, offsetBy: 8, limitedBy: hex.endIndex) {
            guard let word = UInt32(hex[i..<j], radix: 16) else { return hex }
            let le = word.byteSwapped
            bytes += [UInt8(le >> 24), UInt8((le >> 16) & 0xff), UInt8((le >> 8) & 0xff), UInt8(le & 0xff)]
            i = j
        }
        if !v6, bytes.count == 4 { return bytes.map(String.init).joined(separator: ".") }
        guard bytes.count == 16 else { return hex }
        if bytes[0..<10].allSatisfy({ $0 == 0 }) && bytes[10] == 0xff && bytes[11] == 0xff {
            return "::ffff:" + bytes[12...].map(String.init).joined(separator: ".")
        }
        if bytes[0..<15].allSatisfy({ $0 == 0 }) && bytes[15] == 1 { return "::1" }
        return stride(from: 0, to: 16, by: 2).map { String(UInt16(bytes[$0]) << 8 | UInt16(bytes[$0 + 1]), radix: 16) }.joined(separator: ":")
    }

    /// Whether `address` (as `address(hex:v6:)` writes it) is a loopback address.
    static func isLoopback(_ address: String) -> Bool {
        address.hasPrefix("127.") || address == "::1" || address.hasPrefix("::ffff:127.")
    }

    /// Waits (up to `timeout` seconds) for Chromium to name its port, then checks that every
    /// socket listening on it is on loopback. Throws `launchFailed` otherwise.
    static func discover(profile: String, timeout: Double) async throws -> String {
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            if let (port, url) = read(profile: profile) {
                let addresses = listeningAddresses(port: port)
                #if os(Linux)
                if addresses.isEmpty {
                    // Named before it listens: look again in a moment.
                    if Date() < deadline { try await Task.sleep(nanoseconds: 20_000_000); continue }
                    throw BrowserError.launchFailed("Chromium named DevTools port \(port) but nothing listens on it")
                }
                #endif
                if let wide = addresses.first(where: { !isLoopback($0) }) {
                    throw BrowserError.launchFailed("Chromium's DevTools port \(port) listens on \(wide), not only on loopback; refused")
                }
                return url
            }
            guard Date() < deadline else {
                throw BrowserError.launchFailed("Chromium did not name its DevTools port (no DevToolsActivePort in its profile) within \(Int(timeout)) s")
            }
            try await Task.sleep(nanoseconds: 20_000_000)
        }
    }
}

/// A value read from any thread and written by the host (the DevTools url of the running Chromium).
final class SharedValue<T: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: T

    init(_ value: T) { stored = value }

    var value: T {
        get { lock.withLock { stored } }
        set { lock.withLock { stored = newValue } }
    }
}
