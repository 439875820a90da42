import Foundation
import KioskCore

/// Encodes the journal's values to JSON in one pass, writing each key and value straight into the output bytes.
///
/// Foundation's `JSONEncoder` first builds a tree of every value (a dictionary per object), then serializes it: for
/// a grant of 20,000 files that tree weighs several times the 4 MB of JSON, and the journal encodes a grant when it
/// arrives and again at each compaction. Here nothing grows with the value: ``encode(_:pieceSize:to:)`` hands the
/// output on in pieces of about `pieceSize` bytes (the journal writes them to its files as they come), and
/// ``encode(_:)`` collects them for small values.
///
/// The JSON is the one `KioskJSON.makeDecoder()` reads, with `KioskJSON.makeEncoder()`'s conventions: dates as RFC 3339
/// strings, URLs as their absolute string, `Data` as base64, slashes unescaped. Keys come in the order the values
/// encode them, not sorted (the decoder does not care). Nested containers must be finished before their parent
/// encodes its next value, as synthesized `Codable` conformances do.
enum JournalEncoder {
    /// The JSON of `value`, whole.
    static func encode<T: Encodable>(_ value: T) throws -> Data {
        var whole = Data()
        try encode(value, pieceSize: 4096) { whole.append(contentsOf: $0) }
        return whole
    }

    /// Writes the JSON of `value` to `write` in pieces of about `pieceSize` bytes (more when one string is longer),
    /// in order; an error thrown by `write` ends the encoding and is rethrown. The memory taken is one piece, however
    /// large the value.
    static func encode<T: Encodable>(
        _ value: T, pieceSize: Int = 64 << 10, to write: (UnsafeRawBufferPointer) throws -> Void
    ) throws {
        try withoutActuallyEscaping(write) { write in
            let writer = Writer(pieceSize: pieceSize, write: write)
            try writer.encodeValue(value, parentLevel: -1, codingPath: [])
            writer.close(downTo: 0)
            writer.flush()
            if let failure = writer.failure { throw failure }
        }
    }

    /// The output and the containers open in it, innermost last.
    fileprivate final class Writer {
        /// The piece being filled. `Data` rather than an array: it grows in place (`realloc`) and keeps its
        /// capacity when emptied.
        var bytes = Data()
        /// For each open container: whether it is an object, and how many values it holds so far.
        var open: [(isObject: Bool, count: Int)] = []
        let pieceSize: Int
        let write: (UnsafeRawBufferPointer) throws -> Void

        init(pieceSize: Int, write: @escaping (UnsafeRawBufferPointer) throws -> Void) {
            self.pieceSize = pieceSize
            self.write = write
            bytes.reserveCapacity(pieceSize + 256)
        }

        /// The first error of `write`: nothing more is handed on after it, and ``encode(_:pieceSize:to:)`` throws it.
        var failure: (any Error)?
        /// The bytes handed on so far.
        var handedOn = 0
        /// The bytes written so far, handed on or not.
        var position: Int { handedOn + bytes.count }

        /// Hands the piece on and empties it (containers ask for this between values, where they cannot throw).
        func flush() {
            guard !bytes.isEmpty else { return }
            if failure == nil {
                do {
                    try bytes.withUnsafeBytes { try write($0) }
                } catch {
                    failure = error
                }
            }
            handedOn += bytes.count
            bytes.removeAll(keepingCapacity: true)
        }

        func writeRaw(_ text: String) {
            var text = text
            text.withUTF8 { utf8 in
                if let start = utf8.baseAddress { bytes.append(start, count: utf8.count) }
            }
        }

        /// Ends the containers at `level` and deeper.
        func close(downTo level: Int) {
            while open.count > level {
                bytes.append(open.removeLast().isObject ? UInt8(ascii: "}") : UInt8(ascii: "]"))
            }
        }

        /// Opens a container at `level` (the encoder's own level).
        func push(isObject: Bool, at level: Int) {
            close(downTo: level)
            bytes.append(isObject ? UInt8(ascii: "{") : UInt8(ascii: "["))
            open.append((isObject, 0))
        }

        /// Starts the next value of the container at `level`: ends its unfinished children, then the separator and,
        /// in an object, the key.
        func beginElement(at level: Int, key: (any CodingKey)?) {
            if bytes.count >= pieceSize { flush() }
            close(downTo: level + 1)
            if open[level].count > 0 { bytes.append(UInt8(ascii: ",")) }
            open[level].count += 1
            if let key {
                writeString(key.stringValue)
                bytes.append(UInt8(ascii: ":"))
            }
        }

        func writeString(_ string: String) {
            bytes.append(UInt8(ascii: "\""))
            let utf8 = string.utf8
            if !utf8.contains(where: { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }) {
                writeRaw(string)
            } else {
                for byte in utf8 {
                    switch byte {
                    case UInt8(ascii: "\""): bytes.append(contentsOf: #"\""#.utf8)
                    case UInt8(ascii: "\\"): bytes.append(contentsOf: #"\\"#.utf8)
                    case 0x0A: bytes.append(contentsOf: #"\n"#.utf8)
                    case 0x0D: bytes.append(contentsOf: #"\r"#.utf8)
                    case 0x09: bytes.append(contentsOf: #"\t"#.utf8)
                    case 0x08: bytes.append(contentsOf: #"\b"#.utf8)
                    case 0x0C: bytes.append(contentsOf: #"\f"#.utf8)
                    case ..<0x20:
                        let hex = Array("0123456789abcdef".utf8)
                        bytes.append(contentsOf: #"\u00"#.utf8)
                        bytes.append(hex[Int(byte >> 4)])
                        bytes.append(hex[Int(byte & 0xF)])
                    default: bytes.append(byte)
                    }
                }
            }
            bytes.append(UInt8(ascii: "\""))
        }

        func writeFloatingPoint<F: BinaryFloatingPoint & LosslessStringConvertible>(
            _ value: F, codingPath: [any CodingKey]
        ) throws {
            guard value.isFinite else {
                throw EncodingError.invalidValue(
                    value, .init(codingPath: codingPath, debugDescription: "\(value) is not a JSON number"))
            }
            var text = value.description
            if text.hasSuffix(".0") { text.removeLast(2) }
            writeRaw(text)
        }

        /// Writes `value` as the value about to be written (its key and separator are written already); containers it
        /// opens sit above `parentLevel` and are ended when it returns.
        func encodeValue<T: Encodable>(_ value: T, parentLevel: Int, codingPath: [any CodingKey]) throws {
            switch value {
            case let date as Date: writeString(RFC3339.string(from: date))
            case let url as URL: writeString(url.absoluteString)
            case let data as Data: writeString(data.base64EncodedString())
            case let string as String: writeString(string)
            default:
                let level = parentLevel + 1
                let start = position
                let encoder = StreamEncoder(writer: self, level: level, codingPath: codingPath)
                try value.encode(to: encoder)
                close(downTo: level)
                if position == start { writeRaw("{}") }  // encoded nothing, as JSONEncoder writes it
            }
        }
    }

    /// The encoder of one value: its containers open at `level`.
    fileprivate struct StreamEncoder: Encoder {
        let writer: Writer
        let level: Int
        var codingPath: [any CodingKey]
        var userInfo: [CodingUserInfoKey: Any] { [:] }

        /// Whether this encoder's container is the innermost open one (asked for a second time by the same value).
        private var isOpen: Bool { writer.open.count == level + 1 }

        func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
            if !(isOpen && writer.open[level].isObject) { writer.push(isObject: true, at: level) }
            return KeyedEncodingContainer(KeyedContainer<Key>(writer: writer, level: level, codingPath: codingPath))
        }

        func unkeyedContainer() -> any UnkeyedEncodingContainer {
            if !(isOpen && !writer.open[level].isObject) { writer.push(isObject: false, at: level) }
            return UnkeyedContainer(writer: writer, level: level, codingPath: codingPath)
        }

        func singleValueContainer() -> any SingleValueEncodingContainer {
            SingleValue(writer: writer, level: level, codingPath: codingPath)
        }
    }

    fileprivate struct KeyedContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
        let writer: Writer
        let level: Int
        var codingPath: [any CodingKey]

        func encodeNil(forKey key: Key) throws {
            writer.beginElement(at: level, key: key)
            writer.writeRaw("null")
        }
        func encode(_ value: Bool, forKey key: Key) throws {
            writer.beginElement(at: level, key: key)
            writer.writeRaw(value ? "true" : "false")
        }
        func encode(_ value: String, forKey key: Key) throws {
            writer.beginElement(at: level, key: key)
            writer.writeString(value)
        }
        func encode(_ value: Double, forKey key: Key) throws {
            writer.beginElement(at: level, key: key)
            try writer.writeFloatingPoint(value, codingPath: codingPath + [key])
        }
        func encode(_ value: Float, forKey key: Key) throws {
            writer.beginElement(at: level, key: key)
            try writer.writeFloatingPoint(value, codingPath: codingPath + [key])
        }
        func encode(_ value: Int, forKey key: Key) throws { try integer(value, key) }
        func encode(_ value: Int8, forKey key: Key) throws { try integer(value, key) }
        func encode(_ value: Int16, forKey key: Key) throws { try integer(value, key) }
        func encode(_ value: Int32, forKey key: Key) throws { try integer(value, key) }
        func encode(_ value: Int64, forKey key: Key) throws { try integer(value, key) }
        func encode(_ value: UInt, forKey key: Key) throws { try integer(value, key) }
        func encode(_ value: UInt8, forKey key: Key) throws { try integer(value, key) }
        func encode(_ value: UInt16, forKey key: Key) throws { try integer(value, key) }
        func encode(_ value: UInt32, forKey key: Key) throws { try integer(value, key) }
        func encode(_ value: UInt64, forKey key: Key) throws { try integer(value, key) }

        private func integer<I: BinaryInteger>(_ value: I, _ key: Key) throws {
            writer.beginElement(at: level, key: key)
            writer.writeRaw(String(value))
        }

        func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
            writer.beginElement(at: level, key: key)
            try writer.encodeValue(value, parentLevel: level, codingPath: codingPath + [key])
        }

        func nestedContainer<NestedKey: CodingKey>(
            keyedBy keyType: NestedKey.Type, forKey key: Key
        ) -> KeyedEncodingContainer<NestedKey> {
            writer.beginElement(at: level, key: key)
            writer.push(isObject: true, at: level + 1)
            return KeyedEncodingContainer(
                KeyedContainer<NestedKey>(writer: writer, level: level + 1, codingPath: codingPath + [key]))
        }

        func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
            writer.beginElement(at: level, key: key)
            writer.push(isObject: false, at: level + 1)
            return UnkeyedContainer(writer: writer, level: level + 1, codingPath: codingPath + [key])
        }

        func superEncoder() -> any Encoder { superEncoder(forKey: Key(stringValue: "super")!) }

        func superEncoder(forKey key: Key) -> any Encoder {
            writer.beginElement(at: level, key: key)
            return StreamEncoder(writer: writer, level: level + 1, codingPath: codingPath + [key])
        }
    }

    fileprivate struct UnkeyedContainer: UnkeyedEncodingContainer {
        let writer: Writer
        let level: Int
        var codingPath: [any CodingKey]
        var count: Int { writer.open.count > level ? writer.open[level].count : 0 }

        private func begin() { writer.beginElement(at: level, key: nil) }

        func encodeNil() throws {
            begin()
            writer.writeRaw("null")
        }
        func encode(_ value: Bool) throws {
            begin()
            writer.writeRaw(value ? "true" : "false")
        }
        func encode(_ value: String) throws {
            begin()
            writer.writeString(value)
        }
        func encode(_ value: Double) throws {
            begin()
            try writer.writeFloatingPoint(value, codingPath: codingPath)
        }
        func encode(_ value: Float) throws {
            begin()
            try writer.writeFloatingPoint(value, codingPath: codingPath)
        }
        func encode(_ value: Int) throws { integer(value) }
        func encode(_ value: Int8) throws { integer(value) }
        func encode(_ value: Int16) throws { integer(value) }
        func encode(_ value: Int32) throws { integer(value) }
        func encode(_ value: Int64) throws { integer(value) }
        func encode(_ value: UInt) throws { integer(value) }
        func encode(_ value: UInt8) throws { integer(value) }
        func encode(_ value: UInt16) throws { integer(value) }
        func encode(_ value: UInt32) throws { integer(value) }
        func encode(_ value: UInt64) throws { integer(value) }

        private func integer<I: BinaryInteger>(_ value: I) {
            begin()
            writer.writeRaw(String(value))
        }

        func encode<T: Encodable>(_ value: T) throws {
            begin()
            try writer.encodeValue(value, parentLevel: level, codingPath: codingPath)
        }

        func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey>
        {
            begin()
            writer.push(isObject: true, at: level + 1)
            return KeyedEncodingContainer(
                KeyedContainer<NestedKey>(writer: writer, level: level + 1, codingPath: codingPath))
        }

        func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
            begin()
            writer.push(isObject: false, at: level + 1)
            return UnkeyedContainer(writer: writer, level: level + 1, codingPath: codingPath)
        }

        func superEncoder() -> any Encoder {
            begin()
            return StreamEncoder(writer: writer, level: level + 1, codingPath: codingPath)
        }
    }

    fileprivate struct SingleValue: SingleValueEncodingContainer {
        let writer: Writer
        let level: Int
        var codingPath: [any CodingKey]

        func encodeNil() throws { writer.writeRaw("null") }
        func encode(_ value: Bool) throws { writer.writeRaw(value ? "true" : "false") }
        func encode(_ value: String) throws { writer.writeString(value) }
        func encode(_ value: Double) throws { try writer.writeFloatingPoint(value, codingPath: codingPath) }
        func encode(_ value: Float) throws { try writer.writeFloatingPoint(value, codingPath: codingPath) }
        func encode(_ value: Int) throws { writer.writeRaw(String(value)) }
        func encode(_ value: Int8) throws { writer.writeRaw(String(value)) }
        func encode(_ value: Int16) throws { writer.writeRaw(String(value)) }
        func encode(_ value: Int32) throws { writer.writeRaw(String(value)) }
        func encode(_ value: Int64) throws { writer.writeRaw(String(value)) }
        func encode(_ value: UInt) throws { writer.writeRaw(String(value)) }
        func encode(_ value: UInt8) throws { writer.writeRaw(String(value)) }
        func encode(_ value: UInt16) throws { writer.writeRaw(String(value)) }
        func encode(_ value: UInt32) throws { writer.writeRaw(String(value)) }
        func encode(_ value: UInt64) throws { writer.writeRaw(String(value)) }

        func encode<T: Encodable>(_ value: T) throws {
            try writer.encodeValue(value, parentLevel: level - 1, codingPath: codingPath)
        }
    }
}
