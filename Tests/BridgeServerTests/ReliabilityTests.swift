#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
@testable import BridgeServer
import CWireCheck
import Dispatch
import Foundation
import Testing

/// Issue 25: a descriptor of another thread closed by a transport's teardown (the flake of
/// `stopFromAnotherThreadEndsRunAndLaterWorkIsDropped`), pings noted for their pong, start-up
/// errors named.
@Suite struct ReliabilityTests {
    // MARK: - lws's double close of its wake-up descriptor

    /// A thread opens /dev/null, checks the descriptor is still its own, closes it, over and
    /// over, while transports start and stop. lws 4.1.6 on a libuv loop closes its wake-up
    /// descriptor twice at destroy; without the hold, the number freed by the first close is
    /// soon this thread's, and the second close takes it away (EBADF on the thread's close, or
    /// the number already someone else's).
    @Test func teardownNeverClosesADescriptorAnotherThreadOpened() throws {
        var devNull = stat()
        #expect(stat("/dev/null", &devNull) == 0)
        let rdev = devNull.st_rdev
        let stop = Locked(false)
        let failures = Locked<[String]>([])
        let opened = Locked(0)
        let done = DispatchSemaphore(value: 0)
        let thread = Thread {
            var st = stat()
            while !stop.withLock({ $0 }) {
                let fd = open("/dev/null", O_RDONLY | O_CLOEXEC)
                guard fd >= 0 else { continue }
                var mine = true
                for _ in 0..<20 where fstat(fd, &st) != 0 || st.st_rdev != rdev {
                    mine = false
                    break
                }
                let closed = close(fd)
                if !mine || closed != 0 {
                    failures.withLock { $0.append("descriptor \(fd): still mine \(mine), close \(closed) errno \(errno)") }
                }
                opened.withLock { $0 += 1 }
            }
            done.signal()
        }
        thread.start()
        for _ in 0..<200 {
            let service = ServiceThread()
            #expect(service.waitStarted())
            #expect(service.stop())
        }
        stop.withLock { $0 = true }
        #expect(done.wait(timeout: .now() + 30) == .success)
        #expect(opened.withLock { $0 } > 0)
        #expect(failures.withLock { $0 } == [])
    }

    /// The hold itself: the first close leaves a placeholder in the number's place, the second
    /// frees it; a release closes a placeholder still in place.
    ///
    /// The descriptors are moved to numbers near the open-file limit first: other tests run in
    /// parallel and open descriptors, and the kernel hands out the lowest free number, so a
    /// number freed here at the bottom could be taken by another test before it is checked.
    @Test func aHeldDescriptorStaysTakenUntilItsSecondClose() throws {
        var limit = rlimit()
        #expect(getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit) == 0)
        let top = Int32(min(limit.rlim_cur, 65_536)) - 8
        #expect(top > 64)
        /// A pipe whose read end sits at `at`, well above what other tests reach; the write end is
        /// closed.
        func readEnd(at fd: Int32) -> Int32 {
            var fds: [Int32] = [0, 0]
            #expect(pipe(&fds) == 0)
            #expect(fcntl(fd, F_GETFD) == -1)  // free before this test takes it
            #expect(dup2(fds[0], fd) == fd)
            close(fds[0])
            close(fds[1])
            return fd
        }

        let held = readEnd(at: top)
        bridged_wire_hold_on_close(held)
        #expect(close(held) == 0)
        var st = stat()
        #expect(fcntl(held, F_GETFD) >= 0)  // still open: the placeholder
        #expect(fstat(held, &st) == 0 && (st.st_mode & S_IFMT) == S_IFCHR)
        #expect(close(held) == 0)  // lws's second close: the placeholder
        #expect(fcntl(held, F_GETFD) == -1)
        bridged_wire_release_held(held)  // nothing left to do
        #expect(fcntl(held, F_GETFD) == -1)

        // Released while the placeholder is in place: it is closed.
        let placeheld = readEnd(at: top + 1)
        bridged_wire_hold_on_close(placeheld)
        #expect(close(placeheld) == 0)
        #expect(fcntl(placeheld, F_GETFD) >= 0)
        bridged_wire_release_held(placeheld)
        #expect(fcntl(placeheld, F_GETFD) == -1)

        // Released before any close: an ordinary descriptor again.
        let plain = readEnd(at: top + 2)
        bridged_wire_hold_on_close(plain)
        bridged_wire_release_held(plain)
        #expect(close(plain) == 0)
        #expect(fcntl(plain, F_GETFD) == -1)

        // The placeholder keeps a low number taken too: the next open gets another one.
        var fds: [Int32] = [0, 0]
        #expect(pipe(&fds) == 0)
        close(fds[1])
        bridged_wire_hold_on_close(fds[0])
        #expect(close(fds[0]) == 0)
        let next = open("/dev/null", O_RDONLY | O_CLOEXEC)
        #expect(next != fds[0])
        close(next)
        bridged_wire_release_held(fds[0])
    }

    // MARK: - Memory of a slow reader

    /// Small messages with a writer's spare capacity behind them (a 100-byte event in a 4 KiB
    /// buffer) pushed to a client that reads nothing: those that wait are kept at their exact
    /// size, and the client is closed with 1008 once they hold more than `memoryBound` times the limit
    /// on the heap, never later; a large queue dropped is followed by a `malloc_trim`.
    @Test func aSlowReadersQueueIsBoundedByTheMemoryItHolds() throws {
        var config = ServiceThread.defaultConfiguration()
        config.maxSendQueueBytes = 512 * 1024  // twice it is the trim threshold (1 MiB)
        config.slowReaderTimeout = .seconds(3600)  // only the memory bound can close it
        let limit = config.maxSendQueueBytes
        let outcome = Recorder<String>()
        let service = ServiceThread(configuration: config, makeDelegate: { t in
            let d = ScriptedDelegate(t, events: Recorder())
            d.onOpen = { t, id, _ in
                var pushed = 0
                var maxMemory = 0
                var perMessage = Int.max  // the least a queued message added
                func push() {
                    for _ in 0..<200 where t.isOpen(id) {
                        var message = [UInt8](repeating: UInt8(ascii: "e"), count: 100)
                        message.reserveCapacity(4096)
                        let before = t.queuedMemory(id) ?? 0
                        t.send(id, message)
                        pushed += 1
                        if let after = t.queuedMemory(id) {
                            maxMemory = max(maxMemory, after)
                            if after > before { perMessage = min(perMessage, after - before) }
                        }
                    }
                    if t.isOpen(id) && pushed < 1_000_000 {
                        _ = t.schedule(afterMicroseconds: 100) { push() }
                    } else {
                        let bound = Transport.memoryBound
                        let bounded = maxMemory <= bound * limit + 4096 + 40 && maxMemory > (bound - 1) * limit
                        outcome.append("open=\(t.isOpen(id)) bounded=\(bounded) compact=\(perMessage <= 100 + 40 + 16)")
                    }
                }
                push()
            }
            return d
        })
        #expect(service.waitStarted())
        defer { service.stop() }
        let client = try RawClient(port: service.port, receiveBuffer: 4096)
        #expect(outcome.wait(forCount: 1, seconds: 60))
        #expect(outcome.all == ["open=false bounded=true compact=true"])
        #expect(TestLog.contains(.warning, "too slow"))
        #expect(try client.readUntilClose() == 1008)
        #expect((service.sync { $0.memoryTrims } ?? 0) >= 1)
    }

    // MARK: - Pings noted by the wire check

    static func frame(_ opcode: UInt8, _ payload: [UInt8], fin: Bool = true) -> [UInt8] {
        WireCheckTests.frame(opcode, payload, fin: fin)
    }

    /// A ping anywhere in the stream, cut at any byte, sets the flag; other frames do not.
    @Test func aPingIsNotedWhereverTheReadsAreCut() {
        let body = [UInt8](repeating: 0x09, count: 300)  // payload bytes that look like ping opcodes
        let withPing = Self.frame(0x1, Array(body[0..<100]), fin: false) + Self.frame(0x9, [1, 2])
            + Self.frame(0x0, Array(body[100...]))
        let without = Self.frame(0x1, body) + Self.frame(0xA, [9]) + Self.frame(0x8, [3, 0xE8])
        for (stream, expected) in [(withPing, true), (without, false)] {
            for cut in 0...stream.count {
                var s = bridged_wire_state_t()
                s.phase = UInt8(BRIDGED_WIRE_FRAMES)
                stream.withUnsafeBufferPointer { b in
                    #expect(bridged_wire_scan_frames(&s, b.baseAddress, cut) == cut)
                    #expect(bridged_wire_scan_frames(&s, b.baseAddress! + cut, stream.count - cut) == stream.count - cut)
                }
                #expect((s.flags & UInt8(BRIDGED_WIRE_PING_SEEN) != 0) == expected, "cut at \(cut)")
            }
        }
    }

    // MARK: - Start-up errors

    @Test func bindErrorsAreNamed() {
        #expect(BindFailure.message(address: "127.0.0.1", port: 8787, errorNumber: EADDRINUSE)
            .hasPrefix("127.0.0.1:8787 is already in use (EADDRINUSE)"))
        #expect(BindFailure.message(address: "::1", port: 80, errorNumber: EACCES)
            .hasPrefix("no permission to listen on [::1]:80 (EACCES)"))
        #expect(BindFailure.message(address: "192.0.2.1", port: 1, errorNumber: EADDRNOTAVAIL)
            .hasPrefix("192.0.2.1 is not an address of this machine (EADDRNOTAVAIL)"))
        #expect(BindFailure.message(address: "127.0.0.1", port: 1, errorNumber: EMFILE).hasSuffix("(EMFILE)"))
        #expect(BindFailure.probe(address: "lo", port: 1) == nil)
        #expect(BindFailure.probe(address: "192.0.2.1", port: 0) == EADDRNOTAVAIL)
        #expect(BindFailure.probe(address: "127.0.0.1", port: 0) == 0)
    }

    @Test func aPortInUseIsNamedWhenTheTransportFailsToStart() throws {
        let first = ServiceThread()
        #expect(first.waitStarted())
        defer { first.stop() }
        var c = ServiceThread.defaultConfiguration()
        c.port = first.port
        let second = ServiceThread(configuration: c)
        #expect(!second.waitStarted())
        #expect(second.waitFinished())
        guard case .startFailed = second.runError as? TransportError else {
            Issue.record("expected startFailed, got \(String(describing: second.runError))")
            return
        }
        let text = second.runError.map { "\($0)" } ?? ""
        #expect(text.contains("127.0.0.1:\(first.port) is already in use (EADDRINUSE)"), "\(text)")
        // lws's own error line, routed through the emit callback into swift-log.
        #expect(TestLog.contains(.error, "lws: ERROR on binding fd"))
    }
}
