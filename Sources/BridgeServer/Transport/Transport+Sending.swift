#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import BridgeProtocol
import CWebsockets
import CWireCheck
import Logging

/// Sending (Transport.swift): queueing a message for a connection, flushing what callbacks
/// queued, slow readers, closes, and writing frames when lws says a connection is writable.
extension Transport {
    // MARK: - Sending

    /// Queues a text message for `id` (service thread). A no-op for unknown or closing
    /// connections. If the connection's unsent bytes exceed `maxSendQueueBytes`, the queue is
    /// dropped and the connection is closed with 1008.
    public func send(_ id: ConnectionID, _ message: [UInt8]) {
        guard !destroying, let conn = sendTarget(id), conn.acceptsMessages else { return }
        // A message that will wait (for the socket, or behind several others) holds no spare
        // capacity: a writer's buffer (256 bytes or more) behind a 100-byte event would
        // otherwise cost three times what it says. (A reply written at the end of the callback
        // is not copied.)
        if message.capacity - message.count >= Transport.compactSlack,
           conn.writableRequested || conn.queue.count >= Transport.compactBehind {
            conn.queue.append(Transport.exactCopy(message))
        } else {
            conn.queue.append(message)
        }
        conn.queuedBytes += message.count
        let limit = configuration.maxSendQueueBytes
        if conn.queuedBytes > limit || conn.queue.memory > Transport.memoryBound * limit, isSlowReader(conn) {
            overflow(conn)
            return
        }
        if !conn.writableRequested && !conn.flushPending {
            conn.flushPending = true
            pendingFlush.append(conn)
        }
    }

    /// The open connection `id`, nil when there is none. The last one found, or the one whose
    /// message is being handled (set by `receive`), is tried first: a reply goes to it without
    /// a table lookup.
    @inline(__always)
    func sendTarget(_ id: ConnectionID) -> Connection? {
        if let conn = lastSendTarget, conn.id == id.raw, !conn.closed { return conn }
        lastSendTarget = connections[id.raw]
        return lastSendTarget
    }

    /// Writes what the current callback queued, once it ends: each connection's whole messages
    /// go out in one `send` at once, without waiting for the socket to be reported writable
    /// (a round of the event loop, and two changes to its interest set, per reply). Only when
    /// lws holds nothing unsent for the connection and its next message is whole; otherwise,
    /// and for what does not fit in one write, the connection waits for WRITEABLE as before.
    /// lws buffers what the socket does not take and sends it first (at most one chunk, since
    /// nothing more is written directly while it holds bytes).
    func flushPendingWrites() {
        var list: [Connection] = []
        swap(&list, &pendingFlush)
        defer {
            // (Element by element: removeAll(keepingCapacity:) goes through the generic
            // replaceSubrange, several times dearer for a few elements.)
            while !list.isEmpty { list.removeLast() }
            if pendingFlush.isEmpty { swap(&list, &pendingFlush) }
        }
        for conn in list {
            conn.flushPending = false
            guard !destroying, !conn.writableRequested, !conn.queue.isEmpty, !conn.closed else { continue }
            // A ping read since lws last had the socket writable: its pong goes first, from
            // lws's handling of WRITEABLE (RFC 6455 §5.5.2, "as soon as practical").
            if conn.acceptsMessages, !conn.wireFailed, !conn.discardInput, conn.headOffset == 0,
               let first = conn.queue.first, first.count <= Transport.chunkSize - 4,
               bridged_lws_has_buffered_out(conn.wsi) == 0, bridged_wire_ping_pending(conn.fd) == 0 {
                if writeBatch(conn) < 0 {
                    // The socket failed: no close frame can go out; lws drops the connection.
                    conn.queuedBytes -= conn.queue.removeAll()
                    conn.discardInput = true
                    conn.closeSent = true
                    bridged_lws_kill_async(conn.wsi)
                }
            } else {
                requestWritable(conn)
            }
        }
    }

    /// The heap the messages waiting for one connection may hold, in multiples of
    /// `maxSendQueueBytes`: two, so that with what the allocator keeps around each small message
    /// and everything else the daemon allocates meanwhile, one slow reader stays well under four
    /// times the limit of resident memory (docs/SECURITY.md; at three, faster pushers of small
    /// events measured 313 MiB at a 64 MiB limit against the 280 promised).
    static let memoryBound = 2

    /// Heap held by the messages queued for `id` (nil for an unknown id).
    func queuedMemory(_ id: ConnectionID) -> Int? { connections[id.raw]?.queue.memory }

    /// Spare capacity from which a message that waits is copied to an exact-size array.
    static let compactSlack = 64
    /// Messages queued ahead from which the next one is compacted even before the socket is full.
    static let compactBehind = 4

    static func exactCopy(_ message: [UInt8]) -> [UInt8] {
        let n = message.count
        return message.withUnsafeBufferPointer { src in
            [UInt8](unsafeUninitializedCapacity: n) { dst, count in
                _ = dst.initialize(fromContentsOf: src)
                count = n
            }
        }
    }

    /// Dropped queues of at least this many bytes of heap are handed back to the system.
    static let trimAfterFreeing = 1 << 20

    /// A queue holding `bytes` of heap is being dropped. glibc keeps what is freed in its heap
    /// (the top of the heap is pinned by anything allocated later, and free pages in the middle
    /// stay resident), so a slow reader's queue of hundreds of MiB would stay in the RSS for
    /// the life of the process: a large one is followed by `malloc_trim`, once the current
    /// callback has released it (several in one round: one trim).
    func noteFreeing(_ bytes: Int) {
        guard bytes >= Transport.trimAfterFreeing, !trimScheduled, !destroying else { return }
        trimScheduled = true
        _ = schedule(afterMicroseconds: 0) { [unowned self] in
            self.trimScheduled = false
            bridged_malloc_trim()
            self.memoryTrims &+= 1
        }
    }

    /// A slow reader is one whose queue *stays* over `maxSendQueueBytes`: the bytes waiting
    /// behind the message being written (so a single message, however large, never counts)
    /// have been over the limit at every send for `slowReaderTimeout`, without the socket taking
    /// enough to bring them back under it in between. Waiting messages that hold more than
    /// `memoryBound` times the limit on the heap (or waiting bytes over four times it) count at
    /// once: the memory bound of one connection.
    func isSlowReader(_ conn: Connection) -> Bool {
        let limit = configuration.maxSendQueueBytes
        let first = conn.queue.first
        // The memory bound: what the waiting messages hold on the heap (their bytes, the
        // arrays around them), whatever their sizes.
        if conn.queue.memory - (first.map(MessageQueue.cost) ?? 0) > Transport.memoryBound * limit { return true }
        let inFlight = first.map { $0.count - conn.headOffset } ?? 0
        let waiting = conn.queuedBytes - inFlight
        if waiting <= limit { return false }
        if waiting > 4 * limit { return true }
        let now = monotonicMicroseconds
        if conn.overSince == 0 {
            conn.overSince = now
            return false
        }
        return now - conn.overSince >= configuration.slowReaderTimeout.microseconds
    }

    /// After a write: the queue is back under the limit, the slow-reader clock stops.
    @inline(__always)
    func noteWritten(_ conn: Connection) {
        if conn.overSince != 0 {
            let inFlight = conn.queue.first.map { $0.count - conn.headOffset } ?? 0
            if conn.queuedBytes - inFlight <= configuration.maxSendQueueBytes { conn.overSince = 0 }
        }
    }

    /// Closes `id` with `code` once every message queued before this call has been written
    /// (service thread). Later `send`s are dropped. A no-op for unknown or already closing ids.
    /// `reason` is truncated to 123 bytes.
    public func close(_ id: ConnectionID, code: UInt16, reason: String) {
        guard !destroying, let conn = connections[id.raw], conn.acceptsMessages else { return }
        conn.closeRequest = CloseRequest(code, reason)
        requestWritable(conn)
    }

    func requestWritable(_ conn: Connection) {
        if !conn.writableRequested {
            conn.writableRequested = true
            lws_callback_on_writable(conn.wsi)
        }
    }

    /// Arms lws's close grace for `conn` (see `closeGraceSeconds`).
    func setCloseGrace(_ conn: Connection) {
        bridged_lws_set_timeout(conn.wsi, Transport.closeGraceSeconds)
        lwsTimeoutsSet = true
    }

    /// How long a peer may take to make room for our close frame, and then to answer it with its
    /// own close, before lws drops the connection.
    static let closeGraceSeconds: Int32 = 5

    func overflow(_ conn: Connection) {
        logger.warning("closing a connection whose reader is too slow",
                       metadata: ["connection": "c\(conn.id)", "queued": "\(conn.queuedBytes)",
                                  "limit": "\(configuration.maxSendQueueBytes)"])
        counters.sendQueueOverflows &+= 1
        abort(conn, code: 1008, reason: "send queue overflow")
    }

    /// Closes without flushing: unsent messages are dropped, further input is read and ignored
    /// (not left unread: closing a socket with unread input sends a RST, which destroys the close
    /// frame in flight), the close frame goes out as soon as the socket has room, and the
    /// connection is dropped if that does not happen within `closeGraceSeconds`.
    func abort(_ conn: Connection, code: UInt16, reason: String) {
        guard !conn.closeSent else { return }
        noteFreeing(conn.queue.memory)
        conn.queue.removeAll()
        conn.queuedBytes = 0
        conn.headOffset = 0
        conn.discardInput = true
        conn.closeRequest = CloseRequest(code, reason)
        setCloseGrace(conn)
        requestWritable(conn)
    }

    /// Writes the close frame (from WRITEABLE) and starts the closing handshake: the peer
    /// answers with its own close, on which lws closes the socket (see PEER_INITIATED_CLOSE).
    ///
    /// Why not lws_close_reason + return -1: lws 4.1 then sends the close only on a later
    /// writable event and kills the connection without it if data frames arrive in between (a
    /// client still streaming an oversized message), and it closes the socket right after the
    /// close frame even with unread input (RST: the peer may never see the close).
    func sendClose(_ conn: Connection, _ code: UInt16, _ reason: String) {
        var bytes: [UInt8] = [UInt8(code >> 8), UInt8(code & 0xFF)] + Array(reason.utf8)
        if bytes.count > 125 {
            // Cut at 125 bytes without splitting a character (the peer would see invalid UTF-8).
            bytes.removeSubrange(125...)
            var i = bytes.count - 1
            while i > 2 && bytes[i] & 0xC0 == 0x80 { i -= 1 }
            let lead = bytes[i]
            let need = lead < 0x80 ? 1 : lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : 2
            if i + need > bytes.count { bytes.removeSubrange(i...) }
        }
        let payload = scratch + pre
        bytes.withUnsafeBytes { payload.copyMemory(from: $0.baseAddress!, byteCount: $0.count) }
        _ = bridged_lws_write(conn.wsi, payload.assumingMemoryBound(to: UInt8.self), bytes.count, bridged_write_close())
        conn.closeSent = true
        if conn.wireFailed { bridged_wire_closing(wireDescriptor(conn.wsi)) }
        counters.noteClose(code)
        conn.discardInput = true
        setCloseGrace(conn)
    }

    /// SERVER_WRITEABLE: one lws_write (a message, one fragment of a large one, or the close
    /// frame), then re-arm while there is more.
    func writeable(_ conn: Connection) -> Int32 {
        conn.writableRequested = false
        // lws sends a pending pong before it calls us here.
        bridged_wire_ping_answered(conn.fd)
        if conn.closeSent { return 0 }
        if conn.wireFailed && !conn.discardInput { failForUnmaskedFrame(conn) }
        if conn.headOffset == 0, let first = conn.queue.first, first.count <= Transport.chunkSize - 4 {
            return writeBatch(conn)
        }
        if let message = conn.queue.first {
            let remaining = message.count - conn.headOffset
            let n = min(remaining, Transport.chunkSize)
            let isStart = conn.headOffset == 0
            let isEnd = n == remaining
            let payload = scratch + pre
            message.withUnsafeBytes { src in
                if n > 0 { payload.copyMemory(from: src.baseAddress! + conn.headOffset, byteCount: n) }
            }
            let flags = bridged_ws_text_flags(isStart ? 1 : 0, isEnd ? 1 : 0)
            let written = bridged_lws_write(conn.wsi, payload.assumingMemoryBound(to: UInt8.self), n, flags)
            if written < n {
                logger.debug("write failed; closing", metadata: ["connection": "c\(conn.id)"])
                return -1
            }
            conn.queuedBytes -= n
            if isEnd {
                conn.queue.removeFirst()
                conn.headOffset = 0
            } else {
                conn.headOffset += n
            }
            noteWritten(conn)
            if !conn.queue.isEmpty || conn.closeRequest != nil { requestWritable(conn) }
            return 0
        }
        if let request = conn.closeRequest {
            sendClose(conn, request.code, request.reason)
        }
        return 0
    }

    /// Every whole queued message that fits in one chunk, framed here (unmasked server text
    /// frames) and handed to lws in one raw write: one `send` for a reply and the events that
    /// follow it, and a controller's backlog of events drains a chunk per callback instead of
    /// one message per service-loop turn. (lws sends `LWS_WRITE_HTTP` buffers on a WebSocket
    /// connection as they are, and buffers what the socket does not take, in order.)
    func writeBatch(_ conn: Connection) -> Int32 {
        let payload = (scratch + pre).assumingMemoryBound(to: UInt8.self)
        var used = 0
        var messages = 0
        var bytes = 0
        while let message = conn.queue.element(at: messages) {
            let n = message.count
            let header = Transport.frameHeaderSize(payloadLength: n)
            guard used + header + n <= Transport.chunkSize else { break }
            _ = Transport.writeFrameHeader(payload + used, payloadLength: n)
            message.withUnsafeBytes { src in
                if n > 0 { (payload + used + header).update(from: src.baseAddress!.assumingMemoryBound(to: UInt8.self), count: n) }
            }
            used += header + n
            bytes += n
            messages += 1
        }
        let written = bridged_lws_write(conn.wsi, payload, used, Int32(LWS_WRITE_HTTP.rawValue))
        if written == Transport.socketFull {
            // The socket took nothing (a write outside WRITEABLE can find it full): lws kept
            // nothing either and asked for WRITEABLE; the messages stay queued for it.
            conn.writableRequested = true
            return 0
        }
        if written < used {
            logger.debug("write failed; closing", metadata: ["connection": "c\(conn.id)"])
            return -1
        }
        // Written, or the part the socket did not take is held by lws (sent first, in order).
        for _ in 0..<messages { conn.queue.removeFirst() }
        conn.queuedBytes -= bytes
        noteWritten(conn)
        if !conn.queue.isEmpty || conn.closeRequest != nil { requestWritable(conn) }
        return 0
    }

    /// What `lws_write` returns when the socket took nothing and lws buffered nothing
    /// (`LWS_SSL_CAPABLE_MORE_SERVICE` in lws 4.1.6's private headers): retry on WRITEABLE.
    static let socketFull: Int32 = -4

    /// Bytes of the header of an unmasked server frame carrying `payloadLength` bytes
    /// (RFC 6455 §5.2): 2 up to 125, 4 up to 65,535, 10 beyond.
    static func frameHeaderSize(payloadLength n: Int) -> Int {
        n < 126 ? 2 : n < 65536 ? 4 : 10
    }

    /// Writes the header of a final, unmasked text frame for `payloadLength` bytes at `p`;
    /// returns its size (`frameHeaderSize`).
    static func writeFrameHeader(_ p: UnsafeMutablePointer<UInt8>, payloadLength n: Int) -> Int {
        p[0] = 0x81  // FIN, text
        if n < 126 {
            p[1] = UInt8(n)
            return 2
        }
        if n < 65536 {
            p[1] = 126
            p[2] = UInt8(n >> 8)
            p[3] = UInt8(n & 0xFF)
            return 4
        }
        p[1] = 127
        for i in 0..<8 { p[2 + i] = UInt8(truncatingIfNeeded: UInt64(n) >> (8 * (7 - UInt64(i)))) }
        return 10
    }
}
