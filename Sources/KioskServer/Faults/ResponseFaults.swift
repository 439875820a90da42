import Foundation
import HTTPTypes
import Hummingbird
import KioskCore
import Logging
import NIOCore

/// The faults chosen for one content request, applied at each step of answering it: a slow first byte and an
/// error status before anything else, a changed `ETag` and an ignored `Range` while the answer is planned, and
/// the byte-stream faults while the body is written.
struct ResponseFaults {
    /// The envelope code of an injected error status.
    static let errorCode = "fault_injected"

    let spec: FaultSpec
    let injector: FaultInjector
    let metrics: ServerMetrics
    let logger: Logger

    /// The faults `injector` chooses for one response (``FaultInjector/faults(requested:download:)``), or nil for
    /// none.
    init?(
        injector: FaultInjector, requested: FaultSpec?, download: Int?, metrics: ServerMetrics, logger: Logger
    ) {
        guard let spec = injector.faults(requested: requested, download: download) else { return nil }
        self.spec = spec
        self.injector = injector
        self.metrics = metrics
        self.logger = logger
    }

    /// Waits for `first-byte`, then answers the injected status, if any (nil: go on answering the content).
    func beforeResponse() async throws -> Response? {
        if let delay = spec.firstByte {
            record(.firstByte, ["delay": "\(FaultSpec.format(delay))"])
            try await Task.sleep(for: delay)
        }
        guard let status = spec.status else { return nil }
        record(.status, ["status": "\(status.code)"])
        var headers = HTTPFields()
        if let retryAfter = status.retryAfter { headers[.retryAfter] = String(retryAfter) }
        let envelope = APIErrorEnvelope(
            code: Self.errorCode,
            message: "The server was asked to answer \(status.code) by fault injection; try again.")
        return try JSONIO.response(envelope, status: .init(code: status.code), headers: headers)
    }

    /// With `etag-change`, gives the representation a new `ETag` and a `Last-Modified` of now, as if the file had
    /// just changed: an `If-Range` with the old validators no longer holds, so a resumed request gets the whole file.
    func changeValidators(of representation: inout RepresentationMetadata, now: Date) {
        guard spec.etagChange else { return }
        let tag = representation.entityTag.opaqueTag + "-f" + String(injector.nonce(), radix: 16)
        // Hex digits, '-' and 'f' are valid entity-tag characters.
        representation.entityTag = EntityTag(opaqueTag: tag)!
        representation.lastModified = now
        record(.etagChange, [:])
    }

    /// The `Range` header to evaluate: nil with `ignore-range`, so the answer is the whole file.
    func range(_ header: String?, isHead: Bool) -> String? {
        guard spec.ignoreRange, header != nil else { return header }
        if !isHead { record(.ignoreRange, [:]) }
        return nil
    }

    /// The writer applying the byte-stream faults to a body of `length` bytes, or nil when none falls inside it
    /// (the body then keeps the `sendfile` path). `mayCorrupt` decides, given the body offset drawn, whether the
    /// corruption happens (a pack's: once per purchase and file).
    func bodyWriter(length: Int64, channel: any Channel, mayCorrupt: ((Int64) -> Bool)? = nil) -> FaultyBodyWriter? {
        guard spec.altersBodyStream, var faults = injector.bodyFaults(spec, length: length) else { return nil }
        if let corruptAt = faults.corruptAt, let mayCorrupt, !mayCorrupt(corruptAt) {
            faults.corruptAt = nil
            if faults.isEmpty { return nil }
        }
        return FaultyBodyWriter(faults: faults, metrics: metrics, logger: logger, channel: channel)
    }

    private func record(_ kind: FaultKind, _ metadata: Logger.Metadata) {
        FaultInjector.record(kind, metadata: metadata, metrics: metrics, logger: logger)
    }
}
