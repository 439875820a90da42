import Crypto
import Foundation
import KioskCore

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The ``TransferHandler/blockCount`` buffers of a transfer. A transfer that is over (its fetch returned or threw)
/// has given every block back, so the next transfer of the same lane may take them: the chunks of a file reuse their
/// lane's blocks instead of allocating (and giving back to malloc's per-thread arenas) a megabyte per chunk.
///
/// `@unchecked Sendable`: the buffers are used by one transfer at a time (see ``TransferHandler``).
final class TransferBlocks: @unchecked Sendable {
    let buffers: [UnsafeMutableRawBufferPointer]

    init(size: Int) {
        buffers = (0..<TransferHandler.blockCount).map { _ in
            UnsafeMutableRawBufferPointer.allocate(byteCount: size, alignment: 64)
        }
    }

    deinit { for buffer in buffers { buffer.deallocate() } }
}
