import Foundation

#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Free space on the volume of a folder.
enum DiskSpace {
    /// The bytes available for new files on the volume holding `url` (walking up to an existing folder), or `nil`
    /// when unknown. On Apple platforms this is the "important usage" capacity, which counts purgeable space.
    static func available(at url: URL) -> Int64? {
        var folder = url
        while !FileManager.default.fileExists(atPath: folder.path), folder.path != "/" {
            folder.deleteLastPathComponent()
        }
        #if os(iOS) || os(macOS) || os(tvOS) || os(visionOS) || os(watchOS)
        if let values = try? folder.resourceValues(forKeys: [.volumeAvailableCapacityForImportantUsageKey]),
           let capacity = values.volumeAvailableCapacityForImportantUsage {
            return capacity
        }
        #endif
        var stats = statvfs()
        let result = folder.withUnsafeFileSystemRepresentation { statvfs($0!, &stats) }
        guard result == 0 else { return nil }
        return Int64(stats.f_bavail) * Int64(stats.f_frsize)
    }
}
