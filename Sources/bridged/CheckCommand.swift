import ArgumentParser
import BridgeBrowser
import BridgeCheck
import BridgeProtocol
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `bridged check URL`: a verdict on a PWA's app-awareness. Starts its own daemon (a child
/// `bridged serve --port 0`), opens a browser session on URL, runs the steps or explores, and
/// evaluates the rules of docs/CHECK.md over what it saw.
struct CheckCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "check",
        abstract: "Check that a PWA is app-aware in a real browser session: a verdict, a JUnit file, an HTML report, a trace.",
        discussion: """
            Exit status: 0 the app is app-aware (no rule broken, every step held), 1 a rule is \
            broken, a step failed or exploring reached nothing but the start page, 2 the check \
            could not run (bad arguments, page unreachable, the start page answered an HTTP error \
            or did not load, no Chromium, the connection to its own daemon was lost), 130/143 \
            stopped by SIGINT/SIGTERM (its daemon and Chromium stopped with it). A page that stops \
            answering (a busy script, a dialog nobody answered), crashes or opens tabs without \
            end is a finding naming it; every call is bounded by --timeout-s. With \
            --profile hotwire-native the app is a Turbo app in a Hotwire Native shell, judged by \
            that profile's rules; with --profile capacitor a Capacitor app (Android's hardware \
            back, deep links, plugin calls rejected and not handled or unavailable, page errors; \
            not the Astro history rules), --web-dir serving its build at https://localhost/. The rules and the steps format are in \
            docs/CHECK.md.
            """)

    @Argument(help: ArgumentHelp("The app's start page (http or https).", valueName: "url"))
    var url: String

    @Option(help: ArgumentHelp("A YAML steps file; without it the checker explores the app's links.", valueName: "file"))
    var steps: String?

    @Option(help: ArgumentHelp("Write a JUnit XML file (a testcase per step and per rule).", valueName: "file"))
    var junit: String?

    @Option(help: ArgumentHelp("Write a self-contained HTML report.", valueName: "file.html"))
    var report: String?

    @Option(help: ArgumentHelp("Write the trace of the run (see bridged replay, bridged diagram).", valueName: "file"))
    var trace: String?

    @Option(name: .customLong("budget-ms"), help: "A render slower than this breaks the render-budget rule (default: no budget).")
    var budgetMs: Int?

    @Option(name: .customLong("max-states"), help: "Exploring: the most distinct states visited (1...1000).")
    var maxStates: Int = 20

    @Option(help: ArgumentHelp("The Chromium binary (default: chromium on PATH).", valueName: "path"))
    var chromium: String?

    @Flag(help: "The check's Chromium also listens for DevTools on a loopback port (see `serve --devtools`); its url is printed on stderr as `devtools ws://…` before the check runs.")
    var devtools: Bool = false

    @Option(name: .customLong("timeout-s"), help: "How long a page may take to load, or a step to settle (document loaded, no fetch/XHR in flight, 250 ms still), before the check gives up (1...600).")
    var timeoutS: Int = 30

    @Option(help: ArgumentHelp("A routing configuration (YAML, as bridged serve --config): routes and external_links.", valueName: "file"))
    var config: String?

    @Option(name: .customLong("user-agent-suffix"), help: "Appended to the tabs' user agent, as the app's web view does (default: Astro App/1.0).")
    var userAgentSuffix: String?

    @Option(help: ArgumentHelp("The phone screen the tabs emulate, in CSS pixels (default 390x844); narrower than 800 gets Chromium's mobile user agent, wider its desktop one.", valueName: "WxH"))
    var viewport: String?

    @Option(help: ArgumentHelp("The native shell the app is written for: astro, hotwire-native or capacitor.", valueName: "name"))
    var profile: String = "astro"

    @Option(help: ArgumentHelp("How the session answers a page's JavaScript dialogs (alert, confirm, prompt, beforeunload): accept or dismiss.", valueName: "accept|dismiss"))
    var dialogs: String = "dismiss"

    @OptionGroup var shell: HotwireShellOptions

    static let profiles = [SessionProfile.plainName] + ProfileRegistry.standard.names

    static let maxStatesLimit = 1000

    func fail(_ message: String) -> ExitCode {
        // A signal is stopping the check (its daemon going away is what failed): its handler
        // says so and exits.
        if CheckInterrupt.firing { while true { sleep(60) } }
        FileHandle.standardError.write(Data("bridged check: \(message)\n".utf8))
        return ExitCode(2)
    }

    func run() throws {
        guard let origin = URL(string: url), let scheme = origin.scheme, ["http", "https"].contains(scheme), origin.host != nil else {
            throw fail("\(url) is not an http(s) URL: give the app's start page, e.g. http://localhost:3000/")
        }
        if let b = budgetMs, b < 1 { throw fail("--budget-ms must be at least 1 (got \(b))") }
        guard (1...Self.maxStatesLimit).contains(maxStates) else { throw fail("--max-states must be between 1 and \(Self.maxStatesLimit) (got \(maxStates))") }
        guard (1...600).contains(timeoutS) else { throw fail("--timeout-s must be between 1 and 600 (got \(timeoutS))") }
        guard ["accept", "dismiss"].contains(dialogs) else { throw fail("--dialogs must be accept or dismiss (got \(dialogs))") }
        guard Self.profiles.contains(profile) else { throw fail("--profile must be one of \(Self.profiles.joined(separator: ", ")) (got \(profile))") }
        let session: SessionProfile
        do { session = try shell.profile(named: profile) } catch let e as ValidationError { throw fail(e.message) }
        guard let checkProfile = CheckProfile(rawValue: session.checkRules) else { throw fail("--profile \(profile): no check rules") }
        if let viewport, BrowserOptions.parseViewport(viewport) == nil {
            throw fail("--viewport must be WIDTHxHEIGHT, each between 100 and 4000 (got '\(viewport)')")
        }
        if let config, FileManager.default.contents(atPath: config) == nil { throw fail("cannot read the routing configuration \(config)") }
        var parsedSteps: [Step]?
        if let steps {
            guard let data = FileManager.default.contents(atPath: steps), let text = String(data: data, encoding: .utf8) else {
                throw fail("cannot read the steps file \(steps)")
            }
            do { parsedSteps = try Steps.parse(text) } catch { throw fail("\(steps): \(error.message)") }
        }
        for (flag, path) in [("--junit", junit), ("--report", report), ("--trace", trace)] {
            guard let path else { continue }
            let dir = (path as NSString).deletingLastPathComponent
            var isDir: ObjCBool = false
            if !dir.isEmpty, !(FileManager.default.fileExists(atPath: dir, isDirectory: &isDir) && isDir.boolValue) {
                throw fail("\(flag) \(path): the directory \(dir) does not exist")
            }
        }
        // With --web-dir the daemon's browser answers the app's origin itself: nothing listens there.
        if shell.webDir == nil, let problem = HTTPProbeCLI.unreachable(url) { throw fail("page unreachable: \(problem)") }
        let browser = chromium ?? "chromium"
        if !Executable.exists(browser) {
            throw fail("no Chromium: \(browser) was not found; install the Debian package chromium (apt-get install chromium) or pass --chromium PATH")
        }

        let recordDir = FileManager.default.temporaryDirectory.appendingPathComponent("bridged-check-\(getpid())-\(UInt32.random(in: 0...UInt32.max))").path
        // SIGINT (Ctrl-C) and SIGTERM stop the daemon this check started, and its Chromium with
        // it, before the check exits (130, 143): the daemon runs in a process group of its own,
        // where the terminal's Ctrl-C does not reach it.
        let interrupt = CheckInterrupt(recordDir: recordDir)
        let onInt = SignalHandlers(signals: [SIGINT]) { CheckInterrupt.note(SIGINT); interrupt.fire() }
        let onTerm = SignalHandlers(signals: [SIGTERM]) { CheckInterrupt.note(SIGTERM); interrupt.fire() }
        defer { withExtendedLifetime((onInt, onTerm)) {} }
        let daemon: DaemonChild
        do {
            var extra: [String] = []
            if let config { extra += ["--config", config] }
            if let userAgentSuffix { extra += ["--user-agent-suffix", userAgentSuffix] }
            if let viewport { extra += ["--viewport", viewport] }
            // A capacitor app's build: the session (webDir: true) is served it by the daemon.
            // Without spare tabs: a tab dressed before its session is known does not get the
            // web directory's interception, and a fresh session's scripts would not load.
            if let webDirectory = shell.webDirectory { extra += ["--web-dir", webDirectory, "--no-spare-tabs"] }
            daemon = try DaemonChild.start(record: trace != nil ? recordDir : nil, chromium: chromium, devtools: devtools, extra: extra,
                                           started: { interrupt.daemon = $0 })
        } catch {
            throw fail("cannot start the daemon: \(error)")
        }
        defer {
            daemon.stop()
            try? FileManager.default.removeItem(atPath: recordDir)
        }
        var options = CheckOptions(url: url, steps: parsedSteps, budgetMs: budgetMs, maxStates: maxStates, host: "127.0.0.1", port: daemon.port)
        options.timeout = Double(timeoutS)
        options.profile = checkProfile
        options.session = session
        options.dialogs = dialogs
        let result: CheckReport
        do {
            result = try CheckRunner(options).run()
        } catch let e as CheckCannotRun {
            throw fail(e.message + daemon.stderrTail())
        } catch {
            throw fail("the check stopped: \(error)" + daemon.stderrTail())
        }
        print(result.table, terminator: "")
        do {
            if let junit { try result.junit.write(toFile: junit, atomically: true, encoding: .utf8) }
            if let report { try result.html.write(toFile: report, atomically: true, encoding: .utf8) }
        } catch {
            throw fail("cannot write a report: \(error.localizedDescription)")
        }
        let stopped = daemon.stop()
        if let trace {
            let files = (try? FileManager.default.contentsOfDirectory(atPath: recordDir)) ?? []
            guard let f = files.first(where: { $0.hasSuffix(".jsonl") }) else {
                throw fail("--trace \(trace): the daemon wrote no trace (\(stopped)); the verdict above stands, the trace is missing")
            }
            try? FileManager.default.removeItem(atPath: trace)
            do { try FileManager.default.moveItem(atPath: recordDir + "/" + f, toPath: trace) } catch {
                do { try FileManager.default.copyItem(atPath: recordDir + "/" + f, toPath: trace) } catch {
                    throw fail("--trace \(trace): cannot write the trace: \(error.localizedDescription)")
                }
            }
        }
        if !result.passed { throw ExitCode(1) }
    }
}

enum HTTPProbeCLI {
    static func unreachable(_ url: String) -> String? { CheckPreflight.unreachable(url) }
}

enum Executable {
    static func exists(_ name: String) -> Bool {
        if name.contains("/") { return FileManager.default.isExecutableFile(atPath: name) }
        for dir in (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":") {
            if FileManager.default.isExecutableFile(atPath: "\(dir)/\(name)") { return true }
        }
        return false
    }
}

/// The checker's own daemon: this binary's `serve --port 0`. Foundation starts it in a process
/// group of its own; its Chromium dies with it (`setpriv --pdeathsig`, docs/BROWSER.md).
final class DaemonChild: @unchecked Sendable {
    let process = Process()
    var port = 0
    let stderrPath: String
    /// How long the daemon may take to stop (it closes Chromium, at most 2 s, then kills its
    /// process group) before it is killed.
    static let stopSeconds = 8.0
    /// How long the daemon may take to say it listens (with `--devtools`, once its Chromium
    /// listens too).
    static let startSeconds = 60.0

    private init(stderrPath: String) { self.stderrPath = stderrPath }

    /// Starts the daemon and reads its port; `started` gets it as soon as it runs (so a signal
    /// that comes while it starts stops it too).
    static func start(record: String?, chromium: String?, devtools: Bool = false, extra: [String] = [],
                      started: (DaemonChild) -> Void = { _ in }) throws -> DaemonChild {
        let errPath = FileManager.default.temporaryDirectory.appendingPathComponent("bridged-check-daemon-\(getpid()).log").path
        _ = FileManager.default.createFile(atPath: errPath, contents: nil)
        let d = DaemonChild(stderrPath: errPath)
        d.process.executableURL = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        var args = ["serve", "--host", "127.0.0.1", "--port", "0", "--log-level", "warning"]
        if let record { args += ["--record", record] }
        if let chromium { args += ["--chromium", chromium] }
        if devtools { args.append("--devtools") }
        d.process.arguments = args + extra
        let out = Pipe()
        d.process.standardOutput = out
        d.process.standardError = FileHandle(forWritingAtPath: errPath)
        started(d)
        try d.process.run()
        // A daemon that does not say it listens within a minute (nor exits) is stopped: the
        // read below then ends.
        let ready = LockedSignal(0)
        DispatchQueue.global().asyncAfter(deadline: .now() + Self.startSeconds) {
            let late = ready.withLock { v -> Bool in
                guard v == 0 else { return false }
                v = 2
                return true
            }
            if late { _ = d.stop() }
        }
        defer { ready.withLock { if $0 == 0 { $0 = 1 } } }
        let fh = out.fileHandleForReading
        func readLine(_ what: String) throws -> String {
            var line = [UInt8]()
            while true {
                let b = fh.readData(ofLength: 1)
                if b.isEmpty {
                    _ = d.stop()
                    let late = ready.withLock { $0 } == 2
                    throw ClientErrorCLI("the daemon " + (late ? "did not say it listens within \(Int(startSeconds)) s and was stopped" : "exited")
                                         + " before \(what)" + d.stderrTail())
                }
                if b[0] == 10 { break }
                line.append(b[0])
            }
            return String(decoding: line, as: UTF8.self)
        }
        // The first line: `listening on http://127.0.0.1:PORT`.
        let text = try readLine("listening")
        guard let colon = text.lastIndex(of: ":"), let port = Int(text[text.index(after: colon)...]) else {
            _ = d.stop()
            throw ClientErrorCLI("unexpected first line from the daemon: \(text)")
        }
        d.port = port
        if devtools {
            // The next one: `devtools ws://127.0.0.1:PORT/devtools/browser/ID`.
            let line = try readLine("its Chromium listened for DevTools")
            FileHandle.standardError.write(Data((line + "\n").utf8))
        }
        return d
    }

    /// Stops the daemon, bounded: SIGINT (it stops at once, without draining: it closes its
    /// Chromium and ends its trace), then SIGKILL after `stopSeconds`; reaped either way. Says
    /// how it ended.
    @discardableResult
    func stop() -> String {
        guard process.isRunning else { return "it had exited" }
        let pid = process.processIdentifier
        kill(pid, SIGINT)
        let deadline = Date().addingTimeInterval(Self.stopSeconds)
        while process.isRunning, Date() < deadline { usleep(20_000) }
        guard process.isRunning else { return "it stopped" }
        kill(pid, SIGKILL)
        let hard = Date().addingTimeInterval(5)
        while process.isRunning, Date() < hard { usleep(20_000) }
        return "it did not stop within \(Int(Self.stopSeconds)) s and was killed"
    }

    func stderrTail() -> String {
        guard let s = try? String(contentsOfFile: stderrPath, encoding: .utf8), !s.isEmpty else { return "" }
        return "\n(daemon log: " + s.split(separator: "\n").suffix(5).joined(separator: "\n") + ")"
    }
}

/// What SIGINT or SIGTERM does to a running check: stops its daemon (and so its Chromium),
/// removes its temporary files, and exits 130 or 143, whatever the check was waiting for.
final class CheckInterrupt: @unchecked Sendable {
    private let lock = NSLock()
    private var _daemon: DaemonChild?
    private var fired = false
    let recordDir: String

    init(recordDir: String) { self.recordDir = recordDir }

    var daemon: DaemonChild? {
        get { lock.lock(); defer { lock.unlock() }; return _daemon }
        set { lock.lock(); _daemon = newValue; lock.unlock() }
    }

    /// Whether a signal is stopping the check.
    static var firing: Bool { firingFlag.withLock { $0 != 0 } }
    static let firingFlag = LockedSignal(0)

    /// Stops everything and exits with 128 + the signal.
    func fire() {
        lock.lock()
        if fired { lock.unlock(); return }
        fired = true
        Self.firingFlag.withLock { $0 = 1 }
        let d = _daemon
        lock.unlock()
        let sig = Self.lastSignal()
        let name = sig == SIGTERM ? "SIGTERM" : "SIGINT"
        Stderr.writeLine("bridged check: \(name): stopping the check's daemon and its Chromium")
        let how = d?.stop() ?? "none had started"
        try? FileManager.default.removeItem(atPath: recordDir)
        if let d { try? FileManager.default.removeItem(atPath: d.stderrPath) }
        Stderr.writeLine("bridged check: stopped by \(name) (the daemon: \(how)); nothing was judged")
        Foundation.exit(128 + sig)
    }

    /// Which of SIGINT and SIGTERM was received (recorded by its handler, `note`).
    static func lastSignal() -> Int32 { last.withLock { $0 } }

    static let last = LockedSignal(SIGINT)

    /// Called by the per-signal handlers before `fire`.
    static func note(_ sig: Int32) { last.withLock { $0 = sig } }
}

final class LockedSignal: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Int32
    init(_ value: Int32) { self.value = value }
    func withLock<T>(_ f: (inout Int32) -> T) -> T { lock.lock(); defer { lock.unlock() }; return f(&value) }
}

struct ClientErrorCLI: Error, CustomStringConvertible {
    var description: String
    init(_ d: String) { description = d }
}

extension BridgedCommand {
    /// As ArgumentParser's, except that `bridged check` exits 2 (could not run) on bad
    /// arguments, as its documented exit status says.
    static func main() {
        do {
            var command = try parseAsRoot()
            try command.run()
        } catch {
            let args = CommandLine.arguments.dropFirst()
            if args.first == "check", exitCode(for: error) != .success, !(error is ExitCode) {
                FileHandle.standardError.write(Data((fullMessage(for: error) + "\n").utf8))
                Foundation.exit(2)
            }
            exit(withError: error)
        }
    }
}
