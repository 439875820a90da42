/// Polls `condition` every 100 ms until it holds or `timeout` passes; whether it held. A bound on waiting for
/// something the server does on its own (a timeout firing, a metric moving), not a measure of how fast it does it.
func eventually(_ timeout: Duration, _ condition: () async throws -> Bool) async throws -> Bool {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
        if try await condition() { return true }
        try await Task.sleep(for: .milliseconds(100))
    }
    return try await condition()
}
