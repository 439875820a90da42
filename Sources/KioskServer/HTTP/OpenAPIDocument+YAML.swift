// swift-format-ignore-file
// Written by scripts/openapi/embed.sh from openapi.yaml: edit that file, then run the script. (swift-format
// leaves it as written: it would indent the document, past the lines' length.)

extension OpenAPIDocument {
    /// The text of `openapi.yaml`, byte for byte.
    static let yaml = #"""
openapi: 3.1.0
info:
  title: Kiosk
  version: "1"
  summary: The wire contract of `kiosk serve`, machine-readable.
  license:
    name: Apache-2.0
    identifier: Apache-2.0
  description: |
    The routes of `kiosk serve`: the catalog, receipts and grants, installations, delivery reports, content, packs
    and subchunks, App Store notifications, the sandbox store (served with `--store sandbox`, the default) and the
    operations routes. [API.md](API.md) is the prose companion of this document: it says why and when, this says
    exactly what goes on the wire. The server answers `GET /openapi.yaml` with this document.

    Not described here, by name:
    - `kiosk bench`, a separate server for testing download clients (API.md, "Bench mode"): none of its routes is
      one of `kiosk serve`'s.
    - The store APIs the sandbox store emulates, whose contracts are Apple's: `POST /sandbox/verifyReceipt`
      (Apple's `verifyReceipt`) and `GET`, `POST` and `PUT /sandbox/api/…` (the App Store Server API of the
      sandbox environment). They are listed in `x-kiosk-undocumented-routes`, which the server's route test reads.

    Conventions. JSON bodies are UTF-8 with `snake_case` keys (except `receipt-data`, Apple's spelling), sorted.
    Times are RFC 3339 date-times in UTC, to the second (`2026-11-01T00:00:00Z`). Sizes are bytes. Every error is
    the JSON envelope `ErrorEnvelope` with a status fitting its `code` (each status's codes are its response's
    schema). Every answer carries `X-Request-ID` (the request's own when it sent a usable one: up to 64 letters,
    digits, `.`, `_`, `:` or `-`). Fault injection (`kiosk serve --faults`, the `Kiosk-Fault` header and `fault`
    query parameter of content and pack requests) is a testing aid, off by default, and not described here.
x-kiosk-undocumented-routes:
  - GET /sandbox/api/**
  - POST /sandbox/api/**
  - PUT /sandbox/api/**
  - POST /sandbox/verifyReceipt
servers:
  - url: http://127.0.0.1:8080
    description: "`kiosk serve` with its default host and port."
tags:
  - name: Catalog
    description: What is on sale (API.md, "Catalog").
  - name: Purchases
    description: Proofs of purchase, what they entitle, and grants (API.md, "Receipts and entitlements", "Grants").
  - name: Installations
    description: The installations a purchase serves (API.md, "Installations").
  - name: Deliveries
    description: Reports of installed versions (API.md, "Deliveries").
  - name: Content
    description: Files, packs and subchunks, with a grant's token (API.md, "Content", "Subchunks", "Packs").
  - name: Notifications
    description: App Store Server Notifications V2 (README, "StoreKit 2 signed transactions and server notifications").
  - name: Sandbox
    description: The sandbox store, with `--store sandbox` only (API.md, "Sandbox store").
  - name: Operations
    description: Health, readiness, metrics and this document (API.md, "Operations").
paths:
  /v1/products:
    get:
      tags: [Catalog]
      operationId: listProducts
      summary: The catalog, a selection, a page, or the change feed.
      description: |
        Without a query: every product on sale, in catalog order (products with `published_at` first, newest first,
        then the others; ties by `id`). `ids`: only those (`invalid_product_ids` lists the unknown ones). `limit`
        and `cursor`: one page, with `next_cursor` until the last. `since`: the change feed (`CatalogChanges`).
        Every answer has its own strong `ETag` (a hash of its JSON; the gzip form has its own), answers
        `If-None-Match` with 304, and is gzipped for `Accept-Encoding: gzip` when over 512 bytes.
      parameters:
        - $ref: '#/components/parameters/Ids'
        - $ref: '#/components/parameters/Limit'
        - $ref: '#/components/parameters/Cursor'
        - $ref: '#/components/parameters/Since'
        - $ref: '#/components/parameters/IfNoneMatch'
        - $ref: '#/components/parameters/AcceptEncoding'
      security: []
      responses:
        '200':
          description: The catalog, a selection or a page (`Catalog`), or a page of the change feed (`CatalogChanges`).
          headers:
            ETag:
              $ref: '#/components/headers/StrongETag'
            Cache-Control:
              $ref: '#/components/headers/CatalogCacheControl'
            Vary:
              $ref: '#/components/headers/VaryAcceptEncoding'
            Content-Encoding:
              $ref: '#/components/headers/ContentEncodingGzip'
          content:
            application/json:
              schema:
                oneOf:
                  - $ref: '#/components/schemas/Catalog'
                  - $ref: '#/components/schemas/CatalogChanges'
        '304':
          $ref: '#/components/responses/CatalogNotModified'
        '400':
          $ref: '#/components/responses/BadRequest'
    head:
      tags: [Catalog]
      operationId: headProducts
      summary: The headers `GET /v1/products` would answer with the same query.
      parameters:
        - $ref: '#/components/parameters/Ids'
        - $ref: '#/components/parameters/Limit'
        - $ref: '#/components/parameters/Cursor'
        - $ref: '#/components/parameters/Since'
        - $ref: '#/components/parameters/IfNoneMatch'
        - $ref: '#/components/parameters/AcceptEncoding'
      security: []
      responses:
        '200':
          $ref: '#/components/responses/CatalogHead'
        '304':
          $ref: '#/components/responses/CatalogNotModified'
        '400':
          $ref: '#/components/responses/BadRequestHead'
  /v1/products/{product_id}:
    parameters:
      - $ref: '#/components/parameters/ProductIDPath'
    get:
      tags: [Catalog]
      operationId: getProduct
      summary: One product.
      description: The object of a `products` entry, with its own strong `ETag`, 304 and gzip.
      parameters:
        - $ref: '#/components/parameters/IfNoneMatch'
        - $ref: '#/components/parameters/AcceptEncoding'
      security: []
      responses:
        '200':
          description: The product.
          headers:
            ETag:
              $ref: '#/components/headers/StrongETag'
            Cache-Control:
              $ref: '#/components/headers/CatalogCacheControl'
            Vary:
              $ref: '#/components/headers/VaryAcceptEncoding'
            Content-Encoding:
              $ref: '#/components/headers/ContentEncodingGzip'
          content:
            application/json:
              schema:
                $ref: '#/components/schemas/Product'
        '304':
          $ref: '#/components/responses/CatalogNotModified'
        '400':
          $ref: '#/components/responses/BadRequest'
        '404':
          $ref: '#/components/responses/NotFound'
    head:
      tags: [Catalog]
      operationId: headProduct
      summary: The headers `GET /v1/products/{product_id}` would answer.
      parameters:
        - $ref: '#/components/parameters/IfNoneMatch'
        - $ref: '#/components/parameters/AcceptEncoding'
      security: []
      responses:
        '200':
          $ref: '#/components/responses/CatalogHead'
        '304':
          $ref: '#/components/responses/CatalogNotModified'
        '400':
          $ref: '#/components/responses/BadRequestHead'
        '404':
          $ref: '#/components/responses/NotFoundHead'
  /v1/receipts/verify:
    post:
      tags: [Purchases]
      operationId: verifyReceipt
      summary: What a proof of purchase entitles now (restore).
      description: |
        The proof is verified with the store (a receipt) or against Apple's root certificate (a signed
        transaction). 403 `receipt_invalid` (with `reason`), `not_entitled` or `transaction_invalid` (with `reason`)
        when it does not hold.
      security: []
      requestBody:
        required: true
        content:
          application/json:
            schema:
              $ref: '#/components/schemas/ProofRequest'
      responses:
        '200':
          description: The entitlements.
          content:
            application/json:
              schema:
                $ref: '#/components/schemas/EntitlementsResponse'
        '400':
          $ref: '#/components/responses/BadRequest'
        '403':
          $ref: '#/components/responses/Forbidden'
        '413':
          $ref: '#/components/responses/PayloadTooLarge'
        '500':
          $ref: '#/components/responses/InternalError'
        '503':
          $ref: '#/components/responses/ServiceUnavailable'
  /v1/downloads:
    post:
      tags: [Purchases]
      operationId: createGrant
      summary: A grant to download one product's current version.
      description: |
        403 `receipt_invalid`, `not_entitled`, `transaction_invalid` or `installation_limit`; 404 `not_found` for
        an unknown product. Gzipped for `Accept-Encoding: gzip`.
      parameters:
        - $ref: '#/components/parameters/AcceptEncoding'
      security: []
      requestBody:
        required: true
        content:
          application/json:
            schema:
              $ref: '#/components/schemas/GrantRequest'
      responses:
        '200':
          description: The grant.
          headers:
            Vary:
              $ref: '#/components/headers/VaryAcceptEncoding'
            Content-Encoding:
              $ref: '#/components/headers/ContentEncodingGzip'
          content:
            application/json:
              schema:
                $ref: '#/components/schemas/Grant'
        '400':
          $ref: '#/components/responses/BadRequest'
        '403':
          $ref: '#/components/responses/Forbidden'
        '404':
          $ref: '#/components/responses/NotFound'
        '413':
          $ref: '#/components/responses/PayloadTooLarge'
        '500':
          $ref: '#/components/responses/InternalError'
        '503':
          $ref: '#/components/responses/ServiceUnavailable'
  /v1/installations:
    post:
      tags: [Installations]
      operationId: listInstallations
      summary: The installations a purchase serves.
      description: Refuses a proof or product as a grant request does.
      security: []
      requestBody:
        required: true
        content:
          application/json:
            schema:
              $ref: '#/components/schemas/InstallationsRequest'
      responses:
        '200':
          description: The installations.
          content:
            application/json:
              schema:
                $ref: '#/components/schemas/InstallationList'
        '400':
          $ref: '#/components/responses/BadRequest'
        '403':
          $ref: '#/components/responses/Forbidden'
        '404':
          $ref: '#/components/responses/NotFound'
        '413':
          $ref: '#/components/responses/PayloadTooLarge'
        '500':
          $ref: '#/components/responses/InternalError'
        '503':
          $ref: '#/components/responses/ServiceUnavailable'
  /v1/installations/remove:
    post:
      tags: [Installations]
      operationId: removeInstallation
      summary: Removes an installation from a purchase.
      description: |
        Answers the installations left. 404 `not_found` when the purchase has no such installation; 403
        `removal_limit` (with `Retry-After`, seconds) past the removal limit.
      security: []
      requestBody:
        required: true
        content:
          application/json:
            schema:
              $ref: '#/components/schemas/InstallationRemovalRequest'
      responses:
        '200':
          description: The installations left.
          content:
            application/json:
              schema:
                $ref: '#/components/schemas/InstallationList'
        '400':
          $ref: '#/components/responses/BadRequest'
        '403':
          $ref: '#/components/responses/ForbiddenWithRetry'
        '404':
          $ref: '#/components/responses/NotFound'
        '413':
          $ref: '#/components/responses/PayloadTooLarge'
        '500':
          $ref: '#/components/responses/InternalError'
        '503':
          $ref: '#/components/responses/ServiceUnavailable'
  /v1/deliveries:
    post:
      tags: [Deliveries]
      operationId: reportDelivery
      summary: An installation installed a product version.
      description: |
        The grant token that opened the download vouches for the report, up to 7 days past its `expires_at`. 403
        `token_scope` for a token of another product or version, `transaction_revoked` for a refunded purchase.
      security:
        - grantToken: []
        - grantTokenQuery: []
      requestBody:
        required: true
        content:
          application/json:
            schema:
              $ref: '#/components/schemas/DeliveryReport'
      responses:
        '200':
          description: Recorded now, or before.
          content:
            application/json:
              schema:
                $ref: '#/components/schemas/DeliveryReportResponse'
        '400':
          $ref: '#/components/responses/BadRequest'
        '401':
          $ref: '#/components/responses/Unauthorized'
        '403':
          $ref: '#/components/responses/Forbidden'
        '413':
          $ref: '#/components/responses/PayloadTooLarge'
        '503':
          $ref: '#/components/responses/ServiceUnavailable'
  /v1/content/{product_id}/{content_version}/{path}:
    parameters:
      - $ref: '#/components/parameters/ProductIDPath'
      - $ref: '#/components/parameters/ContentVersionPath'
      - $ref: '#/components/parameters/FilePathPath'
    get:
      tags: [Content]
      operationId: getContent
      summary: A file of a granted version, whole or by ranges.
      description: |
        Token, path, product and version are checked first (401, 403, 400, 404, 410). Then the preconditions, in
        the order of RFC 9110 §13.2.2 (`If-Match`, `If-Unmodified-Since`: 412; `If-None-Match`,
        `If-Modified-Since`: 304), then `Range` and `If-Range` (RFC 9110 §14): one satisfiable range, 206 with
        `Content-Range`; several, 206 `multipart/byteranges` (or the whole 200 past the server's cap on ranges);
        none, 416. `Content-Type` comes from the file's extension. 500 `internal_error` with `reason`
        `file_changing` and `Retry-After: 1` for a file being rewritten on the server.
      parameters:
        - $ref: '#/components/parameters/Range'
        - $ref: '#/components/parameters/IfRange'
        - $ref: '#/components/parameters/IfMatch'
        - $ref: '#/components/parameters/IfNoneMatch'
        - $ref: '#/components/parameters/IfModifiedSince'
        - $ref: '#/components/parameters/IfUnmodifiedSince'
      security:
        - grantToken: []
        - grantTokenQuery: []
      responses:
        '200':
          $ref: '#/components/responses/File'
        '206':
          $ref: '#/components/responses/FileRanges'
        '304':
          $ref: '#/components/responses/FileNotModified'
        '400':
          $ref: '#/components/responses/BadRequest'
        '401':
          $ref: '#/components/responses/Unauthorized'
        '403':
          $ref: '#/components/responses/Forbidden'
        '404':
          $ref: '#/components/responses/NotFound'
        '410':
          $ref: '#/components/responses/Gone'
        '412':
          $ref: '#/components/responses/PreconditionFailed'
        '416':
          $ref: '#/components/responses/RangeNotSatisfiable'
        '500':
          $ref: '#/components/responses/InternalError'
    head:
      tags: [Content]
      operationId: headContent
      summary: The headers `GET` would answer, `Range` ignored.
      parameters:
        - $ref: '#/components/parameters/Range'
        - $ref: '#/components/parameters/IfRange'
        - $ref: '#/components/parameters/IfMatch'
        - $ref: '#/components/parameters/IfNoneMatch'
        - $ref: '#/components/parameters/IfModifiedSince'
        - $ref: '#/components/parameters/IfUnmodifiedSince'
      security:
        - grantToken: []
        - grantTokenQuery: []
      responses:
        '200':
          $ref: '#/components/responses/FileHead'
        '304':
          $ref: '#/components/responses/FileNotModified'
        '400':
          $ref: '#/components/responses/BadRequestHead'
        '401':
          $ref: '#/components/responses/UnauthorizedHead'
        '403':
          $ref: '#/components/responses/ForbiddenHead'
        '404':
          $ref: '#/components/responses/NotFoundHead'
        '410':
          $ref: '#/components/responses/GoneHead'
        '412':
          $ref: '#/components/responses/PreconditionFailedHead'
        '500':
          $ref: '#/components/responses/InternalErrorHead'
  /v1/packs/{product_id}/{content_version}:
    parameters:
      - $ref: '#/components/parameters/ProductIDPath'
      - $ref: '#/components/parameters/ContentVersionPath'
    get:
      tags: [Content]
      operationId: getPack
      summary: A granted version's files, concatenated in grant order (the grant's `pack`).
      description: |
        Admitted exactly as content, with the same preconditions. One satisfiable range: 206 with `Content-Range`;
        several ranges: the whole pack, 200 (RFC 9110 §14.2); none satisfiable: 416. No `Repr-Digest`: each file's
        `sha256` in the grant is what a client verifies. The `ETag` is `"pack-<hex>"`, a hash of the version's file
        list.
      parameters:
        - $ref: '#/components/parameters/Range'
        - $ref: '#/components/parameters/IfRange'
        - $ref: '#/components/parameters/IfMatch'
        - $ref: '#/components/parameters/IfNoneMatch'
        - $ref: '#/components/parameters/IfModifiedSince'
        - $ref: '#/components/parameters/IfUnmodifiedSince'
      security:
        - grantToken: []
        - grantTokenQuery: []
      responses:
        '200':
          $ref: '#/components/responses/Pack'
        '206':
          $ref: '#/components/responses/PackRange'
        '304':
          $ref: '#/components/responses/PackNotModified'
        '400':
          $ref: '#/components/responses/BadRequest'
        '401':
          $ref: '#/components/responses/Unauthorized'
        '403':
          $ref: '#/components/responses/Forbidden'
        '404':
          $ref: '#/components/responses/NotFound'
        '410':
          $ref: '#/components/responses/Gone'
        '412':
          $ref: '#/components/responses/PreconditionFailed'
        '416':
          $ref: '#/components/responses/RangeNotSatisfiable'
        '500':
          $ref: '#/components/responses/InternalError'
    head:
      tags: [Content]
      operationId: headPack
      summary: The headers `GET` would answer, `Range` ignored.
      parameters:
        - $ref: '#/components/parameters/Range'
        - $ref: '#/components/parameters/IfRange'
        - $ref: '#/components/parameters/IfMatch'
        - $ref: '#/components/parameters/IfNoneMatch'
        - $ref: '#/components/parameters/IfModifiedSince'
        - $ref: '#/components/parameters/IfUnmodifiedSince'
      security:
        - grantToken: []
        - grantTokenQuery: []
      responses:
        '200':
          $ref: '#/components/responses/PackHead'
        '304':
          $ref: '#/components/responses/PackNotModified'
        '400':
          $ref: '#/components/responses/BadRequestHead'
        '401':
          $ref: '#/components/responses/UnauthorizedHead'
        '403':
          $ref: '#/components/responses/ForbiddenHead'
        '404':
          $ref: '#/components/responses/NotFoundHead'
        '410':
          $ref: '#/components/responses/GoneHead'
        '412':
          $ref: '#/components/responses/PreconditionFailedHead'
        '500':
          $ref: '#/components/responses/InternalErrorHead'
  /v1/subchunks/{product_id}/{content_version}/{path}:
    parameters:
      - $ref: '#/components/parameters/ProductIDPath'
      - $ref: '#/components/parameters/ContentVersionPath'
      - $ref: '#/components/parameters/FilePathPath'
    get:
      tags: [Content]
      operationId: getSubchunks
      summary: Chunks of a file cut finer (the grant's `subchunks`).
      description: |
        Admitted exactly as content. 400 `bad_request` for a `chunks` list that is not 1 to 64 distinct indexes
        below the file's number of chunks, or for a file of one chunk. 429 `too_many_requests` (`reason`
        `token_busy` or `purchase_busy`, `Retry-After: 1`) while the token or purchase already has as many chunks
        being cut as the server allows. 500 `internal_error` (`reason` `file_changing`, `Retry-After: 1`) for a
        file changed on the server behind the catalog.
      parameters:
        - name: chunks
          in: query
          required: true
          description: 1 to 64 distinct indexes into the file's `chunks` in the grant, in decimal, comma-separated.
          schema:
            type: string
            pattern: '^[0-9]{1,9}(,[0-9]{1,9}){0,63}$'
      security:
        - grantToken: []
        - grantTokenQuery: []
      responses:
        '200':
          description: The chunks asked for, in the order asked, each cut from its first byte.
          headers:
            Cache-Control:
              $ref: '#/components/headers/PrivateCacheControl'
          content:
            application/json:
              schema:
                $ref: '#/components/schemas/SubchunkList'
        '400':
          $ref: '#/components/responses/BadRequest'
        '401':
          $ref: '#/components/responses/Unauthorized'
        '403':
          $ref: '#/components/responses/Forbidden'
        '404':
          $ref: '#/components/responses/NotFound'
        '410':
          $ref: '#/components/responses/Gone'
        '429':
          $ref: '#/components/responses/TooManyRequests'
        '500':
          $ref: '#/components/responses/InternalError'
  /v1/notifications/appstore:
    post:
      tags: [Notifications]
      operationId: receiveAppStoreNotification
      summary: An App Store Server Notification V2.
      description: |
        The URL to give App Store Connect. Answers 200 with what was done, for a duplicate too, so that the App
        Store stops resending; a payload that does not verify is refused with 403 `transaction_invalid`.
      security: []
      requestBody:
        required: true
        content:
          application/json:
            schema:
              $ref: '#/components/schemas/SignedNotification'
      responses:
        '200':
          description: What the server did with the notification.
          content:
            application/json:
              schema:
                $ref: '#/components/schemas/NotificationResult'
        '400':
          $ref: '#/components/responses/BadRequest'
        '403':
          $ref: '#/components/responses/Forbidden'
        '413':
          $ref: '#/components/responses/PayloadTooLarge'
        '500':
          $ref: '#/components/responses/InternalError'
        '503':
          $ref: '#/components/responses/ServiceUnavailable'
  /sandbox/purchases:
    post:
      tags: [Sandbox]
      operationId: sandboxPurchase
      summary: Buys a product in the sandbox store, for free.
      description: The receipt, like an App Store app receipt, lists all of the sandbox user's purchases.
      security: []
      requestBody:
        required: true
        content:
          application/json:
            schema:
              $ref: '#/components/schemas/SandboxPurchaseRequest'
      responses:
        '201':
          description: The purchase.
          content:
            application/json:
              schema:
                $ref: '#/components/schemas/SandboxPurchase'
        '400':
          $ref: '#/components/responses/BadRequest'
        '404':
          $ref: '#/components/responses/NotFound'
        '413':
          $ref: '#/components/responses/PayloadTooLarge'
        '503':
          $ref: '#/components/responses/ServiceUnavailable'
  /sandbox/refunds:
    post:
      tags: [Sandbox]
      operationId: sandboxRefund
      summary: Refunds a sandbox purchase.
      description: The purchase gets a `cancellation_date`; later verifications reflect it.
      security: []
      requestBody:
        required: true
        content:
          application/json:
            schema:
              $ref: '#/components/schemas/SandboxRefundRequest'
      responses:
        '200':
          description: The refund.
          content:
            application/json:
              schema:
                $ref: '#/components/schemas/SandboxRefund'
        '400':
          $ref: '#/components/responses/BadRequest'
        '404':
          $ref: '#/components/responses/NotFound'
        '413':
          $ref: '#/components/responses/PayloadTooLarge'
        '503':
          $ref: '#/components/responses/ServiceUnavailable'
  /sandbox/notifications:
    post:
      tags: [Sandbox]
      operationId: sandboxNotification
      summary: Changes a sandbox purchase and sends the matching App Store Server Notification V2.
      description: |
        The notification is delivered to this server's notification processing (as `POST
        /v1/notifications/appstore`) unless `deliver` is `false`: then it is only listed in the sandbox store's
        notification history (`NO_RESPONSE`), and the answer has no `result`.
      security: []
      requestBody:
        required: true
        content:
          application/json:
            schema:
              $ref: '#/components/schemas/SandboxNotificationRequest'
      responses:
        '200':
          description: The notification sent, and what the server did with it.
          content:
            application/json:
              schema:
                $ref: '#/components/schemas/SandboxNotification'
        '400':
          $ref: '#/components/responses/BadRequest'
        '403':
          $ref: '#/components/responses/Forbidden'
        '404':
          $ref: '#/components/responses/NotFound'
        '413':
          $ref: '#/components/responses/PayloadTooLarge'
        '500':
          $ref: '#/components/responses/InternalError'
        '503':
          $ref: '#/components/responses/ServiceUnavailable'
  /sandbox/consumption/{transaction_id}:
    get:
      tags: [Sandbox]
      operationId: sandboxConsumptionAnswers
      summary: The consumption answers the sandbox store's App Store Server API received about a transaction.
      security: []
      parameters:
        - name: transaction_id
          in: path
          required: true
          schema:
            type: string
      responses:
        '200':
          description: The answers, oldest first, as sent.
          content:
            application/json:
              schema:
                $ref: '#/components/schemas/SandboxConsumptionAnswers'
        '404':
          $ref: '#/components/responses/NotFound'
        '503':
          $ref: '#/components/responses/ServiceUnavailable'
  /healthz:
    get:
      tags: [Operations]
      operationId: health
      summary: Alive.
      description: Cheap, unauthenticated; any answer tells a client the server can be reached.
      security: []
      responses:
        '200':
          description: The server is alive.
          content:
            application/json:
              schema:
                $ref: '#/components/schemas/Health'
  /readyz:
    get:
      tags: [Operations]
      operationId: readiness
      summary: Ready for traffic.
      description: 503 `not_ready` when the database does not answer within 2 s (for load balancers).
      security: []
      responses:
        '200':
          description: Ready.
          content:
            application/json:
              schema:
                $ref: '#/components/schemas/Readiness'
        '503':
          $ref: '#/components/responses/ServiceUnavailable'
  /metrics:
    get:
      tags: [Operations]
      operationId: metrics
      summary: Prometheus metrics.
      description: To loopback clients only unless the server runs with `--public-metrics`; 404 `not_found` otherwise.
      security: []
      responses:
        '200':
          description: The Prometheus text exposition format, version 0.0.4.
          content:
            text/plain:
              schema:
                type: string
        '404':
          $ref: '#/components/responses/NotFound'
  /openapi.yaml:
    get:
      tags: [Operations]
      operationId: openAPIDocument
      summary: This document.
      security: []
      responses:
        '200':
          description: The bytes of `openapi.yaml`, as the server was built with it.
          content:
            application/yaml:
              schema:
                description: This document.
                type: object
                required: [info, openapi, paths]
                properties:
                  openapi:
                    const: 3.1.0
    head:
      tags: [Operations]
      operationId: headOpenAPIDocument
      summary: The headers `GET /openapi.yaml` answers, with its `Content-Length`.
      security: []
      responses:
        '200':
          description: The headers of this document.
components:
  securitySchemes:
    grantToken:
      type: http
      scheme: bearer
      description: "The grant's `token` (`POST /v1/downloads`): `Authorization: Bearer <token>`."
    grantTokenQuery:
      type: apiKey
      in: query
      name: token
      description: The grant's `token` as the `token` query parameter, for clients that cannot set headers.
  parameters:
    ProductIDPath:
      name: product_id
      in: path
      required: true
      schema:
        $ref: '#/components/schemas/ProductID'
    ContentVersionPath:
      name: content_version
      in: path
      required: true
      schema:
        $ref: '#/components/schemas/ContentVersion'
    FilePathPath:
      name: path
      in: path
      required: true
      description: |
        The file's path inside the version, as in the grant's `url`: one or more segments separated by a literal
        `/`, each percent-encoded. Segments of letters, digits, spaces, `.`, `_`, `-`, `+`, `,`, `(` and `)`, none
        empty or starting with `.`; at most 1024 bytes in all.
      schema:
        type: string
        minLength: 1
        maxLength: 1024
    Ids:
      name: ids
      in: query
      required: false
      description: |
        Only these products: at most 500 IDs, comma-separated. Not with `limit`, `cursor` or `since`.
      schema:
        type: string
    Limit:
      name: limit
      in: query
      required: false
      description: The most entries in the page (500 when absent and `cursor` or `since` is sent).
      schema:
        type: integer
        minimum: 1
        maximum: 500
    Cursor:
      name: cursor
      in: query
      required: false
      description: The `next_cursor` of the previous page, opaque; with the same `since` in the change feed.
      schema:
        type: string
    Since:
      name: since
      in: query
      required: false
      description: |
        A catalog `ETag` the app saw (`"…"`, `W/"…"`, the gzip form's tag or the bare opaque tag): the change feed
        since that catalog.
      schema:
        type: string
        maxLength: 256
    IfNoneMatch:
      name: If-None-Match
      in: header
      required: false
      description: "`*` or a list of entity-tags, compared weakly; a match answers 304."
      schema:
        type: string
    IfMatch:
      name: If-Match
      in: header
      required: false
      description: "`*` or a list of entity-tags, compared strongly; no match answers 412."
      schema:
        type: string
    IfModifiedSince:
      name: If-Modified-Since
      in: header
      required: false
      description: An HTTP-date; without `If-None-Match`, not modified since answers 304. An invalid date is ignored.
      schema:
        type: string
    IfUnmodifiedSince:
      name: If-Unmodified-Since
      in: header
      required: false
      description: An HTTP-date; without `If-Match`, modified since answers 412. An invalid date is ignored.
      schema:
        type: string
    Range:
      name: Range
      in: header
      required: false
      description: |
        `bytes=` and one or more ranges (`first-last`, `first-`, `-suffix`), RFC 9110 §14.1.2. Anything else is
        ignored (the whole representation answers).
      schema:
        type: string
    IfRange:
      name: If-Range
      in: header
      required: false
      description: A strong entity-tag or an HTTP-date; when it does not match, `Range` is ignored.
      schema:
        type: string
    AcceptEncoding:
      name: Accept-Encoding
      in: header
      required: false
      description: "`gzip` (or `x-gzip`, or `*`) with a quality above 0 asks for the gzip form."
      schema:
        type: string
  headers:
    StrongETag:
      description: A strong entity-tag, a hash of the representation's bytes.
      required: true
      schema:
        $ref: '#/components/schemas/StrongEntityTag'
    CatalogCacheControl:
      description: The catalog is public; caches may keep an answer briefly and revalidate it.
      required: true
      schema:
        const: public, max-age=10, stale-while-revalidate=60
    PrivateCacheControl:
      description: For the token's holder only.
      required: true
      schema:
        const: private
    VaryAcceptEncoding:
      required: true
      schema:
        const: Accept-Encoding
    ContentEncodingGzip:
      description: Present when the body is gzipped (the client accepted gzip).
      required: false
      schema:
        const: gzip
    LastModified:
      description: An HTTP-date (IMF-fixdate).
      required: true
      schema:
        $ref: '#/components/schemas/HTTPDate'
    AcceptRanges:
      required: true
      schema:
        const: bytes
    ReprDigest:
      description: The SHA-256 of the whole file, RFC 9530.
      required: true
      schema:
        type: string
        pattern: '^sha-256=:[A-Za-z0-9+/]{43}=:$'
    ContentRangeSatisfied:
      description: "`bytes <first>-<last>/<length>`, for one range."
      required: true
      schema:
        type: string
        pattern: '^bytes [0-9]+-[0-9]+/[0-9]+$'
    ContentRangeOfSingleRange:
      description: "`bytes <first>-<last>/<length>`; absent on a `multipart/byteranges` answer (each part has its own)."
      required: false
      schema:
        type: string
        pattern: '^bytes [0-9]+-[0-9]+/[0-9]+$'
    ContentRangeUnsatisfied:
      description: "`bytes */<length>`."
      required: true
      schema:
        type: string
        pattern: '^bytes \*/[0-9]+$'
    RetryAfter:
      description: Seconds to wait before trying again.
      required: true
      schema:
        type: integer
        minimum: 0
    RetryAfterWhenSent:
      description: Seconds to wait before trying again, when the refusal says when.
      required: false
      schema:
        type: integer
        minimum: 0
    WWWAuthenticate:
      description: "`Bearer`, when no token was sent (`token_missing`)."
      required: false
      schema:
        const: Bearer
  responses:
    CatalogHead:
      description: The headers `GET` would answer, with the body's `Content-Length`.
      headers:
        ETag:
          $ref: '#/components/headers/StrongETag'
        Cache-Control:
          $ref: '#/components/headers/CatalogCacheControl'
        Vary:
          $ref: '#/components/headers/VaryAcceptEncoding'
        Content-Encoding:
          $ref: '#/components/headers/ContentEncodingGzip'
    CatalogNotModified:
      description: The `If-None-Match` named this answer; no body.
      headers:
        ETag:
          $ref: '#/components/headers/StrongETag'
        Cache-Control:
          $ref: '#/components/headers/CatalogCacheControl'
        Vary:
          $ref: '#/components/headers/VaryAcceptEncoding'
    File:
      description: The whole file.
      headers:
        ETag:
          $ref: '#/components/headers/StrongETag'
        Last-Modified:
          $ref: '#/components/headers/LastModified'
        Accept-Ranges:
          $ref: '#/components/headers/AcceptRanges'
        Cache-Control:
          $ref: '#/components/headers/PrivateCacheControl'
        Repr-Digest:
          $ref: '#/components/headers/ReprDigest'
      content:
        application/octet-stream:
          schema:
            $ref: '#/components/schemas/Bytes'
        application/pdf:
          schema:
            $ref: '#/components/schemas/Bytes'
        application/epub+zip:
          schema:
            $ref: '#/components/schemas/Bytes'
        application/json:
          schema: {}
        text/plain:
          schema:
            $ref: '#/components/schemas/Bytes'
        text/html:
          schema:
            $ref: '#/components/schemas/Bytes'
        image/png:
          schema:
            $ref: '#/components/schemas/Bytes'
        image/jpeg:
          schema:
            $ref: '#/components/schemas/Bytes'
        application/zip:
          schema:
            $ref: '#/components/schemas/Bytes'
    FileRanges:
      description: |
        One range (`Content-Range`, the file's `Content-Type`) or several (`multipart/byteranges`, each part with its
        own `Content-Type` and `Content-Range`).
      headers:
        ETag:
          $ref: '#/components/headers/StrongETag'
        Last-Modified:
          $ref: '#/components/headers/LastModified'
        Accept-Ranges:
          $ref: '#/components/headers/AcceptRanges'
        Cache-Control:
          $ref: '#/components/headers/PrivateCacheControl'
        Repr-Digest:
          $ref: '#/components/headers/ReprDigest'
        Content-Range:
          $ref: '#/components/headers/ContentRangeOfSingleRange'
      content:
        multipart/byteranges:
          schema:
            $ref: '#/components/schemas/Bytes'
        application/octet-stream:
          schema:
            $ref: '#/components/schemas/Bytes'
        application/pdf:
          schema:
            $ref: '#/components/schemas/Bytes'
        application/epub+zip:
          schema:
            $ref: '#/components/schemas/Bytes'
        application/json:
          schema: {}
        text/plain:
          schema:
            $ref: '#/components/schemas/Bytes'
        text/html:
          schema:
            $ref: '#/components/schemas/Bytes'
        image/png:
          schema:
            $ref: '#/components/schemas/Bytes'
        image/jpeg:
          schema:
            $ref: '#/components/schemas/Bytes'
        application/zip:
          schema:
            $ref: '#/components/schemas/Bytes'
    FileHead:
      description: The headers of the whole file, with its `Content-Length` and `Content-Type`.
      headers:
        ETag:
          $ref: '#/components/headers/StrongETag'
        Last-Modified:
          $ref: '#/components/headers/LastModified'
        Accept-Ranges:
          $ref: '#/components/headers/AcceptRanges'
        Cache-Control:
          $ref: '#/components/headers/PrivateCacheControl'
        Repr-Digest:
          $ref: '#/components/headers/ReprDigest'
    FileNotModified:
      description: A precondition said the client's copy is current; what a 200 would carry, without a body.
      headers:
        ETag:
          $ref: '#/components/headers/StrongETag'
        Last-Modified:
          $ref: '#/components/headers/LastModified'
        Accept-Ranges:
          $ref: '#/components/headers/AcceptRanges'
        Cache-Control:
          $ref: '#/components/headers/PrivateCacheControl'
        Repr-Digest:
          $ref: '#/components/headers/ReprDigest'
    Pack:
      description: The whole pack.
      headers:
        ETag:
          $ref: '#/components/headers/StrongETag'
        Last-Modified:
          $ref: '#/components/headers/LastModified'
        Accept-Ranges:
          $ref: '#/components/headers/AcceptRanges'
        Cache-Control:
          $ref: '#/components/headers/PrivateCacheControl'
      content:
        application/octet-stream:
          schema:
            $ref: '#/components/schemas/Bytes'
    PackRange:
      description: One range of the pack.
      headers:
        ETag:
          $ref: '#/components/headers/StrongETag'
        Last-Modified:
          $ref: '#/components/headers/LastModified'
        Accept-Ranges:
          $ref: '#/components/headers/AcceptRanges'
        Cache-Control:
          $ref: '#/components/headers/PrivateCacheControl'
        Content-Range:
          $ref: '#/components/headers/ContentRangeSatisfied'
      content:
        application/octet-stream:
          schema:
            $ref: '#/components/schemas/Bytes'
    PackHead:
      description: The headers of the whole pack, with its `Content-Length`.
      headers:
        ETag:
          $ref: '#/components/headers/StrongETag'
        Last-Modified:
          $ref: '#/components/headers/LastModified'
        Accept-Ranges:
          $ref: '#/components/headers/AcceptRanges'
        Cache-Control:
          $ref: '#/components/headers/PrivateCacheControl'
    PackNotModified:
      description: A precondition said the client's copy is current; what a 200 would carry, without a body.
      headers:
        ETag:
          $ref: '#/components/headers/StrongETag'
        Last-Modified:
          $ref: '#/components/headers/LastModified'
        Accept-Ranges:
          $ref: '#/components/headers/AcceptRanges'
        Cache-Control:
          $ref: '#/components/headers/PrivateCacheControl'
    BadRequest:
      description: |
        `bad_request` (malformed JSON, a missing field, an invalid identifier, path or query) or
        `receipt_malformed`.
      content:
        application/json:
          schema:
            $ref: '#/components/schemas/Error400'
    Unauthorized:
      description: No usable grant token.
      headers:
        WWW-Authenticate:
          $ref: '#/components/headers/WWWAuthenticate'
      content:
        application/json:
          schema:
            $ref: '#/components/schemas/Error401'
    Forbidden:
      description: The proof, token or purchase does not allow this.
      content:
        application/json:
          schema:
            $ref: '#/components/schemas/Error403'
    ForbiddenWithRetry:
      description: The proof or purchase does not allow this; `removal_limit` carries `Retry-After`.
      headers:
        Retry-After:
          $ref: '#/components/headers/RetryAfterWhenSent'
      content:
        application/json:
          schema:
            $ref: '#/components/schemas/Error403'
    NotFound:
      description: No such product, version, file, installation or transaction.
      content:
        application/json:
          schema:
            $ref: '#/components/schemas/Error404'
    Gone:
      description: The version in the path is no longer served; ask for a new grant.
      content:
        application/json:
          schema:
            $ref: '#/components/schemas/Error410'
    PreconditionFailed:
      description: "`If-Match` or `If-Unmodified-Since` does not hold."
      content:
        application/json:
          schema:
            $ref: '#/components/schemas/Error412'
    PayloadTooLarge:
      description: The body is over the limit (receipts 3 MiB and a little more; other bodies 64 KiB by default).
      content:
        application/json:
          schema:
            $ref: '#/components/schemas/Error413'
    RangeNotSatisfiable:
      description: No range of `Range` is satisfiable.
      headers:
        Content-Range:
          $ref: '#/components/headers/ContentRangeUnsatisfied'
        Accept-Ranges:
          $ref: '#/components/headers/AcceptRanges'
      content:
        application/json:
          schema:
            $ref: '#/components/schemas/Error416'
    TooManyRequests:
      description: Too many chunks being cut for this token or purchase.
      headers:
        Retry-After:
          $ref: '#/components/headers/RetryAfter'
      content:
        application/json:
          schema:
            $ref: '#/components/schemas/Error429'
    InternalError:
      description: |
        `store_misconfigured` (an operator must act) or `internal_error` (with `reason` `file_changing` and
        `Retry-After: 1` for a file being rewritten on the server).
      headers:
        Retry-After:
          $ref: '#/components/headers/RetryAfterWhenSent'
      content:
        application/json:
          schema:
            $ref: '#/components/schemas/Error500'
    ServiceUnavailable:
      description: "`store_unavailable` or `database_unavailable` (with `Retry-After`), or `not_ready` (`/readyz`)."
      headers:
        Retry-After:
          $ref: '#/components/headers/RetryAfterWhenSent'
      content:
        application/json:
          schema:
            $ref: '#/components/schemas/Error503'
    BadRequestHead:
      description: "400: `bad_request`. The error's headers, without its body (HEAD)."
    UnauthorizedHead:
      description: |
        401: no usable grant token (`token_missing`, `token_invalid`, `token_expired`). The error's headers, without
        its body (HEAD).
      headers:
        WWW-Authenticate:
          $ref: '#/components/headers/WWWAuthenticate'
    ForbiddenHead:
      description: "403: `token_scope` or `transaction_revoked`. The error's headers, without its body (HEAD)."
    NotFoundHead:
      description: "404: `not_found`. The error's headers, without its body (HEAD)."
    GoneHead:
      description: "410: `version_gone`. The error's headers, without its body (HEAD)."
    PreconditionFailedHead:
      description: "412: `precondition_failed`. The error's headers, without its body (HEAD)."
    InternalErrorHead:
      description: |
        500: `internal_error` (`file_changing`, with `Retry-After: 1`). The error's headers, without its body
        (HEAD).
      headers:
        Retry-After:
          $ref: '#/components/headers/RetryAfterWhenSent'
  schemas:
    ProductID:
      description: ASCII letters, digits, `.`, `_` and `-`, 1 to 255 of them, not starting with `.`.
      type: string
      pattern: '^[A-Za-z0-9_-][A-Za-z0-9._-]{0,254}$'
    ContentVersion:
      description: ASCII letters, digits, `.`, `_` and `-`, 1 to 255 of them, not starting with `.`.
      type: string
      pattern: '^[A-Za-z0-9_-][A-Za-z0-9._-]{0,254}$'
    InstallationID:
      description: A stable ID of an app installation (KioskKit keeps a UUID).
      type: string
      pattern: '^[A-Za-z0-9._-]{1,128}$'
    SHA256Hex:
      description: A lowercase hex SHA-256.
      type: string
      pattern: '^[0-9a-f]{64}$'
    StrongEntityTag:
      type: string
      pattern: '^"[\x21\x23-\x7E]*"$'
    HTTPDate:
      type: string
      description: An IMF-fixdate (RFC 9110 §5.6.7), e.g. `Sun, 01 Nov 2026 00:00:00 GMT`.
      pattern: '^[A-Z][a-z]{2}, [0-9]{2} [A-Z][a-z]{2} [0-9]{4} [0-9]{2}:[0-9]{2}:[0-9]{2} GMT$'
    Timestamp:
      description: An RFC 3339 date-time in UTC, to the second.
      type: string
      format: date-time
      pattern: '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z$'
    Bytes:
      description: The bytes of the file or pack.
      type: string
      contentMediaType: application/octet-stream
    ProductType:
      type: string
      enum: [consumable, non_consumable, auto_renewable, non_renewing]
    Product:
      type: object
      additionalProperties: false
      required: [content_length, content_version, file_count, id, title, type]
      properties:
        id:
          $ref: '#/components/schemas/ProductID'
        type:
          $ref: '#/components/schemas/ProductType'
        title:
          type: string
        description:
          description: Absent when the publisher wrote none.
          type: string
        content_version:
          $ref: '#/components/schemas/ContentVersion'
        content_length:
          description: The total size of the product's files.
          type: integer
          format: int64
          minimum: 0
        file_count:
          description: 0 for a product without content.
          type: integer
          minimum: 0
        published_at:
          description: Absent when unknown.
          $ref: '#/components/schemas/Timestamp'
    Catalog:
      description: The catalog, a selection (`ids`) or a page (`limit`, `cursor`).
      type: object
      additionalProperties: false
      required: [invalid_product_ids, products]
      properties:
        products:
          type: array
          items:
            $ref: '#/components/schemas/Product'
        invalid_product_ids:
          description: The IDs of `ids` the server does not know; empty otherwise.
          type: array
          items:
            type: string
        next_cursor:
          description: A page that is not the last; opaque.
          type: string
    CatalogChanges:
      description: A page of the change feed (`since`).
      type: object
      additionalProperties: false
      required: [added, catalog_etag, changed, kind, products, removed]
      properties:
        kind:
          description: |
            `changes`: `added`, `changed` and `removed` since the tag. `full`: the tag is unknown, `products` is the
            whole catalog.
          type: string
          enum: [changes, full]
        catalog_etag:
          description: The catalog `ETag` (with its quotes) to send as `since` next time; the same on every page.
          $ref: '#/components/schemas/StrongEntityTag'
        added:
          type: array
          items:
            $ref: '#/components/schemas/Product'
        changed:
          type: array
          items:
            $ref: '#/components/schemas/Product'
        removed:
          description: IDs, in ID order.
          type: array
          items:
            $ref: '#/components/schemas/ProductID'
        products:
          type: array
          items:
            $ref: '#/components/schemas/Product'
        next_cursor:
          description: A page that is not the last; send it with the same `since`.
          type: string
    ProofRequest:
      description: Exactly one proof of purchase.
      type: object
      properties:
        receipt-data:
          description: A base64 App Store receipt.
          type: string
        signed_transaction:
          description: A StoreKit 2 signed transaction (compact JWS).
          type: string
      oneOf:
        - required: [receipt-data]
        - required: [signed_transaction]
    GrantRequest:
      description: A proof (`receipt-data` or `signed_transaction`, exactly one), the product and the installation.
      type: object
      required: [installation_id, product_id]
      properties:
        receipt-data:
          type: string
        signed_transaction:
          type: string
        product_id:
          $ref: '#/components/schemas/ProductID'
        installation_id:
          $ref: '#/components/schemas/InstallationID'
      oneOf:
        - required: [receipt-data]
        - required: [signed_transaction]
    InstallationsRequest:
      description: A proof (`receipt-data` or `signed_transaction`, exactly one) and a product it entitles.
      type: object
      required: [product_id]
      properties:
        receipt-data:
          type: string
        signed_transaction:
          type: string
        product_id:
          $ref: '#/components/schemas/ProductID'
      oneOf:
        - required: [receipt-data]
        - required: [signed_transaction]
    InstallationRemovalRequest:
      description: A proof (`receipt-data` or `signed_transaction`, exactly one), a product and the installation.
      type: object
      required: [installation_id, product_id]
      properties:
        receipt-data:
          type: string
        signed_transaction:
          type: string
        product_id:
          $ref: '#/components/schemas/ProductID'
        installation_id:
          $ref: '#/components/schemas/InstallationID'
      oneOf:
        - required: [receipt-data]
        - required: [signed_transaction]
    Entitlement:
      type: object
      additionalProperties: false
      required: [expires_date, original_transaction_id, product_id, purchase_date, quantity, transaction_id]
      properties:
        product_id:
          $ref: '#/components/schemas/ProductID'
        transaction_id:
          type: string
        original_transaction_id:
          type: string
        purchase_date:
          $ref: '#/components/schemas/Timestamp'
        expires_date:
          description: The end of the paid period of a subscription; `null` otherwise.
          oneOf:
            - $ref: '#/components/schemas/Timestamp'
            - type: 'null'
        quantity:
          type: integer
          minimum: 1
    EntitlementsResponse:
      type: object
      additionalProperties: false
      required: [entitlements, environment]
      properties:
        environment:
          description: The store environment that issued the proof.
          type: string
          enum: [Production, Sandbox]
        entitlements:
          type: array
          items:
            $ref: '#/components/schemas/Entitlement'
    ChunkingParameters:
      type: object
      additionalProperties: false
      required: [algorithm, average, maximum, minimum]
      properties:
        algorithm:
          description: The algorithm and its gear table (`fastcdc-gear64-nc2-v1`).
          type: string
        minimum:
          type: integer
          minimum: 1
        average:
          type: integer
          minimum: 1
        maximum:
          type: integer
          minimum: 1
    GrantChunk:
      description: The bytes `offset ..< offset + length` of a file, and their SHA-256.
      type: object
      additionalProperties: false
      required: [length, offset, sha256]
      properties:
        offset:
          type: integer
          format: int64
          minimum: 0
        length:
          type: integer
          format: int64
          minimum: 1
        sha256:
          $ref: '#/components/schemas/SHA256Hex'
    GrantFile:
      type: object
      additionalProperties: false
      required: [length, path, sha256, url]
      properties:
        path:
          description: The path inside the version, e.g. `Contents/issue.pdf`.
          type: string
        length:
          type: integer
          format: int64
          minimum: 0
        sha256:
          $ref: '#/components/schemas/SHA256Hex'
        url:
          description: "`/v1/content/<product_id>/<content_version>/<path>`, each segment percent-encoded."
          type: string
          pattern: '^/v1/content/'
        chunks:
          description: A file of more than one chunk only; in order, contiguous from 0 to `length`.
          type: array
          minItems: 2
          items:
            $ref: '#/components/schemas/GrantChunk'
        presigned_url:
          description: A server offloading to an object store only; an absolute SigV4 presigned `GET` URL.
          type: string
          format: uri
    GrantPack:
      type: object
      additionalProperties: false
      required: [length, url]
      properties:
        url:
          description: "`/v1/packs/<product_id>/<content_version>`."
          type: string
          pattern: '^/v1/packs/'
        length:
          description: The grant's `total_length`.
          type: integer
          format: int64
          minimum: 0
    GrantSubchunks:
      type: object
      additionalProperties: false
      required: [chunking, url]
      properties:
        url:
          description: "`/v1/subchunks/<product_id>/<content_version>`; a file's subchunks are at `url`, `/`, its path."
          type: string
          pattern: '^/v1/subchunks/'
        chunking:
          $ref: '#/components/schemas/ChunkingParameters'
    Grant:
      type: object
      additionalProperties: false
      required: [content_version, expires_at, files, product_id, token, total_length]
      properties:
        product_id:
          $ref: '#/components/schemas/ProductID'
        content_version:
          $ref: '#/components/schemas/ContentVersion'
        total_length:
          description: The sum of the files' lengths.
          type: integer
          format: int64
          minimum: 0
        expires_at:
          description: When `token` stops opening content.
          $ref: '#/components/schemas/Timestamp'
        token:
          description: The bearer token for content, pack, subchunk and delivery requests. Opaque; never log it.
          type: string
          minLength: 1
        files:
          type: array
          items:
            $ref: '#/components/schemas/GrantFile'
        chunking:
          description: Present when any file has `chunks`.
          $ref: '#/components/schemas/ChunkingParameters'
        pack:
          description: Present for a version of two files or more, without presigned URLs.
          $ref: '#/components/schemas/GrantPack'
        subchunks:
          description: Present when any file has `chunks`.
          $ref: '#/components/schemas/GrantSubchunks'
    Installation:
      type: object
      additionalProperties: false
      required: [first_seen, installation_id, last_seen]
      properties:
        installation_id:
          $ref: '#/components/schemas/InstallationID'
        first_seen:
          $ref: '#/components/schemas/Timestamp'
        last_seen:
          $ref: '#/components/schemas/Timestamp'
    InstallationList:
      type: object
      additionalProperties: false
      required: [installations, limit, removals_left, removals_reset_at]
      properties:
        installations:
          description: First seen first.
          type: array
          items:
            $ref: '#/components/schemas/Installation'
        limit:
          description: The most installations the purchase serves.
          type: integer
          minimum: 0
        removals_left:
          type: integer
          minimum: 0
        removals_reset_at:
          description: When the oldest removal still counted leaves the window; `null` when none counts.
          oneOf:
            - $ref: '#/components/schemas/Timestamp'
            - type: 'null'
    DeliveryReport:
      type: object
      required: [content_version, installation_id, product_id]
      properties:
        product_id:
          $ref: '#/components/schemas/ProductID'
        content_version:
          $ref: '#/components/schemas/ContentVersion'
        installation_id:
          $ref: '#/components/schemas/InstallationID'
    DeliveryReportResponse:
      type: object
      additionalProperties: false
      required: [status]
      properties:
        status:
          type: string
          enum: [recorded, already_recorded]
    ChunkSubchunks:
      type: object
      additionalProperties: false
      required: [index, subchunks]
      properties:
        index:
          type: integer
          minimum: 0
        subchunks:
          description: In order, contiguous from the chunk's offset to its end, offsets in the file.
          type: array
          minItems: 1
          items:
            $ref: '#/components/schemas/GrantChunk'
    SubchunkList:
      type: object
      additionalProperties: false
      required: [chunking, chunks]
      properties:
        chunking:
          $ref: '#/components/schemas/ChunkingParameters'
        chunks:
          type: array
          minItems: 1
          maxItems: 64
          items:
            $ref: '#/components/schemas/ChunkSubchunks'
    SignedNotification:
      type: object
      required: [signedPayload]
      properties:
        signedPayload:
          description: The notification's JWS, as the App Store sends it.
          type: string
    NotificationResult:
      type: object
      additionalProperties: false
      required: [notification_type, notification_uuid, outcome]
      properties:
        notification_uuid:
          type: string
        notification_type:
          description: Its `notificationType`, such as `REFUND`.
          type: string
        subtype:
          type: string
        outcome:
          description: |
            `applied`; `duplicate` (already received); `stale` (older than what is known: only facts that cannot
            go stale applied); `ignored` (a type that changes nothing Kiosk keeps).
          type: string
          enum: [applied, duplicate, stale, ignored]
        transaction_id:
          type: string
    SandboxPurchaseRequest:
      type: object
      required: [product_id]
      properties:
        product_id:
          $ref: '#/components/schemas/ProductID'
        quantity:
          description: 1 when absent; more than 1 for a consumable only.
          type: integer
          minimum: 1
          maximum: 100
        user:
          description: The sandbox user buying (`default` when absent); a receipt lists all of a user's purchases.
          type: string
          pattern: '^[A-Za-z0-9._@-]{1,64}$'
    SandboxPurchase:
      type: object
      additionalProperties: false
      required: [original_transaction_id, product_id, purchase_date, receipt-data, transaction_id]
      properties:
        receipt-data:
          description: The user's app receipt after this purchase (base64).
          type: string
          contentEncoding: base64
        transaction_id:
          type: string
        original_transaction_id:
          type: string
        product_id:
          $ref: '#/components/schemas/ProductID'
        purchase_date:
          $ref: '#/components/schemas/Timestamp'
        expires_date:
          description: The end of the paid period, for a subscription.
          $ref: '#/components/schemas/Timestamp'
        signed_transaction:
          description: The same transaction as a StoreKit 2 signed transaction (compact JWS).
          type: string
    SandboxRefundRequest:
      type: object
      required: [transaction_id]
      properties:
        transaction_id:
          type: string
    SandboxRefund:
      type: object
      additionalProperties: false
      required: [cancellation_date, transaction_id]
      properties:
        transaction_id:
          type: string
        cancellation_date:
          $ref: '#/components/schemas/Timestamp'
    SandboxNotificationRequest:
      type: object
      required: [kind, transaction_id]
      properties:
        transaction_id:
          type: string
        kind:
          description: |
            `refund` (`REFUND`), `revoke` (`REVOKE`), `refund_reversed` (`REFUND_REVERSED`), `renew` (`DID_RENEW`),
            `expire` (`EXPIRED`), `grace_period` (`DID_FAIL_TO_RENEW`), `consumption_request`
            (`CONSUMPTION_REQUEST`).
          type: string
          enum: [refund, revoke, refund_reversed, renew, expire, grace_period, consumption_request]
        grace_days:
          description: "`grace_period` only: 16 when absent."
          type: integer
          minimum: 1
          maximum: 60
        deliver:
          description: "`false`: the notification is not delivered (only listed in the notification history)."
          type: boolean
    SandboxNotification:
      type: object
      additionalProperties: false
      required: [signed_payload]
      properties:
        signed_payload:
          description: The App Store Server Notifications V2 body sent.
          type: string
        result:
          description: The server's answer to it; absent when it was not delivered.
          $ref: '#/components/schemas/NotificationResult'
    SandboxConsumptionAnswer:
      type: object
      additionalProperties: false
      required: [customer_consented, delivery_status, received_at, sample_content_provided]
      properties:
        received_at:
          $ref: '#/components/schemas/Timestamp'
        customer_consented:
          type: boolean
        consumption_percentage:
          description: In thousandths of a percent; absent when the answer had none.
          type: integer
          minimum: 0
          maximum: 100000
        delivery_status:
          description: Such as `DELIVERED` or `UNDELIVERED_OTHER`.
          type: string
        refund_preference:
          description: "`DECLINE`, `GRANT_FULL` or `GRANT_PRORATED`; absent when the answer had none."
          type: string
        sample_content_provided:
          type: boolean
    SandboxConsumptionAnswers:
      type: object
      additionalProperties: false
      required: [answers, transaction_id]
      properties:
        transaction_id:
          type: string
        answers:
          type: array
          items:
            $ref: '#/components/schemas/SandboxConsumptionAnswer'
    Health:
      type: object
      additionalProperties: false
      required: [status]
      properties:
        status:
          const: ok
    Readiness:
      type: object
      additionalProperties: false
      required: [checks, status]
      properties:
        status:
          const: ready
        checks:
          description: What each check found, by name.
          type: object
          required: [catalog, database]
          additionalProperties:
            type: string
    ErrorCode:
      description: The machine code of an error; it sets the status (each status's codes are its `Error<status>`).
      type: string
      enum:
        - bad_request
        - receipt_malformed
        - payload_too_large
        - receipt_invalid
        - not_entitled
        - token_missing
        - token_invalid
        - token_expired
        - token_scope
        - not_found
        - method_not_allowed
        - version_gone
        - range_not_satisfiable
        - precondition_failed
        - store_unavailable
        - store_misconfigured
        - transaction_invalid
        - transaction_revoked
        - installation_limit
        - removal_limit
        - too_many_requests
        - internal_error
        - not_ready
        - database_unavailable
    ErrorEnvelope:
      description: 'The body of every error: `{"error": {"code": "…", "message": "…"}}`, with `reason` for some.'
      type: object
      additionalProperties: false
      required: [error]
      properties:
        error:
          type: object
          additionalProperties: false
          required: [code, message]
          properties:
            code:
              $ref: '#/components/schemas/ErrorCode'
            message:
              description: A sentence a person understands; never a receipt, token or secret.
              type: string
            reason:
              description: |
                Which check failed, machine-readable, for some codes: `environment` and the app receipt checks
                (`unsigned`, `signature_invalid`, `untrusted_chain`, `wrong_bundle`, …) for `receipt_invalid`;
                `malformed` for `receipt_malformed`; the signed data checks (`malformed`, `signature`,
                `chain_length`, …) for `transaction_invalid`; `file_changing` for `internal_error`;
                `faults_offloaded` for `bad_request`; `token_busy` and `purchase_busy` for `too_many_requests`;
                `app_store_api` for `store_misconfigured`.
              type: string
    Error400:
      description: The error envelope with a code of status 400.
      allOf:
        - $ref: '#/components/schemas/ErrorEnvelope'
        - type: object
          properties:
            error:
              type: object
              properties:
                code:
                  enum: [bad_request, receipt_malformed]
    Error401:
      description: The error envelope with a code of status 401.
      allOf:
        - $ref: '#/components/schemas/ErrorEnvelope'
        - type: object
          properties:
            error:
              type: object
              properties:
                code:
                  enum: [token_missing, token_invalid, token_expired]
    Error403:
      description: The error envelope with a code of status 403.
      allOf:
        - $ref: '#/components/schemas/ErrorEnvelope'
        - type: object
          properties:
            error:
              type: object
              properties:
                code:
                  enum:
                    - receipt_invalid
                    - not_entitled
                    - token_scope
                    - transaction_invalid
                    - transaction_revoked
                    - installation_limit
                    - removal_limit
    Error404:
      description: The error envelope with a code of status 404.
      allOf:
        - $ref: '#/components/schemas/ErrorEnvelope'
        - type: object
          properties:
            error:
              type: object
              properties:
                code:
                  enum: [not_found]
    Error405:
      description: |
        The error envelope with a code of status 405. No operation lists it: the router answers a method it does not
        route on a known path as an unknown path, 404 `not_found`.
      allOf:
        - $ref: '#/components/schemas/ErrorEnvelope'
        - type: object
          properties:
            error:
              type: object
              properties:
                code:
                  enum: [method_not_allowed]
    Error410:
      description: The error envelope with a code of status 410.
      allOf:
        - $ref: '#/components/schemas/ErrorEnvelope'
        - type: object
          properties:
            error:
              type: object
              properties:
                code:
                  enum: [version_gone]
    Error412:
      description: The error envelope with a code of status 412.
      allOf:
        - $ref: '#/components/schemas/ErrorEnvelope'
        - type: object
          properties:
            error:
              type: object
              properties:
                code:
                  enum: [precondition_failed]
    Error413:
      description: The error envelope with a code of status 413.
      allOf:
        - $ref: '#/components/schemas/ErrorEnvelope'
        - type: object
          properties:
            error:
              type: object
              properties:
                code:
                  enum: [payload_too_large]
    Error416:
      description: The error envelope with a code of status 416.
      allOf:
        - $ref: '#/components/schemas/ErrorEnvelope'
        - type: object
          properties:
            error:
              type: object
              properties:
                code:
                  enum: [range_not_satisfiable]
    Error429:
      description: The error envelope with a code of status 429.
      allOf:
        - $ref: '#/components/schemas/ErrorEnvelope'
        - type: object
          properties:
            error:
              type: object
              properties:
                code:
                  enum: [too_many_requests]
    Error500:
      description: The error envelope with a code of status 500.
      allOf:
        - $ref: '#/components/schemas/ErrorEnvelope'
        - type: object
          properties:
            error:
              type: object
              properties:
                code:
                  enum: [store_misconfigured, internal_error]
    Error503:
      description: The error envelope with a code of status 503.
      allOf:
        - $ref: '#/components/schemas/ErrorEnvelope'
        - type: object
          properties:
            error:
              type: object
              properties:
                code:
                  enum: [store_unavailable, not_ready, database_unavailable]

"""#
}
