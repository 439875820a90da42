// Resume.kt URL FILE — a careful resume loop on OkHttp 4 (Kotlin/JVM). UNTESTED: CI has no JVM; the same rules
// as resume.py and resume.swift, which CI runs against `kiosk bench`.
//
//   kotlinc Resume.kt -cp okhttp-4.12.0.jar:okio-jvm-3.6.0.jar -include-runtime -d resume.jar
//   java -cp resume.jar:okhttp-4.12.0.jar:okio-jvm-3.6.0.jar:kotlin-stdlib.jar ResumeKt URL FILE
import java.io.File
import java.io.IOException
import java.security.MessageDigest
import java.util.Base64
import kotlin.system.exitProcess
import okhttp3.HttpUrl.Companion.toHttpUrl
import okhttp3.OkHttpClient
import okhttp3.Request

fun main(args: Array<String>) {
    val url = args[0]
    val file = File(args[1])
    val part = File(file.path + ".part")
    val state = File(file.path + ".part.state") // ETag, Repr-Digest and length of the bytes in `part`, one a line
    val origin = url.toHttpUrl().let { Triple(it.scheme, it.host, it.port) }
    // Redirects are followed by hand, on the URL's own origin only.
    val client = OkHttpClient.Builder().followRedirects(false).followSslRedirects(false).build()
    fun startOver() { part.delete(); state.delete() }

    for (attempt in 1..8) {
        if (attempt > 1) Thread.sleep(1000)
        val saved = if (part.exists() && state.exists()) state.readLines() else listOf("", "", "-1")
        val have = if (part.exists() && state.exists()) part.length() else 0L
        var target = url
        try {
            for (redirect in 0..10) {
                val request = Request.Builder().url(target).header("Accept-Encoding", "identity").apply {
                    if (have > 0 && saved[0].startsWith("\"")) { // If-Range needs a strong tag
                        header("Range", "bytes=$have-")
                        header("If-Range", saved[0])
                    }
                }.build()
                client.newCall(request).execute().use { response ->
                    if (response.isRedirect) {
                        val next = response.header("Location")?.let { response.request.url.resolve(it) }
                            ?: throw IOException("a redirect without Location")
                        if (Triple(next.scheme, next.host, next.port) != origin) {
                            System.err.println("refused: a redirect to another origin ($next)"); exitProcess(1)
                        }
                        target = next.toString()
                        return@use
                    }
                    when (response.code) {
                        200, 206 -> {}
                        416 -> { startOver(); throw IOException("416") }
                        408, 429, in 500..599 -> throw IOException("${response.code}")
                        401, 403, 410 -> { // a signed URL that expired: run again with a new one to resume
                            System.err.println("refused: ${response.code}; the bytes are kept")
                            exitProcess(75)
                        }
                        else -> { System.err.println("refused: ${response.code}"); exitProcess(1) }
                    }
                    val coding = response.header("Content-Encoding") ?: "identity"
                    if (coding != "identity") throw IOException("a content coding that was not asked for")
                    val type = response.header("Content-Type") ?: ""
                    if (type.startsWith("text/html") && response.header("Repr-Digest") == null) {
                        throw IOException("an HTML error page instead of the file")
                    }
                    var lines = saved
                    if (response.code == 206) {
                        val field = response.header("Content-Range") ?: ""
                        val range = Regex("""bytes (\d+)-(\d+)/(\d+)""").matchEntire(field)
                        if (range == null || range.groupValues[1].toLong() != have ||
                            range.groupValues[2].toLong() + 1 != range.groupValues[3].toLong()) {
                            throw IOException("not the range asked for")
                        }
                        if (response.header("ETag") != saved[0] || (response.header("Repr-Digest") ?: "") != saved[1]) {
                            startOver(); throw IOException("the file changed on the server")
                        }
                    } else {
                        startOver()
                        lines = listOf(response.header("ETag") ?: "", response.header("Repr-Digest") ?: "",
                                       response.header("Content-Length") ?: "-1")
                        state.writeText(lines.joinToString("\n"))
                    }
                    java.io.FileOutputStream(part, response.code == 206).use { out ->
                        response.body!!.byteStream().copyTo(out)
                    }
                    if (part.length() < lines[2].toLong()) throw IOException("cut after ${part.length()} bytes")
                    val announced = Regex("sha-256=:([^:]+):").find(lines[1])?.groupValues?.get(1)
                    val digest = MessageDigest.getInstance("SHA-256").digest(part.readBytes())
                    if (announced != null && !Base64.getDecoder().decode(announced).contentEquals(digest)) {
                        startOver(); throw IOException("the bytes do not match Repr-Digest")
                    }
                    file.delete(); part.renameTo(file); state.delete()
                    exitProcess(0)
                }
            }
            System.err.println("refused: a redirect loop"); exitProcess(1)
        } catch (error: IOException) {
            System.err.println("attempt $attempt: ${error.message}")
        }
    }
    System.err.println("gave up after 8 attempts; run again to resume"); exitProcess(1)
}
