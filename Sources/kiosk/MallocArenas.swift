#if canImport(Glibc)
    import Glibc
#endif

/// How many malloc arenas glibc keeps. It gives each thread that allocates an arena of its own and keeps what is freed
/// there: the many threads of a download (URLSession's, the transfers' I/O queues, the journal's, the Swift pool) end
/// up holding tens of MiB of freed buffers. The client commands use one arena, as `MALLOC_ARENA_MAX=1` would; the
/// server keeps glibc's default, its event loops allocating in parallel.
///
/// Measured with `kiosk get` (BENCHMARKS.md): of a 1 GiB file at 4 connections per file, 89–94 MiB at the peak
/// without it, under 64 with it, no slower; of 20,000 files of 1 KiB, 77–81 MiB when the limit came from the command's
/// `run` (too late: the Swift pool's first thread already had an arena of its own), 71–73 MiB with the limit in place
/// before any thread (as `MALLOC_ARENA_MAX=1` in the environment gives it).
enum MallocArenas {
    /// Limits the process to one arena. Must run before a second thread allocates: a thread that already has an arena
    /// keeps it. `mallopt` is looked up at run time: Swift's Glibc module does not export `<malloc.h>`.
    static func limitToOne() {
        #if canImport(Glibc)
            typealias MallOpt = @convention(c) (Int32, Int32) -> Int32
            let arenaMaximum: Int32 = -8  // M_ARENA_MAX in <malloc.h>
            guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "mallopt") else { return }
            _ = unsafeBitCast(symbol, to: MallOpt.self)(arenaMaximum, 1)
        #endif
    }
}
