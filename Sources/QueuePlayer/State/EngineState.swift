import FoundationEssentials

extension PlaybackEngine {
    /// Where the engine is in its life. The decoding thread's progress within a phase (opening an entry, carrying
    /// out a restart, holding at an item's end) is in ``State``'s other fields; ``State/activity`` names it.
    enum Phase: Equatable {
        /// Never played: the threads do not exist yet. Entries may be queued, cued and sought; nothing is opened.
        case idle
        /// Playback is wanted and the output is running.
        case playing
        /// Playback was started (or prerolled), then paused: the output is paused and keeps what it holds.
        case paused
        /// Playback is wanted, but the output stays paused until the remote item being decoded has enough of it
        /// buffered: after a ``State/play()`` that found too little, or a stall (the decoder ran out of bytes with
        /// everything decoded heard). The decoding thread ends it (EngineState+Buffering.swift).
        case buffering
        /// The output failed (the server went away, or was never there): the decoding thread waits, the event
        /// thread reconnects with backoff, and playback then goes on where it was heard, playing if
        /// `resumesPlaying` (which `play` and `pause` set meanwhile). `isTakenUp` once the event thread has read
        /// where the sound stopped and begun to reconnect. Commands and edits apply as usual.
        case outputLost(AudioSinkError, resumesPlaying: Bool, isTakenUp: Bool = false)
        /// `PlaybackEngine/shutdown()` was called: the threads have stopped and commands do nothing.
        case shutDown

        /// True once the threads must stop.
        var isFinal: Bool { self == .shutDown }

        /// True while the output is lost.
        var isOutputLost: Bool {
            if case .outputLost = self { return true }
            return false
        }
    }

    /// What the decoding thread is doing: stored, and changed only by the decoding thread's transitions
    /// (`PlaybackEngine/State/nextDecoderStep()` and those after it) and by the commands that release a hold.
    enum Activity {
        /// The threads have not started, or the decoding thread has not looked at the queue yet.
        case notStarted
        /// Everything queued has been decoded: the ring's end is marked and the thread waits for entries.
        /// `endReported` once the event thread has reported the end of the queue (once per end: a change of the
        /// queue clears it, a cue or an output recovery keeps it through their restart).
        case idle(endReported: Bool)
        /// A skip, seek, cue, edit or recovery was taken up: what was decoded ahead is dropped and the output
        /// flushed. The restart's start frame and seek completions go to the next entry opened.
        case restarting(Restart)
        /// Opening `entry`, taken from `pending` (so in neither the timeline nor `pending`); `led` is the restart
        /// that led here, if any.
        case opening(QueueEntry, led: Restart?)
        /// Writing an item's frames into the ring.
        case decoding
        /// An item was decoded to its end, or failed to open: the next entry follows.
        case betweenItems
        /// Stopped at an item's end, with nothing of the next item decoded, until `released` (``advanceToNextItem()``
        /// after the item was heard), or a restart, or turning the hold off.
        case holdingAtItemEnd(released: Bool)
        /// The output is lost: the thread waits until the event thread has reconnected it.
        case waitingForOutput

        /// The activity's name, for the docs' table, tests and diagnostics.
        var name: String {
            switch self {
            case .notStarted: "not started"
            case .idle(let endReported): endReported ? "idle, end reported" : "idle"
            case .restarting: "restarting"
            case .opening: "opening"
            case .decoding: "decoding"
            case .betweenItems: "between items"
            case .holdingAtItemEnd(let released): released ? "hold released" : "holding at item end"
            case .waitingForOutput: "waiting for output"
            }
        }
    }

    /// What a transition asks the engine to do once its lock is released. Transitions never block, call out or
    /// touch the sink: they return actions, and the engine carries them out in order.
    enum Action {
        /// Start the decoding and event threads (the first play).
        case startThreads
        /// Unpause the output (`PlaybackEngine/matchOutputToPhase(knownPaused:)`).
        case resumeOutput
        /// Pause the output, which keeps what it holds (`PlaybackEngine/matchOutputToPhase(knownPaused:)`).
        case pauseOutput
        /// Wake the decoding thread wherever it waits: the order, a restart or a hold changed.
        case wakeDecoder
        /// Tell these seek completions `false`: the seek was replaced, or the engine stopped first.
        case failSeeks([@Sendable (Bool) -> Void])
        /// Tell these seek completions `true`: a cue took them, as nothing of the item was being heard.
        case finishSeeks([@Sendable (Bool) -> Void])
        /// Tell the periodic time observers the time heard now (playback paused or stopped).
        case reportTime
        /// Hand the gain (``State/gain``) to the renderer and the sink: the volume or the mute changed.
        case applyGain
        /// Deactivate these time observers, already removed: a delivery on its way is dropped.
        case deactivateObservers([TimeObserver])
        /// Stop the threads and the output, and finish the events.
        case stopEverything
        /// Wake both threads: the decoding thread to wait for the output, the event thread to reconnect it.
        case recoverOutput
        /// The event thread took up a lost output: hold the position at `heardFrame`, the ring frame heard when it
        /// went away, and close the dead stream.
        case closeLostOutput(heardFrame: Int)
        /// Tell the event listener and the event stream `event`.
        case post(PlaybackEvent)
    }

    /// The engine's whole state: one value under the engine's lock, in two stored dimensions (``Phase``: what is
    /// wanted of the output; ``Activity``: what the decoding thread is doing) plus the play queue (the timeline of
    /// what was decoded, and `pending`). Every change is one of the transitions in this folder: commands return the
    /// ``Action``s to carry out once the lock is released; the threads' transitions return what the thread must do
    /// next.
    struct State {
        var nextEntryID = 1
        var pending: [QueueEntry] = []
        var timeline = PlaybackTimeline()
        var phase = Phase.idle
        var activity = Activity.notStarted
        /// A skip, seek, cue, edit or output recovery asked for and not yet taken up by the decoding thread;
        /// `pending` already holds the new play order. Taken up, it moves into ``activity`` (`.restarting`, then
        /// `.opening(_:led:)`) and is gone from here: each restart is held in one place at a time, and a newer one
        /// may wait here while an older one is under way.
        var waitingRestart: Restart?
        /// The number of the newest restart asked for, and of the last one the decoding thread carried out (what
        /// was decoded ahead dropped, the output flushed): equal once every restart asked for has taken effect.
        var newestRestartNumber = 0
        var carriedOutRestartNumber = 0
        /// When set, the decoding thread stops at the end of each item until released (actionAtItemEnd
        /// `.pause` or `.none`).
        var holdsAtItemEnd = false
        var volume: Float = 1
        var isMuted = false
        /// What the samples are multiplied by: the volume, or 0 while muted.
        var gain: Float { isMuted ? 0 : volume }
        var nextObserverID = 1
        /// Time observers, and for each the item and the index of the next time it reports.
        var timeObservers: [Int: ObserverProgress] = [:]
        /// The sink says the server suspended its device.
        var outputIsSuspended = false
        /// Whether ``State/play()`` waits for a remote item's forward buffer to reach its target before the output
        /// plays (AVFoundation's `automaticallyWaitsToMinimizeStalling`); off, it waits after a stall only until
        /// some bytes are back.
        var waitsToMinimizeStalls = true
        /// The forward buffer of the remote item being decoded; nil for a local one, or when none is.
        var decodingBuffer: ForwardBuffer?
        /// The player's part: the items of the entries, the current item, what the transport was told.
        var player = PlayerModel()

        /// The play order: while a restart waits, `pending` alone (the timeline still shows what it will drop);
        /// otherwise the entries decoded, the playing one first, then `pending`.
        var order: [QueueEntry] {
            waitingRestart != nil ? pending : timeline.entries + (opening.map { [$0] } ?? []) + pending
        }

        /// The first entry of ``order``, without building the order.
        var firstInOrder: QueueEntry? {
            waitingRestart != nil ? pending.first : timeline.segments.first?.entry ?? opening ?? pending.first
        }

        /// The number of entries in ``order``, without building the order.
        var orderCount: Int {
            waitingRestart != nil ? pending.count : timeline.segments.count + (opening == nil ? 0 : 1) + pending.count
        }

        /// Replaces the waiting restart (if any) with `new`; returns the replaced one's seek completions, to be told
        /// `false` once the lock is released.
        mutating func replaceRestart(with new: Restart) -> [@Sendable (Bool) -> Void] {
            let replaced = waitingRestart?.completions ?? []
            let reopensOutput = waitingRestart?.reopensOutput ?? false
            let keepsQueueEndReport = new.keepsQueueEndReport && queueEndIsReported
            newestRestartNumber += 1
            waitingRestart = new
            waitingRestart?.number = newestRestartNumber
            waitingRestart?.keepsQueueEndReport = keepsQueueEndReport
            if reopensOutput { waitingRestart?.reopensOutput = true }
            return replaced
        }

        /// True when the end of the queue as it stands has been reported: idle with the end reported, or a restart
        /// waiting or under way that keeps such a report.
        var queueEndIsReported: Bool {
            if let waitingRestart { return waitingRestart.keepsQueueEndReport }
            switch activity {
            case .idle(let endReported): return endReported
            case .restarting(let taken): return taken.keepsQueueEndReport
            default: return false
            }
        }

        /// The queue changed: its end, once reached, is reported again.
        mutating func forgetQueueEndReport() {
            waitingRestart?.keepsQueueEndReport = false
            switch activity {
            case .idle(endReported: true):
                activity = .idle(endReported: false)
            case .restarting(var taken) where taken.keepsQueueEndReport:
                taken.keepsQueueEndReport = false
                activity = .restarting(taken)
            default:
                break
            }
        }

        /// True when no restart waits or is under way: every skip, seek, cue or edit asked for has taken effect.
        var restartsAreCarriedOut: Bool { waitingRestart == nil && carriedOutRestartNumber == newestRestartNumber }

        /// The entry the decoding thread has taken and is opening: in neither the timeline nor `pending` yet.
        var opening: QueueEntry? {
            if case .opening(let entry, _) = activity { return entry }
            return nil
        }

        /// The restart the decoding thread has taken and not finished: it is dropping what was decoded ahead, or
        /// opening the entry the restart starts at.
        var restartUnderWay: Restart? {
            switch activity {
            case .restarting(let taken): taken
            case .opening(_, let led): led
            default: nil
            }
        }

        /// True while the decoding thread waits at an item's end.
        var isHoldingAtItemEnd: Bool {
            if case .holdingAtItemEnd = activity { return true }
            return false
        }

        /// Makes every observer start over with the next item heard (after a skip or seek).
        mutating func resetObserverProgress() {
            for id in timeObservers.keys { timeObservers[id]?.entryID = nil }
        }
    }

    /// How far one time observer has been told.
    struct ObserverProgress {
        let observer: TimeObserver
        /// The entry the times count in; nil before the first item or after a skip or seek.
        var entryID: Int?
        /// The index of the next time to report (the multiple, or the boundary).
        var nextIndex: Int64 = 0
    }

    /// Where playback starts again after a skip or a seek.
    struct Restart {
        /// Counts restarts in the order they were asked for (see ``State/restartsAreCarriedOut``).
        var number = 0
        /// The frame of the first pending entry to start at.
        var startFrame: Int
        /// The rate ``startFrame`` counts at, when it may not be the rate the item plays at: a position saved by an
        /// earlier run, or one heard before the output reconnected (a sound server may come back at another rate).
        /// Nil: the rate the item plays at.
        var startRate: Int? = nil
        /// The entry being resumed (a seek, or an edit of what follows it): it posts no second
        /// ``PlaybackEvent/itemStarted(_:)``.
        var resumes: QueueEntry?
        /// True for a queue edit, which is no jump in time: time observers go on where they were.
        var keepsObservers = false
        /// For an edit that resumes the item being heard: the ring frame (of the audio decoded so far) that the
        /// restarted item's first frame continues. The renderer skips what it went on playing past it meanwhile.
        var continuesRingFrame: Int?
        /// For an edit of what follows the item being heard, once that item is decoded to its end: the ring frame
        /// just past its end. The decoding thread first tries to take back only what was decoded from there
        /// (``PlaybackEngine/DecoderStep/cut(atRingFrame:restartNumber:)``), which leaves what is heard untouched,
        /// and carries out the restart only when it cannot. Nil then, or when there is no such frame.
        var cutsAtRingFrame: Int?
        /// The output was lost after the stream was opened, so the stream is gone: the decoding thread opens a new
        /// one when it carries this restart out. Set when the output fails; a restart that replaces this one keeps
        /// it.
        var reopensOutput = false
        /// A cue or an output recovery, which change nothing queued: when the queue's end was reported already,
        /// the restart keeps that (``State/queueEndIsReported``), so the end is not reported twice. Set from the
        /// state when the restart is made.
        var keepsQueueEndReport = false
        /// Told `true` once playback has been set up again from the new position, or `false` if another skip,
        /// seek or edit replaced this one first.
        var completions: [@Sendable (Bool) -> Void] = []

        /// ``startFrame`` counted at `rate`, the rate the item plays at (rounded to the nearest frame).
        func startFrame(atRate rate: Int) -> Int {
            guard let startRate, startRate != rate else { return startFrame }
            return ResampledDecoder.scale(startFrame, from: startRate, to: rate)
        }
    }
}
