import NIOCore

/// Takes the ICY metadata blocks out of a stream's body, as a SHOUTcast or Icecast server interleaves them when asked
/// (`Icy-MetaData: 1`): after every `icy-metaint` bytes of audio, one length byte (times 16 bytes) and that much
/// text, `StreamTitle='…';StreamUrl='…';`, padded with NULs. libmpg123 must see the audio alone.
///
/// A plain value, fed one connection's body in order; a new connection starts a new one.
struct ICYDemultiplexer {
    /// A metadata block and where it fell: after `audioOffset` bytes of this connection's audio.
    struct Block: Equatable {
        var audioOffset: Int
        var bytes: [UInt8]
    }

    /// Audio bytes between two blocks (`icy-metaint`).
    let interval: Int
    private var audioUntilBlock: Int
    private var audioOffset = 0
    /// The block being read: its length once the length byte came, and what of it came.
    private var blockLength: Int?
    private var block: [UInt8] = []

    init(interval: Int) {
        self.interval = interval
        audioUntilBlock = interval
    }

    /// Splits `chunk` into its audio, in order, and the blocks that ended in it.
    mutating func split(_ chunk: ByteBuffer) -> (audio: [ByteBuffer], blocks: [Block]) {
        var chunk = chunk
        var audio: [ByteBuffer] = []
        var blocks: [Block] = []
        while chunk.readableBytes > 0 {
            if audioUntilBlock > 0 {
                let piece = chunk.readSlice(length: min(audioUntilBlock, chunk.readableBytes))!
                audioUntilBlock -= piece.readableBytes
                audioOffset += piece.readableBytes
                audio.append(piece)
            } else if let length = blockLength {
                let piece = chunk.readBytes(length: min(length - block.count, chunk.readableBytes))!
                block += piece
                if block.count == length { finishBlock(into: &blocks) }
            } else {
                blockLength = Int(chunk.readInteger(as: UInt8.self)!) * 16
                if blockLength == 0 { finishBlock(into: &blocks) }
            }
        }
        return (audio, blocks)
    }

    private mutating func finishBlock(into blocks: inout [Block]) {
        if !block.isEmpty { blocks.append(Block(audioOffset: audioOffset, bytes: block)) }
        block = []
        blockLength = nil
        audioUntilBlock = interval
    }

    /// The `StreamTitle` of a block: UTF-8 when it is valid UTF-8, else windows-1252 (which Latin-1 is part of), as
    /// servers send either. Nil when the block has none.
    static func streamTitle(in block: [UInt8]) -> String? {
        let key = Array("StreamTitle='".utf8)
        guard let start = block.firstRange(of: key)?.upperBound else { return nil }
        let rest = block[start...].prefix { $0 != 0 }
        let end =
            rest.firstRange(of: Array("';".utf8))?.lowerBound ?? rest.lastIndex(of: UInt8(ascii: "'")) ?? rest.endIndex
        return text(Array(rest[..<end]))
    }

    /// ICY text: UTF-8 when it is valid UTF-8, else windows-1252.
    static func text(_ bytes: [UInt8]) -> String {
        String(validating: bytes, as: UTF8.self) ?? windows1252(bytes)
    }

    /// A header's ICY text (`icy-name`), which NIO hands over byte for byte as Latin-1 or as UTF-8: the bytes again,
    /// read as ``text(_:)-([UInt8])`` reads a block's.
    static func text(header: String) -> String {
        let scalars = header.unicodeScalars
        let isBytes = scalars.allSatisfy { $0.value < 0x100 }
        return text(isBytes ? scalars.map { UInt8($0.value) } : Array(header.utf8))
    }

    /// Windows-1252's characters for 0x80...0x9F (nil where it has none); the other bytes are Latin-1's.
    private static let windows1252High: [Unicode.Scalar?] = [
        "\u{20AC}", nil, "\u{201A}", "\u{0192}", "\u{201E}", "\u{2026}", "\u{2020}", "\u{2021}", "\u{02C6}",
        "\u{2030}", "\u{0160}", "\u{2039}", "\u{0152}", nil, "\u{017D}", nil, nil, "\u{2018}", "\u{2019}",
        "\u{201C}", "\u{201D}", "\u{2022}", "\u{2013}", "\u{2014}", "\u{02DC}", "\u{2122}", "\u{0161}", "\u{203A}",
        "\u{0153}", nil, "\u{017E}", "\u{0178}",
    ]

    private static func windows1252(_ bytes: [UInt8]) -> String {
        var text = String.UnicodeScalarView()
        for byte in bytes {
            if (0x80...0x9F).contains(byte) {
                text.append(windows1252High[Int(byte) - 0x80] ?? "\u{FFFD}")
            } else {
                text.append(Unicode.Scalar(byte))
            }
        }
        return String(text)
    }
}
