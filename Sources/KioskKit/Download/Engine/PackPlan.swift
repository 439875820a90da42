import Crypto
import Foundation
import KioskCore

/// Which files of a grant come from its pack (``GrantPack``): runs of consecutive small files, each run fetched
/// with one ranged request of the pack instead of one request per file. Per-request work (a URLSession task, its
/// callbacks and timers, the server's admission) dominated the time of products made of thousands of small files.
enum PackPlan {
    /// Files up to this length are fetched from the pack; longer ones have a request (or chunks) of their own.
    static let maximumFileLength: Int64 = 256 << 10
    /// The most bytes one pack request brings: several requests of a product run at once, each holding a
    /// connection of the budget.
    static let maximumRunLength: Int64 = 512 << 10
    /// The most files one pack request brings.
    static let maximumRunFiles = 256
    /// The blocks a run's bytes are written in (``DownloadEngine/packBlocks``).
    static let blockSize = 64 << 10

    /// The path of the grant's pack, when it is one this client uses: exactly
    /// `/v1/packs/<product>/<version>` of the grant, as long as the grant's files. Any other pack is ignored (the
    /// files are fetched one by one), never an error.
    static func path(of grant: Grant) -> String? {
        guard let pack = grant.pack, pack.length == grant.totalLength, grant.files.count > 1,
            pack.url == "/v1/packs/\(grant.productID)/\(grant.contentVersion)"
        else { return nil }
        return pack.url
    }

    /// Where each file starts in the pack, then the pack's length.
    static func offsets(of files: [GrantFile]) -> [Int64] { GrantPack.offsets(of: files.lazy.map(\.length)) }

    /// The run of files starting at `index`: consecutive files that `isPackable` accepts, within
    /// ``maximumRunLength`` and ``maximumRunFiles``; `nil` when fewer than two files qualify (one file is fetched
    /// on its own).
    static func run(from index: Int, in files: [GrantFile], isPackable: (GrantFile) -> Bool) -> Range<Int>? {
        var end = index
        var bytes: Int64 = 0
        while end < files.count, end - index < maximumRunFiles, isPackable(files[end]),
            end == index || bytes + files[end].length <= maximumRunLength
        {
            bytes += files[end].length
            end += 1
        }
        return end - index >= 2 ? index..<end : nil
    }
}
