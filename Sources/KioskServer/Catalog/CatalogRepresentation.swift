import CompressNIO
import Crypto
import Foundation
import HTTPTypes
import KioskCore
import NIOConcurrencyHelpers
import NIOCore

/// One catalog answer as it goes on the wire: its JSON bytes, their gzip form when worth it, and a strong entity
/// tag for each (the gzip bytes are another representation, so they have their own tag), with the headers each is
/// sent with, made once.
///
/// The tag is a hash of the JSON, so it is the same across restarts and across instances serving the same content.
/// A class: every answer to a catalog request passes one around, which costs a single reference count, not one per
/// body and header of its variants.
public final class CatalogRepresentation: Sendable {
    /// Bodies up to this size are sent as they are: gzip would save little and cost a compression each time.
    static let gzipThreshold = 512
    /// The catalog is public and changes at most once per reload: caches may keep an answer for 10 s (the default
    /// reload interval), then serve it for up to a minute more while they revalidate it with its `ETag`.
    static let cacheControl = "public, max-age=10, stale-while-revalidate=60"

    /// One of the bodies and its answers, made once.
    final class Variant: Sendable {
        /// The bytes.
        let body: ByteBuffer
        /// Their strong tag.
        let entityTag: EntityTag
        /// The tag as the `ETag` header carries it (what most clients send back in `If-None-Match`).
        let entityTagHeader: String
        /// The 304 for this variant: `ETag`, `Cache-Control`, `Vary`.
        let notModified: ReadyAnswer
        /// The 200 with this body.
        let ok: ReadyAnswer
        /// The 200 to HEAD: the headers of ``ok`` with the body's `Content-Length`, and no body.
        let headOnly: ReadyAnswer

        init(body: ByteBuffer, entityTag: EntityTag, isGzip: Bool) {
            self.body = body
            self.entityTag = entityTag
            self.entityTagHeader = entityTag.headerValue
            let notModified: HTTPFields = [
                .eTag: entityTagHeader, .cacheControl: CatalogRepresentation.cacheControl,
                .vary: "Accept-Encoding",
            ]
            var headers = notModified
            headers[.contentType] = "application/json; charset=utf-8"
            if isGzip { headers[.contentEncoding] = "gzip" }
            self.notModified = ReadyAnswer(status: .notModified, headers: notModified, body: nil)
            self.ok = ReadyAnswer(status: .ok, headers: headers, body: body)
            headers[.contentLength] = String(body.readableBytes)
            self.headOnly = ReadyAnswer(status: .ok, headers: headers, body: nil)
        }
    }

    /// The JSON body.
    public var json: ByteBuffer { identity.body }
    /// The JSON body compressed with gzip; nil for bodies of at most ``gzipThreshold`` bytes.
    public var gzip: ByteBuffer? { gzipped?.body }
    /// The strong tag of ``json``.
    public var entityTag: EntityTag { identity.entityTag }
    private let identity: Variant
    private let gzipped: Variant?

    /// Takes the JSON bytes of an answer, compresses them when they are large enough, and hashes them for the tags.
    init(json: Data) {
        let digest = SHA256.hash(data: json).prefix(16).hexString
        let body = ByteBuffer(bytes: json)
        // Hex digits and '-' always make a valid opaque tag.
        self.identity = Variant(body: body, entityTag: EntityTag(opaqueTag: digest)!, isGzip: false)
        var buffer = body
        // Deflating a buffer in memory fails only when zlib cannot allocate: send the JSON as it is then.
        if json.count > Self.gzipThreshold, let compressed = try? buffer.compress(with: .gzip()) {
            self.gzipped = Variant(body: compressed, entityTag: EntityTag(opaqueTag: digest + "-gzip")!, isGzip: true)
        } else {
            self.gzipped = nil
        }
    }

    /// The variant to send to a client with this `Accept-Encoding` value.
    func variant(acceptEncoding: String?) -> Variant {
        if let gzipped, ContentNegotiation.acceptsGzip(acceptEncoding) { return gzipped }
        return identity
    }
}

/// The catalog of one snapshot, encoded once when the snapshot is built: the whole catalog as a
/// ``CatalogRepresentation``, and each product's JSON, from which `?ids=` answers, pages, change-feed answers and
/// single products are assembled without encoding products again. Assembled answers are kept in a small cache of
/// this snapshot, so a burst of identical requests (apps launching after a push) pays the hash and gzip once.
///
/// A class, read by every catalog request: handing it out of the snapshot costs one reference count.
public final class EncodedCatalog: Sendable {
    /// `GET /v1/products`.
    public let all: CatalogRepresentation
    /// The opaque tag of ``all``'s JSON: the catalog's identity, which the change feed's `since` names.
    let tag: String
    /// Each product's JSON object, by ID.
    let productJSON: [String: Data]
    /// Each product's catalog position and JSON, in catalog order.
    private let keys: [CatalogKey]
    private let fragments: [Data]
    /// Each product's index in ``keys``, by ID.
    private let index: [String: Int]
    /// Assembled answers of this snapshot.
    let answers = AnswerCache(capacity: 32)
    /// Single products' answers (hashed, compressed and encoded the first time one is asked for): a new issue's
    /// page is asked for by every app at once.
    private let productAnswers = AnswerCache(capacity: 1024)
    /// What changed since each `since` tag the change feed was asked for, up to this snapshot.
    let changeSets = CatalogChangeSets()

    /// Encodes `products` (in catalog order).
    init(products: [CatalogProduct]) {
        var byID: [String: Data] = [:]
        var index: [String: Int] = [:]
        byID.reserveCapacity(products.count)
        index.reserveCapacity(products.count)
        let encoder = KioskJSON.makeEncoder()
        var fragments: [Data] = []
        fragments.reserveCapacity(products.count)
        for product in products {
            // A product is strings, numbers and a date: encoding it cannot fail.
            let json = (try? encoder.encode(product.product)) ?? Data("{}".utf8)
            byID[product.info.productID] = json
            index[product.info.productID] = fragments.count
            fragments.append(json)
        }
        self.productJSON = byID
        self.index = index
        self.keys = products.map(CatalogKey.init)
        self.fragments = fragments
        self.all = CatalogRepresentation(json: Self.assemble(fragments, invalid: []))
        self.tag = all.entityTag.opaqueTag
    }

    /// The answer for `ids` (unknown IDs listed as invalid, each ID once, in request order): the same bytes as
    /// encoding the ``CatalogResponse``.
    func answer(ids: [String]) -> CatalogRepresentation {
        answers.representation(for: "i\u{0}" + ids.joined(separator: ",")) { selectionJSON(ids: ids) }
    }

    /// The JSON of the answer for `ids`.
    func selectionJSON(ids: [String]) -> Data {
        var seen = Set<String>()
        var fragments: [Data] = []
        var invalid: [String] = []
        for id in ids where seen.insert(id).inserted {
            if let json = productJSON[id] { fragments.append(json) } else { invalid.append(id) }
        }
        return Self.assemble(fragments, invalid: invalid)
    }

    /// `GET /v1/products/{id}`: the product's JSON object, nil for an unknown ID.
    func product(id: String) -> CatalogRepresentation? {
        productJSON[id].map { json in productAnswers.representation(for: id) { json } }
    }

    /// The index of the first product after `key` in catalog order (0 for nil).
    func firstIndex(after key: CatalogKey?) -> Int {
        guard let key else { return 0 }
        var (low, high) = (0, keys.count)
        while low < high {
            let middle = (low + high) / 2
            if keys[middle] <= key { low = middle + 1 } else { high = middle }
        }
        return low
    }

    /// The number of products.
    var count: Int { keys.count }
    /// The catalog position of the product at `position`.
    func key(at position: Int) -> CatalogKey { keys[position] }
    /// The JSON of the product at `position`.
    func fragment(at position: Int) -> Data { fragments[position] }
    /// The position of a product, nil when it is not in this snapshot.
    func position(of id: String) -> Int? { index[id] }

    /// A page of the catalog: at most `limit` products after `cursor`, and the cursor of the next page unless this
    /// is the last one. The shape of ``CatalogResponse`` with `next_cursor`.
    /// `cursorText` is the cursor as sent, which names the answer in the snapshot's cache.
    func page(after cursor: CatalogCursor, cursorText: String?, limit: Int) -> CatalogRepresentation {
        answers.representation(for: "p\u{0}\(limit)\u{0}" + (cursorText ?? "")) {
            let start = firstIndex(after: cursor.key)
            let end = min(start + limit, keys.count)
            let next = end < keys.count ? CatalogCursor(after: keys[end - 1]).encoded : nil
            return Self.assemble(Array(fragments[start..<end]), invalid: [], nextCursor: next)
        }
    }

    /// `{"invalid_product_ids":[…],"next_cursor":"…","products":[…]}`, keys sorted as ``KioskJSON`` writes them;
    /// `next_cursor` only when given.
    private static func assemble(_ fragments: [Data], invalid: [String], nextCursor: String? = nil) -> Data {
        var body = Data("{\"invalid_product_ids\":".utf8)
        // An array of strings always encodes.
        body.append((try? KioskJSON.encode(invalid)) ?? Data("[]".utf8))
        if let nextCursor { body.appendJSONField("next_cursor", string: nextCursor) }
        body.append(contentsOf: Array(",\"products\":".utf8))
        body.appendJSONArray(fragments)
        body.append(UInt8(ascii: "}"))
        return body
    }
}

/// The answers assembled from one snapshot (`?ids=`, pages, change-feed answers, single products), by request: at
/// most ``capacity`` of them, the oldest dropped first. Each answer is at most a few hundred products, so the cache
/// stays within a few MiB.
final class AnswerCache: Sendable {
    /// How many answers are kept.
    let capacity: Int
    private let state = NIOLockedValueBox<(answers: [String: CatalogRepresentation], order: [String])>(([:], []))

    init(capacity: Int) {
        self.capacity = capacity
    }

    /// The cached answer for `key`, or the one `build` makes (built outside the lock, then kept; nothing is kept
    /// when it throws).
    func representation(for key: String, build: () throws -> Data) rethrows -> CatalogRepresentation {
        if let known = state.withLockedValue({ $0.answers[key] }) { return known }
        let built = CatalogRepresentation(json: try build())
        state.withLockedValue { state in
            guard state.answers.updateValue(built, forKey: key) == nil else { return }
            state.order.append(key)
            if state.order.count > capacity { state.answers[state.order.removeFirst()] = nil }
        }
        return built
    }
}

extension Data {
    /// Appends `,"name":"value"` (the value JSON-escaped).
    mutating func appendJSONField(_ name: String, string value: String) {
        append(contentsOf: Array(",\"\(name)\":".utf8))
        // A string always encodes.
        append((try? KioskJSON.encode(value)) ?? Data("\"\"".utf8))
    }

    /// Appends `[a,b,…]` from JSON fragments.
    mutating func appendJSONArray(_ fragments: some Sequence<Data>) {
        append(UInt8(ascii: "["))
        var first = true
        for fragment in fragments {
            if !first { append(UInt8(ascii: ",")) }
            first = false
            append(fragment)
        }
        append(UInt8(ascii: "]"))
    }
}
