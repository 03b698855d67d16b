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
        let header = TraceHeader(configuration: configuration.bridge, routerYAML: routerYAML)
        recorder = try TraceWriter(path: path, header: header)
        randomTape.isRecording = true
    }

    // Inputs the host feeds the state machine itself (the browser layer), recorded like the
    // transport's.

    func feedConnect(_ client: ClientID, loopback: Bool) {
        let t = now
        bridge.connected(client, isLoopback: loopback, at: t)
        if recorder != nil { recordInput(.connect(client: client.raw, loopback: loopback), at: t) }
    }

    func feedText(_ client: ClientID, _ bytes: [UInt8]) {
        let t = now
        bridge.received(client, text: bytes, at: t)
        if recorder != nil { recordInput(.text(client: client.raw, bytes: bytes), at: t) }
    }

    func feedText(_ client: ClientID, _ raw: UnsafeRawBufferPointer) {
        let t = now
        bridge.received(client, text: raw, at: t)
        if recorder != nil { recordInput(.text(client: client.raw, bytes: Array(raw)), at: t) }
    }

    func feedHostAbandon(_ session: String) {
        let t = now
        bridge.hostAbandon(session: session, at: t)
        if recorder != nil { recordInput(.hostAbandon(session: session), at: t) }
    }

    func feedHostEvent(_ session: String, _ name: String, _ fields: JSONObject) {
        bridge.hostEvent(session: session, name, fields)
        if recorder != nil { recordInput(.hostEvent(session: session, name: name, fields: fields), at: now) }
    }

    /// Sends a frame the state machine did not produce (a browser's answer), and records it.
    func sendHostFrame(_ id: ConnectionID, _ bytes: [UInt8]) {
        transport.send(id, bytes)
        if recorder != nil { recordHostFrame(id.raw, bytes) }
    }

    /// A frame sent that did not come from the state machine (a browser's answer), for the record.
    func recordHostFrame(_ client: UInt64, _ bytes: [UInt8]) {
        guard let w = recorder else { return }
        writeTraceHeader()
        w.write([TraceEvent.hostFrame(client: client, text: String(decoding: bytes, as: UTF8.self), at: now).line])
    }

    /// The trace file being written, if any.
    public var recordingPath: String? { recorder?.path }

    /// The header, once the port is known (the routing configuration's origin names it).
    func writeTraceHeader() {
        guard let w = recorder, !w.wroteHeader else { return }
        w.wroteHeader = true
        if w.header.routerYAML != nil { w.header.origin = configuration.transport.displayURL(port: port) }
        w.write([w.header.line])
    }

    func recordInput(_ input: TraceInput, at t: Int64) {
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
