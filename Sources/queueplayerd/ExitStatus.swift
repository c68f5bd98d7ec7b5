import ArgumentParser

/// The exit statuses of `playerctl daemon`, as documented in its help.
enum ExitStatus {
    /// The audio output could not be set up at all (libpulse could not start). A server that is absent, dies or
    /// restarts is waited for instead.
    static let outputFailed = ExitCode(1)
    /// Playback finished, but at least one item could not be played (each was reported on stderr).
    static let itemsFailed = ExitCode(2)
    /// The control socket could not be served: another daemon serves it, or its folder cannot be made.
    static let socketUnavailable = ExitCode(3)
    /// Not even an in-memory state store could be opened (a damaged file is moved aside, an unwritable one leaves the
    /// state in memory, and neither stops the daemon).
    static let stateUnavailable = ExitCode(4)
    /// The manifest could not be used (it names the file and the problem); nothing was played.
    static let badManifest = ExitCode(78)

    static let helpText = """
        Exit status: 0 when every item played to its end; 1 when the audio output cannot be set up at all (a sound \
        server that is absent, dies or restarts is waited for, and playback goes on where it stopped); 2 when \
        playback finished but some items failed (each is reported on stderr); 3 when another daemon already serves \
        the control socket; 4 when not even an in-memory state store can be opened (a damaged state file is moved \
        aside, an unwritable one leaves the state in memory); 64 on a usage error; 78 when the manifest is \
        malformed; 86 when a background task outlived the background time.
        """
}
