/// The name of an event controllers get (docs/PROTOCOL.md, "Events to controllers"). Every
/// event the Bridge sends to controllers is one of these constants, given to `Bridge.emit`, and
/// each has one writer: one `emit` call that sets its fields (EventTableTests counts them, and
/// checks that the docs name every field). A profile names its own events in its folder.
/// `bridged check` and `bridged sessions` read events by these names, not by literals.
public struct ControllerEventName: Hashable, Sendable, CustomStringConvertible {
    public let name: String

    public init(_ name: String) { self.name = name }

    public var description: String { name }
}

extension ControllerEventName {
    // Sessions
    public static let sessionCreated = ControllerEventName("session.created")
    public static let sessionClosed = ControllerEventName("session.closed")
    public static let sessionLimit = ControllerEventName("session.limit")
    // The stack and its web views
    public static let stackChanged = ControllerEventName("stack.changed")
    public static let webviewOpen = ControllerEventName("webview.open")
    public static let webviewClosed = ControllerEventName("webview.closed")
    public static let webviewFailed = ControllerEventName("webview.failed")
    public static let externalOpen = ControllerEventName("external.open")
    // Pages
    public static let pageConnected = ControllerEventName("page.connected")
    public static let pageDisconnected = ControllerEventName("page.disconnected")
    public static let pwaNavigated = ControllerEventName("pwa-navigated")
    public static let pwaRendered = ControllerEventName("pwa-rendered")
    public static let foregroundShown = ControllerEventName("foreground.shown")
    public static let foregroundRemoved = ControllerEventName("foreground.removed")
    public static let appEvent = ControllerEventName("app.event")
    // The shell's duties
    public static let webviewDialog = ControllerEventName("webview.dialog")
    public static let webviewDialogClosed = ControllerEventName("webview.dialog.closed")
    public static let webviewCrashed = ControllerEventName("webview.crashed")
    public static let webviewUnresponsive = ControllerEventName("webview.unresponsive")
    public static let webviewResponsive = ControllerEventName("webview.responsive")
    public static let webviewFileChooser = ControllerEventName("webview.fileChooser")
    public static let webviewDownload = ControllerEventName("webview.download")
    public static let browserCrashed = ControllerEventName("browser.crashed")
}
