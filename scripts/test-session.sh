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

# The Secret Service is started by the bus on demand, always as this keyring,
# unlocked: if the daemon goes away in the middle of a long run (it has, twice,
# for a reason not found), the next test that asks gets it back instead of a
# locked keyring of the real HOME that nobody can unlock.
mkdir "$keyring_home/services"
cat > "$keyring_home/keyring.sh" <<EOF
#!/bin/sh
# A fresh HOME for the keyring daemon only: a reused one holds a locked login keyring.
printf "sparrow-test" | HOME="$keyring_home" exec gnome-keyring-daemon --foreground --unlock --components=secrets
EOF
cat > "$keyring_home/services/sparrow-test-keyring.service" <<EOF
[D-BUS Service]
Name=org.freedesktop.secrets
Exec=/bin/sh $keyring_home/keyring.sh
EOF
cat > "$keyring_home/session.conf" <<EOF
<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <!-- Listed before the system's service folders: this keyring wins. -->
  <servicedir>$keyring_home/services</servicedir>
  <include>/usr/share/dbus-1/session.conf</include>
</busconfig>
EOF

dbus-run-session --config-file="$keyring_home/session.conf" -- bash -c '
  printf "sparrow-test" | HOME="$0" gnome-keyring-daemon --unlock --components=secrets >/dev/null
  exec "${@}"
' "$keyring_home" "$@"
