import Foundation
import KioskCore
import NIOConcurrencyHelpers
import NIOCore

/// The `files` array of a product version's grants, encoded once: its JSON, and the same compressed into deflate
/// blocks that every gzipped grant of that version reuses.
struct GrantFileList: Sendable {
    /// `[{"chunks":[…]?,"length":…,"path":…,"sha256":…,"url":…},…]`, as ``KioskJSON`` encodes `[GrantFile]`.
    let json: ByteBuffer
    /// ``json`` compressed, with its CRC-32.
    let deflated: DeflatedPart
    /// The grant's ``Grant/chunking``: the parameters the chunks were cut with when any file has chunks, else nil
    /// (and the grant is as it was before chunks).
    let chunking: ChunkingParameters?
    /// The version's pack: where each file starts in it, and its validators.
    let pack: ProductPack

    /// The bytes this list keeps in memory.
    var byteCount: Int { json.readableBytes + deflated.deflated.readableBytes + pack.offsets.count * 8 }

    /// Encodes and compresses the files of `product`'s current version.
    init(product: CatalogProduct) throws {
        let json = try Self.encode(Self.files(of: product))
        try self.init(product: product, json: json, plain: json)
    }

    /// Encodes and compresses the files of `product`'s current version, each with the presigned URL of its object
    /// that `offload` signs at `signedAt` (``GrantFile/presignedURL``). The pack's validators are those of the list
    /// without the URLs, so that they stay the same from one signing window to the next.
    init(product: CatalogProduct, presignedBy offload: S3ContentOffload, at signedAt: Date) throws {
        var files = Self.files(of: product)
        for index in files.indices {
            files[index].presignedURL = try offload.presignedURL(
                productID: product.info.productID, version: product.info.contentVersion, path: files[index].path,
                signedAt: signedAt)
        }
        try self.init(product: product, json: Self.encode(files), plain: Self.encode(Self.files(of: product)))
    }

    /// The list whose encoding is `json`; `plain`, the encoding without presigned URLs, gives the pack its
    /// validators.
    private init(product: CatalogProduct, json: ByteBuffer, plain: ByteBuffer) throws {
        self.json = json
        deflated = try DeflatedPart(compressing: json)
        chunking = product.files.contains { !$0.chunks.isEmpty } ? FileHashes.chunking : nil
        pack = ProductPack(files: product.files, fileListJSON: plain.readableBytesView)
    }

    /// The grant's ``Grant/pack``: for a version of two files or more.
    func grantPack(for product: CatalogProduct) -> GrantPack? {
        guard product.files.count > 1 else { return nil }
        return GrantPack(
            url: GrantURLs.pack(product: product.info.productID, version: product.info.contentVersion),
            length: pack.length)
    }

    /// The grant's ``Grant/subchunks``: for a version where any file has chunks.
    func grantSubchunks(for product: CatalogProduct) -> GrantSubchunks? {
        guard chunking != nil else { return nil }
        return GrantSubchunks(
            url: GrantURLs.subchunks(product: product.info.productID, version: product.info.contentVersion),
            chunking: SubchunkService.chunking)
    }

    /// The bytes `KioskJSON.encode(files)` gives, written directly: a third of JSONEncoder's time (30 ms against
    /// 95 ms for 20,000 files, release build). Strings of printable ASCII other than `"` and `\` (every catalog path,
    /// URL and hash) are copied as they are; any other string is escaped by ``KioskJSON`` itself.
    static func encode(_ files: [GrantFile]) throws -> ByteBuffer {
        var out = ByteBuffer()
        out.reserveCapacity(files.count * 200)
        out.writeStaticString("[")
        for (index, file) in files.enumerated() {
            out.writeStaticString(index == 0 ? "{" : ",{")
            // Sorted keys: `chunks` comes first.
            if let chunks = file.chunks {
                out.writeStaticString("\"chunks\":[")
                for (index, chunk) in chunks.enumerated() {
                    out.writeStaticString(index == 0 ? "{\"length\":" : ",{\"length\":")
                    out.writeString(String(chunk.length))
                    out.writeStaticString(",\"offset\":")
                    out.writeString(String(chunk.offset))
                    out.writeStaticString(",\"sha256\":")
                    try writeJSONString(chunk.sha256, to: &out)
                    out.writeStaticString("}")
                }
                out.writeStaticString("],")
            }
            out.writeStaticString("\"length\":")
            out.writeString(String(file.length))
            out.writeStaticString(",\"path\":")
            try writeJSONString(file.path, to: &out)
            if let presigned = file.presignedURL {
                out.writeStaticString(",\"presigned_url\":")
                try writeJSONString(presigned, to: &out)
            }
            out.writeStaticString(",\"sha256\":")
            try writeJSONString(file.sha256, to: &out)
            out.writeStaticString(",\"url\":")
            try writeJSONString(file.url, to: &out)
            out.writeStaticString("}")
        }
        out.writeStaticString("]")
        return out
    }

    private static func writeJSONString(_ text: String, to out: inout ByteBuffer) throws {
        let plain = text.utf8.allSatisfy {
            $0 >= 0x20 && $0 < 0x7F && $0 != UInt8(ascii: "\"") && $0 != UInt8(ascii: "\\")
        }
        guard plain else {
            out.writeBytes(try KioskJSON.encode(text))
            return
        }
        out.writeStaticString("\"")
        out.writeString(text)
        out.writeStaticString("\"")
    }

    /// The grant entries of `product`'s files, each with its content URL and its chunks when it has several.
    static func files(of product: CatalogProduct) -> [GrantFile] {
        let (id, version) = (product.info.productID, product.info.contentVersion)
        return product.files.map { file in
            GrantFile(
                path: file.path, length: file.length, sha256: file.sha256,
                url: GrantURLs.content(product: id, version: version, path: file.path),
                chunks: file.grantChunks)
        }
    }
}

/// The encoded file lists of one catalog snapshot's products, made on the first grant for each product and dropped
/// with the snapshot (a reload that changes anything builds a new snapshot, with an empty cache).
///
/// Lists are kept within ``byteBudget`` (JSON and compressed bytes together): when a new list passes it, the lists
/// used least recently are dropped, so a catalog of many products keeps only those asked for lately. The newest list
/// is always kept, whatever its size.
///
/// Each product's list is encoded once even when its first grants arrive together: they wait for the one encoding
/// (under that product's own lock, so grants for other products do not wait).
final class GrantFileListCache: Sendable {
    /// The default budget: room for a few products of 20,000 files (about 5 MiB each).
    static let defaultByteBudget = 64 << 20

    /// The most bytes kept.
    let byteBudget: Int

    /// One product's list, made at most once.
    private final class Slot: Sendable {
        let list = NIOLockedValueBox<GrantFileList?>(nil)
    }

    private struct Entry {
        let slot: Slot
        var lastUse: UInt64
        var byteCount = 0
    }

    private struct State {
        var entries: [String: Entry] = [:]
        var byteCount = 0
        var clock: UInt64 = 0
    }

    private let state = NIOLockedValueBox(State())

    /// An empty cache keeping at most `byteBudget` bytes of lists (beyond the newest).
    init(byteBudget: Int = GrantFileListCache.defaultByteBudget) {
        self.byteBudget = byteBudget
    }

    /// The list of `product`'s current version, made by `encode` on the first call for that version and `variant`
    /// (such as the signing window of presigned URLs; empty for the plain list).
    func list(
        for product: CatalogProduct, variant: String = "",
        encode: (CatalogProduct) throws -> GrantFileList = GrantFileList.init(product:)
    ) throws -> GrantFileList {
        let key = product.info.productID + "\u{0}" + product.info.contentVersion + "\u{0}" + variant
        let slot = state.withLockedValue { state in
            state.clock += 1
            if let known = state.entries[key]?.slot {
                state.entries[key]?.lastUse = state.clock
                return known
            }
            let slot = Slot()
            state.entries[key] = Entry(slot: slot, lastUse: state.clock)
            return slot
        }
        let (list, isNew) = try slot.list.withLockedValue { kept in
            if let kept { return (kept, false) }
            let made = try encode(product)
            kept = made
            return (made, true)
        }
        if isNew { account(list.byteCount, for: key, slot: slot) }
        return list
    }

    /// The number of lists kept.
    var count: Int { state.withLockedValue { $0.entries.count } }

    /// The bytes of the lists kept.
    var byteCount: Int { state.withLockedValue { $0.byteCount } }

    /// Counts a new list's bytes, then drops the least recently used other lists while the budget is passed.
    private func account(_ bytes: Int, for key: String, slot: Slot) {
        state.withLockedValue { state in
            // The slot may have been dropped while its list was being made: then it is not counted.
            guard state.entries[key]?.slot === slot else { return }
            state.entries[key]?.byteCount = bytes
            state.byteCount += bytes
            while state.byteCount > byteBudget, state.entries.count > 1,
                let oldest = state.entries.filter({ $0.key != key }).min(by: { $0.value.lastUse < $1.value.lastUse })
            {
                state.byteCount -= oldest.value.byteCount
                state.entries[oldest.key] = nil
            }
        }
    }
}
