import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// glibc's `posix_spawn_file_actions_addclosefrom_np` (2.34+), hidden from Swift behind _GNU_SOURCE:
/// the child closes every descriptor from `from` on, so no socket of the daemon leaks into it.
@_silgen_name("posix_spawn_file_actions_addclosefrom_np")
private func spawnActionsCloseFrom(_ actions: UnsafeMutablePointer<posix_spawn_file_actions_t>, _ from: Int32) -> Int32

/// Runs spawns on one thread that lives as long as the process: Linux sends the parent-death
/// signal when the *thread* that started a child ends, and pool threads come and go.
final class SpawnThread: @unchecked Sendable {
    static let shared = SpawnThread()
    private let condition = NSCondition()
    private var jobs: [() -> Void] = []

    private init() {
        let thread = Thread { [self] in
            while true {
                condition.lock()
                while jobs.isEmpty { condition.wait() }
                let job = jobs.removeFirst()
                condition.unlock()
                job()
            }
        }
        thread.name = "bridged-chromium-spawn"
        thread.start()
    }

    /// Runs `body` on the spawn thread and returns its result.
    func run<T>(_ body: @escaping () throws(BrowserError) -> T) throws(BrowserError) -> T {
        let done = DispatchSemaphore(value: 0)
        nonisolated(unsafe) var result: Result<T, BrowserError>!
        condition.lock()
        jobs.append {
            do throws(BrowserError) { result = .success(try body()) } catch { result = .failure(error) }
            done.signal()
        }
        condition.signal()
        condition.unlock()
        done.wait()
        return try result.get()
    }
}

/// A Chromium browser process driven over the DevTools pipe.
///
/// Chromium reads NUL-terminated JSON commands on fd 3 and writes replies and events on fd 4
/// (`--remote-debugging-pipe`). It is started with `posix_spawn` (Foundation's `Process` cannot
/// hand a child extra descriptors), in its own process group, through `setpriv --pdeathsig KILL`
/// when available so that it dies with the thread that started it, with a fresh profile directory
/// that `terminate()` removes. Every other descriptor of the daemon is closed in the child.
final class ChromiumProcess: @unchecked Sendable {
    let pid: pid_t
    /// The daemon's end of the pipe Chromium reads (its fd 3).
    let commandFD: Int32
    /// The daemon's end of the pipe Chromium writes (its fd 4).
    let eventFD: Int32
    let profileDirectory: String
    private let lock = NSLock()
    private var reaped = false

    /// Chromium's fixed flags; see docs/BROWSER.md for why each one is there.
    static func arguments(profile: String, extra: [String]) -> [String] {
        [
            "--headless=new", "--no-sandbox", "--disable-gpu", "--remote-debugging-pipe",
            "--user-data-dir=\(profile)",
            // A page restored from the back-forward cache runs neither its load events nor the
            // injected client again. A page whose document the host served itself (`--web-dir`:
            // no network address) still reaches the daemon on the loopback address: no local
            // network access checks (headless, nobody could grant them).
            "--disable-features=BackForwardCache,Translate,MediaRouter,OptimizationHints,LocalNetworkAccessChecks,BlockInsecurePrivateNetworkRequests",
            "--no-first-run", "--no-default-browser-check", "--disable-extensions",
            "--disable-background-networking", "--disable-sync", "--disable-component-update",
            "--disable-default-apps", "--mute-audio", "--password-store=basic", "--use-mock-keychain",
            "--disable-dev-shm-usage", "--hide-scrollbars",
            // Tabs in the background keep running (a tab below the top is still a live page).
            "--disable-background-timer-throttling", "--disable-renderer-backgrounding",
            "--disable-backgrounding-occluded-windows",
            // No first tab: every tab is made in a session's own context, and the default
            // context's about:blank only started a renderer that competed with Chromium's own
            // start (docs/PERFORMANCE.md, "Browser sessions": the cold start).
            "--no-startup-window",
        ] + extra
    }

    /// Finds `name` on PATH (or checks it when it contains a slash); nil when not executable.
    static func resolve(_ name: String) -> String? {
        if name.contains("/") { return access(name, X_OK) == 0 ? name : nil }
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin"
        for dir in path.split(separator: ":") where !dir.isEmpty {
            let candidate = "\(dir)/\(name)"
            var st = stat()
            if stat(candidate, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG, access(candidate, X_OK) == 0 { return candidate }
        }
        return nil
    }

    /// Starts Chromium from the spawn thread (see `SpawnThread`).
    static func launch(executable: String, extraArguments: [String] = []) throws(BrowserError) -> ChromiumProcess {
        try SpawnThread.shared.run { () throws(BrowserError) -> ChromiumProcess in
            try ChromiumProcess(executable: executable, extraArguments: extraArguments)
        }
    }

    private init(executable: String, extraArguments: [String] = []) throws(BrowserError) {
        guard let path = ChromiumProcess.resolve(executable) else { throw .notInstalled(executable) }
        ChromiumProcess.removeStaleProfiles(in: ChromiumProcess.temporaryDirectory)
        var template = Array("\(ChromiumProcess.temporaryDirectory)/bridged-chromium-XXXXXX".utf8CString)
        guard let dir = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else {
            throw .launchFailed("cannot create a profile directory: \(String(cString: strerror(errno)))")
        }
        let profile = String(cString: dir)

        var toChrome: [Int32] = [-1, -1]
        var fromChrome: [Int32] = [-1, -1]
        guard pipe(&toChrome) == 0 else { throw .launchFailed("pipe: \(String(cString: strerror(errno)))") }
        guard pipe(&fromChrome) == 0 else {
            close(toChrome[0]); close(toChrome[1])
            throw .launchFailed("pipe: \(String(cString: strerror(errno)))")
        }
        // Moved above fd 4 first, so that the dup2 onto 3 cannot clobber the source of the dup2 onto 4.
        let childIn = fcntl(toChrome[0], F_DUPFD_CLOEXEC, 10)
        let childOut = fcntl(fromChrome[1], F_DUPFD_CLOEXEC, 10)
        close(toChrome[0]); close(fromChrome[1])
        _ = fcntl(toChrome[1], F_SETFD, FD_CLOEXEC)
        _ = fcntl(fromChrome[0], F_SETFD, FD_CLOEXEC)

        var argv: [String] = []
        if let setpriv = ChromiumProcess.resolve("setpriv") {
            argv = [setpriv, "--pdeathsig", "KILL", "--"]
        }
        argv.append(path)
        argv += ChromiumProcess.arguments(profile: profile, extra: extraArguments)

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, childIn, 3)
        posix_spawn_file_actions_adddup2(&actions, childOut, 4)
        _ = spawnActionsCloseFrom(&actions, 5)

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for sig in [SIGINT, SIGTERM, SIGPIPE, SIGHUP, SIGCHLD] { sigaddset(&defaults, sig) }
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        var mask = sigset_t()
        sigemptyset(&mask)
        posix_spawnattr_setsigmask(&attributes, &mask)
        posix_spawnattr_setpgroup(&attributes, 0)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETPGROUP))

        let cArgs: [UnsafeMutablePointer<CChar>?] = argv.map { strdup($0) } + [nil]
        defer { cArgs.forEach { free($0) } }
        var child: pid_t = 0
        let rc = posix_spawn(&child, argv[0], &actions, &attributes, cArgs, environ)
        close(childIn); close(childOut)
        guard rc == 0 else {
            close(toChrome[1]); close(fromChrome[0])
            ChromiumProcess.removeTree(profile)
            throw .launchFailed("cannot start \(path): \(String(cString: strerror(rc)))")
        }
        pid = child
        commandFD = toChrome[1]
        eventFD = fromChrome[0]
        profileDirectory = profile
    }

    /// Whether the process has exited (reaps it when it has).
    func hasExited() -> Bool {
        lock.lock(); defer { lock.unlock() }
        if reaped { return true }
        var status: Int32 = 0
        let r = waitpid(pid, &status, WNOHANG)
        if r == pid || (r < 0 && errno == ECHILD) { reaped = true }
        return reaped
    }

    /// Waits up to `graceSeconds` for the process to exit on its own, then kills its whole
    /// process group, reaps it and removes the profile directory. Idempotent.
    func terminate(graceSeconds: Double) {
        let deadline = Date().addingTimeInterval(graceSeconds)
        while !hasExited() && Date() < deadline { usleep(20_000) }
        // The group holds the zygote and the renderers too.
        kill(-pid, SIGKILL)
        lock.lock()
        if !reaped {
            var status: Int32 = 0
            while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
            reaped = true
        }
        lock.unlock()
        // Renderers may take a moment to go once their browser is gone.
        var tries = 0
        while kill(-pid, 0) == 0 && tries < 100 { kill(-pid, SIGKILL); usleep(10_000); tries += 1 }
        ChromiumProcess.removeTree(profileDirectory)
    }

    /// Removes a profile directory; retried for a moment, as a process of the killed browser
    /// may still be writing into it.
    static func removeTree(_ path: String) {
        for _ in 0..<20 {
            try? FileManager.default.removeItem(atPath: path)
            if access(path, F_OK) != 0 { return }
            usleep(50_000)
        }
    }

    /// Removes the profile directories that daemons killed with SIGKILL left in `directory`
    /// (Chromium's own lock, `SingletonLock` → "host-PID", names a process that no longer runs
    /// on this host), with Chromium's singleton-socket directory. A directory without that lock
    /// is never touched: it may be a profile
    /// another daemon is about to hand to its Chromium.
    static func removeStaleProfiles(in directory: String) {
        var name = [UInt8](repeating: 0, count: 256)
        gethostname(&name, 255)
        let host = String(decoding: name.prefix { $0 != 0 }, as: UTF8.self)
        guard let entries = try? FileManager.default.contentsOfDirectory(atPath: directory) else { return }
        for entry in entries where entry.hasPrefix("bridged-chromium-") {
            let dir = directory + "/" + entry
            guard let target = try? FileManager.default.destinationOfSymbolicLink(atPath: dir + "/SingletonLock"),
                  let dash = target.lastIndex(of: "-"), target[..<dash] == host,
                  let pid = pid_t(target[target.index(after: dash)...]), pid > 0 else { continue }
            if runs(pid) { continue }
            // Chromium's singleton socket lives in a directory of its own beside it.
            if let socket = try? FileManager.default.destinationOfSymbolicLink(atPath: dir + "/SingletonSocket"),
               socket.hasPrefix(directory + "/org.chromium.Chromium."), socket.hasSuffix("/SingletonSocket") {
                removeTree(String(socket.dropLast("/SingletonSocket".count)))
            }
            removeTree(dir)
        }
    }

    /// Whether `pid` names a live process (a zombie, dead but not yet reaped by whoever adopted
    /// it, does not count).
    static func runs(_ pid: pid_t) -> Bool {
        guard kill(pid, 0) == 0 || errno == EPERM else { return false }
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")") else { return true }
        return stat[stat.index(after: close)...].split(separator: " ").first != "Z"
    }

    static var temporaryDirectory: String {
        var dir = NSTemporaryDirectory()
        if dir.isEmpty { dir = "/tmp/" }
        while dir.count > 1 && dir.hasSuffix("/") { dir.removeLast() }
        return dir
    }
}
