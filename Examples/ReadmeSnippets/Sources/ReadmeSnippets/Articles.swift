// The snippets of KioskKit's DocC articles (Sources/KioskKit/KioskKit.docc) that are not also the README's and import
// KioskKit alone, word for word (check-snippets.py checks that they match the articles).
import KioskKit

/// GettingStarted.md, "Showing progress": one product's state, from now on.
func showProgress(kiosk: KioskClient) async {
    for await state in await kiosk.stateUpdates(for: "com.example.kiosk.magazine.2026-11") {
        switch state {
        case .downloading(let download): print("\(Int(download.progress.fraction * 100)) %", download.state)
        case .installed(let content), .outOfDate(let content, _): print("Open", content.directory.path)
        default: print(state)  // not queued, paused, failed, cancelled
        }
    }
}

/// TestingWithFaultInjection.md: a client whose requests ask a server started with `--faults` for faults.
func createClientAskingForFaults() async throws -> KioskClient {
    let session = URLSessionConfiguration.default
    session.httpAdditionalHeaders = ["Kiosk-Fault": "cut=random;p=0.5"]  // half of the content requests are cut
    var configuration = KioskClient.Configuration()
    configuration.sessionConfiguration = session
    let kiosk = try await KioskClient(serverURL: URL(string: "http://127.0.0.1:8080")!, configuration: configuration)
    return kiosk
}
