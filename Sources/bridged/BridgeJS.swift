#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The bytes served at `/bridge.js`.
///
/// For now: `js-client/bridge.js` of the source tree this binary was built from (found through
/// `#filePath`, so it works from any working directory as long as the checkout exists), else a
/// tiny stub module. To be replaced by bytes embedded at build time.
enum BridgeJS {
    static let bytes: [UInt8] = {
        let source = "\(#filePath)"  // …/Sources/bridged/BridgeJS.swift
        var parts = source.split(separator: "/", omittingEmptySubsequences: false)
        if parts.count > 3 {
            parts.removeLast(3)
            let path = parts.joined(separator: "/") + "/js-client/bridge.js"
            if let data = readFile(path) { return data }
        }
        return Array(stub.utf8)
    }()

    static let stub = """
        // bridged: the js-client was not found when this daemon was built.
        export async function connect() {
          throw new Error("bridge.js is not available in this build of bridged");
        }

        """

    static func readFile(_ path: String) -> [UInt8]? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { _ = close(fd) }
        var result: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress!, $0.count) }
            if n < 0 { return nil }
            if n == 0 { return result }
            result.append(contentsOf: chunk[0..<n])
        }
    }
}
