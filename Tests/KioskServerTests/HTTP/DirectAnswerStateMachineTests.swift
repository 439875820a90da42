import Foundation
import NIOHTTP1
import Testing

@testable import KioskServer

@Suite("Direct answers: which requests the event loop answers")
struct DirectAnswerStateMachineTests {
    typealias Machine = DirectAnswerStateMachine

    static func request(_ path: String = "/v1/products", close: Bool = false) -> HTTPRequestHead {
        var request = HTTPRequestHead(version: .http1_1, method: .GET, uri: path, headers: ["Host": "127.0.0.1"])
        if close { request.headers.add(name: "Connection", value: "close") }
        return request
    }

    @Test func anAnswerableRequestIsHeldUntilItsEndThenAnswered() {
        var machine = Machine()
        let head = Self.request()
        #expect(machine.mayAnswerDirectly)
        #expect(machine.receivedHead(head, answerable: true) == .hold)
        #expect(!machine.mayAnswerDirectly)
        #expect(machine.receivedEnd() == .answer(head, thenClose: false))
        #expect(machine.mayAnswerDirectly)
        #expect(machine.answersOwedByApplication == 0)
    }

    @Test func anotherRequestGoesToTheApplicationWhichThenOwesAnAnswer() {
        var machine = Machine()
        #expect(machine.receivedHead(Self.request("/v1/downloads"), answerable: false) == .forward)
        #expect(machine.receivedBody() == .forward)
        #expect(machine.receivedEnd() == .forward)
        #expect(machine.answersOwedByApplication == 1)
        #expect(!machine.mayAnswerDirectly)
        machine.applicationFinishedAnswer()
        #expect(machine.mayAnswerDirectly)
    }

    @Test func behindAnAnswerTheApplicationOwesEvenAnAnswerableRequestGoesOnInOrder() {
        var machine = Machine()
        _ = machine.receivedHead(Self.request("/v1/downloads"), answerable: false)
        _ = machine.receivedEnd()
        // Pipelined: the catalog request arrives before the application has answered the first.
        #expect(machine.receivedHead(Self.request(), answerable: true) == .forward)
        #expect(machine.receivedEnd() == .forward)
        #expect(machine.answersOwedByApplication == 2)
        machine.applicationFinishedAnswer()
        machine.applicationFinishedAnswer()
        #expect(machine.receivedHead(Self.request(), answerable: true) == .hold)
    }

    @Test func aHeldRequestWithABodyGoesOnWholeHeadFirst() {
        var machine = Machine()
        let head = Self.request()
        #expect(machine.receivedHead(head, answerable: true) == .hold)
        #expect(machine.receivedBody() == .forwardHeldHead(head))
        #expect(machine.receivedBody() == .forward)
        #expect(machine.receivedEnd() == .forward)
        #expect(machine.answersOwedByApplication == 1)
    }

    @Test func connectionCloseEndsReadingAfterADirectAnswer() {
        var machine = Machine()
        let head = Self.request(close: true)
        #expect(machine.receivedHead(head, answerable: true) == .hold)
        #expect(machine.receivedEnd() == .answer(head, thenClose: true))
        #expect(!machine.mayAnswerDirectly)
        #expect(machine.receivedHead(Self.request(), answerable: true) == .discard)
        #expect(machine.receivedBody() == .discard)
        #expect(machine.receivedEnd() == .discard)
    }

    @Test func connectionCloseEndsReadingAfterTheApplicationsAnswerToo() {
        var machine = Machine()
        #expect(machine.receivedHead(Self.request("/v1/downloads", close: true), answerable: false) == .forward)
        #expect(machine.receivedEnd() == .forward)
        machine.applicationFinishedAnswer()
        #expect(machine.receivedHead(Self.request(), answerable: true) == .discard)
    }

    @Test func idleOnlyBetweenRequestsWithNothingOwed() {
        var machine = Machine()
        #expect(machine.isIdle)
        _ = machine.receivedHead(Self.request(), answerable: true)
        #expect(!machine.isIdle)
        _ = machine.receivedEnd()
        #expect(machine.isIdle)
        _ = machine.receivedHead(Self.request("/v1/downloads"), answerable: false)
        _ = machine.receivedEnd()
        #expect(!machine.isIdle)
        machine.applicationFinishedAnswer()
        #expect(machine.isIdle)
    }

    @Test func onlyAConnectionHeaderOfExactlyCloseCloses() {
        var head = Self.request()
        #expect(!Machine.closesConnection(head))
        head.headers.add(name: "connection", value: "close")
        #expect(Machine.closesConnection(head))
        head.headers.add(name: "Connection", value: "keep-alive")
        #expect(!Machine.closesConnection(head))
    }

    @Test func anAnswerTheApplicationWritesUnaskedNeverMakesTheCountNegative() {
        var machine = Machine()
        // A parse error: the application answers 400 for a request this handler never saw.
        machine.applicationFinishedAnswer()
        #expect(machine.answersOwedByApplication == 0)
        #expect(machine.receivedHead(Self.request(), answerable: true) == .hold)
    }
}

@Suite("The Date header of direct answers")
struct HTTPDateCacheTests {
    @Test(arguments: [0, 951_782_400, 1_795_851_884, 4_102_444_799])
    func formatsAsIMFFixdate(seconds: Int) {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        let expected = formatter.string(from: Date(timeIntervalSince1970: TimeInterval(seconds)))
        #expect(HTTPDateCache.format(secondsSince1970: seconds) == expected)
    }

    @Test func theCurrentValueIsNow() throws {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        let parsed = try #require(formatter.date(from: HTTPDateCache.shared.current))
        #expect(abs(parsed.timeIntervalSinceNow) < 5)
    }
}
