#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import CWebsockets
import CWireCheck
import Logging

func closeDescriptor(_ fd: Int32) { _ = close(fd) }

/// The body of an HTTP response still being written (one chunk per HTTP_WRITEABLE).
final class PendingHTTP {
    enum Source {
        case bytes([UInt8], offset: Int)
        case file(fd: Int32, remaining: Int)
    }
    var source: Source

    init(_ source: Source) { self.source = source }

    func release() {
        if case .file(let fd, _) = source, fd >= 0 {
            closeDescriptor(fd)
            source = .file(fd: -1, remaining: 0)
        }
    }

    deinit { release() }
}

extension Transport {
    /// Largest request head (request line and headers, as lws stores them) answered normally;
    /// above it: 431. (lws itself drops requests whose head does not fit its 8 KiB buffer.)
    static let maxRequestHeadBytes = 4096
    /// Largest request body read and discarded (a GET with a body, a POST answered 405); above
    /// it, or chunked: 413 and the connection is closed.
    static let maxRequestBodyBytes = 65536

    /// LWS_CALLBACK_HTTP: the checks every request passes (head size, Host, body, token), then
    /// the route. A request with a body is answered once the body has been read (drained).
    func http(_ wsi: OpaquePointer) -> Int32 {
        guard let target = requestTarget(wsi) else {
            return refuse(wsi, 400, "bad request")
        }
        if requestHeadBytes(wsi) > Transport.maxRequestHeadBytes {
            return refuse(wsi, 431, "request header fields too large (limit \(Transport.maxRequestHeadBytes) bytes)")
        }
        if !hostPolicy.isAllowed(header(wsi, WSI_TOKEN_HOST)) {
            logger.info("refused a request for another host",
                        metadata: ["host": "\(header(wsi, WSI_TOKEN_HOST) ?? "-")", "path": "\(target.path)"])
            return refuse(wsi, 421, "this server does not answer for that Host (see --allow-host)")
        }
        let head = target.method == Int32(LWSHUMETH_HEAD)
        let lengthText = header(wsi, WSI_TOKEN_HTTP_CONTENT_LENGTH)?.trimmingSpaces()
        let chunked = header(wsi, WSI_TOKEN_HTTP_TRANSFER_ENCODING) != nil
        var bodyLength = 0
        if let lengthText {
            guard let n = Int(lengthText), n >= 0 else {
                return refuse(wsi, 400, "bad Content-Length")
            }
            bodyLength = n
        }
        if chunked || bodyLength > Transport.maxRequestBodyBytes {
            return refuse(wsi, 413, "request body too large (limit \(Transport.maxRequestBodyBytes) bytes, no chunked bodies)")
        }
        let answer: () -> Int32 = { [unowned self] in
            guard target.method == Int32(LWSHUMETH_GET) || head else {
                return self.respond(wsi, .plain(405, "method not allowed", headers: [("Allow", "GET, HEAD")]), head: false)
            }
            return self.route(wsi, path: target.path, head: head)
        }
        // The next request head on this connection starts after the body.
        bridged_wire_http_request(wireDescriptor(wsi), Int64(bodyLength))
        if bodyLength > 0 {
            httpAwaitingBody[wsi] = answer  // LWS_CALLBACK_HTTP_BODY_COMPLETION answers
            return 0
        }
        return answer()
    }

    /// LWS_CALLBACK_HTTP_BODY_COMPLETION: the body is drained; answer now.
    func httpBodyComplete(_ wsi: OpaquePointer) -> Int32 {
        guard let answer = httpAwaitingBody.removeValue(forKey: wsi) else { return 0 }
        return answer()
    }

    /// Sum of the stored request headers (lws keeps only the ones it knows).
    func requestHeadBytes(_ wsi: OpaquePointer) -> Int {
        var total = 0
        for i in 0..<Int(WSI_TOKEN_COUNT.rawValue) {
            total += max(0, Int(lws_hdr_total_length(wsi, lws_token_indexes(rawValue: .init(i)))))
        }
        return total
    }

    private func route(_ wsi: OpaquePointer, path: String, head: Bool) -> Int32 {
        if httpAuth.isEnabled && !HTTPAuth.isPublic(path) {
            if path == "/", let code = queryValue(wsi, "token") {
                guard httpAuth.redeem(code) else {
                    return respond(wsi, .plain(401, "this link was already used or is wrong; use Authorization: Bearer TOKEN"), head: head)
                }
                return respond(wsi, .plain(303, "see /", headers: [("Location", "/"), ("Set-Cookie", httpAuth.setCookieHeader),
                                                                  ("Cache-Control", "no-store")]), head: head)
            }
            guard httpAuth.isAuthorized(authorization: header(wsi, WSI_TOKEN_HTTP_AUTHORIZATION),
                                        cookie: header(wsi, WSI_TOKEN_HTTP_COOKIE)) else {
                return respond(wsi, .plain(401, "this daemon has a token: send Authorization: Bearer TOKEN, or open the dashboard link printed at start",
                                           headers: [("WWW-Authenticate", "Bearer")]), head: head)
            }
        }
        if path == "/bridge" {
            return respond(wsi, .plain(426, "this is the WebSocket endpoint; connect with ws://",
                                       headers: [("Upgrade", "websocket")]), head: head)
        }
        if path == "/bridge.js" {
            return respond(wsi, HTTPResponse(status: 200, contentType: "text/javascript; charset=utf-8",
                                             body: bridgeJS, headers: [("Cache-Control", "no-cache")]), head: head)
        }
        if path == "/app" || path.hasPrefix("/app/") {
            guard let staticFiles else { return respond(wsi, .plain(404, "not found"), head: head) }
            switch staticFiles.resolve(urlPath: path) {
            case .notFound:
                return respond(wsi, .plain(404, "not found"), head: head)
            case .redirect(let location):
                return respond(wsi, .plain(301, "moved to \(location)", headers: [("Location", location)]), head: head)
            case .file(let file, let contentType):
                return serveFile(wsi, path: file, contentType: contentType, head: head)
            }
        }
        let response = delegate?.transportHTTP(method: head ? "HEAD" : "GET", path: path, query: query(wsi))
            ?? .plain(404, "not found")
        return respond(wsi, response, head: head)
    }

    /// The decoded value of query argument `name`, if present.
    func queryValue(_ wsi: OpaquePointer, _ name: String) -> String? {
        for part in query(wsi).split(separator: "&") where part.hasPrefix(name + "=") {
            return String(part.dropFirst(name.count + 1))
        }
        return nil
    }

    /// Writes the headers; the body follows in HTTP_WRITEABLE.
    func respond(_ wsi: OpaquePointer, _ response: HTTPResponse, head: Bool) -> Int32 {
        guard writeHeaders(wsi, status: response.status, contentType: response.contentType,
                           contentLength: response.body.count, extra: response.headers)
        else { return -1 }
        if head || response.body.isEmpty { return finishTransaction(wsi) }
        httpResponses[wsi] = PendingHTTP(.bytes(response.body, offset: 0))
        lws_callback_on_writable(wsi)
        return 0
    }

    private func serveFile(_ wsi: OpaquePointer, path: String, contentType: String, head: Bool) -> Int32 {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        var st = stat()
        guard fd >= 0, fstat(fd, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG else {
            if fd >= 0 { closeDescriptor(fd) }
            return respond(wsi, .plain(404, "not found"), head: head)
        }
        let pending = PendingHTTP(.file(fd: fd, remaining: Int(st.st_size)))
        guard writeHeaders(wsi, status: 200, contentType: contentType, contentLength: Int(st.st_size),
                           extra: [("Cache-Control", "no-cache")])
        else { return -1 }  // pending's deinit closes the file
        if head || st.st_size == 0 { return finishTransaction(wsi) }
        httpResponses[wsi] = pending
        lws_callback_on_writable(wsi)
        return 0
    }

    private func writeHeaders(_ wsi: OpaquePointer, status: Int, contentType: String, contentLength: Int,
                              extra: [(String, String)]) -> Bool {
        var all = extra
        all.append(("X-Content-Type-Options", "nosniff"))
        let size = pre + 512 + contentType.utf8.count + all.reduce(0) { $0 + $1.0.utf8.count + $1.1.utf8.count + 4 }
        let buffer = UnsafeMutablePointer<UInt8>.allocate(capacity: size)
        defer { buffer.deallocate() }
        let start = buffer + pre
        let end = buffer + size
        var p: UnsafeMutablePointer<UInt8>? = start
        if lws_add_http_common_headers(wsi, UInt32(status), contentType, UInt64(contentLength), &p, end) != 0 {
            return false
        }
        for (name, value) in all {
            let n = Array((name.lowercased() + ":").utf8) + [0]
            let v = Array(value.utf8)
            let r = v.withUnsafeBufferPointer { vb in
                lws_add_http_header_by_name(wsi, n, vb.baseAddress, Int32(vb.count), &p, end)
            }
            if r != 0 { return false }
        }
        return lws_finalize_write_http_header(wsi, start, &p, end) == 0
    }

    /// A refusal after which the connection is closed: the whole response in one write (lws
    /// may be waiting for a request body it will never get, and would hold back a body written
    /// later), then the connection ends.
    func refuse(_ wsi: OpaquePointer, _ status: Int, _ text: String) -> Int32 {
        writeRawRefusal(wsi, status: status, text: text)
        return -1
    }

    private func finishTransaction(_ wsi: OpaquePointer) -> Int32 {
        if let pending = httpResponses.removeValue(forKey: wsi) { pending.release() }
        return lws_http_transaction_completed(wsi) != 0 ? -1 : 0
    }

    /// LWS_CALLBACK_HTTP_WRITEABLE: one body chunk per callback.
    func httpWriteable(_ wsi: OpaquePointer) -> Int32 {
        guard let pending = httpResponses[wsi] else { return 0 }
        let payload = scratch + pre
        var n = 0
        var done = false
        switch pending.source {
        case .bytes(let body, let offset):
            n = min(body.count - offset, Transport.chunkSize)
            body.withUnsafeBytes { payload.copyMemory(from: $0.baseAddress! + offset, byteCount: n) }
            done = offset + n == body.count
            pending.source = .bytes(body, offset: offset + n)
        case .file(let fd, let remaining):
            let r = read(fd, payload, min(remaining, Transport.chunkSize))
            if r <= 0 {
                logger.warning("static file read failed or file shrank; dropping the response")
                return -1
            }
            n = r
            done = remaining - n == 0
            pending.source = .file(fd: fd, remaining: remaining - n)
        }
        let written = bridged_lws_write(wsi, payload.assumingMemoryBound(to: UInt8.self), n,
                                        bridged_write_http(done ? 1 : 0))
        if written < n { return -1 }
        if done { return finishTransaction(wsi) }
        lws_callback_on_writable(wsi)
        return 0
    }
}
