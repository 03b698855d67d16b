// A capacitor session's native state: preferences, clipboard, app state, listeners, retained
// events, mocks and held calls; and the native side's own moves that are no answer to a call:
// a plugin's event (`capacitor.emit`), back, a deep link, pause/resume, the in-app browser's
// load and close (docs/CAPACITOR.md). Pure value; the daemon keeps one per session and sends
// the page events these return to the app's web view.

/// A listener the page added (`addListener {eventName}`): its callback id, plugin and event.
public struct CapacitorListener: Equatable, Sendable {
    public var callbackId: String
    public var plugin: String
    public var eventName: String
}

/// What the clipboard holds: `Clipboard.read`'s `{value, type}`.
public struct CapacitorClip: Equatable, Sendable {
    public var value: String
    public var type: String
    public init(value: String, type: String) {
        self.value = value
        self.type = type
    }
}

/// An event kept until the first listener for it is added (`retainUntilConsumed`).
public struct CapacitorRetainedEvent: Equatable, Sendable {
    public var plugin: String
    public var event: String
    public var data: JSONValue?
}

/// What `navigation.back` does in a capacitor session.
public enum CapacitorBack: Equatable, Sendable {
    /// An in-app browser is shown: close it (its tab), then `browserClosed()`.
    case closeBrowser
    /// iOS: the platform has no back button.
    case refused(String)
    /// Android with an App `backButton` listener: these events go to the page; no history change.
    case notify([CapacitorPageEvent])
    /// Android without a listener: the web view goes back in its history.
    case goBack
    /// Android without a listener at the web view's first entry: nothing happens.
    case nothing
    /// Android without App's back handling (no App plugin, or `toggleBackButtonHandler
    /// {enabled: false}`): the activity's default, the app leaves the screen (the session goes
    /// to the background, as minimizeApp).
    case leaveApp
}

/// A capacitor session's native state.
public struct CapacitorStore: Equatable, Sendable {
    public var options: CapacitorOptions
    /// Preferences/Storage (one store for both names, as on a device): group → ordered pairs.
    public var preferences: [String: JSONObject] = [:]
    /// The group `configure {group}` chose (default `CapacitorStorage`).
    public var preferencesGroup = "CapacitorStorage"
    /// The clipboard, once something was written.
    public var clipboard: CapacitorClip?
    /// In the foreground.
    public var isActive = true
    /// Paused at least once (Android sends `resume` only after a pause).
    public var wasPaused = false
    /// The last URL that opened the app (iOS's `getLaunchUrl` answers it).
    public var lastOpenedUrl: String?
    /// The listeners of the page shown, in the order they were added.
    public var listeners: [CapacitorListener] = []
    /// Events kept until a listener for them is added.
    public var retained: [CapacitorRetainedEvent] = []
    /// `Network` status: what `getStatus` answers (a `networkStatusChange` emit updates it).
    public var network: JSONObject = ["connected": true, "connectionType": "wifi"]
    /// The in-app browser's URL while one is shown.
    public var browserURL: String?
    /// StatusBar's state (`getInfo`).
    public var statusBar: JSONObject
    public var keyboardResizeMode = "native"
    public var backButtonHandlerEnabled = true
    public var textZoom = 1.0
    /// ScreenOrientation's `type` (a lock to landscape turns it).
    public var orientation = "portrait-primary"
    /// Android's notification channels (`createChannel`), by plugin, then id, in creation order.
    public var channels: [String: [JSONObject]] = [:]
    /// Canned answers (`capacitor.mock`).
    public var mocks = CapacitorMocks()
    /// Calls a `hold` mock keeps for `capacitor.reply`, by callback id.
    public var held: [String: CapacitorCall] = [:]

    /// A cold start: a launch URL is also an `appUrlOpen` kept for the first listener.
    public init(options: CapacitorOptions) {
        self.options = options
        statusBar = [
            "visible": true, "style": "DEFAULT", "color": "#000000",
            "overlays": .bool(options.platform == .ios), "height": .int(options.platform == .ios ? 47 : 24),
        ]
        if let url = options.launchUrl {
            lastOpenedUrl = url
            if options.plugin("App") != nil { retained.append(CapacitorRetainedEvent(plugin: "App", event: "appUrlOpen", data: ["url": .string(url)])) }
        }
    }

    // MARK: - the page

    /// `capacitor.ready`: a new document in the app's web view. Native forgets the page's
    /// stored calls and listeners (retained events, preferences and the rest stay). Returns the
    /// held calls dropped with the old page.
    @discardableResult
    public mutating func pageStarted() -> [CapacitorCall] {
        listeners.removeAll()
        let dropped = held.values.sorted { ($0.callbackId ?? "") < ($1.callbackId ?? "") }
        held.removeAll()
        return dropped
    }

    /// Whether the page listens to `plugin`'s `eventName`.
    public func hasListener(_ plugin: String, _ eventName: String) -> Bool {
        listeners.contains { $0.plugin == plugin && $0.eventName == eventName }
    }

    mutating func addListener(_ call: CapacitorCall) -> [CapacitorPageEvent] {
        guard let id = call.callbackId, id != "-1", let eventName = call.options["eventName"]?.stringValue else { return [] }
        listeners.append(CapacitorListener(callbackId: id, plugin: call.plugin, eventName: eventName))
        // Events kept for the first listener go to it now.
        var events: [CapacitorPageEvent] = []
        retained.removeAll { r in
            guard r.plugin == call.plugin, r.event == eventName else { return false }
            events.append(.result(CapacitorResult(callbackId: id, plugin: call.plugin, method: "addListener", outcome: .success(r.data), save: true)))
            return true
        }
        return events
    }

    mutating func removeListener(_ call: CapacitorCall) {
        guard let id = call.options["callbackId"]?.stringValue ?? call.options["callbackId"]?.intValue.map({ String($0) }) else { return }
        listeners.removeAll { $0.plugin == call.plugin && $0.callbackId == id }
    }

    // MARK: - events (notifyListeners)

    /// `plugin`'s `event` with `data`, as native's `notifyListeners`: a `save` result for each
    /// listener; kept for later when nobody listens and the event is retained. `nil` when the
    /// session has no such plugin. Some events also change state or the DOM: Network's
    /// `networkStatusChange` becomes what `getStatus` answers; Keyboard's events are window
    /// events too (with `keyboardHeight`); Motion (no native side) becomes the DOM's
    /// `devicemotion` / `deviceorientation` its JS implementation listens to.
    public mutating func emit(plugin: String, event: String, data: JSONValue?) -> [CapacitorPageEvent]? {
        guard let spec = options.plugin(plugin) else { return nil }
        var events: [CapacitorPageEvent] = []
        switch (plugin, event) {
        case ("Network", "networkStatusChange"):
            if case .object(let o)? = data { network = o }
        case ("Motion", "accel"):
            return [.trigger(eventName: "devicemotion", target: "window", data: data?.objectValue ?? [:])]
        case ("Motion", "orientation"):
            return [.trigger(eventName: "deviceorientation", target: "window", data: data?.objectValue ?? [:])]
        default:
            break
        }
        events += notify(plugin: plugin, event: event, data: data, retain: spec.retainedEvents.contains(event))
        if plugin == "Keyboard", event.hasPrefix("keyboard") {
            var d: JSONObject = [:]
            if let h = data?["keyboardHeight"] { d["keyboardHeight"] = h }
            events.append(.trigger(eventName: event, target: "window", data: d))
        }
        return events
    }

    mutating func notify(plugin: String, event: String, data: JSONValue?, retain: Bool = false) -> [CapacitorPageEvent] {
        let targets = listeners.filter { $0.plugin == plugin && $0.eventName == event }
        if targets.isEmpty {
            if retain { retained.append(CapacitorRetainedEvent(plugin: plugin, event: event, data: data)) }
            return []
        }
        return targets.map {
            .result(CapacitorResult(callbackId: $0.callbackId, plugin: plugin, method: "addListener", outcome: .success(data), save: true))
        }
    }

    // MARK: - native navigation and lifecycle

    /// `navigation.back` with the web view's history (`canGoBack`: an entry of the app before
    /// the current one).
    public mutating func back(canGoBack: Bool) -> CapacitorBack {
        if browserURL != nil { return .closeBrowser }
        if options.platform == .ios { return .refused("iOS has no back button") }
        guard options.plugin("App") != nil, backButtonHandlerEnabled else { return .leaveApp }
        if hasListener("App", "backButton") {
            var events = notify(plugin: "App", event: "backButton", data: ["canGoBack": .bool(canGoBack)])
            events.append(.trigger(eventName: "backbutton", target: "document", data: [:]))
            return .notify(events)
        }
        return canGoBack ? .goBack : .nothing
    }

    /// `navigation.openUrl {url}`: a deep link while the app runs: App `appUrlOpen {url}`
    /// (kept for the first listener when none listens yet).
    public mutating func openUrl(_ url: String) -> [CapacitorPageEvent] {
        lastOpenedUrl = url
        guard options.plugin("App") != nil else { return [] }
        return notify(plugin: "App", event: "appUrlOpen", data: ["url": .string(url)], retain: true)
    }

    /// `app.pause` (and minimizeApp): the app leaves the foreground. Android: App `pause`, the
    /// document's `pause` (onPause), then `appStateChange {isActive: false}` (onStop); iOS:
    /// `appStateChange` (willResignActive), then `pause` and the document's (didEnterBackground).
    /// Nothing when already paused.
    public mutating func pause() -> [CapacitorPageEvent] {
        guard isActive else { return [] }
        isActive = false
        wasPaused = true
        let hasApp = options.plugin("App") != nil
        let state: [CapacitorPageEvent] = hasApp ? notify(plugin: "App", event: "appStateChange", data: ["isActive": false]) : []
        var paused: [CapacitorPageEvent] = hasApp ? notify(plugin: "App", event: "pause", data: nil) : []
        paused.append(.trigger(eventName: "pause", target: "document", data: [:]))
        return options.platform == .android ? paused + state : state + paused
    }

    /// `app.resume`: back to the foreground. Android: `appStateChange {isActive: true}`, then
    /// `resume` and the document's (onResume, only after a pause); iOS: `resume` and the
    /// document's (willEnterForeground), then `appStateChange` (didBecomeActive).
    public mutating func resume() -> [CapacitorPageEvent] {
        guard !isActive else { return [] }
        isActive = true
        let hasApp = options.plugin("App") != nil
        let state: [CapacitorPageEvent] = hasApp ? notify(plugin: "App", event: "appStateChange", data: ["isActive": true]) : []
        var resumed: [CapacitorPageEvent] = []
        if wasPaused {
            if hasApp { resumed += notify(plugin: "App", event: "resume", data: nil) }
            resumed.append(.trigger(eventName: "resume", target: "document", data: [:]))
        }
        return options.platform == .android ? state + resumed : resumed + state
    }

    /// The in-app browser's page loaded: `browserPageLoaded`.
    public mutating func browserLoaded() -> [CapacitorPageEvent] {
        guard browserURL != nil else { return [] }
        return notify(plugin: "Browser", event: "browserPageLoaded", data: nil)
    }

    /// The in-app browser closed (Browser.close, back, or its tab went): `browserFinished`.
    public mutating func browserClosed() -> [CapacitorPageEvent] {
        guard browserURL != nil else { return [] }
        browserURL = nil
        return notify(plugin: "Browser", event: "browserFinished", data: nil)
    }

    // MARK: - held calls

    /// `capacitor.reply {callbackId, data | error}` for a call a `hold` mock kept: its result,
    /// or `nil` when no such call waits. A `save` call (watchPosition) stays held: each reply is
    /// one more callback, until the page goes or the app clears it (`Geolocation.clearWatch`).
    public mutating func reply(callbackId: String, _ outcome: CapacitorResult.Outcome) -> CapacitorResult? {
        guard let call = held[callbackId] else { return nil }
        if !call.save { held[callbackId] = nil }
        return CapacitorResult(answering: call, outcome)
    }
}
