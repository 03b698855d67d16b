import ArgumentParser
import BridgeProtocol

/// `bridged`: the root command. Without a subcommand name it runs `serve`, so
/// `bridged --port 0 --static DIR` and `bridged serve --port 0 --static DIR` are the same.
///
/// Each subcommand lives in its own file as a `ParsableCommand`; adding one is a new file plus
/// one line in `subcommands` below.
@main
struct BridgedCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bridged",
        abstract: "The native side of a hybrid app: navigation stacks for web pages over WebSocket.",
        discussion: "Without a subcommand, bridged runs `serve` with the options given.",
        version: BridgedVersion.string,
        subcommands: [
            ServeCommand.self,
            OpenCommand.self,
            ReplayCommand.self,
            DiagramCommand.self,
            CheckCommand.self,
            SessionsCommand.self,
        ],
        defaultSubcommand: ServeCommand.self
    )
}
