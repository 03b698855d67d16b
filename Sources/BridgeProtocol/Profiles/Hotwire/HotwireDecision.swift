// The values of the native side's decisions (HotwireNavigator.swift): visit actions, screens,
// visits, commands and a decision.

/// A Turbo visit action.
public enum HotwireVisitAction: String, Sendable, CaseIterable {
    case advance
    case replace
    case restore
}

/// One screen of a stack: a web screen (shown by its context's web view when on top, else a
/// snapshot with its URL and stored restoration identifier) or a native screen.
public struct HotwireScreen: Equatable, Sendable {
    /// Unique per navigator, increasing.
    public var id: Int
    public var url: String
    public var context: HotwireContext
    /// The native screen's name (`view_controller` / Android `uri`); `nil` for a web screen.
    public var nativeScreen: String?
    /// Turbo's restoration identifier of this screen's history entry, once known.
    public var restorationIdentifier: String?
    /// The HTTP status of this screen's failed visit (the error state native shows).
    public var failedStatus: Int?

    public var isWeb: Bool { nativeScreen == nil }

    public init(id: Int, url: String, context: HotwireContext, nativeScreen: String? = nil,
                restorationIdentifier: String? = nil, failedStatus: Int? = nil) {
        self.id = id
        self.url = url
        self.context = context
        self.nativeScreen = nativeScreen
        self.restorationIdentifier = restorationIdentifier
        self.failedStatus = failedStatus
    }
}

/// A visit native asks a web view to make:
/// `turboNative.visitLocationWithOptionsAndRestorationIdentifier(url, {action, response?}, id)`,
/// or, for a cold boot, a document load of `url`.
public struct HotwireVisit: Equatable, Sendable {
    public var context: HotwireContext
    /// The screen the visit is for.
    public var screen: Int
    public var url: String
    public var action: HotwireVisitAction
    public var restorationIdentifier: String?
    /// The proposal's `options.response` (`{statusCode, redirected, responseHTML}`), passed on.
    public var response: JSONValue?
    /// The context's web view has no document yet (or must reload): load `url` as a document.
    public var coldBoot: Bool

    public init(context: HotwireContext, screen: Int, url: String, action: HotwireVisitAction,
                restorationIdentifier: String? = nil, response: JSONValue? = nil, coldBoot: Bool = false) {
        self.context = context
        self.screen = screen
        self.url = url
        self.action = action
        self.restorationIdentifier = restorationIdentifier
        self.response = response
        self.coldBoot = coldBoot
    }

    /// The `options` object of the JS call: `{action}` plus `response` when the proposal had one.
    public var options: JSONValue {
        var object: JSONObject = ["action": .string(action.rawValue)]
        if let response { object["response"] = response }
        return .object(object)
    }
}

/// What the web views (and the host) are asked to do, in order.
public enum HotwireCommand: Equatable, Sendable {
    case visit(HotwireVisit)
    /// `turboNative.cacheSnapshot()` in the context's web view (its screen is being covered).
    case cacheSnapshot(HotwireContext)
    /// `turboNative.clearSnapshotCache()` in the context's web view (stale after a modal form).
    case clearSnapshotCache(HotwireContext)
    /// Another host: open it outside the app (`external.open`); the stacks do not change.
    case openExternal(String)
    /// Android: the context's web view shows its top web screen again after a native screen
    /// over it went, still on that screen's visit: no visit, `turboNative.restoreCurrentVisit()`
    /// (the DOM event `native:restore`, on which bridge components connect again), as
    /// hotwire-native-android's `Session.restoreCurrentVisit` does.
    case restoreCurrentVisit(HotwireContext)
}

/// What one proposal or back did.
public struct HotwireDecision: Equatable, Sendable {
    /// The presentation the path configuration gave (`default`, `modal`… see `outcome`).
    public var presentation: HotwirePresentation
    /// What happened, in order: `redirect-pop`, `dismiss`, `present`, `push`, `pop`, `replace`,
    /// `refresh`, `clear_all`, `replace_root`, `none`, `external`, `back`, `rejected`.
    public var outcome: [String]
    public var commands: [HotwireCommand]
    /// The stacks changed (a `stack.changed` is due).
    public var changed: Bool
    /// Set when the proposal is refused (Android: `context: modal` with `replace_root`).
    public var error: String?

    /// The `cause` of the `stack.changed` this decision causes: `hotwire:<presentation>:<outcome…>`.
    public var cause: String {
        "hotwire:" + presentation.rawValue + ":" + (outcome.isEmpty ? "none" : outcome.joined(separator: "+"))
    }

    public var visits: [HotwireVisit] {
        commands.compactMap { if case .visit(let v) = $0 { return v } else { return nil } }
    }
}
