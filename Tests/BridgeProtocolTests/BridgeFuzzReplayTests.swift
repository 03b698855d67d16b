import Foundation
import Testing
@testable import BridgeProtocol

/// The Bridge fuzzer is `fuzz-bridge` (Fuzz/Sources/BridgeFuzz.swift, run by `make fuzz`); its
/// file is compiled into these tests too (Tests/BridgeProtocolTests/Fuzz is a link to it), so
/// that `swift test` replays its seed corpus (Fuzz/corpus/bridge: scripts with and without a
/// routing configuration) and a few longer generated scripts through the same driver and the
/// same checks. A broken invariant stops the run in `fuzzFailure` below, with its message.
@Suite struct BridgeFuzzReplayTests {
    static let corpus: URL = {
        var parts = "\(#filePath)".split(separator: "/", omittingEmptySubsequences: false)
        parts.removeLast(3)  // Tests/BridgeProtocolTests/BridgeFuzzReplayTests.swift
        return URL(fileURLWithPath: parts.joined(separator: "/") + "/Fuzz/corpus/bridge")
    }()

    static var seeds: [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: corpus.path)) ?? []).sorted()
    }

    @Test func theCorpusHasRoutedAndPlainScripts() throws {
        let firsts = try Self.seeds.map { try Data(contentsOf: Self.corpus.appendingPathComponent($0)).first ?? 0 }
        #expect(firsts.count >= 8)
        #expect(firsts.contains { $0 & 1 == 1 } && firsts.contains { $0 & 1 == 0 })
    }

    @Test(arguments: seeds)
    func replaysTheSeed(_ name: String) throws {
        let bytes = try [UInt8](Data(contentsOf: Self.corpus.appendingPathComponent(name)))
        let steps = bytes.withUnsafeBytes { BridgeFuzz.run($0) }
        #expect(steps >= 3, "\(name): \(steps) steps")
    }

    /// Longer scripts than the seeds, from a fixed generator, plain and routed. (Random bytes
    /// make long raw chunks, so a script of 24 KiB runs a few hundred steps.)
    @Test(arguments: Array(1...16) as [UInt64])
    func replaysAGeneratedScript(_ seed: UInt64) {
        var rng = SeededRandom(seed: seed)
        var bytes = (0..<24_000).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
        bytes[0] = UInt8(seed & 1)
        let steps = bytes.withUnsafeBytes { BridgeFuzz.run($0) }
        #expect(steps > 150, "\(steps) steps")
    }
}

/// The fuzz target's failure, in the tests: stops with the broken invariant's message (the fuzz
/// binary's own, in Fuzz/Sources/FuzzMain.swift, aborts so that libFuzzer keeps the input).
func fuzzFailure(_ message: String, input: UnsafeRawBufferPointer? = nil) -> Never {
    fatalError("fuzz-bridge (replayed in the tests): invariant broken: \(message)")
}
