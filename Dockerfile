# Kiosk server image: a release build in the official Swift image, run from a slim image.
# It runs the production mode (the App Store verifies receipts), configured from the environment:
#   docker build -t kiosk .
#   docker run -p 8080:8080 -v kiosk-data:/data \
#     -e KIOSK_BUNDLE_ID=com.acme.newsstand -e KIOSK_SHARED_SECRET=… -e KIOSK_GRANT_SECRET=… kiosk
# Without KIOSK_BUNDLE_ID the server refuses to start. A sandbox container (free purchases) is an explicit opt-in:
#   docker run -p 8080:8080 -v kiosk-data:/data -e KIOSK_STORE=sandbox -e KIOSK_ALLOW_PUBLIC_SANDBOX=1 kiosk
# Every option of `kiosk serve` has its KIOSK_* variable (README, "Configuration").
FROM swift:6.2-jammy AS build
WORKDIR /src
COPY Package.swift ./
COPY Sources ./Sources
COPY Tests ./Tests
RUN swift build -c release --product kiosk --static-swift-stdlib \
    && mkdir -p /staging \
    && cp "$(swift build -c release --show-bin-path)/kiosk" /staging/

FROM ubuntu:jammy
RUN apt-get update && apt-get install -y --no-install-recommends ca-certificates curl libcurl4 libxml2 tzdata \
    && rm -rf /var/lib/apt/lists/* \
    && useradd --system --uid 1000 --home /data kiosk
COPY --from=build /staging/kiosk /usr/local/bin/kiosk
COPY content /content
RUN mkdir -p /data && chown kiosk /data && chmod 0700 /data
USER kiosk
VOLUME /data
EXPOSE 8080
ENV KIOSK_HOST=0.0.0.0 \
    KIOSK_PORT=8080 \
    KIOSK_CONTENT=/content \
    KIOSK_DATA=/data \
    KIOSK_STORE=appstore
ENTRYPOINT ["kiosk", "serve"]
