#!/usr/bin/env bash
# The system programs the test suite needs, installed from Debian's packages when missing.
# Run by `npm test` (pretest) and by .ci/run. Prints what it installs; changes nothing when
# everything is present. Without root (or sudo that needs no password) it prints the command
# to run instead, and the tests that need a missing program fail naming it.
#
#   program   Debian package   used by
#   tmux      tmux             tests/tui*.e2e.test.ts (the interactive mode in a real terminal)
#   rg        ripgrep          the grep tool's ripgrep path (tests/tools.e2e.test.ts, the benchmark)
#   fdfind    fd-find          the find tool's fd engine (plugins/tools/find.test.ts runs every case with
#                              it too; Debian 12's fd 8.6 lacks --no-require-git, see find.ts)
#   chromium  chromium         the HTML export test (headless DOM after the page's scripts ran)
#   bwrap     bubblewrap       the OS sandbox plugin's tests
set -u

need=()
command -v tmux >/dev/null 2>&1 || need+=(tmux)
command -v rg >/dev/null 2>&1 || need+=(ripgrep)
command -v fd >/dev/null 2>&1 || command -v fdfind >/dev/null 2>&1 || need+=(fd-find)
command -v chromium >/dev/null 2>&1 || [ -x /usr/bin/chromium ] || need+=(chromium)
command -v bwrap >/dev/null 2>&1 || need+=(bubblewrap)

[ ${#need[@]} -eq 0 ] && exit 0

if ! command -v apt-get >/dev/null 2>&1; then
  echo "system-deps: the tests need these programs and this machine has no apt-get: ${need[*]}" >&2
  echo "system-deps: install them with your package manager; the tests that need them will fail until then" >&2
  exit 0
fi

sudo=()
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    sudo=(sudo -n)
  else
    echo "system-deps: the tests need Debian packages that are not installed: ${need[*]}" >&2
    echo "system-deps: run: sudo apt-get update && sudo apt-get install -y ${need[*]}" >&2
    exit 0
  fi
fi

echo "system-deps: installing Debian packages the tests need: ${need[*]}" >&2
if ! "${sudo[@]}" apt-get update -qq -o DPkg::Lock::Timeout=300 >/dev/null 2>&1 ||
  ! DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq -o DPkg::Lock::Timeout=300 --no-install-recommends "${need[@]}" >/dev/null; then
  echo "system-deps: apt-get could not install ${need[*]}; the tests that need them will fail naming them" >&2
  exit 0
fi
echo "system-deps: installed ${need[*]}" >&2
