import Testing

@testable import KioskServer

/// `kiosk bench`'s request paths: a file, a file under a scenario, the scenario list, and everything refused.
@Suite("Bench: request paths")
struct BenchPathTests {
    @Test(arguments: [
        ("/a.bin", BenchPath.file("a.bin")),
        ("/levels/level%201.pak", .file("levels/level 1.pak")),
        ("/%C3%A9t%C3%A9.pdf", .file("été.pdf")),
        ("/livre/été.pdf", .file("livre/été.pdf")),
        ("/s/cut/a.bin", .scenario("cut", file: "a.bin")),
        ("/s/busy/deep/er/a.bin", .scenario("busy", file: "deep/er/a.bin")),
        ("/s/none/s/a.bin", .scenario("none", file: "s/a.bin")),
        ("/s/", .scenarioList),
        ("/s", .scenarioList),
        ("/s/report", .report),
        ("/s/report/a.bin", .scenario("report", file: "a.bin")),
        ("/a..b", .file("a..b")),
    ])
    func pathsThatNameSomething(raw: String, expected: BenchPath) {
        #expect(BenchPath(rawPath: raw) == expected)
    }

    @Test(arguments: [
        "", "a.bin", "/", "//a.bin", "/a.bin/", "/../etc/passwd", "/a/../b", "/./a", "/%2e%2e/etc/passwd",
        "/%2E%2E/etc/passwd", "/a%2f..%2fb", "/a%2Fb", "/a%00b", "/%00", "/.hidden", "/dir/.git/config",
        "/s/cut", "/s/cut/", "/s//a.bin", "/a%zz", "/a%", "/a%0Ab", "/a\u{7F}b", "/s/cut/../a.bin",
    ])
    func pathsThatAreRefused(raw: String) {
        #expect(BenchPath(rawPath: raw) == nil)
    }

    @Test func lengthsAreBounded() {
        let segment = String(repeating: "a", count: 255)
        #expect(BenchPath(rawPath: "/" + segment) == .file(segment))
        #expect(BenchPath(rawPath: "/" + segment + "a") == nil)
        let long = Array(repeating: segment, count: 17).joined(separator: "/")
        #expect(long.utf8.count > BenchPath.maximumLength)
        #expect(BenchPath(rawPath: "/" + long) == nil)
    }
}
