import Foundation

/// The buffer of one event or status stream. It keeps every element that is not progress, in order, and of a run of
/// progress updates of one product (one key; a product has one download at a time) only the latest: a progress element replaces the pending
/// progress of its key when nothing of that key was added after it. Its size is therefore bounded by the number of
/// keys plus twice the other elements not yet read (one progress element of their key on each side), however slow
/// the reader.
final class CoalescingBuffer<Element: Sendable>: Sendable {
    private struct State {
        var pending: [(element: Element, key: String)] = []
        /// The position of `pending[0]` in the sequence of all elements kept so far.
        var head = 0
        /// By key, the position of its pending progress element, while nothing of that key was added after it.
        var replaceable: [String: Int] = [:]
        /// No element is added any more (a final element was added, or the stream ended).
        var isFinished = false
        var reader: CheckedContinuation<Element?, Never>?
    }

    private let state = Locked(State())

    /// How many elements wait to be read (for tests of the bound).
    var pendingCount: Int { state.withLock { $0.pending.count } }

    /// Whether no element is added any more.
    var isFinished: Bool { state.withLock { $0.isFinished } }

    /// Adds an element about `key`; progress (`isProgress`) may be coalesced with the pending progress of the same
    /// key. After a final element (`isFinal`), the buffer ends once read.
    func push(_ element: Element, key: String, isProgress: Bool, isFinal: Bool = false) {
        let reader: CheckedContinuation<Element?, Never>? = state.withLock { state in
            guard !state.isFinished else { return nil }
            if isFinal { state.isFinished = true }
            if let reader = state.reader {
                state.reader = nil
                return reader
            }
            if isProgress, let position = state.replaceable[key] {
                state.pending[position - state.head].element = element
                return nil
            }
            state.pending.append((element, key))
            state.replaceable[key] = isProgress ? state.head + state.pending.count - 1 : nil
            return nil
        }
        reader?.resume(returning: element)
    }

    /// Ends the stream once the pending elements are read.
    func finish() {
        let reader: CheckedContinuation<Element?, Never>? = state.withLock { state in
            state.isFinished = true
            defer { state.reader = nil }
            return state.reader
        }
        reader?.resume(returning: nil)
    }

    /// The next element; `nil` at the end, or when the reading task is cancelled.
    func next() async -> Element? {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Element?, Never>) in
                let ready: Element?? = state.withLock { state in
                    if !state.pending.isEmpty {
                        let (element, key) = state.pending.removeFirst()
                        if state.replaceable[key] == state.head { state.replaceable[key] = nil }
                        state.head += 1
                        return .some(element)
                    }
                    if state.isFinished || Task.isCancelled { return .some(nil) }
                    state.reader = continuation
                    return nil
                }
                if let ready { continuation.resume(returning: ready) }
            }
        } onCancel: {
            finish()
        }
    }
}
