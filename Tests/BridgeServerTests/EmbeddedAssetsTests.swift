import BridgeServer
import Foundation
import Testing

/// The EmbedAssets plugin compiles Sources/BridgeServer/Assets/ into the target at build time.
@Suite struct EmbeddedAssetsTests {
    private let repository = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    @Test func bridgeJSIsTheClientLibraryByteForByte() throws {
        let onDisk = try Data(contentsOf: repository.appendingPathComponent("js-client/bridge.js"))
        let embedded = try #require(EmbeddedAssets.bytes(named: "bridge.js"))
        #expect(embedded.count > 1000)
        #expect(embedded == [UInt8](onDisk))
    }

    @Test func everyFileOfTheAssetsDirectoryIsEmbeddedUnderItsRelativePath() throws {
        let assets = repository.appendingPathComponent("Sources/BridgeServer/Assets")
        var expected: [String] = []
        let enumerator = try #require(FileManager.default.enumerator(atPath: assets.path))
        while let relative = enumerator.nextObject() as? String {
            if relative.split(separator: "/").contains(where: { $0.hasPrefix(".") }) { continue }
            let url = assets.appendingPathComponent(relative).resolvingSymlinksInPath()
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory), !isDirectory.boolValue {
                expected.append(relative)
                let onDisk = try Data(contentsOf: url)
                #expect(EmbeddedAssets.bytes(named: relative) == [UInt8](onDisk), "\(relative)")
            }
        }
        #expect(EmbeddedAssets.names.sorted() == expected.sorted())
        #expect(expected.contains("bridge.js"))
    }

    @Test func unknownNameIsNil() {
        #expect(EmbeddedAssets.bytes(named: "missing.js") == nil)
        #expect(EmbeddedAssets.bytes(named: "") == nil)
    }
}
