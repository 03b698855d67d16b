/// The daemon's generator: the system's, and, while a trace is being recorded, every word it
/// hands out also goes onto a tape, so the trace can give a replay the same session ids and
/// tokens. Not recording, it costs one branch per word (words are drawn only when sessions and
/// web views are created).
public struct RecordableRandom: RandomNumberGenerator {
    public let tape: RandomTape

    public init(tape: RandomTape = RandomTape()) { self.tape = tape }

    @inlinable
    public mutating func next() -> UInt64 {
        var system = SystemRandomNumberGenerator()
        let word = system.next()
        if tape.isRecording { tape.append(word) }
        return word
    }
}

/// The random words drawn since the tape was last emptied.
public final class RandomTape {
    /// Off: nothing is kept.
    public var isRecording: Bool
    public private(set) var words: [UInt64] = []

    public init(recording: Bool = false) { isRecording = recording }

    public func append(_ word: UInt64) { words.append(word) }

    /// The words drawn since the last call.
    public func take() -> [UInt64] {
        guard !words.isEmpty else { return [] }
        defer { words.removeAll(keepingCapacity: true) }
        return words
    }
}
