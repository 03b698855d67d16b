/// `GET /` and `GET /dashboard/…`: the dashboard's files (Sources/BridgeServer/Assets/dashboard/,
/// compiled in by the EmbedAssets plugin). The page itself speaks to `/bridge` as an observer;
/// see docs/DASHBOARD.md.
enum Dashboard {
    static func response(for path: String) -> HTTPResponse? {
        let name: String
        if path == "/" || path == "/index.html" {
            name = "index.html"
        } else if path.hasPrefix("/dashboard/") {
            name = String(path.dropFirst("/dashboard/".count))
        } else {
            return nil
        }
        guard !name.isEmpty, !name.hasPrefix("."), !name.contains("/"),
              let body = EmbeddedAssets.bytes(named: "dashboard/" + name) else { return nil }
        return HTTPResponse(status: 200, contentType: contentType(of: name), body: body,
                            headers: [("Cache-Control", "no-cache")])
    }

    static func contentType(of name: String) -> String {
        if name.hasSuffix(".html") { return "text/html; charset=utf-8" }
        if name.hasSuffix(".js") { return "text/javascript; charset=utf-8" }
        if name.hasSuffix(".css") { return "text/css; charset=utf-8" }
        if name.hasSuffix(".svg") { return "image/svg+xml" }
        if name.hasSuffix(".png") { return "image/png" }
        return "application/octet-stream"
    }
}
