/// Where the process stands, in UIKit's terms (`UIApplication.State`, plus the suspended state UIKit does not
/// report).
public enum ApplicationState: Sendable, Equatable, CustomStringConvertible {
    /// In the foreground and in charge: a status line may be drawn.
    case active
    /// In the foreground but not in charge: the moment between leaving and entering the background.
    case inactive
    /// Flagged backgrounded and running code: playing with the `audio` capability, or finishing background tasks.
    case background
    /// Backgrounded with nothing allowed to run: playback paused and observers silent.
    case suspended

    /// The state's name, as logs show it.
    public var description: String {
        switch self {
        case .active: "active"
        case .inactive: "inactive"
        case .background: "background"
        case .suspended: "suspended"
        }
    }
}

/// The four transition notifications, posted in UIKit's order: ``willResignActive`` then ``didEnterBackground`` on
/// the way out, ``willEnterForeground`` then ``didBecomeActive`` on the way back.
public enum LifecycleNotification: Sendable, Equatable, CaseIterable, CustomStringConvertible {
    /// The application is about to stop being active (state becomes ``ApplicationState/inactive``).
    case willResignActive
    /// The application is now in the background (state ``ApplicationState/background``).
    case didEnterBackground
    /// The application is about to come back (state becomes ``ApplicationState/inactive``).
    case willEnterForeground
    /// The application is active again.
    case didBecomeActive

    /// The notification's UIKit name, as logs show it.
    public var description: String {
        switch self {
        case .willResignActive: "willResignActive"
        case .didEnterBackground: "didEnterBackground"
        case .willEnterForeground: "willEnterForeground"
        case .didBecomeActive: "didBecomeActive"
        }
    }
}
