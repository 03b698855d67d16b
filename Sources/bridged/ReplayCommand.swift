import ArgumentParser
import BridgeTrace
import BridgeServer
import Foundation

/// `bridged replay TRACE`: feeds a recorded trace's inputs to a fresh protocol state machine and
/// checks that every output frame and stack comes out the same.
struct ReplayCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "replay",
        abstract: "Replay a trace (serve --record, check --trace) and check every frame and stack comes out the same.",
        discussion: """
            Exit status: 0 the replay is identical, 1 it diverged (the first divergence is printed with \
            its line number in the trace), 2 the trace cannot be replayed (unreadable, not a trace, \
            or written by a bridged with another trace format).
            """)

    @Argument(help: ArgumentHelp("A trace file (JSON Lines).", valueName: "trace"))
    var trace: String

    func run() throws {
        let parsed: Trace
        do {
            parsed = try TraceFile.load(trace)
        } catch let e as TraceFileError {
            FileHandle.standardError.write(Data("bridged replay: \(e.message)\n".utf8))
            throw ExitCode(2)
        }
        let outcome: ReplayOutcome
        do {
            outcome = try Replayer.replay(parsed)
        } catch {
            FileHandle.standardError.write(Data("bridged replay: \(trace): \(error)\n".utf8))
            throw ExitCode(2)
        }
        switch outcome {
        case .identical(let inputs, let outputs):
            print("\(trace): identical (\(inputs) inputs replayed, \(outputs) outputs and every stack matched)")
        case .diverged(let d):
            print("\(trace):\(d.description)")
            throw ExitCode(1)
        }
    }
}

struct TraceFileError: Error {
    var message: String
}

enum TraceFile {
    static func load(_ path: String) throws -> Trace {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw TraceFileError(message: "cannot read \(path): no such file or not readable")
        }
        guard let text = String(data: data, encoding: .utf8) else {
            throw TraceFileError(message: "\(path) is not UTF-8 text: not a bridged trace")
        }
        do {
            return try Trace.parse(text)
        } catch {
            throw TraceFileError(message: "\(path):\(error.line): \(error.message)")
        }
    }
}

/// `serve --record DIR`: one trace file per daemon run, `DIR/bridged-PID-SECONDS.jsonl`.
enum TraceRecording {
    static func start(_ daemon: Daemon, directory: String, configPath: String?) throws {
        var isDir: ObjCBool = false
        if !FileManager.default.fileExists(atPath: directory, isDirectory: &isDir) {
            do { try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true) } catch {
                throw ValidationError("--record: cannot create the directory \(directory): \(error.localizedDescription)")
            }
        } else if !isDir.boolValue {
            throw ValidationError("--record: \(directory) is a file; give a directory (one trace file per run is created in it)")
        }
        let yaml = configPath.flatMap { try? String(contentsOfFile: $0, encoding: .utf8) }
        let name = "bridged-\(ProcessInfo.processInfo.processIdentifier)-\(Int(Date().timeIntervalSince1970)).jsonl"
        let path = (directory as NSString).appendingPathComponent(name)
        do { try daemon.record(to: path, routerYAML: yaml) } catch {
            throw ValidationError("--record: \(error.message)")
        }
        FileHandle.standardError.write(Data("bridged: recording the trace to \(path)\n".utf8))
    }
}
