import Foundation

/// The JSON conventions of the wire contract: RFC 3339 UTC dates, sorted keys for stable output.
public enum KioskJSON {
    /// A new encoder configured for the wire format.
    public static func makeEncoder() -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .custom { date, encoder in
            var container = encoder.singleValueContainer()
            try container.encode(RFC3339.string(from: date))
        }
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }

    /// A new decoder configured for the wire format (accepts fractional seconds and offsets).
    public static func makeDecoder() -> JSONDecoder {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .custom { decoder in
            let container = try decoder.singleValueContainer()
            let text = try container.decode(String.self)
            guard let date = RFC3339.date(from: text) else {
                throw DecodingError.dataCorruptedError(
                    in: container, debugDescription: "'\(text)' is not an RFC 3339 date-time")
            }
            return date
        }
        return decoder
    }

    /// Encodes a value for the wire.
    public static func encode<T: Encodable>(_ value: T) throws -> Data { try makeEncoder().encode(value) }

    /// Decodes a value from the wire.
    public static func decode<T: Decodable>(_ type: T.Type, from data: Data) throws -> T {
        try makeDecoder().decode(type, from: data)
    }
}
