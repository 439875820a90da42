import Testing

@testable import KioskServer

@Suite("Fault spec grammar")
struct FaultSpecTests {
    private func parse(_ text: String) throws -> FaultSpec { try FaultSpec(parsing: text) }

    @Test func cutAtAnOffsetOrAtRandom() throws {
        #expect(try parse("cut=65536").cut == .bytes(65536))
        #expect(try parse("cut=64KiB").cut == .bytes(65536))
        #expect(try parse("cut=random").cut == .random)
        #expect(try parse("cut=RANDOM").cut == .random)
        #expect(try parse("cut").cut == .random)
        #expect(try parse("cut=0").cut == .bytes(0))
    }

    @Test(
        arguments: [
            ("1", 1), ("1b", 1), ("2k", 2048), ("2KB", 2048), ("2KiB", 2048), ("3m", 3 << 20), ("3MB", 3 << 20),
            ("3MiB", 3 << 20), ("1g", 1 << 30), ("1GiB", 1 << 30), ("1048576", 1 << 20),
        ] as [(String, Int64)])
    func sizes(text: String, bytes: Int64) throws {
        #expect(try FaultSpec.parseSize(text, for: "cut") == bytes)
    }

    @Test(arguments: ["", "k", "-1", "1.5k", "1 k", "1TB", "12x", "9999999999999999", "0x10"])
    func badSizes(text: String) {
        #expect(throws: FaultSpecError.self) { try FaultSpec.parseSize(text, for: "cut") }
    }

    @Test func throttleTakesARatePerSecond() throws {
        #expect(try parse("throttle=1MiB/s").throttle == 1 << 20)
        #expect(try parse("throttle=65536").throttle == 65536)
        #expect(try parse("throttle=100KB/S").throttle == 100 << 10)
        #expect(throws: FaultSpecError.self) { try parse("throttle=0") }
        #expect(throws: FaultSpecError.self) { try parse("throttle=0/s") }
        #expect(throws: FaultSpecError.self) { try parse("throttle") }
        #expect(throws: FaultSpecError.self) { try parse("throttle=fast") }
    }

    @Test func stallTakesADurationAndAnOffset() throws {
        #expect(try parse("stall=2s@1048576").stall == .init(duration: .seconds(2), offset: .bytes(1 << 20)))
        #expect(try parse("stall=500ms@1MiB").stall == .init(duration: .milliseconds(500), offset: .bytes(1 << 20)))
        #expect(try parse("stall=1.5s").stall == .init(duration: .milliseconds(1500), offset: .bytes(0)))
        #expect(try parse("stall=1s@random").stall == .init(duration: .seconds(1), offset: .random))
        for bad in ["stall", "stall=2", "stall=2m", "stall=s", "stall=-1s", "stall=2s@", "stall=2s@x", "stall=301s"] {
            #expect(throws: FaultSpecError.self, "\(bad)") { try parse(bad) }
        }
        #expect(try parse("stall=300s").stall?.duration == .seconds(300))
    }

    @Test func statusTakesARetryAfter() throws {
        #expect(try parse("status=503").status == .init(code: 503, retryAfter: 1))
        #expect(try parse("status=503,retry-after=2").status == .init(code: 503, retryAfter: 2))
        #expect(try parse("retry-after=0;status=429").status == .init(code: 429, retryAfter: 0))
        #expect(try parse("status=500").status == .init(code: 500, retryAfter: nil))
        for bad in [
            "status", "status=404", "status=200", "status=abc", "retry-after=2", "status=500,retry-after=1",
            "status=503,retry-after=-1", "status=503,retry-after=1.5", "status=503,retry-after=3601",
        ] {
            #expect(throws: FaultSpecError.self, "\(bad)") { try parse(bad) }
        }
    }

    @Test func flagsTakeNoValue() throws {
        let spec = try parse("ignore-range;etag-change")
        #expect(spec.ignoreRange)
        #expect(spec.etagChange)
        #expect(throws: FaultSpecError.self) { try parse("ignore-range=yes") }
        #expect(throws: FaultSpecError.self) { try parse("etag-change=1") }
    }

    @Test func corruptAndFirstByte() throws {
        #expect(try parse("corrupt=100").corrupt == .bytes(100))
        #expect(try parse("corrupt=random").corrupt == .random)
        #expect(try parse("corrupt").corrupt == .random)
        #expect(try parse("first-byte=500ms").firstByte == .milliseconds(500))
        #expect(try parse("first-byte=2s").firstByte == .seconds(2))
        #expect(throws: FaultSpecError.self) { try parse("first-byte") }
        #expect(throws: FaultSpecError.self) { try parse("corrupt=-3") }
    }

    @Test func probability() throws {
        #expect(try parse("cut=1").probability == 1)
        #expect(try parse("cut=1;p=0.25").probability == 0.25)
        #expect(try parse("cut=1;p=0").probability == 0)
        for bad in ["cut;p=1.5", "cut;p=-0.1", "cut;p=half", "cut;p"] {
            #expect(throws: FaultSpecError.self, "\(bad)") { try parse(bad) }
        }
    }

    @Test func separatorsSpacesAndCase() throws {
        let spec = try parse(" CUT=10 ; Throttle=1k/s,  ignore-range ;; ")
        #expect(spec.cut == .bytes(10))
        #expect(spec.throttle == 1024)
        #expect(spec.ignoreRange)
        #expect(spec.kinds == [.ignoreRange, .throttle, .cut])
    }

    @Test func refusalsNameTheProblem() {
        func message(_ text: String) -> String? {
            do {
                _ = try FaultSpec(parsing: text)
                return nil
            } catch {
                return "\(error)"
            }
        }
        #expect(message("cutt=1") == "unknown fault 'cutt'")
        #expect(message("cut=1;cut=2") == "'cut' is given twice")
        #expect(message("") == "the fault spec is empty")
        #expect(message(";,") == "the fault spec is empty")
        #expect(message("cut=") == "'cut' needs a value")
        #expect(message(String(repeating: "cut;", count: 200))?.contains("longer than") == true)
        #expect(message("throttle")?.contains("throttle=1MiB/s") == true)
    }

    @Test func canonicalFormRoundTrips() throws {
        for text in [
            "cut=65536", "cut=random", "throttle=1MiB/s", "stall=2s@1048576", "stall=250ms@random",
            "status=503,retry-after=2", "status=500", "ignore-range", "etag-change", "corrupt=7", "first-byte=500ms",
            "first-byte=1s;status=429;ignore-range;etag-change;throttle=10/s;stall=1s@0;corrupt=random;cut=9;p=0.5",
        ] {
            let spec = try parse(text)
            #expect(try parse(spec.description) == spec, "\(text) → \(spec.description)")
        }
        #expect(FaultSpec().description == "none")
        #expect(try parse("none") == FaultSpec())
        #expect(try parse("none").kinds.isEmpty)
        #expect(throws: FaultSpecError.self) { try parse("none=1") }
        #expect(try parse("status=503,retry-after=2").description == "status=503;retry-after=2")
    }

    @Test func whichFaultsAlterTheByteStream() throws {
        #expect(try parse("cut").altersBodyStream)
        #expect(try parse("throttle=1k").altersBodyStream)
        #expect(try parse("stall=1s").altersBodyStream)
        #expect(try parse("corrupt").altersBodyStream)
        #expect(try !parse("first-byte=1s;status=503;ignore-range;etag-change").altersBodyStream)
    }
}

@Suite("Fault profiles and the injector")
struct FaultProfileTests {
    @Test func profiles() throws {
        #expect(try FaultProfile(parsing: "none") == .requestOnly)
        #expect(try FaultProfile(parsing: "allow") == .requestOnly)
        #expect(try FaultProfile(parsing: "chaos") == .chaos(probability: FaultProfile.defaultChaosProbability))
        #expect(try FaultProfile(parsing: "chaos:0.5") == .chaos(probability: 0.5))
        #expect(try FaultProfile(parsing: "Chaos:1") == .chaos(probability: 1))
        #expect(try FaultProfile(parsing: "cut=10") == .spec(FaultSpec(parsing: "cut=10")))
        for (name, spec) in FaultProfile.named {
            #expect(try FaultProfile(parsing: name) == .spec(FaultSpec(parsing: spec)))
        }
        for bad in ["chaos:2", "chaos:", "chaos:x", "nonsense", ""] {
            #expect(throws: FaultSpecError.self, "\(bad)") { try FaultProfile(parsing: bad) }
        }
        #expect(try FaultProfile(parsing: FaultProfile.chaos(probability: 0.3).description) == .chaos(probability: 0.3))
    }

    @Test func seededInjectorsRepeatThemselves() {
        let first = FaultInjector(profile: .chaos(probability: 1), seed: 42)
        let second = FaultInjector(profile: .chaos(probability: 1), seed: 42)
        for _ in 0..<50 {
            #expect(first.chaos(probability: 1) == second.chaos(probability: 1))
        }
    }

    @Test func chaosInjectsEveryKindOnlyRecoverably() throws {
        let injector = FaultInjector(profile: .chaos(probability: 1), seed: 7)
        var seen = Set<FaultKind>()
        for _ in 0..<2000 {
            let spec = try #require(injector.chaos(probability: 1))
            #expect(spec.kinds.count == 1)
            seen.formUnion(spec.kinds)
            if let stall = spec.stall { #expect(stall.duration <= .milliseconds(1500)) }
            if let delay = spec.firstByte { #expect(delay <= .seconds(1)) }
            if let rate = spec.throttle { #expect(rate >= 512 << 10) }
            if let status = spec.status {
                #expect([429, 500, 503].contains(status.code))
                #expect(status.code == 500 || status.retryAfter == 1)
            }
        }
        // Every recoverable kind, and none of the faults of the field.
        #expect(seen == Set(FaultKind.recoverable))
        #expect(injector.chaos(probability: 0) == nil)
    }

    @Test func chaosCorruptsOneDownloadOnlyOnce() {
        let injector = FaultInjector(profile: .chaos(probability: 1), seed: 9)
        let sameDownload = (0..<400).compactMap { _ in injector.chaos(probability: 1, download: 42)?.corrupt }
        #expect(sameDownload.count == 1)
        let otherDownloads = (0..<400).compactMap { injector.chaos(probability: 1, download: 1000 + $0)?.corrupt }
        #expect(otherDownloads.count > 10)
    }

    @Test func serverWideCorruptHitsOneDownloadOnlyOnce() throws {
        let injector = FaultInjector(profile: .spec(try FaultSpec(parsing: "corrupt=random;throttle=1MiB/s")), seed: 11)
        let sameDownload = (0..<50).compactMap { _ in injector.faults(requested: nil, download: 42) }
        // Every request keeps the spec's other faults; only the first one corrupts.
        #expect(sameDownload.count == 50)
        #expect(sameDownload.allSatisfy { $0.throttle == 1 << 20 })
        #expect(sameDownload.compactMap(\.corrupt) == [.random])
        let otherDownloads = (0..<50).compactMap { injector.faults(requested: nil, download: 1000 + $0)?.corrupt }
        #expect(otherDownloads.count == 50)
    }

    @Test func serverWideCorruptAloneInjectsNothingTheSecondTime() throws {
        let injector = FaultInjector(profile: .spec(try FaultSpec(parsing: "corrupt=100")), seed: 12)
        #expect(injector.faults(requested: nil, download: 7)?.corrupt == .bytes(100))
        #expect(injector.faults(requested: nil, download: 7) == nil)
        // A per-request spec is the client's own choice: it corrupts every time it is sent.
        let requested = try FaultSpec(parsing: "corrupt=5")
        #expect(injector.faults(requested: requested, download: 7)?.corrupt == .bytes(5))
        #expect(injector.faults(requested: requested, download: 7)?.corrupt == .bytes(5))
    }

    @Test func corruptedDownloadsAreRememberedWithinABound() throws {
        let injector = FaultInjector(profile: .spec(try FaultSpec(parsing: "corrupt")), seed: 13)
        #expect(injector.faults(requested: nil, download: -1)?.corrupt == .random)
        #expect(injector.faults(requested: nil, download: -1) == nil)
        // Once the memory is full it starts over: a download may then be corrupted once more, never unboundedly.
        for download in 0..<FaultInjector.corruptedDownloadsLimit {
            _ = injector.faults(requested: nil, download: download)
        }
        #expect(injector.faults(requested: nil, download: -1)?.corrupt == .random)
    }

    @Test func chaosProbabilityIsRoughlyHonoured() {
        let injector = FaultInjector(profile: .chaos(probability: 0.3), seed: 1)
        let hits = (0..<10_000).filter { _ in injector.chaos(probability: 0.3) != nil }.count
        #expect((2700...3300).contains(hits))
    }

    @Test func offsetsResolveInsideTheBody() {
        let injector = FaultInjector(profile: .requestOnly, seed: 3)
        #expect(injector.resolve(.bytes(10), length: 11) == 10)
        #expect(injector.resolve(.bytes(11), length: 11) == nil)
        #expect(injector.resolve(.random, length: 0) == nil)
        #expect(injector.resolve(nil, length: 10) == nil)
        for _ in 0..<200 {
            let offset = injector.resolve(.random, length: 5)
            #expect(offset.map { (0..<5).contains($0) } == true)
        }
    }

    @Test func bodyFaultsOutsideTheBodyAreDropped() throws {
        let injector = FaultInjector(profile: .requestOnly, seed: 3)
        #expect(injector.bodyFaults(try FaultSpec(parsing: "cut=100;corrupt=200"), length: 100) == nil)
        let faults = try #require(injector.bodyFaults(try FaultSpec(parsing: "cut=99;stall=1s@5"), length: 100))
        #expect(faults.cutAt == 99)
        #expect(faults.stall == .init(offset: 5, duration: .seconds(1)))
        #expect(faults.corruptAt == nil)
    }
}

/// `cut=30%`: offsets as a share of the body, so that one scenario fits files of any size.
@Suite("Fault spec: offsets as a share of the body")
struct FaultSpecShareTests {
    @Test(arguments: [
        ("cut=30%", 3000, "cut=30%"), ("cut=0%", 0, "cut=0%"), ("cut=12.5%", 1250, "cut=12.5%"),
        ("cut=0.05%", 5, "cut=0.05%"),
        ("corrupt=99.99%", 9999, "corrupt=99.99%"), ("stall=1s@50%", 5000, "stall=1s@50%"),
    ])
    func aShareIsParsedAndWrittenBack(text: String, hundredths: Int, written: String) throws {
        let spec = try FaultSpec(parsing: text)
        let offset = spec.cut ?? spec.corrupt ?? spec.stall?.offset
        #expect(offset == .percent(hundredths: hundredths))
        #expect(spec.description == written)
        #expect(try FaultSpec(parsing: spec.description) == spec)
    }

    @Test(arguments: [
        "cut=100%", "cut=-1%", "cut=%", "cut=1.234%", "cut=1.%", "cut=x%", "cut=50%%", "cut=٣%", "cut=+5%",
    ])
    func anythingElseIsRefused(text: String) {
        #expect(throws: FaultSpecError.self) { try FaultSpec(parsing: text) }
    }

    @Test func aShareLandsAtThatPlaceOfTheBody() {
        let injector = FaultInjector(profile: .requestOnly, seed: 1)
        #expect(injector.resolve(.percent(hundredths: 3000), length: 100_000) == 30_000)
        #expect(injector.resolve(.percent(hundredths: 5000), length: 3) == 1)
        #expect(injector.resolve(.percent(hundredths: 0), length: 10) == 0)
        #expect(injector.resolve(.percent(hundredths: 5000), length: 0) == nil)
    }
}

/// The faults of the field that `kiosk bench`'s scenarios use: error pages, drifting validators, lying ranges,
/// resets.
@Suite("Fault spec: the faults of the field")
struct FaultSpecFieldTests {
    @Test func eachParsesAndWritesBack() throws {
        let spec = try FaultSpec(parsing: "error-page;node=3/weak;range-off-by-one;refuse-range;reset")
        #expect(spec.errorPage && spec.refuseRange && spec.reset)
        #expect(spec.node == .init(number: 3, isWeak: true))
        #expect(spec.contentRange == .offByOne)
        #expect(spec.kinds == [.errorPage, .node, .rangeOffByOne, .refuseRange, .reset])
        #expect(try FaultSpec(parsing: spec.description) == spec)
        #expect(try FaultSpec(parsing: "node=1").node == .init(number: 1, isWeak: false))
        #expect(try FaultSpec(parsing: "no-content-range").contentRange == .missing)
        let slow = try FaultSpec(parsing: "trickle=4KiB/20ms;redirect=origin")
        #expect(slow.trickle == .init(bytes: 4096, pause: .milliseconds(20)) && slow.redirect == .origin)
        #expect(slow.altersBodyStream && slow.kinds == [.trickle, .redirect])
        #expect(try FaultSpec(parsing: slow.description) == slow)
        #expect(try FaultSpec(parsing: "redirect=LOOP").redirect == .loop)
        let lie = try FaultSpec(parsing: "length-lie=long")
        #expect(lie.lengthLie == .long && lie.altersBodyStream && lie.kinds == [.lengthLie])
        #expect(try FaultSpec(parsing: lie.description) == lie)
        #expect(try FaultSpec(parsing: "expire").kinds == [.expire])
        #expect(!spec.altersBodyStream)
    }

    /// `changed` (another version of the file) and `gzip-range` (a gzipped body, a range's too): flags that change
    /// the bytes of the body, so that it never goes out with `sendfile`.
    @Test func aChangedFileAndAGzippedRangeParseAndWriteBack() throws {
        let changed = try FaultSpec(parsing: "Changed")
        #expect(changed.changed && !changed.gzipRange && changed.kinds == [.changed])
        #expect(changed.altersBodyStream && changed.description == "changed")
        let gzip = try FaultSpec(parsing: "GZIP-RANGE")
        #expect(gzip.gzipRange && !gzip.changed && gzip.kinds == [.gzipRange])
        #expect(gzip.altersBodyStream && gzip.description == "gzip-range")
        let both = try FaultSpec(parsing: "cut=50%,gzip-range;changed;node=2;p=0.5")
        #expect(both.kinds == [.cut, .node, .changed, .gzipRange])
        #expect(both.description == "node=2;changed;gzip-range;cut=50%;p=0.5")
        #expect(try FaultSpec(parsing: both.description) == both)
        #expect(FaultKind.changed.rawValue == "changed" && FaultKind.gzipRange.rawValue == "gzip_range")
        // Neither is one of the recoverable faults chaos draws from.
        #expect(!FaultKind.recoverable.contains(.changed) && !FaultKind.recoverable.contains(.gzipRange))
    }

    @Test func aGzippedBodyHasNoLengthToLieWith() {
        #expect {
            try FaultSpec(parsing: "gzip-range;length-lie=short")
        } throws: { error in
            "\(error)" == "'gzip-range' does not go with 'length-lie'"
        }
    }

    @Test(arguments: [
        "node", "node=0", "node=10", "node=2/strong", "node=x", "error-page=1", "reset=now",
        "no-content-range;range-off-by-one", "node=1;node=2", "trickle", "trickle=0/1s", "trickle=1k", "trickle=1k/x",
        "redirect", "redirect=cdn", "redirect=loop;redirect=origin", "length-lie", "length-lie=maybe", "expire=1s",
        "changed=1", "changed=yes", "gzip-range=1", "gzip-range=gzip", "length-lie=long;gzip-range",
    ])
    func mistakesAreRefused(text: String) {
        #expect(throws: FaultSpecError.self) { try FaultSpec(parsing: text) }
    }

}
