import Foundation

/// The body of `POST /v1/downloads`: a proof of purchase, the product wanted and, optionally, the installation
/// asking.
public struct GrantRequest: Codable, Sendable, Hashable {
    /// The receipt or signed transaction that pays for the product.
    public var proof: PurchaseProof
    /// The product to download.
    public var productID: String
    /// A stable ID of the app installation asking (a UUID the app keeps); the server caps how many installations
    /// one purchase may serve.
    public var installationID: String?

    /// Creates a request.
    public init(proof: PurchaseProof, productID: String, installationID: String? = nil) {
        self.proof = proof
        self.productID = productID
        self.installationID = installationID
    }

    /// Creates a request with a base64 receipt.
    public init(receiptData: String, productID: String) {
        self.init(proof: .receipt(receiptData), productID: productID)
    }

    enum CodingKeys: String, CodingKey {
        case productID = "product_id"
        case installationID = "installation_id"
    }

    /// Decodes `{"receipt-data" | "signed_transaction", "product_id", "installation_id"?}`.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        productID = try container.decode(String.self, forKey: .productID)
        installationID = try container.decodeIfPresent(String.self, forKey: .installationID)
        proof = try PurchaseProof.decode(from: decoder)
    }

    /// Encodes the proof's field, `product_id` and `installation_id` when set.
    public func encode(to encoder: any Encoder) throws {
        try proof.encode(to: encoder)
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(productID, forKey: .productID)
        try container.encodeIfPresent(installationID, forKey: .installationID)
    }
}

/// One file a grant lets the client download.
public struct GrantFile: Codable, Sendable, Hashable {
    /// The path inside the product, e.g. `Contents/issue.pdf`.
    public var path: String
    /// The exact size in bytes.
    public var length: Int64
    /// The lowercase hex SHA-256 of the file.
    public var sha256: String
    /// The server-relative URL to fetch it from, e.g. `/v1/content/<product>/<version>/Contents/issue.pdf`.
    public var url: String
    /// The file cut by content into chunks (see ``Grant/chunking``), in order, from offset 0 to `length`: each can
    /// be fetched with one range request and verified on its own. `nil` for a file of one chunk (its `sha256` is
    /// the chunk's) and from a server that sends no chunks.
    public var chunks: [GrantChunk]?
    /// The file's bytes in an object store, at a presigned URL (absolute, on the store's origin) that opens the
    /// object until the grant's ``Grant/expiresAt`` and carries its own signature: a request for it sends no
    /// `Authorization` and no `If-Range` (the store's validators are not Kiosk's). Present only from a server
    /// that offloads content to a store (`kiosk serve --offload s3:…`); ``url`` still serves the same bytes.
    public var presignedURL: String?

    /// Creates a file entry.
    public init(
        path: String, length: Int64, sha256: String, url: String, chunks: [GrantChunk]? = nil,
        presignedURL: String? = nil
    ) {
        self.path = path
        self.length = length
        self.sha256 = sha256
        self.url = url
        self.chunks = chunks
        self.presignedURL = presignedURL
    }

    enum CodingKeys: String, CodingKey {
        case path, length, sha256, url, chunks
        case presignedURL = "presigned_url"
    }
}

/// One piece of a file, cut by content: the bytes `offset ..< offset + length` hash to `sha256`.
public struct GrantChunk: Codable, Sendable, Hashable {
    /// Where the chunk starts in the file.
    public var offset: Int64
    /// The chunk's size in bytes.
    public var length: Int64
    /// The lowercase hex SHA-256 of the chunk's bytes.
    public var sha256: String

    /// Creates a chunk entry.
    public init(offset: Int64, length: Int64, sha256: String) {
        self.offset = offset
        self.length = length
        self.sha256 = sha256
    }
}

/// The answer to `POST /v1/downloads`: a short-lived permission to fetch one version of one product.
public struct Grant: Codable, Sendable, Hashable {
    /// The product granted.
    public var productID: String
    /// The version whose files are listed.
    public var contentVersion: String
    /// The sum of the files' lengths.
    public var totalLength: Int64
    /// When `token` stops opening content; ask again with the same receipt after that.
    public var expiresAt: Date
    /// The bearer token for content requests. Opaque; never log it.
    public var token: String
    /// The files of this version.
    public var files: [GrantFile]
    /// How the files' ``GrantFile/chunks`` were cut; present when any file has chunks. A client that does not
    /// support ``ChunkingParameters/algorithm`` ignores the chunks and verifies whole files.
    public var chunking: ChunkingParameters?
    /// The version's files as one resource, concatenated in ``files`` order, so that many small files come in a
    /// few ranged requests; present when the version has two files or more and the server serves packs.
    public var pack: GrantPack?
    /// Where the chunks of this version's files are cut finer, on request (``GrantSubchunks``): an update reuses the
    /// unchanged parts of a changed chunk. Present when any file has chunks and the server serves subchunks.
    public var subchunks: GrantSubchunks?

    /// Creates a grant.
    public init(
        productID: String, contentVersion: String, totalLength: Int64, expiresAt: Date, token: String,
        files: [GrantFile], chunking: ChunkingParameters? = nil, pack: GrantPack? = nil,
        subchunks: GrantSubchunks? = nil
    ) {
        self.productID = productID
        self.contentVersion = contentVersion
        self.totalLength = totalLength
        self.expiresAt = expiresAt
        self.token = token
        self.files = files
        self.chunking = chunking
        self.pack = pack
        self.subchunks = subchunks
    }

    enum CodingKeys: String, CodingKey {
        case productID = "product_id"
        case contentVersion = "content_version"
        case totalLength = "total_length"
        case expiresAt = "expires_at"
        case token, files, chunking, pack, subchunks
    }
}

/// A version's pack: the bytes of its files, one after the other in the grant's ``Grant/files`` order, served at
/// ``url`` with the grant's token like a file (ranges, `If-Range`, a strong `ETag`). The file at index `i` starts at
/// the sum of the lengths of the files before it.
public struct GrantPack: Codable, Sendable, Hashable {
    /// The pack's path on the server, e.g. `/v1/packs/<product_id>/<content_version>`.
    public var url: String
    /// Its length: the grant's ``Grant/totalLength``.
    public var length: Int64

    /// A pack of `length` bytes at `url`.
    public init(url: String, length: Int64) {
        self.url = url
        self.length = length
    }

    /// Where each file of these `lengths` (in grant order) starts in the pack, then the pack's length: one more value
    /// than files.
    public static func offsets(of lengths: some Collection<Int64>) -> [Int64] {
        var offsets: [Int64] = []
        offsets.reserveCapacity(lengths.count + 1)
        var position: Int64 = 0
        for length in lengths {
            offsets.append(position)
            position += length
        }
        offsets.append(position)
        return offsets
    }
}
