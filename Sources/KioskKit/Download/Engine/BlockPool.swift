import Crypto
import Foundation
import KioskCore

/// Transfer blocks given back by chunk requests that ended, for the next ones: as many sets as requests ran at
/// once, never more than the connection budget.
final class BlockPool: Sendable {
    private let free = Locked<[TransferBlocks]>([])
    /// The size of each block.
    let blockSize: Int

    /// A pool of blocks of `blockSize` bytes.
    init(blockSize: Int = TransferHandler.rangeBlockSize) { self.blockSize = blockSize }

    /// A set of blocks of ``blockSize``: one given back, or a new one.
    func take() -> TransferBlocks {
        free.withLock { $0.popLast() } ?? TransferBlocks(size: blockSize)
    }

    /// Gives a set back once its transfer is over.
    func give(_ blocks: TransferBlocks) { free.withLock { $0.append(blocks) } }
}
