# Sourced by the tuner tests. kill_once_logged LOG LINES ARGS...: starts
# `$gradtune ARGS...` in the background (output in $work/first.log), waits
# until LOG holds LINES lines (at most 60 s), then kills it with SIGKILL and
# reaps it.
kill_once_logged() {
  local log="$1" lines="$2"
  shift 2
  "$gradtune" "$@" >"$work/first.log" 2>&1 &
  local pid=$!
  for _ in $(seq 1 1200); do
    [ "$(cat "$log" 2>/dev/null | wc -l)" -ge "$lines" ] && break
    sleep 0.05
  done
  kill -9 "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
}
