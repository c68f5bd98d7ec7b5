import Glibc

/// Writes to standard output with write(2), not stdio: flushing stdout through stdio (`fflush(nil)`, all a Swift 6
/// file may name) takes every stream's lock, stdin's too, which a blocked `readLine()` holds, so a writer on another
/// thread would wait for the next line of input. The one unsafe pointer is the string's UTF-8 storage, read during
/// the call only.
enum StandardOutput {
    /// Writes all of `text`, unless standard output is closed.
    static func write(_ text: String) {
        var text = text
        text.withUTF8 { bytes in
            var offset = 0
            while offset < bytes.count {
                let written = Glibc.write(STDOUT_FILENO, bytes.baseAddress! + offset, bytes.count - offset)
                if written < 0, errno == EINTR { continue }
                guard written > 0 else { return }
                offset += written
            }
        }
    }
}
