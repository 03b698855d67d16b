import ArgumentParser
import BridgeServer
import Dispatch
import Logging

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

@main
struct BridgedCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bridged",
        abstract: "The native side of a hybrid app: navigation stacks for web pages over WebSocket.")

    @OptionGroup var options: DaemonOptions

    func run() throws {
        let level = options.logLevel
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
        let logger = Logger(label: "bridged")
        let config = options.transportConfiguration
        let transport = try Transport(configuration: config, bridgeJS: BridgeJS.bytes, logger: logger)
        let responder = StubResponder(transport: transport)
        transport.delegate = responder

        // Runs on the service thread right after the listener is up (work enqueued before
        // run() is drained just after transportDidStart).
        transport.remote.enqueue { (t: Transport) in
            Stdout.writeLine("listening on \(config.displayURL(port: t.port))")
        }
        let signals = SignalHandlers(signals: [SIGINT, SIGTERM]) { [remote = transport.remote] in
            remote.stop()
        }
        try withExtendedLifetime((signals, responder)) {
            try transport.run()
        }
        logger.info("bye")
    }
}

enum Stdout {
    /// Writes one line straight to fd 1 (unbuffered, so a reader of a pipe sees it at once).
    static func writeLine(_ line: String) {
        let bytes = Array((line + "\n").utf8)
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeBytes { write(1, $0.baseAddress! + offset, $0.count - offset) }
            if n <= 0 { return }
            offset += n
        }
    }
}

/// SIGINT/SIGTERM through Dispatch sources (the default action is disabled first), so the handler
/// is ordinary code on a Dispatch queue, not an async-signal context.
final class SignalHandlers {
    private let sources: [DispatchSourceSignal]

    init(signals: [Int32], handler: @escaping @Sendable () -> Void) {
        sources = signals.map { sig in
            signal(sig, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: sig, queue: .global())
            source.setEventHandler(handler: handler)
            source.resume()
            return source
        }
    }

    deinit { sources.forEach { $0.cancel() } }
}
