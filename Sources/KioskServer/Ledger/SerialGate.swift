/// An asynchronous mutex: whoever holds it runs alone, and waiters enter in the order they arrived. The ledger holds
/// it around each operation on its single SQLite connection, so that a database transaction never takes in another
/// caller's statements.
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
}
