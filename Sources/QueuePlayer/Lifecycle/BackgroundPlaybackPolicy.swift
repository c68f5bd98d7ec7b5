import Dispatch
import Logging
import Synchronization

/// A player the lifecycle can pause and resume, such as ``QueuePlayer``.
public protocol BackgroundPausable: AnyObject, Sendable {
    /// True while playback is wanted (rate 1), whether or not sound is coming out yet.
    var isPlaybackRequested: Bool { get }
    /// Starts or resumes playback.
    func play()
    /// Pauses playback, keeping the position.
    func pause()
}

/// What a player does as its ``Application`` leaves and re-enters the foreground, as iOS does it.
///
/// - With the `audio` background mode declared, nothing: playback goes on (observers keep firing; they can check
///   ``Application/applicationState`` to log instead of render).
/// - Without it, entering the background pauses the player (on the policy's own queue, within a millisecond of the
///   notification; the PulseAudio stream is corked, so the sound stops at once).
/// - Back in the foreground the player stays paused, as on iOS, unless ``resumesOnForeground`` is set; a player
///   paused by the user before leaving is never resumed.
///
/// Threading: any thread. Keep the policy alive as long as the player; ``QueuePlayer`` keeps its own.
public final class BackgroundPlaybackPolicy: Sendable {
    private let application: Application
    private weak let player: (any BackgroundPausable)?
    private let queue = DispatchQueue(label: "queueplayer.background-policy")
    private let state = Mutex<(token: LifecycleObserverToken?, pausedForBackground: Bool, resumes: Bool)>(
        (nil, false, false))

    /// Applies the policy to `player` for `application`'s transitions.
    public init(player: any BackgroundPausable, application: Application = .shared, resumesOnForeground: Bool = false) {
        self.player = player
        self.application = application
        state.withLock { $0.resumes = resumesOnForeground }
        let token = application.addObserver(queue: queue) { [weak self] notification in
            self?.handle(notification)
        }
        state.withLock { $0.token = token }
    }

    deinit {
        if let token = state.withLock({ $0.token }) {
            application.removeObserver(token)
        }
    }

    /// Whether a player paused for entering the background plays again on return. Off by default, as on iOS.
    public var resumesOnForeground: Bool {
        get { state.withLock { $0.resumes } }
        set { state.withLock { $0.resumes = newValue } }
    }

    /// Starts playback, unless the application is in the background without the audio mode: then playback counts
    /// as paused for the background (and ``resumesOnForeground`` applies on return). For a program that may start
    /// backgrounded. Decided on the policy's queue, in turn with the transitions: a move to the background at the
    /// same moment either comes first (nothing plays) or pauses what this started. Any thread but the policy's
    /// queue.
    public func playUnlessBackgrounded() {
        queue.sync {
            let backgrounded = [.background, .suspended].contains(application.applicationState)
            if backgrounded && !application.manifest.allowsBackgroundAudio {
                state.withLock { $0.pausedForBackground = true }
                application.logger.notice(
                    "not playing: started in the background without the audio background mode",
                    metadata: ["hint": "declare UIBackgroundModes = [audio] in the manifest to play in the background"])
            } else {
                player?.play()
            }
        }
    }

    /// Returns once every transition the policy was told of before the call has been handled: its pause or play
    /// carried out, the output's included. Any thread but the policy's queue.
    func waitUntilHandled() {
        queue.sync {}
    }

    private func handle(_ notification: LifecycleNotification) {
        guard let player else { return }
        switch notification {
        case .didEnterBackground:
            guard !application.manifest.allowsBackgroundAudio, player.isPlaybackRequested else { return }
            player.pause()
            state.withLock { $0.pausedForBackground = true }
            application.logger.notice(
                "paused: entered the background without the audio background mode",
                metadata: ["hint": "declare UIBackgroundModes = [audio] in the manifest to keep playing"])
        case .willEnterForeground:
            let resume = state.withLock { state -> Bool in
                defer { state.pausedForBackground = false }
                return state.pausedForBackground && state.resumes
            }
            if resume {
                player.play()
                application.logger.info("resumed: back in the foreground")
            }
        case .willResignActive, .didBecomeActive:
            break
        }
    }
}
