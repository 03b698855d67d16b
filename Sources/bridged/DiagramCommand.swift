import ArgumentParser
import BridgeTrace
import Foundation

/// `bridged diagram TRACE`: the stack after each transition of a trace.
struct DiagramCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "diagram",
        abstract: "Print the stack after each transition of a trace, in the seed's box notation.",
        discussion: "Exit status: 0 printed, 2 the trace cannot be read.")

    @Argument(help: ArgumentHelp("A trace file (JSON Lines).", valueName: "trace"))
    var trace: String

    func run() throws {
        do {
            let parsed = try TraceFile.load(trace)
            print(StackDiagram.render(parsed), terminator: "")
        } catch let e as TraceFileError {
            FileHandle.standardError.write(Data("bridged diagram: \(e.message)\n".utf8))
            throw ExitCode(2)
        }
    }
}
