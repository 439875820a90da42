#!/usr/bin/env bash
# Writes Sources/KioskServer/HTTP/OpenAPIDocument+YAML.swift from openapi.yaml: the document `kiosk serve` answers
# `GET /openapi.yaml` with, compiled in. Run it after editing openapi.yaml; the test OpenAPIDocumentTests fails while
# the two differ.
#
#   scripts/openapi/embed.sh
set -euo pipefail
cd "$(dirname "$0")/../.."

document=openapi.yaml
output=Sources/KioskServer/HTTP/OpenAPIDocument+YAML.swift
# The text goes into a raw string literal (#"""…"""#): it must not end the literal or interpolate.
if grep -q -e '"""#' -e '\\#' "$document"; then
    echo "$document contains \"\"\"# or \\#, which the Swift raw string literal cannot hold" >&2
    exit 1
fi
[[ "$(tail -c 1 "$document")" == "" ]] || { echo "$document must end with a newline" >&2; exit 1; }

{
    echo '// swift-format-ignore-file'
    echo '// Written by scripts/openapi/embed.sh from openapi.yaml: edit that file, then run the script. (swift-format'
    echo '// leaves it as written: it would indent the document, past the lines'"'"' length.)'
    echo
    echo 'extension OpenAPIDocument {'
    echo '    /// The text of `openapi.yaml`, byte for byte.'
    echo '    static let yaml = #"""'
    cat "$document"
    echo
    echo '"""#'
    echo '}'
} >"$output.tmp"
mv "$output.tmp" "$output"
echo "wrote $output"
