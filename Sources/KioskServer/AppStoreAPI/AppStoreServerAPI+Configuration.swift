import Foundation
import KioskStore
import Logging

extension AppStoreServerAPI {
    /// The API a server with `configuration` calls, or nil when it has no key (everything that needs the API is then
    /// off). The key is the configured one; a sandbox-mode server without one uses the sandbox store's own. Each base
    /// URL is the configured one; unset, Apple's, or with the sandbox store its API in process. Logs which.
    static func configured(
        _ configuration: ServerConfiguration, sandbox: SandboxAppStoreAPI?, verifier: SignedDataVerifier,
        now: @escaping @Sendable () -> Date, logger: Logger
    ) throws -> AppStoreServerAPI? {
        let configuredKey = try configuration.appStoreAPIKey()
        guard let key = configuredKey ?? sandbox?.store.apiKey else {
            logger.notice(
                "no App Store Server API key: restore from history, refund catch-up, transaction lookups and consumption answers are off",
                metadata: ["set": "KIOSK_APP_STORE_KEY_FILE, KIOSK_APP_STORE_KEY_ID, KIOSK_APP_STORE_ISSUER_ID"])
            return nil
        }
        let http = HTTPAppStoreAPITransport()
        let transport: any AppStoreAPITransport =
            sandbox.map { SandboxAppStoreAPITransport(api: $0, http: http) } ?? http
        let baseURLs = AppStoreAPIClient.BaseURLs(
            production: configuration.appStoreAPIURL
                ?? (sandbox == nil ? AppStoreAPIClient.BaseURLs.production : SandboxAppStoreAPITransport.productionURL),
            sandbox: configuration.appStoreSandboxAPIURL
                ?? (sandbox == nil ? AppStoreAPIClient.BaseURLs.sandbox : SandboxAppStoreAPITransport.sandboxURL))
        logger.info(
            "App Store Server API on",
            metadata: [
                "key_id": "\(key.keyID)", "issuer_id": "\(key.issuerID)",
                "key": "\(configuredKey == nil ? "the sandbox store's" : "configured")",
                "production": "\(baseURLs.production.absoluteString)", "sandbox": "\(baseURLs.sandbox.absoluteString)",
            ])
        let client = AppStoreAPIClient(
            tokens: AppStoreAPITokens(key: key), baseURLs: baseURLs, transport: transport, now: now)
        return AppStoreServerAPI(client: client, verifier: verifier)
    }
}
