import BridgeProtocol

/// The daemon's own HTTP pages (the transport serves `/bridge.js` and `/app/...` itself).
extension Daemon {
    public func transportHTTP(method: String, path: String, query: String) -> HTTPResponse? {
        switch path {
        case "/healthz":
            var w = JSONWriter(capacity: 128)
            w.beginObject()
            w.key("ok"); w.bool(true)
            w.key("version"); w.string(configuration.bridge.version)
            w.key("sessions"); w.int(Int64(bridge.sessionCount))
            w.key("connections"); w.int(Int64(bridge.clientCount))
            w.key("uptimeMs"); w.int((now - startedAt) / 1000)
            w.endObject()
            return HTTPResponse(status: 200, contentType: "application/json", body: w.bytes)
        case "/metrics":
            return metricsResponse()
        case "/api/sessions":
            return HTTPResponse(status: 200, contentType: "application/json", body: bridge.sessionListJSON(at: now))
        default:
            return Dashboard.response(for: path) ?? browserHTTP(path: path)
        }
    }
}
