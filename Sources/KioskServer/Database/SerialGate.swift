/// An asynchronous mutex: whoever holds it runs alone, and waiters enter in the order they arrived. The SQLite engine
/// holds it around each statement and each transaction on its single connection, so that a database transaction
/// never takes in another caller's statements.
actor SerialGate {
    private var isHeld = false
    private var waiters: [CheckedContinuation<Void, Never>] = []

    /// Waits until the gate is free, then holds it.
    func acquire() async {
        guard isHeld else {
            isHeld = true
            return
        }
        await withCheckedContinuation { waiters.append($0) }
    }

    /// Hands the gate to the next waiter, or frees it.
    func release() {
        if waiters.isEmpty {
            isHeld = false
        } else {
            waiters.removeFirst().resume()
        }
    }

    /// Runs `body` holding the gate, and frees it whether `body` returns or throws.
    nonisolated func holding<T>(_ body: () async throws -> T) async throws -> T {
        await acquire()
        do {
            let result = try await body()
            await release()
            return result
        } catch {
            await release()
            throw error
        }
    }
}
