import ArgumentParser
import BridgeProtocol
import Foundation

/// The browser session's profile options of `bridged open` (docs/HOTWIRE.md):
/// `--profile hotwire-native [--platform ios|android] [--path-configuration FILE|URL]
/// [--bridge-components "form menu"]`. `bridged check` has its own `--profile` (default
/// `astro`) and the same `HotwireShellOptions`.
struct ProfileOptions: ParsableArguments {
    @Option(help: "The app the browser session plays: hotwire-native (a Hotwire Native shell) or capacitor (a Capacitor app's native side). Default: none (Astro).")
    var profile: String?

    @OptionGroup var shell: HotwireShellOptions

    /// The session's profile (plain without `--profile`), parsed as `session.create` parses it.
    func sessionProfile() throws -> SessionProfile { try shell.profile(named: profile) }
}

/// The Hotwire Native shell's options, one declaration for `bridged open` and `bridged check`
/// (the same flags, help, checks and messages in both).
struct HotwireShellOptions: ParsableArguments {
    @Option(help: "With --profile hotwire-native: ios (default) or android. With --profile capacitor: android (default) or ios.")
    var platform: String?

    @Option(name: .customLong("web-dir"),
            help: "With --profile capacitor: the app's built web assets (e.g. dist/), served at the origin the app has on the device (https://localhost/).")
    var webDir: String?

    /// `--web-dir` as an absolute path (checked in `profile(named:)`).
    var webDirectory: String? {
        webDir.map { URL(fileURLWithPath: $0).standardizedFileURL.path }
    }

    @Option(name: .customLong("capacitor"),
            help: ArgumentHelp("With --profile capacitor: the app's options, session.create's \"capacitor\" object (appId, appName, version, build, launchUrl, plugins, allowNavigation, …; docs/CAPACITOR.md), as JSON or a JSON file.", valueName: "json|file"))
    var capacitor: String?

    @Option(name: .customLong("path-configuration"),
            help: "With --profile hotwire-native: the path configuration, a JSON file or an http(s) URL the app serves.")
    var pathConfiguration: String?

    @Option(name: .customLong("bridge-components"),
            help: "With --profile hotwire-native: the bridge components native registers, space-separated, e.g. \"form menu\".")
    var bridgeComponents: String?

    /// The profile `profile` and these options make, parsed by `SessionProfile.parse` (as
    /// `session.create` parses its params); a file that cannot be read or is not JSON is
    /// refused. The messages name the flags (`--platform needs --profile hotwire-native`), not
    /// `session.create`'s params.
    func profile(named profile: String?) throws -> SessionProfile {
        // The flags given without the profile are named here, as the user typed them.
        if profile == nil || profile == "astro" {
            let given = [("--platform", platform), ("--path-configuration", pathConfiguration),
                         ("--bridge-components", bridgeComponents), ("--web-dir", webDir), ("--capacitor", capacitor)]
            if let (flag, _) = given.first(where: { $0.1 != nil }) {
                let needs = flag == "--web-dir" || flag == "--capacitor" ? CapacitorProfile.name : HotwireProfile.name
                throw ValidationError("\(flag) needs --profile \(needs)")
            }
        }
        var params = JSONObject()
        if let profile { params["profile"] = .string(profile) }
        if let platform { params["platform"] = .string(platform) }
        if let webDir {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: webDir, isDirectory: &isDirectory), isDirectory.boolValue else {
                throw ValidationError("--web-dir \(webDir): not a directory")
            }
            params["webDir"] = true
        }
        if let capacitor {
            let trimmed = capacitor.drop { $0 == " " || $0 == "\n" || $0 == "\t" }
            var text = capacitor
            if !trimmed.hasPrefix("{") {
                do {
                    text = try String(contentsOfFile: capacitor, encoding: .utf8)
                } catch {
                    throw ValidationError("--capacitor \(capacitor): neither a JSON object nor a file that can be read (\(error.localizedDescription))")
                }
            }
            do {
                params["capacitor"] = try JSONParser.parse(text)
            } catch {
                throw ValidationError("--capacitor: not JSON (\(error))")
            }
        }
        if let bridgeComponents {
            params["bridgeComponents"] = .array(bridgeComponents.split(separator: " ").map { .string(String($0)) })
        }
        if let pathConfiguration {
            if pathConfiguration.hasPrefix("http://") || pathConfiguration.hasPrefix("https://") {
                params["pathConfigurationUrl"] = .string(pathConfiguration)
            } else {
                let data: Data
                do {
                    data = try Data(contentsOf: URL(fileURLWithPath: pathConfiguration))
                } catch {
                    throw ValidationError("--path-configuration \(pathConfiguration): cannot be read (\(error.localizedDescription))")
                }
                do {
                    params["pathConfiguration"] = try JSONParser.parse([UInt8](data))
                } catch {
                    throw ValidationError("--path-configuration \(pathConfiguration): not JSON (\(error))")
                }
            }
        }
        do {
            return try SessionProfile.parse(params)
        } catch {
            // The library's message names session.create's params; say which flag it was.
            switch error.param {
            case "platform": throw ValidationError("--platform: \(error.message)")
            case "pathConfiguration": throw ValidationError("--path-configuration \(pathConfiguration ?? ""): \(error.message)")
            case "pathConfigurationUrl":
                throw ValidationError("--path-configuration \(pathConfiguration ?? ""): not an http(s) URL with a host")
            case "bridgeComponents": throw ValidationError("--bridge-components: \(error.message)")
            case "webDir": throw ValidationError("--web-dir needs --profile \(CapacitorProfile.name)")
            case "capacitor": throw ValidationError("--capacitor: \(error.message)")
            default: throw ValidationError("--profile: \(error.message)")
            }
        }
    }
}
