import Crypto
import Foundation
import KioskCore

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The error answer of a ``TransferHandler``'s current request: whether it was cut (its body read as far as it is
/// kept, or its deadline passed), and how to stop the request. The delivering thread and the deadline's timer share
/// it; requests are numbered so that a late timer cannot cut the next one.
struct ErrorAnswer {
    /// The number of the current request.
    private(set) var request = 0
    private var stop: (@Sendable () -> Void)?
    private var isCut = false

    /// A new request, stopped by `stop`.
    mutating func begin(stop: @escaping @Sendable () -> Void) {
        request += 1
        self.stop = stop
        isCut = false
    }

    /// Cuts the answer of request `number` if it is the current one and still going: returns how to stop it (once).
    mutating func cut(request number: Int) -> (@Sendable () -> Void)? {
        guard number == request, let stop, !isCut else { return nil }
        isCut = true
        return stop
    }

    /// The request ended: whether its answer was cut.
    mutating func end() -> Bool {
        defer {
            stop = nil
            isCut = false
        }
        return isCut
    }
}
