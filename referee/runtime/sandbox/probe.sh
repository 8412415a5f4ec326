# check-bot's leftover probe, run inside the bot's sandbox (PID namespace) as
#   /bin/sh probe.sh JUGGLE REPORT_FD ARGV...
# JUGGLE=1 (bwrap): the bot's stdin and stdout pipes arrive as fds 3 and 4 (bwrap's own
# processes hold /dev/null as stdin/stdout, so the bot alone holds its pipes) and move back
# to 0 and 1. The bot (ARGV) runs as this shell's child; once it has exited, the processes
# still alive in the namespace (other than PID 1 and this shell) are listed, "PID COMMAND"
# a line, into the report file (fd REPORT_FD), and the shell exits with the bot's status.
if [ "$1" = 1 ]; then exec 0<&3 1>&4 3<&- 4>&-; fi
fd=$2
shift 2
"$@"
s=$?
for d in /proc/[0-9]*; do
  p=${d#/proc/}
  [ "$p" = 1 ] && continue
  [ "$p" = $$ ] && continue
  read -r st < "$d/stat" 2>/dev/null || continue
  case "${st##*) }" in Z*) continue;; esac
  read -r c < "$d/comm" 2>/dev/null || c='?'
  echo "$p $c" >> "/proc/self/fd/$fd"
done
exit $s
