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
        #expect(machine.receivedHead(head, answer: .whole) == .hold)
        #expect(!machine.mayAnswerDirectly)
        #expect(machine.receivedEnd() == .answer(head, thenClose: false))
        #expect(machine.mayAnswerDirectly)
        #expect(machine.answersOwedByApplication == 0)
    }

    @Test func anotherRequestGoesToTheApplicationWhichThenOwesAnAnswer() {
        var machine = Machine()
        #expect(machine.receivedHead(Self.request("/v1/downloads"), answer: nil) == .forward)
        #expect(machine.receivedBody() == .forward)
        #expect(machine.receivedEnd() == .forward)
        #expect(machine.answersOwedByApplication == 1)
        #expect(!machine.mayAnswerDirectly)
        machine.applicationFinishedAnswer()
        #expect(machine.mayAnswerDirectly)
    }

    @Test func behindAnAnswerTheApplicationOwesEvenAnAnswerableRequestGoesOnInOrder() {
        var machine = Machine()
        _ = machine.receivedHead(Self.request("/v1/downloads"), answer: nil)
        _ = machine.receivedEnd()
        // Pipelined: the catalog request arrives before the application has answered the first.
        #expect(machine.receivedHead(Self.request(), answer: .whole) == .forward)
        #expect(machine.receivedEnd() == .forward)
        #expect(machine.answersOwedByApplication == 2)
        machine.applicationFinishedAnswer()
        machine.applicationFinishedAnswer()
        #expect(machine.receivedHead(Self.request(), answer: .whole) == .hold)
    }

    @Test func aHeldRequestWithABodyGoesOnWholeHeadFirst() {
        var machine = Machine()
        let head = Self.request()
        #expect(machine.receivedHead(head, answer: .whole) == .hold)
        #expect(machine.receivedBody() == .forwardHeldHead(head))
        #expect(machine.receivedBody() == .forward)
        #expect(machine.receivedEnd() == .forward)
        #expect(machine.answersOwedByApplication == 1)
    }

    @Test func connectionCloseEndsReadingAfterADirectAnswer() {
        var machine = Machine()
        let head = Self.request(close: true)
        #expect(machine.receivedHead(head, answer: .whole) == .hold)
        #expect(machine.receivedEnd() == .answer(head, thenClose: true))
        #expect(!machine.mayAnswerDirectly)
        #expect(machine.receivedHead(Self.request(), answer: .whole) == .discard)
        #expect(machine.receivedBody() == .discard)
        #expect(machine.receivedEnd() == .discard)
    }

    @Test func connectionCloseEndsReadingAfterTheApplicationsAnswerToo() {
        var machine = Machine()
        #expect(machine.receivedHead(Self.request("/v1/downloads", close: true), answer: nil) == .forward)
        #expect(machine.receivedEnd() == .forward)
        machine.applicationFinishedAnswer()
        #expect(machine.receivedHead(Self.request(), answer: .whole) == .discard)
    }

    @Test func idleOnlyBetweenRequestsWithNothingOwed() {
        var machine = Machine()
        #expect(machine.isIdle)
        _ = machine.receivedHead(Self.request(), answer: .whole)
        #expect(!machine.isIdle)
        _ = machine.receivedEnd()
        #expect(machine.isIdle)
        _ = machine.receivedHead(Self.request("/v1/downloads"), answer: nil)
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

    @Test func partsReadWhileABodyIsSentWaitAndAreReadAgainOnceItIsOut() {
        var machine = Machine()
        let download = Self.request("/v1/content/p/1/a.bin")
        #expect(machine.receivedHead(download, answer: .streamed) == .hold)
        #expect(machine.receivedEnd() == .answer(download, thenClose: false))
        #expect(machine.isStreaming && !machine.isIdle && !machine.mayAnswerDirectly)
        // The next requests, whatever they are, wait for the body: nothing is answered or forwarded meanwhile.
        #expect(machine.receivedHead(Self.request(), answer: .whole) == .queue)
        #expect(machine.receivedEnd() == .queue)
        #expect(machine.receivedHead(Self.request("/v1/downloads"), answer: nil) == .queue)
        #expect(machine.receivedBody() == .queue)
        #expect(machine.streamFinished() == .readQueued)
        #expect(!machine.isStreaming && machine.isIdle)
        // Read again, they are decided as if they had just arrived.
        #expect(machine.receivedHead(Self.request(), answer: .whole) == .hold)
        #expect(machine.receivedEnd() == .answer(Self.request(), thenClose: false))
    }

    @Test func aStreamedAnswerToAClosingRequestClosesOnceItIsOutAndDropsWhatFollows() {
        var machine = Machine()
        let download = Self.request("/v1/content/p/1/a.bin", close: true)
        #expect(machine.receivedHead(download, answer: .streamed) == .hold)
        #expect(machine.receivedEnd() == .answer(download, thenClose: true))
        #expect(machine.receivedHead(Self.request(), answer: .whole) == .discard)
        #expect(machine.receivedEnd() == .discard)
        #expect(machine.streamFinished() == .closeOutput)
        #expect(!machine.isStreaming && !machine.isIdle)
        #expect(machine.receivedHead(Self.request(), answer: .whole) == .discard)
    }

    @Test func aStreamedRequestWithABodyGoesToTheApplication() {
        var machine = Machine()
        let upload = Self.request("/v1/content/p/1/a.bin")
        #expect(machine.receivedHead(upload, answer: .streamed) == .hold)
        #expect(machine.receivedBody() == .forwardHeldHead(upload))
        #expect(!machine.isStreaming && machine.answersOwedByApplication == 1)
        #expect(machine.receivedEnd() == .forward)
    }

    @Test func anAnswerTheApplicationWritesUnaskedNeverMakesTheCountNegative() {
        var machine = Machine()
        // A parse error: the application answers 400 for a request this handler never saw.
        machine.applicationFinishedAnswer()
        #expect(machine.answersOwedByApplication == 0)
        #expect(machine.receivedHead(Self.request(), answer: .whole) == .hold)
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
