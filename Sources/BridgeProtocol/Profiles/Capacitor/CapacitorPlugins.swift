// The `capacitor` profile's plugins: Capacitor's official plugins as native registers them (their
// JS names, methods with the return type the header carries, events), the headers the page gets
// (`Capacitor.PluginHeaders`), and which of them a device answers by itself (docs/CAPACITOR.md).
// Pure: no I/O, no clock.

/// The platform a capacitor session plays.
public enum CapacitorPlatform: String, Sendable, CaseIterable {
    case android
    case ios
}

/// How the app's runtime calls a method, from its header: `promise` → `nativePromise` (one
/// answer); `callback` / `none` → `nativeCallback` (the callback stays stored; `none` is left out
/// of the header's JSON, as native does).
public enum CapacitorReturnType: String, Sendable {
    case promise
    case callback
    case none
}

/// One method of a plugin's header.
public struct CapacitorMethodHeader: Equatable, Sendable {
    public var name: String
    public var rtype: CapacitorReturnType

    public init(_ name: String, _ rtype: CapacitorReturnType = .promise) {
        self.name = name
        self.rtype = rtype
    }

    /// `{name, rtype?}` as in `Capacitor.PluginHeaders` (`rtype` absent for `none`).
    public var json: JSONValue {
        var o: JSONObject = ["name": .string(name)]
        if rtype != .none { o["rtype"] = .string(rtype.rawValue) }
        return .object(o)
    }
}

/// Who answers a plugin's calls when no controller mocked them.
public enum CapacitorPluginKind: Equatable, Sendable {
    /// The device answers by itself (App, Preferences, Device, Network, Dialog, …).
    case device
    /// Needs the user or hardware (Camera, Geolocation, Filesystem, notifications) or is the
    /// app's own plugin: a mock's answer, else a documented `UNAVAILABLE` error.
    case controller
    /// No native side at all (Motion): no header; the plugin's own JS implementation runs on
    /// every platform. Its events are DOM events (`devicemotion`, `deviceorientation`).
    case javascriptOnly
}

/// A plugin as a session's native side registers it.
public struct CapacitorPluginSpec: Equatable, Sendable {
    /// The JS name (`registerPlugin` name, `pluginId` of calls).
    public var name: String
    /// The plugin's own methods (the five base methods every header starts with come first in
    /// `header(platform:)`).
    public var methods: [CapacitorMethodHeader]
    /// The events its listeners may get.
    public var events: [String]
    /// Events kept until the first listener for them is added (`retainUntilConsumed`).
    public var retainedEvents: [String]
    public var kind: CapacitorPluginKind
    /// Methods the iOS header lacks (the package's `ios` JS implementation serves them:
    /// TextZoom's `get`/`set`).
    public var notInIOSHeader: [String]

    public init(_ name: String, methods: [CapacitorMethodHeader], events: [String] = [], retainedEvents: [String] = [],
                kind: CapacitorPluginKind = .device, notInIOSHeader: [String] = []) {
        self.name = name
        self.methods = methods
        self.events = events
        self.retainedEvents = retainedEvents
        self.kind = kind
        self.notInIOSHeader = notInIOSHeader
    }

    /// The methods every plugin's header starts with (Capacitor's base plugin class):
    /// `removeAllListeners` is `promise` from Capacitor 4 (a core-3 runtime calls it the same way
    /// through `nativePromise`, the runtime reads only the header).
    public static let baseMethods: [CapacitorMethodHeader] = [
        CapacitorMethodHeader("addListener", .none),
        CapacitorMethodHeader("removeListener", .none),
        CapacitorMethodHeader("removeAllListeners"),
        CapacitorMethodHeader("checkPermissions"),
        CapacitorMethodHeader("requestPermissions"),
    ]

    /// The methods of the header on `platform`: the base methods, then the plugin's own.
    public func headerMethods(platform: CapacitorPlatform) -> [CapacitorMethodHeader] {
        let own = platform == .ios ? methods.filter { !notInIOSHeader.contains($0.name) } : methods
        return Self.baseMethods + own.filter { m in !Self.baseMethods.contains { $0.name == m.name } }
    }

    /// `{name, methods: [{name, rtype?}]}`, or `nil` for a plugin without a native side.
    public func header(platform: CapacitorPlatform) -> JSONValue? {
        guard kind != .javascriptOnly else { return nil }
        return ["name": .string(name), "methods": .array(headerMethods(platform: platform).map(\.json))]
    }

    /// The method `name` of the header on `platform`, if it has it.
    public func method(_ name: String, platform: CapacitorPlatform) -> CapacitorMethodHeader? {
        headerMethods(platform: platform).first { $0.name == name }
    }
}

/// The official plugins (ionic-team/capacitor-plugins, read in docs/CAPACITOR.md's sources).
public enum CapacitorPlugins {
    private static func p(_ names: String...) -> [CapacitorMethodHeader] { names.map { CapacitorMethodHeader($0) } }

    static let preferencesMethods = p("configure", "get", "set", "remove", "clear", "keys", "migrate", "removeOld")

    /// Every official plugin, `Storage` (Capacitor 3's `@capacitor/storage`) and `Preferences`
    /// (4+) both.
    public static let official: [CapacitorPluginSpec] = [
        CapacitorPluginSpec("App", methods: p("exitApp", "getInfo", "getState", "getLaunchUrl", "minimizeApp",
                                              "toggleBackButtonHandler", "getAppLanguage"),
                            events: ["appStateChange", "pause", "resume", "appUrlOpen", "appRestoredResult", "backButton"],
                            retainedEvents: ["appUrlOpen", "appRestoredResult"]),
        CapacitorPluginSpec("ActionSheet", methods: p("showActions")),
        CapacitorPluginSpec("AppLauncher", methods: p("canOpenUrl", "openUrl")),
        CapacitorPluginSpec("Browser", methods: p("open", "close"), events: ["browserPageLoaded", "browserFinished"]),
        CapacitorPluginSpec("Camera", methods: p("getPhoto", "pickImages", "pickLimitedLibraryPhotos", "getLimitedLibraryPhotos"),
                            kind: .controller),
        CapacitorPluginSpec("Clipboard", methods: p("write", "read")),
        CapacitorPluginSpec("Device", methods: p("getId", "getInfo", "getBatteryInfo", "getLanguageCode", "getLanguageTag")),
        CapacitorPluginSpec("Dialog", methods: p("alert", "confirm", "prompt")),
        CapacitorPluginSpec("Filesystem", methods: p("readFile", "writeFile", "appendFile", "deleteFile", "mkdir", "rmdir", "readdir",
                                                     "getUri", "stat", "rename", "copy", "downloadFile"),
                            events: ["progress"], kind: .controller),
        CapacitorPluginSpec("Geolocation", methods: [CapacitorMethodHeader("getCurrentPosition"),
                                                     CapacitorMethodHeader("watchPosition", .callback),
                                                     CapacitorMethodHeader("clearWatch")],
                            kind: .controller),
        CapacitorPluginSpec("Haptics", methods: p("impact", "notification", "vibrate", "selectionStart", "selectionChanged", "selectionEnd")),
        CapacitorPluginSpec("Keyboard", methods: p("show", "hide", "setAccessoryBarVisible", "setStyle", "setResizeMode", "getResizeMode", "setScroll"),
                            events: ["keyboardWillShow", "keyboardDidShow", "keyboardWillHide", "keyboardDidHide"]),
        CapacitorPluginSpec("LocalNotifications", methods: p("schedule", "getPending", "registerActionTypes", "cancel", "areEnabled",
                                                             "getDeliveredNotifications", "removeDeliveredNotifications",
                                                             "removeAllDeliveredNotifications", "createChannel", "deleteChannel",
                                                             "listChannels", "changeExactNotificationSetting", "checkExactNotificationSetting"),
                            events: ["localNotificationReceived", "localNotificationActionPerformed"],
                            retainedEvents: ["localNotificationActionPerformed"], kind: .controller),
        CapacitorPluginSpec("Motion", methods: [], events: ["accel", "orientation"], kind: .javascriptOnly),
        CapacitorPluginSpec("Network", methods: p("getStatus"), events: ["networkStatusChange"]),
        CapacitorPluginSpec("Preferences", methods: preferencesMethods),
        CapacitorPluginSpec("PushNotifications", methods: p("register", "unregister", "getDeliveredNotifications", "removeDeliveredNotifications",
                                                            "removeAllDeliveredNotifications", "createChannel", "deleteChannel", "listChannels"),
                            events: ["registration", "registrationError", "pushNotificationReceived", "pushNotificationActionPerformed"],
                            retainedEvents: ["pushNotificationActionPerformed"], kind: .controller),
        CapacitorPluginSpec("ScreenOrientation", methods: p("orientation", "lock", "unlock"), events: ["screenOrientationChange"]),
        CapacitorPluginSpec("ScreenReader", methods: p("isEnabled", "speak"), events: ["stateChange"]),
        CapacitorPluginSpec("Share", methods: p("canShare", "share")),
        CapacitorPluginSpec("SplashScreen", methods: p("show", "hide")),
        CapacitorPluginSpec("StatusBar", methods: p("setStyle", "setBackgroundColor", "show", "hide", "getInfo", "setOverlaysWebView"),
                            events: ["statusBarVisibilityChanged", "statusBarOverlayChanged"]),
        CapacitorPluginSpec("Storage", methods: preferencesMethods),
        CapacitorPluginSpec("TextZoom", methods: p("get", "set", "getPreferred"), notInIOSHeader: ["get", "set"]),
        CapacitorPluginSpec("Toast", methods: p("show")),
    ]

    /// The names of `official`, the default plugin list of a session.
    public static var officialNames: [String] { official.map(\.name) }

    /// The official plugin named `name` (its JS name, exactly).
    public static func spec(named name: String) -> CapacitorPluginSpec? {
        official.first { $0.name == name }
    }

    /// `Capacitor.PluginHeaders` for `plugins` on `platform` (plugins without a native side left
    /// out), in their order.
    public static func headers(_ plugins: [CapacitorPluginSpec], platform: CapacitorPlatform) -> JSONValue {
        .array(plugins.compactMap { $0.header(platform: platform) })
    }

    /// The permission aliases of the plugins that have some (`checkPermissions` answers each
    /// with `prompt` on a fresh install: nobody was asked yet).
    public static func permissionAliases(_ plugin: String) -> [String] {
        switch plugin {
        case "Camera": return ["camera", "photos"]
        case "Geolocation": return ["location", "coarseLocation"]
        case "LocalNotifications": return ["display"]
        case "PushNotifications": return ["receive"]
        case "Filesystem": return ["publicStorage"]
        default: return []
        }
    }

    /// Methods a platform's plugin answers with `call.unimplemented()` (UNIMPLEMENTED,
    /// "not implemented") although its header lists them.
    public static func isUnimplemented(plugin: String, method: String, platform: CapacitorPlatform) -> Bool {
        switch (platform, plugin) {
        case (.ios, "App"): return ["exitApp", "minimizeApp", "toggleBackButtonHandler"].contains(method)
        case (.android, "Keyboard"): return !["show", "hide"].contains(method) && !CapacitorPluginSpec.baseMethods.contains { $0.name == method }
        case (.ios, "Keyboard"): return method == "show"
        case (.android, "Camera"): return ["pickLimitedLibraryPhotos", "getLimitedLibraryPhotos"].contains(method)
        case (.ios, "LocalNotifications"):
            return ["createChannel", "deleteChannel", "listChannels", "changeExactNotificationSetting", "checkExactNotificationSetting"].contains(method)
        case (.ios, "PushNotifications"): return ["createChannel", "deleteChannel", "listChannels"].contains(method)
        default: return false
        }
    }
}
