import PostgresNIO

extension DatabaseURL.Postgres {
    /// The configuration of ``PostgresDriver``'s pool, whose connections may take `connectTimeout` to be made.
    func clientConfiguration(connectTimeout: Duration) -> PostgresClient.Configuration {
        let tls: PostgresClient.Configuration.TLS =
            switch sslMode {
            case .disable: .disable
            case .prefer: .prefer(tlsConfiguration)
            case .require, .verifyFull: .require(tlsConfiguration)
            }
        var configuration = PostgresClient.Configuration(
            host: host, port: port, username: username, password: password, database: database, tls: tls)
        configuration.options.additionalStartupParameters = [("application_name", "kiosk")]
        configuration.options.connectTimeout = connectTimeout
        return configuration
    }

    /// The configuration of one connection outside the pool, which the server's `pg_stat_activity` shows as
    /// `applicationName`.
    func connectionConfiguration(
        applicationName: String = "kiosk", connectTimeout: Duration = .seconds(10)
    ) throws -> PostgresConnection.Configuration {
        let tls: PostgresConnection.Configuration.TLS =
            switch sslMode {
            case .disable: .disable
            case .prefer: .prefer(try NIOSSLContext(configuration: tlsConfiguration))
            case .require, .verifyFull: .require(try NIOSSLContext(configuration: tlsConfiguration))
            }
        var configuration = PostgresConnection.Configuration(
            host: host, port: port, username: username, password: password, database: database, tls: tls)
        configuration.options.additionalStartupParameters = [("application_name", applicationName)]
        configuration.options.connectTimeout = TimeAmount(connectTimeout)
        return configuration
    }

    /// TLS as libpq's `sslmode` means it: only `verify-full` checks the server's certificate.
    private var tlsConfiguration: TLSConfiguration {
        var configuration = TLSConfiguration.makeClientConfiguration()
        if sslMode != .verifyFull { configuration.certificateVerification = .none }
        return configuration
    }
}
