#!/bin/sh
# Installs nafka 0.1 (PyPI) into ./venv3.12 of the current folder, once: it needs Python 3.12
# or later (sqlite3's autocommit), found on PATH or through pyenv where one is installed.
set -eu
if [ -x venv3.12/bin/nafka ]; then exit 0; fi
py=
for candidate in python3.13 python3.12 python3; do
  if command -v "$candidate" >/dev/null 2>&1 &&
    "$candidate" -c 'import sys; sys.exit(sys.version_info < (3, 12))' 2>/dev/null; then
    py=$(command -v "$candidate"); break
  fi
done
if [ -z "$py" ] && command -v pyenv >/dev/null 2>&1; then
  for v in $(pyenv versions --bare | sort -rV); do
    case $v in 3.1[2-9]*) py=$(pyenv root)/versions/$v/bin/python3; break ;; esac
  done
fi
if [ -z "$py" ]; then
  echo "nafka 0.1 needs Python 3.12 or later (sqlite3 autocommit): none found on PATH or in pyenv" >&2
  exit 1
fi
"$py" -m venv venv3.12
venv3.12/bin/pip install -q nafka==0.1
