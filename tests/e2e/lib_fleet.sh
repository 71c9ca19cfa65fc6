# Helpers for the fleet recipe suites (sourced after lib.sh and fixture_dir).
#   fleet_fixture             $FX/bin/abiscope (the binary under test, as the
#                             hosts run it) and $ENV, a small environment
#   free_port                 a TCP port free on 127.0.0.1 now
#   in_node HOST HIDE RO CMD  runs CMD (a daemon) as a host of its own: its
#                             own hostname (a UTS namespace) and its own view
#                             of the file system (a mount namespace) where each
#                             folder of HIDE is an empty tmpfs (not installed
#                             there) and each of RO is read-only (a full disk)
#   stop_at_exit PIDFILE...   the daemons to stop when the suite ends, however
#                             it ends
#   skip_suite NAME WHY       one SKIP line per recipe and a clean exit
#   count DIR                 snapshots in DIR

fleet_fixture() {
	bin=$FX/bin
	mkdir -p "$bin"
	printf '#!/bin/sh\nexec "%s" "$@"\n' "$(cd "$(dirname "$ABISCOPE")" && pwd)/$(basename "$ABISCOPE")" >"$bin/abiscope"
	chmod +x "$bin/abiscope"
	ENV=$FX/venv
	mkdir -p "$ENV/bin" "$ENV/lib/python3.11/site-packages/pkg"
	ln -sf "$(command -v python3)" "$ENV/bin/python3"
	printf 'home = /usr/bin\nversion = 3.11.2\n' >"$ENV/pyvenv.cfg"
	printf 'int f(void){return 0;}\n' >"$FX/f.c"
	$CC -shared -fPIC -o "$ENV/lib/python3.11/site-packages/pkg/_f.so" "$FX/f.c"
	P="$bin:$PATH"
}

free_port() {
	python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

in_node() {
	unshare --mount --uts --propagation private sh -c '
		h=$1 hide=$2 ro=$3
		shift 3
		hostname "$h" || exit 1
		for d in $hide; do mount -t tmpfs -o size=64k,mode=0755 none "$d" || exit 1; done
		for d in $ro; do mount --bind "$d" "$d" && mount -o remount,bind,ro "$d" || exit 1; done
		exec "$@"' sh "$@"
}

# Can this machine make hosts with in_node (root, namespaces, mounts)?
can_make_nodes() {
	[ "$(id -u)" = 0 ] || return 1
	mkdir -p "$FX/.nscheck"
	in_node probe "$FX/.nscheck" "" true 2>/dev/null
}

stop_pidfiles=
# Everything that runs on a host made by in_node shares its mount namespace:
# the daemon and what it started (sshd's sessions, slurmstepd).  Stopping
# the host stops all of it; daemons in this suite's own namespace are
# stopped alone.
stop_daemons() {
	own=$(readlink /proc/$$/ns/mnt)
	victims=
	for f in $stop_pidfiles; do
		pid=$(cat "$f" 2>/dev/null)
		[ -n "$pid" ] || continue
		victims="$victims $pid"
		ns=$(readlink "/proc/$pid/ns/mnt" 2>/dev/null)
		[ -n "$ns" ] && [ "$ns" != "$own" ] || continue
		for p in /proc/[0-9]*; do
			[ "$(readlink "$p/ns/mnt" 2>/dev/null)" = "$ns" ] && victims="$victims ${p#/proc/}"
		done
	done
	for pid in $victims; do kill "$pid" 2>/dev/null; done
	# wait (at most 5 s) until they are gone, so their ports are free again
	i=0
	while [ $i -lt 50 ]; do
		alive=0
		for pid in $victims; do kill -0 "$pid" 2>/dev/null && alive=1; done
		[ $alive = 0 ] && break
		sleep 0.1
		i=$((i + 1))
	done
	stop_pidfiles=
}
stop_at_exit() {
	stop_pidfiles="$stop_pidfiles $*"
	trap 'stop_daemons' EXIT
	trap 'stop_daemons; exit 1' INT TERM HUP PIPE
}

skip_suite() {
	what=$1
	shift
	for r in $what; do echo "ok - $r # SKIP $*"; done
	exit 0
}

count() { ls "$1" 2>/dev/null | grep -c '\.json'; }
