#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import CWebsockets
import CWireCheck
import Logging

extension Transport {
    /// The lws protocol callback (a C function pointer: no captures; the transport comes from the
    /// context's user pointer).
    static func dispatch(_ wsi: OpaquePointer?, _ reason: lws_callback_reasons,
                         _ user: UnsafeMutableRawPointer?, _ input: UnsafeMutableRawPointer?,
                         _ len: Int) -> Int32 {
        guard let wsi, let ctx = lws_get_context(wsi), let raw = lws_context_user(ctx) else {
            return lws_callback_http_dummy(wsi, reason, user, input, len)
        }
        let transport = Unmanaged<Transport>.fromOpaque(raw).takeUnretainedValue()
        let result = transport.handle(wsi, reason, user, input, len)
        if !transport.pendingFlush.isEmpty { transport.flushPendingWrites() }
        return result
    }

    func handle(_ wsi: OpaquePointer, _ reason: lws_callback_reasons, _ user: UnsafeMutableRawPointer?,
                _ input: UnsafeMutableRawPointer?, _ len: Int) -> Int32 {
        switch reason {
        case LWS_CALLBACK_EVENT_WAIT_CANCELLED:
            if !destroying { drainRemote() }
            return 0  // never non-zero here

        case LWS_CALLBACK_FILTER_NETWORK_CONNECTION:
            return admit(fd: Int(bitPattern: input))

        case LWS_CALLBACK_HTTP_CONFIRM_UPGRADE:
            return confirmUpgrade(wsi)

        case LWS_CALLBACK_HTTP_BODY:
            return 0  // drained: the body of a request we do not use

        case LWS_CALLBACK_HTTP_BODY_COMPLETION:
            return httpBodyComplete(wsi)

        case LWS_CALLBACK_ESTABLISHED:
            return established(wsi)

        case LWS_CALLBACK_RECEIVE:
            guard let conn = connection(wsi) else { return -1 }
            return receive(conn, input, len)

        case LWS_CALLBACK_SERVER_WRITEABLE:
            guard let conn = connection(wsi) else { return 0 }
            return writeable(conn)

        case LWS_CALLBACK_WS_PEER_INITIATED_CLOSE:
            // The answer to our close frame: close the socket without echoing (nonzero). An
            // unsolicited close: 0 lets lws echo it and close.
            guard let conn = connection(wsi) else { return 0 }
            if conn.closeSent { return -1 }
            // RFC 6455 §5.5.1: a close payload is empty or holds a 2-byte code; one byte is a
            // protocol error, answered with 1002 instead of an echo.
            if len == 1 {
                sendClose(conn, 1002, "close frame with a 1-byte payload")
                return -1
            }
            peerClosed(conn)
            return 0

        case LWS_CALLBACK_CLOSED:
            // Also fires for connections refused during the handshake (no connection set).
            if let conn = connection(wsi), connections.removeValue(forKey: conn.id) != nil {
                conn.closed = true
                noteFreeing(conn.queue.memory)
                lws_set_opaque_user_data(wsi, nil)
                delegate?.transportDidClose(ConnectionID(raw: conn.id))
            }
            return 0

        case LWS_CALLBACK_HTTP:
            return http(wsi)

        case LWS_CALLBACK_HTTP_WRITEABLE:
            return httpWriteable(wsi)

        case LWS_CALLBACK_CLOSED_HTTP, LWS_CALLBACK_WSI_DESTROY:
            if let pending = httpResponses.removeValue(forKey: wsi) { pending.release() }
            httpAwaitingBody[wsi] = nil
            return lws_callback_http_dummy(wsi, reason, user, input, len)

        default:
            return lws_callback_http_dummy(wsi, reason, user, input, len)
        }
    }

    /// LWS_CALLBACK_FILTER_NETWORK_CONNECTION: a socket was just accepted. Descriptors are
    /// allocated lowest first, so one at or above the cap means that many are open: it is
    /// closed at once (no handshake, no allocation), which also keeps the listener from ever
    /// reaching EMFILE, where lws would spin on `accept`. Logged once per 10 s with a count.
    func admit(fd: Int) -> Int32 {
        guard fd >= descriptorCap else {
            bridged_wire_track(Int32(truncatingIfNeeded: fd))
            return 0
        }
        refusedSinceLog += 1
        let now = monotonicMicroseconds
        if now - lastCapLog >= 10_000_000 {
            logger.warning("connection cap reached: refusing new connections",
                           metadata: ["cap": "\(descriptorCap)", "refused": "\(refusedSinceLog)"])
            lastCapLog = now
            refusedSinceLog = 0
        }
        return 1
    }

    /// Raises the soft open-file limit to the hard one (logged) and sets the connection cap
    /// below it: `maxConnections`, or the limit minus 32 descriptors kept for the listener, lws's
    /// own and static files.
    func raiseDescriptorLimit() {
        var before: UInt64 = 0, after: UInt64 = 0
        guard bridged_raise_nofile(&before, &after) == 0 else { return }
        if after != before {
            logger.info("raised the open-file limit", metadata: ["from": "\(before)", "to": "\(after)"])
        } else {
            logger.info("open-file limit", metadata: ["limit": "\(after)"])
        }
        let room = max(8, Int(clamping: after) - 32)
        var cap = room
        if configuration.maxConnections > 0 {
            if configuration.maxConnections > room {
                logger.warning("--max-connections is above what the open-file limit allows; using the lower cap",
                               metadata: ["asked": "\(configuration.maxConnections)", "cap": "\(room)"])
            }
            cap = min(room, configuration.maxConnections)
        }
        // Descriptors 0-2 and lws's own (listener, event pipe) sit below the first connection.
        descriptorCap = cap + 8
        logger.info("connection cap", metadata: ["connections": "\(cap)"])
    }

    /// The connection of a WebSocket's callback, from the wsi's opaque user pointer: an
    /// unretained reference (`connections` keeps the object until CLOSED clears the pointer), so
    /// a callback finds its connection without a table lookup. Nil for other connections (lws
    /// allocates a wsi zeroed). The pointer sits in the wsi's first cache line, which lws has
    /// just read to call us; lws's per-session data (`per_session_data_size`, none here) is an
    /// allocation of its own, a cold line per message at 1,000 connections.
    private func connection(_ wsi: OpaquePointer) -> Connection? {
        guard let raw = lws_get_opaque_user_data(wsi) else { return nil }
        return Unmanaged<Connection>.fromOpaque(raw).takeUnretainedValue()
    }

    // MARK: - WebSocket

    /// Before the 101: only `/bridge`, only allowed origins, nothing while stopping.
    private func confirmUpgrade(_ wsi: OpaquePointer) -> Int32 {
        let path = requestPath(wsi) ?? ""
        var refusal: (status: UInt32, why: String)?
        if stopping {
            refusal = (503, "shutting down")
        } else if path != "/bridge" {
            refusal = (404, "no WebSocket endpoint at \(path)")
        } else if requestHeadBytes(wsi) > Transport.maxRequestHeadBytes {
            refusal = (431, "request header fields too large")
        } else if !hostPolicy.isAllowed(header(wsi, WSI_TOKEN_HOST)) {
            refusal = (421, "this server does not answer for that Host (see --allow-host)")
        } else if !originPolicy.isAllowed(header(wsi, WSI_TOKEN_ORIGIN)) {
            refusal = (403, "origin not allowed")
        }
        guard let refusal else { return 0 }
        logger.info("refused WebSocket upgrade",
                    metadata: ["path": "\(path)", "origin": "\(header(wsi, WSI_TOKEN_ORIGIN) ?? "-")",
                               "status": "\(refusal.status)", "why": "\(refusal.why)"])
        writeRawRefusal(wsi, status: Int(refusal.status), text: refusal.why)
        return 1
    }

    /// A complete HTTP/1.1 error response written in one go. (lws_return_http_status at this
    /// stage answers "HTTP/1.0", which strict WebSocket clients reject as malformed instead of
    /// reporting the status.) The connection is closed after it.
    func writeRawRefusal(_ wsi: OpaquePointer, status: Int, text: String) {
        let reason = switch status {
        case 400: "Bad Request"
        case 403: "Forbidden"
        case 413: "Content Too Large"
        case 404: "Not Found"
        case 421: "Misdirected Request"
        case 431: "Request Header Fields Too Large"
        case 503: "Service Unavailable"
        default: "Error"
        }
        let body = text + "\n"
        let head = "HTTP/1.1 \(status) \(reason)\r\n"
            + "Content-Type: text/plain; charset=utf-8\r\n"
            + "Content-Length: \(body.utf8.count)\r\n"
            + "X-Content-Type-Options: nosniff\r\n"
            + "Connection: close\r\n\r\n"
        let bytes = Array((head + body).utf8)
        let payload = scratch + pre
        let n = min(bytes.count, Transport.chunkSize)
        bytes.withUnsafeBytes { payload.copyMemory(from: $0.baseAddress!, byteCount: n) }
        _ = bridged_lws_write(wsi, payload.assumingMemoryBound(to: UInt8.self), n, Int32(LWS_WRITE_HTTP_HEADERS.rawValue))
    }

    private func established(_ wsi: OpaquePointer) -> Int32 {
        let id = nextConnectionID
        nextConnectionID += 1
        let fd = wireDescriptor(wsi)
        let conn = Connection(id: id, wsi: wsi, fd: fd)
        connections[id] = conn
        lws_set_opaque_user_data(wsi, Unmanaged.passUnretained(conn).toOpaque())
        bridged_wire_established(fd, Unmanaged.passUnretained(self).toOpaque(), id)
        let peer = peerAddress(wsi)
        let info = ConnectionInfo(origin: header(wsi, WSI_TOKEN_ORIGIN), peerAddress: peer,
                                  isLoopbackPeer: HostPolicy.isLoopbackAddress(peer), query: query(wsi))
        logger.debug("connection opened", metadata: ["connection": "c\(id)", "peer": "\(peer)"])
        delegate?.transportDidOpen(ConnectionID(raw: id), info: info)
        if stopping, conn.acceptsMessages { abort(conn, code: 1001, reason: "server shutting down") }
        return 0
    }

    /// The peer sent a Close (RFC 6455 §5.5.1): lws echoes it and closes. Nothing of ours goes
    /// out after it (unsent messages are dropped, later sends are no-ops), and data frames that
    /// follow it are not processed. (lws 4.1.6 still delivers data frames read in the same
    /// buffer after a Close: its fast path for whole frames does not check the closing state.)
    func peerClosed(_ conn: Connection) {
        noteFreeing(conn.queue.memory)
        conn.queuedBytes -= conn.queue.removeAll()
        conn.headOffset = 0
        conn.rxBuffer = []
        conn.inMessage = false
        conn.discardInput = true
        conn.closeSent = true
    }

    private func receive(_ conn: Connection, _ input: UnsafeMutableRawPointer?, _ len: Int) -> Int32 {
        // Closing on our side: input is read and dropped until the peer's close arrives.
        if conn.discardInput { return 0 }
        let final = lws_is_final_fragment(conn.wsi) != 0
        if !conn.inMessage {
            conn.inMessage = true
            conn.rxBinary = lws_frame_is_binary(conn.wsi) != 0
            conn.rxCount = 0
        }
        conn.rxCount += len
        if conn.rxCount > configuration.maxMessageBytes {
            logger.info("message too big; closing with 1009",
                        metadata: ["connection": "c\(conn.id)", "limit": "\(configuration.maxMessageBytes)"])
            conn.rxBuffer = []
            conn.inMessage = false
            abort(conn, code: 1009, reason: "message too big")
            return 0
        }
        // After we asked to close, the peer's messages are dropped.
        let deliver = conn.closeRequest == nil
        // The reply to this message goes to this connection: `send` finds it without a lookup.
        lastSendTarget = conn
        if conn.rxBinary {
            if final {
                conn.inMessage = false
                if deliver { delegate?.transportDidReceiveBinary(ConnectionID(raw: conn.id)) }
            }
            return 0
        }
        if final && conn.rxBuffer.isEmpty {
            // The whole message in one piece: no copy.
            conn.inMessage = false
            if deliver {
                delegate?.transport(ConnectionID(raw: conn.id),
                                    didReceiveText: UnsafeRawBufferPointer(start: input, count: len))
            }
            return 0
        }
        if len > 0, let input {
            conn.rxBuffer.append(contentsOf: UnsafeRawBufferPointer(start: input, count: len))
        }
        if final {
            conn.inMessage = false
            if deliver {
                conn.rxBuffer.withUnsafeBytes { delegate?.transport(ConnectionID(raw: conn.id), didReceiveText: $0) }
            }
            // Do not keep a large buffer around for an idle connection.
            if conn.rxBuffer.capacity > Transport.chunkSize { conn.rxBuffer = [] } else { conn.rxBuffer.removeAll(keepingCapacity: true) }
        }
        return 0
    }

    // MARK: - Request helpers

    func header(_ wsi: OpaquePointer, _ token: lws_token_indexes) -> String? {
        let total = Int(lws_hdr_total_length(wsi, token))
        guard total > 0 else { return nil }
        var buf = [CChar](repeating: 0, count: total + 1)
        let n = Int(lws_hdr_copy(wsi, &buf, Int32(buf.count), token))
        guard n >= 0 else { return nil }
        return buf.withUnsafeBufferPointer { b in
            String(decoding: UnsafeRawBufferPointer(start: b.baseAddress, count: n), as: UTF8.self)
        }
    }

    /// The decoded request path (no query).
    func requestPath(_ wsi: OpaquePointer) -> String? {
        requestTarget(wsi)?.path
    }

    func requestTarget(_ wsi: OpaquePointer) -> (method: Int32, path: String)? {
        var uri: UnsafeMutablePointer<CChar>?
        var uriLen: Int32 = 0
        let method = lws_http_get_uri_and_method(wsi, &uri, &uriLen)
        guard method >= 0, let uri else { return nil }
        let path = String(decoding: UnsafeRawBufferPointer(start: uri, count: Int(uriLen)), as: UTF8.self)
        return (method, path)
    }

    /// Query arguments (decoded by lws), joined with `&`.
    func query(_ wsi: OpaquePointer) -> String {
        var parts: [String] = []
        var buf = [CChar](repeating: 0, count: 4096)
        var index: Int32 = 0
        while true {
            let n = lws_hdr_copy_fragment(wsi, &buf, Int32(buf.count), WSI_TOKEN_HTTP_URI_ARGS, index)
            if n < 0 { break }
            parts.append(buf.withUnsafeBufferPointer { b in
                String(decoding: UnsafeRawBufferPointer(start: b.baseAddress, count: Int(n)), as: UTF8.self)
            })
            index += 1
        }
        return parts.joined(separator: "&")
    }

    func peerAddress(_ wsi: OpaquePointer) -> String {
        var buf = [CChar](repeating: 0, count: 128)
        guard lws_get_peer_simple(wsi, &buf, buf.count) != nil else { return "" }
        return buf.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
    }
}
