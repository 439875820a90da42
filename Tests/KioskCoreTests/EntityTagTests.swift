import Testing
@testable import KioskCore

@Suite("Entity tags")
struct EntityTagTests {
    static func strong(_ opaque: String) -> EntityTag { EntityTag(opaqueTag: opaque)! }
    static func weak(_ opaque: String) -> EntityTag { EntityTag(opaqueTag: opaque, isWeak: true)! }

    @Test("valid entity-tags", arguments: [
        ("\"xyzzy\"", strong("xyzzy")),
        ("W/\"xyzzy\"", weak("xyzzy")),
        ("\"\"", strong("")),
        ("W/\"\"", weak("")),
        ("  \"xyzzy\"\t", strong("xyzzy")),
        ("\"sha256-LCa0a2j/xo/5m0U8HTBBNBNCLXBkg7+g+YpeiGJm564=\"",
         strong("sha256-LCa0a2j/xo/5m0U8HTBBNBNCLXBkg7+g+YpeiGJm564=")),
        ("\"!#$%&'()*+,-./:;<=>?@[\\]^_`{|}~\"", strong("!#$%&'()*+,-./:;<=>?@[\\]^_`{|}~")),
        ("\"W/\"", strong("W/")),
        ("\"café\"", strong("café")),
    ] as [(String, EntityTag)])
    func parse(value: String, expected: EntityTag) {
        #expect(EntityTag(parsing: value) == expected)
    }

    @Test("invalid entity-tags", arguments: [
        "",
        "xyzzy",
        "\"xyzzy",
        "xyzzy\"",
        "\"xy\"zzy\"",
        "\"xy zzy\"",
        "\"xy\tzzy\"",
        "\"xy\u{7F}zzy\"",
        "\"xy\u{1}zzy\"",
        "w/\"xyzzy\"",
        "W\"xyzzy\"",
        "W/ \"xyzzy\"",
        "W/xyzzy",
        "W/",
        "\"a\" \"b\"",
        "\"a\",\"b\"",
        "*",
        "'xyzzy'",
    ])
    func parseInvalid(value: String) {
        #expect(EntityTag(parsing: value) == nil)
    }

    @Test("opaque-tag validation", arguments: [
        ("abc", true), ("", true), ("a/b+c=", true), ("ünï", true),
        ("a b", false), ("a\"b", false), ("a\nb", false), ("a\u{0}b", false), ("a\u{7F}", false),
    ] as [(String, Bool)])
    func opaqueTagValidation(opaque: String, isValid: Bool) {
        #expect((EntityTag(opaqueTag: opaque) != nil) == isValid)
    }

    @Test("header value round-trips", arguments: [strong("abc"), weak("abc"), strong(""), weak("a/b")])
    func headerValue(tag: EntityTag) {
        #expect(EntityTag(parsing: tag.headerValue) == tag)
    }

    @Test func headerValueForm() {
        #expect(Self.strong("1").headerValue == "\"1\"")
        #expect(Self.weak("1").headerValue == "W/\"1\"")
    }

    /// The table of RFC 9110 §8.8.3.2.
    @Test("strong and weak comparison", arguments: [
        (weak("1"), weak("1"), false, true),
        (weak("1"), weak("2"), false, false),
        (weak("1"), strong("1"), false, true),
        (strong("1"), strong("1"), true, true),
        (strong("1"), strong("2"), false, false),
        (strong("1"), weak("1"), false, true),
        (strong("abc"), strong("ABC"), false, false),
    ] as [(EntityTag, EntityTag, Bool, Bool)])
    func comparison(lhs: EntityTag, rhs: EntityTag, strongMatch: Bool, weakMatch: Bool) {
        #expect(lhs.matchesStrongly(rhs) == strongMatch)
        #expect(rhs.matchesStrongly(lhs) == strongMatch)
        #expect(lhs.matchesWeakly(rhs) == weakMatch)
        #expect(rhs.matchesWeakly(lhs) == weakMatch)
    }

    @Test("entity-tag lists", arguments: [
        ("*", EntityTagList.any),
        (" * ", .any),
        ("\"a\"", .tags([strong("a")])),
        ("\"a\",\"b\"", .tags([strong("a"), strong("b")])),
        ("\"a\", W/\"b\"", .tags([strong("a"), weak("b")])),
        ("\"a\" ,\tW/\"b\" , \"c\"", .tags([strong("a"), weak("b"), strong("c")])),
        ("\"a\",,\"b\"", .tags([strong("a"), strong("b")])),
        (", \"a\",", .tags([strong("a")])),
        ("\"a,b\", \"c\"", .tags([strong("a,b"), strong("c")])),
    ] as [(String, EntityTagList)])
    func list(value: String, expected: EntityTagList) {
        #expect(EntityTagList(parsing: value) == expected)
    }

    @Test("invalid entity-tag lists", arguments: [
        "", ",", " , ,", "**", "*, \"a\"", "\"a\", *", "\"a\" \"b\"", "\"a\"\"b\"", "a", "\"a\", b", "W/a",
    ])
    func listInvalid(value: String) {
        #expect(EntityTagList(parsing: value) == nil)
    }

    @Test func listLengthLimit() {
        let atLimit = "\"" + String(repeating: "a", count: EntityTag.maximumFieldLength - 2) + "\""
        #expect(EntityTagList(parsing: atLimit) != nil)
        #expect(EntityTag(parsing: atLimit) != nil)
        #expect(EntityTagList(parsing: atLimit + " ") == nil)
        #expect(EntityTag(parsing: atLimit + " ") == nil)
    }

    @Test func listMatching() throws {
        let current = Self.strong("v2")
        let list = try #require(EntityTagList(parsing: "\"v1\", W/\"v2\""))
        #expect(list.matchesWeakly(current))
        #expect(!list.matchesStrongly(current))
        let strongList = try #require(EntityTagList(parsing: "\"v1\", \"v2\""))
        #expect(strongList.matchesStrongly(current))
        #expect(!strongList.matchesStrongly(Self.weak("v2")))
        #expect(EntityTagList.any.matchesWeakly(current))
        #expect(EntityTagList.any.matchesStrongly(current))
        #expect(!EntityTagList.tags([Self.strong("v3")]).matchesWeakly(current))
    }
}
