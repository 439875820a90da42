import Foundation
import Testing

@testable import kiosk

/// `kiosk` prints byte counts as Foundation's `ByteCountFormatter` does for `.file` in English, without its ICU setup.
@Suite("Byte counts")
struct ByteCountTextTests {
    /// What `ByteCountFormatter.string(fromByteCount:countStyle: .file)` printed for each (en, swift-corelibs-foundation
    /// 6.3.1): the unit is chosen before rounding, halves go to the even digit, trailing zeros are dropped.
    static let expected: [(Int64, String)] = [
        (0, "Zero KB"), (1, "1 byte"), (2, "2 bytes"), (999, "999 bytes"), (1000, "1 KB"), (1001, "1 KB"),
        (1499, "1 KB"), (1500, "2 KB"), (2500, "2 KB"), (3500, "4 KB"), (9999, "10 KB"), (99_999, "100 KB"),
        (999_499, "999 KB"), (999_500, "1,000 KB"), (999_999, "1,000 KB"), (1_000_000, "1 MB"),
        (1_049_999, "1 MB"), (1_050_000, "1 MB"), (1_100_000, "1.1 MB"), (1_149_999, "1.1 MB"),
        (1_150_000, "1.2 MB"), (1_250_000, "1.2 MB"), (1_950_000, "2 MB"), (2_500_000, "2.5 MB"),
        (9_949_999, "9.9 MB"), (9_950_000, "10 MB"), (12_050_000, "12 MB"), (12_345_678, "12.3 MB"),
        (12_350_000, "12.4 MB"), (99_950_000, "100 MB"), (999_949_999, "999.9 MB"), (999_950_000, "1,000 MB"),
        (1_000_000_000, "1 GB"), (1_004_999_999, "1 GB"), (1_005_000_000, "1 GB"), (1_234_567_890, "1.23 GB"),
        (1_235_000_000, "1.24 GB"), (12_345_678_901, "12.35 GB"), (12_355_000_000, "12.36 GB"),
        (999_995_000_000, "1,000 GB"), (1_000_000_000_000, "1 TB"), (5_300_000_000_000, "5.3 TB"),
    ]

    @Test func byteCountsReadAsByteCountFormatterWritesThem() {
        for (count, text) in Self.expected {
            #expect(ByteCountText.file(count) == text, "\(count)")
        }
    }

    @Test func theLargestCountsDoNotOverflow() {
        #expect(ByteCountText.file(.max) == "9.22 EB")
    }
}
