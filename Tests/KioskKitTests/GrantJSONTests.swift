import Foundation
import KioskCore
import Testing

@testable import KioskKit

/// ``GrantJSON`` decodes a grant a few files at a time: its values and its failures are those of the whole decoder,
/// whatever the answer looks like.
@Suite("Grant JSON")
struct GrantJSONTests {
    static func grant(files count: Int) -> Grant {
        Grant(
            productID: "com.example.a", contentVersion: "1.0", totalLength: Int64(count) * 10,
            expiresAt: Date(timeIntervalSince1970: 1_900_000_000), token: "v1.k.abc\"def",
            files: (0..<count).map { index in
                GrantFile(
                    path: "Contents/dir \(index % 7)/é \(index).bin", length: 10,
                    sha256: String(repeating: "a", count: 64),
                    url: "/v1/content/com.example.a/1.0/Contents/\(index).bin",
                    chunks: index % 3 == 0
                        ? [GrantChunk(offset: 0, length: 10, sha256: String(repeating: "b", count: 64))] : nil)
            },
            chunking: .standard, pack: GrantPack(url: "/v1/packs/com.example.a/1.0", length: Int64(count) * 10))
    }

    struct Failure: Error, Equatable {
        var description: String
    }

    /// What the whole decoder makes of `data`: the grant, or the failure's description.
    static func whole(_ data: Data) -> Result<Grant, Failure> {
        do { return .success(try KioskJSON.decode(Grant.self, from: data)) } catch {
            return .failure(Failure(description: "\(error)"))
        }
    }

    static func batched(_ data: Data) -> Result<Grant, Failure> {
        do { return .success(try GrantJSON.decode(data)) } catch { return .failure(Failure(description: "\(error)")) }
    }

    @Test(arguments: [0, 1, GrantJSON.batchSize, GrantJSON.batchSize + 1, 1_000])
    func aGrantDecodesAsTheWholeDecoderDecodesIt(files: Int) throws {
        let grant = Self.grant(files: files)
        let compact = try KioskJSON.encode(grant)
        let pretty = try JSONSerialization.data(
            withJSONObject: JSONSerialization.jsonObject(with: compact), options: [.prettyPrinted])
        for data in [compact, pretty] {
            #expect(try GrantJSON.decode(data) == grant)
        }
    }

    @Test func theFilesKeyAnywhereInTheObjectAndUnknownKeysBesideIt() throws {
        let grant = Self.grant(files: 3)
        let files = String(decoding: try KioskJSON.encode(grant.files), as: UTF8.self)
        let head = #""product_id":"com.example.a","content_version":"1.0","total_length":30,"#
            + #""expires_at":"2030-03-17T17:46:40Z","token":"v1.k.abc\"def""#
        let extras = #""future":{"a":[1,{"b":"]}"}],"c":null},"n":-1.5e3,"t":true"#
        let chunking = #""chunking":{"algorithm":"fastcdc-gear64-nc2-v1","minimum":262144,"average":1048576,"#
            + #""maximum":4194304},"pack":{"url":"/v1/packs/com.example.a/1.0","length":30}"#
        for text in [
            "{\"files\":\(files),\(head),\(extras),\(chunking)}",
            "{\(head),\(extras),\(chunking),\"files\":\(files)}",
            " {\n \(head) , \"files\" :\t\(files) , \(extras),\(chunking) } \n",
        ] {
            let data = Data(text.utf8)
            #expect(try GrantJSON.decode(data) == grant)
            #expect(Self.batched(data) == Self.whole(data))
        }
    }

    @Test func answersTheScanDoesNotFollowAreDecodedWhole() throws {
        let files = String(decoding: try KioskJSON.encode(Self.grant(files: 2).files), as: UTF8.self)
        let head = #""product_id":"p","content_version":"1","total_length":20,"expires_at":"2030-03-17T17:46:40Z","#
            + #""token":"t""#
        for text in [
            "{\(head),\"fil\\u0065s\":\(files)}",  // the key written with an escape
            "{\(head),\"files\":[],\"files\":\(files)}",  // twice
            "{\(head),\"files\":\(files)} trailing",
            "{\(head),\"files\":\(files)",  // cut short
            "{\(head),\"files\":{\"0\":1}}",  // not an array
            "{\(head),\"files\":[{\"path\":\"a\"}]}",  // a file without its fields
            "[]", "", "{}",
        ] {
            let data = Data(text.utf8)
            #expect(Self.batched(data) == Self.whole(data), "\(text)")
        }
    }

    @Test func everyTruncationAndEveryByteReplacedDecodeAsTheWholeDecoderDecodesThem() throws {
        let data = try KioskJSON.encode(Self.grant(files: 2))
        for length in 0..<data.count {
            let cut = data.prefix(length)
            #expect(Self.batched(cut) == Self.whole(cut))
        }
        for position in 0..<data.count {
            for byte in Array("\"\\{}[],: x0".utf8) {
                var changed = data
                changed[position] = byte
                #expect(Self.batched(changed) == Self.whole(changed), "byte \(byte) at \(position)")
            }
        }
    }
}
