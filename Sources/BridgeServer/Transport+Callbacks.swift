#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import CWebsockets
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
        return transport.handle(wsi, reason, user, input, len)
    }

    func handle(_ wsi: OpaquePointer, _ reason: lws_callback_reasons, _ user: UnsafeMutableRawPointer?,
                _ input: UnsafeMutableRawPointer?, _ len: Int) -> Int32 {
        switch reason {
        case LWS_CALLBACK_EVENT_WAIT_CANCELLED:
            if !destroying { drainRemote() }
            return 0  // never non-zero here

        case LWS_CALLBACK_HTTP_CONFIRM_UPGRADE:
            return confirmUpgrade(wsi)

        case LWS_CALLBACK_ESTABLISHED:
            return established(wsi, user)

        case LWS_CALLBACK_RECEIVE:
            guard let conn = connection(user) else { return -1 }
            return receive(conn, input, len)

        case LWS_CALLBACK_SERVER_WRITEABLE:
            guard let conn = connection(user) else { return 0 }
            return writeable(conn)

        case LWS_CALLBACK_CLOSED:
            // Also fires for connections refused during the handshake (zeroed user data).
            if let user, case let id = user.load(as: UInt64.self), id != 0,
               connections.removeValue(forKey: id) != nil {
                user.storeBytes(of: 0, as: UInt64.self)
                delegate?.transportDidClose(ConnectionID(raw: id))
            }
            return 0

        case LWS_CALLBACK_HTTP:
            return http(wsi)

        case LWS_CALLBACK_HTTP_WRITEABLE:
            return httpWriteable(wsi)

        case LWS_CALLBACK_CLOSED_HTTP, LWS_CALLBACK_WSI_DESTROY:
            if let pending = httpResponses.removeValue(forKey: wsi) { pending.release() }
            return lws_callback_http_dummy(wsi, reason, user, input, len)

        default:
            return lws_callback_http_dummy(wsi, reason, user, input, len)
        }
    }

    private func connection(_ user: UnsafeMutableRawPointer?) -> Connection? {
        guard let user else { return nil }
        let id = user.load(as: UInt64.self)
        return id == 0 ? nil : connections[id]
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
    private func writeRawRefusal(_ wsi: OpaquePointer, status: Int, text: String) {
        let reason = switch status {
        case 403: "Forbidden"
        case 404: "Not Found"
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

    private func established(_ wsi: OpaquePointer, _ user: UnsafeMutableRawPointer?) -> Int32 {
        guard let user else { return -1 }
        let id = nextConnectionID
        nextConnectionID += 1
        user.storeBytes(of: id, as: UInt64.self)
        let conn = Connection(id: id, wsi: wsi)
        connections[id] = conn
        let peer = peerAddress(wsi)
        let info = ConnectionInfo(origin: header(wsi, WSI_TOKEN_ORIGIN), peerAddress: peer,
                                  isLoopbackPeer: HostPolicy.isLoopbackAddress(peer), query: query(wsi))
        logger.debug("connection opened", metadata: ["connection": "c\(id)", "peer": "\(peer)"])
        delegate?.transportDidOpen(ConnectionID(raw: id), info: info)
        if stopping, conn.acceptsMessages {
            conn.closeRequest = (1001, "server shutting down")
            requestWritable(conn)
        }
        return 0
    }

    private func receive(_ conn: Connection, _ input: UnsafeMutableRawPointer?, _ len: Int) -> Int32 {
        // Closing on our side (1009, 1008): lws keeps reading until the peer's close arrives;
        // returning -1 again here would turn the clean close into a hard kill.
        if conn.killed { return 0 }
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
            conn.killed = true
            return closeNow(conn.wsi, 1009, "message too big")
        }
        // After we asked to close, the peer's messages are dropped.
        let deliver = conn.closeRequest == nil && !conn.killed
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
