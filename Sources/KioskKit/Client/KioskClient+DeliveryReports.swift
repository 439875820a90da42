import Foundation
import KioskCore

/// Delivery reports: once a download has installed a product version (every file downloaded, verified and moved
/// into place), the client tells the server (`POST /v1/deliveries`, vouched for by the grant's token), so that the
/// server can tell the App Store the content was delivered if the customer later asks for a refund.
///
/// Best effort: a report never delays or fails an install. It is sent in the background; one that fails for the
/// network or the server (``KioskError/isTransient``) stays pending, in memory, and is sent again with the next
/// report or by ``sendDeliveryReports()``; one the server refuses (a revoked purchase, say) is dropped. A report
/// still pending when the client closes is not kept.
extension KioskClient {
    /// Sends every pending delivery report (after waiting for those being sent), and returns how many are still
    /// pending: 0 once the server has every one. An app may call it when it comes back to the foreground or gets a
    /// network again.
    /// - Throws: ``KioskError/clientClosed`` after ``close()``.
    public func sendDeliveryReports() async throws(KioskError) -> Int {
        try ensureOpen()
        if let running = deliveryReporting { await running.value }
        try ensureOpen()
        await startDeliveryReports().value
        return pendingDeliveryReports.count
    }

    /// Queues `report` (replacing one pending for the same product) and sends it in the background.
    func reportDelivery(_ report: DeliveryReport) {
        pendingDeliveryReports[report.productID] = report
        _ = startDeliveryReports()
    }

    /// Stops sending reports, for ``close()``: the request in flight is cancelled, not waited for (URLSession may
    /// take seconds to wind a cancelled request down).
    func stopDeliveryReports() {
        deliveryReporting?.cancel()
    }

    /// The task sending the pending reports: the one running, or a new one.
    private func startDeliveryReports() -> Task<Void, Never> {
        if let running = deliveryReporting { return running }
        let task = Task { await sendPendingDeliveryReports() }
        deliveryReporting = task
        return task
    }

    /// Sends each pending report once, those queued meanwhile included; keeps those that failed for the network
    /// or the server.
    private func sendPendingDeliveryReports() async {
        var attempted: Set<String> = []
        while !isClosed, !Task.isCancelled,
            let report = pendingDeliveryReports.values.first(where: { !attempted.contains($0.productID) })
        {
            attempted.insert(report.productID)
            var keep = false
            do {
                _ = try await api.reportDelivery(report)
            } catch {
                keep = error.isTransient
            }
            if !keep, pendingDeliveryReports[report.productID] == report {
                pendingDeliveryReports[report.productID] = nil
            }
        }
        deliveryReporting = nil
    }
}
