import Foundation
import KioskCore

/// Decodes a grant's JSON with Foundation's decoder a few hundred files at a time, never the whole answer at once.
///
/// `JSONDecoder` first maps every token of its input (about as many bytes as the JSON itself), then builds the values:
/// for a grant of 20,000 files, a 4.3 MB answer took a 4.5 MB map and a file array that doubled its way up, all alive
/// beside the answer and the decoded files, and that moment was `kiosk get`'s peak of memory. Here a scan of the bytes
/// (strings, escapes and brackets, nothing decoded) finds the top-level `files` array and where each of its elements
/// starts and ends; the grant is decoded without its files, then the files ``batchSize`` at a time into an array
/// of the right size. The values are those of `KioskJSON.decode(Grant.self, from:)`, through the same `Codable`
/// conformances; an answer the scan does not follow (or that fails to decode) is decoded whole, so that its error is
/// exactly the one the whole decoder gives.
enum GrantJSON {
    /// Files decoded at once: small enough that the decoder's map of them is a few tens of KiB.
    static let batchSize = 256

    /// The grant in `data`.
    static func decode(_ data: Data) throws -> Grant {
        let fast: Grant? = data.withUnsafeBytes { bytes in
            var scanner = Scanner(bytes)
            guard let layout = scanner.grantLayout() else { return nil }
            return try? decode(bytes, layout)
        }
        if let fast { return fast }
        return try KioskJSON.decode(Grant.self, from: data)
    }

    /// Where the `files` array and its elements are.
    struct Layout {
        /// The array, brackets included.
        var files: Range<Int>
        /// Each element's bytes, in order.
        var elements: [Range<Int>]
    }

    private static func decode(_ bytes: UnsafeRawBufferPointer, _ layout: Layout) throws -> Grant {
        let decoder = KioskJSON.makeDecoder()
        var rest = Data(capacity: bytes.count - layout.files.count + 2)
        append(bytes, 0..<layout.files.lowerBound, to: &rest)
        rest.append(contentsOf: "[]".utf8)
        append(bytes, layout.files.upperBound..<bytes.count, to: &rest)
        var grant = try decoder.decode(Grant.self, from: rest)
        var files: [GrantFile] = []
        files.reserveCapacity(layout.elements.count)
        var batch = Data()
        var start = 0
        while start < layout.elements.count {
            let end = min(start + batchSize, layout.elements.count)
            batch.removeAll(keepingCapacity: true)
            batch.append(UInt8(ascii: "["))
            for index in start..<end {
                if index > start { batch.append(UInt8(ascii: ",")) }
                append(bytes, layout.elements[index], to: &batch)
            }
            batch.append(UInt8(ascii: "]"))
            files += try decoder.decode([GrantFile].self, from: batch)
            start = end
        }
        grant.files = files
        return grant
    }

    private static func append(_ bytes: UnsafeRawBufferPointer, _ range: Range<Int>, to data: inout Data) {
        guard let base = bytes.baseAddress, !range.isEmpty else { return }
        data.append(base.assumingMemoryBound(to: UInt8.self) + range.lowerBound, count: range.count)
    }

    /// Finds the structure of a JSON object without decoding it: where values start and end. Anything it does not
    /// expect (including a `files` key written with escapes, or twice) makes it give up, and the caller decodes the
    /// whole answer instead.
    struct Scanner {
        let bytes: UnsafeRawBufferPointer
        var index = 0

        init(_ bytes: UnsafeRawBufferPointer) { self.bytes = bytes }

        /// The `files` array of a top-level object and its elements; nil when absent or not followed.
        mutating func grantLayout() -> Layout? {
            skipSpace()
            guard take(UInt8(ascii: "{")) else { return nil }
            var found: Layout?
            while true {
                skipSpace()
                guard let key = string(), !bytes[key].contains(UInt8(ascii: "\\")) else { return nil }
                skipSpace()
                guard take(UInt8(ascii: ":")) else { return nil }
                skipSpace()
                let start = index
                if bytes[key].elementsEqual("files".utf8) {
                    guard found == nil, let elements = arrayElements() else { return nil }
                    found = Layout(files: start..<index, elements: elements)
                } else {
                    guard skipValue() else { return nil }
                }
                skipSpace()
                if take(UInt8(ascii: ",")) { continue }
                guard take(UInt8(ascii: "}")) else { return nil }
                skipSpace()
                return index == bytes.count ? found : nil
            }
        }

        /// Reads an array, returning where each element is.
        private mutating func arrayElements() -> [Range<Int>]? {
            guard take(UInt8(ascii: "[")) else { return nil }
            var elements: [Range<Int>] = []
            skipSpace()
            if take(UInt8(ascii: "]")) { return elements }
            while true {
                skipSpace()
                let start = index
                guard skipValue() else { return nil }
                elements.append(start..<index)
                skipSpace()
                if take(UInt8(ascii: ",")) { continue }
                return take(UInt8(ascii: "]")) ? elements : nil
            }
        }

        /// Moves past one value of any kind (its syntax checked only as far as finding its end).
        private mutating func skipValue() -> Bool {
            guard index < bytes.count else { return false }
            switch bytes[index] {
            case UInt8(ascii: "\""):
                return string() != nil
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                var depth = 0
                while index < bytes.count {
                    switch bytes[index] {
                    case UInt8(ascii: "\""):
                        guard string() != nil else { return false }
                        continue
                    case UInt8(ascii: "{"), UInt8(ascii: "["):
                        depth += 1
                    case UInt8(ascii: "}"), UInt8(ascii: "]"):
                        depth -= 1
                        if depth == 0 {
                            index += 1
                            return true
                        }
                    default:
                        break
                    }
                    index += 1
                }
                return false
            default:
                // A number, true, false or null: up to the next separator.
                let start = index
                while index < bytes.count, !Self.endsScalar(bytes[index]) { index += 1 }
                return index > start
            }
        }

        /// Reads a string; the range of its content (between the quotes, escapes as written).
        private mutating func string() -> Range<Int>? {
            guard take(UInt8(ascii: "\"")) else { return nil }
            let start = index
            while index < bytes.count {
                switch bytes[index] {
                case UInt8(ascii: "\""):
                    index += 1
                    return start..<(index - 1)
                case UInt8(ascii: "\\"):
                    index += 2
                default:
                    index += 1
                }
            }
            return nil
        }

        private static func endsScalar(_ byte: UInt8) -> Bool {
            switch byte {
            case UInt8(ascii: ","), UInt8(ascii: "}"), UInt8(ascii: "]"), UInt8(ascii: " "), 0x09, 0x0A, 0x0D:
                return true
            default:
                return false
            }
        }

        private mutating func skipSpace() {
            while index < bytes.count, bytes[index] == 0x20 || bytes[index] == 0x09 || bytes[index] == 0x0A
                || bytes[index] == 0x0D
            {
                index += 1
            }
        }

        private mutating func take(_ byte: UInt8) -> Bool {
            guard index < bytes.count, bytes[index] == byte else { return false }
            index += 1
            return true
        }
    }
}
