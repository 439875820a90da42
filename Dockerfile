# Kiosk server image: a release build in the official Swift image, run from a slim image.
#   docker build -t kiosk .
#   docker run -p 8080:8080 -v kiosk-data:/data kiosk
FROM swift:6.2-jammy AS build
WORKDIR /src
COPY Package.swift ./
COPY Sources ./Sources
COPY Tests ./Tests
RUN swift build -c release --product kiosk --static-swift-stdlib \
    && mkdir -p /staging \
    && cp "$(swift build -c release --show-bin-path)/kiosk" /staging/

FROM ubuntu:jammy
RUN apt-get update && apt-get install -y --no-install-recommends ca-certificates libcurl4 libxml2 tzdata \
    && rm -rf /var/lib/apt/lists/* \
    && useradd --system --uid 1000 --home /data kiosk
COPY --from=build /staging/kiosk /usr/local/bin/kiosk
COPY content /content
RUN mkdir -p /data && chown kiosk /data
USER kiosk
VOLUME /data
EXPOSE 8080
ENTRYPOINT ["kiosk", "serve", "--host", "0.0.0.0", "--port", "8080", "--content", "/content", "--data", "/data"]
