// libFuzzer target for the HTTP range machinery in KioskCore: `Range`, `If-Range`, `Content-Range`,
// entity-tags, HTTP-dates and the preconditions (`If-Match`, `If-None-Match`, `If-Modified-Since`,
// `If-Unmodified-Since`). Built by scripts/fuzz.sh; see README "Fuzzing".
//
// Input format (text, lines separated by "\n"):
//   line 1: a `Range` field value (also tried as a `Content-Range` value)
//   line 2: an optional `If-Range` field value (also tried as an entity-tag, an entity-tag list and an HTTP-date)
//   line 3: an optional representation length in decimal; the range is also evaluated against fixed lengths
//   lines 4-7: optional `If-Match`, `If-None-Match`, `If-Modified-Since` and `If-Unmodified-Since` field values
//     (absent when the line is missing or empty)
import Foundation
import KioskCore

/// The entity-tag and modification time of the simulated representation; seeds use `"v1-abc"` and this date.
private let representationTag = EntityTag(opaqueTag: "v1-abc")!
/// `Sun, 06 Nov 1994 08:49:37 GMT`, the RFC 9110 example date used by the seeds.
private let representationDate = Date(timeIntervalSince1970: 784_111_777)
/// A fixed "now", so that two-digit RFC 850 years are read the same way on every run.
private let fixedNow = Date(timeIntervalSince1970: 1_795_000_000)
/// Representation lengths every input is evaluated against, including the extremes.
private let fixedLengths: [Int64] = [0, 1, 2, 10, 500, 1000, 1 << 40, .max - 1, .max]

/// Stops the fuzzer with a report when an invariant does not hold.
private func check(_ condition: @autoclosure () -> Bool, _ message: @autoclosure () -> String) {
    if !condition() { fatalError("invariant violated: \(message())") }
}

/// libFuzzer entry point: runs one input through the range parsers, the range evaluator and the precondition
/// evaluation, and checks their invariants.
@_cdecl("LLVMFuzzerTestOneInput")
public func rangeFuzzerTestOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    let lines = text.split(separator: "\n", maxSplits: 6, omittingEmptySubsequences: false).map(String.init)
    let range = lines[0]
    let ifRange = lines.count > 1 && !lines[1].isEmpty ? lines[1] : nil
    var lengths = fixedLengths
    if lines.count > 2, let length = Int64(lines[2]), length >= 0 { lengths.append(length) }
    let field = { (index: Int) in lines.count > index && !lines[index].isEmpty ? lines[index] : nil }
    let preconditions = RequestPreconditions(
        ifMatch: field(3), ifNoneMatch: field(4), ifModifiedSince: field(5), ifUnmodifiedSince: field(6))

    checkRangeHeader(range, lengths: lengths)
    checkContentRange(range)
    for length in lengths {
        for maxRanges in [1, 16] {
            checkEvaluation(range: range, ifRange: ifRange, length: length, maxRanges: maxRanges)
        }
    }
    checkPreconditions(preconditions)
    if let ifRange {
        checkEntityTags(ifRange)
        checkHTTPDate(ifRange)
    }
    [preconditions.ifMatch, preconditions.ifNoneMatch].compactMap { $0 }.forEach(checkEntityTags)
    [preconditions.ifModifiedSince, preconditions.ifUnmodifiedSince].compactMap { $0 }.forEach(checkHTTPDate)
    checkDateFormatting(Array(UnsafeBufferPointer(start: data, count: size)))
    return 0
}

/// A parsed `Range` has 1…max specs in canonical form, re-parses from its canonical printing,
/// and resolves only to ranges inside the representation.
private func checkRangeHeader(_ value: String, lengths: [Int64]) {
    guard let header = RangeHeader(parsing: value) else { return }
    check(!header.specs.isEmpty, "empty spec list for \(value.debugDescription)")
    check(header.specs.count <= RangeHeader.defaultMaximumSpecCount, "too many specs for \(value.debugDescription)")
    let printed = "bytes=" + header.specs.map(canonical).joined(separator: ",")
    check(RangeHeader(parsing: printed, maximumLength: .max) == header, "\(printed) does not round-trip")
    for spec in header.specs {
        switch spec {
        case let .closed(first, last): check(first >= 0 && first <= last, "bad closed spec \(spec)")
        case let .from(first): check(first >= 0, "bad open spec \(spec)")
        case let .suffix(length): check(length >= 0, "bad suffix spec \(spec)")
        }
        for length in lengths {
            guard let resolved = spec.resolved(forLength: length) else { continue }
            check(
                resolved.first >= 0 && resolved.first <= resolved.last && resolved.last < length,
                "\(spec) resolved to \(resolved) outside a \(length)-byte representation")
        }
    }
}

/// The canonical text of a range-spec.
private func canonical(_ spec: RangeSpec) -> String {
    switch spec {
    case let .closed(first, last): "\(first)-\(last)"
    case let .from(first): "\(first)-"
    case let .suffix(length): "-\(length)"
    }
}

/// The evaluator's decision agrees with a straightforward model of RFC 9110 §14.2 and never names
/// bytes outside the representation or more bytes than the representation has.
private func checkEvaluation(range: String, ifRange: String?, length: Int64, maxRanges: Int) {
    let evaluator = RangeRequestEvaluator(maxRanges: maxRanges)
    let representation = RepresentationMetadata(
        length: length, entityTag: representationTag, lastModified: representationDate)
    let head = evaluator.evaluate(method: true, range: range, ifRange: ifRange, representation: representation)
    check(head == .full, "HEAD got \(head)")
    let decision = evaluator.evaluate(method: false, range: range, ifRange: ifRange, representation: representation)
    let unconditional = evaluator.evaluate(method: false, range: range, ifRange: nil, representation: representation)
    check(decision == .full || decision == unconditional, "If-Range changed the ranges: \(decision)")

    let expected: RangeDecision
    if let header = RangeHeader(parsing: range, maximumSpecCount: maxRanges) {
        let ranges = header.specs.compactMap { $0.resolved(forLength: length) }
        let total = ranges.reduce(Int128(0)) { $0 + Int128($1.length) }
        switch ranges.count {
        case 0: expected = .unsatisfiable
        case _ where total > Int128(length): expected = .full
        case 1: expected = .single(ranges[0])
        default: expected = .multiple(ranges)
        }
    } else {
        expected = .full
    }
    check(unconditional == expected, "evaluated \(unconditional), expected \(expected) for length \(length)")

    switch decision {
    case .full, .unsatisfiable:
        break
    case let .single(byteRange):
        check(byteRange.last < length, "\(byteRange) beyond \(length)")
        checkContentRangeRoundTrip(byteRange, length: length)
    case let .multiple(byteRanges):
        check(byteRanges.count >= 2 && byteRanges.count <= maxRanges, "\(byteRanges.count) ranges")
        check(byteRanges.allSatisfy { $0.last < length }, "ranges beyond \(length)")
        check(byteRanges.reduce(Int128(0)) { $0 + Int128($1.length) } <= Int128(length), "ranges longer than \(length)")
        byteRanges.forEach { checkContentRangeRoundTrip($0, length: length) }
    }
}

/// The preconditions agree with a model of RFC 9110 §13.2.2 written from the specification's wording (each field
/// judged on its own, then the first deciding step wins), for a strong tag and for a weak one with a fractional
/// modification time. The server evaluates them before `Range` and `If-Range`, which ``checkEvaluation`` covers.
private func checkPreconditions(_ preconditions: RequestPreconditions) {
    for representation in [
        RepresentationMetadata(length: 1000, entityTag: representationTag, lastModified: representationDate),
        // A fraction of a second that Last-Modified drops, and a weak tag that If-Match never matches.
        RepresentationMetadata(
            length: 10, entityTag: EntityTag(opaqueTag: "v1-abc", isWeak: true)!,
            lastModified: representationDate.addingTimeInterval(0.75)),
    ] {
        let decision = preconditions.evaluate(for: representation, now: fixedNow)
        let expected = modelPreconditions(preconditions, representation: representation)
        check(decision == expected, "preconditions \(preconditions) gave \(decision), expected \(expected)")
    }
}

/// The model: each field's condition from the plain reading of RFC 9110 §13.1.1–13.1.4, then the §13.2.2 steps.
/// Tag matching compares printed forms (`"v1-abc"` or `W/"v1-abc"`), dates compare whole seconds.
private func modelPreconditions(
    _ preconditions: RequestPreconditions, representation: RepresentationMetadata
) -> PreconditionDecision {
    let current = representation.entityTag
    let lastModified = representation.lastModified.timeIntervalSince1970.rounded(.down)
    let strongForm = "\"" + current.opaqueTag + "\""
    /// The listed tags in printed form, `["*"]` for `*`, or nil when the value is not `*` or a list of tags.
    func listed(_ value: String) -> [String]? {
        switch EntityTagList(parsing: value) {
        case nil: nil
        case .any?: ["*"]
        case let .tags(tags)?: tags.map(\.headerValue)
        }
    }
    func date(_ value: String) -> TimeInterval? {
        HTTPDate.parse(value, relativeTo: fixedNow)?.timeIntervalSince1970
    }

    // §13.1.1: true for *, or when a listed tag is the current one by strong comparison (both strong).
    if let value = preconditions.ifMatch {
        let tags = listed(value) ?? []
        let holds = tags.contains("*") || (!current.isWeak && tags.contains(strongForm))
        if !holds { return .preconditionFailed(.ifMatch) }
    } else if let value = preconditions.ifUnmodifiedSince, let since = date(value), !(lastModified <= since) {
        // §13.1.4: true when the last modification is earlier than or equal to the date.
        return .preconditionFailed(.ifUnmodifiedSince)
    }
    // §13.1.2: false for *, or when a listed tag is the current one by weak comparison (weakness disregarded).
    if let value = preconditions.ifNoneMatch {
        let tags = listed(value) ?? []
        let matches = tags.contains("*") || tags.contains(strongForm) || tags.contains("W/" + strongForm)
        if matches { return .notModified(.ifNoneMatch) }
    } else if let value = preconditions.ifModifiedSince, let since = date(value), lastModified <= since {
        // §13.1.3: false when the last modification is earlier than or equal to the date.
        return .notModified(.ifModifiedSince)
    }
    return .proceed
}

/// The `Content-Range` the server would send for a range is read back identically by a client.
private func checkContentRangeRoundTrip(_ byteRange: ByteRange, length: Int64) {
    for value in [
        ContentRange.satisfied(byteRange, completeLength: length),
        .satisfied(byteRange, completeLength: nil), .unsatisfied(completeLength: length),
    ] {
        check(ContentRange(parsing: value.headerValue) == value, "\(value.headerValue) does not round-trip")
    }
}

/// A parsed `Content-Range` is consistent and prints back to a value that parses to itself.
private func checkContentRange(_ value: String) {
    guard let contentRange = ContentRange(parsing: value) else { return }
    if case let .satisfied(byteRange, completeLength?) = contentRange {
        check(byteRange.last < completeLength, "\(value.debugDescription) accepted with last >= length")
    }
    check(ContentRange(parsing: contentRange.headerValue) == contentRange, "\(value.debugDescription) round-trip")
}

/// Parsed entity-tags and lists print back to themselves; strong matching implies weak matching.
private func checkEntityTags(_ value: String) {
    if let tag = EntityTag(parsing: value) {
        check(EntityTag(parsing: tag.headerValue) == tag, "\(tag.headerValue) does not round-trip")
        check(tag.matchesWeakly(tag) && tag.matchesStrongly(tag) == !tag.isWeak, "self-match of \(tag)")
        check(!tag.matchesStrongly(representationTag) || tag.matchesWeakly(representationTag), "strong ⇏ weak")
    }
    switch EntityTagList(parsing: value) {
    case nil:
        break
    case .any?:
        check(
            value.trimmingCharacters(in: CharacterSet(charactersIn: " \t")) == "*", "* from \(value.debugDescription)")
    case let .tags(tags)?:
        check(!tags.isEmpty, "empty tag list")
        let printed = tags.map(\.headerValue).joined(separator: ", ")
        check(EntityTagList(parsing: printed) == .tags(tags), "\(printed) does not round-trip")
        let list = EntityTagList.tags(tags)
        check(!list.matchesStrongly(representationTag) || list.matchesWeakly(representationTag), "list strong ⇏ weak")
    }
}

/// A parsed HTTP-date is a whole second in years 1…9999 and its IMF-fixdate form parses back to it.
private func checkHTTPDate(_ value: String) {
    guard let date = HTTPDate.parse(value, relativeTo: fixedNow) else { return }
    let seconds = date.timeIntervalSince1970
    check(seconds == seconds.rounded(.down), "fractional HTTP-date from \(value.debugDescription)")
    let printed = HTTPDate.format(date)
    check(printed.utf8.count == 29, "IMF-fixdate \(printed) is not 29 bytes")
    check(HTTPDate.parse(printed, relativeTo: fixedNow) == date, "\(printed) does not round-trip")
}

/// Any instant (taken from the input's first 8 bytes) formats to an IMF-fixdate that parses back to the
/// same whole second, clamped to the years 1…9999.
private func checkDateFormatting(_ bytes: [UInt8]) {
    guard bytes.count >= 8 else { return }
    let raw = bytes.prefix(8).reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
    let seconds = Double(Int64(bitPattern: raw) >> 20)  // about ±280 000 years: exercises clamping
    let date = Date(timeIntervalSince1970: seconds)
    let printed = HTTPDate.format(date)
    guard let parsed = HTTPDate.parse(printed, relativeTo: fixedNow) else {
        fatalError("invariant violated: formatted date \(printed) does not parse")
    }
    let clamped = min(max(seconds, -62_135_596_800), 253_402_300_799)
    check(parsed.timeIntervalSince1970 == clamped, "\(seconds) formatted as \(printed), read back as \(parsed)")
}
