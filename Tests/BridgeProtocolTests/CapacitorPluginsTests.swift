import Testing

@testable import BridgeProtocol

/// The capacitor profile's pure part: plugin headers, options, the device's answers, mocks,
/// listeners and the native moves (back, deep links, pause/resume, the in-app browser).
@Suite struct CapacitorPluginsTests {
    static func store(_ platform: CapacitorPlatform = .android, plugins: [String]? = nil, launchUrl: String? = nil) -> CapacitorStore {
        var options = CapacitorOptions(platform: platform)
        options.appId = "com.example.demo"
        options.appName = "Demo"
        options.version = "1.2.3"
        options.build = "7"
        options.launchUrl = launchUrl
        if let plugins { options.plugins = plugins.compactMap(CapacitorPlugins.spec(named:)) }
        return CapacitorStore(options: options)
    }

    static func call(_ plugin: String, _ method: String, _ options: JSONObject = [:], id: String = "11", save: Bool = false) -> CapacitorCall {
        CapacitorCall(callbackId: id, plugin: plugin, method: method, options: options, save: save)
    }

    // MARK: - headers

    @Test func headersStartWithTheBaseMethods() throws {
        let app = try #require(CapacitorPlugins.spec(named: "App")?.header(platform: .android))
        let methods = try #require(app["methods"]?.arrayValue)
        #expect(Array(methods.prefix(5)) == [
            ["name": "addListener"], ["name": "removeListener"], ["name": "removeAllListeners", "rtype": "promise"],
            ["name": "checkPermissions", "rtype": "promise"], ["name": "requestPermissions", "rtype": "promise"],
        ])
        #expect(methods.contains(["name": "getInfo", "rtype": "promise"]))
        let geo = try #require(CapacitorPlugins.spec(named: "Geolocation"))
        #expect(geo.method("watchPosition", platform: .ios)?.rtype == .callback)
        #expect(CapacitorPlugins.spec(named: "Motion")?.header(platform: .android) == nil, "Motion has no native side")
        let zoom = try #require(CapacitorPlugins.spec(named: "TextZoom"))
        #expect(zoom.headerMethods(platform: .ios).map(\.name).suffix(1) == ["getPreferred"], "iOS serves get/set in JS")
        #expect(zoom.headerMethods(platform: .android).map(\.name).suffix(3) == ["get", "set", "getPreferred"])
    }

    @Test func officialList() {
        let names = CapacitorPlugins.officialNames
        #expect(names.count == 25)
        #expect(names.contains("Storage") && names.contains("Preferences"))
        let headers = CapacitorPlugins.headers(CapacitorPlugins.official, platform: .ios).arrayValue ?? []
        #expect(headers.count == 24, "every plugin but Motion")
        #expect(headers.allSatisfy { ($0["methods"]?.arrayValue?.count ?? 0) >= 5 })
    }

    // MARK: - options

    @Test func parseOptions() throws {
        #expect(try CapacitorOptions.parse(["url": "http://a/"]) == nil)
        #expect(try CapacitorOptions.parse(["profile": "hotwire-native"]) == nil)
        let d = try #require(try CapacitorOptions.parse(["profile": "capacitor"]))
        #expect(d.platform == .android && d.plugins.count == 25 && d.appId == "com.example.app" && d.androidScheme == "https")
        let o = try #require(try CapacitorOptions.parse([
            "profile": "capacitor", "platform": "ios",
            "capacitor": [
                "appId": "com.x", "appName": "X", "version": "2.0", "build": "42", "launchUrl": "myapp://start",
                "plugins": ["App", "Storage", ["name": "Echo", "methods": ["echo", ["name": "watch", "rtype": "callback"]]]],
                "allowNavigation": ["*.example.com"], "androidScheme": "http",
            ],
        ]))
        #expect(o.platform == .ios && o.appId == "com.x" && o.appName == "X" && o.version == "2.0" && o.build == "42")
        #expect(o.launchUrl == "myapp://start" && o.allowNavigation == ["*.example.com"] && o.androidScheme == "http")
        #expect(o.plugins.map(\.name) == ["App", "Storage", "Echo"])
        #expect(o.plugin("Echo")?.kind == .controller && o.plugin("Echo")?.method("watch", platform: .ios)?.rtype == .callback)
        #expect(o.device.manufacturer == "Apple")
    }

    @Test(arguments: [
        (["profile": "capacitor", "platform": "web"], "platform must be \"android\" or \"ios\", not \"web\"", "platform"),
        (["profile": "capacitor", "capacitor": "x"], "capacitor must be an object, not \"x\"", "capacitor"),
        (["profile": "capacitor", "capacitor": ["appId": 3]], "capacitor.appId must be a string, not 3", "capacitor"),
        (["profile": "capacitor", "capacitor": ["plugins": ["App", "App"]]], "plugin \"App\" is listed twice", "capacitor"),
        (["profile": "capacitor", "capacitor": ["androidScheme": "capacitor"]],
         "capacitor.androidScheme must be \"http\" or \"https\", not \"capacitor\"", "capacitor"),
        (["profile": "capacitor", "capacitor": ["plugins": [3]]], "capacitor.plugins: 3 is neither a plugin name nor {name, methods}", "capacitor"),
    ] as [(JSONObject, String, String?)])
    func refused(_ params: JSONObject, _ message: String, _ param: String?) {
        #expect(throws: CapacitorConfigurationError(message, param: param)) { try CapacitorOptions.parse(params) }
    }

    @Test func unknownPluginName() {
        #expect(throws: CapacitorConfigurationError.self) { try CapacitorOptions.parse(["profile": "capacitor", "capacitor": ["plugins": ["Nope"]]]) }
    }

    @Test func originsAndInjectedConfig() throws {
        var android = CapacitorOptions(platform: .android)
        #expect(android.localOrigin == "https://localhost")
        #expect(android.serverURL(appURL: "http://127.0.0.1:8790/app/", webDir: false) == "http://127.0.0.1:8790")
        #expect(android.serverURL(appURL: "http://127.0.0.1:8790/", webDir: true) == "https://localhost")
        android.androidScheme = "http"
        #expect(android.localOrigin == "http://localhost")
        let ios = CapacitorOptions(platform: .ios)
        #expect(ios.localOrigin == "https://localhost")
        #expect(ios.serverURL(appURL: "http://127.0.0.1:8790/", webDir: false) == "https://localhost")
        let config = ios.injectedConfig(serverURL: "https://localhost")
        #expect(config["platform"] == "ios" && config["serverUrl"] == "https://localhost" && config["debug"] == false)
        #expect(config["plugins"]?.arrayValue?.count == 24)
        #expect(config["config"] == .object([:]))
    }

    @Test(arguments: [
        ("https://localhost/inner", true), ("https://localhost:443/x", true), ("http://localhost/", false),
        ("https://a.example.com/", true), ("https://example.com/", false), ("https://other.test/", false),
        ("data:text/html,hi", true), ("blob:https://localhost/1", true), ("mailto:a@b", false), ("https://docs.test/x", true),
    ])
    func navigationStays(_ url: String, _ stays: Bool) {
        var o = CapacitorOptions(platform: .android)
        o.allowNavigation = ["*.example.com", "https://docs.test"]
        #expect(o.navigationStays(url, appOrigin: "https://localhost") == stays)
    }

    // MARK: - answers

    @Test(arguments: [
        (CapacitorPlatform.android, "App", "getInfo", [:], CapacitorAnswer.resolve(["name": "Demo", "id": "com.example.demo", "build": "7", "version": "1.2.3"])),
        (.ios, "App", "getState", [:], .resolve(["isActive": true])),
        (.android, "App", "getLaunchUrl", [:], .resolve(nil)),
        (.ios, "App", "exitApp", [:], .reject(.notImplemented)),
        (.ios, "App", "minimizeApp", [:], .reject(.notImplemented)),
        (.android, "App", "getAppLanguage", [:], .resolve(["value": "en"])),
        (.android, "Device", "getId", [:], .resolve(["identifier": "b9f6c2d41e7a3058", "uuid": "b9f6c2d41e7a3058"])),
        (.ios, "Device", "getLanguageCode", [:], .resolve(["value": "en"])),
        (.ios, "Device", "getLanguageTag", [:], .resolve(["value": "en-US"])),
        (.android, "Device", "getBatteryInfo", [:], .resolve(["batteryLevel": 1.0, "isCharging": true])),
        (.android, "Network", "getStatus", [:], .resolve(["connected": true, "connectionType": "wifi"])),
        (.android, "Preferences", "get", ["key": "missing"], .resolve(["value": nil])),
        (.android, "Preferences", "get", [:], .reject(CapacitorError("Must provide key"))),
        (.ios, "Storage", "migrate", [:], .resolve(["migrated": [], "existing": []])),
        (.android, "Clipboard", "read", [:], .resolve(["value": "", "type": "text/plain"])),
        (.android, "Dialog", "alert", ["message": "Hi"], .resolve(nil)),
        (.ios, "Dialog", "confirm", ["message": "Sure?"], .resolve(["value": true])),
        (.ios, "Dialog", "prompt", ["message": "Name?", "inputText": "Ann"], .resolve(["value": "Ann", "cancelled": false])),
        (.android, "Toast", "show", ["text": "Saved"], .resolve(nil)),
        (.android, "Toast", "show", [:], .reject(CapacitorError("Must provide text"))),
        (.ios, "Haptics", "impact", ["style": "HEAVY"], .resolve(nil)),
        (.android, "StatusBar", "getInfo", [:], .resolve(["visible": true, "style": "DEFAULT", "color": "#000000", "overlays": false, "height": 24])),
        (.ios, "SplashScreen", "hide", [:], .resolve(nil)),
        (.android, "Keyboard", "show", [:], .resolve(nil)),
        (.android, "Keyboard", "setAccessoryBarVisible", ["isVisible": true], .reject(.notImplemented)),
        (.ios, "Keyboard", "show", [:], .reject(.notImplemented)),
        (.ios, "Keyboard", "getResizeMode", [:], .resolve(["mode": "native"])),
        (.android, "TextZoom", "getPreferred", [:], .resolve(["value": 1.0])),
        (.ios, "TextZoom", "get", [:], .reject(CapacitorError("\"TextZoom.get()\" is not implemented on ios", code: "UNIMPLEMENTED"))),
        (.android, "ScreenReader", "isEnabled", [:], .resolve(["value": false])),
        (.ios, "Share", "canShare", [:], .resolve(["value": true])),
        (.android, "Share", "share", ["text": "x"], .resolve(.object([:]))),
        (.android, "ActionSheet", "showActions", ["options": [["title": "A"]]], .resolve(["index": 0, "canceled": false])),
        (.ios, "Browser", "close", [:], .reject(CapacitorError("No active window to close!"))),
        (.android, "Browser", "close", [:], .resolve(nil)),
        (.android, "Clipboard", "checkPermissions", [:], .resolve(.object([:]))),
        (.ios, "Camera", "checkPermissions", [:], .resolve(["camera": "prompt", "photos": "prompt"])),
        (.android, "Geolocation", "checkPermissions", [:], .resolve(["location": "prompt", "coarseLocation": "prompt"])),
        (.android, "Geolocation", "requestPermissions", [:], .needsController(.needsController("Geolocation", "requestPermissions"))),
        (.android, "ScreenOrientation", "orientation", [:], .resolve(["type": "portrait-primary"])),
        (.android, "Camera", "getPhoto", ["resultType": "uri"], .needsController(.needsController("Camera", "getPhoto"))),
        (.ios, "Geolocation", "getCurrentPosition", [:], .needsController(.needsController("Geolocation", "getCurrentPosition"))),
        (.android, "Filesystem", "readFile", ["path": "a"], .needsController(.needsController("Filesystem", "readFile"))),
        (.android, "PushNotifications", "register", [:], .needsController(.needsController("PushNotifications", "register"))),
        (.ios, "PushNotifications", "createChannel", [:], .reject(.notImplemented)),
        (.android, "App", "addListener", ["eventName": "pause"], .none),
        (.android, "App", "removeAllListeners", [:], .resolve(nil)),
    ] as [(CapacitorPlatform, String, String, JSONObject, CapacitorAnswer)])
    func deviceAnswers(_ platform: CapacitorPlatform, _ plugin: String, _ method: String, _ options: JSONObject, _ expected: CapacitorAnswer) {
        var s = Self.store(platform)
        #expect(s.answer(Self.call(plugin, method, options)).answer == expected, "\(platform) \(plugin).\(method)")
    }

    @Test func notificationBookkeepingIsAnsweredAndTheUsersPartIsNot() {
        var s = Self.store()
        #expect(s.answer(Self.call("LocalNotifications", "createChannel", ["id": "news", "name": "News", "importance": 3])).answer == .resolve(nil))
        #expect(s.answer(Self.call("LocalNotifications", "createChannel", ["id": "chat", "name": "Chat"])).answer == .resolve(nil))
        #expect(s.answer(Self.call("LocalNotifications", "createChannel", ["id": "news", "name": "News 2"])).answer == .resolve(nil))
        #expect(s.answer(Self.call("LocalNotifications", "listChannels")).answer
                == .resolve(["channels": [["id": "chat", "name": "Chat"], ["id": "news", "name": "News 2"]]]))
        // Each plugin has its own channels.
        #expect(s.answer(Self.call("PushNotifications", "listChannels")).answer == .resolve(["channels": []]))
        #expect(s.answer(Self.call("LocalNotifications", "deleteChannel", ["id": "chat"])).answer == .resolve(nil))
        #expect(s.answer(Self.call("LocalNotifications", "listChannels")).answer == .resolve(["channels": [["id": "news", "name": "News 2"]]]))
        if case .reject(let e) = s.answer(Self.call("LocalNotifications", "createChannel", ["name": "x"])).answer {
            #expect(e.message == "Channel missing identifier")
        } else {
            Issue.record("a channel without id was not refused")
        }
        for (plugin, method) in [("LocalNotifications", "getPending"), ("LocalNotifications", "getDeliveredNotifications"),
                                 ("PushNotifications", "getDeliveredNotifications")] {
            #expect(s.answer(Self.call(plugin, method)).answer == .resolve(["notifications": []]), "\(plugin).\(method)")
        }
        for (plugin, method) in [("LocalNotifications", "cancel"), ("LocalNotifications", "registerActionTypes"),
                                 ("PushNotifications", "removeAllDeliveredNotifications"), ("PushNotifications", "unregister")] {
            #expect(s.answer(Self.call(plugin, method)).answer == .resolve(nil), "\(plugin).\(method)")
        }
        // The user's and the server's part: the controller's.
        for (plugin, method) in [("LocalNotifications", "requestPermissions"), ("LocalNotifications", "schedule"),
                                 ("PushNotifications", "register"), ("PushNotifications", "requestPermissions")] {
            guard case .needsController = s.answer(Self.call(plugin, method)).answer else {
                Issue.record("\(plugin).\(method) was answered without a controller")
                continue
            }
        }
        // A mock still comes first; on iOS the channels do not exist.
        _ = s.mocks.add(CapacitorMock(plugin: "LocalNotifications", method: "listChannels", reply: .result(["channels": [["id": "mocked"]]])))
        #expect(s.answer(Self.call("LocalNotifications", "listChannels")).answer == .resolve(["channels": [["id": "mocked"]]]))
        var ios = Self.store(.ios)
        if case .reject(let e) = ios.answer(Self.call("LocalNotifications", "createChannel", ["id": "news"])).answer {
            #expect(e.code == CapacitorError.unimplementedCode)
        } else {
            Issue.record("iOS has no channels")
        }
    }

    @Test func deviceInfoPerPlatform() throws {
        var android = Self.store(.android)
        let aValue = android.answer(Self.call("Device", "getInfo")).answer.data
        let a = try #require(aValue)
        #expect(a["platform"] == "android" && a["operatingSystem"] == "android" && a["androidSDKVersion"] == 34 && a["iOSVersion"] == nil)
        #expect(a["isVirtual"] == false && a["manufacturer"] == "Google")
        var ios = Self.store(.ios)
        let iValue = ios.answer(Self.call("Device", "getInfo")).answer.data
        let i = try #require(iValue)
        #expect(i["platform"] == "ios" && i["iOSVersion"] == 170_500 && i["androidSDKVersion"] == nil)
    }

    @Test func preferencesSurviveAndStorageSharesThem() {
        var s = Self.store()
        #expect(s.answer(Self.call("Preferences", "set", ["key": "visits", "value": "1"])).answer == .resolve(nil))
        #expect(s.answer(Self.call("Preferences", "set", ["key": "name", "value": "Ann"])).answer == .resolve(nil))
        s.pageStarted() // a reload
        #expect(s.answer(Self.call("Preferences", "get", ["key": "visits"])).answer == .resolve(["value": "1"]))
        #expect(s.answer(Self.call("Storage", "get", ["key": "name"])).answer == .resolve(["value": "Ann"]))
        #expect(s.answer(Self.call("Preferences", "keys")).answer == .resolve(["keys": ["visits", "name"]]))
        _ = s.answer(Self.call("Preferences", "remove", ["key": "visits"]))
        #expect(s.answer(Self.call("Preferences", "keys")).answer == .resolve(["keys": ["name"]]))
        _ = s.answer(Self.call("Preferences", "configure", ["group": "Other"]))
        #expect(s.answer(Self.call("Preferences", "get", ["key": "name"])).answer == .resolve(["value": nil]))
        _ = s.answer(Self.call("Preferences", "configure", [:]))
        _ = s.answer(Self.call("Preferences", "clear"))
        #expect(s.answer(Self.call("Preferences", "keys")).answer == .resolve(["keys": []]))
    }

    @Test func clipboardAndState() {
        var s = Self.store(.ios)
        _ = s.answer(Self.call("Clipboard", "write", ["string": "hello"]))
        #expect(s.answer(Self.call("Clipboard", "read")).answer == .resolve(["value": "hello", "type": "text/plain"]))
        _ = s.answer(Self.call("Clipboard", "write", ["image": "data:image/png;base64,AA=="]))
        #expect(s.answer(Self.call("Clipboard", "read")).answer == .resolve(["value": "data:image/png;base64,AA==", "type": "image/png"]))
        _ = s.answer(Self.call("TextZoom", "getPreferred"))
        var a = Self.store(.android)
        _ = a.answer(Self.call("TextZoom", "set", ["value": 1.5]))
        #expect(a.answer(Self.call("TextZoom", "get")).answer == .resolve(["value": 1.5]))
        _ = a.answer(Self.call("StatusBar", "setStyle", ["style": "DARK"]))
        #expect(a.answer(Self.call("StatusBar", "getInfo")).answer.data?["style"] == "DARK")
    }

    @Test func screenOrientationLock() {
        var s = Self.store(.android)
        _ = s.answer(Self.call("ScreenOrientation", "addListener", ["eventName": "screenOrientationChange"], id: "8", save: true))
        let locked = s.answer(Self.call("ScreenOrientation", "lock", ["orientation": "landscape"]))
        #expect(locked.answer == .resolve(nil))
        #expect(locked.events.map(\.params) == [["callbackId": "8", "plugin": "ScreenOrientation", "method": "addListener",
                                                 "success": true, "data": ["type": "landscape-primary"], "save": true]])
        #expect(s.answer(Self.call("ScreenOrientation", "lock", ["orientation": "landscape-primary"])).events.isEmpty, "no change")
        #expect(s.answer(Self.call("ScreenOrientation", "orientation")).answer == .resolve(["type": "landscape-primary"]))
    }

    @Test func effects() {
        var s = Self.store(.android)
        #expect(s.answer(Self.call("App", "exitApp")).effects == [.exitApp])
        #expect(s.answer(Self.call("App", "minimizeApp")).effects == [.minimizeApp])
        let launch = s.answer(Self.call("AppLauncher", "openUrl", ["url": "https://x.test/"]))
        #expect(launch.answer == .resolve(["completed": true]) && launch.effects == [.openExternal(url: "https://x.test/")])
    }

    // MARK: - unavailable plugins, mocks, held calls

    @Test func pluginNotInTheList() throws {
        var s = Self.store(.android, plugins: ["App", "Preferences"])
        let reported = CapacitorCall(callbackId: nil, plugin: "Geolocation", method: "getCurrentPosition", unavailable: true)
        let outcome = s.answer(reported)
        #expect(outcome.answer == .unavailable(CapacitorError("\"Geolocation\" plugin is not implemented on android", code: "UNIMPLEMENTED")))
        #expect(outcome.result(for: reported) == nil, "the runtime already rejected it")
        // One that reached native anyway (a legacy call) is rejected the same way.
        let direct = Self.call("Camera", "getPhoto")
        let resultValue = s.answer(direct).result(for: direct)
        let result = try #require(resultValue)
        #expect(result.params == [
            "callbackId": "11", "plugin": "Camera", "method": "getPhoto", "success": false,
            "error": ["message": "\"Camera\" plugin is not implemented on android", "code": "UNIMPLEMENTED"], "save": false,
        ])
    }

    @Test func mocksInOrderThenTheDevice() throws {
        var s = Self.store(.ios)
        s.mocks.add(try CapacitorMock.parse(["plugin": "Device", "method": "getInfo", "result": ["model": "Mocked"], "times": 2]))
        s.mocks.add(try CapacitorMock.parse(["plugin": "Device", "method": "getInfo", "error": ["message": "gone", "code": "E1"]]))
        s.mocks.add(try CapacitorMock.parse(["plugin": "Camera", "method": "getPhoto", "result": ["webPath": "https://localhost/p.jpg", "format": "jpeg", "saved": false]]))
        let first = s.answer(Self.call("Device", "getInfo"))
        #expect(first.answer == .resolve(["model": "Mocked"]) && first.mocked)
        #expect(s.answer(Self.call("Device", "getInfo")).answer == .resolve(["model": "Mocked"]))
        #expect(s.answer(Self.call("Device", "getInfo")).answer == .reject(CapacitorError("gone", code: "E1")))
        #expect(s.answer(Self.call("Device", "getInfo")).answer.data?["model"] == "iPhone", "then the device again")
        #expect(s.answer(Self.call("Camera", "getPhoto")).answer.data?["format"] == "jpeg")
        #expect(s.answer(Self.call("Camera", "getPhoto")).answer == .needsController(.needsController("Camera", "getPhoto")))
        #expect(s.mocks.queue.isEmpty)
    }

    @Test func heldCallsWaitForAReply() throws {
        var s = Self.store(.android)
        s.mocks.add(try CapacitorMock.parse(["plugin": "Geolocation", "method": "watchPosition", "hold": true]))
        let watch = Self.call("Geolocation", "watchPosition", ["enableHighAccuracy": true], id: "40", save: true)
        let outcome = s.answer(watch)
        #expect(outcome.answer == .hold && outcome.result(for: watch) == nil)
        #expect(s.held["40"] == watch)
        let position: JSONValue = ["timestamp": 1, "coords": ["latitude": 48.85, "longitude": 2.35, "accuracy": 5]]
        let replyValue = s.reply(callbackId: "40", .success(position))
        let reply = try #require(replyValue)
        #expect(reply.params == ["callbackId": "40", "plugin": "Geolocation", "method": "watchPosition", "success": true, "data": position, "save": true])
        let again = s.reply(callbackId: "40", .failure(CapacitorError("Position unavailable")))
        #expect(again?.params["error"] == ["message": "Position unavailable"], "a watch stays held")
        #expect(s.answer(Self.call("Geolocation", "clearWatch", ["id": "40"], id: "45")).answer == .resolve(nil))
        #expect(s.reply(callbackId: "40", .success(nil)) == nil, "cleared")
        s.mocks.add(try CapacitorMock.parse(["plugin": "Dialog", "method": "prompt", "hold": true]))
        _ = s.answer(Self.call("Dialog", "prompt", id: "46"))
        #expect(s.reply(callbackId: "46", .success(["value": "x", "cancelled": false])) != nil)
        #expect(s.reply(callbackId: "46", .success(nil)) == nil, "a promise is answered once")
        // A new page drops what the old one held.
        s.mocks.add(try CapacitorMock.parse(["plugin": "Dialog", "method": "confirm", "hold": true]))
        _ = s.answer(Self.call("Dialog", "confirm", id: "41"))
        #expect(s.pageStarted().map(\.callbackId) == ["41"])
        #expect(s.held.isEmpty)
    }

    @Test(arguments: [
        ([:], "capacitor.mock needs plugin (a JS name)", "plugin"),
        (["plugin": "App"], "capacitor.mock needs method", "method"),
        (["plugin": "App", "method": "getInfo"], "capacitor.mock takes one of result, error or hold: true", "result"),
        (["plugin": "App", "method": "getInfo", "result": [:], "error": "x"], "capacitor.mock takes one of result, error or hold: true", "result"),
        (["plugin": "App", "method": "getInfo", "error": 3], "error must be {message, code?, data?} or a message", "error"),
        (["plugin": "App", "method": "getInfo", "result": [:], "times": 0], "times must be an integer from 1 to 10000", "times"),
    ] as [(JSONObject, String, String?)])
    func mockRefused(_ params: JSONObject, _ message: String, _ param: String?) {
        #expect(throws: CapacitorConfigurationError(message, param: param)) { try CapacitorMock.parse(params) }
    }

    @Test func replyAndEmitParams() throws {
        let ok = try CapacitorControl.reply(["callbackId": "40", "data": ["value": "x"]])
        #expect(ok.callbackId == "40" && ok.outcome == .success(["value": "x"]))
        #expect(try CapacitorControl.reply(["callbackId": 7]).outcome == .success(nil))
        #expect(try CapacitorControl.reply(["callbackId": "7", "error": "denied"]).outcome == .failure(CapacitorError("denied")))
        #expect(throws: CapacitorConfigurationError("capacitor.reply needs callbackId (the held call's)", param: "callbackId")) {
            try CapacitorControl.reply(["data": [:]])
        }
        #expect(throws: CapacitorConfigurationError("capacitor.reply takes data or error, not both", param: "error")) {
            try CapacitorControl.reply(["callbackId": "1", "data": [:], "error": "x"])
        }
        let e = try CapacitorControl.emit(["plugin": "Network", "event": "networkStatusChange", "data": ["connected": false]])
        #expect(e.plugin == "Network" && e.event == "networkStatusChange" && e.data == ["connected": false])
        #expect(try CapacitorControl.emit(["plugin": "App", "event": "pause"]).data == nil)
        #expect(throws: CapacitorConfigurationError("capacitor.emit needs event", param: "event")) { try CapacitorControl.emit(["plugin": "App"]) }
    }

    @Test func mockOfABareResolve() throws {
        let m = try CapacitorMock.parse(["plugin": "Haptics", "method": "vibrate", "result": nil])
        #expect(m.reply == .result(nil) && m.times == 1)
    }

    // MARK: - listeners and events

    @Test func listenersGetEmitsUntilRemovedOrReload() throws {
        var s = Self.store(.android)
        #expect(s.answer(Self.call("Network", "addListener", ["eventName": "networkStatusChange"], id: "20", save: true)).answer == .none)
        #expect(s.answer(Self.call("Network", "addListener", ["eventName": "networkStatusChange"], id: "21", save: true)).answer == .none)
        let data: JSONValue = ["connected": false, "connectionType": "none"]
        let eventsValue = s.emit(plugin: "Network", event: "networkStatusChange", data: data)
        let events = try #require(eventsValue)
        #expect(events.map(\.name) == ["capacitor.result", "capacitor.result"])
        #expect(events[0].params == ["callbackId": "20", "plugin": "Network", "method": "addListener", "success": true, "data": data, "save": true])
        #expect(s.answer(Self.call("Network", "getStatus")).answer == .resolve(data), "getStatus follows the emit")
        _ = s.answer(Self.call("Network", "removeListener", ["eventName": "networkStatusChange", "callbackId": "20"], id: "22", save: true))
        #expect(s.emit(plugin: "Network", event: "networkStatusChange", data: data)?.count == 1)
        s.pageStarted()
        #expect(s.emit(plugin: "Network", event: "networkStatusChange", data: data) == [])
        #expect(s.emit(plugin: "Nope", event: "x", data: nil) == nil, "no such plugin in the session")
    }

    @Test func keyboardAndMotionEventsReachTheDOM() throws {
        var s = Self.store(.ios)
        _ = s.answer(Self.call("Keyboard", "addListener", ["eventName": "keyboardWillShow"], id: "5", save: true))
        let eventsValue = s.emit(plugin: "Keyboard", event: "keyboardWillShow", data: ["keyboardHeight": 336])
        let events = try #require(eventsValue)
        #expect(events.count == 2)
        #expect(events[1] == .trigger(eventName: "keyboardWillShow", target: "window", data: ["keyboardHeight": 336]))
        let motionValue = s.emit(plugin: "Motion", event: "accel", data: ["acceleration": ["x": 0, "y": 0, "z": 9.8]])
        let motion = try #require(motionValue)
        #expect(motion == [.trigger(eventName: "devicemotion", target: "window", data: ["acceleration": ["x": 0, "y": 0, "z": 9.8]])])
    }

    @Test func retainedEventsWaitForTheFirstListener() throws {
        var cold = Self.store(.android, launchUrl: "myapp://item/7")
        #expect(cold.answer(Self.call("App", "getLaunchUrl")).answer == .resolve(["url": "myapp://item/7"]))
        let outcome = cold.answer(Self.call("App", "addListener", ["eventName": "appUrlOpen"], id: "9", save: true))
        #expect(outcome.answer == .none)
        let call = Self.call("App", "addListener", ["eventName": "appUrlOpen"], id: "9", save: true)
        #expect(outcome.pageEvents(for: call) == [.result(CapacitorResult(callbackId: "9", plugin: "App", method: "addListener",
                                                                            outcome: .success(["url": "myapp://item/7"]), save: true))])
        #expect(cold.retained.isEmpty)
        // A deep link while running: to the listener at once.
        #expect(cold.openUrl("myapp://item/8").count == 1)
        // iOS: getLaunchUrl is the last URL that opened the app; Android keeps the launch URL.
        var ios = Self.store(.ios)
        #expect(ios.openUrl("myapp://later").isEmpty, "kept: nobody listens yet")
        #expect(ios.answer(Self.call("App", "getLaunchUrl")).answer == .resolve(["url": "myapp://later"]))
        #expect(ios.retained.count == 1)
        #expect(cold.answer(Self.call("App", "getLaunchUrl")).answer == .resolve(["url": "myapp://item/7"]))
    }

    // MARK: - native navigation and lifecycle

    @Test func backOnAndroid() throws {
        var s = Self.store(.android)
        #expect(s.back(canGoBack: true) == .goBack)
        #expect(s.back(canGoBack: false) == .nothing)
        _ = s.answer(Self.call("App", "addListener", ["eventName": "backButton"], id: "3", save: true))
        guard case .notify(let events) = s.back(canGoBack: false) else {
            Issue.record("no notify")
            return
        }
        #expect(events == [
            .result(CapacitorResult(callbackId: "3", plugin: "App", method: "addListener", outcome: .success(["canGoBack": false]), save: true)),
            .trigger(eventName: "backbutton", target: "document", data: [:]),
        ])
        _ = s.answer(Self.call("App", "toggleBackButtonHandler", ["enabled": false]))
        #expect(s.back(canGoBack: true) == .leaveApp)
        var noApp = Self.store(.android, plugins: ["Preferences"])
        #expect(noApp.back(canGoBack: true) == .leaveApp)
    }

    @Test func backOnIOSAndTheInAppBrowser() {
        var ios = Self.store(.ios)
        _ = ios.answer(Self.call("App", "addListener", ["eventName": "backButton"], id: "3", save: true))
        #expect(ios.back(canGoBack: true) == .refused("iOS has no back button"))
        _ = ios.answer(Self.call("Browser", "addListener", ["eventName": "browserFinished"], id: "4", save: true))
        _ = ios.answer(Self.call("Browser", "addListener", ["eventName": "browserPageLoaded"], id: "5", save: true))
        let open = ios.answer(Self.call("Browser", "open", ["url": "https://ionic.io/"]))
        #expect(open.answer == .resolve(nil) && open.effects == [.openBrowser(url: "https://ionic.io/")])
        #expect(ios.browserLoaded().map(\.params) == [["callbackId": "5", "plugin": "Browser", "method": "addListener", "success": true, "save": true]])
        #expect(ios.back(canGoBack: false) == .closeBrowser)
        #expect(ios.browserClosed().map(\.params) == [["callbackId": "4", "plugin": "Browser", "method": "addListener", "success": true, "save": true]])
        #expect(ios.browserClosed().isEmpty, "once")
        _ = ios.answer(Self.call("Browser", "open", ["url": "https://ionic.io/"]))
        #expect(ios.answer(Self.call("Browser", "close")).effects == [.closeBrowser])
    }

    @Test(arguments: [CapacitorPlatform.android, .ios])
    func pauseAndResume(_ platform: CapacitorPlatform) {
        var s = Self.store(platform)
        for (id, event) in [("1", "appStateChange"), ("2", "pause"), ("3", "resume")] {
            _ = s.answer(Self.call("App", "addListener", ["eventName": .string(event)], id: id, save: true))
        }
        func names(_ events: [CapacitorPageEvent]) -> [String] {
            events.map { e in
                switch e {
                case .result(let r): return "\(r.callbackId):\(r.outcome == .success(nil) ? "-" : (r.params["data"]?.jsonString ?? ""))"
                case .trigger(let name, let target, _): return "\(target).\(name)"
                }
            }
        }
        #expect(s.resume().isEmpty, "already active")
        let paused = names(s.pause())
        let resumed = names(s.resume())
        switch platform {
        case .android:
            #expect(paused == ["2:-", "document.pause", "1:{\"isActive\":false}"])
            #expect(resumed == ["1:{\"isActive\":true}", "3:-", "document.resume"])
        case .ios:
            #expect(paused == ["1:{\"isActive\":false}", "2:-", "document.pause"])
            #expect(resumed == ["3:-", "document.resume", "1:{\"isActive\":true}"])
        }
        #expect(s.answer(Self.call("App", "getState")).answer == .resolve(["isActive": true]))
        #expect(s.pause().count == 3 && s.pause().isEmpty, "once")
    }

    // MARK: - the wire

    @Test func callParams() throws {
        let c = try #require(CapacitorCall(params: ["callbackId": "77", "plugin": "App", "method": "getInfo", "options": [:], "save": false]))
        #expect(c == Self.call("App", "getInfo", id: "77"))
        #expect(c.params == ["callbackId": "77", "plugin": "App", "method": "getInfo", "options": [:], "save": false])
        let u = try #require(CapacitorCall(params: ["callbackId": nil, "plugin": "Camera", "method": "getPhoto", "unavailable": true]))
        #expect(u.callbackId == nil && u.unavailable && !u.isAnswerable)
        #expect(CapacitorCall(params: ["plugin": "App"]) == nil)
        #expect(!Self.call("App", "exitApp", id: "-1").isAnswerable)
    }
}

extension CapacitorAnswer {
    /// The data of a `.resolve`.
    var data: JSONValue? {
        if case .resolve(let d) = self { return d }
        return nil
    }
}
