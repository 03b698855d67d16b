import BridgeProtocol
import Foundation

/// An app's built web assets served at the origin the app has on its device (`bridged open
/// --web-dir DIR`; a profile's `servedOrigin`, e.g. Capacitor's `https://localhost`): every
/// request of the session's tabs under `origin` is answered from `directory` through the
/// browser's request interception (`Fetch.fulfillRequest`), nothing goes to the network; a path
/// without an extension that names no file is `index.html` (a client route).
public struct WebDirectory: Sendable, Equatable {
    public var origin: String
    public var directory: String
    public init(origin: String, directory: String) {
        var o = origin
        while o.hasSuffix("/") { o.removeLast() }
        self.origin = o
        self.directory = directory
    }

    /// Whether `url` is under the origin.
    func serves(_ url: String) -> Bool {
        url == origin || url.hasPrefix(origin + "/") || url.hasPrefix(origin + "?") || url.hasPrefix(origin + "#")
    }

    /// The file for `url` (under the origin): its path in `directory`, or nil when there is none
    /// (or the path leaves the directory).
    func file(for url: String) -> String? {
        var path = String(url.dropFirst(origin.count))
        if let cut = path.firstIndex(where: { $0 == "?" || $0 == "#" }) { path = String(path[..<cut]) }
        path = path.removingPercentEncoding ?? path
        if path.isEmpty || path.hasSuffix("/") { path += "index.html" }
        let root = URL(fileURLWithPath: directory).standardizedFileURL.path
        let full = URL(fileURLWithPath: root + "/" + path).standardizedFileURL.path
        guard full == root || full.hasPrefix(root + "/") else { return nil }
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: full, isDirectory: &isDirectory) {
            return isDirectory.boolValue ? Self.existing(full + "/index.html") : full
        }
        // A client route (no extension): the app's index.html.
        let last = path.split(separator: "/").last ?? ""
        return last.contains(".") ? nil : Self.existing(root + "/index.html")
    }

    static func existing(_ path: String) -> String? { FileManager.default.fileExists(atPath: path) ? path : nil }

    static let types: [String: String] = [
        "html": "text/html; charset=utf-8", "htm": "text/html; charset=utf-8", "js": "text/javascript; charset=utf-8",
        "mjs": "text/javascript; charset=utf-8", "css": "text/css; charset=utf-8", "json": "application/json",
        "map": "application/json", "svg": "image/svg+xml", "png": "image/png", "jpg": "image/jpeg", "jpeg": "image/jpeg",
        "gif": "image/gif", "webp": "image/webp", "ico": "image/x-icon", "woff": "font/woff", "woff2": "font/woff2",
        "ttf": "font/ttf", "wasm": "application/wasm", "txt": "text/plain; charset=utf-8", "webmanifest": "application/manifest+json",
    ]

    /// `Fetch.fulfillRequest`'s params for `url`: the file (200) or a 404.
    func answer(_ requestId: String, url: String) -> JSONObject {
        guard let path = file(for: url), let data = FileManager.default.contents(atPath: path) else {
            return ["requestId": .string(requestId), "responseCode": 404,
                    "responseHeaders": [["name": "Content-Type", "value": "text/plain; charset=utf-8"]],
                    "body": .string(Data("not found".utf8).base64EncodedString())]
        }
        let ext = (path.split(separator: "/").last.flatMap { $0.split(separator: ".").last }).map { String($0).lowercased() } ?? ""
        return ["requestId": .string(requestId), "responseCode": 200,
                "responseHeaders": [["name": "Content-Type", "value": .string(Self.types[ext] ?? "application/octet-stream")],
                                    ["name": "Cache-Control", "value": "no-cache"]],
                "body": .string(data.base64EncodedString())]
    }
}

extension BrowserHost {
    /// Serves `web` to the tabs of `session` opened from now on (nil: nothing).
    public func serve(session: String, _ web: WebDirectory?) {
        machine.webDirectories[session] = web
    }

    /// The interception patterns of a tab of `session`: documents, and everything under its
    /// served origin.
    func fetchPatterns(session: String?) -> [JSONValue] {
        var patterns: [JSONValue] = [["urlPattern": "*", "resourceType": "Document", "requestStage": "Request"]]
        if let session, let web = machine.webDirectories[session] {
            patterns.append(["urlPattern": .string(web.origin + "/*"), "requestStage": "Request"])
        }
        return patterns
    }
    // (A paused request the session's web directory answers, a subresource or a document of
    // a frame inside the page, the `TabMachine` decides: `TabCommand.serve`.)
}
