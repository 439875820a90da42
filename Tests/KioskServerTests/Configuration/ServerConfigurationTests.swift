import Crypto
import Foundation
import KioskStore
import Testing

@testable import KioskServer

@Suite("Server configuration: options, environment, defaults")
struct ServerConfigurationTests {
    /// A P-256 key in PEM, as App Store Connect's `.p8` files hold one.
    static let appStorePEM = P256.Signing.PrivateKey().pemRepresentation

    @Test func theAppStoreAPIKeyComesWholeOrNotAtAll() throws {
        #expect(try ServerConfiguration(options: [:], environment: [:]).appStoreAPIKey() == nil)
        let folder = try ServerTestDirectory("app-store-key")
        let file = try folder.write("AuthKey_KEY1234567.p8", Self.appStorePEM)
        let fromFile = try ServerConfiguration(
            options: ["app-store-key-file": file.path, "app-store-key-id": "KEY1234567", "app-store-issuer-id": "iss"],
            environment: ["KIOSK_BUNDLE_ID": "com.acme.newsstand"])
        let key = try #require(try fromFile.appStoreAPIKey())
        #expect(key.keyID == "KEY1234567" && key.issuerID == "iss" && key.bundleID == "com.acme.newsstand")
        // Options win over the variables.
        let both = try ServerConfiguration(
            options: ["app-store-key-id": "FROMOPTION"],
            environment: [
                "KIOSK_APP_STORE_KEY_ID": "FROMVARIABLE", "KIOSK_APP_STORE_ISSUER_ID": "iss",
                "KIOSK_APP_STORE_KEY": Self.appStorePEM,
            ])
        #expect(try both.appStoreAPIKey()?.keyID == "FROMOPTION")
        // Pieces missing: the error names them.
        #expect {
            try ServerConfiguration(options: ["app-store-key-id": "KEY1234567"], environment: [:])
        } throws: { error in
            let text = "\(error)"
            return text.contains("--app-store-key-file") && text.contains("--app-store-issuer-id")
                && !text.contains("missing: --app-store-key-id")
        }
        // A key that is not one: said so, and its text is not repeated.
        #expect {
            try ServerConfiguration(
                options: ["app-store-key-id": "K", "app-store-issuer-id": "I"],
                environment: ["KIOSK_APP_STORE_KEY": "-----BEGIN PRIVATE KEY-----\nc2VjcmV0\n-----END PRIVATE KEY-----"]
            )
        } throws: { error in
            "\(error)".contains("not a P-256 private key") && !"\(error)".contains("c2VjcmV0")
        }
        #expect(throws: ServerConfigurationError.self) {
            try ServerConfiguration(options: ["app-store-api-url": "http://api.example.com"], environment: [:])
        }
    }
    @Test func anOptionWinsOverTheEnvironment() throws {
        let configuration = try ServerConfiguration(
            options: ["max-installations": "5"], environment: ["KIOSK_MAX_INSTALLATIONS": "3"])
        #expect(configuration.maxInstallations == 5)
    }

    @Test func theEnvironmentWinsOverTheDefault() throws {
        #expect(
            try ServerConfiguration(options: [:], environment: ["KIOSK_MAX_INSTALLATIONS": "3"]).maxInstallations == 3)
        #expect(
            try ServerConfiguration(options: [:], environment: ["KIOSK_MAX_INSTALLATIONS": ""]).maxInstallations == 10)
        #expect(try ServerConfiguration(options: [:], environment: [:]).maxInstallations == 10)
    }

    @Test func everySettingIsReadFromItsOptionAndItsVariable() throws {
        let keys = try ServerTestDirectory("setting-keys")
        let keyFile = try keys.write("AuthKey_KEY1234567.p8", Self.appStorePEM)
        let values: [String: String] = [
            "app-store-key-file": keyFile.path,
            "host": "::1", "port": "9090", "content": "/srv/content", "data": "/var/lib/kiosk", "store": "appstore",
            "bundle-id": "com.acme.newsstand", "allow-public-sandbox": "true", "public-metrics": "yes",
            "verify-url": "https://store.test/verifyReceipt", "sandbox-verify-url": "http://127.0.0.1:9/verifyReceipt",
            "transaction-environments": "Production", "max-installations": "4", "grant-lifetime": "60",
            "reload-interval": "0", "apple-root-ca": "/etc/roots.pem", "idle-timeout": "5", "request-timeout": "6",
            "send-timeout": "7", "max-header-size": "4096", "shared-secret": "s", "grant-secret": "g",
            "grant-key-id": "k2", "grant-previous-keys": "k1:old", "max-installation-removals": "0",
            "installation-removal-window": "3600", "shutdown-grace": "8",
            "database": "postgres://kiosk:pw@db.internal:5433/kiosk", "offload": "nginx:/_kiosk/files",
            "s3-endpoint": "https://s3.example.com", "s3-region": "eu-west-3", "s3-addressing": "virtual",
            "offload-url-lifetime": "120", "s3-access-key-id": "AK", "s3-secret-access-key": "sk",
            "s3-session-token": "st", "database-wait": "9", "transaction-refresh": "0",
            "notification-history-interval": "600", "notification-history-days": "180",
            "receipt-validation": "api", "receipt-local-testing-root": "/etc/storekit.pem",
            "app-store-api-url": "https://api.test/prefix",
            "app-store-sandbox-api-url": "http://127.0.0.1:9/api", "app-store-key-id": "KEY1234567",
            "app-store-issuer-id": "57246542-96fe-1a63-e053-0824d011072a", "app-store-key": Self.appStorePEM,
            "consumption-info": "on", "refund-preference": "grant_prorated", "sample-content-provided": "true",
        ]
        // Faults are refused with the App Store: read below, with the sandbox store.
        #expect(Set(values.keys).union(["faults", "faults-seed"]) == Set(ServerSetting.all.map(\.name)))
        let variables = { (pairs: [String: String]) in
            Dictionary(uniqueKeysWithValues: pairs.map { (ServerSetting.named($0.key).environmentVariable, $0.value) })
        }
        let options = values.filter { ServerSetting.named($0.key).hasOption }
        let secrets = values.filter { !ServerSetting.named($0.key).hasOption }
        for configuration in [
            try ServerConfiguration(options: options, environment: variables(secrets)),
            try ServerConfiguration(options: [:], environment: variables(values)),
        ] {
            #expect(configuration.host == "::1")
            #expect(configuration.port == 9090)
            #expect(configuration.contentDirectory.path == "/srv/content")
            #expect(configuration.dataDirectory.path == "/var/lib/kiosk")
            #expect(configuration.databaseURL.description == "postgres://kiosk:***@db.internal:5433/kiosk")
            #expect(configuration.store == .appstore)
            #expect(configuration.bundleID == "com.acme.newsstand")
            #expect(configuration.allowPublicSandbox && configuration.publicMetrics)
            #expect(configuration.productionVerifyURL.absoluteString == "https://store.test/verifyReceipt")
            #expect(configuration.sandboxVerifyURL.absoluteString == "http://127.0.0.1:9/verifyReceipt")
            #expect(configuration.acceptedStoreEnvironments == [.production])
            #expect(configuration.maxInstallations == 4)
            #expect(configuration.installationRemovalLimit == RemovalLimit(removals: 0, window: .seconds(3600)))
            #expect(configuration.grantLifetime == .seconds(60))
            #expect(configuration.reloadInterval == .zero)
            #expect(configuration.appleRootCAFile?.path == "/etc/roots.pem")
            #expect(configuration.idleTimeout == .seconds(5))
            #expect(configuration.requestReadTimeout == .seconds(6))
            #expect(configuration.sendTimeout == .seconds(7))
            #expect(configuration.shutdownGrace == .seconds(8))
            #expect(configuration.maxHeaderSize == 4096)
            #expect(configuration.sharedSecret == "s")
            #expect(configuration.grantSecret == "g")
            #expect(configuration.grantKeyID == "k2")
            #expect(configuration.previousGrantKeys == "k1:old")
            #expect(configuration.offload == .nginx(prefix: "/_kiosk/files"))
            #expect(configuration.s3Endpoint?.absoluteString == "https://s3.example.com")
            #expect(configuration.s3Region == "eu-west-3" && configuration.s3Addressing == .virtualHosted)
            #expect(configuration.offloadURLLifetime == .seconds(120))
            #expect(configuration.s3AccessKeyID == "AK" && configuration.s3SecretAccessKey == "sk")
            #expect(configuration.s3SessionToken == "st")
            #expect(configuration.databaseWait == .seconds(9))
            #expect(configuration.transactionRefresh == .zero)
            #expect(configuration.notificationHistoryInterval == .seconds(600))
            #expect(configuration.notificationHistoryDays == 180)
            #expect(configuration.receiptValidation == .api)
            #expect(configuration.receiptLocalTestingRoot?.path == "/etc/storekit.pem")
            #expect(configuration.appStoreAPIURL?.absoluteString == "https://api.test/prefix")
            #expect(configuration.appStoreSandboxAPIURL?.absoluteString == "http://127.0.0.1:9/api")
            #expect(try configuration.appStoreAPIKey()?.keyID == "KEY1234567")
            #expect(configuration.consumptionInfo && configuration.sampleContentProvided)
            #expect(configuration.refundPreference == .grantProrated)
        }
        let faulty = try ServerConfiguration(options: ["faults": "chaos:0.5", "faults-seed": "42"], environment: [:])
        #expect(faulty.faults != nil && faulty.faultsSeed == 42)
    }

    @Test func secretsHaveNoOption() throws {
        let configuration = try ServerConfiguration(options: ["shared-secret": "on the command line"], environment: [:])
        #expect(configuration.sharedSecret == nil)
        #expect(
            ServerSetting.all.filter { !$0.hasOption }.map(\.environmentVariable).sorted() == [
                "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "KIOSK_APP_STORE_KEY",
                "KIOSK_GRANT_KEY_ID", "KIOSK_GRANT_PREVIOUS_KEYS", "KIOSK_GRANT_SECRET", "KIOSK_SHARED_SECRET",
            ])
    }

    @Test func defaultsAreShownFromTheConfiguration() {
        #expect(ServerSetting.named("max-installations").defaultDescription == "10")
        #expect(ServerSetting.named("verify-url").defaultDescription == "https://buy.itunes.apple.com/verifyReceipt")
        #expect(ServerSetting.named("allow-public-sandbox").defaultDescription == "off")
        #expect(ServerSetting.named("max-installations").environmentVariable == "KIOSK_MAX_INSTALLATIONS")
    }

    @Test(
        arguments: [
            (["port": "70000"], [:], "--port"),
            ([:], ["KIOSK_PORT": "x"], "KIOSK_PORT"),
            (["max-installations": "0"], [:], "--max-installations"),
            (["store": "itunes"], [:], "--store"),
            (["transaction-environments": "Production,Staging"], [:], "--transaction-environments"),
            (["verify-url": "http://store.example.com/verifyReceipt"], [:], "--verify-url"),
            ([:], ["KIOSK_SANDBOX_VERIFY_URL": "ftp://127.0.0.1/x"], "KIOSK_SANDBOX_VERIFY_URL"),
            (["faults-seed": "1"], [:], "--faults"),
            (["grant-lifetime": "0"], [:], "--grant-lifetime"),
            ([:], ["KIOSK_ALLOW_PUBLIC_SANDBOX": "maybe"], "KIOSK_ALLOW_PUBLIC_SANDBOX"),
            (["offload": "nginx:/_kiosk/files", "faults": "none"], [:], "--faults"),
            (["offload": "apache:/files"], [:], "--offload"),
            (["refund-preference": "GRANT_FULL"], [:], "--refund-preference"),
            ([:], ["KIOSK_OFFLOAD": "nginx:/v1/files"], "KIOSK_OFFLOAD"),
        ] as [([String: String], [String: String], String)])
    func aBadValueNamesWhereItCameFrom(options: [String: String], environment: [String: String], source: String) {
        #expect {
            try ServerConfiguration(options: options, environment: environment)
        } throws: { error in
            (error as? ServerConfigurationError)?.description.contains(source) == true
        }
    }

    @Test func aBadSecretIsNotEchoed() {
        #expect {
            try ServerConfiguration(options: [:], environment: ["KIOSK_SHARED_SECRET": "   "])
        } throws: { error in
            let text = (error as? ServerConfigurationError)?.description ?? ""
            return text.contains("KIOSK_SHARED_SECRET") && !text.contains("'   '")
        }
    }

    @Test func theSandboxStoreStaysOnLoopbackUnlessAllowed() throws {
        for host in ["127.0.0.1", "127.1.2.3", "::1", "[::1]", "localhost", "::ffff:127.0.0.1"] {
            _ = try ServerConfiguration(options: ["host": host], environment: [:])
        }
        for host in ["0.0.0.0", "::", "192.168.1.10", "kiosk.example.com", "128.0.0.1"] {
            #expect(throws: ServerConfigurationError.self, "\(host)") {
                try ServerConfiguration(options: ["host": host], environment: [:])
            }
            let allowed = try ServerConfiguration(
                options: ["host": host], environment: ["KIOSK_ALLOW_PUBLIC_SANDBOX": "1"])
            #expect(allowed.allowPublicSandbox)
            _ = try ServerConfiguration(
                options: ["host": host, "store": "appstore", "bundle-id": "com.acme.newsstand"], environment: [:])
        }
    }

    @Test func theAppStoreNeedsARealBundleIDAndAnEnvironment() throws {
        let appStore = ["store": "appstore", "bundle-id": "com.acme.newsstand"]
        _ = try ServerConfiguration(options: appStore, environment: [:])
        #expect(throws: ServerConfigurationError.self) {
            try ServerConfiguration(options: ["store": "appstore"], environment: [:])
        }
        #expect(throws: ServerConfigurationError.self) {
            try ServerConfiguration(
                options: appStore.merging(["bundle-id": "com.example.kiosk"]) { $1 }, environment: [:])
        }
        var none = try ServerConfiguration(options: appStore, environment: [:])
        none.transactionEnvironments = []
        #expect(throws: ServerConfigurationError.self) { try none.validate() }
    }

    @Test func storeURLsArePlainHTTPOnlyToLoopback() {
        for (text, acceptable) in [
            ("https://buy.itunes.apple.com/verifyReceipt", true), ("http://127.0.0.1:8080/verifyReceipt", true),
            ("http://[::1]:8080/verifyReceipt", true), ("http://localhost/verifyReceipt", true),
            ("http://buy.itunes.apple.com/verifyReceipt", false), ("http://10.0.0.2/verifyReceipt", false),
            ("ftp://127.0.0.1/verifyReceipt", false), ("https:///verifyReceipt", false),
        ] {
            #expect(ServerConfiguration.isAcceptableStoreURL(URL(string: text)!) == acceptable, "\(text)")
        }
    }
}
