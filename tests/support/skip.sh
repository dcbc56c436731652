#!/bin/sh
# Stands in for a test whose dependency was not found at configure time: prints why, exits 77.
echo "SKIP: $*"
exit 77
