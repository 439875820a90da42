/// A YAML value, as far as `openapi.yaml` uses YAML: mappings (their keys in order), sequences and scalars (as
/// text, untyped).
indirect enum YAMLValue: Equatable, Sendable {
    /// A scalar's text, unquoted (an empty value is the empty text).
    case scalar(String)
    /// A sequence's items, in order.
    case sequence([YAMLValue])
    /// A mapping.
    case mapping(YAMLMapping)

    /// The value at `key` of a mapping; nil for a missing key or a value that is not a mapping.
    subscript(key: String) -> YAMLValue? {
        guard case .mapping(let mapping) = self else { return nil }
        return mapping.values[key]
    }

    /// The mapping's keys, in the document's order; empty for a value that is not a mapping.
    var keys: [String] {
        guard case .mapping(let mapping) = self else { return [] }
        return mapping.keys
    }

    /// The text of a scalar; nil otherwise.
    var text: String? {
        guard case .scalar(let text) = self else { return nil }
        return text
    }

    /// The texts of a sequence of scalars; nil for anything else.
    var texts: [String]? {
        guard case .sequence(let items) = self else { return nil }
        let texts = items.compactMap(\.text)
        return texts.count == items.count ? texts : nil
    }
}

/// A YAML mapping: its keys in order, and their values.
struct YAMLMapping: Equatable, Sendable {
    /// The keys, in the document's order.
    var keys: [String] = []
    /// The values, by key.
    var values: [String: YAMLValue] = [:]
}

/// A reader of the YAML subset `openapi.yaml` is written in, enough for the tests that compare it with the server:
/// block mappings and sequences (a sequence entry may open a mapping on its line), literal and folded block scalars
/// (`|`, `|-`, `>`, `>-`), single-line flow sequences and mappings, plain, single-quoted and double-quoted scalars,
/// and comments. Anything else (anchors, aliases, tags, multi-line flow or quoted scalars, plain scalars continued on
/// the next line) is refused with the line it is on, so the document cannot silently mean something else here than
/// in a full YAML parser.
struct MinimalYAML {
    /// Why a document is not read.
    struct Failure: Error, CustomStringConvertible {
        /// The 1-based line.
        var line: Int
        /// What is wrong.
        var problem: String
        /// What a failed test shows.
        var description: String { "openapi.yaml line \(line): \(problem)" }
    }

    /// A line with content: its number, its indentation and its text without indentation or comment.
    private struct Line {
        /// The 1-based line number.
        var number: Int
        /// How many spaces it starts with.
        var indent: Int
        /// The rest, without a comment or trailing spaces.
        var text: String
    }

    /// The lines with content; a sequence entry that opens a mapping is rewritten as that mapping's first line.
    private var lines: [Line] = []
    /// Every line of the document, comments and all, for block scalars.
    private let raw: [Substring]
    /// The next line of ``lines`` to read.
    private var index = 0

    /// Reads `text`, a document whose root is a mapping.
    static func parse(_ text: String) throws -> YAMLValue {
        var reader = MinimalYAML(raw: text.split(separator: "\n", omittingEmptySubsequences: false))
        try reader.prepare()
        guard let first = reader.lines.first else { return .mapping(YAMLMapping()) }
        let value = try reader.block(indent: first.indent)
        if reader.index < reader.lines.count {
            throw Failure(line: reader.lines[reader.index].number, problem: "unexpected indentation")
        }
        return value
    }

    /// A reader of these raw lines.
    private init(raw: [Substring]) { self.raw = raw }

    /// The lines with content, comments removed; a tab in the indentation is refused.
    private mutating func prepare() throws {
        for (offset, rawLine) in raw.enumerated() {
            let indent = rawLine.prefix { $0 == " " }.count
            let body = rawLine.dropFirst(indent)
            if body.hasPrefix("\t") { throw Failure(line: offset + 1, problem: "a tab in the indentation") }
            let text = Self.withoutComment(String(body)).trimmingTrailingSpaces()
            guard !text.isEmpty else { continue }
            lines.append(Line(number: offset + 1, indent: indent, text: text))
        }
    }

    /// `text` without a comment: a `#` at its start or after a space, outside quotes.
    private static func withoutComment(_ text: String) -> String {
        var quote: Character?
        var previous: Character = " "
        for (offset, character) in text.enumerated() {
            if let open = quote {
                if character == open { quote = nil }
            } else if character == "'" || character == "\"" {
                if previous == " " || previous == "[" || previous == "{" || previous == "," || previous == ":" {
                    quote = character
                }
            } else if character == "#" && previous == " " {
                return String(text.prefix(offset))
            }
            previous = character
        }
        return text
    }

    /// The block node starting at the current line, whose lines are indented by `indent`.
    private mutating func block(indent: Int) throws -> YAMLValue {
        let line = lines[index]
        guard line.indent == indent else { throw Failure(line: line.number, problem: "unexpected indentation") }
        return line.text == "-" || line.text.hasPrefix("- ")
            ? try sequence(indent: indent) : try mapping(indent: indent)
    }

    /// The block sequence whose `- ` entries are indented by `indent`.
    private mutating func sequence(indent: Int) throws -> YAMLValue {
        var items: [YAMLValue] = []
        while index < lines.count, lines[index].indent == indent,
            lines[index].text == "-" || lines[index].text.hasPrefix("- ")
        {
            let line = lines[index]
            let rest = String(line.text.dropFirst(1).drop { $0 == " " })
            if rest.isEmpty {
                index += 1
                items.append(try nested(under: line))
            } else if Self.keySplit(rest) != nil && !rest.hasPrefix("[") && !rest.hasPrefix("{") {
                // `- key: value`: a mapping whose keys are indented as far as its first key.
                lines[index] = Line(number: line.number, indent: line.indent + line.text.count - rest.count, text: rest)
                items.append(try mapping(indent: lines[index].indent))
            } else {
                index += 1
                items.append(try Self.inline(rest, line: line.number))
            }
        }
        return .sequence(items)
    }

    /// The block mapping whose keys are indented by `indent`.
    private mutating func mapping(indent: Int) throws -> YAMLValue {
        var mapping = YAMLMapping()
        while index < lines.count, lines[index].indent == indent {
            let line = lines[index]
            guard !line.text.hasPrefix("- "), let (rawKey, rest) = Self.keySplit(line.text) else {
                throw Failure(line: line.number, problem: "expected `key: value`")
            }
            let key = try Self.scalar(rawKey, line: line.number)
            guard mapping.values[key] == nil else { throw Failure(line: line.number, problem: "key \(key) twice") }
            index += 1
            let value: YAMLValue
            switch rest {
            case "":
                value = try nested(under: line, allowingSequenceAtSameIndent: true)
            case "|", "|-", ">", ">-":
                value = blockScalar(style: rest, under: line)
            default:
                value = try Self.inline(rest, line: line.number)
            }
            mapping.keys.append(key)
            mapping.values[key] = value
        }
        return .mapping(mapping)
    }

    /// The node after a line that ends with `key:` or `-`: a deeper block (or, after a key, a sequence at the key's
    /// indentation); an empty scalar when there is none.
    private mutating func nested(under line: Line, allowingSequenceAtSameIndent: Bool = false) throws -> YAMLValue {
        guard index < lines.count else { return .scalar("") }
        let next = lines[index]
        if next.indent > line.indent { return try block(indent: next.indent) }
        if allowingSequenceAtSameIndent, next.indent == line.indent, next.text == "-" || next.text.hasPrefix("- ") {
            return try sequence(indent: next.indent)
        }
        return .scalar("")
    }

    /// A literal (`|`) or folded (`>`) block scalar: the raw lines indented deeper than `line`, blank ones included.
    private mutating func blockScalar(style: String, under line: Line) -> YAMLValue {
        var collected: [Substring] = []
        var rawIndex = line.number  // The raw line after `line` (numbers are 1-based).
        var contentIndent: Int?
        while rawIndex < raw.count {
            let rawLine = raw[rawIndex]
            let indent = rawLine.prefix { $0 == " " }.count
            let isBlank = rawLine.allSatisfy { $0 == " " }
            if !isBlank && indent <= line.indent { break }
            if !isBlank && contentIndent == nil { contentIndent = indent }
            collected.append(isBlank ? "" : rawLine.dropFirst(min(indent, contentIndent ?? indent)))
            rawIndex += 1
        }
        while index < lines.count, lines[index].number <= rawIndex { index += 1 }
        while collected.last?.isEmpty == true { collected.removeLast() }
        let separator = style.hasPrefix(">") ? " " : "\n"
        let text = collected.joined(separator: separator) + (style.hasSuffix("-") ? "" : "\n")
        return .scalar(text)
    }

    /// `key` and the rest of `text` after its `: ` (or a final `:`), outside quotes and brackets; nil when `text`
    /// is not a key and value.
    private static func keySplit(_ text: String) -> (key: String, rest: String)? {
        var quote: Character?
        var depth = 0
        let characters = Array(text)
        for (offset, character) in characters.enumerated() {
            if let open = quote {
                if character == open { quote = nil }
                continue
            }
            switch character {
            case "'" where offset == 0, "\"" where offset == 0: quote = character
            case "[", "{": depth += 1
            case "]", "}": depth -= 1
            case ":" where depth == 0 && (offset + 1 == characters.count || characters[offset + 1] == " "):
                let rest = String(characters[(offset + 1)...]).drop { $0 == " " }
                return (String(characters[..<offset]), String(rest))
            default: break
            }
        }
        return nil
    }

    /// A value written on its key's or entry's line: a flow collection or a scalar.
    private static func inline(_ text: String, line: Int) throws -> YAMLValue {
        if text.hasPrefix("[") || text.hasPrefix("{") {
            var flow = FlowReader(characters: Array(text), line: line)
            let value = try flow.value()
            flow.skipSpaces()
            guard flow.isAtEnd else { throw Failure(line: line, problem: "text after a flow collection") }
            return value
        }
        return .scalar(try scalar(text, line: line))
    }

    /// The text of a plain or quoted scalar.
    static func scalar(_ text: String, line: Int) throws -> String {
        if let first = text.first, "&*!|>%@`".contains(first) {
            throw Failure(line: line, problem: "unsupported YAML: \(text.prefix(20))")
        }
        if text.hasPrefix("'") {
            guard text.count >= 2, text.hasSuffix("'") else { throw Failure(line: line, problem: "unclosed quote") }
            return String(text.dropFirst().dropLast()).replacingOccurrences(of: "''", with: "'")
        }
        if text.hasPrefix("\"") {
            guard text.count >= 2, text.hasSuffix("\"") else { throw Failure(line: line, problem: "unclosed quote") }
            let inner = String(text.dropFirst().dropLast())
            guard !inner.contains("\\") else { throw Failure(line: line, problem: "unsupported escape in \(text)") }
            return inner
        }
        return text
    }

    /// Reads a single-line flow collection: `[a, 'b', {c: d}]`.
    private struct FlowReader {
        /// The text of the line, from the collection's opening bracket.
        let characters: [Character]
        /// The line's number, for failures.
        let line: Int
        /// The next character to read.
        var position = 0

        /// Whether every character was read.
        var isAtEnd: Bool { position >= characters.count }

        /// Moves past spaces.
        mutating func skipSpaces() { while !isAtEnd, characters[position] == " " { position += 1 } }

        /// The collection or scalar that starts here.
        mutating func value() throws -> YAMLValue {
            skipSpaces()
            guard !isAtEnd else { throw Failure(line: line, problem: "unfinished flow collection") }
            switch characters[position] {
            case "[":
                position += 1
                var items: [YAMLValue] = []
                while try !closes("]") {
                    items.append(try value())
                    try separator(closing: "]")
                }
                return .sequence(items)
            case "{":
                position += 1
                var mapping = YAMLMapping()
                while try !closes("}") {
                    let key = try scalarText(stoppingAt: ":")
                    guard !isAtEnd, characters[position] == ":" else {
                        throw Failure(line: line, problem: "expected `:` in a flow mapping")
                    }
                    position += 1
                    mapping.keys.append(key)
                    mapping.values[key] = try value()
                    try separator(closing: "}")
                }
                return .mapping(mapping)
            default:
                return .scalar(try scalarText(stoppingAt: ",]}"))
            }
        }

        /// Whether the collection closes here with `bracket` (consumed).
        mutating func closes(_ bracket: Character) throws -> Bool {
            skipSpaces()
            guard !isAtEnd else { throw Failure(line: line, problem: "unclosed flow collection") }
            if characters[position] == bracket {
                position += 1
                return true
            }
            return false
        }

        /// A `,` between entries, or the closing bracket next.
        mutating func separator(closing bracket: Character) throws {
            skipSpaces()
            guard !isAtEnd else { throw Failure(line: line, problem: "unclosed flow collection") }
            if characters[position] == "," {
                position += 1
            } else if characters[position] != bracket {
                throw Failure(line: line, problem: "expected `,` or `\(bracket)`")
            }
        }

        /// A plain or quoted scalar, up to one of `stops` outside quotes.
        mutating func scalarText(stoppingAt stops: String) throws -> String {
            skipSpaces()
            let start = position
            if !isAtEnd, characters[position] == "'" || characters[position] == "\"" {
                let quote = characters[position]
                position += 1
                while !isAtEnd, characters[position] != quote { position += 1 }
                guard !isAtEnd else { throw Failure(line: line, problem: "unclosed quote") }
                position += 1
            } else {
                while !isAtEnd, !stops.contains(characters[position]) { position += 1 }
            }
            let text = String(characters[start..<position]).trimmingTrailingSpaces()
            return try MinimalYAML.scalar(text, line: line)
        }
    }
}

extension String {
    /// The string without the spaces at its end.
    fileprivate func trimmingTrailingSpaces() -> String {
        var text = self
        while text.last == " " { text.removeLast() }
        return text
    }
}
