import BridgeProtocol

/// The daemon's own HTTP pages (the transport serves `/bridge.js` and `/app/...` itself).
extension Daemon {
    public func transportHTTP(method: String, path: String, query: String) -> HTTPResponse? {
        switch path {
        case "/healthz", "/readyz":
            return healthResponse(path: path)
        case "/metrics":
            return metricsResponse()
        case "/api/sessions":
            return HTTPResponse(status: 200, contentType: "application/json", body: bridge.sessionListJSON(at: now))
        case "/api/devtools":
            return devtoolsResponse()
        default:
            return Dashboard.response(for: path) ?? browserHTTP(path: path)
        }
    }
}
