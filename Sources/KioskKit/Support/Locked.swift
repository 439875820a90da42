import Foundation

/// A value behind a lock, for the little state shared with URLSession's delegate queue and event subscribers.
///
/// `@unchecked Sendable` because every access to `value` goes through `lock` (Synchronization's `Mutex` needs
/// macOS 15 / iOS 18, newer than this package's platforms).
final class Locked<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value

    init(_ value: Value) { self.value = value }

    /// Runs `body` with exclusive access to the value.
    func withLock<Result, Failure: Error>(_ body: (inout Value) throws(Failure) -> Result) throws(Failure) -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
