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
    public mutating func events<RNG>(for input: TraceInput, at t: Int64, random: [UInt64], effects: [BridgeEffect], bridge: Bridge<RNG>) -> [TraceEvent] {
        let observed = observe(bridge, at: t)
        if case .sweep = input, effects.isEmpty, observed.isEmpty, random.isEmpty { return [] }
        var out: [TraceEvent] = [.input(input, at: t, random: random)]
        for e in effects { out.append(.output(e, at: t)) }
        out += observed
        return out
    }

    /// The lines for one input (see `events`).
    public mutating func lines<RNG>(for input: TraceInput, at t: Int64, random: [UInt64], effects: [BridgeEffect], bridge: Bridge<RNG>) -> [String] {
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
