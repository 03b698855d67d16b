import Dispatch

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Helpers shared by the subcommands: unbuffered stdout lines and signal handling.
enum Stdout {
    /// Writes one line straight to fd 1 (unbuffered, so a reader of a pipe sees it at once).
    static func writeLine(_ line: String) { writeWholeLine(line, to: 1) }
}

enum Stderr {
    /// Writes one line straight to fd 2.
    static func writeLine(_ line: String) { writeWholeLine(line, to: 2) }
}

private func writeWholeLine(_ line: String, to fd: Int32) {
    let bytes = Array((line + "\n").utf8)
    var offset = 0
    while offset < bytes.count {
        let n = bytes.withUnsafeBytes { write(fd, $0.baseAddress! + offset, $0.count - offset) }
        if n <= 0 { return }
        offset += n
    }
}

/// SIGINT/SIGTERM through Dispatch sources (the default action is disabled first), so the handler
/// is ordinary code on a Dispatch queue, not an async-signal context.
final class SignalHandlers {
    private let sources: [DispatchSourceSignal]

    /// Returns once every source is armed: a source registers asynchronously, and a signal that
    /// came before (say, right after the daemon printed its `listening on` line on a busy
    /// machine) would be lost to SIG_IGN.
    init(signals: [Int32], handler: @escaping @Sendable () -> Void) {
        let armed = DispatchSemaphore(value: 0)
        sources = signals.map { sig in
            signal(sig, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: sig, queue: .global())
            source.setEventHandler(handler: handler)
            source.setRegistrationHandler { armed.signal() }
            source.resume()
            return source
        }
        for _ in signals { _ = armed.wait(timeout: .now() + .seconds(10)) }
    }

    deinit { sources.forEach { $0.cancel() } }
}
