import Foundation

/// A conditional request header field (RFC 9110 §13.1).
public enum ConditionalField: String, Sendable, Hashable, CaseIterable {
    /// `If-Match` (§13.1.1).
    case ifMatch = "If-Match"
    /// `If-None-Match` (§13.1.2).
    case ifNoneMatch = "If-None-Match"
    /// `If-Modified-Since` (§13.1.3).
    case ifModifiedSince = "If-Modified-Since"
    /// `If-Unmodified-Since` (§13.1.4).
    case ifUnmodifiedSince = "If-Unmodified-Since"
}

/// How to answer a GET or HEAD request as far as its preconditions are concerned (RFC 9110 §13.2.2, steps 1–4).
public enum PreconditionDecision: Sendable, Hashable {
    /// Every precondition sent holds (or none was sent): go on to `Range` and `If-Range` (step 5) and answer.
    case proceed
    /// 304 (Not Modified): the client's copy is current, as this `If-None-Match` or `If-Modified-Since` showed.
    case notModified(ConditionalField)
    /// 412 (Precondition Failed): this `If-Match` or `If-Unmodified-Since` does not hold.
    case preconditionFailed(ConditionalField)
}

/// The preconditions of a GET or HEAD request: its `If-Match`, `If-None-Match`, `If-Modified-Since` and
/// `If-Unmodified-Since` field values, as received (RFC 9110 §13.1).
///
/// ``evaluate(for:now:)`` applies them in the order of RFC 9110 §13.2.2, before any `Range` or `If-Range`:
///
/// 1. `If-Match` present: it must match the representation's tag by strong comparison (`*` matches any);
///    otherwise 412. A value that does not parse as `*` or a list of entity-tags matches nothing.
/// 2. `If-Match` absent and `If-Unmodified-Since` a valid HTTP-date: `Last-Modified` must not be later; otherwise
///    412. An invalid date (a list of dates included) is ignored.
/// 3. `If-None-Match` present: if it matches by weak comparison (`*` matches any), 304. A value that does not
///    parse matches nothing.
/// 4. `If-None-Match` absent and `If-Modified-Since` a valid HTTP-date: if `Last-Modified` is not later, 304.
///    An invalid date (a list of dates included) is ignored.
///
/// Dates are compared in whole seconds, as `Last-Modified` is sent. Several fields of the same name are read as
/// one comma-separated value, as HTTP combines them: a list of tags, or an invalid date.
public struct RequestPreconditions: Sendable, Hashable {
    /// The `If-Match` field value, if present.
    public var ifMatch: String?
    /// The `If-None-Match` field value, if present.
    public var ifNoneMatch: String?
    /// The `If-Modified-Since` field value, if present.
    public var ifModifiedSince: String?
    /// The `If-Unmodified-Since` field value, if present.
    public var ifUnmodifiedSince: String?

    /// Creates the preconditions of a request from its field values (nil: the field is absent).
    public init(
        ifMatch: String? = nil, ifNoneMatch: String? = nil, ifModifiedSince: String? = nil,
        ifUnmodifiedSince: String? = nil
    ) {
        self.ifMatch = ifMatch
        self.ifNoneMatch = ifNoneMatch
        self.ifModifiedSince = ifModifiedSince
        self.ifUnmodifiedSince = ifUnmodifiedSince
    }

    /// Evaluates the preconditions of a GET or HEAD request against `representation`, the one the response would
    /// describe (its validators as sent), in the order of RFC 9110 §13.2.2.
    ///
    /// - Parameters:
    ///   - representation: the representation, with the `ETag` and `Last-Modified` the response would carry.
    ///   - now: the current time, which places the two-digit years of obsolete RFC 850 dates.
    /// - Returns: ``PreconditionDecision/proceed``, or the 304 or 412 answer and the field that decided it.
    public func evaluate(for representation: RepresentationMetadata, now: Date) -> PreconditionDecision {
        let lastModified = HTTPDate.wholeSeconds(of: representation.lastModified)
        if let ifMatch {
            let matches = EntityTagList(parsing: ifMatch)?.matchesStrongly(representation.entityTag) ?? false
            if !matches { return .preconditionFailed(.ifMatch) }
        } else if let ifUnmodifiedSince, let date = HTTPDate.parseSeconds(ifUnmodifiedSince, relativeTo: now),
            lastModified > date
        {
            return .preconditionFailed(.ifUnmodifiedSince)
        }
        if let ifNoneMatch {
            if EntityTagList(parsing: ifNoneMatch)?.matchesWeakly(representation.entityTag) == true {
                return .notModified(.ifNoneMatch)
            }
        } else if let ifModifiedSince, let date = HTTPDate.parseSeconds(ifModifiedSince, relativeTo: now),
            lastModified <= date
        {
            return .notModified(.ifModifiedSince)
        }
        return .proceed
    }
}
