import FoundationEssentials
import NIOCore
import QueuePlayerControl

/// Turns one line from a control connection into a command, or into the error reply's message.
package enum ControlRequestParser {
    package enum Outcome {
        case command(RequestID?, ControlCommand)
        case failure(RequestID?, String)
    }

    package static func parse(_ line: ControlLine) -> Outcome {
        guard case .line(let buffer) = line else {
            return .failure(nil, "request longer than \(ControlServer.maximumLineLength) bytes; ignored")
        }
        let bytes = Array(buffer.readableBytesView)
        guard String(validating: bytes, as: UTF8.self) != nil else {
            return .failure(nil, "request is not valid UTF-8; send one JSON object per line")
        }
        do {
            let request = try JSONDecoder().decode(ControlRequest.self, from: Data(bytes))
            return .command(request.id, request.command)
        } catch {
            // The reply names the request it refuses, when its id can be read.
            let id = (try? JSONDecoder().decode(Identified.self, from: Data(bytes)))?.id
            return .failure(id, describe(error))
        }
    }

    /// A request's id alone.
    private struct Identified: Decodable {
        var id: RequestID?
    }

    private static func describe(_ error: any Error) -> String {
        switch error {
        case let error as ControlError:
            return error.description
        case DecodingError.keyNotFound(let key, _):
            return "request needs '\(key.stringValue)', such as {\"command\": \"status\"}"
        case DecodingError.typeMismatch(let type, let context) where !context.codingPath.isEmpty,
            DecodingError.valueNotFound(let type, let context) where !context.codingPath.isEmpty:
            let field = context.codingPath.map(\.stringValue).joined(separator: ".")
            return "request field '\(field)' must be \(kindName(type))"
        default:
            return "request is not a JSON object; send one per line, such as {\"command\": \"status\"}"
        }
    }

    private static func kindName(_ type: Any.Type) -> String {
        switch type {
        case is Double.Type, is Int.Type, is Double?.Type, is Int?.Type: "a number"
        case is Bool.Type, is Bool?.Type: "true or false"
        case is String.Type, is String?.Type: "a string"
        case is [String].Type, is [String]?.Type: "an array of strings"
        default: "of another type"
        }
    }
}
