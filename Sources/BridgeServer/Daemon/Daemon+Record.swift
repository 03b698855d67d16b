import BridgeProtocol
import BridgeTrace

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Where a recording daemon writes its trace (one file per daemon run), line by line.
final class TraceWriter {
    let path: String
    let file: UnsafeMutablePointer<FILE>
    var recorder = TraceRecorder()
    var header: TraceHeader
    var wroteHeader = false
    /// Inputs fed since the effects were last drained.
    var pending: [RecordedInput] = []
    /// Set when a write failed; the daemon keeps serving and logs once.
    var failed = false

    init(path: String, header: TraceHeader) throws(RecordError) {
        guard let f = fopen(path, "w") else {
            throw RecordError(message: "cannot write the trace \(path): \(String(cString: strerror(errno)))")
        }
        self.path = path
        self.file = f
        self.header = header
    }

    deinit { fclose(file) }

    func write(_ lines: [String]) {
        guard !failed, !lines.isEmpty else { return }
        var text = ""
        for l in lines { text += l; text += "\n" }
        let ok = text.utf8CString.withUnsafeBufferPointer { buf in
            fwrite(buf.baseAddress, 1, buf.count - 1, file) == buf.count - 1
        }
        // Flushed per input: a trace is read while the daemon runs, and survives a kill.
        if !ok || fflush(file) != 0 { failed = true }
    }
}

public struct RecordError: Error, CustomStringConvertible, Sendable {
    public var message: String
    public var description: String { message }
}

extension Daemon {
    /// Records every input of the protocol state machine and every effect into the trace file
    /// `path` (JSON Lines, see BridgeTrace's `TraceFormat`). Call before `run()`.
    /// `routerYAML` is the routing configuration's text, so a replay can load the same one.
    public func record(to path: String, routerYAML: String? = nil) throws(RecordError) {
        let header = TraceHeader(configuration: bridge.configuration, routerYAML: routerYAML)
        recorder = try TraceWriter(path: path, header: header)
        randomTape.isRecording = true
    }

    /// The header, once the port is known (the routing configuration's origin names it).
    func writeTraceHeader() {
        guard let w = recorder, !w.wroteHeader else { return }
        w.wroteHeader = true
        if w.header.routerYAML != nil { w.header.origin = configuration.transport.displayURL(port: port) }
        w.write([w.header.line])
    }

    func recordInput(_ input: BridgeInput, at t: Int64) {
        recorder?.pending.append(RecordedInput(input, at: t, random: randomTape.take()))
    }

    func recordEffects(_ effects: [BridgeEffect]) {
        guard let w = recorder else { return }
        writeTraceHeader()
        guard !w.pending.isEmpty else {
            // Effects without an input the recorder saw: written as they are (a replay reports them).
            w.write(effects.map { TraceEvent.output($0, at: now).line })
            return
        }
        let inputs = w.pending
        w.pending.removeAll(keepingCapacity: true)
        w.write(w.recorder.lines(for: inputs, effects: effects, bridge: bridge))
        if w.failed { logger.error("writing the trace \(w.path) failed; recording stopped") ; recorder = nil; randomTape.isRecording = false }
    }
}
