import Foundation
import KioskCore

/// What a ``URLDownload`` knows of the file its bytes on disk belong to, from the answer that brought the first of
/// them: kept next to those bytes (``URLResumeRecord``) so that a later run resumes only the same file.
struct URLRepresentation: Codable, Equatable, Sendable {
    /// The `ETag` field as sent, strong or weak.
    var entityTag: String?
    /// The `Last-Modified` field as sent.
    var lastModified: String?
    /// The complete length, when an answer gave it (`Content-Range`, or `Content-Length` of a 200).
    var length: Int64?
    /// The lowercase hex SHA-256 of `Repr-Digest`, when the server sent one.
    var sha256: String?

    /// The representation an answer describes: its validators, digest and, when it says, the complete length.
    init(_ head: AnswerHead, length: Int64?) {
        entityTag = head["ETag"]
        lastModified = head["Last-Modified"]
        self.length = length
        sha256 = RepresentationDigest.sha256(in: head["Repr-Digest"])
    }

    /// The validator for `If-Range`: a strong `ETag`, or else `Last-Modified` (a weak tag never matches there).
    var ifRange: String? {
        if let entityTag, let tag = EntityTag(parsing: entityTag), !tag.isWeak { return entityTag }
        return lastModified
    }

    /// Why the answer `other` is not of this representation, or nil when nothing it says differs: another strong
    /// tag, another digest, another complete length, or, without a strong tag on both sides, another date.
    func difference(from other: URLRepresentation) -> String? {
        let mine = entityTag.flatMap(EntityTag.init(parsing:)).flatMap { $0.isWeak ? nil : $0 }
        let theirs = other.entityTag.flatMap(EntityTag.init(parsing:)).flatMap { $0.isWeak ? nil : $0 }
        if let mine, let theirs, !mine.matchesStrongly(theirs) {
            return "its ETag went from \(mine.headerValue) to \(theirs.headerValue)"
        }
        if let sha256, let other = other.sha256, sha256 != other { return "its Repr-Digest changed" }
        if let length, let other = other.length, length != other {
            return "its length went from \(length) to \(other) bytes"
        }
        if mine == nil || theirs == nil, let lastModified, let other = other.lastModified, lastModified != other {
            return "its Last-Modified went from \(lastModified) to \(other)"
        }
        return nil
    }
}

/// What is kept next to a download's partial file (`<file>.kiosk-part.json`): where the bytes came from and the
/// representation they belong to. A later run resumes them only for the same scheme, host, port and path (the
/// query may change: a renewed signed URL goes on where the expired one stopped).
struct URLResumeRecord: Codable, Equatable, Sendable {
    /// The format of this record; a record of another format is not used.
    static let currentFormat = 1

    var format: Int
    /// The URL without its query and fragment.
    var location: String
    var representation: URLRepresentation

    init(url: URL, representation: URLRepresentation) {
        format = Self.currentFormat
        location = Self.location(of: url)
        self.representation = representation
    }

    /// `url` without its query and fragment, the resume's key.
    static func location(of url: URL) -> String {
        guard var components = URLComponents(url: url, resolvingAgainstBaseURL: false) else {
            return url.absoluteString
        }
        components.query = nil
        components.fragment = nil
        return components.string ?? url.absoluteString
    }
}
