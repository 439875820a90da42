/// An entity-tag validator (RFC 9110 §8.8.3): an opaque quoted string, optionally marked weak with `W/`.
///
/// `==` compares the exact form (weakness included). Use ``matchesStrongly(_:)`` or
/// ``matchesWeakly(_:)`` for the RFC 9110 §8.8.3.2 comparison functions.
public struct EntityTag: Sendable, Hashable {
    /// The longest field value (in UTF-8 bytes) that the parsers look at; longer values are rejected.
    public static let maximumFieldLength = 8 * 1024

    /// The characters between the double quotes.
    public let opaqueTag: String
    /// Whether the tag is weak (`W/"…"`).
    public let isWeak: Bool

    /// Creates a tag, or returns `nil` if `opaqueTag` contains a character not allowed in an
    /// entity-tag (`etagc`: `!`, `#`–`~`, or non-ASCII; no space, `"` or control characters).
    public init?(opaqueTag: String, isWeak: Bool = false) {
        guard opaqueTag.utf8.allSatisfy(\.isEntityTagCharacter) else { return nil }
        self.opaqueTag = opaqueTag
        self.isWeak = isWeak
    }

    /// Parses a single `entity-tag` (`"xyz"` or `W/"xyz"`), ignoring surrounding optional whitespace.
    /// The weakness indicator `W/` is case-sensitive, as the grammar specifies.
    public init?(parsing value: String) {
        guard var scanner = ASCIIScanner(value, maximumLength: Self.maximumFieldLength),
              let tag = scanner.scanEntityTag(), scanner.isAtEnd
        else { return nil }
        self = tag
    }

    /// The strong entity tag of a content file: its lowercase hex SHA-256 in quotes, so that a changed file always
    /// gets a new tag. The server sends it; a client that knows a file's SHA-256 from its grant asks `If-Range`
    /// with it. `nil` for a string that is not made of entity-tag characters.
    public static func content(sha256: String) -> EntityTag? { EntityTag(opaqueTag: sha256.lowercased()) }

    /// The field value form: `"xyz"` or `W/"xyz"`.
    public var headerValue: String {
        (isWeak ? "W/\"" : "\"") + opaqueTag + "\""
    }

    /// Strong comparison: both tags are strong and their opaque-tags are identical.
    public func matchesStrongly(_ other: EntityTag) -> Bool {
        !isWeak && !other.isWeak && opaqueTag == other.opaqueTag
    }

    /// Weak comparison: the opaque-tags are identical, whether either tag is weak or not.
    public func matchesWeakly(_ other: EntityTag) -> Bool {
        opaqueTag == other.opaqueTag
    }
}

/// The value of an `If-Match` or `If-None-Match` field: `*` or a list of entity-tags (RFC 9110 §13.1.1–13.1.2).
public enum EntityTagList: Sendable, Hashable {
    /// `*`: matches any current representation.
    case any
    /// One or more entity-tags, in field order.
    case tags([EntityTag])

    /// Parses `"*" / 1#entity-tag`, tolerating empty list elements and optional whitespace around commas.
    /// Returns `nil` for a malformed value, an empty list, or `*` mixed with tags.
    public init?(parsing value: String) {
        guard var scanner = ASCIIScanner(value, maximumLength: EntityTag.maximumFieldLength) else { return nil }
        if scanner.consume(.asterisk) {
            guard scanner.isAtEnd else { return nil }
            self = .any
            return
        }
        var tags: [EntityTag] = []
        var expectingTag = true
        while !scanner.isAtEnd {
            if scanner.consume(.comma) {
                scanner.skipOptionalWhitespace()
                expectingTag = true
                continue
            }
            guard expectingTag, let tag = scanner.scanEntityTag() else { return nil }
            tags.append(tag)
            expectingTag = false
            scanner.skipOptionalWhitespace()
        }
        guard !tags.isEmpty else { return nil }
        self = .tags(tags)
    }

    /// `If-None-Match` evaluation: whether `tag` (the current representation's) matches the list
    /// by weak comparison; `*` matches any tag.
    public func matchesWeakly(_ tag: EntityTag) -> Bool {
        switch self {
        case .any: true
        case let .tags(tags): tags.contains { $0.matchesWeakly(tag) }
        }
    }

    /// `If-Match` evaluation: whether `tag` (the current representation's) matches the list
    /// by strong comparison; `*` matches any tag.
    public func matchesStrongly(_ tag: EntityTag) -> Bool {
        switch self {
        case .any: true
        case let .tags(tags): tags.contains { $0.matchesStrongly(tag) }
        }
    }
}

extension UInt8 {
    /// `etagc = %x21 / %x23-7E / obs-text` (RFC 9110 §8.8.3).
    fileprivate var isEntityTagCharacter: Bool {
        self == 0x21 || (0x23...0x7E).contains(self) || self >= 0x80
    }
}

extension ASCIIScanner {
    /// Reads `entity-tag = [ weak ] opaque-tag` with `weak = %s"W/"` and `opaque-tag = DQUOTE *etagc DQUOTE`.
    fileprivate mutating func scanEntityTag() -> EntityTag? {
        let isWeak = consume(exactly: "W/")
        guard consume(.quote) else { return nil }
        let opaque = scanRun(while: \.isEntityTagCharacter)
        guard consume(.quote) else { return nil }
        return EntityTag(opaqueTag: String(decoding: opaque, as: UTF8.self), isWeak: isWeak)
    }
}
