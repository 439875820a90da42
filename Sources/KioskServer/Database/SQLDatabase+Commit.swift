import SQLKit

extension SQLDatabase {
    /// Runs `body` on this session, whose transaction the caller has just begun, then commits it; rolls it back and
    /// rethrows when `body` throws. The one ending of a transaction both engines share.
    func commitOrRollBack<T: Sendable>(_ body: @Sendable (any SQLDatabase) async throws -> T) async throws -> T {
        do {
            let result = try await body(self)
            try await raw("COMMIT").run()
            return result
        } catch {
            try? await raw("ROLLBACK").run()
            throw error
        }
    }
}
