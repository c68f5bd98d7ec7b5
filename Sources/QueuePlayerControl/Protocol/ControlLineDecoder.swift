import NIOCore

/// One unit read from a control connection.
package enum ControlLine: Sendable {
    /// A line, without its newline.
    case line(ByteBuffer)
    /// A line longer than the limit: it was skipped to its end.
    case tooLong
}

/// Splits a control connection's bytes into lines of at most `maximumLength` bytes. A longer line is reported once
/// as ``ControlLine/tooLong`` and skipped up to its newline, without buffering it.
package struct ControlLineDecoder: ByteToMessageDecoder {
    package typealias InboundOut = ControlLine

    package let maximumLength: Int
    private var skippingLongLine = false

    package init(maximumLength: Int) {
        self.maximumLength = maximumLength
    }

    package mutating func decode(context: ChannelHandlerContext, buffer: inout ByteBuffer) throws -> DecodingState {
        guard let newline = buffer.readableBytesView.firstIndex(of: UInt8(ascii: "\n")) else {
            if buffer.readableBytes > maximumLength {
                if !skippingLongLine {
                    skippingLongLine = true
                    context.fireChannelRead(wrapInboundOut(.tooLong))
                }
                buffer.moveReaderIndex(to: buffer.writerIndex)
            }
            return .needMoreData
        }
        let length = newline - buffer.readerIndex
        if skippingLongLine || length > maximumLength {
            if !skippingLongLine { context.fireChannelRead(wrapInboundOut(.tooLong)) }
            skippingLongLine = false
            buffer.moveReaderIndex(forwardBy: length + 1)
            return .continue
        }
        let line = buffer.readSlice(length: length)!
        buffer.moveReaderIndex(forwardBy: 1)
        context.fireChannelRead(wrapInboundOut(.line(line)))
        return .continue
    }

    package mutating func decodeLast(
        context: ChannelHandlerContext, buffer: inout ByteBuffer, seenEOF: Bool
    ) throws
        -> DecodingState
    {
        while try decode(context: context, buffer: &buffer) == .continue {}
        return .needMoreData
    }
}
