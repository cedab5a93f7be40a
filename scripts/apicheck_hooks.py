"""Schemathesis hooks for scripts/apicheck (loaded through SCHEMATHESIS_HOOKS).

`POST /items/bulk` takes NDJSON, which schemathesis has no serializer for: a generated value is
sent as one JSON document per line (a string as it is), so the route's line-by-line validation
is exercised with arbitrary content.
"""
import json

import schemathesis


@schemathesis.serializer("application/x-ndjson")
def ndjson(ctx, value):
    if isinstance(value, bytes):
        return value
    if isinstance(value, str):
        return value.encode("utf-8", "surrogatepass")
    if isinstance(value, list):
        return "".join(json.dumps(v) + "\n" for v in value).encode()
    return (json.dumps(value) + "\n").encode()
