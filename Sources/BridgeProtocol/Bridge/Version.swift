/// The version of bridged: the one place it is written. `bridged --version` prints it, the
/// handshake and `/healthz` report it, traces record it, and the Debian package takes its
/// version from the built binary's `--version` (scripts/build-deb.sh), so they always agree.
public enum BridgedVersion {
    public static let string = "0.1.0"
}
