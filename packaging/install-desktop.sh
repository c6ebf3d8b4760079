#!/usr/bin/env bash
# Installs Sparrow's desktop entry and icons for this user (`make install-desktop`).
#   packaging/install-desktop.sh PROGRAM      install, with Exec= the absolute PROGRAM
#   packaging/install-desktop.sh --uninstall  remove what an install wrote
# Under $XDG_DATA_HOME (default ~/.local/share): applications/sparrow.desktop and
# icons/hicolor/SIZE/apps/sparrow.png (+ scalable/apps/sparrow.svg). Then refreshes
# the MIME cache (update-desktop-database: "Open with Sparrow" on a folder) and the
# icon cache, when those programs are installed.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(dirname "$here")"
data="${XDG_DATA_HOME:-$HOME/.local/share}"
apps="$data/applications"
icons="$data/icons/hicolor"
sizes=(16 24 32 48 64 128 256 512)

refresh() {
  if command -v update-desktop-database >/dev/null 2>&1; then
    update-desktop-database -q "$apps" || true
  fi
  if command -v gtk-update-icon-cache >/dev/null 2>&1 && [ -f "$icons/index.theme" ]; then
    gtk-update-icon-cache -q -f -t "$icons" || true
  fi
}

if [ "${1:-}" = "--uninstall" ]; then
  rm -f "$apps/sparrow.desktop" "$icons/scalable/apps/sparrow.svg"
  for size in "${sizes[@]}"; do rm -f "$icons/${size}x${size}/apps/sparrow.png"; done
  refresh
  echo "Removed Sparrow's desktop entry from $apps"
  exit 0
fi

if [ $# -ne 1 ]; then
  echo "usage: $0 PROGRAM | --uninstall" >&2
  exit 2
fi
program="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
if [ ! -x "$program" ]; then
  echo "install-desktop: $program is not an executable program (run make package, or make run once)" >&2
  exit 1
fi

case "$program" in
  *%*)
    # The spec says %%, but GLib looks for the program before it expands %%: no
    # escaping of a % in the path works in GNOME's launchers.
    echo "install-desktop: $program has a % in its path, which desktop launchers cannot run; move it" >&2
    exit 1 ;;
esac

# Exec= takes the path quoted. Inside the quotes \ " ` and $ get a backslash, then
# every backslash is doubled (the key file's own escaping).
quoted="${program//\\/\\\\\\\\}"
quoted="${quoted//\"/\\\\\"}"
quoted="${quoted//\`/\\\\\`}"
quoted="${quoted//\$/\\\\\$}"
mkdir -p "$apps"
tmp="$(mktemp "$apps/.sparrow.desktop.XXXXXX")"
while IFS= read -r line; do
  case "$line" in
    Exec=sparrow-desktop*) printf 'Exec="%s"%s\n' "$quoted" "${line#Exec=sparrow-desktop}" ;;
    *) printf '%s\n' "$line" ;;
  esac
done <"$here/sparrow.desktop" >"$tmp"
chmod 644 "$tmp"
mv "$tmp" "$apps/sparrow.desktop"

for size in "${sizes[@]}"; do
  install -D -m 644 "$root/assets/icons/sparrow-$size.png" "$icons/${size}x${size}/apps/sparrow.png"
done
install -D -m 644 "$root/assets/sparrow.svg" "$icons/scalable/apps/sparrow.svg"
refresh
echo "Installed $apps/sparrow.desktop (Exec: $program)"
