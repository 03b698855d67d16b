// The native answers of a capacitor session without a controller: a plugin call in, an answer
// (and what the daemon must do besides) out, as a device answers with no user in front of it or
// with a documented default (docs/CAPACITOR.md, "Plugins"). Pure.

/// How a call is answered.
public enum CapacitorAnswer: Equatable, Sendable {
    /// Resolve with `data` (`nil`: a bare `resolve()`).
    case resolve(JSONValue?)
    /// Reject with the error.
    case reject(CapacitorError)
    /// A plugin the session does not have: the `not implemented` error (as on a device without
    /// it). The page's runtime already rejected a call reported `unavailable`: nothing is sent.
    case unavailable(CapacitorError)
    /// Needs the user or hardware and no controller mocked it: this documented error.
    case needsController(CapacitorError)
    /// A `hold` mock: the call waits in `CapacitorStore.held` for `capacitor.reply`.
    case hold
    /// No answer (addListener, removeListener: native never answers them).
    case none
}

/// What the daemon does besides answering.
public enum CapacitorEffect: Equatable, Sendable {
    /// App.exitApp (Android): the activity finishes; the session ends (with an event).
    case exitApp
    /// App.minimizeApp (Android): the app goes to the background; the daemon then runs
    /// `CapacitorStore.pause()` and sends its events.
    case minimizeApp
    /// Browser.open: an in-app browser over the app, a new item on the stack (its own tab, no
    /// capacitor.js in it); when it loads, `browserLoaded()`.
    case openBrowser(url: String)
    /// Browser.close: the in-app browser's tab closes; then `browserClosed()`.
    case closeBrowser
    /// AppLauncher.openUrl: the URL opens outside the app (`external.open`).
    case openExternal(url: String)
}

/// The answer to one call.
public struct CapacitorOutcome: Equatable, Sendable {
    public var answer: CapacitorAnswer
    public var effects: [CapacitorEffect]
    /// Page events after the answer (events kept for the listener just added).
    public var events: [CapacitorPageEvent]
    /// The answer came from a controller's mock.
    public var mocked: Bool

    public init(_ answer: CapacitorAnswer, effects: [CapacitorEffect] = [], events: [CapacitorPageEvent] = [], mocked: Bool = false) {
        self.answer = answer
        self.effects = effects
        self.events = events
        self.mocked = mocked
    }

    /// The `capacitor.result` for `call`, or `nil` when nothing is sent (no answer, held, or
    /// nobody waits: callbackId `-1` or an `unavailable` report).
    public func result(for call: CapacitorCall) -> CapacitorResult? {
        switch answer {
        case .resolve(let data): return CapacitorResult(answering: call, .success(data))
        case .reject(let e), .unavailable(let e), .needsController(let e): return CapacitorResult(answering: call, .failure(e))
        case .hold, .none: return nil
        }
    }

    /// Everything for the page, in order: the result, then `events`.
    public func pageEvents(for call: CapacitorCall) -> [CapacitorPageEvent] {
        (result(for: call).map { [CapacitorPageEvent.result($0)] } ?? []) + events
    }
}

extension CapacitorStore {
    /// Answers `call` (a `capacitor.call` from the app's page): a mock first (in order), else
    /// the device's answer; listener bookkeeping for `addListener`/`removeListener`/
    /// `removeAllListeners`.
    public mutating func answer(_ call: CapacitorCall) -> CapacitorOutcome {
        let platform = options.platform
        guard !call.unavailable, let spec = options.plugin(call.plugin) else {
            return CapacitorOutcome(.unavailable(.pluginNotImplemented(call.plugin, platform: platform)))
        }
        switch call.method {
        case "addListener":
            return CapacitorOutcome(.none, events: addListener(call))
        case "removeListener":
            removeListener(call)
            return CapacitorOutcome(.none)
        case "removeAllListeners":
            listeners.removeAll { $0.plugin == call.plugin }
            return CapacitorOutcome(.resolve(nil))
        default:
            break
        }
        guard spec.method(call.method, platform: platform) != nil else {
            return CapacitorOutcome(.reject(CapacitorError("\"\(call.plugin).\(call.method)()\" is not implemented on \(platform.rawValue)",
                                                           code: CapacitorError.unimplementedCode)))
        }
        if let reply = mocks.take(plugin: call.plugin, method: call.method) {
            switch reply {
            case .result(let data): return CapacitorOutcome(.resolve(data), mocked: true)
            case .error(let error): return CapacitorOutcome(.reject(error), mocked: true)
            case .hold:
                if call.isAnswerable, let id = call.callbackId { held[id] = call }
                return CapacitorOutcome(.hold, mocked: true)
            }
        }
        if call.plugin == "Geolocation", call.method == "clearWatch" {
            // Ends a watch: a held watchPosition gets no more positions.
            if let id = call.options["id"]?.stringValue, held[id]?.method == "watchPosition" { held[id] = nil }
            return CapacitorOutcome(.resolve(nil))
        }
        if CapacitorPlugins.isUnimplemented(plugin: call.plugin, method: call.method, platform: platform) {
            return CapacitorOutcome(.reject(.notImplemented))
        }
        if call.method == "checkPermissions" {
            // Nobody was asked yet: every alias is `prompt` (asking is the user's: requestPermissions).
            let states = CapacitorPlugins.permissionAliases(call.plugin).map { ($0, JSONValue.string("prompt")) }
            return CapacitorOutcome(.resolve(.object(JSONObject(states))))
        }
        if let answer = notificationBookkeeping(call) { return answer }
        if spec.kind != .device {
            return CapacitorOutcome(.needsController(.needsController(call.plugin, call.method)))
        }
        return deviceAnswer(call)
    }

    /// What the notification plugins answer without the user or a server: Android's channels
    /// (kept per session), the lists of pending and delivered notifications (none: nothing is
    /// ever delivered here), removing and cancelling them, the action types. Asking for the
    /// permission, scheduling and registering for pushes stay the controller's (mocked, else the
    /// documented error).
    private mutating func notificationBookkeeping(_ call: CapacitorCall) -> CapacitorOutcome? {
        guard call.plugin == "LocalNotifications" || call.plugin == "PushNotifications" else { return nil }
        let o = call.options
        switch call.method {
        case "createChannel":
            guard let id = o["id"]?.stringValue, !id.isEmpty else {
                return CapacitorOutcome(.reject(CapacitorError("Channel missing identifier")))
            }
            var list = channels[call.plugin] ?? []
            list.removeAll { $0["id"]?.stringValue == id }
            list.append(o)
            channels[call.plugin] = list
            return CapacitorOutcome(.resolve(nil))
        case "deleteChannel":
            channels[call.plugin]?.removeAll { $0["id"]?.stringValue == o["id"]?.stringValue }
            return CapacitorOutcome(.resolve(nil))
        case "listChannels":
            return CapacitorOutcome(.resolve(["channels": .array((channels[call.plugin] ?? []).map(JSONValue.object))]))
        case "getPending", "getDeliveredNotifications":
            return CapacitorOutcome(.resolve(["notifications": []]))
        case "removeDeliveredNotifications", "removeAllDeliveredNotifications", "cancel", "registerActionTypes", "unregister":
            return CapacitorOutcome(.resolve(nil))
        default:
            return nil
        }
    }

    private mutating func deviceAnswer(_ call: CapacitorCall) -> CapacitorOutcome {
        let o = call.options
        let m = call.method
        if m == "checkPermissions" || m == "requestPermissions" { return CapacitorOutcome(.resolve(.object([:]))) }
        switch call.plugin {
        case "App": return app(m, o)
        case "Preferences", "Storage": return preferences(m, o)
        case "Device": return device(m)
        case "Network": return CapacitorOutcome(.resolve(.object(network)))
        case "Browser": return browser(m, o)
        case "Clipboard":
            if m == "read" {
                let clip = clipboard ?? CapacitorClip(value: "", type: "text/plain")
                return CapacitorOutcome(.resolve(["value": .string(clip.value), "type": .string(clip.type)]))
            }
            if let image = o["image"]?.stringValue {
                clipboard = CapacitorClip(value: image, type: "image/png")
            } else if let text = o["string"]?.stringValue ?? o["url"]?.stringValue {
                clipboard = CapacitorClip(value: text, type: "text/plain")
            } else {
                return CapacitorOutcome(.reject(CapacitorError("No data provided")))
            }
            return CapacitorOutcome(.resolve(nil))
        case "Dialog":
            switch m {
            case "confirm": return CapacitorOutcome(.resolve(["value": true]))
            case "prompt": return CapacitorOutcome(.resolve(["value": .string(o["inputText"]?.stringValue ?? ""), "cancelled": false]))
            default: return CapacitorOutcome(.resolve(nil))
            }
        case "Toast":
            guard o["text"]?.stringValue != nil else { return CapacitorOutcome(.reject(CapacitorError("Must provide text"))) }
            return CapacitorOutcome(.resolve(nil))
        case "StatusBar": return statusBarAnswer(m, o)
        case "Keyboard":
            switch m {
            case "setResizeMode":
                if let mode = o["mode"]?.stringValue { keyboardResizeMode = mode }
                return CapacitorOutcome(.resolve(nil))
            case "getResizeMode": return CapacitorOutcome(.resolve(["mode": .string(keyboardResizeMode)]))
            default: return CapacitorOutcome(.resolve(nil))
            }
        case "TextZoom":
            switch m {
            case "set":
                guard let v = o["value"]?.doubleValue else { return CapacitorOutcome(.reject(CapacitorError("Must provide a value"))) }
                textZoom = v
                return CapacitorOutcome(.resolve(nil))
            case "get": return CapacitorOutcome(.resolve(["value": .double(textZoom)]))
            default: return CapacitorOutcome(.resolve(["value": .double(1)]))
            }
        case "ScreenOrientation":
            switch m {
            case "orientation": return CapacitorOutcome(.resolve(["type": .string(orientation)]))
            case "lock":
                let wanted = o["orientation"]?.stringValue ?? "any"
                let type: String
                switch wanted {
                case "landscape", "landscape-primary": type = "landscape-primary"
                case "landscape-secondary": type = "landscape-secondary"
                case "portrait", "portrait-primary": type = "portrait-primary"
                case "portrait-secondary": type = "portrait-secondary"
                default: type = orientation
                }
                guard type != orientation else { return CapacitorOutcome(.resolve(nil)) }
                orientation = type
                return CapacitorOutcome(.resolve(nil), events: notify(plugin: "ScreenOrientation", event: "screenOrientationChange",
                                                                     data: ["type": .string(type)]))
            default: return CapacitorOutcome(.resolve(nil))
            }
        case "ScreenReader":
            return m == "isEnabled" ? CapacitorOutcome(.resolve(["value": false])) : CapacitorOutcome(.resolve(nil))
        case "Share":
            return m == "canShare" ? CapacitorOutcome(.resolve(["value": true])) : CapacitorOutcome(.resolve(.object([:])))
        case "ActionSheet":
            return CapacitorOutcome(.resolve(["index": 0, "canceled": false]))
        case "AppLauncher":
            if m == "openUrl" {
                guard let url = o["url"]?.stringValue else { return CapacitorOutcome(.reject(CapacitorError("Must provide a url to open"))) }
                return CapacitorOutcome(.resolve(["completed": true]), effects: [.openExternal(url: url)])
            }
            return CapacitorOutcome(.resolve(["value": true]))
        default:
            // Haptics, SplashScreen: done at once.
            return CapacitorOutcome(.resolve(nil))
        }
    }

    private mutating func app(_ m: String, _ o: JSONObject) -> CapacitorOutcome {
        switch m {
        case "getInfo":
            return CapacitorOutcome(.resolve([
                "name": .string(options.appName), "id": .string(options.appId),
                "build": .string(options.build), "version": .string(options.version),
            ]))
        case "getState": return CapacitorOutcome(.resolve(["isActive": .bool(isActive)]))
        case "getLaunchUrl":
            // Android: the launch intent's URL; iOS: the last URL that opened the app.
            let url = options.platform == .android ? options.launchUrl : lastOpenedUrl
            return CapacitorOutcome(.resolve(url.map { ["url": .string($0)] }))
        case "exitApp":
            listeners.removeAll { $0.plugin == "App" }
            return CapacitorOutcome(.resolve(nil), effects: [.exitApp])
        case "minimizeApp": return CapacitorOutcome(.resolve(nil), effects: [.minimizeApp])
        case "toggleBackButtonHandler":
            backButtonHandlerEnabled = o["enabled"]?.boolValue ?? true
            return CapacitorOutcome(.resolve(nil))
        case "getAppLanguage": return CapacitorOutcome(.resolve(["value": .string(options.device.languageCode)]))
        default: return CapacitorOutcome(.reject(.notImplemented))
        }
    }

    private mutating func preferences(_ m: String, _ o: JSONObject) -> CapacitorOutcome {
        let group = preferencesGroup
        switch m {
        case "configure":
            preferencesGroup = o["group"]?.stringValue ?? "CapacitorStorage"
            return CapacitorOutcome(.resolve(nil))
        case "get":
            guard let key = o["key"]?.stringValue else { return CapacitorOutcome(.reject(CapacitorError("Must provide key"))) }
            return CapacitorOutcome(.resolve(["value": preferences[group]?[key] ?? .null]))
        case "set":
            guard let key = o["key"]?.stringValue else { return CapacitorOutcome(.reject(CapacitorError("Must provide key"))) }
            let value = o["value"]?.stringValue ?? (o["value"].map { $0.isNull ? "" : $0.jsonString } ?? "")
            preferences[group, default: [:]][key] = .string(value)
            return CapacitorOutcome(.resolve(nil))
        case "remove":
            guard let key = o["key"]?.stringValue else { return CapacitorOutcome(.reject(CapacitorError("Must provide key"))) }
            preferences[group]?.removeValue(forKey: key)
            return CapacitorOutcome(.resolve(nil))
        case "clear":
            preferences[group] = nil
            return CapacitorOutcome(.resolve(nil))
        case "keys":
            return CapacitorOutcome(.resolve(["keys": .array((preferences[group]?.keys ?? []).map(JSONValue.string))]))
        case "migrate":
            return CapacitorOutcome(.resolve(["migrated": [], "existing": []]))
        default: // removeOld
            return CapacitorOutcome(.resolve(nil))
        }
    }

    private func device(_ m: String) -> CapacitorOutcome {
        let d = options.device
        switch m {
        case "getId":
            // `identifier` from @capacitor/device 5; `uuid` before.
            return CapacitorOutcome(.resolve(["identifier": .string(d.identifier), "uuid": .string(d.identifier)]))
        case "getInfo":
            var info: JSONObject = [
                "name": .string(d.name), "model": .string(d.model), "platform": .string(options.platform.rawValue),
                "operatingSystem": .string(options.platform.rawValue), "osVersion": .string(d.osVersion),
            ]
            switch options.platform {
            case .android: info["androidSDKVersion"] = .int(d.osVersionNumber)
            case .ios: info["iOSVersion"] = .int(d.osVersionNumber)
            }
            info["manufacturer"] = .string(d.manufacturer)
            info["isVirtual"] = false
            info["memUsed"] = .int(d.memUsed)
            info["webViewVersion"] = .string(d.webViewVersion)
            return CapacitorOutcome(.resolve(.object(info)))
        case "getBatteryInfo":
            return CapacitorOutcome(.resolve(["batteryLevel": .double(d.batteryLevel), "isCharging": .bool(d.isCharging)]))
        case "getLanguageCode": return CapacitorOutcome(.resolve(["value": .string(d.languageCode)]))
        case "getLanguageTag": return CapacitorOutcome(.resolve(["value": .string(d.languageTag)]))
        default: return CapacitorOutcome(.reject(.notImplemented))
        }
    }

    private mutating func browser(_ m: String, _ o: JSONObject) -> CapacitorOutcome {
        if m == "open" {
            guard let url = o["url"]?.stringValue, !url.isEmpty else {
                return CapacitorOutcome(.reject(CapacitorError("Must provide a URL to open")))
            }
            browserURL = url
            return CapacitorOutcome(.resolve(nil), effects: [.openBrowser(url: url)])
        }
        guard browserURL != nil else {
            return options.platform == .ios
                ? CapacitorOutcome(.reject(CapacitorError("No active window to close!")))
                : CapacitorOutcome(.resolve(nil))
        }
        return CapacitorOutcome(.resolve(nil), effects: [.closeBrowser])
    }

    private mutating func statusBarAnswer(_ m: String, _ o: JSONObject) -> CapacitorOutcome {
        var events: [CapacitorPageEvent] = []
        switch m {
        case "getInfo": return CapacitorOutcome(.resolve(.object(statusBar)))
        case "setStyle": if let s = o["style"]?.stringValue { statusBar["style"] = .string(s) }
        case "setBackgroundColor": if let c = o["color"]?.stringValue { statusBar["color"] = .string(c) }
        case "show", "hide":
            let visible = m == "show"
            if statusBar["visible"]?.boolValue != visible {
                statusBar["visible"] = .bool(visible)
                events = notify(plugin: "StatusBar", event: "statusBarVisibilityChanged", data: .object(statusBar))
            }
        case "setOverlaysWebView":
            let overlay = o["overlay"]?.boolValue ?? true
            if statusBar["overlays"]?.boolValue != overlay {
                statusBar["overlays"] = .bool(overlay)
                events = notify(plugin: "StatusBar", event: "statusBarOverlayChanged", data: .object(statusBar))
            }
        default: break
        }
        return CapacitorOutcome(.resolve(nil), events: events)
    }
}
