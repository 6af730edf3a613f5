#!/bin/sh
# A stand-in for ccache: logs that it ran, then runs the compiler command.
echo "compile $*" >> "${LAUNCHER_LOG:-/dev/null}"
exec "$@"
