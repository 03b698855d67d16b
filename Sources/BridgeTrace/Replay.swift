import BridgeConfig
import BridgeProtocol

/// Hands out the words recorded for the input being replayed, and counts what the state
/// machine asks for beyond them.
public final class ReplayTape {
    var words: [UInt64] = []
    var index = 0
    /// Words asked for after the recorded ones ran out.
    var overdrawn = 0
    var fallback = SeededRandom(seed: 0x5EED)

    func load(_ w: [UInt64]) {
        words = w
        index = 0
        overdrawn = 0
    }

    func next() -> UInt64 {
        if index < words.count {
            index += 1
            return words[index - 1]
        }
        overdrawn += 1
        return fallback.next()
    }
}

public struct ReplayRandom: RandomNumberGenerator {
    let tape: ReplayTape
    public mutating func next() -> UInt64 { tape.next() }
}

/// Where a replay first differed from its trace.
public struct Divergence: Equatable, Sendable, CustomStringConvertible {
    /// 1-based line of the trace file.
    public var line: Int
    /// What the trace says at that line (nil: the trace has nothing there).
    public var expected: String?
    /// What the replay produced instead (nil: nothing).
    public var actual: String?
    public var note: String

    public var description: String {
        var s = "line \(line): \(note)"
        s += "\n  trace:  " + (expected ?? "(nothing)")
        s += "\n  replay: " + (actual ?? "(nothing)")
        return s
    }
}

public enum ReplayOutcome: Equatable, Sendable {
    /// Every output and stack matched.
    case identical(inputs: Int, outputs: Int)
    case diverged(Divergence)
}

/// Feeds a trace's inputs to a fresh protocol state machine, with the recorded times and random
/// words, and compares every effect and stack with the trace.
public enum Replayer {
    /// Throws when the trace cannot be replayed at all (e.g. its routing configuration does not
    /// load); a difference is an outcome, not an error.
    public static func replay(_ trace: Trace) throws(TraceError) -> ReplayOutcome {
        var router: Router?
        if let yaml = trace.header.routerYAML {
            do {
                router = try RouterConfigFile.router(yaml: yaml, file: "<trace header>", maxStackDepth: trace.header.maxStackDepth, origin: trace.header.origin)
            } catch {
                throw TraceError(line: 1, "the routing configuration recorded in the header does not load any more: \(error)")
            }
        }
        let tape = ReplayTape()
        var bridge = Bridge(configuration: trace.header.bridgeConfiguration, router: router, random: ReplayRandom(tape: tape))
        var recorder = TraceRecorder()
        let events = trace.events
        var i = 0
        var inputs = 0, outputs = 0
        guard !events.isEmpty else { return .identical(inputs: 0, outputs: 0) }
        while i < events.count {
            // The inputs fed before their effects were drained (usually one).
            var group: [RecordedInput] = []
            var j = i
            while j < events.count, case .input(let input, let t, let random) = events[j].event {
                group.append(RecordedInput(input, at: t, random: random))
                tape.load(random)
                bridge.apply(input, at: t)
                inputs += 1
                if tape.overdrawn > 0 || tape.index < tape.words.count {
                    return .diverged(Divergence(
                        line: events[j].line, expected: events[j].event.line, actual: nil,
                        note: "the state machine drew \(tape.index + tape.overdrawn) random words for this input; the trace recorded \(random.count)" + versionNote(trace)))
                }
                j += 1
                if !trace.more.contains(events[j - 1].line) { break }
            }
            guard !group.isEmpty else {
                let (line, event) = events[i]
                return .diverged(Divergence(line: line, expected: event.line, actual: nil, note: "the replay produced nothing more before this line"))
            }
            let effects = bridge.drainEffects()
            var produced = recorder.events(for: group, effects: effects, bridge: bridge)
            if produced.isEmpty { produced = group.map { .input($0.input, at: $0.at, random: $0.random) } }
            for p in produced.dropFirst(group.count) {
                guard j < events.count, !events[j].event.isInput else {
                    let line = j < events.count ? events[j].line : (events.last!.line + 1)
                    return .diverged(Divergence(line: line, expected: j < events.count ? events[j].event.line : nil, actual: p.line,
                                                note: "the replay produced a line the trace does not have here" + versionNote(trace)))
                }
                if events[j].event != p {
                    return .diverged(Divergence(line: events[j].line, expected: events[j].event.line, actual: p.line,
                                                note: "the replay differs" + versionNote(trace)))
                }
                if p.isOutput { outputs += 1 }
                j += 1
            }
            if j < events.count, !events[j].event.isInput {
                return .diverged(Divergence(line: events[j].line, expected: events[j].event.line, actual: nil,
                                            note: "the replay produced nothing for this line" + versionNote(trace)))
            }
            i = j
        }
        return .identical(inputs: inputs, outputs: outputs)
    }

    static func versionNote(_ trace: Trace) -> String {
        let current = BridgeConfiguration().version
        guard trace.header.daemonVersion != current else { return "" }
        return " (the trace was recorded by bridged \(trace.header.daemonVersion), this is \(current): the protocol may have changed since; record it again)"
    }
}
