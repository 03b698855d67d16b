import BridgeProtocol

/// A generator that writes every word its base draws onto a tape, so a recorder can put the
/// words next to the input that drew them.
public struct TapeRandom<Base: RandomNumberGenerator>: RandomNumberGenerator {
    public var base: Base
    public let tape: RandomTape
    public init(_ base: Base, tape: RandomTape) {
        self.base = base
        self.tape = tape
        tape.isRecording = true
    }
    public mutating func next() -> UInt64 {
        let w = base.next()
        tape.append(w)
        return w
    }
}

/// One input as the recorder keeps it until its effects are drained.
public struct RecordedInput: Equatable, Sendable {
    public var input: BridgeInput
    public var at: Int64
    public var random: [UInt64]
    public init(_ input: BridgeInput, at: Int64, random: [UInt64]) {
        self.input = input
        self.at = at
        self.random = random
    }
}

/// Turns what the daemon fed the state machine and what came out into trace lines.
///
/// After each input the recorder looks at every session's stack (in the seed's notation) and
/// writes a `stack` line for each one that changed, and a `snapshot` line for each placeholder
/// that appeared. A `sweep` that changed nothing is not written (the daemon sweeps once a
/// second; an idle sweep is no input worth replaying).
public struct TraceRecorder {
    var stacks: [String: String] = [:]
    /// Sessions in the order they were first seen (stable output order).
    var order: [String] = []

    public init() {}

    /// The events for one input: the input, its effects, then the observations.
    public mutating func events<RNG>(for input: BridgeInput, at t: Int64, random: [UInt64], effects: [BridgeEffect], bridge: Bridge<RNG>) -> [TraceEvent] {
        events(for: [RecordedInput(input, at: t, random: random)], effects: effects, bridge: bridge)
    }

    /// The events for inputs fed one after the other before their effects were drained: the
    /// inputs, then the effects (stamped with the last input's time), then the observations.
    public mutating func events<RNG>(for inputs: [RecordedInput], effects: [BridgeEffect], bridge: Bridge<RNG>) -> [TraceEvent] {
        let t = inputs.last?.at ?? 0
        let observed = observe(bridge, at: t)
        if inputs.count == 1, case .sweep = inputs[0].input, effects.isEmpty, observed.isEmpty, inputs[0].random.isEmpty { return [] }
        var out: [TraceEvent] = inputs.map { .input($0.input, at: $0.at, random: $0.random) }
        for e in effects { out.append(.output(e, at: t)) }
        out += observed
        return out
    }

    /// The lines for inputs fed before one drain of the effects: every input but the last is
    /// marked `"more":true` (its effects come after a later input), so a replay feeds them
    /// together and no missing line hides at a group's edge.
    public mutating func lines<RNG>(for inputs: [RecordedInput], effects: [BridgeEffect], bridge: Bridge<RNG>) -> [String] {
        var out = events(for: inputs, effects: effects, bridge: bridge).map(\.line)
        if out.count >= inputs.count {
            for k in 0..<(inputs.count - 1) where out[k].hasSuffix("}") {
                out[k].removeLast()
                out[k] += TraceFormat.moreMarker
            }
        }
        return out
    }

    /// The lines for one input (see `events`).
    public mutating func lines<RNG>(for input: BridgeInput, at t: Int64, random: [UInt64], effects: [BridgeEffect], bridge: Bridge<RNG>) -> [String] {
        events(for: input, at: t, random: random, effects: effects, bridge: bridge).map(\.line)
    }

    mutating func observe<RNG>(_ bridge: Bridge<RNG>, at t: Int64) -> [TraceEvent] {
        var out: [TraceEvent] = []
        var current: [String: String] = [:]
        let ids = bridge.sessionIDs
        for sid in ids {
            guard let engine = bridge.engine(of: sid) else { continue }
            current[sid] = engine.rendering
        }
        for sid in ids where stacks[sid] == nil { order.append(sid) }
        for sid in order {
            let before = stacks[sid], now = current[sid]
            if before == now { continue }
            out.append(.stack(session: sid, stack: now, at: t))
            if let now {
                let had = Set(placeholders(in: before ?? ""))
                for p in placeholders(in: now) where !had.contains(p) {
                    out.append(.snapshot(session: sid, placeholder: p, ref: "/api/sessions/\(sid)/placeholders/\(p).jpg", at: t))
                }
            }
        }
        order.removeAll { current[$0] == nil }
        stacks = current
        return out
    }

    func placeholders(in rendering: String) -> [String] {
        rendering.split(separator: " ").map(String.init).filter { $0.hasPrefix("P") }
    }
}
