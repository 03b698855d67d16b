#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Maps `/app/...` request paths onto files below the static directory.
///
/// No path traversal: a `.` or `..` segment, a backslash or NUL is refused; the resolved real
/// path (symlinks followed) must stay inside the directory's real path, so a symlink pointing out
/// of the tree is refused too. Directories are served through their `index.html` (no listings);
/// a directory requested without a trailing slash is redirected to the slashed form so that
/// relative links in its page resolve.
struct StaticFiles {
    enum Resolution: Equatable {
        case file(path: String, contentType: String)
        case redirect(location: String)
        case notFound
    }

    /// The real path of the directory (no trailing slash).
    let root: String

    /// nil when `directory` does not resolve.
    init?(directory: String) {
        guard let real = StaticFiles.realPath(directory) else { return nil }
        root = real == "/" ? "" : real
    }

    /// `urlPath` is the decoded request path (e.g. `/app/css/site.css`), `mount` the prefix (`/app`).
    func resolve(urlPath: String, mount: String = "/app") -> Resolution {
        guard urlPath == mount || urlPath.hasPrefix(mount + "/") else { return .notFound }
        if urlPath == mount { return .redirect(location: mount + "/") }
        let relative = urlPath.dropFirst(mount.count)
        var segments: [Substring] = []
        for segment in relative.split(separator: "/", omittingEmptySubsequences: true) {
            if segment == "." || segment == ".." || segment.contains("\\") || segment.contains("\0") {
                return .notFound
            }
            segments.append(segment)
        }
        let candidate = root + "/" + segments.joined(separator: "/")
        guard let real = StaticFiles.realPath(candidate), isInside(real) else { return .notFound }
        var st = stat()
        guard stat(real, &st) == 0 else { return .notFound }
        switch st.st_mode & S_IFMT {
        case S_IFREG:
            return .file(path: real, contentType: StaticFiles.contentType(forPath: real))
        case S_IFDIR:
            if !urlPath.hasSuffix("/") { return .redirect(location: urlPath + "/") }
            let index = real + "/index.html"
            guard let realIndex = StaticFiles.realPath(index), isInside(realIndex),
                  stat(realIndex, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG
            else { return .notFound }
            return .file(path: realIndex, contentType: StaticFiles.contentType(forPath: realIndex))
        default:
            return .notFound
        }
    }

    private func isInside(_ real: String) -> Bool {
        real == root || real.hasPrefix(root + "/") || (root.isEmpty && real.hasPrefix("/"))
    }

    static func realPath(_ path: String) -> String? {
        guard let p = realpath(path, nil) else { return nil }
        defer { free(p) }
        return String(cString: p)
    }

    static func contentType(forPath path: String) -> String {
        let name = path.split(separator: "/").last.map(String.init) ?? path
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return "application/octet-stream" }
        switch name[name.index(after: dot)...].lowercased() {
        case "html", "htm": return "text/html; charset=utf-8"
        case "js", "mjs": return "text/javascript; charset=utf-8"
        case "css": return "text/css; charset=utf-8"
        case "json", "map": return "application/json"
        case "webmanifest": return "application/manifest+json"
        case "txt": return "text/plain; charset=utf-8"
        case "xml": return "application/xml"
        case "svg": return "image/svg+xml"
        case "png": return "image/png"
        case "jpg", "jpeg": return "image/jpeg"
        case "gif": return "image/gif"
        case "webp": return "image/webp"
        case "ico": return "image/x-icon"
        case "wasm": return "application/wasm"
        case "woff": return "font/woff"
        case "woff2": return "font/woff2"
        default: return "application/octet-stream"
        }
    }
}
