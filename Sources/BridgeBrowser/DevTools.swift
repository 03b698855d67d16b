import BridgeProtocol
import Foundation

// The DevTools protocol as the host uses it, typed in one place: the ids Chromium hands out, the
// methods the host calls (with their params), and the events it decodes. Nothing else in the
// browser layer writes a method's or an event's name.

// (`TargetID` and `BrowserContextID`, Chromium's ids of a tab and of a browser context, are in
// BridgeProtocol (BridgeInput.swift): the host's results carry them.)

/// The id of a DevTools session attached to a target (`Target.attachToTarget {flatten: true}`):
/// the `sessionId` a page's commands and events carry.
public struct CDPSessionID: Hashable, Sendable, CustomStringConvertible, ExpressibleByStringLiteral {
    public var rawValue: String
    public init(_ rawValue: String) { self.rawValue = rawValue }
    public init(stringLiteral value: String) { rawValue = value }
    public var description: String { rawValue }
}

/// The DevTools methods the host calls.
enum DevToolsMethod: String, Sendable {
    case browserGetVersion = "Browser.getVersion"
    case browserClose = "Browser.close"
    case browserCancelDownload = "Browser.cancelDownload"
    case browserSetDownloadBehavior = "Browser.setDownloadBehavior"
    case browserSetPermission = "Browser.setPermission"
    case targetSetDiscoverTargets = "Target.setDiscoverTargets"
    case targetCreateBrowserContext = "Target.createBrowserContext"
    case targetDisposeBrowserContext = "Target.disposeBrowserContext"
    case targetCreateTarget = "Target.createTarget"
    case targetAttachToTarget = "Target.attachToTarget"
    case targetCloseTarget = "Target.closeTarget"
    case pageEnable = "Page.enable"
    case pageNavigate = "Page.navigate"
    case pageReload = "Page.reload"
    case pageStopLoading = "Page.stopLoading"
    case pageBringToFront = "Page.bringToFront"
    case pageCaptureScreenshot = "Page.captureScreenshot"
    case pageAddScriptToEvaluateOnNewDocument = "Page.addScriptToEvaluateOnNewDocument"
    case pageRemoveScriptToEvaluateOnNewDocument = "Page.removeScriptToEvaluateOnNewDocument"
    case pageSetLifecycleEventsEnabled = "Page.setLifecycleEventsEnabled"
    case pageSetInterceptFileChooserDialog = "Page.setInterceptFileChooserDialog"
    case pageHandleJavaScriptDialog = "Page.handleJavaScriptDialog"
    case pageGetNavigationHistory = "Page.getNavigationHistory"
    case pageNavigateToHistoryEntry = "Page.navigateToHistoryEntry"
    case fetchEnable = "Fetch.enable"
    case fetchContinueRequest = "Fetch.continueRequest"
    case fetchFailRequest = "Fetch.failRequest"
    case fetchFulfillRequest = "Fetch.fulfillRequest"
    case fetchGetRequestPostData = "Fetch.getRequestPostData"
    case runtimeEvaluate = "Runtime.evaluate"
    case networkEnable = "Network.enable"
    case networkDisable = "Network.disable"
    case networkSetBypassServiceWorker = "Network.setBypassServiceWorker"
    case networkLoadNetworkResource = "Network.loadNetworkResource"
    case emulationSetUserAgentOverride = "Emulation.setUserAgentOverride"
    case emulationSetDeviceMetricsOverride = "Emulation.setDeviceMetricsOverride"
    case emulationSetTouchEmulationEnabled = "Emulation.setTouchEmulationEnabled"
    case emulationSetGeolocationOverride = "Emulation.setGeolocationOverride"
    case inputDispatchMouseEvent = "Input.dispatchMouseEvent"
    case inputInsertText = "Input.insertText"
    case domDescribeNode = "DOM.describeNode"
    case domSetFileInputFiles = "DOM.setFileInputFiles"
    case ioRead = "IO.read"
    case ioClose = "IO.close"
}

/// One DevTools command: a method and its params (what `CDPConnection` sends).
struct DevToolsCall: Sendable, Equatable, CustomStringConvertible {
    var method: DevToolsMethod
    var params: JSONObject = [:]

    init(_ method: DevToolsMethod, _ params: JSONObject = [:]) {
        self.method = method
        self.params = params
    }

    var description: String { method.rawValue }

    // MARK: the browser

    static let getVersion = DevToolsCall(.browserGetVersion)
    static let close = DevToolsCall(.browserClose)
    static let discoverTargets = DevToolsCall(.targetSetDiscoverTargets, ["discover": true])
    static let createBrowserContext = DevToolsCall(.targetCreateBrowserContext, ["disposeOnDetach": true])
    static func disposeBrowserContext(_ id: BrowserContextID) -> DevToolsCall {
        DevToolsCall(.targetDisposeBrowserContext, ["browserContextId": .string(id.rawValue)])
    }
    /// A tab on `about:blank` in `context` (`background`: it does not come to the front).
    static func createTarget(context: BrowserContextID, background: Bool = false) -> DevToolsCall {
        var params: JSONObject = ["url": "about:blank", "browserContextId": .string(context.rawValue)]
        if background { params["background"] = true }
        return DevToolsCall(.targetCreateTarget, params)
    }
    static func attachToTarget(_ id: TargetID) -> DevToolsCall {
        DevToolsCall(.targetAttachToTarget, ["targetId": .string(id.rawValue), "flatten": true])
    }
    static func closeTarget(_ id: TargetID) -> DevToolsCall { DevToolsCall(.targetCloseTarget, ["targetId": .string(id.rawValue)]) }
    static func cancelDownload(guid: String, context: BrowserContextID?) -> DevToolsCall {
        var params: JSONObject = ["guid": .string(guid)]
        if let context { params["browserContextId"] = .string(context.rawValue) }
        return DevToolsCall(.browserCancelDownload, params)
    }

    // MARK: a page

    static let pageEnable = DevToolsCall(.pageEnable)
    static let stopLoading = DevToolsCall(.pageStopLoading)
    static let bringToFront = DevToolsCall(.pageBringToFront)
    static let reload = DevToolsCall(.pageReload)
    static let navigationHistory = DevToolsCall(.pageGetNavigationHistory)
    static let networkEnable = DevToolsCall(.networkEnable)
    static let networkDisable = DevToolsCall(.networkDisable)
    static func navigate(_ url: String) -> DevToolsCall { DevToolsCall(.pageNavigate, ["url": .string(url)]) }
    static func addScript(_ source: String) -> DevToolsCall {
        DevToolsCall(.pageAddScriptToEvaluateOnNewDocument, ["source": .string(source), "runImmediately": true])
    }
    static func removeScript(_ identifier: String) -> DevToolsCall {
        DevToolsCall(.pageRemoveScriptToEvaluateOnNewDocument, ["identifier": .string(identifier)])
    }
    static func handleDialog(accept: Bool, text: String? = nil) -> DevToolsCall {
        var params: JSONObject = ["accept": .bool(accept)]
        if let text { params["promptText"] = .string(text) }
        return DevToolsCall(.pageHandleJavaScriptDialog, params)
    }
    static func evaluate(_ expression: String, returnByValue: Bool = false, awaitPromise: Bool = false, userGesture: Bool = false) -> DevToolsCall {
        var params: JSONObject = ["expression": .string(expression)]
        if returnByValue { params["returnByValue"] = true }
        if awaitPromise { params["awaitPromise"] = true }
        if userGesture { params["userGesture"] = true }
        return DevToolsCall(.runtimeEvaluate, params)
    }

    // MARK: the request interception

    static func continueRequest(_ requestId: String) -> DevToolsCall { DevToolsCall(.fetchContinueRequest, ["requestId": .string(requestId)]) }
    /// `reason`: Chromium's `errorReason` (`Aborted`: the page stays where it was; `Failed`).
    static func failRequest(_ requestId: String, reason: String = "Aborted") -> DevToolsCall {
        DevToolsCall(.fetchFailRequest, ["requestId": .string(requestId), "errorReason": .string(reason)])
    }
    static func getRequestPostData(_ requestId: String) -> DevToolsCall {
        DevToolsCall(.fetchGetRequestPostData, ["requestId": .string(requestId)])
    }
}

/// What a `Target.targetCreated` / `targetInfoChanged` says of a target.
struct TargetInfo: Sendable, Equatable {
    var targetId: TargetID
    var type: String
    var url: String
    var openerId: TargetID?
}

/// A `Fetch.requestPaused`: a request of a tab waiting for the host's word.
struct PausedRequest: Sendable, Equatable {
    var requestId: String
    var frameId: String?
    var resourceType: String?
    var url: String
    var method: String
    var headers: JSONObject
    var hasPostData: Bool
    var postData: String?
}

/// The DevTools events the host acts on, decoded (`init(method:params:)`); `other` for the rest.
enum DevToolsEvent: Sendable, Equatable {
    // A page's
    case frameStartedNavigating(frameId: String?, url: String?, navigationType: String?)
    case frameRequestedNavigation(frameId: String?, url: String?, reason: String?, disposition: String?)
    case requestPaused(PausedRequest)
    case navigatedWithinDocument(frameId: String?, url: String?)
    case frameNavigated(frameId: String?, isMainFrame: Bool, url: String?, unreachableUrl: String?)
    case requestWillBeSent(requestId: String?, type: String?, frameId: String?)
    case loadingFailed(requestId: String?, errorText: String?)
    case loadEventFired
    case dialogOpening(type: String?, message: String, defaultPrompt: String, url: String)
    case dialogClosed(accepted: Bool, userInput: String)
    case fileChooserOpened(backendNodeId: Int64?, multiple: Bool)
    case inspectorTargetCrashed
    // The browser's
    case targetCreated(TargetInfo)
    case targetInfoChanged(TargetInfo)
    case targetDestroyed(TargetID)
    case targetCrashed(TargetID, status: String?, errorCode: Int64?)
    /// A DevTools session ended (its target closed): `CDPConnection` fails the calls sent on it.
    case detachedFromTarget(CDPSessionID)
    case downloadWillBegin(guid: String?, frameId: String?, url: String, suggestedFilename: String)
    case other(String)

    static let detachedFromTargetMethod = "Target.detachedFromTarget"

    init(method: String, params p: JSONValue) {
        switch method {
        case "Page.frameStartedNavigating":
            self = .frameStartedNavigating(frameId: p["frameId"]?.stringValue, url: p["url"]?.stringValue,
                                           navigationType: p["navigationType"]?.stringValue)
        case "Page.frameRequestedNavigation":
            self = .frameRequestedNavigation(frameId: p["frameId"]?.stringValue, url: p["url"]?.stringValue,
                                             reason: p["reason"]?.stringValue, disposition: p["disposition"]?.stringValue)
        case "Fetch.requestPaused":
            guard let requestId = p["requestId"]?.stringValue else { self = .other(method); return }
            let request = p["request"]
            self = .requestPaused(PausedRequest(
                requestId: requestId, frameId: p["frameId"]?.stringValue, resourceType: p["resourceType"]?.stringValue,
                url: request?["url"]?.stringValue ?? "", method: request?["method"]?.stringValue ?? "GET",
                headers: request?["headers"]?.objectValue ?? JSONObject(), hasPostData: request?["hasPostData"]?.boolValue == true,
                postData: request?["postData"]?.stringValue))
        case "Page.navigatedWithinDocument":
            self = .navigatedWithinDocument(frameId: p["frameId"]?.stringValue, url: p["url"]?.stringValue)
        case "Page.frameNavigated":
            let frame = p["frame"]
            self = .frameNavigated(frameId: frame?["id"]?.stringValue, isMainFrame: frame != nil && frame?["parentId"] == nil,
                                   url: frame?["url"]?.stringValue, unreachableUrl: frame?["unreachableUrl"]?.stringValue)
        case "Network.requestWillBeSent":
            self = .requestWillBeSent(requestId: p["requestId"]?.stringValue, type: p["type"]?.stringValue, frameId: p["frameId"]?.stringValue)
        case "Network.loadingFailed":
            self = .loadingFailed(requestId: p["requestId"]?.stringValue, errorText: p["errorText"]?.stringValue)
        case "Page.loadEventFired":
            self = .loadEventFired
        case "Page.javascriptDialogOpening":
            self = .dialogOpening(type: p["type"]?.stringValue, message: p["message"]?.stringValue ?? "",
                                  defaultPrompt: p["defaultPrompt"]?.stringValue ?? "", url: p["url"]?.stringValue ?? "")
        case "Page.javascriptDialogClosed":
            self = .dialogClosed(accepted: p["result"]?.boolValue ?? false, userInput: p["userInput"]?.stringValue ?? "")
        case "Page.fileChooserOpened":
            self = .fileChooserOpened(backendNodeId: p["backendNodeId"]?.intValue, multiple: p["mode"]?.stringValue == "selectMultiple")
        case "Inspector.targetCrashed":
            self = .inspectorTargetCrashed
        case "Target.targetCreated", "Target.targetInfoChanged":
            guard let info = p["targetInfo"], let id = info["targetId"]?.stringValue else { self = .other(method); return }
            let target = TargetInfo(targetId: TargetID(id), type: info["type"]?.stringValue ?? "", url: info["url"]?.stringValue ?? "",
                                    openerId: info["openerId"]?.stringValue.map(TargetID.init(_:)))
            self = method == "Target.targetCreated" ? .targetCreated(target) : .targetInfoChanged(target)
        case "Target.targetDestroyed":
            guard let id = p["targetId"]?.stringValue else { self = .other(method); return }
            self = .targetDestroyed(TargetID(id))
        case "Target.targetCrashed":
            guard let id = p["targetId"]?.stringValue else { self = .other(method); return }
            self = .targetCrashed(TargetID(id), status: p["status"]?.stringValue, errorCode: p["errorCode"]?.intValue)
        case Self.detachedFromTargetMethod:
            guard let id = p["sessionId"]?.stringValue else { self = .other(method); return }
            self = .detachedFromTarget(CDPSessionID(id))
        case "Browser.downloadWillBegin":
            self = .downloadWillBegin(guid: p["guid"]?.stringValue, frameId: p["frameId"]?.stringValue, url: p["url"]?.stringValue ?? "",
                                      suggestedFilename: p["suggestedFilename"]?.stringValue ?? "")
        default:
            self = .other(method)
        }
    }
}
