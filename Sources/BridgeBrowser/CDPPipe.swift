import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Chromium's DevTools pipe (`--remote-debugging-pipe`) as a `CDPTransport`: NUL-framed JSON
/// both ways, on two descriptors.
///
/// One reader thread splits what Chromium writes at each NUL and hands the messages on in
/// order. Writes happen on the caller's thread under a lock. When Chromium closes its end
/// (exit or crash), both descriptors are closed, `send` returns false, and then `closed` runs.
final class CDPPipe: CDPTransport, @unchecked Sendable {
    private let writeFD: Int32
    private let readFD: Int32
    private let writeLock = NSLock()
    /// Under `writeLock`: the write end is closed (the descriptor number may be reused).
    private var writeClosed = false

    init(writeFD: Int32, readFD: Int32) {
        self.writeFD = writeFD
        self.readFD = readFD
    }

    func start(receive: @escaping @Sendable ([UInt8]) -> Void, closed: @escaping @Sendable () -> Void) {
        let thread = Thread { [self] in
            readLoop(receive)
            closed()
        }
        thread.name = "bridged-cdp-reader"
        thread.start()
    }

    func send(_ message: consuming [UInt8]) -> Bool {
        var bytes = message
        bytes.append(0)
        writeLock.lock(); defer { writeLock.unlock() }
        if writeClosed { return false }
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeBytes { write(writeFD, $0.baseAddress! + offset, $0.count - offset) }
            if n < 0 {
                if errno == EINTR { continue }
                return false
            }
            offset += n
        }
        return true
    }

    private func readLoop(_ receive: ([UInt8]) -> Void) {
        var buffer: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let n = chunk.withUnsafeMutableBytes { read(readFD, $0.baseAddress!, $0.count) }
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { break }
            var start = buffer.count
            buffer.append(contentsOf: chunk[0..<n])
            var consumed = 0
            // Every NUL ends one message.
            while let nul = buffer[start...].firstIndex(of: 0) {
                receive(Array(buffer[consumed..<nul]))
                consumed = nul + 1
                start = consumed
            }
            if consumed > 0 { buffer.removeFirst(consumed) }
        }
        close(readFD)
        // The write end stays open until now so that no descriptor number is reused meanwhile.
        writeLock.withLock {
            writeClosed = true
            _ = close(writeFD)
        }
    }
}
