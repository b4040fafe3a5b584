#!/bin/sh
# expect_grader.sh WANT PROGRAM: runs a grader program and checks its verdict.
#   WANT = pass        the program must exit 0
#   WANT = fail        the program must exit non-zero (and not crash)
#   WANT = any text    the program must exit non-zero and print that text (a mistake's tag)
want=$1
prog=$2
out=$("$prog" 2>&1)
rc=$?
printf '%s\n' "$out"
if [ "$rc" -gt 128 ]; then
  echo "expect_grader: the grader crashed (exit $rc)" >&2
  exit 1
fi
case "$want" in
  pass) [ "$rc" -eq 0 ] || { echo "expect_grader: expected the grader to pass, it exited $rc" >&2; exit 1; } ;;
  fail) [ "$rc" -ne 0 ] || { echo "expect_grader: expected the grader to fail, it passed" >&2; exit 1; } ;;
  *)
    [ "$rc" -ne 0 ] || { echo "expect_grader: expected a failure naming '$want', but the grader passed" >&2; exit 1; }
    printf '%s' "$out" | grep -qF -- "$want" || { echo "expect_grader: the output does not name '$want'" >&2; exit 1; }
    ;;
esac
exit 0
