/// The release both executables report (`--version`) and the Debian package is named after.
package enum ReleaseVersion {
    /// As `--version` prints it: `v` and the release, `v0.3.0`.
    package static let printed = "v0.3.0"
}
