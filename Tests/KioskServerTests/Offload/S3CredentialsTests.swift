import Testing

@testable import KioskServer

struct S3CredentialsTests {
    @Test("No description shows the secret or the session token")
    func descriptions() {
        let credentials = S3Credentials(
            accessKeyID: "AKIDEXAMPLE", secretAccessKey: "s3cr3t/K7MDENG", sessionToken: "t0ken+FwoGZXIv")
        var dumped = ""
        dump(credentials, to: &dumped)
        let shown = [
            "\(credentials)", String(describing: credentials), String(reflecting: credentials), dumped,
            "\([credentials])", "\(Optional(credentials) as Any)",
        ]
        for text in shown {
            #expect(text.contains("AKIDEXAMPLE"), "\(text)")
            #expect(!text.contains("s3cr3t") && !text.contains("t0ken"), "\(text)")
        }
        #expect(credentials.description.contains("token: redacted"))
        #expect(!S3Credentials(accessKeyID: "A", secretAccessKey: "s").description.contains("token"))
    }
}
