import Foundation
import PackagePlugin

/// Build-tool plugin: every file under the target's `Assets/` directory is compiled into the
/// target as bytes, reachable through the generated `EmbeddedAssets` enum by its path relative to
/// `Assets/` (e.g. `"bridge.js"`, `"dashboard/app.css"`). Adding an asset is dropping a file there
/// (a symbolic link to a file elsewhere in the repository works too); nothing generated is kept in
/// the repository, so nothing can drift.
///
/// The target must exclude `Assets` in Package.swift (`exclude: ["Assets"]`) so SwiftPM does not
/// treat the files as unhandled sources. Files and directories whose name starts with `.` are
/// skipped.
@main
struct EmbedAssets: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: Target) throws -> [Command] {
        let assets = target.directoryURL.appending(path: "Assets")
        let files = try Self.files(under: assets)
        let output = context.pluginWorkDirectoryURL.appending(path: "EmbeddedAssets.swift")
        // name=path pairs as arguments: adding or removing a file changes the command, so SwiftPM
        // reruns it; a changed file is an input, so it reruns then too.
        var arguments = [output.path(percentEncoded: false)]
        for (name, url) in files {
            arguments.append("\(name)=\(url.path(percentEncoded: false))")
        }
        return [
            .buildCommand(
                displayName: "Embedding \(files.count) asset(s) into \(target.name)",
                executable: try context.tool(named: "embed-assets").url,
                arguments: arguments,
                inputFiles: files.map(\.url),
                outputFiles: [output]
            ),
        ]
    }

    /// Regular files under `directory` (symbolic links resolved), sorted by name.
    static func files(under directory: URL) throws -> [(name: String, url: URL)] {
        let fm = FileManager.default
        var isDirectory: ObjCBool = false
        guard fm.fileExists(atPath: directory.path(percentEncoded: false), isDirectory: &isDirectory),
              isDirectory.boolValue else { return [] }
        var result: [(name: String, url: URL)] = []
        func walk(_ dir: URL, prefix: String) throws {
            for entry in try fm.contentsOfDirectory(atPath: dir.path(percentEncoded: false)).sorted()
            where !entry.hasPrefix(".") {
                let url = dir.appending(path: entry).resolvingSymlinksInPath()
                var isDir: ObjCBool = false
                guard fm.fileExists(atPath: url.path(percentEncoded: false), isDirectory: &isDir) else {
                    throw EmbedAssetsError("\(dir.appending(path: entry).path(percentEncoded: false)) is a broken link")
                }
                if isDir.boolValue {
                    try walk(url, prefix: prefix + entry + "/")
                } else {
                    result.append((prefix + entry, url))
                }
            }
        }
        try walk(directory, prefix: "")
        return result
    }
}

struct EmbedAssetsError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
