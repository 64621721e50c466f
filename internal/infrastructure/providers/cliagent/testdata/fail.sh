#!/bin/sh
cat >/dev/null
echo "error: rate limited, try again later" >&2
exit 3
