#!/usr/bin/env bash
# Runs a command the way the tests need the desktop around them: inside a private
# D-Bus session with a fresh, unlocked gnome-keyring (a real Secret Service),
# so no test ever touches the user's own session or keyring.
set -euo pipefail

if [ -n "${SPARROW_TEST_SESSION:-}" ] || ! command -v dbus-run-session >/dev/null 2>&1 \
   || ! command -v gnome-keyring-daemon >/dev/null 2>&1; then
  exec "$@"
fi

keyring_home=$(mktemp -d -t sparrow-keyring.XXXXXX)
trap 'rm -rf "$keyring_home"' EXIT
export SPARROW_TEST_SESSION=1
# A fresh HOME for the keyring daemon only: a reused one holds a locked login keyring.
dbus-run-session -- bash -c '
  printf "sparrow-test" | HOME="$0" gnome-keyring-daemon --unlock --components=secrets >/dev/null
  exec "${@}"
' "$keyring_home" "$@"
