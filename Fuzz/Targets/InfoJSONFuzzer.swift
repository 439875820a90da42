// libFuzzer target for the Info.json loader (`ProductInfo.parse`, in KioskStore), built by scripts/fuzz.sh; see
// README "Fuzzing".
//
// Input: the raw bytes of an Info.json file. Each input is parsed twice: in a folder named after its own
// `product_id` (so that valid documents get past the folder check) and in a fixed folder.
import Foundation
import KioskCore
import KioskStore

/// The folder name used for the second parse of each input.
private let fixedFolder = "com.example.kiosk.levels.pack1"

/// Stops the fuzzer with a report when an invariant does not hold.
private func check(_ condition: @autoclosure () -> Bool, _ message: @autoclosure () -> String) {
    if !condition() { fatalError("invariant violated: \(message())") }
}

/// libFuzzer entry point: parses one Info.json document and checks the loader's invariants.
@_cdecl("LLVMFuzzerTestOneInput")
public func infoJSONFuzzerTestOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let document = Data(bytes: data, count: size)
    let object = (try? JSONSerialization.jsonObject(with: document)) as? [String: Any]
    var folders = [fixedFolder]
    if let ownID = object?["product_id"] as? String, ownID != fixedFolder { folders.append(ownID) }
    for folder in folders {
        let result = ProductInfo.parse(document, folder: folder)
        check(ProductInfo.parse(document, folder: folder) == result, "parse is not deterministic")
        switch result {
        case let .success(info):
            checkProduct(info, folder: folder)
            if let object { checkCanonicalRoundTrip(info, object: object, folder: folder) }
        case let .failure(problem):
            checkProblem(problem, folder: folder)
        }
    }
    return 0
}

/// A loaded product is what the catalog, URLs and the cache on disk rely on.
private func checkProduct(_ info: ProductInfo, folder: String) {
    check(info.productID == folder, "product \(info.productID) loaded from folder \(folder)")
    check(Identifiers.isValidProductID(info.productID), "unsafe product ID \(info.productID.debugDescription)")
    check(
        Identifiers.isValidContentVersion(info.contentVersion), "unsafe version \(info.contentVersion.debugDescription)"
    )
    check(!info.title.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty, "blank title")
    if let period = info.subscriptionPeriod {
        check(info.type == .autoRenewable || info.type == .nonRenewing, "\(info.type) with a period")
        check((1...1000).contains(period.count), "period \(period) out of range")
        check(SubscriptionPeriod(iso8601: period.description) == period, "period \(period) does not round-trip")
        let start = info.publishedAt ?? Date(timeIntervalSince1970: 1_700_000_000)
        check(period.end(from: start) > start, "period \(period) does not move time forward from \(start)")
    }
    if let publishedAt = info.publishedAt {
        check(publishedAt.timeIntervalSince1970.isFinite, "non-finite published_at")
        let printed = RFC3339.string(from: publishedAt)
        let reread = RFC3339.date(from: printed)
        check(
            reread.map(RFC3339.string(from:)) == printed, "published_at prints as \(printed), which reads differently")
    }
}

/// Writing the parsed values back in canonical form (keeping every other field of the document) and
/// parsing again gives the same product: the loader reads what it would accept from its own printing.
private func checkCanonicalRoundTrip(_ info: ProductInfo, object: [String: Any], folder: String) {
    var canonical = object
    canonical["subscription_period"] = info.subscriptionPeriod?.description ?? NSNull()
    canonical["published_at"] = info.publishedAt.map { RFC3339.string(from: $0) } ?? NSNull()
    guard let data = try? JSONSerialization.data(withJSONObject: canonical) else {
        fatalError("invariant violated: a parsed Info.json cannot be written back")
    }
    guard case var .success(reread) = ProductInfo.parse(data, folder: folder) else {
        fatalError("invariant violated: canonical form \(String(decoding: data, as: UTF8.self)) does not parse")
    }
    if let original = info.publishedAt, let again = reread.publishedAt {
        // The catalog shows RFC3339.string(from:) (whole seconds): that must not change.
        let shown = RFC3339.string(from: original)
        check(RFC3339.string(from: again) == shown, "published_at \(shown) re-read as \(RFC3339.string(from: again))")
        reread.publishedAt = original
    }
    check(reread == info, "canonical form parses to \(reread), not \(info)")
}

/// A rejected folder gets a problem that names the folder, a real field (if any) and says something.
private func checkProblem(_ problem: ContentProblem, folder: String) {
    check(problem.folder == folder, "problem for \(problem.folder) while loading \(folder)")
    check(
        problem.field.map { !$0.isEmpty && $0.allSatisfy { $0.isLetter || $0 == "_" } } ?? true,
        "problem names a field that is not a key: \(problem.field ?? "")")
    check(!problem.message.isEmpty, "problem without a message")
    check(problem.description.hasPrefix(folder), "description \(problem.description) does not start with the folder")
}
