import Foundation
import KioskCore
import NIOCore

/// A grant as it goes on the wire: the JSON of this request's fields (token, expiry, …) around the file list of
/// the version, which is encoded and compressed once per version (``GrantFileList``). The bytes are exactly those
/// of encoding the whole ``Grant`` with ``KioskJSON``: its sorted keys put `files` between `expires_at` and
/// `pack` or `product_id` (and `chunking`, when present, first; `subchunks` after `product_id`), so the answer is
/// `prefix ‖ files ‖ suffix`.
struct IssuedGrant: Sendable {
    /// The product granted.
    let productID: String
    /// The version granted.
    let contentVersion: String
    /// `{"chunking":{…},"content_version":…,"expires_at":…,"files":` (`chunking` only when files have chunks).
    let prefix: ByteBuffer
    /// The version's files.
    let files: GrantFileList
    /// `,"pack":{…},"product_id":…,"subchunks":{…},"token":…,"total_length":…}` (`pack` and `subchunks` when the
    /// grant has them).
    let suffix: ByteBuffer

    /// Splits the encoding of `fields` (a grant without files) around its empty `files` array, to hold `files`.
    init(fields: Grant, files: GrantFileList) throws {
        precondition(fields.files.isEmpty, "the files come from the cached list")
        let json = try KioskJSON.encode(fields)
        // `"files":[]` cannot occur inside a JSON string (its quotes would be escaped), so the first match is the
        // field itself.
        guard let field = json.firstRange(of: Data(#""files":[]"#.utf8)) else {
            throw EncodingError.invalidValue(
                fields, .init(codingPath: [], debugDescription: "The grant's encoding has no empty 'files' array."))
        }
        let split = field.upperBound - 2
        self.productID = fields.productID
        self.contentVersion = fields.contentVersion
        self.prefix = ByteBuffer(bytes: json[..<split])
        self.files = files
        self.suffix = ByteBuffer(bytes: json[(split + 2)...])
    }

    /// The JSON body, as buffers to send in order.
    var json: [ByteBuffer] { [prefix, files.json, suffix] }

    /// The JSON body gzipped (one gzip member), as buffers to send in order; only the few hundred bytes of this
    /// request's fields are compressed here.
    func gzip() throws -> [ByteBuffer] {
        try GzipMember.stitch(prefix: prefix, middle: files.deflated, suffix: suffix)
    }
}
