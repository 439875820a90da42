import CompressNIO
import Crypto
import Foundation
import KioskCore
import NIOCore

/// One catalog answer as it goes on the wire: its JSON bytes, their gzip form when worth it, and a strong entity
/// tag for each (the gzip bytes are another representation, so they have their own tag).
///
/// The tag is a hash of the JSON, so it is the same across restarts and across instances serving the same content.
public struct CatalogRepresentation: Sendable {
    /// Bodies up to this size are sent as they are: gzip would save little and cost a compression each time.
    static let gzipThreshold = 512

    /// The JSON body.
    public let json: ByteBuffer
    /// The JSON body compressed with gzip; nil for bodies of at most ``gzipThreshold`` bytes.
    public let gzip: ByteBuffer?
    /// The strong tag of ``json``.
    public let entityTag: EntityTag
    /// The strong tag of ``gzip``.
    public let gzipEntityTag: EntityTag

    /// Takes the JSON bytes of an answer, compresses them when they are large enough, and hashes them for the tags.
    init(json: Data) {
        let digest = SHA256.hash(data: json).prefix(16).hexString
        self.json = ByteBuffer(bytes: json)
        // Hex digits and '-' always make a valid opaque tag.
        self.entityTag = EntityTag(opaqueTag: digest)!
        self.gzipEntityTag = EntityTag(opaqueTag: digest + "-gzip")!
        if json.count > Self.gzipThreshold {
            var buffer = self.json
            // Deflating a buffer in memory fails only when zlib cannot allocate: send the JSON as it is then.
            self.gzip = try? buffer.compress(with: .gzip())
        } else {
            self.gzip = nil
        }
    }

    /// The body and tag to send to a client with this `Accept-Encoding` value, and whether it is gzipped.
    func variant(acceptEncoding: String?) -> (body: ByteBuffer, entityTag: EntityTag, isGzip: Bool) {
        if let gzip, Self.acceptsGzip(acceptEncoding) { return (gzip, gzipEntityTag, true) }
        return (json, entityTag, false)
    }

    /// Whether an `Accept-Encoding` value accepts gzip (RFC 9110 §12.5.3): the quality of an explicit `gzip` or
    /// `x-gzip` entry if there is one, otherwise that of `*`, must be above zero.
    static func acceptsGzip(_ value: String?) -> Bool {
        guard let value else { return false }
        var explicit: Double?
        var wildcard: Double?
        for item in value.lowercased().split(separator: ",") {
            let parts = item.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }
            guard let coding = parts.first else { continue }
            let quality = parts.dropFirst().first { $0.hasPrefix("q=") }.map { Double($0.dropFirst(2)) ?? 0 } ?? 1
            switch coding {
            case "gzip", "x-gzip": explicit = max(explicit ?? 0, quality)
            case "*": wildcard = quality
            default: continue
            }
        }
        return (explicit ?? wildcard ?? 0) > 0
    }
}

/// The catalog of one snapshot, encoded once when the snapshot is built: the whole catalog as a
/// ``CatalogRepresentation``, and each product's JSON, from which `?ids=` answers and single products are assembled
/// without encoding products again.
public struct EncodedCatalog: Sendable {
    /// `GET /v1/products`.
    public let all: CatalogRepresentation
    /// Each product's JSON object, by ID.
    private let productJSON: [String: Data]

    /// Encodes `products` (in catalog order).
    init(products: [CatalogProduct]) {
        var byID: [String: Data] = [:]
        byID.reserveCapacity(products.count)
        let encoder = KioskJSON.makeEncoder()
        var fragments: [Data] = []
        fragments.reserveCapacity(products.count)
        for product in products {
            // A product is strings, numbers and a date: encoding it cannot fail.
            let json = (try? encoder.encode(product.product)) ?? Data("{}".utf8)
            byID[product.info.productID] = json
            fragments.append(json)
        }
        self.productJSON = byID
        self.all = CatalogRepresentation(json: Self.assemble(fragments, invalid: []))
    }

    /// The answer for `ids` (unknown IDs listed as invalid, each ID once, in request order): the same bytes as
    /// encoding the ``CatalogResponse``.
    func answer(ids: [String]) -> CatalogRepresentation {
        var seen = Set<String>()
        var fragments: [Data] = []
        var invalid: [String] = []
        for id in ids where seen.insert(id).inserted {
            if let json = productJSON[id] { fragments.append(json) } else { invalid.append(id) }
        }
        return CatalogRepresentation(json: Self.assemble(fragments, invalid: invalid))
    }

    /// `GET /v1/products/{id}`: the product's JSON object, nil for an unknown ID.
    func product(id: String) -> CatalogRepresentation? {
        productJSON[id].map(CatalogRepresentation.init(json:))
    }

    /// `{"invalid_product_ids":[…],"products":[…]}`, keys sorted as ``KioskJSON`` writes them.
    private static func assemble(_ fragments: [Data], invalid: [String]) -> Data {
        var body = Data("{\"invalid_product_ids\":".utf8)
        // An array of strings always encodes.
        body.append((try? KioskJSON.encode(invalid)) ?? Data("[]".utf8))
        body.append(contentsOf: Array(",\"products\":[".utf8))
        for (index, fragment) in fragments.enumerated() {
            if index > 0 { body.append(UInt8(ascii: ",")) }
            body.append(fragment)
        }
        body.append(contentsOf: Array("]}".utf8))
        return body
    }
}
