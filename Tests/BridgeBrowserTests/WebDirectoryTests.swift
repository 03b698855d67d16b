@testable import BridgeBrowser
import BridgeProtocol
import Foundation
import Testing

/// `--web-dir`'s files by URL: the file, a directory's index.html, a client route's index.html,
/// nothing outside the directory.
@Suite struct WebDirectoryTests {
    static func directory() throws -> String {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("webdir-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: dir + "/assets", withIntermediateDirectories: true)
        try Data("<h1>app</h1>".utf8).write(to: URL(fileURLWithPath: dir + "/index.html"))
        try Data("x()".utf8).write(to: URL(fileURLWithPath: dir + "/assets/a.js"))
        return dir
    }

    @Test func filesRoutesAndTheDirectorysEdge() throws {
        let dir = try Self.directory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let web = WebDirectory(origin: "https://localhost/", directory: dir)
        #expect(web.origin == "https://localhost")
        #expect(web.serves("https://localhost/x") && web.serves("https://localhost") && !web.serves("https://localhost.evil/x"))
        let root = URL(fileURLWithPath: dir).standardizedFileURL.path
        #expect(web.file(for: "https://localhost/") == root + "/index.html")
        #expect(web.file(for: "https://localhost/assets/a.js?v=1") == root + "/assets/a.js")
        #expect(web.file(for: "https://localhost/inner/route") == root + "/index.html")
        #expect(web.file(for: "https://localhost/missing.js") == nil)
        #expect(web.file(for: "https://localhost/../../etc/passwd") == nil)
        #expect(web.file(for: "https://localhost/%2e%2e/%2e%2e/etc/hostname") == nil)
        let ok = web.answer("r1", url: "https://localhost/assets/a.js")
        #expect(ok["responseCode"] == 200 && ok["body"] == .string(Data("x()".utf8).base64EncodedString()))
        #expect(ok["responseHeaders"]?[0]?["value"] == "text/javascript; charset=utf-8")
        #expect(web.answer("r2", url: "https://localhost/missing.js")["responseCode"] == 404)
        // The browser's own favicon request, the app having none: empty, not an error.
        #expect(web.answer("r3", url: "https://localhost/favicon.ico")["responseCode"] == 204)
        #expect(web.answer("r4", url: "https://localhost/img/favicon.ico")["responseCode"] == 404)
    }
}
