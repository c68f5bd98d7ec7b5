import ArgumentParser
import QueuePlayerControl

extension PrintOptions {
    /// Runs a verb of one setting (`loop`, `shuffle`, `replaygain`): without `value`, prints the setting as `shown`
    /// says; with one, sets the `Setting` it names through `command`, or fails naming `verb` and the values there are.
    func printOrSet<Setting: NamedSetting>(
        _ value: String?, verb: String, with options: ClientOptions, command: (Setting?) -> ControlCommand,
        shown: @escaping @Sendable (PlayerSnapshot) -> String
    ) throws {
        guard let value else {
            try print(ControlRequest(command(nil)), with: options, shown)
            return
        }
        guard let setting = Setting(named: value) else {
            options.fail("playerctl: \(verb): '\(value)' is not one of \(Setting.names)")
        }
        _ = try options.call(ControlRequest(command(setting)))
    }
}
