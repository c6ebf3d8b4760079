#!/usr/bin/env bash
# Installs the Debian packages Sparrow needs, when run as root and they are missing.
#   scripts/system-deps.sh run    the window's runtime (Qt WebEngine's shared libraries) and bubblewrap,
#                                 which the local-hardened sandbox runs commands under
#   scripts/system-deps.sh test   that, plus what the tests drive: Xvfb, Chromium, D-Bus, gnome-keyring,
#                                 a notification daemon, a tray host (trayer), xdotool and the
#                                 desktop-entry tools (validate, MIME cache, gio)
# Not root, or not Debian: prints what is missing and how to install it, and carries on.
set -euo pipefail

run_pkgs=(
  libegl1 libgl1 libgbm1 libnss3 libasound2 libfontconfig1 libdbus-1-3 libxkbcommon-x11-0
  libxcb-cursor0 libxcb-icccm4 libxcb-keysyms1 libxcb-image0 libxcb-render-util0 libxcb-randr0
  libxcb-shape0 libxcb-xkb1 libxcomposite1 libxdamage1 libxrandr2 libxtst6 libxkbfile1
  fonts-dejavu-core bubblewrap
)
test_pkgs=(xvfb chromium dbus dbus-x11 gnome-keyring notification-daemon trayer xdotool tzdata
           desktop-file-utils libglib2.0-bin)

pkgs=("${run_pkgs[@]}")
if [ "${1:-run}" = "test" ]; then
  pkgs+=("${test_pkgs[@]}")
fi

command -v dpkg-query >/dev/null 2>&1 || { echo "system-deps: not a Debian system; install the equivalents of: ${pkgs[*]}"; exit 0; }

missing=()
for pkg in "${pkgs[@]}"; do
  status=$(dpkg-query -W -f='${db:Status-Status}' "$pkg" 2>/dev/null || true)
  [ "$status" = "installed" ] || missing+=("$pkg")
done
[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" != "0" ]; then
  echo "system-deps: missing Debian packages: ${missing[*]}"
  echo "system-deps: install them with: sudo apt-get install ${missing[*]}"
  exit 0
fi
echo "system-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
