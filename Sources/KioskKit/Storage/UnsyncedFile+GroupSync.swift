import Foundation

extension UnsyncedFile {
    /// How many files one group commit fsyncs at once. A file system commits concurrent fsyncs together (ext4's
    /// journal, APFS): eight at once cost about what one costs, where eight in a row cost eight times as much.
    static let concurrentFileSyncs = 8

    /// fsyncs the files (on up to ``concurrentFileSyncs`` threads) and tells which succeeded (`true` for no file).
    /// A file named by several appends (the chunks of one file fetched by chunks share one ``UnsyncedFile``) is
    /// fsynced once for all of them.
    static func synchronize(_ files: [UnsyncedFile?]) -> [Bool] {
        var unique: [UnsyncedFile] = []
        var position: [ObjectIdentifier: Int] = [:]
        for file in files {
            guard let file, position[ObjectIdentifier(file)] == nil else { continue }
            position[ObjectIdentifier(file)] = unique.count
            unique.append(file)
        }
        let synced = synchronizeEach(unique)
        return files.map { file in file.map { synced[position[ObjectIdentifier($0)]!] } ?? true }
    }

    /// fsyncs each file once, on up to ``concurrentFileSyncs`` threads, and tells which succeeded.
    private static func synchronizeEach(_ work: [UnsyncedFile]) -> [Bool] {
        let synced = Locked([Bool](repeating: true, count: work.count))
        guard work.count > 1 else {
            for (index, file) in work.enumerated() where (try? file.synchronize()) == nil {
                synced.withLock { $0[index] = false }
            }
            return synced.withLock { $0 }
        }
        let next = Locked(0)
        let done = DispatchGroup()
        for _ in 0..<min(work.count, concurrentFileSyncs) {
            done.enter()
            // Threads of their own: fsync blocks, and the shared pool is only as wide as the CPU count.
            let thread = Thread {
                defer { done.leave() }
                while true {
                    let index = next.withLock { value -> Int in
                        defer { value += 1 }
                        return value
                    }
                    guard index < work.count else { return }
                    if (try? work[index].synchronize()) == nil { synced.withLock { $0[index] = false } }
                }
            }
            thread.start()
        }
        done.wait()
        return synced.withLock { $0 }
    }
}
