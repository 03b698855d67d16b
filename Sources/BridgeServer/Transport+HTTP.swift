#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import CWebsockets
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
    /// LWS_CALLBACK_HTTP: route the request and start the response.
    func http(_ wsi: OpaquePointer) -> Int32 {
        guard let target = requestTarget(wsi) else {
            return respond(wsi, .plain(400, "bad request"), head: false)
        }
        let head = target.method == Int32(LWSHUMETH_HEAD)
        guard target.method == Int32(LWSHUMETH_GET) || head else {
            return respond(wsi, .plain(405, "method not allowed", headers: [("Allow", "GET, HEAD")]), head: false)
        }
        let path = target.path
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
