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
        let reach = bytes.withUnsafeBytes { BridgeFuzz.run($0) }
        #expect(reach.steps >= 3, "\(name): \(reach.steps) steps")
    }

    /// Together the seeds play both session profiles: hotwire-native pages' adapter and bridge
    /// messages, a fetched path configuration, capacitor pages' plugin calls and their answers.
    @Test func theSeedsPlayTheProfiles() throws {
        var heard: [String: Int] = [:]
        for name in Self.seeds {
            let bytes = try [UInt8](Data(contentsOf: Self.corpus.appendingPathComponent(name)))
            heard.merge(bytes.withUnsafeBytes { BridgeFuzz.run($0) }.heard, uniquingKeysWith: +)
        }
        for event in ["hotwire.message", "bridge.message", "bridge.ready", "hotwire.pathConfiguration", "capacitor.call", "capacitor.result"] {
            #expect(heard[event, default: 0] > 0, "no seed makes the observer hear \(event): \(heard)")
        }
    }

    /// A script of `count` bytes from a fixed generator; routed when `seed` is odd, with the
    /// quiet observer (no `stack.changed`) when its bit 1 is set.
    static func script(_ seed: UInt64, count: Int = 24_000) -> [UInt8] {
        var rng = SeededRandom(seed: seed)
        var bytes = (0..<count).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
        bytes[0] = UInt8(seed & 3)
        return bytes
    }

    /// Longer scripts than the seeds, plain and routed; together they reach enough of the
    /// protocol for the checks to mean something (random bytes make long raw chunks, so a
    /// script of 24 KiB runs a few hundred steps).
    @Test func replaysGeneratedScripts() async {
        var plain: [String: Int] = [:], routed: [String: Int] = [:]
        var timeouts = 0
        var heard: [String: Int] = [:]
        // Yields between cases, as every long CPU-bound test here does: the tests share the
        // cooperative pool, as many threads as cores (2 on CI), and a test that holds a thread for
        // seconds stalls every other test's tasks, actors and queues meanwhile.
        for seed in 1...16 as ClosedRange<UInt64> {
            await Task.yield()
            let reach = Self.script(seed).withUnsafeBytes { BridgeFuzz.run($0) }
            #expect(reach.steps > 150, "seed \(seed): \(reach.steps) steps")
            if seed & 1 == 1 { routed.merge(reach.succeeded, uniquingKeysWith: +) } else { plain.merge(reach.succeeded, uniquingKeysWith: +) }
            timeouts += reach.timeouts
            heard.merge(reach.heard, uniquingKeysWith: +)
        }
        // Sessions of both profiles were made (their pages' events are the seeds' to reach: these
        // scripts fill the session limit early).
        for event in ["session.created hotwire", "session.created capacitor"] {
            #expect(heard[event, default: 0] > 0, "the observer heard no \(event): \(heard)")
        }
        for method in ["hello", "pwa-navigate", "pwa-rendered", "back", "session.create", "session.get",
                       "navigation.navigateToUrl", "navigation.back"] {
            #expect(plain[method, default: 0] > 0, "no successful \(method): \(plain)")
        }
        for method in ["hello", "router.get", "router.perform", "router.selectTab", "navigation.back"] {
            #expect(routed[method, default: 0] > 0, "no successful \(method) with a router: \(routed)")
        }
        #expect(timeouts > 0, "no foreground timed out")
    }
}

/// The fuzz target's failure, in the tests: stops with the broken invariant's message (the fuzz
/// binary's own, in Fuzz/Sources/FuzzMain.swift, aborts so that libFuzzer keeps the input).
func fuzzFailure(_ message: String, input: UnsafeRawBufferPointer? = nil) -> Never {
    fatalError("fuzz-bridge (replayed in the tests): invariant broken: \(message)")
}
